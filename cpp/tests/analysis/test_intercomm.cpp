// MPI inter-communicators (OTF2 3's InterComm definition, Score-P 8 and later): a message's peer
// is a rank of the other group; collectives on them get no pattern, and no error.
#include <gtest/gtest.h>
#include <otf2/otf2.h>

#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "cubescale/analysis/waitstates.hpp"
#include "cubescale/trace/profile.hpp"
#include "cubescale/trace/reader.hpp"
#include "cubescale/trace/synthetic_intercomm.hpp"
#include "trace_files.hpp"

using namespace cubescale;
using analysis_tests::TempDir;

#if OTF2_VERSION_MAJOR >= 3
namespace {

// A metric's sum over call paths at a column (seconds).
double total(const profile::LocalProfile& p, const std::string& metric, std::size_t column) {
  for (std::size_t m = 0; m < p.metrics.size(); ++m) {
    if (p.metrics[m].uniq_name != metric) continue;
    double sum = 0;
    for (std::size_t c = 0; c < p.cnode_count(); ++c) {
      double v;
      std::memcpy(&v, p.values[m].row(c) + column * 8, 8);
      sum += v;
    }
    return sum;
  }
  return -1;
}

}  // namespace

TEST(InterCommunicator, MessagesFindTheirPeerInTheOtherGroupAndCollectivesGetNoPattern) {
  TempDir dir("intercomm");
  // World rank 0 (group A, rank 0) sends at 100 to group B's rank 1 (world 3), which waits
  // from 50: a Late Sender of 50 ns there. World 2 (group B, rank 0) sends at 400 to group A's
  // rank 1 (world 1), waiting from 300: 100 ns. All four meet in a barrier on the
  // inter-communicator, whose imbalance no pattern counts (no record, no error).
  const std::vector<std::vector<trace::InterCommCall>> ranks = {
      {{"MPI_Send", 100, 110, 1}, {"MPI_Barrier", 600, 700}},
      {{"MPI_Recv", 300, 450, 0}, {"MPI_Barrier", 500, 700}},
      {{"MPI_Send", 400, 410, 1}, {"MPI_Barrier", 550, 700}},
      {{"MPI_Recv", 50, 150, 0}, {"MPI_Barrier", 650, 700}}};
  trace::write_intercomm_trace(dir.path.string(), "inter", ranks, 2, 1000);
  trace::Trace t((dir.path / "inter.otf2").string());
  const auto& comm = t.definitions().communicators.at(1);
  EXPECT_EQ(comm.name, "MPI_INTERCOMM");
  EXPECT_NE(comm.remote_group, analysis::kNone);
  const auto report = analysis::analyze(t, {0, 1, 2, 3});
  const double late[] = {0, 100e-9, 0, 50e-9};
  for (std::size_t l = 0; l < 4; ++l) EXPECT_NEAR(total(report, "mpi_latesender", l), late[l], 1e-15) << l;
  for (const auto& m : report.metrics) EXPECT_NE(m.uniq_name, "mpi_barrier_wait");
  // The profile counts the messages' bytes on their call paths as for any communicator.
  const auto profile = trace::trace_profile(t, {0, 1, 2, 3}, nullptr, nullptr);
  EXPECT_EQ(profile.locations.size(), 4u);
}

TEST(InterCommunicator, WriterRefusesWhatTheDefinitionsCannotSay) {
  TempDir dir("intercomm-bad");
  const std::vector<std::vector<trace::InterCommCall>> two = {{{"MPI_Send", 1, 2, 1}}, {}};  // B has one rank
  EXPECT_THROW(trace::write_intercomm_trace(dir.path.string(), "x", two, 1, 10), std::invalid_argument);
  EXPECT_THROW(trace::write_intercomm_trace(dir.path.string(), "x", {{}, {}}, 2, 10), std::invalid_argument);
  EXPECT_THROW(trace::write_intercomm_trace(dir.path.string(), "x", {{{"MPI_Bcast", 1, 2}}, {}}, 1, 10),
               std::invalid_argument);
}
#endif
