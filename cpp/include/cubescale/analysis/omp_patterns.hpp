#pragma once
// OpenMP wait states (Scalasca's OMP.pattern and Thread.pattern), per thread over records:
//   omp_ibarrier_wait / omp_ebarrier_wait  a thread at an implicit / explicit barrier waiting
//        for the team's last thread: min(latest enter of the team, my leave) - my enter
//        (the k-th barrier of each thread in one instance of a team is one barrier);
//   omp_lock_contention_critical / _api    a thread waiting to acquire a lock another thread
//        holds: max(0, release time of the lock's previous acquisition - enter of the region
//        around my acquisition) (`!$omp critical` / `omp_set_lock` ...), the lock's
//        acquisitions ordered by their acquisition order, per process;
//   omp_management / omp_fork   a thread's time between its team's fork (on the master) and
//        entering the parallel region, and between leaving it and the master's join (scout's
//        OMP_MANAGEMENT: max(0, enter - fork) + max(0, join - leave)); omp_fork only the first
//        part; on the parallel region's call path, for traces with fork and join events.
// Each on the call path of the barrier or of the region around the acquisition, on the waiting
// thread. Extraction keeps per barrier and per lock acquisition one small record; matching
// needs of other threads only the records of their process.
// The report gets Scalasca's tree below `execution` (created as all of `time`, if the wait-state
// tree did not): omp_time > omp_synchronization > omp_barrier > omp_ebarrier > omp_ebarrier_wait,
// omp_ibarrier > omp_ibarrier_wait; omp_critical > omp_lock_contention_critical; omp_lock_api >
// omp_lock_contention_api, omp_management > omp_fork (first below omp_time), for the patterns
// whose operations occur. Non-pattern metrics are the
// exclusive time of the OpenMP regions of their class (scalasca.spec classifies by name).
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "cubescale/analysis/instance_stats.hpp"
#include "cubescale/profile/local_profile.hpp"
#include "cubescale/trace/profile.hpp"
#include "cubescale/trace/reader.hpp"

