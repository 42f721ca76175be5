#pragma once
// What one rank measured, with local ids (paper 002, section 4.3): the metrics, regions and
// call paths it saw, its locations (threads, GPU streams) and one dense matrix
// [local cnode][local location] per metric. Call trees may differ between ranks and between
// the threads of one rank: a thread that never visited a call path has zeros there.
// Unification (unify.hpp) turns the local ids into global ones; collation (collate.hpp)
// moves the rows into one report.
#include <cstdint>
#include <string>
#include <vector>

#include "cubescale/cube/definitions.hpp"
#include "cubescale/cube/severity.hpp"

namespace cubescale::profile {

inline constexpr std::uint64_t kNeverVisited = ~std::uint64_t(0);

struct LocationInfo {
  std::string name;           // e.g. "Master thread", "CUDA stream 1"
  std::string type = "thread";  // Score-P's location class: thread, gpu, metric ...
};

struct LocalProfile {
  std::vector<cube::Metric> metrics;   // preorder; parents are local metric indices
  std::vector<cube::Region> regions;
  std::vector<std::uint32_t> cnode_parents;  // preorder, kNoParent for roots
  std::vector<std::uint32_t> cnode_regions;  // local region index
  std::vector<std::vector<cube::Attributes>> cnode_parameters;  // empty, or one list per cnode
  // Empty, or per cnode the earliest time any of its locations entered it (any clock, the
  // same for every profile of one unification; kNeverVisited: not known). When given,
  // unification presents siblings in order of first visit, as Score-P does, instead of
  // sorted by region.
  std::vector<std::uint64_t> cnode_first_visit;
  std::vector<LocationInfo> locations;
  std::vector<cube::Severity> values;  // per metric: [cnode][location] in the metric's kind

  std::size_t cnode_count() const { return cnode_parents.size(); }
  // Throws std::invalid_argument naming the first inconsistency (trees not in preorder,
  // indices out of range, matrices of the wrong shape or type).
  void validate() const;
};

}  // namespace cubescale::profile
