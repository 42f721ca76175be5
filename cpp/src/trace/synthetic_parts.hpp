#pragma once
// Internal to cpp/src/trace: what the synthetic trace writers share (synthetic_mpi.cpp,
// synthetic_omp.cpp, synthetic_hybrid.cpp): the archive's opening and closing, the events of
// one MPI call and of one thread's part of a parallel region, the checks of the callers'
// lists, and the definitions of the MPI and OpenMP regions and communicators. Region and
// communicator ids are passed in (a base id per table), so that a writer can define MPI and
// OpenMP regions side by side; each writer keeps its own string table and definition order
// (the MPI and OpenMP writers write the same bytes as before these parts were shared).
#include <otf2/otf2.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "cubescale/trace/synthetic_mpi.hpp"
#include "cubescale/trace/synthetic_omp.hpp"

namespace cubescale::trace::synthetic {

// std::runtime_error naming `what` and OTF2's description unless rc is OTF2_SUCCESS.
void check(OTF2_ErrorCode rc, const char* what);

// Every writer's strings begin with these (the system tree's names refer to them).
inline const std::vector<std::string> kFirstStrings = {"", "machine", "synthetic", "node", "node0"};

// `<directory>/<name>.otf2` opened for writing, its event files open.
OTF2_Archive* open_archive(const std::string& directory, const std::string& name);
// A location's writer closed; returns the events it wrote.
std::uint64_t close_event_writer(OTF2_Archive* archive, OTF2_EvtWriter* w);
// The event files closed, the (empty) local definitions of `locations` written.
void close_event_files(OTF2_Archive* archive, const std::vector<std::uint64_t>& locations);
// The global definition writer, the clock (1 ns ticks, `end` long) and the strings written.
OTF2_GlobalDefWriter* begin_global_definitions(OTF2_Archive* archive, std::uint64_t end,
                                               const std::vector<std::string>& strings);
// The system tree of kFirstStrings: machine "synthetic" (node 0) > node "node0" (node 1).
void write_system_tree(OTF2_GlobalDefWriter* g);
// Location groups 0 .. processes - 1, processes on node 1, named by strings first_name + p.
void write_processes(OTF2_GlobalDefWriter* g, std::uint32_t processes, OTF2_StringRef first_name);
// The program's region as Score-P 7 and later define it (artificial, measurement system).
void write_program_region(OTF2_GlobalDefWriter* g, OTF2_RegionRef id, OTF2_StringRef name, OTF2_StringRef canonical);
// Closes the global definitions and the archive.
void close_archive(OTF2_Archive* archive, OTF2_GlobalDefWriter* g);

namespace mpi {

struct CallKind {
  const char* name;
  OTF2_RegionRole role;
  int collective_op;  // OTF2_CollectiveOp, -1 for point to point, -2 for a call without events
  bool rooted;
};
// The MPI calls (synthetic_mpi.hpp); the region of kCalls[i] is Regions::first_call + i.
extern const CallKind kCalls[30];
inline constexpr std::size_t kCallCount = 30;
// Beside the calls: main left at the call's enter and entered again at its leave; and "main"
// as a rank's first call (PROGRAM_BEGIN, main from enter to leave).
inline constexpr std::size_t kOutsideMain = kCallCount;
inline constexpr std::size_t kMain = kCallCount + 1;

// A call's kind (index into kCalls, or kOutsideMain, kMain); std::invalid_argument if unknown.
std::size_t call_index(const std::string& name);

// Checks one rank's calls (names, peers among `ranks`, times in order inside main, "main" only
// first) and returns their kinds; std::invalid_argument naming the rank otherwise.
std::vector<std::size_t> check_rank(const std::vector<MpiCall>& calls, std::uint32_t rank, std::uint32_t ranks,
                                    std::uint64_t end);
// Whether some call is a collective on MPI_COMM_REVERSED (tag 2).
bool uses_reversed(const std::vector<MpiCall>& calls, const std::vector<std::size_t>& kinds);

// Requests of one rank: MPI_Isend's until an MPI_Wait/Waitall completes them, MPI_Irecv's
// until an MPI_Wait/Waitall receives from that peer (oldest first).
struct Requests {
  std::uint64_t next = 1;
  std::vector<std::uint64_t> isends;
  std::vector<std::pair<std::uint32_t, std::uint64_t>> irecvs;  // (peer, request)
  struct Collective {
    std::uint64_t request;
    OTF2_CollectiveOp op;
    std::uint32_t root;
    std::uint32_t communicator;  // 0 MPI_COMM_WORLD, 2 MPI_COMM_REVERSED (tag 2)
  };
  std::vector<Collective> collectives;  // open non-blocking collectives
  std::uint64_t receive(std::uint32_t peer);
};

struct Regions {
  OTF2_RegionRef main = 0;        // "outside main" leaves and enters it
  OTF2_RegionRef first_call = 1;  // kCalls[i] is first_call + i
};

// The events of one call (not "main"); communicators 0 MPI_COMM_WORLD, 1 MPI_COMM_SELF, 2
// MPI_COMM_REVERSED (write_communicators' ids).
void write_call(OTF2_EvtWriter* w, const MpiCall& c, std::size_t kind, Requests& requests, const Regions& regions);

// The names of kCalls appended to `strings`; returns the first one's index.
OTF2_StringRef append_call_names(std::vector<std::string>& strings);
// The regions of kCalls: ids from `first_call`, names from `first_name` (append_call_names),
// paradigm MPI, source file `file` ("MPI", as Score-P names it and scout finds MPI calls by).
void write_call_regions(OTF2_GlobalDefWriter* g, OTF2_RegionRef first_call, OTF2_StringRef first_name,
                        OTF2_StringRef file);
// Groups 0 (COMM_LOCATIONS of paradigm MPI: `locations`, one per rank), 1 (ranks 0..P-1) and
// 2 (COMM_SELF), communicators 0 MPI_COMM_WORLD and 1 MPI_COMM_SELF; with `reversed` group 3
// (ranks backwards) and communicator 2 MPI_COMM_REVERSED. Returns the groups and communicators
// written (the ids a writer continues from).
std::pair<std::uint32_t, std::uint32_t> write_communicators(OTF2_GlobalDefWriter* g,
                                                             const std::vector<std::uint64_t>& locations,
                                                             OTF2_StringRef world, OTF2_StringRef self,
                                                             OTF2_StringRef reversed_name, bool reversed);

}  // namespace mpi

namespace omp {

// Regions of the OpenMP writers (names and roles as Score-P's OpenMP adapter writes them).
enum class Region {
  Parallel, ImplicitBarrier, Barrier, Critical, Sblock, SetLock, UnsetLock, MutexLock, MutexUnlock, CondWait,
  // defined only where a task call uses them
  Task, UntiedTask, CreateTask, Taskwait, Work
};
inline constexpr std::size_t kRegionCount = 10;  // Parallel .. CondWait
inline constexpr std::size_t kTaskRegionCount = 5;

// Region ids and the team's communicator of one process.
struct Ids {
  OTF2_RegionRef first = 1;       // Parallel .. CondWait
  OTF2_RegionRef first_task = 0;  // Task .. Work
  OTF2_CommRef team = 0;
  OTF2_RegionRef operator()(Region r) const {
    const auto i = static_cast<OTF2_RegionRef>(r);
    return i < kRegionCount ? first + i : first_task + (i - static_cast<OTF2_RegionRef>(kRegionCount));
  }
};

// Checks a process's parallel regions (in time order, teams of 1 to `threads`, calls known and
// in time order, all by `end`); std::invalid_argument otherwise.
void check_regions(const std::vector<OmpParallel>& regions, std::uint32_t threads, std::uint64_t end);
// Whether some thread makes a task call (the task regions are defined then).
bool uses_tasks(const std::vector<OmpParallel>& regions);

// Per (POSIX threads lock, lock, acquire time, region, thread, call) its acquisition order:
// numbered per lock by time from 1, as Score-P's adapters count (scout's lock tracking starts a
// lock at 1).
using Orders =
    std::map<std::tuple<bool, std::uint32_t, std::uint64_t, std::size_t, std::size_t, std::size_t>, std::uint32_t>;
Orders acquisition_orders(const std::vector<OmpParallel>& regions);

// Thread `th`'s events of parallel region `r` (of `regions`, of its process): the master's
// THREAD_FORK, THREAD_TEAM_BEGIN, Enter "!$omp parallel", the calls, Leave, THREAD_TEAM_END,
// the master's THREAD_JOIN. Nothing for a thread outside the team. On the master,
// `master_until(t)`, where given, is called before each of its calls (t: the call's enter) and
// before its Leave (t: its team end), to write other events (a hybrid rank's MPI calls) there.
void write_team(OTF2_EvtWriter* w, const std::vector<OmpParallel>& regions, std::size_t r, std::size_t th,
                const Orders& orders, const Ids& ids,
                const std::function<void(std::uint64_t)>& master_until = nullptr);
// The master's first and last event time of a region (fork or its team begin, join or its team end).
std::uint64_t master_first(const OmpParallel& r);
std::uint64_t master_last(const OmpParallel& r);
// Whether [enter, leave] lies inside the master's team of region `r` without overlapping any of
// the master's calls there (where a hybrid rank's MPI call can be written in the region).
bool fits_master_gap(const OmpParallel& r, std::uint64_t enter, std::uint64_t leave);

// The names of the regions (Parallel .. CondWait; with `tasks` Task .. Work after them)
// appended to `strings`; returns the first one's index.
OTF2_StringRef append_region_names(std::vector<std::string>& strings);
OTF2_StringRef append_task_region_names(std::vector<std::string>& strings);
// Their region definitions (POSIX threads wrappers with the source file `pthread_file`, the
// others without one).
void write_regions(OTF2_GlobalDefWriter* g, OTF2_RegionRef first, OTF2_StringRef first_name,
                   OTF2_StringRef pthread_file);
void write_task_regions(OTF2_GlobalDefWriter* g, OTF2_RegionRef first, OTF2_StringRef first_name);

}  // namespace omp

}  // namespace cubescale::trace::synthetic
