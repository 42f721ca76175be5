#include "cubescale/profile/merge.hpp"

#include <cstring>
#include <stdexcept>

#include "cubescale/profile/unify.hpp"

namespace cubescale::profile {

LocalProfile merge_profiles(const std::vector<const LocalProfile*>& profiles) {
  if (profiles.empty()) throw std::invalid_argument("no profiles to merge");
  const auto unified = unify_in_process(profiles);
  const auto& global = unified.global;
  LocalProfile out;
  out.metrics = global.metrics;
  out.regions = global.regions;
  out.cnode_parents = global.cnode_parents;
  out.cnode_regions = global.cnode_regions;
  out.cnode_parameters = global.cnode_parameters;
  out.cnode_first_visit = global.cnode_first_visit;
  std::vector<std::size_t> first_column;
  for (const auto* p : profiles) {
    first_column.push_back(out.locations.size());
    out.locations.insert(out.locations.end(), p->locations.begin(), p->locations.end());
  }
  const std::size_t cnodes = global.cnode_parents.size();
  out.values.reserve(out.metrics.size());
  for (const auto& m : out.metrics) out.values.emplace_back(m.dtype, cnodes, out.locations.size());
  // Each profile's rows go to their global rows, at its columns; everything else stays zero.
  for (std::size_t i = 0; i < profiles.size(); ++i) {
    const auto& p = *profiles[i];
    const auto& metric_map = unified.metric_maps[i];
    const auto& cnode_map = unified.cnode_maps[i];
    for (std::size_t m = 0; m < p.values.size(); ++m) {
      const auto& from = p.values[m];
      auto& to = out.values[metric_map[m]];
      const std::size_t width = to.dtype().width();
      if (from.dtype().width() != width) throw std::invalid_argument("metric " + p.metrics[m].uniq_name + ": value widths differ");
      for (std::size_t c = 0; c < p.cnode_count(); ++c)
        std::memcpy(to.row(cnode_map[c]) + first_column[i] * width, from.row(c), from.row_bytes());
    }
  }
  return out;
}

}  // namespace cubescale::profile
