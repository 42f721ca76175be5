// scout's root-cause metrics (root_cause.hpp) on the worked example of docs/root-cause-design.md,
// section 7: a Late Sender chain over three processes (1 s of the example = 1000 ticks here; the
// example's `compute` is main's own time in the synthetic trace).
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <utility>

#include "cubescale/analysis/root_cause.hpp"
#include "cubescale/analysis/waitstates.hpp"
#include "cubescale/trace/synthetic_hybrid.hpp"
#include "trace_files.hpp"

using namespace cubescale;
using namespace cubescale::analysis_tests;

namespace {

std::string chain(const TempDir& dir) {
  const trace::MpiCall init{"MPI_Init", 0, 100, {}}, finalize{"MPI_Finalize", 4400, 4500, {}};
  return write(dir,
               {{init, {"MPI_Send", 3100, 3200, {1}}, finalize},
                {init, {"MPI_Recv", 100, 3200, {0}}, {"MPI_Send", 4200, 4300, {2}}, finalize},
                {init, {"MPI_Recv", 500, 4300, {1}}, finalize}},
               4500);
}

using Values = std::map<std::pair<std::size_t, std::string>, double>;  // (location, call path) -> seconds

// Analyzes `t` with the root causes; every root-cause metric has exactly `expected`'s values
// (none where it names none), each within tolerance(its value). Returns the analysis' stats.
template <typename Tolerance>
analysis::AnalysisStats expect_root_causes(const trace::Trace& t, const std::map<std::string, Values>& expected,
                                           Tolerance tolerance, bool openmp = false) {
  analysis::AnalysisOptions options;
  options.root_cause = true;
  analysis::AnalysisStats stats;
  const auto p = analysis::analyze(t, t.all_locations(), &stats, options);
  for (const auto* name : analysis::root_cause_metric_names(openmp)) {
    const auto got = by_call(p, name);
    const auto it = expected.find(name);
    const Values want = it == expected.end() ? Values{} : it->second;
    EXPECT_EQ(got.size(), want.size()) << name;
    if (got.size() != want.size()) continue;
    for (const auto& [key, v] : want)
      EXPECT_NEAR(got.at(key), v, tolerance(v)) << name << " " << key.first << " " << key.second;
  }
  return stats;
}

}  // namespace

TEST(RootCause, WorkedExampleLateSenderChain) {
  TempDir dir("rootcause_chain");
  trace::Trace t(chain(dir));
  const auto stats = expect_root_causes(
      t,
      {
          {"delay_latesender", {{{0, "main"}, 3000e-9}, {{1, "main"}, 600e-9}, {{1, "MPI_Recv"}, 100e-9}}},
          {"delay_latesender_longterm", {{{0, "main"}, 3000e-9}}},
          {"mpi_wait_indirect_latesender", {{{2, "MPI_Recv"}, 3000e-9}}},
          {"mpi_wait_propagating_ls", {{{1, "MPI_Recv"}, 3000e-9}}},
      },
      [](double) { return 1e-15; });
  // Sync points: r0 Init, Send, Finalize; r1 Init, Recv, Send, Finalize; r2 Init, Recv, Finalize.
  EXPECT_EQ(stats.root_cause_points, 10u);
}

// Hybrid MPI + OpenMP (tests/analysis_cases.py, HYBRID "hyb-funneled"; the values are Scalasca 2.6
// scout.hyb's, tests/data/scout_reference.json): rank 0's master waits in an MPI_Recv inside its
// parallel region (rank 1 sends at 480) and so enters the implicit barrier last; its workers'
// barrier waits become costs of that MPI wait, which the Late Sender passes on to rank 1's time
// before the send: delay_ompbarrier_longterm. Rank p's thread t is location 3p + t.
TEST(RootCause, HybridOpenMpBarrierCostsThroughAnMpiWait) {
  TempDir dir("rootcause_hybrid");
  using trace::OmpParallel;
  const auto balanced = [](std::uint64_t fork, std::uint64_t join) {
    OmpParallel r{fork, join, {}};
    for (std::uint64_t t = 0; t < 3; ++t) r.threads.push_back({{"ibarrier", join - 10 - 2 * t, join - 5}});
    return r;
  };
  const trace::MpiCall init{"MPI_Init", 0, 50, {}}, finalize{"MPI_Finalize", 800, 850, {}};
  const std::vector<trace::HybridRank> ranks{
      {{init, {"MPI_Recv", 150, 500, {1}}, finalize},
       {OmpParallel{100, 600, {{{"ibarrier", 520, 580}}, {{"ibarrier", 200, 580}}, {{"ibarrier", 250, 580}}}}}},
      {{init, {"MPI_Send", 480, 490, {0}}, finalize}, {balanced(60, 300), balanced(550, 700)}}};
  trace::write_hybrid_trace(dir.path.string(), "funneled", ranks, 3, 900);
  trace::Trace t((dir.path / "funneled.otf2").string());
  const std::string parallel = "!$omp parallel @synthetic.c:1", barrier = "!$omp implicit barrier @synthetic.c:2";
  expect_root_causes(
      t,
      {
          {"delay_latesender", {{{3, barrier}, 5e-9}, {{3, parallel}, 185e-9}, {{3, "main"}, 140e-9}}},
          {"delay_ompbarrier", {{{0, "MPI_Recv"}, 236e-9 / 7}, {{3, parallel}, 12e-9}}},
          {"delay_ompbarrier_longterm", {{{3, barrier}, 59e-9 / 7}, {{3, parallel}, 2183e-9 / 7}, {{3, "main"}, 236e-9}}},
          {"delay_ompidle",
           {{{0, "MPI_Finalize"}, 100e-9}, {{3, "MPI_Finalize"}, 100e-9}, {{0, "MPI_Init"}, 100e-9},
            {{3, "MPI_Init"}, 100e-9}, {{3, "MPI_Send"}, 20e-9}, {{0, "main"}, 600e-9}, {{3, "main"}, 800e-9}}},
      },
      [](double v) { return 1e-9 * v; }, true);
}

