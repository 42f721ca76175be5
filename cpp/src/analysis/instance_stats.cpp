#include "cubescale/analysis/instance_stats.hpp"

#include <algorithm>

namespace cubescale::analysis {

void InstanceStats::add(std::size_t pattern, const PatternInstance& instance) {
  if (pattern >= stats_.size() || instance.ticks == 0) return;
  auto& s = stats_[pattern];
  ++s.count;
  s.sum += instance.ticks;
  s.min = std::min(s.min, instance.ticks);
  s.max = std::max(s.max, instance.ticks);
  s.sum_of_squares += static_cast<double>(instance.ticks) * static_cast<double>(instance.ticks);
  // The most severe instance of each call path (first one on ties: deterministic order).
  auto& best = best_[pattern];
  if (instance.cnode >= best.size()) best.resize(std::size_t(instance.cnode) + 1);
  if (instance.ticks > best[instance.cnode].ticks) best[instance.cnode] = instance;
}

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
