#include "cubescale/analysis/beside_patterns.hpp"

#include <algorithm>
#include <unordered_map>

#include "cubescale/analysis/waitstates.hpp"

namespace cubescale::analysis {

namespace {

// The second pass of the critical path where it can be light: only the locations on the path,
// call paths found in the finished profile's tree by (parent, region) instead of building the
// profile again. Right when every call path is one region below its parent (no parameter
// splits) and each location on the path starts at a root (no worker thread grafted below its
// master's parallel region); `light_pass_applies` tells.
class PathSink final : public trace::EventSink {
 public:
  PathSink(const profile::LocalProfile& p, trace::CallPathObserver& on_path) : on_path_(on_path) {
    for (std::uint32_t c = 0; c < p.cnode_count(); ++c) child_[key(p.cnode_parents[c], p.cnode_regions[c])] = c;
  }
  void begin_location(std::uint32_t location) override {
    stack_.clear();
    on_path_.begin_location(location);
  }
  void event(const trace::Event& event) override {
    const trace::Event& e = trace::as_region_event(event, program_event_);
    if (e.type == trace::EventType::Enter) {
      // Below a call path the profile lacks (never here, see light_pass_applies) stays unknown.
      const bool known = stack_.empty() || stack_.back() != kUnknown;
      const auto it = known ? child_.find(key(stack_.empty() ? cube::kNoParent : stack_.back(), e.region)) : child_.end();
      stack_.push_back(it == child_.end() ? kUnknown : it->second);
    }
    on_path_.event(e, stack_.empty() || stack_.back() == kUnknown ? kNone : stack_.back());
    if (e.type == trace::EventType::Leave && !stack_.empty()) stack_.pop_back();
  }

