#pragma once
// What scout writes beside its MPI wait-state patterns: the OpenMP patterns (omp_patterns.hpp),
// the counts (counts.hpp) and the critical-path profile (critical_path.hpp). One observer for the profile builder's pass that forwards every
// event to the wait-state record extractor and to the observers of these metrics; `finish`
// adds their metrics to the analysis report (the critical path reads the locations' events a
// second time to put its intervals on call paths).
#include <cstdint>
#include <vector>

#include "cubescale/analysis/counts.hpp"
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
// again (the same locations give the same call tree).
void attribute_path(const trace::Trace& trace, const profile::LocalProfile& p, const std::vector<std::uint32_t>& locations,
                    const std::vector<std::uint32_t>& on_path_locations, CriticalPathObserver& on_path);

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
  // Per dense location, for late_receiver() to add its instances as the critical path's sync
  // points before finish.
  std::vector<std::vector<SyncPoint>>& late_receiver_points() { return late_receiver_points_; }

  // Adds the OpenMP patterns below `execution`, critical_path, syncs, comms and bytes (replacing the profile's bytes_sent and
  // bytes_received) to `p`, the report of `locations` whose records the matching accepted;
  // `pairs` and `instances`: theirs (pair_messages, collective_instances).
  void finish(const std::vector<std::uint32_t>& locations, const std::vector<LocationRecords>& records,
              const MessagePairs& pairs, const std::vector<std::vector<RecordRef>>& instances, profile::LocalProfile& p);

 private:
  const trace::Trace& trace_;
  std::vector<std::vector<SyncPoint>> late_receiver_points_;
  std::vector<trace::CallPathObserver*> observers_;
  OmpObserver omp_;
  CountsObserver counts_;
  SpanObserver spans_;
};

}  // namespace cubescale::analysis