namespace cubescale::analysis {

// OpenMP's patterns, and the POSIX threads lock contention scout finds with the same lock
// tracking (pthread_mutex_lock/_trylock, pthread_cond_wait/_timedwait).
enum class OmpPattern : std::uint8_t {
  EbarrierWait, IbarrierWait, LockContentionCritical, LockContentionApi, Management, Fork,
  PthreadMutexContention, PthreadConditionContention, Count
};
const char* omp_pattern_name(OmpPattern p);
// By name, as the observer classifies regions (scalasca.spec's CubePL, Score-P's names): an
// explicit or implicit barrier; a parallel region (`!$omp parallel @file:line`).
bool omp_barrier_region(const std::string& name);
bool omp_parallel_region(const std::string& name);

struct BarrierRecord {
  std::uint64_t enter = 0, leave = 0;
  std::uint32_t location = 0, process = 0, cnode = 0, team = 0;
  std::uint32_t instance = 0;  // the thread's n-th begin of this team
  std::uint32_t index = 0;     // the k-th barrier inside that team instance
  bool explicit_barrier = false;
  // The runs of explicit tasks on this thread while it was in the barrier (OmpObserver::
  // task_runs, from first_run): they are work, not waiting (scout's task correction).
  std::uint32_t first_run = 0, runs = 0;
};
// When an explicit OpenMP task ran on a thread (from a switch away from its implicit task to
// the switch or completion back), in ticks.
struct TaskRun {
  std::uint64_t begin = 0, end = 0;
};
// Where a lock was acquired (the region around the acquisition, as scout's getLockType): an
// OpenMP critical section or lock API call, a POSIX threads mutex lock or condition wait.
enum class LockKind : std::uint8_t { Critical, Api, PthreadMutex, PthreadCondition };
struct LockRecord {
  std::uint64_t enter = 0;    // of the region around the acquisition
  std::uint64_t acquire = 0, release = 0;
  std::uint32_t location = 0, process = 0, cnode = 0, lock = 0, order = 0;
  LockKind kind = LockKind::Critical;
  bool pthread = false;  // a POSIX threads lock (ids are per paradigm), else OpenMP's
};

// One visit of an OpenMP parallel region (`!$omp parallel @...`) by one thread of its team:
// what omp_management needs beside the team's fork and join.
struct ParallelRecord {
  std::uint64_t enter = 0, leave = 0;
  std::uint32_t team = ~0u;  // the team instance: its fork's and team begins' sync group (~0u: none)
  std::uint32_t cnode = 0;
};

// OpenMP's synchronization for the clock checks (clc's third kind, src/clc/Synchronizer.cpp):
// a team's THREAD_TEAM_BEGIN on every thread follows the master's THREAD_FORK; the master's
// THREAD_JOIN follows every thread's THREAD_TEAM_END; a barrier inside a team is left after its
// last member entered. Producers (fork, team end, barrier enter) and consumers (team begin,
// join, barrier leave) of one group: a consumer must not come before the latest producer of its
// group (plus the latency). Groups are per process: its threads are on one rank.
enum class OmpSyncRole : std::uint8_t { Fork, TeamBegin, TeamEnd, Join, BarrierEnter, BarrierLeave };
// 24 bytes: the replay holds one per synchronization event (the position in 48 bits, as the
// message records keep theirs; a barrier's record is found by sync_barriers).
struct OmpSync {
  std::uint64_t time = 0;
  std::uint64_t position : 48 = 0;
  OmpSyncRole role : 8 = OmpSyncRole::Fork;
  std::uint32_t group = 0, cnode = 0;
  bool producer() const {
    return role == OmpSyncRole::Fork || role == OmpSyncRole::TeamEnd || role == OmpSyncRole::BarrierEnter;
  }
};
static_assert(sizeof(OmpSync) == 24);
// A worker thread's time per call path from the enter of its last barrier in a visit of a
// parallel region to leaving it (the whole visit without a barrier), summed over its visits
// (one entry per location and call path): scout's local time profile
// drops it (its time map of a worker is cleared at the next fork and at the end), which its
// performance-impact metrics read (impact.hpp, omp_local_time in critical_path.hpp).
struct OmpTail {
  std::uint32_t location = 0, cnode = 0;
  std::uint64_t ticks = 0;
};

struct OmpSyncLocation {
  std::uint32_t location = 0;
  std::vector<OmpSync> syncs;  // in recorded order
  std::vector<std::uint32_t> barriers, locks;  // its records' indices in OmpObserver::barriers() / locks()
  std::vector<ParallelRecord> parallels;       // in recorded order
};
// Per sync of `l`, the index of its barrier's record in OmpObserver::barriers() (~0u for the
// syncs of no barrier): a location's k-th BarrierEnter and k-th BarrierLeave are its k-th
// barrier's (the observer adds both with the record).
std::vector<std::uint32_t> sync_barriers(const OmpSyncLocation& l);

class OmpObserver final : public trace::CallPathObserver {
 public:
  explicit OmpObserver(const trace::Trace& trace);
  OmpObserver(const OmpObserver&) = delete;  // keeps a pointer into its own groups_
  OmpObserver& operator=(const OmpObserver&) = delete;
  void begin_location(std::uint32_t location) override;
  void event(const trace::Event& e, std::uint32_t cnode) override;
  void rows(const std::vector<std::uint32_t>& rows) override;
  // Takes over a later part's records; its sync groups become ours by (process, team, instance,
  // slot), numbered as one observer reading both parts in order would have.
  void absorb(trace::CallPathObserver& later) override;
  // None without OpenMP barriers, critical sections or lock calls.
  trace::EventTypeSet interest() const override { return any_ ? trace::EventTypeSet().set() : trace::EventTypeSet(); }
  const std::vector<BarrierRecord>& barriers() const { return barriers_; }
  const std::vector<LockRecord>& locks() const { return locks_; }
  const std::vector<TaskRun>& task_runs() const { return task_runs_; }
  // The time correction moves them.
  std::vector<BarrierRecord>& barriers() { return barriers_; }
  std::vector<LockRecord>& locks() { return locks_; }
  std::vector<OmpSyncLocation>& syncs() { return syncs_; }
  const std::vector<OmpSyncLocation>& syncs() const { return syncs_; }
  const std::vector<OmpTail>& tails() const { return tails_; }
  std::uint32_t sync_groups() const { return group_count_; }
  // Per sync group of a team instance's fork and begins, the group of its ends and join
  // (~0u where there is none, and for the other groups).
  std::vector<std::uint32_t> end_groups() const;
  // Per sync group, the group of its team instance's fork and begins (~0u where none of its
  // threads began it).
  std::vector<std::uint32_t> team_groups() const;
  // What it holds for the clock checks and patterns, and how many synchronization events that
  // is (fork, team begin and end, join, barrier enter and leave, lock acquisition): the
  // replay's memory per communication event counts both (docs/analysis.md, "Memory per rank").
  std::uint64_t bytes() const;
  std::uint64_t sync_events() const;

