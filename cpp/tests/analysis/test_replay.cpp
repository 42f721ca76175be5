// The replay's per-rank steps without MPI: two Replay objects standing for two ranks, their
// record buffers exchanged by hand as an Alltoallv would, give the same pattern times on their
// locations as the one-process analysis; an unmatched send is found by the receiver's owner.
#include "cubescale/analysis/replay.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>

#include "cubescale/common/format_error.hpp"
#include "cubescale/trace/synthetic_mpi.hpp"
#include "trace_files.hpp"

namespace fs = std::filesystem;
using namespace cubescale;
using analysis_tests::TempDir;

namespace {

// Moves rank r's outgoing block k to rank k's incoming (the Alltoallv), returns per rank the
// records received from each rank.
template <typename Buffer>
std::vector<std::vector<std::uint64_t>> all_to_all(std::vector<Buffer*> out, std::vector<Buffer*> in,
                                                   const std::vector<std::vector<std::uint64_t>>& counts) {
  const auto ranks = out.size();
  std::vector<std::vector<std::uint64_t>> received(ranks, std::vector<std::uint64_t>(ranks));
  for (std::size_t to = 0; to < ranks; ++to) in[to]->clear();
  for (std::size_t to = 0; to < ranks; ++to)
    for (std::size_t from = 0; from < ranks; ++from) {
      std::size_t first = 0;
      for (std::size_t k = 0; k < to; ++k) first += counts[from][k];
      in[to]->insert(in[to]->end(), out[from]->begin() + first, out[from]->begin() + first + counts[from][to]);
      received[to][from] = counts[from][to];
    }
  return received;
}

double value(const profile::LocalProfile& p, const std::string& metric, std::size_t cnode, std::size_t column) {
  for (std::size_t m = 0; m < p.metrics.size(); ++m)
    if (p.metrics[m].uniq_name == metric) {
      double v;
      std::memcpy(&v, p.values[m].row(cnode) + column * 8, 8);
      return v;
    }
  return -1;
}

std::vector<profile::LocalProfile> replay(const trace::Trace& t, const std::vector<std::vector<std::uint32_t>>& shares) {
  const auto ranks = shares.size();
  std::vector<std::uint32_t> all, owner(t.definitions().locations.size(), analysis::kNone);
  for (std::size_t r = 0; r < ranks; ++r)
    for (auto l : shares[r]) all.push_back(l), owner[l] = static_cast<std::uint32_t>(r);
  std::vector<std::unique_ptr<analysis::Replay>> rank;
  for (const auto& share : shares) rank.push_back(std::make_unique<analysis::Replay>(t, all, share));
  std::vector<std::vector<std::uint64_t>> counts;
  for (auto& r : rank) counts.push_back(r->pack_sends(owner, ranks));
  std::vector<analysis::SendBuffer*> so, si;
  for (auto& r : rank) so.push_back(&r->outgoing_sends()), si.push_back(&r->incoming_sends());
  all_to_all(so, si, counts);
  for (auto& r : rank) r->match_messages();
  counts.clear();
  for (auto& r : rank) counts.push_back(r->pack_collectives(ranks));
  std::vector<std::vector<analysis::CollectiveRecord>*> co, ci;
  for (auto& r : rank) co.push_back(&r->outgoing_collectives()), ci.push_back(&r->incoming_collectives());
  const auto received = all_to_all(co, ci, counts);
  for (auto& r : rank) r->reduce_collectives();
  std::vector<std::vector<analysis::CollectiveReduction>*> ro, ri;
  for (auto& r : rank) ro.push_back(&r->home_reductions()), ri.push_back(&r->reductions());
  all_to_all(ro, ri, received);
  std::vector<bool> present(std::size_t(analysis::Pattern::Count), false);
  for (auto& r : rank) {
    r->collective_severities();
    for (std::size_t p = 0; p < present.size(); ++p) present[p] = present[p] || r->present()[p];
  }
  std::vector<profile::LocalProfile> out;
  for (auto& r : rank) out.push_back(r->finish(present));
  return out;
}

}  // namespace

TEST(Replay, TwoRanksGiveTheOneProcessTimes) {
  TempDir dir("two");
  trace::write_mpi_trace(dir.path.string(), "t",
                         {{{"MPI_Send", 100, 110, {1}}, {"MPI_Barrier", 1000, 1600, {}}, {"MPI_Bcast", 2000, 2500, {1}}},
                          {{"MPI_Recv", 20, 120, {0}}, {"MPI_Send", 130, 140, {2}}, {"MPI_Barrier", 1500, 1650, {}},
                           {"MPI_Bcast", 2400, 2500, {1}}},
                          {{"MPI_Recv", 30, 150, {1}}, {"MPI_Barrier", 1200, 1600, {}}, {"MPI_Bcast", 2100, 2500, {1}}}},
                         3000);
  trace::Trace t((dir.path / "t.otf2").string());
  const auto whole = analysis::analyze(t, {0, 1, 2});
  const auto parts = replay(t, {{0}, {1, 2}});
  ASSERT_EQ(parts.size(), 2u);
  for (const char* metric : {"mpi_latesender", "mpi_barrier_wait", "mpi_barrier_completion", "mpi_latebroadcast"}) {
    // Call paths are numbered per rank: compare the sums per location.
    for (std::size_t column = 0; column < 3; ++column) {
      const auto& part = column == 0 ? parts[0] : parts[1];
      const auto local = column == 0 ? 0 : column - 1;
      double a = 0, b = 0;
      for (std::size_t c = 0; c < whole.cnode_count(); ++c) a += value(whole, metric, c, column);
      for (std::size_t c = 0; c < part.cnode_count(); ++c) b += value(part, metric, c, local);
      EXPECT_DOUBLE_EQ(a, b) << metric << " at location " << column;
    }
  }
  // Both ranks carry the whole metric tree, also rank 0 without any receive.
  EXPECT_GE(value(parts[0], "mpi_latesender", 0, 0), 0.0);
}

TEST(Replay, UnreceivedSendIsFoundByTheReceiversOwner) {
  TempDir dir("unreceived");
  trace::write_mpi_trace(dir.path.string(), "t", {{{"MPI_Send", 10, 20, {1}, 3}}, {}}, 100);
  trace::Trace t((dir.path / "t.otf2").string());
  try {
    replay(t, {{0}, {1}});
    FAIL() << "no error";
  } catch (const FormatError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("0.evt"), std::string::npos) << what;
    EXPECT_NE(what.find("never received"), std::string::npos) << what;
  }
}
