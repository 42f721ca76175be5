#pragma once
// The machine of a trace as cubescale's system tree: OTF2's system tree nodes (machine,
// nodes, hardware levels), location groups (processes, accelerators) below their node and
// locations (threads, GPU streams, metric locations) below their group. Real traces are not
// always complete: nodes without a parent and groups without a node go below one "machine"
// root; locations without a group get a "process" of their own.
//
// The tree's depth-first order of locations is the trace's global location enumeration: the
// columns of a profile, and what makes a contiguous share of location groups a contiguous
// range of columns (collation needs that).
#include <cstdint>
#include <vector>

#include "cubescale/systree/single.hpp"
#include "cubescale/trace/definitions.hpp"

namespace cubescale::trace {

struct TraceSystem {
  systree::SingleNodeTree tree;
  std::vector<std::uint32_t> location_order;  // dense location indices, depth-first
  std::vector<std::uint32_t> location_element;  // tree element of each location (by dense index)
  std::vector<std::uint32_t> node_element;      // tree element of each system tree node (dense index)
  std::vector<std::uint32_t> group_element;     // tree element of each location group (dense index)
  // Location groups depth-first, each with its locations (dense indices, depth-first).
  // Locations without a group form synthetic groups (group index kNone).
  struct Group {
    std::uint32_t group = kNone;
    std::uint32_t element = 0;
    std::vector<std::uint32_t> locations;
  };
  std::vector<Group> groups;
};

TraceSystem system_tree(const Definitions& defs);

// Score-P's location class in a profile: "thread", "gpu", "metric".
const char* location_class(const Location& location);

}  // namespace cubescale::trace
