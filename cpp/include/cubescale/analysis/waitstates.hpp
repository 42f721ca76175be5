#pragma once
// Wait-state analysis of MPI traces (paper 002, section 5.2; Scalasca's scout patterns).
//
// Two steps, so that a later MPI replay can run them on different ranks:
// 1. Extraction, per location, streaming: beside the trace -> profile builder (which owns the
//    call tree, trace/profile.hpp's CallPathObserver), every MPI message event and every MPI
//    collective becomes one fixed-size record holding what matching needs: the MPI call
//    region's enter and leave, the peer or root as a location, communicator, tag, call path.
//    Nothing else of the trace is kept, so memory grows with communication events only. The
//    records are trivially copyable: a replay can move them as bytes.
// 2. Matching, over the records of all locations: the k-th message from A to B on (comm, tag)
//    is the k-th one B receives from A on (comm, tag) (MPI's non-overtaking rule); the k-th
//    collective of each member of a communicator is one instance. Each pattern's waiting time
//    goes to the call path of the MPI call where the waiting happened, on the waiting location:
//      mpi_latesender     receive:   min(enter_send, leave_recv) - enter_recv   (> 0 only)
//                         MPI_Waitall/any/some: only the largest of its receives; MPI_Test*: none
//      mpi_latesender_wo  a Late Sender whose message was sent after one the same location
//                         receives later (among its last 100 Late Senders, as scout keeps),
//                         split into mpi_lswo_different / mpi_lswo_same by the two senders
//      mpi_barrier_wait   barrier:   min(latest enter, my leave) - my enter
//      mpi_wait_nxn       N x N:     min(latest enter, my leave) - my enter
//      mpi_barrier_completion, mpi_nxn_completion (barrier, N x N):
//                         my leave - max(earliest leave, min(latest enter, my leave))
//      mpi_latebroadcast  1 to N:    min(root's enter, my leave) - my enter      (non-roots)
//      mpi_earlyreduce    N to 1:    min(latest enter, my leave) - my enter      (root only)
//      mpi_earlyscan      (ex)scan:  min(latest enter of ranks <= mine, my leave) - my enter
//      mpi_init_completion  MPI_Init(_thread): completion as for barriers
//      mpi_finalize_wait  MPI_Finalize: min(latest enter, my leave) - my enter
//                         (both only when every process of MPI_COMM_WORLD calls them equally often)
// Inconsistent traces (a receive without its send, a send never received, a collective some
// members of its communicator lack or call as another operation) raise FormatError naming the
// location's event file, the event's position and its time.
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "cubescale/analysis/instance_stats.hpp"
#include "cubescale/profile/local_profile.hpp"
#include "cubescale/trace/profile.hpp"
#include "cubescale/trace/reader.hpp"

namespace cubescale::analysis {

using trace::kNone;

// How the MPI call around a receive completes it (Scalasca treats them differently).
enum class CallKind : std::uint8_t { Single, WaitMulti, Test };

// One MPI_SEND/ISEND or MPI_RECV/IRECV event. Times are ticks of the trace's clock.
struct MessageRecord {
  std::uint64_t enter = 0, leave = 0;  // the MPI call region around the event
  std::uint64_t time = 0;              // the event itself
  std::uint64_t position = 0;          // the event's number in its location's stream (errors)
  std::uint32_t location = kNone;      // where it was recorded (dense location index)
  std::uint32_t peer = kNone;          // receiver of a send, sender of a receive (dense index)
  std::uint32_t communicator = kNone, tag = 0;
  std::uint32_t cnode = kNone;  // call path of the MPI call (row of the profile)
  std::uint32_t call = 0;       // number of the MPI call on its location (a Waitall's receives share it)
  CallKind call_kind = CallKind::Single;
  std::uint8_t empty = 0;  // no payload (0 bytes): Scalasca counts it as a synchronization
  std::uint8_t padding[6] = {};
};

// MPI_Init(_thread) and MPI_Finalize calls become collectives over all of MPI_COMM_WORLD
// (they synchronize its processes) with these operation numbers beyond OTF2's, each kind on
// a communicator number of its own (so that one missing on a process spoils only its kind).
inline constexpr std::uint32_t kInitOp = 1000, kFinalizeOp = 1001;
inline constexpr std::uint32_t kInitCommunicator = kNone - 2, kFinalizeCommunicator = kNone - 1;

// One MPI collective (MPI_COLLECTIVE_END, with its MPI call region).
struct CollectiveRecord {
  std::uint64_t enter = 0, leave = 0, time = 0, position = 0;
  std::uint32_t location = kNone;
  std::uint32_t communicator = kNone;
  std::uint32_t op = 0;        // OTF2_CollectiveOp
  std::uint32_t root = kNone;  // the root's location (rooted operations), else kNone
  std::uint32_t cnode = kNone;
  std::uint32_t padding = 0;
};
static_assert(std::is_trivially_copyable_v<MessageRecord> && sizeof(MessageRecord) == 64);
static_assert(std::is_trivially_copyable_v<CollectiveRecord> && sizeof(CollectiveRecord) == 56);

// What one location contributes to matching, each vector in recorded order.
struct LocationRecords {
  std::uint32_t location = kNone;
  std::vector<MessageRecord> sends, receives;
  std::vector<CollectiveRecord> collectives;
};

// The patterns computed, in the order of their metrics below their parents.
enum class Pattern : std::uint8_t {
  BarrierWait, BarrierCompletion, LateSender, LateSenderWrongOrder, WrongOrderDifferent, WrongOrderSame,
  LateReceiver,  // analysis/late_receiver.hpp
  EarlyReduce, EarlyScan, LateBroadcast, WaitNxN, NxNCompletion, InitCompletion, FinalizeWait, Count
};
const char* pattern_name(Pattern p);  // Scalasca's unique name: "mpi_latesender", ...

// Builds records while the profile builder walks a location's events.
class RecordExtractor final : public trace::CallPathObserver {
 public:
  explicit RecordExtractor(const trace::Trace& trace);
  void begin_location(std::uint32_t location) override;
  void event(const trace::Event& e, std::uint32_t cnode) override;
  void end_location(std::uint32_t location) override;
  void rows(const std::vector<std::uint32_t>& rows) override;  // call paths -> profile rows
  std::vector<LocationRecords>& records() { return records_; }