 private:
  enum class Kind : std::uint8_t { Other, Ibarrier, Ebarrier, Critical, LockApi, Parallel, PthreadMutex, PthreadCondition };
  // The lock an acquisition inside a region of this kind is (none: no lock region).
  static std::optional<LockKind> lock_region(Kind kind);
  struct Frame {
    std::uint64_t enter, position;
    std::uint32_t region, cnode;
    bool parallel;  // a visit of a parallel region with its ParallelRecord
    std::uint32_t runs = 0;  // task_runs_ at the enter
  };
  void enter_parallel(std::uint64_t time, std::uint32_t cnode);
  void begin_team(std::uint32_t group);
  void add_sync(std::uint64_t time, std::uint64_t position, std::uint32_t cnode, std::uint32_t team,
                std::uint32_t instance, std::uint32_t slot, OmpSyncRole role);
  struct Team {
    std::uint32_t team, instance, barriers;
    bool master;  // began after this location's fork
  };
  void tail_time(std::uint64_t time);
  void add_tail(std::uint32_t cnode, std::uint64_t ticks);
  const trace::Definitions& defs_;
  std::vector<Kind> kind_;  // per region
  std::vector<BarrierRecord> barriers_;
  std::vector<LockRecord> locks_;
  std::vector<Frame> stack_;
  std::vector<TaskRun> task_runs_;
  std::uint64_t current_task_ = 0, run_begin_ = 0;  // the location's running task (events.hpp task_key)
  std::vector<Team> teams_;
  std::unordered_map<std::uint32_t, std::uint32_t> instances_;  // team -> begins on this location
  // (POSIX threads flag << 63 | lock << 32 | order) -> record
  std::unordered_map<std::uint64_t, std::size_t> held_;
  // This location's visits of parallel regions not left, innermost last: the record, whether
  // the thread is a worker of the visit's team, and the enclosing visit's tail (a nested visit
  // keeps its own).
  struct OpenVisit {
    std::size_t record;
    bool worker;
    std::vector<std::pair<std::uint32_t, std::uint64_t>> outer_tail;
  };
  std::vector<OpenVisit> open_visits_;
  std::uint32_t unvisited_team_ = ~0u;                           // a team begun, its parallel region not entered yet
  std::size_t teamless_ = ~std::size_t(0);                       // a parallel record entered before its team begin
  std::size_t teamless_depth_ = 0;                               // ... and its frame's depth
  std::vector<OmpTail> tails_;
  std::vector<std::pair<std::uint32_t, std::uint64_t>> tail_;   // the open worker visit's time since its last barrier enter
  std::uint64_t tail_last_ = 0;
  std::vector<OmpSyncLocation> syncs_;
  // Sync groups, numbered in the order first met: per team instance (process, team, instance)
  // the group of each slot (0: the fork and the begins, 1: the ends and the join, 2 + k: its
  // k-th barrier). A thread's syncs of one instance come one after another: the last instance
  // found is kept (no tree search per sync event).
  using TeamInstance = std::tuple<std::uint32_t, std::uint32_t, std::uint32_t>;
  struct TeamInstanceHash {
    std::size_t operator()(const TeamInstance& k) const {
      const auto& [p, t, i] = k;
      return std::hash<std::uint64_t>()((std::uint64_t(p) << 40) ^ (std::uint64_t(t) << 20) ^ i);
    }
  };
  std::unordered_map<TeamInstance, std::vector<std::uint32_t>, TeamInstanceHash> groups_;
  std::uint32_t group_count_ = 0;
  // The groups' slot lists' bytes, kept as they grow: bytes() is read once per round of the
  // time correction over MPI ranks, and a hybrid trace has a group per barrier instance.
  std::uint64_t slot_bytes_ = 0;
  TeamInstance last_instance_{};
  std::vector<std::uint32_t>* last_slots_ = nullptr;  // groups_[last_instance_] (its nodes stay put)
  std::uint32_t group(std::uint32_t process, std::uint32_t team, std::uint32_t instance, std::uint32_t slot);
  struct Pending {
    std::uint64_t time = 0, position = 0;
    std::uint32_t cnode = 0;
    bool valid = false;
  };
  Pending fork_;                                                 // a fork waiting for its team's begin
  std::uint32_t ended_team_ = 0, ended_instance_ = 0;
  bool ended_ = false;                                           // a team end waiting for its join
  std::size_t unplaced_ = ~std::size_t(0);                       // a team begin outside every region
  std::uint32_t location_ = 0, process_ = 0;
  bool any_ = false;  // the trace has OpenMP barriers, critical sections or lock calls
};

// visit(sync, barrier) for every BarrierEnter sync of `omp` with the index of its barrier's
// record in omp.barriers() (sync_barriers): the record holds the barrier's times, the sync its
// group (one per barrier of a team instance).
template <typename Visit>
void for_each_barrier_enter(const OmpObserver& omp, Visit&& visit) {
  for (const auto& l : omp.syncs()) {
    const auto barrier_of = sync_barriers(l);
    for (std::size_t i = 0; i < l.syncs.size(); ++i)
      if (l.syncs[i].role == OmpSyncRole::BarrierEnter && barrier_of[i] < omp.barriers().size())
        visit(l.syncs[i], barrier_of[i]);
  }
}

// A barrier's wait until `until` (the last member's enter, or its leave where earlier) less the
// explicit tasks its thread ran meanwhile (scout's task correction: their time is work).
std::uint64_t barrier_wait(const OmpObserver& omp, const BarrierRecord& b, std::uint64_t until);

// Per sync group of a team instance's fork and begins: the fork's time and location (the
// master; kNoFork and trace::kNone without a fork event) and, with `joins`, the join's time
// (kNoFork without one; end_groups walks every group: only where needed).
struct OmpTeams {
  static constexpr std::uint64_t kNoFork = ~std::uint64_t(0);
  std::vector<std::uint64_t> fork, join;
  std::vector<std::uint32_t> master;
  OmpTeams(const OmpObserver& omp, bool joins);
};

struct OmpSeverities {
  std::vector<std::vector<double>> values;  // [pattern][cnode * columns + column], seconds
  std::vector<bool> present;
  // Per OmpPattern its instances (trace.stat, as scout's Statistics.pattern keeps them: the
  // barrier waits and the lock contentions, not omp_management and omp_fork), with the
  // barrier's enter and leave, the lock acquisition's enter and acquire.
  std::vector<PatternStatistics> statistics;
};
OmpSeverities match_omp(const OmpObserver& omp, const std::vector<std::uint32_t>& locations, std::size_t cnodes,
                        std::uint64_t resolution);

// Inserts the OpenMP tree below `execution` (see above).
void add_omp_tree(profile::LocalProfile& p, const OmpSeverities& sev);

// Scalasca's idle threads, as `scalasca -examine` adds them (CubeLib's cube_remap2 -s, which
// Scalasca 2.6's square runs): where the report has OpenMP and no POSIX threads, walking the
// call tree in preorder, on call paths outside OpenMP parallel regions each worker thread
// (every CPU thread of a process but its first, the master) idles for the master's exclusive
// time there; at a parallel region (its outermost call path) a worker idles for what its time
// in the region's subtree falls short of the master's (omp_limited_parallelism, from 1e-10 s
// on). Adds omp_idle_threads > omp_limited_parallelism below `time` and their values to
// `time` (so `execution` = time - idle threads, as 2.6 defines it). `locations`: the dense
// location of every column. Last: the critical path, the impact and root causes use the time
// before.
void add_idle_threads(profile::LocalProfile& p, const trace::Definitions& defs, const std::vector<std::uint32_t>& locations);

}  // namespace cubescale::analysis
