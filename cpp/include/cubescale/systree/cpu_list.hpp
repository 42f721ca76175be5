#pragma once
// A process binding as a user writes it (cubescale systree --local --cpus), checked against
// the machine: hwloc's list syntax ("0-3,8"; "5-": from PU 5 to the last one) or, when it
// begins with 0x, hwloc's bitmask (as hwloc-calc reads it: 0x3 is PUs 0 and 1; comma-separated
// 32-bit words, the last the lowest). A binding that does not parse fully, is empty, has a
// reversed range or names PUs the machine lacks is an error, never "unbound".
#include <string>
#include <string_view>

#include "cubescale/systree/hwloc_levels.hpp"

namespace cubescale::systree {

// The PUs of `text` in hwloc list syntax; std::invalid_argument names the bad part and the
// machine's PUs, e.g. "CPU list '0-1,100': PU 100 is not in this machine (PUs 0-15)".
std::string checked_cpu_list(std::string_view text, const Topology& topology);

}  // namespace cubescale::systree
