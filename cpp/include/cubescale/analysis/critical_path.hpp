#pragma once
// Scalasca's critical-path profile (CriticalPath.pattern; paper 002, section 7): the time per
// call path and location that lies on the critical path of the run, the chain of activities
// that determines its wall-clock time.
//
// Three steps, each per location over what it needs of others (so that a distributed replay
// can run them where the records live):
// 1. Sync points (`sync_points`): from the wait-state records, every instance where a location
//    waited for another: a Late Sender receive waits for its sender until
//    min(enter_send, leave_recv); a collective member waits, at a synchronization point
//    (collective_sync in waitstates.hpp, scout's), for the member whose enter it waits for
//    there (the last, the last sender, the root), until min(that enter, my leave). Same definitions as the
//    wait-state patterns (waitstates.hpp); MPI_Test* and zero waits are no sync points, an
//    MPI_Waitall/any/some is one sync point with its latest sender. A Late Sender is marked
//    wrong-order as mpi_latesender_wo finds them (among the location's last 100). Late
//    Receiver instances (late_receiver.hpp) add theirs: the send's completion waits for the
//    receiver until the receive was posted (LateReceiverSends::keep_points: in one process
//    added by add_sync_points; in the replay made in each round of the message exchange while
//    the send records exist and joined to the others by Replay::late_receiver).
// 2. Backward walk (`critical_path_segments`), scout's (CriticalPath.pattern, MPI mode): start
//    at the enter of the MPI_Finalize entered last (the first location among equals, where
//    scout's MPI_MAXLOC takes the lowest rank); going back in time, at the latest sync point
//    where the location waited, the path leaves it: the waiting itself is not on the path,
//    and the path continues on the location it waited for, from that location's enter into
//    the operation (the time the waiting ended) backward; until the enter of the location's
//    MPI_Init. As scout, the path moves at Late Sender receives (to the sender), Late Receiver
//    send completions (to the receiver, from the enter of the call that posted the receive),
//    and blocking collectives that waited (1-to-N: to the root; N-to-1, N x N, barrier: to the
//    latest), not at scans, MPI_Init or MPI_Finalize (scout has no such hand-off). A trace
//    without MPI_Finalize (or MPI_Init) in every process: from the latest last Leave (to the
//    first Enter) instead, so that the whole trace is covered (`PathWindow`). Each sync point
//    is used at most once, so the walk ends. Result: per location the time intervals on the
//    path, joining without gaps.
// 3. Attribution: the exclusive time of each call path inside its location's intervals. In one
//    process (`PathTimeline`) from what the pass over the events kept per location: the path's
//    intervals start and end at the enter or inside an MPI call (a wait's end, a causer's
//    enter), so they cover whole gaps between MPI calls and parts of calls that have one call
//    path each; a location where they do not (an interval's end inside a gap or inside an MPI
//    call with nested regions, as a clock correction can move it) or whose time line outgrew
//    its budget is read a second time (`CriticalPathObserver`), as the replay over MPI ranks
//    reads its own locations on the path, so the result is always exact.
#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "cubescale/analysis/late_receiver.hpp"
#include "cubescale/analysis/omp_patterns.hpp"
#include "cubescale/analysis/receive_index.hpp"
#include "cubescale/analysis/waitstates.hpp"
#include "cubescale/profile/local_profile.hpp"
#include "cubescale/trace/profile.hpp"

namespace cubescale::analysis {

struct LocationRecords;

struct SyncPoint {
  // 24 bytes (the replay keeps one per wait to the end: its memory bound, docs/analysis.md):
  // what the critical path's walk and the Late Sender counts read. The location is the list's
  // (points are kept per location); the waiting operation's enter is not needed once the
  // waiting time is known.
  std::uint64_t wait_end = 0;  // enter + the waiting time
  std::uint64_t resume = 0;    // where the walk goes on: the causer's enter (scout's, even after wait_end)
  std::uint32_t causer = 0;    // dense location index
  std::uint32_t cnode : 29 = 0;           // profile row of the waiting call (counts; kNone kept as out of range)
  std::uint32_t late_sender : 1 = 0;      // a receive (else a collective)
  std::uint32_t empty : 1 = 0;            // a Late Sender of a message without payload
  std::uint32_t wrong_order : 1 = 0;      // a Late Sender whose message was sent after one received later

