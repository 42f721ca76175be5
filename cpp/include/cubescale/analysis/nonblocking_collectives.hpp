#pragma once
// Wait states of MPI-3 non-blocking collectives (beyond scout, which skips them).
//
// Score-P records an MPI_I<op> (MPI_Iallreduce, MPI_Ibarrier, ...) as a
// NON_BLOCKING_COLLECTIVE_REQUEST in the call that starts it and a
// NON_BLOCKING_COLLECTIVE_COMPLETE (operation, communicator, root) in the MPI_Wait*/Test* that
// completes it. A process can only wait in the completion call, so the patterns of the
// blocking operation apply to it with the operation's *start* (the enter of its MPI_I<op>)
// in place of the collective's enter:
//   Ibarrier (mpi_barrier_wait), N x N (mpi_wait_nxn):  min(latest start, leave) - enter
//   1-to-N (mpi_latebroadcast, non-roots):              min(root's start, leave) - enter
//   N-to-1 (mpi_earlyreduce, root only):                 min(latest start, leave) - enter
//   scans (mpi_earlyscan):                               min(latest start up to mine, leave) - enter
// where enter and leave are those of the completion call (MPI_Wait*; completions in MPI_Test*
// count nothing). A call completing several gets only the largest (as Late Sender in
// MPI_Waitall). Instances: the k-th non-blocking collective started by each location on a
// communicator (MPI orders collectives by their start). The time goes to the completion call's
// call path; that call's time moves from mpi_point2point (where its region name puts it) to
// mpi_collective (Ibarrier: mpi_sync_collective), all of it when the call completes nothing
// but non-blocking collectives, else the waiting time, so that parents keep their children.
#include <cstdint>
#include <utility>
#include <vector>

#include "cubescale/analysis/clock_condition.hpp"
#include "cubescale/analysis/late_receiver.hpp"
#include "cubescale/analysis/waitstates.hpp"

namespace cubescale::analysis {

// One completed non-blocking collective of a location.
struct NonBlockingRecord {
  std::uint64_t start = 0;          // enter of the MPI_I<op> call
  std::uint64_t enter = 0, leave = 0;  // the completion call
  std::uint64_t position = 0;       // the completion event's number (errors)
  std::uint32_t location = kNone, communicator = kNone, op = 0;
  std::uint32_t root_rank = kNone;  // in the communicator; kNone when not rooted
  std::uint32_t cnode = kNone;      // of the completion call
  std::uint32_t call = 0;           // the completion call's number on its location
  std::uint32_t order = 0;          // start order on its location
  bool test = false;                // completed in MPI_Test*
  bool only_collectives = true;     // the completion call completed no point-to-point message
  std::uint8_t padding[2] = {};
};

struct NonBlockingLocation {
  std::uint32_t location = kNone;
  std::vector<NonBlockingRecord> records;
  // Per record the position of the event that started it (its request; without one, its
  // completion): the time correction orders the start among the location's events.
  std::vector<std::uint64_t> start_positions;
};

// A member's pattern and the time it waits until (kNoTime: none) in an instance of the
// operation `op` (class `rule`): the latest start of all members, the root's start, and for
// scans the latest start of the members ranked up to this one.
std::pair<Pattern, std::uint64_t> nonblocking_wait(SyncRule rule, std::uint32_t op, bool root, std::uint64_t latest,
                                                   std::uint64_t root_start, std::uint64_t so_far);

// The root's dense location index of a rooted record (kNone when not rooted or unknown);
// `world`: world_locations(defs).
std::uint32_t nonblocking_root(const trace::Definitions& defs, const std::vector<std::uint32_t>& world,
                               const NonBlockingRecord& r);

// The clock condition of non-blocking collectives, as their patterns define the waiting: a
// member's completion call must not be left before the time it waits for (nonblocking_wait:
// the latest start, the root's start, the latest start ranked up to mine; kNoTime: none).
// `locations` and `starts` per member in communicator rank order; `root`: the root's location.
// An instance of one member has none (kNoTime): it synchronizes nobody.
std::vector<std::uint64_t> nonblocking_references(std::uint32_t op, std::uint32_t root,
                                                  const std::vector<std::uint32_t>& locations,
                                                  const std::vector<std::uint64_t>& starts);

// The instances of the clock checks and the time correction: members (list, record) in
// communicator rank order, the k-th started of every location that has a k-th on the
// communicator (as the patterns' matcher forms them; members it would reject as inconsistent
// are kept: the matcher raises afterwards). `lists` aligned with the records (null: none).
struct NonBlockingInstance {
  std::uint32_t op = 0, root = kNone;
  std::vector<RecordRef> members;
};
std::vector<NonBlockingInstance> nonblocking_instances(const trace::Definitions& defs,
                                                       const std::vector<NonBlockingLocation*>& lists);

// Counts into `v` the completions left before what they wait for plus `latency` (as the
// blocking collectives: v.collective and the completion call's call path and location).
void count_nonblocking_violations(const std::vector<NonBlockingLocation*>& lists,
                                  const std::vector<NonBlockingInstance>& instances,
                                  const std::vector<std::uint32_t>& column, std::uint64_t latency, ClockViolations& v);

// Time of a completion call to move into the collective classes of the metric tree.
struct ClassMove {
  std::uint32_t cnode, column;
  double seconds;
  bool synchronization;  // to mpi_sync_collective (Ibarrier), else to mpi_collective
};

// Adds the patterns of all locations' non-blocking collectives to `sev` (seconds = ticks *
// tick; `column` maps a dense location index to its column) and returns the class moves.
// FormatError when members of a communicator start different numbers of them or different
// operations as one instance.
std::vector<ClassMove> nonblocking_collectives(const trace::Trace& trace, const std::vector<NonBlockingLocation>& records,
                                               const std::vector<std::uint32_t>& column, double tick, Severities& sev);

// Applies the moves to the metric tree of `p` (made by analyze's with_metric_tree).
void move_class_time(profile::LocalProfile& p, const std::vector<ClassMove>& moves);

}  // namespace cubescale::analysis
