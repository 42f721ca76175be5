#pragma once
// Statistics of pattern instances, the equivalent of scout's trace.stat (Statistics.pattern):
// per pattern the number of instances with waiting time, their sum, mean, smallest, largest
// and variance, and the most severe instances (scout keeps the 5 largest, at most one per
// call path) with the MPI call's enter and leave (OpenMP: the barrier's, a lock acquisition's
// enter and acquire), call path and location. Scout's median and
// quartiles (estimated from 60 coefficients) are not computed.
#include <algorithm>
#include <cstdint>
#include <map>
#include <tuple>
#include <type_traits>
#include <vector>

namespace cubescale::analysis {

// A collective instance (MPI, OpenMP barriers) is listed as scout's trace.stat reduces it over
// its members: the sum of their waits, the earliest enter, the latest leave, and the member that
// waited longest (its location and call path).
struct PatternInstance {
  std::uint64_t ticks = 0;  // the instance's waiting time
  std::uint64_t enter = 0, leave = 0;  // the MPI call's
  std::uint32_t cnode = 0, location = 0;
};

struct PatternStatistics {
  std::uint64_t count = 0, sum = 0, min = ~std::uint64_t(0), max = 0;  // ticks
  double sum_of_squares = 0;
  std::vector<PatternInstance> top;  // each call path's most severe instance, most severe first
};

class InstanceStats {
 public:
  explicit InstanceStats(std::size_t patterns) : stats_(patterns), best_(patterns), squares_(patterns, 0) {}
  // (inline: once per pattern instance, Severities::add's)
  void add(std::size_t pattern, const PatternInstance& instance) {
    count(pattern, instance.ticks);
    list(pattern, instance);
  }
  // Counted only: a member's share of a collective instance, whose whole instance is listed
  // apart (list), as scout's trace.stat counts members but lists instances.
  void count(std::size_t pattern, std::uint64_t ticks) {
    if (pattern >= stats_.size() || ticks == 0) return;
    auto& s = stats_[pattern];
    ++s.count;
    s.sum += ticks;
    s.min = std::min(s.min, ticks);
    s.max = std::max(s.max, ticks);
    add_square(squares_[pattern], Square(ticks) * ticks);
  }
  // A candidate for the most severe instances only.
  void list(std::size_t pattern, const PatternInstance& instance) {
    if (pattern >= stats_.size() || instance.ticks == 0) return;
    // The most severe instance of each call path (first one on ties: deterministic order).
    auto& best = best_[pattern];
    if (instance.cnode >= best.size()) best.resize(std::size_t(instance.cnode) + 1);
    if (instance.ticks > best[instance.cnode].ticks) best[instance.cnode] = instance;
  }
  // The instances of `later`, added after ours (a later chunk's): as if added here in order.
  void absorb(const InstanceStats& later);
  // Per pattern, with `top` filled (call once, after the last add).
  std::vector<PatternStatistics> finish();

 private:
  // Squares summed exactly (a wait of up to 2^64 ticks squares within 128 bits), so that chunks
  // summed apart and then together give the sum of one pass in order; a sum beyond 128 bits
  // (waits near 2^62 ticks: corrupt times) stays at the largest value instead of wrapping.
  using Square = unsigned __int128;
  static void add_square(Square& sum, Square more) { sum = sum + more < sum ? ~Square(0) : sum + more; }
  std::vector<PatternStatistics> stats_;
  std::vector<std::vector<PatternInstance>> best_;  // per pattern, per cnode: its largest (ticks 0: none)
  std::vector<Square> squares_;
};

// Collective instances as trace.stat lists them (scout's stat_collective reduces an instance
// over its members: the sum of their waits, the earliest enter, the latest leave, named by the
// member that waited longest), kept where the instances are reduced: per pattern, location and
// call path the most severe (ties: the earlier enter, so that any order of the instances, any
// split over ranks, keeps the same one). A few entries per call path, not per instance.
struct Listing {
  std::uint32_t pattern = 0;
  PatternInstance instance;
};
static_assert(std::is_trivially_copyable_v<Listing> && sizeof(Listing) == 40);  // moved as bytes between ranks

class InstanceListings {
 public:
  void add(std::size_t pattern, const PatternInstance& instance);
  void absorb(const InstanceListings& other);
  // Sorted by (pattern, location, call path).
  std::vector<Listing> entries() const;
  // Each entry as a candidate for `stats`'s most severe instances, in entries() order (so that
  // among equal times per call path the lowest location is listed).
  void list_into(InstanceStats& stats) const;
  bool empty() const { return best_.empty(); }

 private:
  std::map<std::tuple<std::uint32_t, std::uint32_t, std::uint32_t>, PatternInstance> best_;
};

}  // namespace cubescale::analysis
