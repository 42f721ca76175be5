// The recorder: call trees per thread, filters (Score-P syntax and globs), the depth limit,
// calls not recorded leaving their callers intact, and times in seconds of the real clock.
#include <gtest/gtest.h>

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <thread>
#include <vector>

#include "cubescale/cube/reader.hpp"

#include "cubescale/measure/c_api.h"
#include "cubescale/measure/scope.hpp"

using namespace cubescale::measure;

TEST(Filter, ScorepSyntaxAndGlobs) {
  const auto f = RegionFilter::parse(
      "# comment\nSCOREP_REGION_NAMES_BEGIN\n  EXCLUDE *\n  INCLUDE main solve_[a-c]* MANGLED x?\n"
      "SCOREP_REGION_NAMES_END\nSCOREP_FILE_NAMES_BEGIN\n EXCLUDE */io/*\nSCOREP_FILE_NAMES_END\n");
  EXPECT_TRUE(f.included("main"));
  EXPECT_TRUE(f.included("solve_b2"));
  EXPECT_FALSE(f.included("solve_d"));
  EXPECT_TRUE(f.included("xy"));
  EXPECT_FALSE(f.included("xyz"));
  EXPECT_THROW(RegionFilter::parse("EXCLUDE a"), std::invalid_argument);
  EXPECT_TRUE(glob_match("*.wait", "Barrier.wait"));
  EXPECT_FALSE(glob_match("[!a]*", "abc"));
}

// Score-P's filter files (and scorep-score -g) put EXCLUDE on its own line and one name per
// line below it: the rule holds until the next INCLUDE/EXCLUDE or the block's end.
TEST(Filter, RuleContinuesOverLineBreaksUntilTheBlockEnds) {
  const auto f = RegionFilter::parse(
      "SCOREP_REGION_NAMES_BEGIN\n  EXCLUDE\n    MANGLED foo\n    bar*\n  INCLUDE\n    barrier\n"
      "SCOREP_REGION_NAMES_END\nSCOREP_REGION_NAMES_BEGIN\n  INCLUDE x\nSCOREP_REGION_NAMES_END\n");
  EXPECT_FALSE(f.included("foo"));
  EXPECT_FALSE(f.included("bar_1"));
  EXPECT_TRUE(f.included("barrier"));
  EXPECT_TRUE(f.included("main"));
  // A name after the block's end is no rule of it.
  EXPECT_THROW(RegionFilter::parse("SCOREP_REGION_NAMES_BEGIN EXCLUDE a SCOREP_REGION_NAMES_END\nb\n"),
               std::invalid_argument);
}

