// Wait-state analysis: records and pattern times on synthetic MPI traces with stated timings,
// FormatError on inconsistent ones, the shared late-sender-barrier trace.
#include "cubescale/analysis/waitstates.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <map>

#include "cubescale/common/format_error.hpp"
#include "cubescale/cube/dtype.hpp"
#include "cubescale/trace/synthetic_mpi.hpp"
#include "trace_files.hpp"

namespace fs = std::filesystem;
using namespace cubescale;
using namespace cubescale::analysis_tests;

TEST(WaitStates, LateSenderChainAndWaitall) {
  TempDir dir("ls");
  const auto path = write(dir,
                          {{{"MPI_Send", 100, 110, {1}}, {"MPI_Send", 500, 510, {2}}},
                           {{"MPI_Recv", 20, 120, {0}}, {"MPI_Send", 130, 140, {2}}},
                           {{"MPI_Recv", 30, 150, {1}}, {"MPI_Waitall", 400, 600, {0}}}},
                          1000);
  trace::Trace t(path);
  analysis::AnalysisStats stats;
  const auto p = analysis::analyze(t, t.all_locations(), &stats);
  EXPECT_EQ(stats.messages, 6u);
  const auto late = by_call(p, "mpi_latesender");
  ASSERT_EQ(late.size(), 3u);
  EXPECT_NEAR(late.at({1, "MPI_Recv"}), 80e-9, 1e-18);
  EXPECT_NEAR(late.at({2, "MPI_Recv"}), 100e-9, 1e-18);
  EXPECT_NEAR(late.at({2, "MPI_Waitall"}), 100e-9, 1e-18);
}

TEST(WaitStates, Collectives) {
  TempDir dir("coll");
  const auto path = write(dir,
                          {{{"MPI_Barrier", 100, 600, {}}, {"MPI_Bcast", 700, 900, {1}}, {"MPI_Reduce", 1000, 1400, {0}},
                            {"MPI_Alltoall", 1500, 1800, {}}},
                           {{"MPI_Barrier", 500, 600, {}}, {"MPI_Bcast", 800, 900, {1}}, {"MPI_Reduce", 1300, 1400, {0}},
                            {"MPI_Alltoall", 1700, 1800, {}}}},
                          2000);
  trace::Trace t(path);
  const auto p = analysis::analyze(t, t.all_locations());
  auto only = [&](const char* metric, const char* region, double seconds) {
    const auto got = by_call(p, metric);
    ASSERT_EQ(got.size(), 1u) << metric;
    EXPECT_EQ(got.begin()->first, std::make_pair(std::size_t(0), std::string(region))) << metric;
    EXPECT_NEAR(got.begin()->second, seconds, 1e-18) << metric;
  };
  only("mpi_barrier_wait", "MPI_Barrier", 400e-9);
  only("mpi_latebroadcast", "MPI_Bcast", 100e-9);  // rank 0 waits for the root, rank 1
  only("mpi_earlyreduce", "MPI_Reduce", 300e-9);   // the root, rank 0, waits for rank 1
  only("mpi_wait_nxn", "MPI_Alltoall", 200e-9);
}

TEST(WaitStates, InconsistentTracesNameLocationEventAndTime) {
  TempDir dir("bad");
  const auto path = write(dir, {{{"MPI_Barrier", 10, 20, {}}}, {{"MPI_Recv", 10, 30, {0}}}}, 100);
  trace::Trace t(path);
  try {
    analysis::analyze(t, t.all_locations());
    FAIL() << "no FormatError";
  } catch (const FormatError& e) {
    const std::string what = e.what();
    EXPECT_NE(e.member().find("1.evt"), std::string::npos) << what;
    EXPECT_EQ(e.offset(), 3u) << what;  // Enter main, Enter MPI_Recv, MPI_RECV
    EXPECT_NE(what.find("without a matching send"), std::string::npos) << what;
    EXPECT_NE(what.find("at 0.000000030 s"), std::string::npos) << what;  // 30 ticks of a nanosecond clock
  }
}

TEST(WaitStates, SharedLateSenderBarrier) {
  trace::Trace t(std::string(CUBESCALE_SHARED_DATA) + "/otf2/late-sender-barrier/traces.otf2");
  const auto p = analysis::analyze(t, t.all_locations());
  const auto late = by_call(p, "mpi_latesender");
  ASSERT_EQ(late.size(), 3u);  // ranks 1, 2, 3 wait in MPI_Recv, each longer than the one before
  double previous = 0;
  for (std::size_t l = 1; l < 4; ++l) {
    const double v = late.at({l, "MPI_Recv"});
    EXPECT_GT(v, previous);
    previous = v;
  }
  EXPECT_EQ(by_call(p, "mpi_barrier_wait").count({0, "MPI_Barrier"}), 0u);  // rank 0 comes last
}

