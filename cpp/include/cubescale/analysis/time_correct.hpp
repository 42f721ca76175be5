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
#include <utility>
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
class OffsetFunction;
// Per location, after the forward amortization gave `corrected` (per sync event): the backward
// amortization (may raise `corrected` inside ramps) and the new times of every time of `l`,
// `x`, `nb` and the OpenMP records (barriers, locks) of `omp` (x and nb may be null); `keep`,
// when given, receives the offset function that moved them.
void amortize(LocationRecords& l, PointToPointExtras* x, const std::vector<Sync>& syncs,
              std::vector<std::uint64_t>& corrected, NonBlockingLocation* nb = nullptr, OmpMoves omp = {},
              OffsetFunction* keep = nullptr);

// The pieces of amortize for a driver that holds no corrected time per event (the replay over
// MPI ranks, replay_beside.cpp).
// A run of a location's sync events whose corrected times lie `offset` after their recorded
// ones (first, last: the recorded times of its first and last event); a ramp of the backward
// amortization makes a run per event, a jump a run of its own. The offset function goes
// through the runs' ends (inside a run it is constant).
struct OffsetRun {
  std::uint64_t first = 0, last = 0, offset = 0;
  std::uint32_t count = 0;
};

// A location's runs in order, coded as variable-length integers (LEB128): per run how long after
// the previous run's last time it begins, how long it lasts, how much its offset rises over the
// previous run's (zig-zag coded, so that any order decodes) and its count, about 4 to 8 bytes
// where a decoded run takes 32 (24 with its span as 32 bits until 2026-11-27: most of the
// correction's memory on a trace jumping in most iterations). Every kGroup-th run starts a group
// with a checkpoint (its byte position, the previous run's last time and offset), so that the
// offset function finds a time by bisection over the checkpoints and a scan of one group. The
// last run stays decoded while it may still grow; the bytes grow by an eighth at a time.
class OffsetRuns {
 public:
  static constexpr std::size_t kGroup = 16;
  // A run of `count` events from `first` to `last`, merged into the last run if it has `offset`.
  void add(std::uint64_t first, std::uint64_t last, std::uint64_t offset, std::uint32_t count);
  std::size_t size() const { return coded_ + (has_open_ ? 1 : 0); }
  OffsetRun at(std::size_t i) const;  // run i (i < size(); a scan of its group)
  std::size_t bytes() const {
    return bytes_.capacity() + checkpoints_.capacity() * sizeof(Checkpoint);
  }
  // The runs in order from the first of group `group` (< groups()), decoded one at a time.
  class Reader {
   public:
    Reader(const OffsetRuns& runs, std::size_t group = 0);
    bool next(OffsetRun& run);  // false after the last
    // The run before the first read (group 0: none, all zero).
    std::uint64_t base_last() const { return last_; }
    std::uint64_t base_offset() const { return offset_; }

   private:
    const OffsetRuns& runs_;
    std::size_t index_, pos_;
    std::uint64_t last_, offset_;
  };
  std::size_t groups() const { return (size() + kGroup - 1) / kGroup; }
  // The last time of the run before group g's first (g >= 1, g < groups()), for the bisection.
  std::uint64_t group_base(std::size_t g) const { return g < checkpoints_.size() ? checkpoints_[g].last : last_; }

 private:
  struct Checkpoint {
    std::uint64_t pos, last, offset;
  };
  void code(const OffsetRun& run);
  std::vector<std::uint8_t> bytes_;
  std::vector<Checkpoint> checkpoints_;  // per group whose first run is coded
  std::size_t coded_ = 0;
  OffsetRun open_;                        // the last run, while has_open_
  bool has_open_ = false;
  std::uint64_t last_ = 0, offset_ = 0;   // the last coded run's last time and offset
};

// t + (the offset between the two surrounding points, linear), without losing ticks to doubles.
// The points are added (found by bisection), or (over_runs) (first, 0) and each run's first and
// last time, read where the runs are (a run of one event gives its point twice, which changes
// nothing; found by bisection over the runs' groups and a scan of one).
class OffsetFunction {
 public:
  OffsetFunction() = default;
  static OffsetFunction over_runs(std::uint64_t first, const OffsetRuns& runs);
  void add(std::uint64_t t, std::uint64_t offset) { points_.push_back({t, offset}); }
  void reserve(std::size_t n) { points_.reserve(n); }
  std::uint64_t operator()(std::uint64_t t) const;
  std::size_t bytes() const { return points_.capacity() * sizeof(Point); }