TEST(Recorder, TreesFiltersDepthAndTime) {
  RegionFilter filter;
  filter.exclude("hidden");
  Recorder r(filter, 3);
  const auto main_r = r.region("main"), hidden = r.region("hidden"), work = r.region("work");
  auto* t = r.add_thread("Master thread");
  t->enter(main_r, r.recorded(main_r), now());
  for (int i = 0; i < 3; ++i) {
    t->enter(hidden, r.recorded(hidden), now());  // not recorded: work nests below main
    t->enter(work, r.recorded(work), now());
    t->enter(work, true, now());
    t->enter(work, true, now());  // beyond the depth limit of 3
    t->exit(now());
    t->exit(now());
    t->exit(now());
    t->exit(now());
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  t->exit(now());
  const auto p = r.to_profile();
  ASSERT_EQ(p.cnode_count(), 4u);  // main > work > work > COLLAPSE (Score-P's node below the limit)
  EXPECT_EQ(p.cnode_parents[1], 0u);
  EXPECT_EQ(p.cnode_parents[2], 1u);
  EXPECT_EQ(p.cnode_parents[3], 2u);
  EXPECT_EQ(p.regions[p.cnode_regions[3]].name, "COLLAPSE");
  EXPECT_EQ(p.regions[p.cnode_regions[3]].role, "artificial");
  const auto* visits = reinterpret_cast<const std::uint64_t*>(p.values[0].data());
  EXPECT_EQ(visits[0], 1u);
  EXPECT_EQ(visits[1], 3u);
  EXPECT_EQ(visits[2], 3u);
  EXPECT_EQ(visits[3], 3u);
  const double main_time = reinterpret_cast<const double*>(p.values[1].row(0))[0];
  EXPECT_GT(main_time, 0.029);  // the clock's ticks turn into real seconds
  EXPECT_LT(main_time, 1.0);
}

TEST(Recorder, CallsBelowTheDepthLimitGoIntoOneCollapse) {
  // As Score-P's profile: the outermost call below the limit is a visit of COLLAPSE with its
  // time, the calls inside it (deeper, filtered or not) add nothing; the filter cannot remove it.
  RegionFilter filter;
  filter.exclude("*");
  filter.include("f");
  Recorder r(filter, 2);
  const auto f = r.region("f"), hidden = r.region("hidden");
  auto* t = r.add_thread("Master thread");
  t->enter(f, true, now());
  t->enter(f, true, now());
  for (int i = 0; i < 4; ++i) {
    t->enter(f, true, now());  // depth 3: COLLAPSE
    t->enter(hidden, r.recorded(hidden), now());
    t->enter(f, true, now());  // depth 4: inside it
    t->exit(now());
    t->exit(now());
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    t->exit(now());
  }
  t->exit(now());
  t->exit(now());
  EXPECT_EQ(t->depth(), 0u);
  const auto p = r.to_profile();
  ASSERT_EQ(p.cnode_count(), 3u);  // f > f > COLLAPSE
  EXPECT_EQ(p.regions[p.cnode_regions[2]].name, "COLLAPSE");
  const auto* visits = reinterpret_cast<const std::uint64_t*>(p.values[0].data());
  EXPECT_EQ(visits[2], 4u);
  const double collapsed = reinterpret_cast<const double*>(p.values[1].row(2))[0];
  EXPECT_GT(collapsed, 0.007);  // the four calls' time
}

TEST(Recorder, ThreadsAndCApi) {
  reset();
  const auto region = cubescale_region("c region", __FILE__, __LINE__);
  std::thread worker([&] {
    name_this_thread("worker");
    for (int i = 0; i < 5; ++i) {
      cubescale_enter(region);
      cubescale_bytes(8, 0);
      cubescale_exit();
    }
  });
  worker.join();
  { CUBESCALE_REGION("scoped"); }
  const auto p = global().to_profile();
  ASSERT_EQ(p.locations.size(), 2u);
  EXPECT_EQ(p.locations[0].name, "worker");
  EXPECT_EQ(p.locations[1].name, "thread 1");
  EXPECT_EQ(p.cnode_count(), 2u);
  const auto* sent = reinterpret_cast<const std::uint64_t*>(p.values[4].row(0));
  EXPECT_EQ(sent[0], 40u);
}

TEST(Filter, FileBlockExcludesTheRegionsOfItsFiles) {
  const auto f = RegionFilter::parse(
      "SCOREP_FILE_NAMES_BEGIN\n EXCLUDE */lib/python3* \n INCLUDE */lib/python3*/json/*\nSCOREP_FILE_NAMES_END\n"
      "SCOREP_REGION_NAMES_BEGIN\n EXCLUDE helper\nSCOREP_REGION_NAMES_END\n");
  EXPECT_FALSE(f.included("dumps", "/usr/lib/python3.11/pickle.py"));
  EXPECT_TRUE(f.included("dumps", "/usr/lib/python3.11/json/__init__.py"));  // the last matching rule decides
  EXPECT_TRUE(f.included("solve", "/home/me/app.py"));
  EXPECT_FALSE(f.included("helper", "/home/me/app.py"));  // its name is excluded
  EXPECT_TRUE(f.included("dumps"));                        // no file: only the name counts
}

TEST(Recorder, RegionIdsOutliveAReset) {
  reset();
  const auto early = cubescale_region("early", "a.c", 1);
  const auto own = global().region("wrapper", "own.py", 3);
  global().ignore_file("own.py");
  reset(RegionFilter::parse("SCOREP_REGION_NAMES_BEGIN EXCLUDE filtered* SCOREP_REGION_NAMES_END"));
  const auto filtered = global().region("filtered_one");
  // Registered before the reset, recorded after it: an id in a static (CUBESCALE_REGION)
  // still names its region, and the new filter and the ignored file still apply.
  EXPECT_EQ(cubescale_region("early", "a.c", 1), early);
  EXPECT_FALSE(global().recorded(own));
  EXPECT_FALSE(global().recorded(global().region("later", "own.py", 9)));
  EXPECT_FALSE(global().recorded(filtered));
  for (int i = 0; i < 2; ++i) {
    cubescale_enter(early);
    cubescale_enter(own);
    cubescale_enter(filtered);
    cubescale_exit();
    cubescale_exit();
    cubescale_exit();
  }
  const auto p = global().to_profile();
  ASSERT_EQ(p.cnode_count(), 1u);
  EXPECT_EQ(p.regions[p.cnode_regions[0]].name, "early");
  EXPECT_EQ(reinterpret_cast<const std::uint64_t*>(p.values[0].row(0))[0], 2u);
  reset(RegionFilter::parse("SCOREP_REGION_NAMES_BEGIN EXCLUDE early SCOREP_REGION_NAMES_END"));
  EXPECT_FALSE(global().recorded(early));  // filtered again by the new measurement's filter
  EXPECT_TRUE(global().recorded(filtered));
}

TEST(ProcessReport, ACProgramWritesItsOwnReport) {
  reset();
  const auto solve = cubescale_region("solve", "app.c", 10), send = cubescale_region("send", "app.c", 20);
  auto work = [&](int calls) {
    cubescale_enter(solve);
    for (int i = 0; i < calls; ++i) {
      cubescale_enter(send);
      cubescale_bytes(100, 0);
      cubescale_exit();
    }
    cubescale_exit();
  };
  std::thread worker([&] {
    name_this_thread("worker");
    work(3);
  });
  worker.join();
  work(2);
  const auto path =
      (std::filesystem::temp_directory_path() / ("cubescale-measure-" + std::to_string(::getpid()) + ".cubex")).string();
  ASSERT_EQ(cubescale_write(path.c_str(), "MPI Rank 3"), 0);
  const auto report = cubescale::cube::open_cubex(path);
  std::filesystem::remove(path);
  const auto& defs = report->definitions();
  ASSERT_EQ(defs.cnodes.size(), 2u);  // solve > send
  ASSERT_EQ(defs.location_count(), 2u);
  EXPECT_EQ(defs.system.name(defs.location_groups[0]), "MPI Rank 3");
  EXPECT_EQ(defs.system.name(defs.locations[0]), "worker");
  const auto visits = report->values(0);
  const auto* send_visits = reinterpret_cast<const std::uint64_t*>(visits->row(1));
  EXPECT_EQ(send_visits[0], 3u);  // worker
  EXPECT_EQ(send_visits[1], 2u);  // this thread
  const auto sent = report->values(4);
  EXPECT_EQ(reinterpret_cast<const std::uint64_t*>(sent->row(1))[0], 300u);
  EXPECT_EQ(cubescale_write("/nonexistent-dir/x.cubex", nullptr), -1);  // a status, not an exception
}

TEST(Recorder, ManyThreadsRecordExactCountsWithoutLocks) {
  reset();
  const auto outer = cubescale_region("outer", "", -1), inner = cubescale_region("inner", "", -1);
  constexpr int kThreads = 8, kCalls = 20000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < kCalls; ++i) {
        Scope a(outer);
        for (int k = 0; k <= t % 3; ++k) Scope b(inner);
      }
    });
  for (auto& t : threads) t.join();
  // Memory grows with call paths, not calls: two call paths per thread.
  EXPECT_LT(global().memory_bytes(), std::size_t(kThreads) * 64 * 1024);
  const auto p = global().to_profile();
  ASSERT_EQ(p.cnode_count(), 2u);
  ASSERT_EQ(p.locations.size(), std::size_t(kThreads));
  const auto* outer_visits = reinterpret_cast<const std::uint64_t*>(p.values[0].row(0));
  const auto* inner_visits = reinterpret_cast<const std::uint64_t*>(p.values[0].row(1));
  std::uint64_t inner_total = 0, expected = 0;
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_EQ(outer_visits[t], std::uint64_t(kCalls));
    inner_total += inner_visits[t];
    expected += std::uint64_t(kCalls) * (t % 3 + 1);
  }
  EXPECT_EQ(inner_total, expected);
}

