#include "cubescale/analysis/instance_stats.hpp"

#include <algorithm>

namespace cubescale::analysis {

std::vector<PatternStatistics> InstanceStats::finish() {
  for (std::size_t p = 0; p < stats_.size(); ++p) {
    auto& top = stats_[p].top;
    top.clear();
    for (const auto& instance : best_[p])
      if (instance.ticks > 0) top.push_back(instance);
    // Every call path's (a few per pattern): which 5 are the most severe among equal times
    // depends on the report's call-path order, which the caller knows (one process and the
    // ranks of a replay alike; python/cubescale/analysis.py).
    std::sort(top.begin(), top.end(), [](const PatternInstance& a, const PatternInstance& b) {
      return a.ticks != b.ticks ? a.ticks > b.ticks : a.cnode < b.cnode;
    });
    if (stats_[p].count == 0) stats_[p].min = 0;
  }
  return stats_;
}

}  // namespace cubescale::analysis
