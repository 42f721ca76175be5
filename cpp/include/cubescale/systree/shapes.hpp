#pragma once
// Machine shapes for tests, benchmarks and the CLI: regular machines from level counts and
// the inhomogeneous example of paper 000, Figure 4.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "cubescale/systree/sequence.hpp"

namespace cubescale::systree {

struct Level {
  std::string cls;
  std::uint64_t count;
};

// "rack:28 midplane:2 nodeboard:16 node:32 process:64 thread:4" (a preset name is also
// accepted: see shape_preset). Kinds follow from the class names (kind_of_class).
std::vector<Level> parse_shape(std::string_view spec);
// Named shapes: "juqueen" (28 racks x 2 midplanes x 16 nodeboards x 32 nodes x 64 processes
// x 1 thread = 1,835,008 processes), "juqueen-threads" (the same with 4 threads each),
// "juqueen-rack" (one rack), "figure4" is not regular: use figure4_sequence().
std::string shape_preset(std::string_view name);
// A machine root, then one record per level.
SystemTree regular_sequence(const std::vector<Level>& levels);
// Paper 000, Figure 4: 16 nodes of 4 processes x 4 threads; 16 nodes of 4 processes with
// 2 threads and a GPU stream each.
SystemTree figure4_sequence();

}  // namespace cubescale::systree
