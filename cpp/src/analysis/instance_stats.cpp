#include "cubescale/analysis/instance_stats.hpp"

#include <algorithm>

namespace cubescale::analysis {

std::vector<PatternStatistics> InstanceStats::finish() {
  for (std::size_t p = 0; p < stats_.size(); ++p) {
    auto& top = stats_[p].top;
    top.clear();
    for (const auto& instance : best_[p])
      if (instance.ticks > 0) top.push_back(instance);
    const auto n = std::min(kTop, top.size());
    std::partial_sort(top.begin(), top.begin() + static_cast<std::ptrdiff_t>(n), top.end(),
                      [](const PatternInstance& a, const PatternInstance& b) {
                        return a.ticks != b.ticks ? a.ticks > b.ticks : a.cnode < b.cnode;
                      });
    top.resize(n);
    if (stats_[p].count == 0) stats_[p].min = 0;
  }
  return stats_;
}

}  // namespace cubescale::analysis
