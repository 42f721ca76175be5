#pragma once
// Synthetic OpenMP traces with stated timings, written with OTF2's writer, for exact thread
// wait-state tests: one process whose threads run parallel regions (fork/join), and inside
// them barriers, critical sections and lock API calls at times the caller chooses. One tick is
// one nanosecond.
//
// Events as Score-P writes them: the master thread: THREAD_FORK, then every thread Enter
// "!$omp parallel", THREAD_TEAM_BEGIN ... THREAD_TEAM_END, Leave; the master THREAD_JOIN.
// Inside a team:
//   "ibarrier"  Enter/Leave "!$omp implicit barrier" (role implicit_barrier)
//   "barrier"   Enter/Leave "!$omp barrier" (role barrier)
//   "critical"  Enter "!$omp critical" at enter, THREAD_ACQUIRE_LOCK at `acquire`, Enter/Leave
//               "!$omp critical sblock" from acquire to leave, THREAD_RELEASE_LOCK at leave, Leave
//   "lock"      Enter "omp_set_lock" at enter, THREAD_ACQUIRE_LOCK at `acquire`, Leave at acquire;
//               Enter "omp_unset_lock", THREAD_RELEASE_LOCK, Leave at leave
//   "mutex"     the same with a POSIX threads mutex: "pthread_mutex_lock", "pthread_mutex_unlock"
//               (paradigm pthread, file PTHREAD, as Score-P's wrappers), locks of paradigm PTHREAD
//   "condwait"  as "mutex", the acquisition in "pthread_cond_wait" (a woken waiter taking its mutex
//               back; the release at the wait's start is not written)
// Lock acquisition orders are numbered per lock (and paradigm) by acquire time, as the runtime would.
// Explicit tasks, as Score-P's OPARI2 adapter writes them, each at `enter` (task: `creator`,
// `generation`; generation 0 with creator = the thread is the thread's implicit task):
//   "task_create"  Enter "!$omp create task" at enter, THREAD_TASK_CREATE, Leave at leave
//   "task_begin"   THREAD_TASK_SWITCH to a new task, Enter "!$omp task" (or "!$omp task untied"
//                  with `untied`)
//   "task_end"     Leave "!$omp task" (untied), THREAD_TASK_COMPLETE
//   "task_switch"  THREAD_TASK_SWITCH (a task resumed, or back to the implicit task)
//   "enter"/"leave" of "!$omp taskwait" (`region` "taskwait"), "!$omp implicit barrier"
//                  ("ibarrier") or "work" ("work"): one event each, for tasks that run inside them
// The task regions are defined only when a call uses them.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace cubescale::trace {

struct OmpCall {
  std::string name;                   // "ibarrier", "barrier", "critical", "lock", "mutex", "condwait"
  std::uint64_t enter = 0, leave = 0;  // ticks (ns)
  std::uint64_t acquire = 0;          // locks: when the lock was acquired (enter <= acquire <= leave)
  std::uint32_t lock = 0;             // locks: the lock's id
  std::uint32_t creator = 0, generation = 0;  // tasks
  bool untied = false;                        // task_begin, task_end
  std::string region;                         // enter, leave: "taskwait", "ibarrier", "work"
};

struct OmpParallel {
  std::uint64_t fork = 0, join = 0;
  std::vector<std::vector<OmpCall>> threads;  // per thread of the team (thread 0 is the master), in time order
  // Per thread its THREAD_TEAM_BEGIN / THREAD_TEAM_END time (empty: fork / join for all), so
  // that a test can record a worker before the fork or after the join (clock violations).
  std::vector<std::uint64_t> begins, ends;
};

// Main's visit where the master records its program as Score-P 7 and later do: PROGRAM_BEGIN
// at 0, main from `enter` to `leave` (the parallel regions inside), PROGRAM_END at the end, and
// the program's region (artificial, measurement system, named after the trace).
struct OmpMain {
  std::uint64_t enter = 0, leave = 0;
};

// Writes `<directory>/<name>.otf2`: one process with `threads` threads, main on the master from
// 0 to `end` (or as `main` states, inside the program), the parallel regions in order. Returns
// the events written. std::invalid_argument for unknown calls, times out of order or teams
// larger than `threads`.
std::uint64_t write_omp_trace(const std::string& directory, const std::string& name,
                              const std::vector<OmpParallel>& regions, std::uint32_t threads, std::uint64_t end,
                              const std::optional<OmpMain>& main = std::nullopt);

}  // namespace cubescale::trace
