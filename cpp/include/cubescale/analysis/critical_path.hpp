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
//    wrong-order as mpi_latesender_wo finds them (among the location's last 100).
// 2. Backward walk (`critical_path_segments`): start on the location whose last Leave is the
//    latest (among those with MPI records, if any), there; going back in time, at the latest
//    sync point where it waited, the path leaves it: the waiting itself is not on the path,
//    and the path continues on the location it waited for, from that location's enter into
//    the operation (the time the waiting ended) backward; until
//    the location's first Enter. Each sync point is used at most once, so the walk ends. Result:
//    per location the time intervals on the path, joining without gaps.
// 3. Attribution (`CriticalPathObserver`, a second pass over the events): the exclusive time
//    of each call path inside its location's intervals.
// scout walks from the MPI_Finalize of the process that entered it last to MPI_Init and leaves
// out the time before and in them; we cover the whole trace (docs/analysis.md).
#include <algorithm>
#include <cstdint>
#include <vector>

#include "cubescale/analysis/late_receiver.hpp"
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
  std::uint64_t resume = 0;    // where the walk goes on: min(causer's enter, wait_end)
  std::uint32_t causer = 0;    // dense location index
  std::uint32_t cnode : 29 = 0;           // profile row of the waiting call (counts; kNone kept as out of range)
  std::uint32_t late_sender : 1 = 0;      // a receive (else a collective)
  std::uint32_t empty : 1 = 0;            // a Late Sender of a message without payload
  std::uint32_t wrong_order : 1 = 0;      // a Late Sender whose message was sent after one received later

  SyncPoint() = default;
  // `enter`: the waiting operation's; `causer_time`: the causer's enter into its operation.
  SyncPoint(std::uint64_t /*enter*/, std::uint64_t wait_end_, std::uint64_t causer_time, std::uint32_t /*location*/,
            std::uint32_t cnode_, std::uint32_t causer_, bool late_sender_, bool empty_)
      : wait_end(wait_end_), resume(std::min(causer_time, wait_end_)), causer(causer_),
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

// Per location (dense index, as in the records) its sync points in time order. Assumes records
// the wait-state matching has accepted (consistent). `ranks`: the collectives' members in rank
// order (collective_sync).
std::vector<std::vector<SyncPoint>> sync_points(const std::vector<LocationRecords>& records,
                                                const CommunicatorRanks& ranks, std::size_t location_count);
// The same for one process from what the clock checks built: the message pairs and the
// collective instances (collective_instances), instead of matching both again.
std::vector<std::vector<SyncPoint>> sync_points(const std::vector<LocationRecords>& records, const MessagePairs& pairs,
                                                const std::vector<std::vector<RecordRef>>& instances,
                                                std::size_t location_count);
// The same for a replay's rank: its own locations' receives (`receivers`) against the sends to
// them it received (in each sender's order).
std::vector<std::vector<SyncPoint>> sync_points(const std::vector<LocationRecords>& receivers, const SendBuffer& sends,
                                                const CommunicatorRanks& ranks, std::size_t location_count);

// First Enter and last Leave per location (pass 1): the time a profile accounts for (events
// outside every region, such as PROGRAM_BEGIN before main, have no call path to go to).
class SpanObserver final : public trace::CallPathObserver {
 public:
  explicit SpanObserver(std::size_t location_count)
      : first_(location_count, ~std::uint64_t(0)), last_(location_count, 0) {}
  void begin_location(std::uint32_t location) override { location_ = location; }
  trace::EventTypeSet interest() const override {
    return trace::event_types({trace::EventType::Enter, trace::EventType::Leave});
  }
  void event(const trace::Event& e, std::uint32_t) override {
    if (e.type != trace::EventType::Enter && e.type != trace::EventType::Leave) return;
    if (first_[location_] == ~std::uint64_t(0)) first_[location_] = e.time;
    last_[location_] = e.time;
  }
  const std::vector<std::uint64_t>& first() const { return first_; }
  const std::vector<std::uint64_t>& last() const { return last_; }

 private:
  std::vector<std::uint64_t> first_, last_;
  std::uint32_t location_ = 0;
};

struct Segment {
  std::uint64_t from, to;
};
// Per dense location index its intervals on the critical path, in increasing time, disjoint.
// `candidates`: the locations the path may start on (analyzed locations).
std::vector<std::vector<Segment>> critical_path_segments(const std::vector<std::vector<SyncPoint>>& points,
                                                         const SpanObserver& spans,
                                                         const std::vector<std::uint32_t>& candidates,
                                                         const std::vector<bool>& has_records);

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

// Appends Scalasca's `critical_path` metric (root, EXCLUSIVE, sec) with `ticks` converted.
void add_critical_path(profile::LocalProfile& p, const std::vector<double>& ticks, std::uint64_t resolution);

}  // namespace cubescale::analysis