// Threads, the master too, that begin their team after the fork and end it before the join
// (HYBRID "hyb-fork-join", scout.hyb's values): as scout's time maps, that time counts for the
// parallel region in every interval spanning it (rank 0's interval before its send at 600).
TEST(RootCause, HybridForkAndJoinTimeOnTheParallelRegion) {
  TempDir dir("rootcause_forkjoin");
  using trace::OmpParallel;
  const auto region = [](std::uint64_t fork, std::uint64_t join, std::vector<std::uint64_t> begins,
                         std::vector<std::uint64_t> ends, std::vector<std::uint64_t> barrier, std::uint64_t leave) {
    OmpParallel r{fork, join, {}, std::move(begins), std::move(ends)};
    for (auto enter : barrier) r.threads.push_back({{"ibarrier", enter, leave}});
    return r;
  };
  const trace::MpiCall init{"MPI_Init", 0, 50, {}}, finalize{"MPI_Finalize", 900, 950, {}};
  const std::vector<trace::HybridRank> ranks{
      {{init, {"MPI_Send", 600, 610, {1}}, finalize}, {region(100, 520, {130, 110, 120}, {480, 490, 500}, {300, 200, 440}, 470)}},
      {{init, {"MPI_Recv", 90, 620, {0}}, finalize}, {region(700, 860, {715, 705, 710}, {830, 840, 835}, {800, 790, 780}, 820)}}};
  trace::write_hybrid_trace(dir.path.string(), "forkjoin", ranks, 3, 1000);
  trace::Trace t((dir.path / "forkjoin.otf2").string());
  const std::string parallel = "!$omp parallel @synthetic.c:1", barrier = "!$omp implicit barrier @synthetic.c:2";
  expect_root_causes(
      t,
      {
          {"delay_latesender", {{{0, barrier}, 30e-9}, {{0, parallel}, 250e-9}, {{0, "main"}, 90e-9}}},
          {"delay_latesender_longterm", {{{2, parallel}, 140e-9}}},
          {"delay_ompbarrier", {{{2, parallel}, 380e-9}, {{3, parallel}, 30e-9}}},
          {"delay_ompidle",
           {{{0, "MPI_Finalize"}, 100e-9}, {{3, "MPI_Finalize"}, 100e-9}, {{0, "MPI_Init"}, 100e-9},
            {{3, "MPI_Init"}, 100e-9}, {{3, "MPI_Recv"}, 40e-9}, {{0, "MPI_Send"}, 20e-9}, {{0, "main"}, 940e-9},
            {{3, "main"}, 420e-9}}},
          {"delay_ompidle_longterm",
           {{{0, barrier}, 60e-9}, {{0, parallel}, 500e-9}, {{2, parallel}, 280e-9}, {{0, "main"}, 180e-9}}},
          {"mpi_wait_indirect_latesender", {{{3, "MPI_Recv"}, 140e-9}}},
      },
      [](double v) { return 1e-9 * v; }, true);
}

TEST(RootCause, OffByDefault) {
  TempDir dir("rootcause_off");
  trace::Trace t(chain(dir));
  const auto p = analysis::analyze(t, t.all_locations());
  for (const auto& m : p.metrics) EXPECT_NE(m.uniq_name.rfind("delay_", 0), 0u) << m.uniq_name;
}

