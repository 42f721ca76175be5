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
#include "cubescale/common/format_error.hpp"
#include "cubescale/trace/profile.hpp"
#include "cubescale/trace/reader.hpp"
#include "cubescale/trace/synthetic_intercomm.hpp"
#include "raw_otf2.hpp"
#include "trace_files.hpp"

using namespace cubescale;
using analysis_tests::TempDir;

#if OTF2_VERSION_MAJOR >= 3
namespace {

// One rank's events (ns). Regions: 0 main, 1 MPI_Send, 2 MPI_Recv, 3 MPI_Barrier.
struct Call {
  std::uint32_t region;
  std::uint64_t enter, leave;
  std::uint32_t peer = 0;  // the message's peer: a rank of the other group
};

// Four processes; MPI_COMM_WORLD (communicator 0) and an inter-communicator (communicator 1)
// between groups A and B of world ranks as given (B undefined: `b_defined` false), for
// definitions the library's writer never makes. Every call on the inter-communicator: sends
// and receives with tag 5, barriers.
std::string write_raw_intercomm_trace(const std::filesystem::path& dir, const std::vector<std::vector<Call>>& ranks,
                                      const std::vector<std::uint64_t>& a, const std::vector<std::uint64_t>& b,
                                      bool b_defined = true) {
  auto* archive = analysis_tests::open_raw_archive(dir, "inter");
  std::vector<std::uint64_t> events(ranks.size());
  const std::uint64_t end = 1000;
  for (std::uint64_t r = 0; r < ranks.size(); ++r) {
    auto* w = OTF2_Archive_GetEvtWriter(archive, r);
    OTF2_EvtWriter_Enter(w, nullptr, 0, 0);
    for (const auto& c : ranks[r]) {
      OTF2_EvtWriter_Enter(w, nullptr, c.enter, c.region);
      if (c.region == 1) OTF2_EvtWriter_MpiSend(w, nullptr, c.enter, c.peer, 1, 5, 8);
      if (c.region == 2) OTF2_EvtWriter_MpiRecv(w, nullptr, c.leave, c.peer, 1, 5, 8);
      if (c.region == 3) {
        OTF2_EvtWriter_MpiCollectiveBegin(w, nullptr, c.enter);
        OTF2_EvtWriter_MpiCollectiveEnd(w, nullptr, c.leave, OTF2_COLLECTIVE_OP_BARRIER, 1, OTF2_UNDEFINED_UINT32, 0, 0);
      }
      OTF2_EvtWriter_Leave(w, nullptr, c.leave, c.region);
    }
    events[r] = analysis_tests::end_raw_location(archive, w, end);
  }
  analysis_tests::close_raw_events(archive, ranks.size());
  auto* g = analysis_tests::begin_raw_definitions(archive, end);
  const char* strings[] = {"MPI Rank", "Master thread", "MPI_COMM_WORLD", "MPI_INTERCOMM"};
  for (std::uint32_t i = 0; i < 4; ++i) OTF2_GlobalDefWriter_WriteString(g, 5 + i, strings[i]);
  std::vector<std::uint64_t> locations;
  for (std::uint64_t r = 0; r < ranks.size(); ++r) {
    OTF2_GlobalDefWriter_WriteLocationGroup(g, r, 5, OTF2_LOCATION_GROUP_TYPE_PROCESS, 0, OTF2_UNDEFINED_LOCATION_GROUP);
    OTF2_GlobalDefWriter_WriteLocation(g, r, 6, OTF2_LOCATION_TYPE_CPU_THREAD, events[r], r);
    locations.push_back(r);
  }
  const std::uint64_t world[] = {0, 1, 2, 3};
  OTF2_GlobalDefWriter_WriteGroup(g, 0, 7, OTF2_GROUP_TYPE_COMM_LOCATIONS, OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE, 4,
                                  locations.data());
  OTF2_GlobalDefWriter_WriteGroup(g, 1, 7, OTF2_GROUP_TYPE_COMM_GROUP, OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE, 4, world);
  OTF2_GlobalDefWriter_WriteGroup(g, 2, 8, OTF2_GROUP_TYPE_COMM_GROUP, OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE,
                                  static_cast<std::uint32_t>(a.size()), a.data());
  if (b_defined)
    OTF2_GlobalDefWriter_WriteGroup(g, 3, 8, OTF2_GROUP_TYPE_COMM_GROUP, OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE,
                                    static_cast<std::uint32_t>(b.size()), b.data());
  OTF2_GlobalDefWriter_WriteComm(g, 0, 7, 1, OTF2_UNDEFINED_COMM, OTF2_COMM_FLAG_NONE);
  OTF2_GlobalDefWriter_WriteInterComm(g, 1, 8, 2, b_defined ? 3 : OTF2_UNDEFINED_GROUP, 0, OTF2_COMM_FLAG_NONE);
  OTF2_Archive_CloseGlobalDefWriter(archive, g);
  OTF2_Archive_Close(archive);
  return (dir / "inter.otf2").string();
}

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

// A count metric's sum over call paths at a column.
std::uint64_t count(const profile::LocalProfile& p, const std::string& metric, std::size_t column) {
  for (std::size_t m = 0; m < p.metrics.size(); ++m) {
    if (p.metrics[m].uniq_name != metric) continue;
    std::uint64_t sum = 0;
    for (std::size_t c = 0; c < p.cnode_count(); ++c) {
      std::uint64_t v;
      std::memcpy(&v, p.values[m].row(c) + column * 8, 8);
      sum += v;
    }
    return sum;
  }
  return ~std::uint64_t(0);
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
  const std::uint64_t sent[] = {8, 0, 8, 0}, received[] = {0, 8, 0, 8};
  for (std::size_t l = 0; l < 4; ++l) {
    EXPECT_EQ(count(profile, "bytes_sent", l), sent[l]) << l;
    EXPECT_EQ(count(profile, "bytes_received", l), received[l]) << l;
  }
}

TEST(InterCommunicator, BrokenDefinitionsEndWithAFormatErrorAtTheEvent) {
  TempDir dir("intercomm-broken");
  const std::vector<std::vector<Call>> pair = {{{1, 100, 110, 0}}, {}, {{2, 50, 150, 0}}, {}};
  auto message_of = [](const std::string& anchor) {
    trace::Trace t(anchor);
    try {
      analysis::analyze(t, {0, 1, 2, 3});
    } catch (const FormatError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  // Group B undefined: not an intra-communicator of group A (world 0 naming rank 0 of A: itself).
  const auto undefined = (dir.path / "undefined").string();
  std::filesystem::create_directories(undefined);
  EXPECT_NE(message_of(write_raw_intercomm_trace(undefined, pair, {0, 1}, {2, 3}, false))
                .find("inter-communicator without its two groups"),
            std::string::npos);
  // World rank 0 sends, but the groups are {1} and {2, 3}: named at its event.
  const auto neither = (dir.path / "neither").string();
  std::filesystem::create_directories(neither);
  const auto text = message_of(write_raw_intercomm_trace(neither, pair, {1}, {2, 3}));
  EXPECT_NE(text.find("neither group"), std::string::npos) << text;
  EXPECT_NE(text.find("0.evt"), std::string::npos) << text;
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
