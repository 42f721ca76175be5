// Calling-context events (Score-P's unwinding and sampling) in the trace -> profile kernel: each
// becomes the Enter and Leave events of the frames it closes and opens, as Score-P's profile
// replays them, with a hit per sample on its innermost call path (docs/trace.md, "Calling
// contexts"); the event table keeps them as recorded.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <map>
#include <string>

#include "cubescale/common/format_error.hpp"
#include "cubescale/trace/profile.hpp"
#include "cubescale/trace/reader.hpp"
#include "../analysis/trace_files.hpp"
#include "one_location_trace.hpp"
#include "profile_by_path.hpp"

namespace fs = std::filesystem;
using namespace cubescale::trace;
using E = cubescale::trace_tests::OneLocationEvent;
using C = cubescale::trace_tests::OneLocationContext;

namespace {

// Per call path ("a/b"): (visits, time in ns, hits) of the only location.
std::map<std::string, std::tuple<std::uint64_t, double, std::uint64_t>> values(const cubescale::profile::LocalProfile& p) {
  std::size_t visits = 0, time = 0, hits = 0;
  for (std::size_t m = 0; m < p.metrics.size(); ++m) {
    if (p.metrics[m].uniq_name == "visits") visits = m;
    if (p.metrics[m].uniq_name == "time") time = m;
    if (p.metrics[m].uniq_name == "hits") hits = m;
  }
  EXPECT_EQ(p.metrics[hits].uniq_name, "hits");
  const auto path = cubescale::trace_tests::path_names(p);
  std::map<std::string, std::tuple<std::uint64_t, double, std::uint64_t>> out;
  for (std::size_t c = 0; c < path.size(); ++c) {
    std::uint64_t v = 0, h = 0;
    double t = 0;
    std::memcpy(&v, p.values[visits].row(c), 8);
    std::memcpy(&t, p.values[time].row(c), 8);
    std::memcpy(&h, p.values[hits].row(c), 8);
    out[path[c]] = {v, std::round(t * 1e9), h};
  }
  return out;
}

}  // namespace

// Score-P's own example (test/services/unwinding/test_cct_4.c): a sample in main (not
// instrumented), USER entered (main closed and opened again: its context is another
// activation's), five samples in USER at unwind distance 1 (the same frames), USER left, a
// sample in main. Score-P's profile: main 3 visits and 2 hits, USER 1 visit and 5 hits (one
// more sample here, at 100 in the same frame, gives main's last visit a length: 3 hits).
TEST(CallingContexts, ScorePsUnwindingExample) {
  cubescale::analysis_tests::TempDir dir("contexts");
  // Regions 0 main, 1 USER; contexts 0 main@58, 1 main@60, 2 USER below 1, 3 USER@67 below 1, 4 main@99.
  const std::vector<C> contexts = {{0}, {0}, {1, 1}, {1, 1}, {0}};
  std::vector<E> events = {{E::ContextSample, 58, 0, 2}, {E::ContextEnter, 60, 2, 3}};
  for (std::uint64_t t = 67; t <= 95; t += 7) events.push_back({E::ContextSample, t, 3, 1});
  events.insert(events.end(), {{E::ContextLeave, 97, 2}, {E::ContextSample, 99, 4, 2}, {E::ContextSample, 100, 4, 1}});
  const auto anchor =
      cubescale::trace_tests::write_one_location(dir.path, "t", {{"main", "main"}, {"USER", "USER"}}, events, "t", contexts);
  const Trace trace(anchor);
  ProfileStats stats;
  auto v = values(trace_profile(trace, trace.all_locations(), &stats));
  // main: [58, 60), [60, 99), [99, 100] (closed at the location's end); USER [60, 97).
  EXPECT_EQ(v["main"], std::make_tuple(3, 42, 3));
  EXPECT_EQ(v["main/USER"], std::make_tuple(1, 37, 5));
  EXPECT_EQ(stats.unclosed_frames, 1u);
}

// A parent chain that loops is a FormatError naming the context, never a hang; so is a Leave
// of a context whose frames are not open.
TEST(CallingContexts, BrokenContextsAreClearErrors) {
  cubescale::analysis_tests::TempDir dir("contexts");
  const auto loop = cubescale::trace_tests::write_one_location(dir.path, "loop", {{"f", "f"}},
                                                               {{E::ContextSample, 1, 0, 1}}, "loop", {{0, 1}, {0, 0}});
  try {
    trace_profile(Trace(loop), {0});
    FAIL() << "no error";
  } catch (const cubescale::FormatError& e) {
    EXPECT_NE(std::string(e.what()).find("loops"), std::string::npos) << e.what();
  }
  const auto leave = cubescale::trace_tests::write_one_location(dir.path, "leave", {{"f", "f"}, {"g", "g"}},
                                                                {{E::ContextLeave, 1, 1}}, "leave", {{0}, {1, 0}});
  try {
    trace_profile(Trace(leave), {0});
    FAIL() << "no error";
  } catch (const cubescale::FormatError& e) {
    EXPECT_NE(std::string(e.what()).find("frames"), std::string::npos) << e.what();
  }
}