// With the time correction, the root causes of the corrected times: rank 2's clock runs 10 ticks
// behind, its first receive (no duration) moves to the send at 50 and every later event of rank 2
// with it; the same analysis of a trace written at the corrected times is the reference. (A second
// read on the recorded times would cut rank 2's time map at 500 with its MPI_Recv entered at 490.)
TEST(RootCause, WithTimeCorrectionOnTheCorrectedTimes) {
  TempDir dir("rootcause_corrected");
  const std::vector<trace::MpiCall> r0{{"MPI_Send", 50, 60, {2}}, {"MPI_Send", 3100, 3200, {1}}},
      r1{{"MPI_Recv", 100, 3200, {0}}, {"MPI_Send", 4200, 4300, {2}}};
  trace::Trace skewed(write(dir, {r0, r1, {{"MPI_Recv", 40, 40, {0}}, {"MPI_Recv", 490, 4290, {1}}}}, 4500, "skewed"));
  trace::Trace corrected(write(dir, {r0, r1, {{"MPI_Recv", 50, 50, {0}}, {"MPI_Recv", 500, 4300, {1}}}}, 4500, "corrected"));
  analysis::AnalysisOptions options;
  options.root_cause = true;
  const auto want = analysis::analyze(corrected, corrected.all_locations(), nullptr, options);
  options.time_correct = true;
  analysis::AnalysisStats stats;
  const auto got = analysis::analyze(skewed, skewed.all_locations(), &stats, options);
  EXPECT_EQ(stats.corrected_jumps, 1u);
  EXPECT_FALSE(by_call(want, "delay_latesender").empty());
  for (const auto* name : analysis::root_cause_metric_names()) {
    const auto a = by_call(got, name), b = by_call(want, name);
    ASSERT_EQ(a.size(), b.size()) << name;
    for (const auto& [key, v] : b) EXPECT_NEAR(a.at(key), v, 1e-15) << name << " " << key.first << " " << key.second;
  }
}

// Issue #26's former quadratic case (tests/test_analysis_root_cause.py, late_collectives
// "reduce"): the root of an MPI_Reduce waits for rank 1, the last sender, whose points name only
// the root, so every instance's group start is the trace start (rank 2 is the last sender in the
// last three iterations, then the root's waits are costs over all of its points since the start).
// The values are main's at d86a956 (its walk over every earlier point).
TEST(RootCause, GroupStartAtTheTraceStart) {
  TempDir dir("rootcause_reduce");
  const std::uint32_t iterations = 200;
  std::vector<std::vector<trace::MpiCall>> ranks(3, {{"MPI_Init", 0, 100, {}}});
  for (std::uint64_t i = 0; i < iterations; ++i) {
    const std::uint64_t t = 1000 + 1000 * i, j = (i * 7919) % 97;
    const bool last = i + 3 >= iterations;
    ranks[0].push_back({"MPI_Reduce", t + 100, t + 400 + j, {0}});
    ranks[1].push_back({"MPI_Send", t + 20, t + 30, {2}});
    ranks[1].push_back(last ? trace::MpiCall{"MPI_Reduce", t + 150, t + 200, {0}}
                            : trace::MpiCall{"MPI_Reduce", t + 300 + j, t + 350 + j, {0}});
    ranks[2].push_back({"MPI_Recv", t + 5, t + 40, {1}});
    ranks[2].push_back(last ? trace::MpiCall{"MPI_Reduce", t + 350 + j, t + 380 + j, {0}}
                            : trace::MpiCall{"MPI_Reduce", t + 200, t + 250, {0}});
  }
  const std::uint64_t end = 1000 * (iterations + 2);
  for (auto& r : ranks) r.push_back({"MPI_Finalize", end - 100, end - 50, {}});
  trace::Trace t(write(dir, ranks, end));
  const auto stats = expect_root_causes(
      t,
      {
          {"delay_latesender", {{{1, "main"}, 2.9760000000000004e-06}, {{1, "MPI_Reduce"}, 2.4000000000000003e-08}}},
          {"delay_n21",
           {{{1, "main"}, 4.7162831199394795e-05}, {{2, "main"}, 8.067577535820543e-07},
            {{2, "MPI_Recv"}, 6.013842652454048e-08}, {{1, "MPI_Send"}, 1.6381688006052124e-06}}},
          {"delay_n21_longterm",
           {{{1, "main"}, 2.2675010461135655e-08}, {{1, "MPI_Reduce"}, 2.242880943226964e-08}}},
      },
      [](double v) { return 1e-12 * v; });
  // Points: Init and Finalize on each rank, the Late Sender pairs, the Reduce's root and last sender.
  EXPECT_EQ(stats.root_cause_points, 3 * 2 + 2 * iterations + 2 * iterations);
}
