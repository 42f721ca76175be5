#include "cubescale/analysis/beside_patterns.hpp"

#include "cubescale/analysis/waitstates.hpp"

namespace cubescale::analysis {

BesidePatterns::BesidePatterns(const trace::Trace& trace, trace::CallPathObserver* extractor)
    : trace_(trace), omp_(trace), spans_(trace.definitions().locations.size()) {
  observers_ = {extractor, &omp_, &counts_, &spans_};
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
                            profile::LocalProfile& p) {
  const auto& defs = trace_.definitions();
  add_omp_tree(p, match_omp(omp_, locations, p.cnode_count(), defs.clock.resolution));
  const auto points = sync_points(records, defs.locations.size());
  std::vector<bool> has_records(defs.locations.size(), false);
  for (const auto& l : records)
    if (l.location < has_records.size())
      has_records[l.location] = !l.sends.empty() || !l.receives.empty() || !l.collectives.empty();
  auto segments = critical_path_segments(points, spans_, locations, has_records);
  // Second pass: the same locations give the same call tree, so its rows are the report's.
  CriticalPathObserver on_path(std::move(segments), locations);
  trace::trace_profile(trace_, locations, nullptr, &on_path);
  add_critical_path(p, on_path.values(p.cnode_count()), defs.clock.resolution);
  std::vector<std::uint32_t> column(defs.locations.size(), kNone);
  for (std::size_t c = 0; c < locations.size(); ++c) column[locations[c]] = static_cast<std::uint32_t>(c);
  std::vector<SyncPoint> all;
  for (const auto& l : points) all.insert(all.end(), l.begin(), l.end());
  add_counts(p, counts_, all, column);
}

}  // namespace cubescale::analysis
