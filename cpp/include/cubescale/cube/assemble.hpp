#pragma once
// Definitions put together from parts rather than read from a file: a report built by a
// program (a converter from another tool's format, a generator of test data). The parts are
// checked for what a parsed file guarantees - trees in depth-first preorder, indices in
// range, a system tree that CUBE can express - and numbered as our writer numbers them.
#include <cstdint>
#include <vector>

#include "cubescale/cube/definitions.hpp"

namespace cubescale::cube {

struct CallTreeParts {
  std::vector<std::uint32_t> parents;            // kNoParent for a root; preorder
  std::vector<std::uint32_t> regions;            // index into the regions
  std::vector<std::vector<Attributes>> parameters;  // empty, or one list per cnode
};

// Metrics and cnodes must be in preorder: each one's parent is the previous element or one of
// its ancestors. The system tree may be in any order of creation; it is taken in preorder.
// Every location group's parent is a node and every location's a location group. Throws
// std::invalid_argument naming the offending element.
Definitions assemble_definitions(std::vector<Metric> metrics, std::vector<Region> regions, CallTreeParts calls,
                                 const systree::SingleNodeTree& system);

}  // namespace cubescale::cube
