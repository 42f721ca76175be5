// scout's root-cause metrics (root_cause.hpp) on the worked example of docs/root-cause-design.md,
// section 7: a Late Sender chain over three processes (1 s of the example = 1000 ticks here; the
// example's `compute` is main's own time in the synthetic trace).
#include <gtest/gtest.h>

#include <stdexcept>

#include "cubescale/analysis/root_cause.hpp"
#include "cubescale/analysis/waitstates.hpp"
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

}  // namespace

TEST(RootCause, WorkedExampleLateSenderChain) {
  TempDir dir("rootcause_chain");
  trace::Trace t(chain(dir));
  analysis::AnalysisOptions options;
  options.root_cause = true;
  analysis::AnalysisStats stats;
  const auto p = analysis::analyze(t, t.all_locations(), &stats, options);
  using Values = std::map<std::pair<std::size_t, std::string>, double>;
  const std::map<std::string, Values> expected{
      {"delay_latesender", {{{0, "main"}, 3000e-9}, {{1, "main"}, 600e-9}, {{1, "MPI_Recv"}, 100e-9}}},
      {"delay_latesender_longterm", {{{0, "main"}, 3000e-9}}},
      {"mpi_wait_indirect_latesender", {{{2, "MPI_Recv"}, 3000e-9}}},
      {"mpi_wait_propagating_ls", {{{1, "MPI_Recv"}, 3000e-9}}},
  };
  for (const auto* name : analysis::root_cause_metric_names()) {
    const auto got = by_call(p, name);
    const auto it = expected.find(name);
    const Values want = it == expected.end() ? Values{} : it->second;
    ASSERT_EQ(got.size(), want.size()) << name;
    for (const auto& [key, v] : want) EXPECT_NEAR(got.at(key), v, 1e-15) << name << " " << key.first << " " << key.second;
  }
  // Sync points: r0 Init, Send, Finalize; r1 Init, Recv, Send, Finalize; r2 Init, Recv, Finalize.
  EXPECT_EQ(stats.root_cause_points, 10u);
}

TEST(RootCause, OffByDefaultAndNotWithTimeCorrection) {
  TempDir dir("rootcause_off");
  trace::Trace t(chain(dir));
  const auto p = analysis::analyze(t, t.all_locations());
  for (const auto& m : p.metrics) EXPECT_NE(m.uniq_name.rfind("delay_", 0), 0u) << m.uniq_name;
  analysis::AnalysisOptions options;
  options.root_cause = options.time_correct = true;
  EXPECT_THROW(analysis::analyze(t, t.all_locations(), nullptr, options), std::invalid_argument);
}
