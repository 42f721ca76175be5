// OpenMP explicit tasks in the trace -> profile kernel, on traces written with OTF2's writer as
// Score-P's OPARI2 adapter writes tasks: a call stack per task, the tasks' call paths below
// <program>/TASKS, a pointer below the barrier or taskwait that ran them, suspended time left
// out (docs/traces.md, "OpenMP tasks").
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <map>
#include <string>

#include "cubescale/common/format_error.hpp"
#include "cubescale/trace/profile.hpp"
#include "cubescale/trace/reader.hpp"
#include "../analysis/trace_files.hpp"
#include "cubescale/trace/synthetic_omp.hpp"
#include "profile_by_path.hpp"

namespace fs = std::filesystem;
using namespace cubescale::trace;

namespace {

using cubescale::trace_tests::visits_and_time;

const std::string kTask = "!$omp task @synthetic.c:5", kUntied = "!$omp task untied @synthetic.c:6",
                  kBarrier = "!$omp implicit barrier @synthetic.c:2", kWait = "!$omp taskwait @synthetic.c:7",
                  kTeam = "t/main/!$omp parallel @synthetic.c:1";

OmpCall at(const std::string& call, std::uint64_t time, std::uint32_t generation = 0, bool untied = false) {
  OmpCall c{call, time, time};
  c.generation = generation;
  c.untied = untied;
  return c;
}
OmpCall in(const std::string& call, const std::string& region, std::uint64_t time) {
  OmpCall c{call, time, time};
  c.region = region;
  return c;
}

}  // namespace

// Task A runs in the barrier, waits at a taskwait while its child B runs, and resumes (tied
// tasks, LIFO); thread 1 only waits.
TEST(TaskProfile, TiedTasksGoBelowTasksWithAPointerAtTheBarrier) {
  cubescale::analysis_tests::TempDir dir("tasks");
  OmpParallel team{100, 1000, {}};
  team.threads = {{{"task_create", 110, 120, 0, 0, 0, 1}, {"task_create", 130, 140, 0, 0, 0, 2},
                   in("enter", "ibarrier", 200), at("task_begin", 210, 1), in("enter", "work", 220),
                   in("leave", "work", 260), in("enter", "taskwait", 270), at("task_begin", 280, 2),
                   in("enter", "work", 290), in("leave", "work", 330), at("task_end", 340, 2), at("task_switch", 350, 1),
                   in("leave", "taskwait", 360), at("task_end", 380, 1), at("task_switch", 390, 0),
                   in("leave", "ibarrier", 400)},
                  {{"ibarrier", 200, 400}}};
  write_omp_trace(dir.path.string(), "t", {team}, 2, 1100, OmpMain{0, 1100});
  const Trace trace((dir.path / "t.otf2").string());
  const auto p = trace_profile(trace, trace.all_locations());
  auto v = visits_and_time(p, 0);
  const auto pair = [](std::uint64_t visits, double ns) { return std::make_pair(visits, ns); };
  // The pointer: A's two runs (70 + 30 ns) and B's (60 ns); the barrier's own time is its wait.
  EXPECT_EQ(v[kTeam + "/" + kBarrier], pair(1, 200));
  EXPECT_EQ(v[kTeam + "/" + kBarrier + "/" + kTask], pair(3, 160));
  EXPECT_EQ(v[kTeam + "/!$omp create task @synthetic.c:5"], pair(2, 20));
  // The tasks' own call paths: A ran 170 ns less the 70 ns it waited for B; A's taskwait 90 ns less those 70.
  EXPECT_EQ(v["t/TASKS"], pair(0, 160));
  EXPECT_EQ(v["t/TASKS/" + kTask], pair(2, 160));
  EXPECT_EQ(v["t/TASKS/" + kTask + "/work"], pair(2, 80));
  EXPECT_EQ(v["t/TASKS/" + kTask + "/" + kWait], pair(1, 20));
  EXPECT_EQ(v.count(kTeam + "/" + kBarrier + "/" + kTask + "/work"), 0u);
  // The program's time is its 1100 ns: the tasks' are not added to it a second time.
  EXPECT_EQ(v["t"], pair(1, 1100));
  EXPECT_EQ(p.regions.back().name, "TASKS");
  // Thread 1 never ran a task: nothing of the tasks' call paths is its.
  auto w = visits_and_time(p, 1);
  EXPECT_EQ(w[kTeam + "/" + kBarrier], pair(1, 200));
  EXPECT_EQ(w["t/TASKS"], pair(0, 0));
  EXPECT_EQ(w["t"].second, 900);  // a worker's unvisited ancestors hold its parallel region's time only
}