  SyncPoint() = default;
  // `enter`: the waiting operation's; `causer_time`: the causer's enter into its operation.
  SyncPoint(std::uint64_t /*enter*/, std::uint64_t wait_end_, std::uint64_t causer_time, std::uint32_t /*location*/,
            std::uint32_t cnode_, std::uint32_t causer_, bool late_sender_, bool empty_)
      : wait_end(wait_end_), resume(causer_time), causer(causer_),
        cnode(cnode_ & kCnodeMask), late_sender(late_sender_), empty(empty_) {}
  static constexpr std::uint32_t kCnodeMask = (1u << 29) - 1;
};
static_assert(sizeof(SyncPoint) == 24);

// How long an MPI call from `enter` to `leave` waits for something that happens at `until`
// (a sync point's waiting, 0 when it does not wait).
inline std::uint64_t waited(std::uint64_t enter, std::uint64_t leave, std::uint64_t until) {
  const auto end = until < leave ? until : leave;
  return end > enter ? end - enter : 0;
}

// Whether a member that waited in this blocking collective moves the critical path (scout's
// COLL_12N, COLL_N21, COLL_N2N and SYNC_COLL callbacks): not scans, MPI_Init or MPI_Finalize.
inline bool moves_path(const CollectiveRecord& c) {
  return c.op != 14 && c.op != 15 && c.op != kInitOp && c.op != kFinalizeOp;  // OTF2 scan, exscan
}

// Where scout's critical path runs: from the MPI_Finalize entered last back to MPI_Init. Per
// dense location the enter of its first MPI_Init / MPI_Finalize (kNoEnter: none); each end
// applies only where every process of MPI_COMM_WORLD has one (else the trace's first Enter /
// latest last Leave, so that a trace without them is covered whole).
inline constexpr std::uint64_t kNoEnter = ~std::uint64_t(0);
struct PathWindow {
  std::vector<std::uint64_t> init, finalize;
  bool has_init = false, has_finalize = false;

