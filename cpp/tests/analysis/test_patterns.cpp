// Late Receiver, clock-condition checks and time correction on synthetic MPI traces with
// stated timings; the per-location Late Receiver given what its receives tell.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <map>

#include "cubescale/analysis/clock_condition.hpp"
#include "cubescale/analysis/late_receiver.hpp"
#include "cubescale/analysis/time_correct.hpp"
#include "cubescale/analysis/waitstates.hpp"
#include "cubescale/common/format_error.hpp"
#include "cubescale/trace/synthetic_mpi.hpp"
#include "trace_files.hpp"

namespace fs = std::filesystem;
using namespace cubescale;
using namespace cubescale::analysis_tests;

TEST(LateReceiver, SynchronousSendWaitAndWaitall) {
  TempDir dir("lr");
  const auto path = write(dir,
                          {{{"MPI_Ssend", 100, 500, {1}}, {"MPI_Isend", 1000, 1010, {1}, 1}, {"MPI_Wait", 1100, 1500, {}},
                            {"MPI_Isend", 2000, 2010, {1}, 2}, {"MPI_Isend", 2020, 2030, {2}, 2},
                            {"MPI_Waitall", 2100, 2600, {}}},
                           {{"MPI_Recv", 400, 510, {0}}, {"MPI_Irecv", 1300, 1310, {0}, 1}, {"MPI_Wait", 1400, 1450, {0}, 1},
                            {"MPI_Recv", 2300, 2610, {0}, 2}},
                           {{"MPI_Recv", 2400, 2620, {0}, 2}}},
                          3000);
  trace::Trace t(path);
  analysis::AnalysisStats stats;
  const auto p = analysis::analyze(t, t.all_locations(), &stats);
  const auto lr = by_call(p, "mpi_latereceiver");
  ASSERT_EQ(lr.size(), 3u);
  EXPECT_NEAR(lr.at({0, "MPI_Ssend"}), 300e-9, 1e-18);
  EXPECT_NEAR(lr.at({0, "MPI_Wait"}), 200e-9, 1e-18);
  EXPECT_NEAR(lr.at({0, "MPI_Waitall"}), 300e-9, 1e-18);
  const auto& s = stats.patterns[std::size_t(analysis::Pattern::LateReceiver)];
  EXPECT_EQ(s.count, 3u);
  EXPECT_EQ(s.sum, 800u);
  ASSERT_EQ(s.top.size(), 3u);
  EXPECT_EQ(s.top[0].ticks, 300u);
  EXPECT_EQ(s.top[2].enter, 1100u);
}

// The per-location computation needs nothing but its own records and, per send, its receive's
// posting time: what a distributed replay passes.
TEST(LateReceiver, PerLocationFromPostingTimes) {
  analysis::LocationRecords own;
  own.location = 0;
  own.sends.resize(3);
  analysis::PointToPointExtras x;
  x.location = 0;
  x.sends = {{100, 500, 1, 1, analysis::SendCompletionKind::Blocking},
             {600, 900, 2, 2, analysis::SendCompletionKind::WaitMulti},
             {600, 900, 2, 2, analysis::SendCompletionKind::WaitMulti}};
  analysis::Severities sev;
  sev.cnodes = 3;
  sev.locations = 1;
  sev.values.assign(std::size_t(analysis::Pattern::Count), std::vector<double>(3, 0.0));
  sev.present.assign(std::size_t(analysis::Pattern::Count), false);
  // posted inside the Ssend (+150), inside the Waitall (+100, +250: the largest counts)
  analysis::late_receiver(own, x, {250, 700, 850}, {}, 0, 1.0, sev);
  const auto& v = sev.values[std::size_t(analysis::Pattern::LateReceiver)];
  EXPECT_EQ(v[1], 150.0);
  EXPECT_EQ(v[2], 250.0);
  // a receive posted before the send or after it completed: no wait
  std::fill(sev.values[std::size_t(analysis::Pattern::LateReceiver)].begin(),
            sev.values[std::size_t(analysis::Pattern::LateReceiver)].end(), 0.0);
  analysis::late_receiver(own, x, {50, 900, analysis::kNoTime}, {}, 0, 1.0, sev);
  EXPECT_EQ(v[1] + v[2], 0.0);
}

TEST(ClockCondition, CountsAndTimeCorrection) {
  TempDir dir("clc");
  const auto path = write(dir,
                          {{{"MPI_Send", 100, 110, {1}}, {"MPI_Barrier", 300, 400, {}}},
                           {{"MPI_Recv", 50, 90, {0}}, {"MPI_Barrier", 420, 430, {}}}},
                          500);
  trace::Trace t(path);
  analysis::AnalysisStats stats;
  auto p = analysis::analyze(t, t.all_locations(), &stats);
  EXPECT_EQ(stats.p2p_violations, 1u);
  EXPECT_EQ(stats.collective_violations, 1u);
  const auto counted = by_call(p, "clock_violations");
  ASSERT_EQ(counted.size(), 2u);
  EXPECT_EQ(counted.at({1, "MPI_Recv"}), 1.0);
  EXPECT_EQ(counted.at({0, "MPI_Barrier"}), 1.0);
  p = analysis::analyze(t, t.all_locations(), &stats, {true, 0.0});
  EXPECT_EQ(stats.corrected_jumps, 2u);
  EXPECT_TRUE(by_call(p, "clock_violations").empty());
  EXPECT_NEAR(by_call(p, "mpi_latesender").at({1, "MPI_Recv"}), 50e-9, 1e-18);
  EXPECT_NEAR(by_call(p, "mpi_barrier_wait").at({0, "MPI_Barrier"}), 130e-9, 1e-18);
}

TEST(ClockCondition, CollectiveRules) {
  EXPECT_EQ(analysis::sync_rule(0), analysis::SyncRule::AllEnter);         // barrier
  EXPECT_EQ(analysis::sync_rule(1), analysis::SyncRule::RootEnter);        // bcast
  EXPECT_EQ(analysis::sync_rule(3), analysis::SyncRule::AllEnterAtRoot);   // gatherv
  EXPECT_EQ(analysis::sync_rule(14), analysis::SyncRule::EnterUpToMine);   // scan
  EXPECT_EQ(analysis::sync_rule(analysis::kInitOp), analysis::SyncRule::AllEnter);
  // A broadcast's non-root may leave before another non-root enters; not before the root.
  TempDir dir("bcast");
  const auto path = write(dir,
                          {{{"MPI_Bcast", 100, 110, {0}}}, {{"MPI_Bcast", 50, 90, {0}}}, {{"MPI_Bcast", 200, 210, {0}}}},
                          500);
  trace::Trace t(path);
  analysis::AnalysisStats stats;
  analysis::analyze(t, t.all_locations(), &stats);
  EXPECT_EQ(stats.collective_violations, 1u);  // rank 1 left at 90, the root entered at 100
}

TEST(ClockCondition, CycleRaisesFormatError) {
  TempDir dir("cycle");
  const auto path = write(dir, {{{"MPI_Recv", 0, 50, {1}}, {"MPI_Send", 60, 70, {1}}},
                                {{"MPI_Recv", 0, 50, {0}}, {"MPI_Send", 60, 70, {0}}}},
                          100);
  trace::Trace t(path);
  try {
    analysis::analyze(t, t.all_locations(), nullptr, {true, 0.0});
    FAIL() << "no error";
  } catch (const FormatError& e) {
    EXPECT_NE(std::string(e.what()).find("cannot be corrected"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(".evt"), std::string::npos) << e.what();
  }
}