// Ids come from C, Fortran and Python callers: one never returned by cubescale_region is
// counted and skipped (its exit matches it), not read past the recorder's table.
TEST(Recorder, AnUnknownRegionIdIsCountedNotACrash) {
  reset();
  const auto a = cubescale_region("known", "ids.c", 1);
  EXPECT_FALSE(global().known(4000000000u));
  EXPECT_FALSE(global().known(a + 1000));
  cubescale_enter(4000000000u);
  cubescale_enter(a);
  cubescale_exit();
  cubescale_exit();
  cubescale_enter(a + 1000);  // below 2^20, never registered: unknown too, not "filtered"
  cubescale_exit();
  EXPECT_EQ(this_thread().unknown_enters(), 2u);
  EXPECT_EQ(this_thread().unmatched_exits(), 0u);
  const auto p = global().to_profile();
  ASSERT_EQ(p.cnode_count(), 1u);  // "known" at the root: the unknown enter's exit was its own
  EXPECT_EQ(p.regions[p.cnode_regions[0]].name, "known");
}

namespace {
std::string temp_cubex(const char* name) {
  return (std::filesystem::temp_directory_path() / (name + std::to_string(::getpid()) + ".cubex")).string();
}
}  // namespace

TEST(ProcessReport, WriteWarnsOnceOfMismatchesAndOpenRegions) {
  reset();
  const auto a = cubescale_region("a", "m.c", 1), open = cubescale_region("open", "m.c", 2);
  cubescale_exit();  // without an enter
  cubescale_enter(a);
  cubescale_exit();
  cubescale_enter(4000000000u);
  cubescale_exit();
  cubescale_enter(open);
  std::thread other([] {  // an exit on another thread than the enter
    name_this_thread("thread 1");
    cubescale_exit();
    cubescale_exit();
  });
  other.join();
  const auto path = temp_cubex("cubescale-mismatch-");
  testing::internal::CaptureStderr();
  EXPECT_EQ(cubescale_write(path.c_str(), nullptr), 0);
  const auto err = testing::internal::GetCapturedStderr();
  std::filesystem::remove(path);
  EXPECT_EQ(err,
            "cubescale_write: warning: 3 exits without an enter (Master thread, thread 1) were ignored; "
            "1 enter of an unknown region id (Master thread) was ignored; 1 region still open (Master thread) "
            "is not in the report (only completed calls are written)\n");
  cubescale_exit();  // "open" closes: a later write has no open region to name
  testing::internal::CaptureStderr();
  EXPECT_EQ(cubescale_write(path.c_str(), nullptr), 0);
  EXPECT_EQ(testing::internal::GetCapturedStderr().find("still open"), std::string::npos);
  std::filesystem::remove(path);
}