  explicit PathWindow(std::size_t location_count = 0) : init(location_count, kNoEnter), finalize(location_count, kNoEnter) {}
  // Notes the first MPI_Init / MPI_Finalize among a location's collective records.
  void note(const LocationRecords& l);
  // How many of the noted locations have an MPI_Init / MPI_Finalize (a replay's rank: its own).
  std::pair<std::size_t, std::size_t> members() const;
  // With every rank's members summed: which ends apply.
  void decide(std::size_t init_members, std::size_t finalize_members, const CommunicatorRanks& ranks);
  // Where the path ends on location l reached at t (its first Enter `first` without MPI_Init).
  std::uint64_t bottom(std::uint32_t l, std::uint64_t first, std::uint64_t t) const {
    const auto b = has_init && init[l] != kNoEnter ? init[l] : first;
    return b < t ? b : t;
  }
};

// Per location (dense index, as in the records) its sync points in time order. Assumes records
// the wait-state matching has accepted (consistent). `ranks`: the collectives' members in rank
// order (collective_sync).
std::vector<std::vector<SyncPoint>> sync_points(const std::vector<LocationRecords>& records,
                                                const CommunicatorRanks& ranks, std::size_t location_count);
// The same for one process from what the clock checks built: the message pairs and the
// collective instances (collective_instances), instead of matching both again; with `causers`
// (reduce_collectives' of the same instances, one per collective record) without deciding each
// instance's synchronization again; with `message_points` (from sync_point_lists, filled by
// the matching: match_receives) taking those over (emptied) instead of walking the receives.
std::vector<std::vector<SyncPoint>> sync_points(const std::vector<LocationRecords>& records, const MessagePairs& pairs,
                                                const std::vector<std::vector<RecordRef>>& instances,
                                                std::size_t location_count,
                                                const std::vector<std::uint32_t>* causers = nullptr,
                                                std::vector<std::vector<SyncPoint>>* message_points = nullptr,
                                                const Chunking& chunking = {});
// Per dense location an empty list of sync points with room for one per receive and collective
// of its records (pages that stay unused are never touched), for match_receives to begin.
std::vector<std::vector<SyncPoint>> sync_point_lists(const std::vector<LocationRecords>& records,
                                                     std::size_t location_count);
// The same for a replay's rank: its own locations' receives (`receivers`), each paired in place
// with its send (receive_index.hpp). Gives the whole pages of the receives back as it has read
// them (their contents are lost: the caller releases them afterwards), so that the points
// grow as the receives go.
std::vector<std::vector<SyncPoint>> sync_points_paired(std::vector<LocationRecords>& receivers,
                                                       const SendEnters& enters, const CommunicatorRanks& ranks,
                                                       std::size_t location_count);

// Adds `more` (per dense location: other sync points, such as Late Receiver's) to `points`,
// keeping each location's list in time order (the Late Sender and collective points first
// among equal ends). Empties `more`. Chunks of locations at once.
void add_sync_points(std::vector<std::vector<SyncPoint>>& points, std::vector<std::vector<SyncPoint>>& more,
                     const Chunking& chunking = {});
void add_sync_points_at(std::vector<SyncPoint>& points, std::vector<SyncPoint>& more);  // one location's
// Sorts one location's points by wait end, stably (equal ends keep their order), as
// std::stable_sort does; a list of a few sorted runs (each source's points come in time order)
// is merged run by run, in linear time per run.
void sort_by_wait_end(std::vector<SyncPoint>& points);

struct Segment {
  std::uint64_t from, to;
};

// OpenMP hand-offs inside a process (scout's OMP_BARRIER and OMP_MGMT_FORK callbacks of
// CriticalPath.pattern): a thread that waited at a barrier waited for the team's thread that
// entered it last (the first location among equal enters), until min(that enter, my leave); a
// worker thread's visit of a parallel region waited for its team's fork on the master (wait end
// and resume at the fork). Appended to `points` (per dense location), each list kept in time
// order. A process's threads are all on one rank of a replay, so `omp` holds both ends.
void add_omp_sync_points(const OmpObserver& omp, std::vector<std::vector<SyncPoint>>& points);

// scout's time of a parallel region on the path (its time map, TmapCacheHandler's fork and join
// callbacks): a thread's time from its team's fork to entering the region, and the master's from
// leaving it to the join, count for the region's call path; the master's come off the call path
// around the region (`parents`: the report's), where the profile counts them. Per dense location
// its `segments` (increasing); `ticks` [row * columns + column[location]].
void omp_path_time(const OmpObserver& omp, const std::vector<std::vector<Segment>>& segments,
                   const std::vector<std::uint32_t>& column, std::size_t columns,
                   const std::vector<std::uint32_t>& parents, std::vector<double>& ticks);

// scout's local time profile (what its performance-impact metrics take as a thread's time per
// call path) against the report's `time`, in seconds [row * locations.size() + column]: the
// master's fork and join time moved as above, a worker's fork time added to the region where the
// visit has a barrier, and a worker's time after its last barrier's enter in each visit (OmpTail)
// taken off (scout clears a worker's time map at each fork and at the end). One more row after
// the call paths: 1 in a worker thread's column, whose time outside its top-level regions scout
// does not count either. Empty where nothing differs (no parallel region with a fork).
std::vector<double> omp_local_time(const OmpObserver& omp, const std::vector<std::uint32_t>& locations,
                                   const std::vector<std::uint32_t>& parents, std::uint64_t resolution);

// First Enter and last Leave per location (pass 1): the time a profile accounts for (events
// outside every region have no call path to go to; PROGRAM_BEGIN and PROGRAM_END are the
// program region's Enter and Leave where the trace defines that region).
class SpanObserver final : public trace::CallPathObserver {
 public:
  explicit SpanObserver(std::size_t location_count)
      : first_(location_count, ~std::uint64_t(0)), last_(location_count, 0),
        program_first_(location_count, ~std::uint64_t(0)), program_last_(location_count, 0) {}
  void begin_location(std::uint32_t location) override { location_ = location; }
  trace::EventTypeSet interest() const override {
    return trace::event_types(
        {trace::EventType::Enter, trace::EventType::Leave, trace::EventType::ProgramBegin, trace::EventType::ProgramEnd});
  }
  void event(const trace::Event& e, std::uint32_t) override {
    const bool region = e.type == trace::EventType::Enter || e.type == trace::EventType::Leave;
    if (!region && e.type != trace::EventType::ProgramBegin && e.type != trace::EventType::ProgramEnd) return;
    if (e.type == trace::EventType::ProgramBegin && program_first_[location_] == ~std::uint64_t(0))
      program_first_[location_] = e.time;
    program_last_[location_] = e.time;
    if (!region) return;
    if (first_[location_] == ~std::uint64_t(0)) first_[location_] = e.time;
    last_[location_] = e.time;
  }
  // Per location, so a later part's are the earliest and latest times it saw (the rest untouched).
  void absorb(trace::CallPathObserver& other) override {
    const auto& later = dynamic_cast<const SpanObserver&>(other);
    for (std::size_t l = 0; l < first_.size() && l < later.first_.size(); ++l) {
      first_[l] = std::min(first_[l], later.first_[l]);
      last_[l] = std::max(last_[l], later.last_[l]);
      program_first_[l] = std::min(program_first_[l], later.program_first_[l]);
      program_last_[l] = std::max(program_last_[l], later.program_last_[l]);
    }
  }
  const std::vector<std::uint64_t>& first() const { return first_; }
  const std::vector<std::uint64_t>& last() const { return last_; }
  // The time from the location's PROGRAM_BEGIN to its PROGRAM_END (or last Leave), in ticks,
  // where the trace does not define the program's region: what an artificial root call path
  // would span (the performance impact). Where it is defined (Score-P 7 and later), the builder
  // passes PROGRAM_BEGIN/END on as that region's Enter/Leave (trace::as_region_event), the
  // root call path holds that time itself, and this is 0. 0 without a PROGRAM_BEGIN: scout
  // (pearl) then has no root call path, and the time between top-level regions goes nowhere
  // (its time map adds an Enter's gap only to a parent call path).
  std::uint64_t program_span(std::uint32_t l) const {
    return program_first_[l] > program_last_[l] ? 0 : program_last_[l] - program_first_[l];
  }