 private:
  struct Frame {
    std::uint64_t enter;
    std::uint32_t region, call;
  };
  std::uint32_t peer_location(std::uint32_t communicator, std::uint32_t rank, const trace::Event& e) const;
  void close(std::uint64_t leave);

  const trace::Trace& trace_;
  const trace::Definitions& defs_;
  std::vector<std::uint32_t> rank_location_;  // MPI_COMM_WORLD rank -> dense location index
  std::vector<CallKind> region_kind_;
  std::vector<std::uint32_t> region_init_exit_;  // kInitOp, kFinalizeOp or 0
  std::vector<LocationRecords> records_;
  std::vector<Frame> stack_;
  std::uint32_t calls_ = 0;
  std::uint64_t last_time_ = 0;
  // Records still waiting for the leave time of the frame they were made in (innermost last).
  struct Pending {
    int list;  // 0 sends, 1 receives, 2 collectives
    std::size_t index, depth;
  };
  std::vector<Pending> pending_;
};

// Pattern severities, seconds, [pattern][cnode row * locations + column] (exclusive along the
// call tree: on the MPI call's own call path), and which patterns had operations to look at.
struct Severities {
  std::size_t cnodes = 0, locations = 0;
  std::vector<std::vector<double>> values;
  std::vector<bool> present;
  InstanceStats* instances = nullptr;  // when given, every instance goes there too (trace.stat)
};

// Matches the records of `locations` (columns in this order; every peer must be among them).
Severities match(const trace::Trace& trace, const std::vector<std::uint32_t>& locations,
                 const std::vector<LocationRecords>& records, std::size_t cnodes,
                 InstanceStats* instances = nullptr);

// The profile of the trace (trace_profile) with Scalasca's metric tree below `time`:
// execution > mpi > mpi_synchronization > mpi_sync_collective > {mpi_barrier_wait,
// mpi_barrier_completion}, mpi > mpi_communication > mpi_point2point > mpi_latesender >
// mpi_latesender_wo > {mpi_lswo_different, mpi_lswo_same} and
// mpi_collective > {mpi_earlyreduce, mpi_earlyscan, mpi_latebroadcast, mpi_wait_nxn,
// mpi_nxn_completion}, mpi > mpi_init_exit > {mpi_init_completion, mpi_finalize_wait},
// for the patterns present; as scout
// writes them, every metric below `time` is EXCLUSIVE along the call tree (`time` stays
// INCLUSIVE, as Score-P's profile has it) and stores its value including its child metrics.
// Beside the tree, `clock_violations` (analysis/clock_condition.hpp) when the trace has MPI
// communication; with options.time_correct the records are corrected first
// (analysis/time_correct.hpp) and the violations counted after the correction.
struct AnalysisStats {
  std::uint64_t events = 0, messages = 0, collectives = 0;
  std::uint64_t p2p_violations = 0, collective_violations = 0;  // as recorded (before any correction)
  std::uint64_t corrected_jumps = 0;                             // events the time correction moved forward
  std::vector<PatternStatistics> patterns;                       // per Pattern (trace.stat)
};
struct AnalysisOptions {
  bool time_correct = false;
  double min_latency = 0.0;  // seconds: a receive must follow its send by this much (clock condition)
};
profile::LocalProfile analyze(const trace::Trace& trace, const std::vector<std::uint32_t>& locations,
                              AnalysisStats* stats = nullptr, const AnalysisOptions& options = {});

}  // namespace cubescale::analysis