TEST(ProcessReport, NoWarningWhenEveryCallMatched) {
  reset();
  const auto a = cubescale_region("a", "m.c", 1);
  cubescale_enter(a);
  cubescale_exit();
  const auto path = temp_cubex("cubescale-matched-");
  testing::internal::CaptureStderr();
  EXPECT_EQ(cubescale_write(path.c_str(), nullptr), 0);
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
  std::filesystem::remove(path);
}

TEST(ProcessReport, WriteWithoutAPathSaysSo) {
  for (const char* path : {static_cast<const char*>(nullptr), ""}) {
    testing::internal::CaptureStderr();
    EXPECT_EQ(cubescale_write(path, nullptr), -1);
    EXPECT_EQ(testing::internal::GetCapturedStderr(), "cubescale_write: no output path given\n");
  }
}

// A name through the C API may hold anything: what XML cannot hold is written as U+FFFD, so
// that the report stays well-formed and readable.
TEST(ProcessReport, NamesXmlCannotHoldAreWrittenAsReplacementCharacters) {
  reset();
  const auto ctl = cubescale_region("ctl\x01", "f\x02.c", 1), bad = cubescale_region("bad\xFF", "", 2);
  const auto fine = cubescale_region("a<b>&\"c'\ttab", "", 3);
  for (const auto r : {ctl, bad, fine}) cubescale_enter(r), cubescale_exit();
  const auto path = temp_cubex("cubescale-names-");
  ASSERT_EQ(cubescale_write(path.c_str(), "Proc\x03"), 0);
  const auto report = cubescale::cube::open_cubex(path);
  std::filesystem::remove(path);
  const auto& defs = report->definitions();
  ASSERT_EQ(defs.regions.size(), 3u);
  EXPECT_EQ(defs.regions[0].name, "ctl\xEF\xBF\xBD");
  EXPECT_EQ(defs.regions[0].mod, "f\xEF\xBF\xBD.c");
  EXPECT_EQ(defs.regions[1].name, "bad\xEF\xBF\xBD");
  EXPECT_EQ(defs.regions[2].name, "a<b>&\"c'\ttab");
  EXPECT_EQ(defs.system.name(defs.location_groups[0]), "Proc\xEF\xBF\xBD");
}