// Untied tasks U and V suspend each other inside their regions: the location's events do not
// nest in stream order, only per task (a reader with one stack per location refuses it).
TEST(TaskProfile, UntiedTasksThatInterleaveNestPerTask) {
  cubescale::analysis_tests::TempDir dir("tasks");
  OmpParallel team{100, 1000, {}};
  team.threads = {{in("enter", "ibarrier", 200), at("task_begin", 210, 1, true), in("enter", "work", 220),
                   at("task_begin", 230, 2, true), in("enter", "taskwait", 240), at("task_switch", 250, 1),
                   in("leave", "work", 260), at("task_end", 270, 1, true), at("task_switch", 280, 2),
                   in("leave", "taskwait", 290), at("task_end", 300, 2, true), in("leave", "ibarrier", 400)}};
  write_omp_trace(dir.path.string(), "t", {team}, 1, 1100, OmpMain{0, 1100});
  const Trace trace((dir.path / "t.otf2").string());
  const auto p = trace_profile(trace, trace.all_locations());
  auto v = visits_and_time(p, 0);
  const auto pair = [](std::uint64_t visits, double ns) { return std::make_pair(visits, ns); };
  EXPECT_EQ(v[kTeam + "/" + kBarrier + "/" + kUntied], pair(4, 80));  // four runs of 20 ns
  EXPECT_EQ(v["t/TASKS/" + kUntied], pair(2, 80));
  EXPECT_EQ(v["t/TASKS/" + kUntied + "/work"], pair(1, 20));  // 40 ns less 20 suspended
  EXPECT_EQ(v["t/TASKS/" + kUntied + "/" + kWait], pair(1, 20));  // 50 ns less 30 suspended
  EXPECT_EQ(v[kTeam + "/" + kBarrier], pair(1, 200));
}

// An untied task resumed on another thread: its regions' Enter events are in another location's
// stream, which one location's reading cannot see: a FormatError naming the case.
TEST(TaskProfile, ATaskResumedOnAnotherThreadIsRefusedClearly) {
  cubescale::analysis_tests::TempDir dir("tasks");
  OmpParallel team{100, 1000, {}};
  team.threads = {{in("enter", "ibarrier", 200), at("task_begin", 210, 1, true), in("enter", "work", 220),
                   at("task_switch", 230, 0), in("leave", "ibarrier", 400)},
                  {in("enter", "ibarrier", 200), at("task_switch", 240, 1), in("leave", "work", 250),
                   at("task_end", 260, 1, true), in("leave", "ibarrier", 400)}};
  write_omp_trace(dir.path.string(), "t", {team}, 2, 1100, OmpMain{0, 1100});
  const Trace trace((dir.path / "t.otf2").string());
  try {
    trace_profile(trace, trace.all_locations());
    FAIL() << "no error";
  } catch (const cubescale::FormatError& e) {
    EXPECT_NE(std::string(e.what()).find("untied task resumed on another thread"), std::string::npos) << e.what();
  }
}

// A task suspended and never resumed (a stream cut short): its frames close at the end of its
// last run, counted as unclosed; the pointer holds that run once.
TEST(TaskProfile, ATaskNeverResumedClosesAtTheEndOfItsLastRun) {
  cubescale::analysis_tests::TempDir dir("tasks");
  OmpParallel team{100, 1000, {}};
  team.threads = {{in("enter", "ibarrier", 200), at("task_begin", 210, 1, true), in("enter", "work", 220),
                   at("task_switch", 230, 0), in("leave", "ibarrier", 400)}};
  write_omp_trace(dir.path.string(), "t", {team}, 1, 1100, OmpMain{0, 1100});
  const Trace trace((dir.path / "t.otf2").string());
  ProfileStats stats;
  const auto p = trace_profile(trace, trace.all_locations(), &stats);
  auto v = visits_and_time(p, 0);
  const auto pair = [](std::uint64_t visits, double ns) { return std::make_pair(visits, ns); };
  EXPECT_EQ(v["t/TASKS/" + kUntied], pair(1, 20));
  EXPECT_EQ(v["t/TASKS/" + kUntied + "/work"], pair(1, 10));
  EXPECT_EQ(v[kTeam + "/" + kBarrier + "/" + kUntied], pair(1, 20));
  EXPECT_EQ(stats.unclosed_frames, 2u);
}
