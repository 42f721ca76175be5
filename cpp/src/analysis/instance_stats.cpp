#include "cubescale/analysis/instance_stats.hpp"

#include <algorithm>

namespace cubescale::analysis {

void InstanceStats::absorb(const InstanceStats& later) {
  for (std::size_t p = 0; p < stats_.size() && p < later.stats_.size(); ++p) {
    const auto& l = later.stats_[p];
    if (l.count == 0) continue;
    auto& s = stats_[p];
    s.count += l.count, s.sum += l.sum;
    s.min = std::min(s.min, l.min), s.max = std::max(s.max, l.max);
    add_square(squares_[p], later.squares_[p]);
    auto& best = best_[p];
    const auto& theirs = later.best_[p];
    if (theirs.size() > best.size()) best.resize(theirs.size());
    for (std::size_t c = 0; c < theirs.size(); ++c)
      if (theirs[c].ticks > best[c].ticks) best[c] = theirs[c];  // ties: ours, the earlier
  }
}

std::vector<PatternStatistics> InstanceStats::finish() {
  for (std::size_t p = 0; p < stats_.size(); ++p) {
    stats_[p].sum_of_squares = static_cast<double>(squares_[p]);
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

void InstanceListings::add(std::size_t pattern, const PatternInstance& instance) {
  if (instance.ticks == 0) return;
  const auto [it, fresh] =
      best_.try_emplace({static_cast<std::uint32_t>(pattern), instance.location, instance.cnode}, instance);
  auto& best = it->second;
  if (!fresh && (instance.ticks > best.ticks || (instance.ticks == best.ticks && instance.enter < best.enter)))
    best = instance;
}

void InstanceListings::absorb(const InstanceListings& other) {
  for (const auto& [key, instance] : other.best_) add(std::get<0>(key), instance);
}

std::vector<Listing> InstanceListings::entries() const {
  std::vector<Listing> out;
  out.reserve(best_.size());
  for (const auto& [key, instance] : best_) out.push_back({std::get<0>(key), instance});
  return out;
}

void InstanceListings::list_into(InstanceStats& stats) const {
  for (const auto& [key, instance] : best_) stats.list(std::get<0>(key), instance);
}

}  // namespace cubescale::analysis