 private:
  struct Point {
    std::uint64_t t, offset;
  };
  static std::uint64_t between(std::uint64_t t, Point a, Point b);  // a.t <= t < b.t
  std::uint64_t over_runs_at(std::uint64_t t) const;
  std::vector<Point> points_;
  const OffsetRuns* runs_ = nullptr;
  std::uint64_t first_ = 0;
};
// The earliest time of a location's records (where its offset function starts).
std::uint64_t first_time(const LocationRecords& l, const PointToPointExtras* x, const NonBlockingLocation* nb,
                         const OmpMoves& omp);
// The moves, in this order: every time but the sync events' by `f` (the extras re-encoded in
// place from their records' moved enters), then each sync event's corrected value (move_sync,
// `barrier_of`: sync_barriers of omp.location, empty without), then the clamps that keep each
// call around its events (the extras of a record whose enter they move re-encoded).
void move_between(LocationRecords& l, PointToPointExtras* x, const OffsetFunction& f, NonBlockingLocation* nb,
                  const OmpMoves& omp);
void move_sync(LocationRecords& l, const Sync& e, std::uint64_t corrected, NonBlockingLocation* nb,
               const OmpMoves& omp, const std::vector<std::uint32_t>& barrier_of);
void keep_calls_around(LocationRecords& l, PointToPointExtras* x, NonBlockingLocation* nb, const OmpMoves& omp);

// A location's sync events in sync_events' order without holding them: a merge of its lists
// (sends, receives, collective enters, collective leaves, non-blocking starts and leaves,
// OpenMP syncs), each of which is in (time, order) order already in a trace whose events are
// in time order; a location where one is not holds them (sync_events). The lists' sync times
// must stay as they are behind the walk's position only (the moves write them as they go).
class SyncWalk {
  static constexpr std::uint32_t kStreams = 7;

 public:
  SyncWalk() = default;
  SyncWalk(const LocationRecords& l, const NonBlockingLocation* nb, const OmpSyncLocation* omp);
  bool done() const { return held_mode_ ? at_[0] == held_.size() : next_ == kStreams; }
  const Sync& peek() const { return head_; }  // !done()
  void advance();
  // Where the walk is, to come back to (a ramp walks its events again).
  struct Position {
    std::uint32_t at[kStreams] = {};
    std::uint32_t next = kStreams;
    Sync head{};
  };
  Position where() const;
  void go(const Position& p);
  void rewind();  // to the first event
  bool held() const { return held_mode_; }  // its events held (a list out of time order)
  std::size_t bytes() const { return held_.capacity() * sizeof(Sync); }

 private:
  Sync event(std::uint32_t stream, std::uint32_t k) const;
  std::uint32_t size(std::uint32_t stream) const;
  void find_head();
  const LocationRecords* l_ = nullptr;
  const NonBlockingLocation* nb_ = nullptr;
  const OmpSyncLocation* omp_ = nullptr;
  std::vector<Sync> held_;  // a location whose lists are not each in order
  bool held_mode_ = false;
  std::uint32_t at_[kStreams] = {};
  std::uint32_t next_ = kStreams;  // the stream of head_ (kStreams: done)
  Sync head_{};
};
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
// align_nonblocking; its instances `nb_instances`) in place; `latency` in ticks, `thread_latency`
// for the OpenMP synchronizations. With `moves`:
// per records index the offset function that moved the location's times (for a later read of
// its events, which must see them where the records now are).
TimeCorrectionStats correct_times(const trace::Trace& trace, std::vector<LocationRecords>& records,
                                  std::vector<PointToPointExtras>& extras, const MessagePairs& pairs,
                                  const std::vector<std::vector<RecordRef>>& instances, std::uint64_t latency,
                                  std::uint64_t thread_latency, const std::vector<NonBlockingLocation*>& nb = {},
                                  const std::vector<NonBlockingInstance>& nb_instances = {}, OmpObserver* omp = nullptr,
                                  std::vector<OffsetFunction>* moves = nullptr);

// The clock checks of analyze(): counts the violations of the records as recorded (into
// `stats`), corrects the records when options.time_correct (then counts again), and returns
// the violations for the report with the column of every dense location index.
struct ClockCheck {
  std::vector<std::uint32_t> column;
  ClockViolations violations;
  CollectiveDecisions decisions;  // of the records as they are at the end (reduce_collectives)
  // With options.time_correct and options.root_cause: per records index the offset function of
  // the correction (the root-cause analysis reads the events again and moves them the same way).
  std::vector<OffsetFunction> moves;
};
ClockCheck clock_checks(const trace::Trace& trace, const std::vector<std::uint32_t>& locations,
                        std::vector<LocationRecords>& records, std::vector<PointToPointExtras>& extras,
                        const MessagePairs& pairs, const std::vector<std::vector<RecordRef>>& instances,
                        std::size_t cnodes, const AnalysisOptions& options, AnalysisStats* stats,
                        std::vector<NonBlockingLocation>* nonblocking = nullptr, OmpObserver* omp = nullptr);

}  // namespace cubescale::analysis