// Score-P closes the frames samples left open when a worker's team ends and when the program
// ends (a sample the trace does not record): a worker's frames of one parallel region do not
// run on through the serial phase, and main ends with the program; a master's go on. The event counts stay
// those of the file.
TEST(CallingContexts, FramesCloseAtTheTeamsAndTheProgramsEnd) {
  cubescale::analysis_tests::TempDir dir("contexts");
  // Contexts 0 A, 1 B below A.
  const auto team = cubescale::trace_tests::write_one_location(
      dir.path, "team", {{"A", "A"}, {"B", "B"}},
      {{E::TeamBegin, 5}, {E::ContextSample, 10, 1, 3}, {E::TeamEnd, 20}, {E::TeamBegin, 100},
       {E::ContextSample, 105, 1, 3}, {E::TeamEnd, 110}},
      "team", {{0}, {1, 0}});
  const Trace t(team);
  ProfileStats stats;
  auto v = values(trace_profile(t, t.all_locations(), &stats));
  EXPECT_EQ(v["A"], std::make_tuple(2, 15, 0));  // [10, 20) and [105, 110)
  EXPECT_EQ(v["A/B"], std::make_tuple(2, 15, 2));
  EXPECT_EQ(stats.unclosed_frames, 0u);
  const auto counts = count_events(t, t.all_locations());
  EXPECT_EQ(counts[0][static_cast<std::size_t>(EventType::Enter)], 0u);
  EXPECT_EQ(counts[0][static_cast<std::size_t>(EventType::CallingContextSample)], 2u);

  // The master of a team keeps its frames over the team's end (Score-P pauses it): its samples
  // after the join go on from them.
  const auto master = cubescale::trace_tests::write_one_location(
      dir.path, "master", {{"A", "A"}, {"B", "B"}},
      {{E::ContextSample, 10, 1, 3}, {E::Fork, 20}, {E::TeamBegin, 20}, {E::ContextSample, 30, 1, 1},
       {E::TeamEnd, 40}, {E::Join, 40}, {E::ContextSample, 50, 1, 1}, {E::ContextSample, 60, 0, 1}},
      "master", {{0}, {1, 0}});
  const Trace m(master);
  auto u = values(trace_profile(m, m.all_locations(), &stats));
  EXPECT_EQ(u["A"], std::make_tuple(1, 50, 1));  // closed at the location's last event
  EXPECT_EQ(u["A/B"], std::make_tuple(1, 50, 3));
  EXPECT_EQ(stats.unclosed_frames, 1u);

  // Regions 0 main, 1 foo, 2 the program; contexts 0 main, 1 foo below main.
  const auto program = cubescale::trace_tests::write_one_location(
      dir.path, "prog",
      {{"main", "main"}, {"foo", "foo"}, {"prog", "prog", OTF2_REGION_ROLE_ARTIFICIAL, OTF2_PARADIGM_MEASUREMENT_SYSTEM}},
      {{E::ProgramBegin, 1}, {E::ContextEnter, 10, 1, 3}, {E::ContextLeave, 20, 1}, {E::ProgramEnd, 30},
       {E::Enter, 40, 1}, {E::Leave, 50, 1}},
      "prog", {{0}, {1, 0}});
  const Trace p(program);
  auto w = values(trace_profile(p, p.all_locations()));
  EXPECT_EQ(w["prog"], std::make_tuple(1, 29, 0));
  EXPECT_EQ(w["prog/main"], std::make_tuple(1, 20, 0));
  EXPECT_EQ(w["prog/main/foo"], std::make_tuple(1, 10, 0));
  EXPECT_EQ(w["foo"], std::make_tuple(1, 10, 0));  // after the program: a root of its own
}

// A chain of 60,000 contexts sampled 60,000 times at unwind distance 1 (nothing closed or
// opened): the work is the frames made, not the depth per event (it was quadratic).
TEST(CallingContexts, DeepChainsCostTheFramesTheyMake) {
  cubescale::analysis_tests::TempDir dir("contexts");
  constexpr std::uint32_t kDepth = 60000;
  std::vector<C> chain;
  for (std::uint32_t c = 0; c < kDepth; ++c) chain.push_back({0, c == 0 ? ~0u : c - 1});
  std::vector<E> events = {{E::ContextSample, 1, kDepth - 1, kDepth + 1}};
  for (std::uint64_t t = 2; t < 2 + kDepth; ++t) events.push_back({E::ContextSample, t, kDepth - 1, 1});
  const auto anchor = cubescale::trace_tests::write_one_location(dir.path, "deep", {{"f", "f"}}, events, "deep", chain);
  const Trace t(anchor);
  const auto start = std::chrono::steady_clock::now();
  const auto p = trace_profile(t, t.all_locations());
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 3.0);  // quadratic: about 8 s
  EXPECT_EQ(p.cnode_parents.size(), kDepth);
}
