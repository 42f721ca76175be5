#include "cubescale/systree/cpu_list.hpp"

#include <hwloc.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <memory>
#include <stdexcept>

namespace cubescale::systree {

namespace {

using Bitmap = std::unique_ptr<hwloc_bitmap_s, void (*)(hwloc_bitmap_s*)>;
Bitmap new_bitmap() { return Bitmap(hwloc_bitmap_alloc(), hwloc_bitmap_free); }

std::string list_of(hwloc_const_bitmap_t set) {
  char* text = nullptr;
  hwloc_bitmap_list_asprintf(&text, set);
  std::string out = text ? text : "";
  std::free(text);
  return out;
}

// A PU number that is the whole of `s` (no sign, no base prefix, no spaces).
bool whole_number(std::string_view s, unsigned& value) {
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  return !s.empty() && ec == std::errc() && end == s.data() + s.size();
}

// hwloc's list syntax, strictly: items "N", "N-M" (N <= M) or "N-" (to `last`), comma-separated.
void parse_list(std::string_view text, unsigned last, hwloc_bitmap_t set) {
  for (std::size_t start = 0; start <= text.size();) {
    const auto comma = std::min(text.find(',', start), text.size());
    const auto item = text.substr(start, comma - start);
    const auto dash = item.find('-');
    unsigned first = 0, end = 0;
    const bool open = dash != std::string_view::npos && dash + 1 == item.size();
    const bool ok = dash == std::string_view::npos
                        ? whole_number(item, first) && ((end = first), true)
                        : whole_number(item.substr(0, dash), first) &&
                              (open ? ((end = last), true) : whole_number(item.substr(dash + 1), end));
    if (!ok) throw std::invalid_argument(item.empty() ? "an empty item" : "'" + std::string(item) + "' is no PU or range");
    if (first > end)
      throw std::invalid_argument(open ? "'" + std::string(item) + "' begins after the last PU"
                                       : "range '" + std::string(item) + "' is reversed");
    hwloc_bitmap_set_range(set, first, static_cast<int>(end));
    start = comma + 1;
  }
}

}  // namespace

std::string checked_cpu_list(std::string_view text, const Topology& topology) {
  const auto all = hwloc_topology_get_topology_cpuset(topology.get());
  const std::string machine = " (PUs " + list_of(all) + ")";
  const std::string what = "CPU list '" + std::string(text) + "': ";
  auto want = new_bitmap();
  try {
    if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
      if (hwloc_bitmap_sscanf(want.get(), std::string(text).c_str()) != 0)
        throw std::invalid_argument("not a hwloc bitmask (0x followed by hex digits, words separated by ',0x')");
    } else {
      parse_list(text, static_cast<unsigned>(hwloc_bitmap_last(all)), want.get());
    }
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(what + e.what() + machine);
  }
  if (hwloc_bitmap_iszero(want.get())) throw std::invalid_argument(what + "no PU" + machine);
  auto outside = new_bitmap();
  hwloc_bitmap_andnot(outside.get(), want.get(), all);
  if (!hwloc_bitmap_iszero(outside.get())) {
    const auto bad = list_of(outside.get());
    const bool one = hwloc_bitmap_weight(outside.get()) == 1;
    throw std::invalid_argument(what + (one ? "PU " + bad + " is" : "PUs " + bad + " are") + " not in this machine" +
                                machine);
  }
  return list_of(want.get());
}

}  // namespace cubescale::systree
