#pragma once
// Time correction of the wait-state records (`cubescale analyze --time-correct`), in the
// spirit of Scalasca's controlled logical clock (src/clc; Becker, Rabenseifner, Wolf):
//
// Forward amortization: the locations' communication events are replayed in causal order
// (each location in recorded order; a receive after its send, a collective's leave after the
// enters it depends on, clock_condition.hpp). Every event keeps its local interval to the
// location's previous event; a receive (or collective leave) that would lie before its send
// plus the minimum latency jumps forward to that time, and the jump carries over to all later
// events of the location (clc's controller with gamma = 1: no decay).
// Backward amortization: a jump is spread over the location's events since its last send or
// collective enter (the events others depend on, which stay put) or its previous jump:
// an event there moves by jump * (t - t_start) / (t_jump - t_start), so the interval before a
// jump stretches evenly instead of one event jumping alone. Before a location's first
// communication event, times stay.
// Times between communication events (MPI call enters and leaves, completions, postings)
// follow the piecewise-linear offset through them. Only the records move: the call-path
// profile keeps the measured times.
//
// Per location given what its consumers need of other locations' producers; the single-process
// driver below replays them in rounds. A cycle (events that wait on each other: an impossible
// trace) raises FormatError naming the location, event and time.
#include <cstdint>
#include <vector>

#include "cubescale/analysis/clock_condition.hpp"
#include "cubescale/analysis/late_receiver.hpp"
#include "cubescale/analysis/nonblocking_collectives.hpp"
#include "cubescale/analysis/omp_patterns.hpp"
#include "cubescale/analysis/waitstates.hpp"

namespace cubescale::analysis {

struct TimeCorrectionStats {
  std::uint64_t jumps = 0;     // events moved forward by the forward amortization
  std::uint64_t largest = 0;   // the largest jump, ticks
};

// One communication event of a location: producers (sends, collective enters, the starts of
// non-blocking collectives) are what other locations depend on; consumers (receives,
// collective leaves, the leaves of non-blocking collectives' completion calls) depend on them.
// OpenMP's fork, team end and barrier enter are producers of their group (omp_patterns.hpp),
// team begin, join and barrier leave its consumers.
enum class SyncKind : std::uint8_t {
  Receive, CollectiveLeave, Send, CollectiveEnter, NonBlockingStart, NonBlockingLeave, OmpProducer, OmpConsumer
};
struct Sync {
  std::uint64_t time;   // original
  std::uint64_t order;  // recorded order among equal times
  std::uint32_t index;  // into sends, receives, collectives or non-blocking records
  SyncKind kind;
  bool producer() const {
    return kind == SyncKind::Send || kind == SyncKind::CollectiveEnter || kind == SyncKind::NonBlockingStart ||
           kind == SyncKind::OmpProducer;
  }
};
// A location's communication events in time (then recorded) order: the forward amortization's
// steps (`nb`: its non-blocking collectives, `omp`: its OpenMP synchronization; may be null).
std::vector<Sync> sync_events(const LocationRecords& l, const NonBlockingLocation* nb = nullptr,
                              const OmpSyncLocation* omp = nullptr);
// The OpenMP records of one location the correction moves (null: none).
struct OmpMoves {
  OmpSyncLocation* location = nullptr;
  OmpObserver* observer = nullptr;
};
// Per location, after the forward amortization gave `corrected` (per sync event): the backward
// amortization (may raise `corrected` inside ramps) and the new times of every time of `l`,
// `x`, `nb` and the OpenMP records (barriers, locks) of `omp` (x and nb may be null).
void amortize(LocationRecords& l, PointToPointExtras* x, const std::vector<Sync>& syncs,
              std::vector<std::uint64_t>& corrected, NonBlockingLocation* nb = nullptr, OmpMoves omp = {});
// Per records index its non-blocking collectives (null: none) of `all` (the extractor's).
std::vector<NonBlockingLocation*> align_nonblocking(const std::vector<LocationRecords>& records,
                                                    std::vector<NonBlockingLocation>& all);
// Per records index its OpenMP synchronization (null: none) of `omp` (may be null).
std::vector<OmpSyncLocation*> align_omp(const std::vector<LocationRecords>& records, OmpObserver* omp);

// Counts into `v` (v.omp and the consumer's call path and location) the OpenMP consumers before
// the latest producer of their group plus `latency`.
void count_omp_violations(const OmpObserver& omp, const std::vector<std::uint32_t>& column, std::uint64_t latency,
                          ClockViolations& v);
// The FormatError of a location whose event `e` waits in a cycle.
[[noreturn]] void uncorrectable(const trace::Trace& trace, const LocationRecords& l, const Sync& e,
                                const NonBlockingLocation* nb = nullptr, const OmpSyncLocation* omp = nullptr);

// Corrects every time of `records`, `extras` (same order) and `nb` (aligned with records, see
// align_nonblocking; its instances `nb_instances`) in place; `latency` in ticks.
TimeCorrectionStats correct_times(const trace::Trace& trace, std::vector<LocationRecords>& records,
                                  std::vector<PointToPointExtras>& extras, const MessagePairs& pairs,
                                  const std::vector<std::vector<RecordRef>>& instances, std::uint64_t latency,
                                  const std::vector<NonBlockingLocation*>& nb = {},
                                  const std::vector<NonBlockingInstance>& nb_instances = {}, OmpObserver* omp = nullptr);

// The clock checks of analyze(): counts the violations of the records as recorded (into
// `stats`), corrects the records when options.time_correct (then counts again), and returns
// the violations for the report with the column of every dense location index.
struct ClockCheck {
  std::vector<std::uint32_t> column;
  ClockViolations violations;
  CollectiveDecisions decisions;  // of the records as they are at the end (reduce_collectives)
};
ClockCheck clock_checks(const trace::Trace& trace, const std::vector<std::uint32_t>& locations,
                        std::vector<LocationRecords>& records, std::vector<PointToPointExtras>& extras,
                        const MessagePairs& pairs, const std::vector<std::vector<RecordRef>>& instances,
                        std::size_t cnodes, const AnalysisOptions& options, AnalysisStats* stats,
                        std::vector<NonBlockingLocation>* nonblocking = nullptr, OmpObserver* omp = nullptr);

}  // namespace cubescale::analysis
