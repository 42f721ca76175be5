#pragma once
// What scout writes beside its MPI wait-state patterns: the OpenMP patterns (omp_patterns.hpp),
// the counts (counts.hpp) and the critical-path profile (critical_path.hpp). One observer for the profile builder's pass that forwards every
// event to the wait-state record extractor and to the observers of these metrics; `finish`
// adds their metrics to the analysis report (the critical path puts its intervals on call paths
// from what its PathTimeline kept during the pass, reading a location's events a second time only
// where that is not exact).
#include <cstdint>
#include <vector>

#include "cubescale/analysis/counts.hpp"
#include "cubescale/common/run_chunks.hpp"
#include "cubescale/analysis/critical_path.hpp"
#include "cubescale/analysis/late_receiver.hpp"
#include "cubescale/analysis/omp_patterns.hpp"
#include "cubescale/profile/local_profile.hpp"
#include "cubescale/trace/profile.hpp"
#include "cubescale/trace/reader.hpp"

namespace cubescale::analysis {

struct LocationRecords;

// The critical path's second pass (critical_path.hpp, step 3) for the report `p` of `locations`:
// only the locations on the path, call paths found in p's tree by (parent, region), where that is
// unambiguous and no worker thread is on the path; else the profile builder over all `locations`
// again (the same locations give the same call tree). Any observer of call paths may take the
// critical path's place (the root-cause analysis' second read, root_cause.hpp): it sees the
// report's rows, or the builder's numbers and then rows().
void attribute_path(const trace::Trace& trace, const profile::LocalProfile& p, const std::vector<std::uint32_t>& locations,
                    const std::vector<std::uint32_t>& on_path_locations, trace::CallPathObserver& on_path);
// The same on threads where the light read applies: `on_path_locations` cut into at most
// `on_path.size()` chunks of about equal weight (trace::location_weights; each of `chunking.least` at least),
// chunk k read by on_path[k] on a thread of its own; an observer sees only its chunk's locations
// (so it may write what belongs to them beside the others). Else as above with on_path[0].
void attribute_path(const trace::Trace& trace, const profile::LocalProfile& p, const std::vector<std::uint32_t>& locations,
                    const std::vector<std::uint32_t>& on_path_locations,
                    const std::vector<trace::CallPathObserver*>& on_path, const Chunking& chunking);

class BesidePatterns final : public trace::CallPathObserver {
 public:
  // `extractor` sees every event first (the wait-state records).
  BesidePatterns(const trace::Trace& trace, trace::CallPathObserver* extractor);
  void begin_location(std::uint32_t location) override;
  void event(const trace::Event& e, std::uint32_t cnode) override;
  void end_location(std::uint32_t location) override;
  void rows(const std::vector<std::uint32_t>& rows) override;
  std::vector<trace::CallPathObserver*> parts() override { return observers_; }
  // The counts, for late_receiver() to add its instances before finish.
  CountsObserver& counts() { return counts_; }
  // The OpenMP records, for the clock checks and the time correction before finish.
  OmpObserver& omp() { return omp_; }
  const SpanObserver& spans() const { return spans_; }
  // After finish: the bytes the critical path's time lines held at the end of the pass, and how
  // many locations on the path were read a second time (docs/analysis.md, "Critical path").
  std::uint64_t path_bytes() const { return path_bytes_; }
  std::uint64_t path_reread() const { return path_reread_; }
  // After finish: per OmpPattern the instance statistics of the OpenMP patterns (trace.stat).
  const std::vector<PatternStatistics>& omp_statistics() const { return omp_statistics_; }
  // Per dense location, for late_receiver() to add its instances as the critical path's sync
  // points before finish.
  std::vector<std::vector<SyncPoint>>& late_receiver_points() { return late_receiver_points_; }

  // Adds the OpenMP patterns below `execution`, critical_path, syncs, comms and bytes (replacing the profile's bytes_sent and
  // bytes_received) to `p`, the report of `locations` whose records the matching accepted;
  // `pairs` and `instances`: theirs (pair_messages, collective_instances). `reread_path`: the
  // critical path by a second read of every location on it (tests, benchmarks). `causers`: what
  // reduce_collectives gave for the instances, if anything; `message_points`: the Late Sender
  // sync points the matching made (match_own_messages), if it did, taken over (sync_points).
  // `chunking`: how the sync points' steps cut their locations to run at once.
  void finish(const std::vector<std::uint32_t>& locations, const std::vector<LocationRecords>& records,
              const MessagePairs& pairs, const std::vector<std::vector<RecordRef>>& instances, profile::LocalProfile& p,
              bool reread_path = false, const std::vector<std::uint32_t>* causers = nullptr,
              std::vector<std::vector<SyncPoint>>* message_points = nullptr, const Chunking& chunking = {});

 private:
  const trace::Trace& trace_;
  std::vector<std::vector<SyncPoint>> late_receiver_points_;
  std::vector<trace::CallPathObserver*> observers_;
  OmpObserver omp_;
  CountsObserver counts_;
  SpanObserver spans_;
  PathTimeline timeline_;
  std::uint64_t path_bytes_ = 0, path_reread_ = 0;
  std::vector<PatternStatistics> omp_statistics_;
};

}  // namespace cubescale::analysis