 private:
  static constexpr std::uint32_t kUnknown = kNone - 1;
  static std::uint64_t key(std::uint32_t parent, std::uint32_t region) { return (std::uint64_t(parent) << 32) | region; }
  trace::CallPathObserver& on_path_;
  std::unordered_map<std::uint64_t, std::uint32_t> child_;
  std::vector<std::uint32_t> stack_;
  trace::Event program_event_;  // PROGRAM_BEGIN/END as the program region's Enter/Leave
};

bool light_pass_applies(const profile::LocalProfile& p, const trace::Definitions& defs,
                        const std::vector<std::uint32_t>& on_path, const std::vector<std::uint32_t>& locations) {
  // A region beyond the trace's (TASKS, docs/trace.md "OpenMP tasks"): a task's call paths are
  // not below the frame open when it ran, so one stack cannot find them.
  if (p.regions.size() > defs.regions.size()) return false;
  std::unordered_map<std::uint64_t, int> seen;
  for (std::uint32_t c = 0; c < p.cnode_count(); ++c)
    if (++seen[(std::uint64_t(p.cnode_parents[c]) << 32) | p.cnode_regions[c]] > 1) return false;
  // Each location on the path the first analyzed location of its process: its call paths start
  // at a root. (One pass over the locations: asked per location on the path, it was quadratic
  // in the processes of a trace whose every process is on the path, as the root causes' are.)
  std::unordered_map<std::uint32_t, std::uint32_t> first;  // process (location group) -> its first location
  for (auto other : locations)
    if (other < defs.locations.size()) first.try_emplace(defs.locations[other].group, other);
  for (auto l : on_path) {
    if (l >= defs.locations.size()) continue;
    const auto it = first.find(defs.locations[l].group);
    if (it != first.end() && it->second != l) return false;
  }
  return true;
}

}  // namespace

void attribute_path(const trace::Trace& trace, const profile::LocalProfile& p, const std::vector<std::uint32_t>& locations,
                    const std::vector<std::uint32_t>& on_path_locations, trace::CallPathObserver& on_path) {
  attribute_path(trace, p, locations, on_path_locations, {&on_path}, Chunking{});  // one chunk, this thread
}

void attribute_path(const trace::Trace& trace, const profile::LocalProfile& p, const std::vector<std::uint32_t>& locations,
                    const std::vector<std::uint32_t>& on_path_locations,
                    const std::vector<trace::CallPathObserver*>& on_path, const Chunking& chunking) {
  if (on_path_locations.empty() || on_path.empty()) return;
  if (!light_pass_applies(p, trace.definitions(), on_path_locations, locations)) {
    trace::trace_profile(trace, locations, nullptr, on_path[0]);
    return;
  }
  const auto bounds = chunk_bounds(trace::location_weights(trace, on_path_locations),
                                   Chunking{std::min(chunking.threads, on_path.size()), chunking.least});
  run_chunks(bounds, [&](std::size_t k, std::size_t begin, std::size_t end) {
    const std::vector<std::uint32_t> mine(on_path_locations.begin() + static_cast<std::ptrdiff_t>(begin),
                                          on_path_locations.begin() + static_cast<std::ptrdiff_t>(end));
    PathSink sink(p, *on_path[k]);
    trace.read(mine, sink);
    on_path[k]->begin_location(kNone);  // the last location's time into the shares
  });
}

BesidePatterns::BesidePatterns(const trace::Trace& trace, trace::CallPathObserver* extractor)
    : trace_(trace), late_receiver_points_(trace.definitions().locations.size()), omp_(trace),
      spans_(trace.definitions().locations.size()), timeline_(trace.definitions(), &spans_) {
  if (extractor) observers_.push_back(extractor);  // the wait-state records first
  // The span observer sees its events through the time line (one call per Enter and Leave fewer).
  observers_.insert(observers_.end(), {&omp_, &counts_, &timeline_});
}

void BesidePatterns::begin_location(std::uint32_t location) {
  for (auto* o : observers_) o->begin_location(location);
}
void BesidePatterns::event(const trace::Event& e, std::uint32_t cnode) {
  for (auto* o : observers_) o->event(e, cnode);
}
void BesidePatterns::end_location(std::uint32_t location) {
  for (auto* o : observers_) o->end_location(location);
}
void BesidePatterns::rows(const std::vector<std::uint32_t>& rows) {
  for (auto* o : observers_) o->rows(rows);
}

void BesidePatterns::finish(const std::vector<std::uint32_t>& locations, const std::vector<LocationRecords>& records,
                            const MessagePairs& pairs, const std::vector<std::vector<RecordRef>>& instances,
                            profile::LocalProfile& p, bool reread_path, const std::vector<std::uint32_t>* causers,
                            std::vector<std::vector<SyncPoint>>* message_points, const Chunking& chunking) {
  const auto& defs = trace_.definitions();
  auto omp = match_omp(omp_, locations, p.cnode_count(), defs.clock.resolution);
  add_omp_tree(p, omp);
  omp_statistics_ = std::move(omp.statistics);
  auto points = sync_points(records, pairs, instances, defs.locations.size(), causers, message_points, chunking);
  add_sync_points(points, late_receiver_points_, chunking);
  add_omp_sync_points(omp_, points);  // a process's OpenMP barriers and forks
  const CommunicatorRanks ranks(defs);
  std::vector<bool> has_records(defs.locations.size(), false);
  PathWindow window(defs.locations.size());
  for (const auto& l : records) {
    if (l.location < has_records.size())
      has_records[l.location] = !l.sends.empty() || !l.receives.empty() || !l.collectives.empty();
    window.note(l);
  }
  const auto [init_members, finalize_members] = window.members();
  window.decide(init_members, finalize_members, ranks);
  auto segments = critical_path_segments(points, spans_, locations, has_records, window);
  std::vector<std::uint32_t> column(defs.locations.size(), kNone);
  for (std::size_t c = 0; c < locations.size(); ++c) column[locations[c]] = static_cast<std::uint32_t>(c);
  // scout's fork and join time on the path (omp_path_time), while the segments are all here.
  const bool parallel = std::any_of(omp_.syncs().begin(), omp_.syncs().end(), [](const auto& l) { return !l.parallels.empty(); });
  std::vector<double> omp_time(parallel ? std::size_t(p.cnode_count()) * locations.size() : 0, 0.0);
  if (parallel) omp_path_time(omp_, segments, column, locations.size(), p.cnode_parents, omp_time);
  // The path's time per call path from the time lines of the pass; the locations where that is
  // not exact are read a second time (light), or the profile builder runs over all locations
  // again (the same locations give the same call tree, so its rows are the report's). Each
  // location's values come from one of the two, so their sum is either's.
  std::vector<std::uint64_t> ticks(std::size_t(p.cnode_count()) * locations.size(), 0);
  std::vector<bool> again(defs.locations.size(), reread_path);
  if (!reread_path)
    for (auto l : timeline_.attribute(segments, column, locations.size(), ticks)) again[l] = true;
  path_bytes_ = timeline_.bytes();
  timeline_.release();
  std::vector<std::uint32_t> on_path_locations;
  for (auto l : locations) {
    if (l >= segments.size() || segments[l].empty()) continue;
    if (again[l]) on_path_locations.push_back(l);
    else std::vector<Segment>().swap(segments[l]);  // attributed above
  }
  path_reread_ = on_path_locations.size();
  CriticalPathObserver on_path(std::move(segments), locations);
  attribute_path(trace_, p, locations, on_path_locations, on_path);
  auto values = on_path.values(p.cnode_count());
  for (std::size_t i = 0; i < values.size() && i < ticks.size(); ++i) values[i] += static_cast<double>(ticks[i]);
  for (std::size_t i = 0; i < values.size() && i < omp_time.size(); ++i) values[i] += omp_time[i];
  add_critical_path(p, values, defs.clock.resolution);
  add_counts(p, counts_, points, column);
}

}  // namespace cubescale::analysis