 private:
  std::vector<std::uint64_t> first_, last_, program_first_, program_last_;
  std::uint32_t location_ = 0;
};

// Per dense location index its intervals on the critical path, in increasing time, disjoint.
// `candidates`: the locations the path may start on (analyzed locations).
std::vector<std::vector<Segment>> critical_path_segments(const std::vector<std::vector<SyncPoint>>& points,
                                                         const SpanObserver& spans,
                                                         const std::vector<std::uint32_t>& candidates,
                                                         const std::vector<bool>& has_records,
                                                         const PathWindow& window);
// Where the path starts: (time, location), location kNone when nowhere; the latest MPI_Finalize
// enter where the window has one, else the latest last Leave (of locations with records, if any).
std::pair<std::uint64_t, std::uint32_t> path_start(const SpanObserver& spans, const std::vector<std::uint32_t>& candidates,
                                                   const std::vector<bool>& has_records, bool any_records,
                                                   const PathWindow& window);

// Pass 2: exclusive time of each call path inside the segments of its location, in ticks,
// [cnode row * columns + column] after rows().
class CriticalPathObserver final : public trace::CallPathObserver {
 public:
  CriticalPathObserver(std::vector<std::vector<Segment>> segments, const std::vector<std::uint32_t>& locations);
  void begin_location(std::uint32_t location) override;
  void event(const trace::Event& e, std::uint32_t cnode) override;
  void rows(const std::vector<std::uint32_t>& rows) override;
  std::vector<double> values(std::size_t cnodes) const;  // ticks