TEST(WaitStates, CommunicatorRanksOrderMembersByRank) {
  // MPI_COMM_REVERSED ranks process p as 2 - p: its members come in the order 2, 1, 0, as the
  // patterns take them and collective_sync needs them (scans: "ranked up to mine").
  TempDir dir("ranks");
  const auto path = write(dir,
                          {{{"MPI_Scan", 100, 400, {}, 2}, {"MPI_Barrier", 500, 600, {}, 1}},
                           {{"MPI_Scan", 300, 400, {}, 2}},
                           {{"MPI_Scan", 150, 250, {}, 2}}},
                          1000);
  trace::Trace t(path);
  const auto& defs = t.definitions();
  auto comm = [&](const std::string& name) {
    for (std::uint32_t c = 0; c < defs.communicators.size(); ++c)
      if (defs.communicators[c].name == name) return c;
    ADD_FAILURE() << name;
    return analysis::kNone;
  };
  const analysis::CommunicatorRanks ranks(defs);
  const auto reversed = comm("MPI_COMM_REVERSED"), world = comm("MPI_COMM_WORLD"), self = comm("MPI_COMM_SELF");
  for (std::uint32_t l = 0; l < 3; ++l) {
    EXPECT_EQ(ranks.rank(reversed, l), 2 - l);
    EXPECT_EQ(ranks.rank(world, l), l);
    EXPECT_EQ(ranks.rank(analysis::kInitCommunicator, l), l);  // MPI_Init/Finalize: MPI_COMM_WORLD's ranks
    EXPECT_EQ(ranks.rank(self, l), analysis::kNone);           // one member: no order to keep
  }
  EXPECT_TRUE(ranks.before(reversed, 2, 0));
  EXPECT_FALSE(ranks.before(reversed, 0, 1));
  EXPECT_TRUE(ranks.before(self, 0, 1));  // no rank: location order
  EXPECT_EQ(ranks.rank(reversed, 7), analysis::kNone);
}

// Scalasca 2.6's execution leaves the measurement's own time out (scout.spec's overhead mask:
// TRACE BUFFER FLUSH, TRACING, an accelerator's BUFFER FLUSH): it goes to `overhead` beside it
// (until 2026-11-28 execution was all of time). A profile main (10 s inclusive) > MPI_Barrier
// (3 s), TRACE BUFFER FLUSH (2 s) on one location.
TEST(WaitStates, ExecutionLeavesTheMeasurementOverheadOut) {
  const auto dtype = *cube::parse_data_type("DOUBLE");
  profile::LocalProfile p;
  cube::Metric time;
  time.uniq_name = time.disp_name = "time";
  time.dtype = dtype, time.kind = cube::MetricKind::Inclusive, time.uom = "sec";
  p.metrics = {time};
  for (const auto& [name, paradigm] : {std::pair{"main", "user"}, {"MPI_Barrier", "mpi"},
                                      {"TRACE BUFFER FLUSH", "measurement"}}) {
    cube::Region r;
    r.name = r.mangled_name = name, r.paradigm = paradigm;
    p.regions.push_back(r);
  }
  p.cnode_parents = {cube::kNoParent, 0, 0};
  p.cnode_regions = {0, 1, 2};
  p.locations = {{"Master thread", "thread"}};
  cube::Severity s(dtype, 3, 1);
  const double inclusive[] = {10, 3, 2};
  for (std::size_t c = 0; c < 3; ++c) std::memcpy(s.row(c), &inclusive[c], 8);
  p.values.push_back(std::move(s));
  analysis::Severities sev(3, {0}, 1);
  auto present = sev.present;
  present[std::size_t(analysis::Pattern::BarrierWait)] = true;
  const auto out = analysis::with_metric_tree(p, sev, present);
  auto values = [&](const char* name) {
    for (std::size_t m = 0; m < out.metrics.size(); ++m)
      if (out.metrics[m].uniq_name == name) {
        std::vector<double> v(3);
        for (std::size_t c = 0; c < 3; ++c) std::memcpy(&v[c], out.values[m].row(c), 8);
        EXPECT_EQ(out.metrics[out.metrics[m].parent].uniq_name, "time") << name;
        return v;
      }
    ADD_FAILURE() << "no " << name;
    return std::vector<double>(3);
  };
  EXPECT_EQ(values("execution"), (std::vector<double>{5, 3, 0}));
  EXPECT_EQ(values("overhead"), (std::vector<double>{0, 0, 2}));
}
