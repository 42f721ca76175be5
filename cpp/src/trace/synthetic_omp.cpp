#include "cubescale/trace/synthetic_omp.hpp"

#include <otf2/otf2.h>

#include <algorithm>
#include <map>
#include <stdexcept>

namespace cubescale::trace {

namespace {

OTF2_FlushType pre_flush(void*, OTF2_FileType, OTF2_LocationRef, void*, bool) { return OTF2_FLUSH; }
OTF2_TimeStamp post_flush(void*, OTF2_FileType, OTF2_LocationRef) { return 0; }

void check(OTF2_ErrorCode rc, const char* what) {
  if (rc != OTF2_SUCCESS)
    throw std::runtime_error(std::string("writing a synthetic OpenMP trace: ") + what + ": " +
                             OTF2_Error_GetDescription(rc));
}

// Regions: 0 main, then these (names and roles as Score-P's OpenMP adapter writes them).
struct RegionDef {
  const char* name;
  OTF2_RegionRole role;
  OTF2_Paradigm paradigm;
  bool pthread_file = false;  // source file "PTHREAD", as Score-P's POSIX threads wrappers name it
};
const RegionDef kRegions[] = {
    {"main", OTF2_REGION_ROLE_FUNCTION, OTF2_PARADIGM_USER},
    {"!$omp parallel @synthetic.c:1", OTF2_REGION_ROLE_PARALLEL, OTF2_PARADIGM_OPENMP},
    {"!$omp implicit barrier @synthetic.c:2", OTF2_REGION_ROLE_IMPLICIT_BARRIER, OTF2_PARADIGM_OPENMP},
    {"!$omp barrier @synthetic.c:3", OTF2_REGION_ROLE_BARRIER, OTF2_PARADIGM_OPENMP},
    {"!$omp critical @synthetic.c:4", OTF2_REGION_ROLE_CRITICAL, OTF2_PARADIGM_OPENMP},
    {"!$omp critical sblock @synthetic.c:4", OTF2_REGION_ROLE_CRITICAL_SBLOCK, OTF2_PARADIGM_OPENMP},
    {"omp_set_lock", OTF2_REGION_ROLE_WRAPPER, OTF2_PARADIGM_OPENMP},
    {"omp_unset_lock", OTF2_REGION_ROLE_WRAPPER, OTF2_PARADIGM_OPENMP},
    {"pthread_mutex_lock", OTF2_REGION_ROLE_WRAPPER, OTF2_PARADIGM_PTHREAD, true},
    {"pthread_mutex_unlock", OTF2_REGION_ROLE_WRAPPER, OTF2_PARADIGM_PTHREAD, true},
    {"pthread_cond_wait", OTF2_REGION_ROLE_WRAPPER, OTF2_PARADIGM_PTHREAD, true},
};
enum : OTF2_RegionRef {
  kMain, kParallel, kImplicitBarrier, kBarrier, kCritical, kSblock, kSetLock, kUnsetLock, kMutexLock, kMutexUnlock,
  kCondWait
};
// Defined only when a task call uses them, after the program's region (so that traces without
// tasks keep their definitions).
const RegionDef kTaskRegions[] = {
    {"!$omp task @synthetic.c:5", OTF2_REGION_ROLE_TASK, OTF2_PARADIGM_OPENMP},
    {"!$omp task untied @synthetic.c:6", OTF2_REGION_ROLE_TASK_UNTIED, OTF2_PARADIGM_OPENMP},
    {"!$omp create task @synthetic.c:5", OTF2_REGION_ROLE_TASK_CREATE, OTF2_PARADIGM_OPENMP},
    {"!$omp taskwait @synthetic.c:7", OTF2_REGION_ROLE_TASK_WAIT, OTF2_PARADIGM_OPENMP},
    {"work", OTF2_REGION_ROLE_FUNCTION, OTF2_PARADIGM_USER},
};
constexpr OTF2_RegionRef kFirstTaskRegion = std::size(kRegions) + 1;
enum : OTF2_RegionRef {
  kTask = kFirstTaskRegion, kUntiedTask, kCreateTask, kTaskwait, kWork
};
bool task_call(const std::string& call) {
  return call == "task_create" || call == "task_begin" || call == "task_end" || call == "task_switch" ||
         call == "enter" || call == "leave";
}
OTF2_RegionRef named_region(const std::string& region) {
  if (region == "taskwait") return kTaskwait;
  if (region == "ibarrier") return kImplicitBarrier;
  if (region == "work") return kWork;
  throw std::invalid_argument("no region \"" + region + "\" for enter/leave in a synthetic OpenMP trace");
}
// Calls that acquire a lock, and those whose lock is a POSIX threads one (lock ids are per paradigm).
bool locks(const std::string& call) { return call == "critical" || call == "lock" || call == "mutex" || call == "condwait"; }
bool pthread_lock(const std::string& call) { return call == "mutex" || call == "condwait"; }
constexpr OTF2_CommRef kTeam = 0;
// PROGRAM_BEGIN's path, "/synthetic/<name>", after the program region's name <name> (strings 7, 8).
constexpr OTF2_StringRef kProgramPath = 8;

std::uint64_t team_begin(const OmpParallel& r, std::size_t th) { return r.begins.empty() ? r.fork : r.begins[th]; }
std::uint64_t team_end(const OmpParallel& r, std::size_t th) { return r.ends.empty() ? r.join : r.ends[th]; }

void validate(const std::vector<OmpParallel>& regions, std::uint32_t threads, std::uint64_t end) {
  std::uint64_t t = 0;
  for (const auto& r : regions) {
    if (r.fork < t || r.join < r.fork || r.join > end) throw std::invalid_argument("parallel regions out of time order");
    if (r.threads.empty() || r.threads.size() > threads)
      throw std::invalid_argument("a team needs 1 to " + std::to_string(threads) + " threads");
    if ((!r.begins.empty() && r.begins.size() != r.threads.size()) || (!r.ends.empty() && r.ends.size() != r.threads.size()))
      throw std::invalid_argument("begin and end need one time per thread of the team");
    for (std::size_t th = 0; th < r.threads.size(); ++th) {
      const auto& calls = r.threads[th];
      std::uint64_t at = team_begin(r, th);
      if (team_end(r, th) < at || team_end(r, th) > end) throw std::invalid_argument("a thread's team end before its begin");
      for (const auto& c : calls) {
        if (c.name == "enter" || c.name == "leave") (void)named_region(c.region);
        if (c.name != "ibarrier" && c.name != "barrier" && !locks(c.name) && !task_call(c.name))
          throw std::invalid_argument("unknown OpenMP call \"" + c.name + "\" for a synthetic trace");
        // One-event calls happen at their enter.
        const auto leave = task_call(c.name) && c.name != "task_create" ? c.enter : c.leave;
        if (c.enter < at || leave < c.enter || leave > team_end(r, th) ||
            (locks(c.name) && (c.acquire < c.enter || c.acquire > leave)))
          throw std::invalid_argument(c.name + " [" + std::to_string(c.enter) + ", " + std::to_string(leave) +
                                      "] is out of time order");
        at = leave;
      }
    }
    t = r.join;
  }
}

// Per (POSIX threads lock, lock, acquire time, thread, call) its acquisition order: numbered per
// lock by time from 1, as Score-P's adapters count (scout's lock tracking starts a lock at 1).
using Orders =
    std::map<std::tuple<bool, std::uint32_t, std::uint64_t, std::size_t, std::size_t, std::size_t>, std::uint32_t>;
Orders acquisition_orders(const std::vector<OmpParallel>& regions) {
  Orders orders;
  for (std::size_t r = 0; r < regions.size(); ++r)
    for (std::size_t th = 0; th < regions[r].threads.size(); ++th)
      for (std::size_t i = 0; i < regions[r].threads[th].size(); ++i) {
        const auto& c = regions[r].threads[th][i];
        if (locks(c.name)) orders[{pthread_lock(c.name), c.lock, c.acquire, r, th, i}] = 0;
      }
  std::map<std::pair<bool, std::uint32_t>, std::uint32_t> next;
  for (auto& [key, order] : orders) order = ++next[{std::get<0>(key), std::get<1>(key)}];
  return orders;
}

void write_call(OTF2_EvtWriter* w, const OmpCall& c, std::uint32_t order) {
  auto enter = [&](OTF2_RegionRef region, std::uint64_t t) { check(OTF2_EvtWriter_Enter(w, nullptr, t, region), "enter"); };
  auto leave = [&](OTF2_RegionRef region, std::uint64_t t) { check(OTF2_EvtWriter_Leave(w, nullptr, t, region), "leave"); };
  const auto paradigm = pthread_lock(c.name) ? OTF2_PARADIGM_PTHREAD : OTF2_PARADIGM_OPENMP;
  auto acquire = [&](std::uint64_t t) {
    check(OTF2_EvtWriter_ThreadAcquireLock(w, nullptr, t, paradigm, c.lock, order), "acquire");
  };
  auto release = [&](std::uint64_t t) {
    check(OTF2_EvtWriter_ThreadReleaseLock(w, nullptr, t, paradigm, c.lock, order), "release");
  };
  auto task = [&](auto write, const char* what) {
    check(write(w, nullptr, c.enter, kTeam, c.creator, c.generation), what);
  };
  const auto task_region = c.untied ? kUntiedTask : kTask;
  if (c.name == "task_create") {
    enter(kCreateTask, c.enter);
    task(OTF2_EvtWriter_ThreadTaskCreate, "task create");
    leave(kCreateTask, c.leave);
  } else if (c.name == "task_begin") {
    task(OTF2_EvtWriter_ThreadTaskSwitch, "task switch");
    enter(task_region, c.enter);
  } else if (c.name == "task_end") {
    leave(task_region, c.enter);
    task(OTF2_EvtWriter_ThreadTaskComplete, "task complete");
  } else if (c.name == "task_switch") {
    task(OTF2_EvtWriter_ThreadTaskSwitch, "task switch");
  } else if (c.name == "enter") {
    enter(named_region(c.region), c.enter);
  } else if (c.name == "leave") {
    leave(named_region(c.region), c.enter);
  } else if (c.name == "ibarrier" || c.name == "barrier") {
    const auto region = c.name == "ibarrier" ? kImplicitBarrier : kBarrier;
    enter(region, c.enter);
    leave(region, c.leave);
  } else if (c.name == "critical") {
    enter(kCritical, c.enter);
    acquire(c.acquire);
    enter(kSblock, c.acquire);
    leave(kSblock, c.leave);
    release(c.leave);
    leave(kCritical, c.leave);
  } else {
    const bool api = c.name == "lock";
    const auto take = api ? kSetLock : c.name == "mutex" ? kMutexLock : kCondWait;
    enter(take, c.enter);
    acquire(c.acquire);
    leave(take, c.acquire);
    enter(api ? kUnsetLock : kMutexUnlock, c.leave);
    release(c.leave);
    leave(api ? kUnsetLock : kMutexUnlock, c.leave);
  }
}

}  // namespace

std::uint64_t write_omp_trace(const std::string& directory, const std::string& name,
                              const std::vector<OmpParallel>& regions, std::uint32_t threads, std::uint64_t end,
                              const std::optional<OmpMain>& main) {
  if (threads == 0) throw std::invalid_argument("a synthetic OpenMP trace needs at least one thread");
  validate(regions, threads, end);  // before the archive exists: no half-written trace
  if (main && (main->leave < main->enter || main->leave > end ||
               (!regions.empty() && (regions.front().fork < main->enter || regions.back().join > main->leave))))
    throw std::invalid_argument("main [" + std::to_string(main->enter) + ", " + std::to_string(main->leave) +
                                "] must hold the parallel regions and end by the trace's end");
  const auto program_region = static_cast<OTF2_RegionRef>(std::size(kRegions));
  const auto orders = acquisition_orders(regions);
  bool tasks = false;
  for (const auto& r : regions)
    for (const auto& calls : r.threads)
      for (const auto& c : calls) tasks = tasks || task_call(c.name);
  auto* archive = OTF2_Archive_Open(directory.c_str(), name.c_str(), OTF2_FILEMODE_WRITE, 1024 * 1024, 4 * 1024 * 1024,
                                    OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE);
  if (!archive) throw std::runtime_error("cannot create the archive " + directory + "/" + name);
  OTF2_FlushCallbacks flush{pre_flush, post_flush};
  check(OTF2_Archive_SetFlushCallbacks(archive, &flush, nullptr), "flush callbacks");
  check(OTF2_Archive_SetSerialCollectiveCallbacks(archive), "collective callbacks");
  check(OTF2_Archive_OpenEvtFiles(archive), "event files");
  std::vector<std::uint64_t> events(threads, 0);
  for (std::uint32_t th = 0; th < threads; ++th) {
    auto* w = OTF2_Archive_GetEvtWriter(archive, th);
    if (!w) throw std::runtime_error("no event writer");
    if (th == 0 && main)
      check(OTF2_EvtWriter_ProgramBegin(w, nullptr, 0, kProgramPath, 0, nullptr), "program begin");
    if (th == 0) check(OTF2_EvtWriter_Enter(w, nullptr, main ? main->enter : 0, kMain), "enter main");
    for (std::size_t r = 0; r < regions.size(); ++r) {
      const auto& region = regions[r];
      if (th >= region.threads.size()) continue;
      if (th == 0)
        check(OTF2_EvtWriter_ThreadFork(w, nullptr, region.fork, OTF2_PARADIGM_OPENMP,
                                        static_cast<std::uint32_t>(region.threads.size())),
              "fork");
      check(OTF2_EvtWriter_ThreadTeamBegin(w, nullptr, team_begin(region, th), kTeam), "team begin");
      check(OTF2_EvtWriter_Enter(w, nullptr, team_begin(region, th), kParallel), "enter parallel");
      for (std::size_t i = 0; i < region.threads[th].size(); ++i) {
        const auto& c = region.threads[th][i];
        const auto it = orders.find({pthread_lock(c.name), c.lock, c.acquire, r, th, i});
        write_call(w, c, it == orders.end() ? 0 : it->second);
      }
      check(OTF2_EvtWriter_Leave(w, nullptr, team_end(region, th), kParallel), "leave parallel");
      check(OTF2_EvtWriter_ThreadTeamEnd(w, nullptr, team_end(region, th), kTeam), "team end");
      if (th == 0) check(OTF2_EvtWriter_ThreadJoin(w, nullptr, region.join, OTF2_PARADIGM_OPENMP), "join");
    }
    if (th == 0) check(OTF2_EvtWriter_Leave(w, nullptr, main ? main->leave : end, kMain), "leave main");
    if (th == 0 && main) check(OTF2_EvtWriter_ProgramEnd(w, nullptr, end, 0), "program end");
    check(OTF2_EvtWriter_GetNumberOfEvents(w, &events[th]), "event count");
    check(OTF2_Archive_CloseEvtWriter(archive, w), "close event writer");
  }
  check(OTF2_Archive_CloseEvtFiles(archive), "close event files");
  check(OTF2_Archive_OpenDefFiles(archive), "definition files");
  for (std::uint32_t th = 0; th < threads; ++th)
    check(OTF2_Archive_CloseDefWriter(archive, OTF2_Archive_GetDefWriter(archive, th)), "local definitions");
  check(OTF2_Archive_CloseDefFiles(archive), "close definition files");
  auto* g = OTF2_Archive_GetGlobalDefWriter(archive);
  if (!g) throw std::runtime_error("no global definition writer");
  check(OTF2_GlobalDefWriter_WriteClockProperties(g, 1000000000, 0, end, OTF2_UNDEFINED_TIMESTAMP), "clock");
  // Strings 7 and 8 (kProgramPath): the program region's name and PROGRAM_BEGIN's path; 9 the
  // POSIX threads wrappers' source file.
  std::vector<std::string> strings = {"", "machine", "synthetic", "node", "node0", "Process", "OpenMP team", name,
                                      "/synthetic/" + name, "PTHREAD"};
  constexpr OTF2_StringRef kPthreadFile = 9;
  const auto first_region = static_cast<std::uint32_t>(strings.size());
  for (const auto& r : kRegions) strings.push_back(r.name);
  const auto first_task_region = static_cast<std::uint32_t>(strings.size());
  for (const auto& r : kTaskRegions)
    if (tasks) strings.push_back(r.name);
  const auto first_thread = static_cast<std::uint32_t>(strings.size());
  for (std::uint32_t th = 0; th < threads; ++th) strings.push_back(th == 0 ? "Master thread" : "OMP thread " + std::to_string(th));
  for (std::uint32_t s = 0; s < strings.size(); ++s) check(OTF2_GlobalDefWriter_WriteString(g, s, strings[s].c_str()), "string");
  check(OTF2_GlobalDefWriter_WriteSystemTreeNode(g, 0, 2, 1, OTF2_UNDEFINED_SYSTEM_TREE_NODE), "machine");
  check(OTF2_GlobalDefWriter_WriteSystemTreeNode(g, 1, 4, 3, 0), "node");
  check(OTF2_GlobalDefWriter_WriteLocationGroup(g, 0, 5, OTF2_LOCATION_GROUP_TYPE_PROCESS, 1, OTF2_UNDEFINED_LOCATION_GROUP),
        "location group");
  for (std::uint32_t th = 0; th < threads; ++th)
    check(OTF2_GlobalDefWriter_WriteLocation(g, th, first_thread + th, OTF2_LOCATION_TYPE_CPU_THREAD, events[th], 0),
          "location");
  for (std::uint32_t i = 0; i < std::size(kRegions); ++i)
    check(OTF2_GlobalDefWriter_WriteRegion(g, i, first_region + i, first_region + i, 0, kRegions[i].role,
                                           kRegions[i].paradigm, OTF2_REGION_FLAG_NONE,
                                           kRegions[i].pthread_file ? kPthreadFile : 0, 0, 0),
          "region");
  for (std::uint32_t i = 0; tasks && i < std::size(kTaskRegions); ++i)
    check(OTF2_GlobalDefWriter_WriteRegion(g, kFirstTaskRegion + i, first_task_region + i, first_task_region + i, 0,
                                           kTaskRegions[i].role, kTaskRegions[i].paradigm, OTF2_REGION_FLAG_NONE, 0, 0, 0),
          "task region");
  if (main)
    check(OTF2_GlobalDefWriter_WriteRegion(g, program_region, kProgramPath - 1, kProgramPath, 0,
                                           OTF2_REGION_ROLE_ARTIFICIAL, OTF2_PARADIGM_MEASUREMENT_SYSTEM,
                                           OTF2_REGION_FLAG_NONE, 0, 0, 0),
          "program region");
  std::vector<std::uint64_t> members(threads);
  for (std::uint32_t th = 0; th < threads; ++th) members[th] = th;
  check(OTF2_GlobalDefWriter_WriteGroup(g, 0, 0, OTF2_GROUP_TYPE_COMM_LOCATIONS, OTF2_PARADIGM_OPENMP,
                                        OTF2_GROUP_FLAG_NONE, threads, members.data()),
        "locations group");
  check(OTF2_GlobalDefWriter_WriteGroup(g, 1, 0, OTF2_GROUP_TYPE_COMM_GROUP, OTF2_PARADIGM_OPENMP, OTF2_GROUP_FLAG_NONE,
                                        threads, members.data()),
        "team group");
  check(OTF2_GlobalDefWriter_WriteComm(g, kTeam, 6, 1, OTF2_UNDEFINED_COMM, OTF2_COMM_FLAG_NONE), "team");
  check(OTF2_Archive_CloseGlobalDefWriter(archive, g), "close global definitions");
  check(OTF2_Archive_Close(archive), "close archive");
  std::uint64_t total = 0;
  for (auto n : events) total += n;
  return total;
}

}  // namespace cubescale::trace