 private:
  void attribute(std::uint64_t until);
  void flush();  // the location's time per call path into shares_
  std::vector<std::vector<Segment>> segments_;
  std::vector<std::uint32_t> column_;  // dense location -> column
  struct Share {
    std::uint32_t cnode, column;
    std::uint64_t ticks;
  };
  std::vector<Share> shares_;
  std::vector<std::uint64_t> current_;  // this location's ticks per call path (builder numbering)
  std::vector<std::uint32_t> touched_;  // the call paths with ticks in current_
  std::vector<std::uint32_t> stack_;
  const std::vector<Segment>* mine_ = nullptr;
  std::size_t next_ = 0;  // first segment of mine_ not yet past
  std::uint64_t last_ = 0;
  std::uint32_t location_ = 0;
  bool started_ = false;
};

// Pass 1 of the one-process analysis: per location its time line cut at the enter and leave of
// each outermost MPI call (a region of paradigm MPI or named MPI_*; an OpenMP barrier counts as
// one, and a parallel region's enter and leave are cuts too), so that the path's
// intervals need no second read (step 3 above). Per call 16 bytes (enter, duration, and its call
// path, or the count of its exclusive times per call path where it has nested regions) and per
// gap before it 8 bytes per call path with time there (40 bits of ticks, 24 of call path).
// Bounded: a location whose entries exceed kEntriesPerCall per call (plus kEntriesSlack), a gap
// with more than kMaxGapEntries call paths, an entry or call path beyond its bits, or frames still
// open at its end, keeps nothing more and is read again instead.
class PathTimeline final : public trace::CallPathObserver {
 public:
  static constexpr std::size_t kEntriesPerCall = 16, kEntriesSlack = 4096, kMaxGapEntries = 127, kMaxSplits = 64;
  // `spans`, when given, sees the events it wants through this observer (one call of the
  // profile builder per event fewer: both want every Enter and Leave).
  explicit PathTimeline(const trace::Definitions& defs, SpanObserver* spans = nullptr);
  void begin_location(std::uint32_t location) override;
  trace::EventTypeSet interest() const override {
    using T = trace::EventType;
    return spans_ ? trace::event_types({T::Enter, T::Leave, T::ThreadFork, T::OmpFork, T::ProgramBegin, T::ProgramEnd})
                  : trace::event_types({T::Enter, T::Leave, T::ThreadFork, T::OmpFork});
  }
  void event(const trace::Event& e, std::uint32_t cnode) override;
  void end_location(std::uint32_t location) override;
  void rows(const std::vector<std::uint32_t>& rows) override { rows_.assign(1, rows); }
  // Takes over a later part's lines; they keep the rows of their own builder's call paths.
  void absorb(trace::CallPathObserver& later) override;
  // Adds each location's time inside its `segments` per call path to `ticks` [row * columns +
  // column[location]]; returns the locations with segments it cannot attribute exactly (to be
  // read again), in increasing order.
  std::vector<std::uint32_t> attribute(const std::vector<std::vector<Segment>>& segments,
                                       const std::vector<std::uint32_t>& column, std::size_t columns,
                                       std::vector<std::uint64_t>& ticks) const;
  std::uint64_t bytes() const;  // what the time lines hold (their calls and entries)
  void release();

 private:
  struct Call {  // a piece [enter, enter + duration) and, before it, the gap since the last call
    std::uint64_t enter;
    std::uint32_t duration;
    std::uint32_t nested : 1, gap : 7, value : 24;  // value: its call path, or (nested) its entry count
  };
  struct Entry {
    std::uint64_t ticks : 40, cnode : 24;
  };
  struct Line {
    std::vector<Call> calls;  // ends with one of duration 0 that closes the last gap
    std::vector<Entry> entries;
    std::uint64_t begin = 0;  // the first Enter
    bool entered = false, exact = true;
    std::uint8_t rows = 0;  // which of rows_ numbers its call paths (the part that read it)
  };
  static constexpr std::uint8_t kCall = 1, kCut = 2;  // mpi_region_: an MPI call or OpenMP barrier; a parallel region
  void add(std::uint32_t cnode, std::uint64_t ticks);
  bool close_piece(std::uint64_t at, bool call);
  bool cut(std::uint64_t at);  // ends the open gap at `at` without a call
  bool keep(std::uint32_t cnode, std::uint64_t ticks);
  void drop();  // this location becomes one to read again
  bool attribute(const Line& line, const std::vector<Segment>& segments, std::vector<std::uint64_t>& current,
                 std::vector<std::uint32_t>& touched) const;

  SpanObserver* spans_ = nullptr;
  std::vector<std::uint8_t> mpi_region_;  // per region: kCall, kCut or 0
  std::vector<Line> lines_;
  std::vector<std::vector<std::uint32_t>> rows_;  // per part read at once: call path -> row
  std::vector<std::uint32_t> read_;               // the locations this observer read, in order
  Line* line_ = nullptr;  // the location being read, nullptr once dropped
  std::vector<std::uint32_t> stack_;
  std::vector<std::pair<std::uint32_t, std::uint64_t>> piece_;  // the open piece's ticks per call path
  std::uint64_t last_ = 0, piece_begin_ = 0, own_ = 0;  // own_: the open MPI call's time outside nested regions
  std::size_t call_depth_ = 0;  // stack depth of the open outermost MPI call, 0: in a gap
  std::uint32_t gap_ = 0;       // entries of the gap before the open call
};

// Appends Scalasca's `critical_path` metric (root, EXCLUSIVE, sec) with `ticks` converted.
void add_critical_path(profile::LocalProfile& p, const std::vector<double>& ticks, std::uint64_t resolution);

}  // namespace cubescale::analysis
