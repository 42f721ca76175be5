// The replay's per-rank steps without MPI: two Replay objects standing for two ranks, their
// record buffers exchanged by hand as an Alltoallv would, give the same pattern times on their
// locations as the one-process analysis; an unmatched send is found by the receiver's owner.
#include "cubescale/analysis/replay.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <memory>
#include <tuple>

#include "cubescale/analysis/impact.hpp"
#include "cubescale/analysis/replay_beside.hpp"
#include "cubescale/common/format_error.hpp"
#include "cubescale/trace/synthetic.hpp"
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

// One kind's Alltoallv of the time correction by the planned layout (DistributedCorrection::
// layout: per kind counts sent, displacements, counts received, displacements), into the
// receive buffers size_round sized; `buffers(rank)`: (its outgoing, its incoming) of the kind.
template <typename Buffers>
void alltoallv_planned(std::vector<std::unique_ptr<analysis::Replay>>& rank, std::size_t kind, Buffers buffers) {
  const auto n = rank.size();
  for (std::size_t from = 0; from < n; ++from) {
    const auto& sender = rank[from]->correction().layout;
    auto [out, unused_in] = buffers(*rank[from]);
    for (std::size_t to = 0; to < n; ++to) {
      const auto& receiver = rank[to]->correction().layout;
      auto [unused_out, in] = buffers(*rank[to]);
      const auto count = sender[(kind * 4 + 0) * n + to];
      ASSERT_EQ(count, receiver[(kind * 4 + 2) * n + from]);
      ASSERT_LE(std::size_t(receiver[(kind * 4 + 3) * n + from] + count), in.size());
      std::copy_n(out.begin() + sender[(kind * 4 + 1) * n + to], count, in.begin() + receiver[(kind * 4 + 3) * n + from]);
    }
  }
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

// --- the complete steps (analysis/replay_beside.hpp) -------------------------------------------

namespace {

// Every step of Replay(..., complete=true) for the ranks' shares, exchanged by hand as
// parallel/analysis.py does over mpi4py.
std::vector<profile::LocalProfile> replay_complete(const trace::Trace& t,
                                                   const std::vector<std::vector<std::uint32_t>>& shares,
                                                   bool time_correct = false, std::size_t threads = 1,
                                                   std::uint64_t chunk_records = 0,
                                                   std::vector<std::vector<analysis::PatternStatistics>>* statistics = nullptr) {
  using namespace analysis;
  const auto ranks = shares.size();
  std::vector<std::uint32_t> all, owner(t.definitions().locations.size(), kNone), homes;
  for (std::size_t r = 0; r < ranks; ++r) {
    for (auto l : shares[r]) all.push_back(l), owner[l] = static_cast<std::uint32_t>(r);
    if (!shares[r].empty()) homes.push_back(static_cast<std::uint32_t>(r));
  }
  std::vector<std::unique_ptr<Replay>> rank;
  for (const auto& share : shares)
    // On threads, the steps after the pass cut even these few records into chunks.
    rank.push_back(std::make_unique<Replay>(t, all, share, true, 0.0, std::nullopt, threads, chunk_records ? chunk_records : threads > 1 ? 1 : Chunking{}.least));
  auto each = [&](auto f) {
    for (auto& r : rank) f(*r);
  };
  // Moves every rank's outgoing buffer (get_out) to the incoming ones (get_in); returns the counts received.
  auto exchange = [&](const std::vector<std::vector<std::uint64_t>>& counts, auto get_out, auto get_in) {
    using V = std::remove_reference_t<decltype(get_out(*rank[0]))>;
    std::vector<V*> out, in;
    for (auto& r : rank) out.push_back(&get_out(*r)), in.push_back(&get_in(*r));
    return all_to_all(out, in, counts);
  };
  std::vector<std::vector<std::uint64_t>> counts;
  if (time_correct) {
    for (std::uint32_t r = 0; r < ranks; ++r) counts.push_back(rank[r]->begin_correction(owner, ranks, r, homes));
    exchange(counts, [](Replay& r) -> auto& { return r.correction().outgoing_members; },
             [](Replay& r) -> auto& { return r.correction().incoming_members; });
    each([](Replay& r) { r.take_members(); });
    for (bool counted = false;;) {
      // A round as parallel/analysis.py runs it: the rows by an Alltoall, the plan, an Alltoallv per kind sent.
      each([](Replay& r) { r.correct_round(); });
      const auto row = rank[0]->correction().row;
      for (std::size_t to = 0; to < ranks; ++to)
        for (std::size_t from = 0; from < ranks; ++from)
          std::copy_n(&rank[from]->correction().rows[to * row], row, &rank[to]->correction().received[from * row]);
      const auto state = rank[0]->plan_round();
      for (std::size_t r = 1; r < ranks; ++r) EXPECT_EQ(rank[r]->plan_round(), state);  // every rank plans alike
      if (state >> 2) {
        each([](Replay& r) { r.size_round(); });
        alltoallv_planned(rank, 0, [](Replay& r) { return std::tie(r.correction().outgoing_sends, r.correction().incoming_sends); });
        alltoallv_planned(rank, 1, [](Replay& r) { return std::tie(r.correction().outgoing_enters, r.correction().incoming_enters); });
        alltoallv_planned(rank, 2, [](Replay& r) {
          return std::tie(r.correction().outgoing_references, r.correction().incoming_references);
        });
      }
      each([](Replay& r) { r.take_values(); });
      const bool moved = state & 1u;
      if (moved) continue;
      const bool pending = state & 2u;
      if (!pending || counted) break;
      // A stall with events left (a receive without a send, or a cycle), once: the send counts.
      counts.clear();
      for (auto& r : rank) counts.push_back(r->pack_send_counts());
      exchange(counts, [](Replay& r) -> auto& { return r.correction().outgoing_counts; },
               [](Replay& r) -> auto& { return r.correction().incoming_counts; });
      each([](Replay& r) { r.take_send_counts(); });
      counted = true;
    }
    each([](Replay& r) { r.finish_correction(); });
  }
  // The message exchange in rounds of at most 2 sends (and at least Replay::kMinRounds).
  counts.clear();
  for (auto& r : rank) counts.push_back(r->begin_sends(owner, ranks));
  std::uint64_t rounds = 0;
  for (std::size_t to = 0; to < ranks; ++to) {
    std::uint64_t total = 0;
    for (std::size_t from = 0; from < ranks; ++from) total += counts[from][to];
    rank[to]->expect_sends(total);
    rounds = std::max(rounds, rank[to]->send_rounds(2 * sizeof(SendRecord)));
  }
  for (std::uint64_t k = 0; k < rounds; ++k) {
    counts.clear();
    for (auto& r : rank) counts.push_back(r->pack_round());
    std::vector<std::vector<std::uint64_t>> sent(ranks, std::vector<std::uint64_t>(ranks, 0));
    for (std::size_t to = 0; to < ranks; ++to) {
      std::uint64_t n = 0;
      for (std::size_t from = 0; from < ranks; ++from) n += sent[to][from] = counts[from][to];
      auto* in = rank[to]->incoming_round(n);
      for (std::size_t from = 0; from < ranks; ++from) {
        std::size_t first = 0;
        for (std::size_t j = 0; j < to; ++j) first += counts[from][j];
        const auto& out = rank[from]->outgoing_sends();
        in = std::copy(out.begin() + first, out.begin() + first + counts[from][to], in);
      }
    }
    each([](Replay& r) { r.answer_round(); });
    exchange(sent, [](Replay& r) -> auto& { return r.home_posted(); }, [](Replay& r) -> auto& { return r.posted(); });
    each([](Replay& r) { r.late_receiver_round(); });
  }
  each([](Replay& r) { r.messages_beside(); });
  each([](Replay& r) { r.match_messages(); });
  each([](Replay& r) { r.late_receiver(); });
  counts.clear();
  for (auto& r : rank) counts.push_back(r->pack_collectives(ranks, homes));
  auto received = exchange(counts, [](Replay& r) -> auto& { return r.outgoing_collectives(); },
                           [](Replay& r) -> auto& { return r.incoming_collectives(); });
  each([](Replay& r) { r.collectives_beside_home(); });
  exchange(received, [](Replay& r) -> auto& { return r.home_extras(); }, [](Replay& r) -> auto& { return r.extras(); });
  each([](Replay& r) { r.collectives_beside(); });
  each([](Replay& r) { r.reduce_collectives(); });
  exchange(received, [](Replay& r) -> auto& { return r.home_reductions(); },
           [](Replay& r) -> auto& { return r.reductions(); });
  each([](Replay& r) { r.collective_severities(); });
  each([](Replay& r) { r.late_receiver_after(); });
  std::vector<std::uint32_t> triples;
  for (auto& r : rank) {
    const auto mine = r->nonblocking_counts();
    triples.insert(triples.end(), mine.begin(), mine.end());
  }
  each([&](Replay& r) { r.check_nonblocking_counts(triples); });
  counts.clear();
  for (auto& r : rank) counts.push_back(r->pack_nonblocking(ranks, homes));
  received = exchange(counts, [](Replay& r) -> auto& { return r.outgoing_nonblocking(); },
                      [](Replay& r) -> auto& { return r.incoming_nonblocking(); });
  each([](Replay& r) { r.reduce_nonblocking(); });
  exchange(received, [](Replay& r) -> auto& { return r.home_verdicts(); }, [](Replay& r) -> auto& { return r.verdicts(); });
  each([](Replay& r) { r.nonblocking_after(); });
  // The critical path: between MPI_Init and MPI_Finalize where every process has them, from
  // the latest MPI_Finalize enter or last Leave (first of equals), then the walk hands over.
  std::size_t init_members = 0, finalize_members = 0;
  for (auto& r : rank) {
    const auto [i, f] = r->path_window_members();
    init_members += i, finalize_members += f;
  }
  each([&](Replay& r) { r.set_path_window(init_members, finalize_members); });
  bool any = false;
  for (auto& r : rank) any = any || r->any_records();
  std::pair<std::uint64_t, std::uint32_t> start{0, kNone};
  for (auto& r : rank) {
    const auto c = r->path_start(any);
    if (c.second != kNone && (start.second == kNone || c.first > start.first ||
                              (c.first == start.first && c.second < start.second)))
      start = c;
  }
  if (start.second != kNone)
    for (std::pair<std::uint32_t, std::uint64_t> at{all[start.second], start.first}; at.first != kNone;)
      at = rank[owner[at.first]]->walk(at.first, at.second);
  std::vector<bool> present;
  for (auto& r : rank) {
    const auto p = r->present_complete();
    present.resize(p.size(), false);
    for (std::size_t k = 0; k < p.size(); ++k) present[k] = present[k] || p[k];
  }
  std::vector<profile::LocalProfile> out;
  for (auto& r : rank) out.push_back(r->finish_complete(present));
  if (statistics)
    for (auto& r : rank) statistics->push_back(r->pattern_statistics());
  // scout's performance impact: the per-call-path sums of every rank, merged (impact.hpp).
  std::vector<std::string> blobs;
  for (const auto& p : out) blobs.push_back(analysis::impact_path_sums(p));
  const auto paths = analysis::merge_impact(blobs);
  blobs.clear();
  for (std::size_t r = 0; r < out.size(); ++r) blobs.push_back(analysis::impact_costs(out[r], paths, rank[r]->program_spans()));
  const auto costs = analysis::merge_impact(blobs);
  for (auto& p : out) analysis::add_impact(p, paths, costs);
  return out;
}

// Sum over call paths of a metric at a column, doubles or (UINT64) counts.
double total(const profile::LocalProfile& p, const std::string& metric, std::size_t column) {
  for (std::size_t m = 0; m < p.metrics.size(); ++m) {
    if (p.metrics[m].uniq_name != metric) continue;
    const bool counts = p.metrics[m].uom == "occ";
    double sum = 0;
    for (std::size_t c = 0; c < p.cnode_count(); ++c) {
      const auto* cell = p.values[m].row(c) + column * 8;
      if (counts) {
        std::uint64_t v;
        std::memcpy(&v, cell, 8);
        sum += static_cast<double>(v);
      } else {
        double v;
        std::memcpy(&v, cell, 8);
        sum += v;
      }
    }
    return sum;
  }
  return -1;
}

void expect_same_as_one_process(const trace::Trace& t, const std::vector<std::vector<std::uint32_t>>& shares,
                                const std::vector<std::string>& metrics, bool time_correct = false,
                                std::size_t threads = 1) {
  std::vector<std::uint32_t> all;
  for (const auto& s : shares) all.insert(all.end(), s.begin(), s.end());
  analysis::AnalysisOptions options;
  options.time_correct = time_correct;
  const auto whole = analysis::analyze(t, all, nullptr, options);
  const auto parts = replay_complete(t, shares, time_correct, threads);
  std::vector<std::string> names;
  for (const auto& m : whole.metrics) names.push_back(m.uniq_name);
  for (const auto& part : parts) {
    std::vector<std::string> mine;
    for (const auto& m : part.metrics) mine.push_back(m.uniq_name);
    EXPECT_EQ(mine, names);  // every rank carries the whole metric tree, in the same order
  }
  std::size_t column = 0;
  for (std::size_t r = 0; r < shares.size(); ++r)
    for (std::size_t local = 0; local < shares[r].size(); ++local, ++column)
      for (const auto& metric : metrics) {
        EXPECT_GE(total(whole, metric, column), 0.0) << metric;
        EXPECT_DOUBLE_EQ(total(whole, metric, column), total(parts[r], metric, local)) << metric << " at " << column;
      }
}

}  // namespace

TEST(ReplayComplete, LateReceiverCriticalPathAndCountsAsOneProcess) {
  TempDir dir("complete");
  trace::write_mpi_trace(dir.path.string(), "t",
                         {{{"MPI_Ssend", 100, 500, {1}}, {"MPI_Isend", 1000, 1010, {1}, 1}, {"MPI_Wait", 1100, 1500, {}},
                           {"MPI_Barrier", 2000, 2600, {}}, {"MPI_Send", 2700, 2710, {2}}},
                          {{"MPI_Recv", 400, 510, {0}}, {"MPI_Irecv", 1300, 1310, {0}, 1}, {"MPI_Wait", 1400, 1450, {0}, 1},
                           {"MPI_Barrier", 2500, 2650, {}}},
                          {{"MPI_Barrier", 2200, 2600, {}}, {"MPI_Recv", 2620, 2800, {0}}}},
                         3000);
  trace::Trace t((dir.path / "t.otf2").string());
  const std::vector<std::string> metrics{"mpi_latereceiver", "mpi_latesender", "mpi_barrier_wait", "critical_path",
                                         "syncs_send", "comms_send", "mpi_cls_count", "mpi_slr_count",
                                         "mpi_clr_count", "clock_violations"};
  expect_same_as_one_process(t, {{0}, {1, 2}}, metrics);
  expect_same_as_one_process(t, {{0}, {1}, {2}}, metrics);
  expect_same_as_one_process(t, {{0, 1, 2}}, metrics);
  // A rank's share read on threads (its processes in parts, their observers absorbed).
  expect_same_as_one_process(t, {{0}, {1, 2}}, metrics, false, 2);
  expect_same_as_one_process(t, {{0, 1, 2}}, metrics, false, 3);
  expect_same_as_one_process(t, {{0, 1, 2}}, metrics, true, 3);
}

TEST(ReplayComplete, StepsAfterThePassInChunksOfInstancesAndLocationsAsOneProcess) {
  // A ring of 5 processes, 40 iterations of send, receive and allreduce: on a rank holding them
  // all (or 3 and 2), the homes' extras and reductions in chunks of whole instances, the
  // owners' sync points and severities in chunks of whole locations: every metric the same.
  TempDir dir("chunks");
  trace::SyntheticTrace spec;
  spec.processes = 5, spec.iterations = 40;
  trace::write_synthetic_trace(dir.path.string(), "ring", spec);
  trace::Trace t((dir.path / "ring.otf2").string());
  const auto whole = analysis::analyze(t, {0, 1, 2, 3, 4});
  std::vector<std::string> metrics;
  for (const auto& m : whole.metrics) metrics.push_back(m.uniq_name);
  ASSERT_GT(total(whole, "mpi_wait_nxn", 0) + total(whole, "mpi_wait_nxn", 4), 0.0);
  expect_same_as_one_process(t, {{0, 1, 2, 3, 4}}, metrics, false, 3);
  expect_same_as_one_process(t, {{0, 1, 2}, {3, 4}}, metrics, false, 2);
  expect_same_as_one_process(t, {{0, 1, 2, 3, 4}}, metrics, true, 4);
}

TEST(ReplayComplete, LateReceiverOfWaitallInRoundsAsOneProcess) {
  // Messages only: two MPI_Isends completed by an MPI_Waitall (the largest of its waits counts,
  // once every round is in) and an MPI_Ssend (its record is its completion), in rounds of one send.
  TempDir dir("waitall");
  trace::write_mpi_trace(dir.path.string(), "t",
                         {{{"MPI_Isend", 100, 110, {1}}, {"MPI_Isend", 120, 130, {1}}, {"MPI_Waitall", 200, 600, {}},
                           {"MPI_Ssend", 700, 900, {1}}},
                          {{"MPI_Recv", 300, 350, {0}}, {"MPI_Recv", 400, 450, {0}}, {"MPI_Recv", 800, 910, {0}}}},
                         1000);
  trace::Trace t((dir.path / "t.otf2").string());
  const auto whole = analysis::analyze(t, {0, 1});
  EXPECT_NEAR(total(whole, "mpi_latereceiver", 0), 300e-9, 1e-15);  // 400 - 200 in the Waitall, 800 - 700
  // The path (no MPI_Init/Finalize: from the last Leave, location 0's at 1000) leaves the
  // MPI_Ssend at the end of its Late Receiver wait (800) for the receiver, from its MPI_Recv's
  // enter (800) back to its start: 200 ns on location 0, 800 on location 1.
  EXPECT_NEAR(total(whole, "critical_path", 0), 200e-9, 1e-15);
  EXPECT_NEAR(total(whole, "critical_path", 1), 800e-9, 1e-15);
  expect_same_as_one_process(t, {{0}, {1}}, {"mpi_latereceiver", "mpi_clr_count", "mpi_latesender", "critical_path"});
  expect_same_as_one_process(t, {{0, 1}}, {"mpi_latereceiver", "mpi_clr_count", "mpi_latesender", "critical_path"});
}

TEST(ReplayComplete, NonBlockingCollectivesAndClockCorrectionAsOneProcess) {
  TempDir dir("nbc");
  // Rank 1 starts its MPI_Iallreduce late; rank 1 receives before rank 0's send (a violation).
  trace::write_mpi_trace(dir.path.string(), "t",
                         {{{"MPI_Iallreduce", 100, 110, {}}, {"MPI_Wait", 500, 900, {}}, {"MPI_Send", 1000, 1010, {1}}},
                          {{"MPI_Iallreduce", 700, 710, {}}, {"MPI_Wait", 720, 800, {}}, {"MPI_Recv", 950, 990, {0}}}},
                         2000);
  trace::Trace t((dir.path / "t.otf2").string());
  expect_same_as_one_process(t, {{0}, {1}}, {"mpi_wait_nxn", "mpi_collective", "clock_violations", "critical_path"});
  expect_same_as_one_process(t, {{0}, {1}}, {"mpi_wait_nxn", "mpi_latesender", "clock_violations", "critical_path"},
                             true);
}

TEST(ReplayComplete, StepsNeedTheCompleteReplay) {
  TempDir dir("plain");
  trace::write_mpi_trace(dir.path.string(), "t", {{{"MPI_Barrier", 10, 20, {}}}}, 100);
  trace::Trace t((dir.path / "t.otf2").string());
  analysis::Replay r(t, {0}, {0});
  EXPECT_THROW(r.messages_beside(), std::logic_error);
  EXPECT_THROW(r.path_start(true), std::logic_error);
}

TEST(ReplayComplete, ReceiveWithoutSendStallsTheCorrectionThenFailsAsOneProcess) {
  TempDir dir("stall");
  // Rank 0's second receive (tag 7) has no send: the correction's rounds stall on it (and on
  // the barrier behind it) until the send counts per queue let it wait for nothing; then the
  // matching names it, as one process does.
  trace::write_mpi_trace(dir.path.string(), "t",
                         {{{"MPI_Send", 100, 120, {1}}, {"MPI_Recv", 200, 260, {1}, 7}, {"MPI_Barrier", 300, 320, {}}},
                          {{"MPI_Recv", 90, 130, {0}}, {"MPI_Send", 250, 255, {0}, 3}, {"MPI_Barrier", 310, 320, {}}}},
                         1000);
  trace::Trace t((dir.path / "t.otf2").string());
  analysis::AnalysisOptions options;
  options.time_correct = true;
  std::string whole;
  try {
    analysis::analyze(t, {0, 1}, nullptr, options);
  } catch (const FormatError& e) {
    whole = e.what();
  }
  EXPECT_NE(whole.find("without a matching send"), std::string::npos) << whole;
  try {
    replay_complete(t, {{0}, {1}}, true);
    FAIL() << "no error";
  } catch (const FormatError& e) {
    EXPECT_EQ(std::string(e.what()), whole);
  }
}

TEST(ReplayComplete, ARankThatFailedBeforeTheRoundMakesEveryRankPlanTheFailure) {
  TempDir dir("failed");
  trace::write_mpi_trace(dir.path.string(), "t", {{{"MPI_Send", 100, 120, {1}}}, {{"MPI_Recv", 90, 130, {0}}}}, 1000);
  trace::Trace t((dir.path / "t.otf2").string());
  using analysis::DistributedCorrection, analysis::Replay;
  std::vector<std::unique_ptr<Replay>> rank;
  for (std::uint32_t r = 0; r < 2; ++r) rank.push_back(std::make_unique<Replay>(t, std::vector<std::uint32_t>{0, 1},
                                                                                  std::vector<std::uint32_t>{r}, true));
  const std::vector<std::uint32_t> owner{0, 1}, homes{0, 1};
  for (std::uint32_t r = 0; r < 2; ++r) rank[r]->begin_correction(owner, 2, r, homes);
  for (auto& r : rank) r->take_members();
  for (auto& r : rank) r->correct_round();
  const auto row = rank[0]->correction().row;
  for (std::size_t to = 0; to < 2; ++to) rank[1]->correction().rows[to * row + 3] = -1;  // rank 1 failed
  for (std::size_t to = 0; to < 2; ++to)
    for (std::size_t from = 0; from < 2; ++from)
      std::copy_n(&rank[from]->correction().rows[to * row], row, &rank[to]->correction().received[from * row]);
  for (auto& r : rank) EXPECT_EQ(r->plan_round(), Replay::kRoundFailed);
}

TEST(ReplayComplete, ARoundTooLargeForTheRowsGoesByAlltoallvAsOneProcess) {
  TempDir dir("overflow");
  // Rank 0's location sends 12 messages before rank 1's receives any: its first round queues
  // them all (480 bytes, more than a row carries), so the round's values go by Alltoallv. The
  // first receive completes before its send began (a violation the correction moves).
  std::vector<trace::MpiCall> sends, receives;
  for (std::uint64_t k = 0; k < 12; ++k) {
    sends.push_back({"MPI_Send", 100 + 20 * k, 110 + 20 * k, {1}, static_cast<std::uint32_t>(k)});
    receives.push_back({"MPI_Recv", k ? 500 + 20 * k : 50, k ? 510 + 20 * k : 95, {0}, static_cast<std::uint32_t>(k)});
  }
  trace::write_mpi_trace(dir.path.string(), "t", {sends, receives}, 2000);
  trace::Trace t((dir.path / "t.otf2").string());
  expect_same_as_one_process(t, {{0}, {1}}, {"mpi_latesender", "clock_violations", "critical_path"}, true);
  using analysis::Replay;
  std::vector<std::unique_ptr<Replay>> rank;
  for (std::uint32_t r = 0; r < 2; ++r) rank.push_back(std::make_unique<Replay>(t, std::vector<std::uint32_t>{0, 1},
                                                                                  std::vector<std::uint32_t>{r}, true));
  for (std::uint32_t r = 0; r < 2; ++r) rank[r]->begin_correction({0, 1}, 2, r, {0, 1});
  for (auto& r : rank) r->take_members(), r->correct_round();
  const auto row = rank[0]->correction().row;
  EXPECT_EQ(rank[0]->correction().rows[1 * row + 0], 12);  // the sends for rank 1 ...
  EXPECT_EQ(rank[0]->correction().rows[1 * row + 4] & 2, 2);  // ... do not fit in its row
  EXPECT_EQ(rank[1]->correction().rows[0 * row + 4] & 2, 0);  // rank 1 has nothing to send yet
}

// The steps after the pass in chunks of a record on up to 8 threads (and 300: more threads
// than instances), byte for byte as one thread: every metric's matrix, trace.stat's instance
// statistics and the errors of inconsistent traces.
namespace {

// P processes, `iterations` of every collective class on MPI_COMM_WORLD, the reversed and the
// self communicator, and a ring of messages; rank 2 lacks MPI_Init, rank 3 MPI_Finalize (no
// pattern, no error). `broken`: 1, 2 members calling other operations in one instance (1: two
// instances, 2: two communicators); 3, a barrier on one rank only.
std::vector<std::vector<trace::MpiCall>> chunk_calls(std::size_t P, std::size_t iterations, int broken) {
  std::vector<std::vector<trace::MpiCall>> ranks(P);
  for (std::size_t r = 0; r < P; ++r)
    if (r != 2) ranks[r].push_back({"MPI_Init", 10 + 5 * r, 400, {}});  // rank 2 lacks MPI_Init: skipped
  std::uint64_t t = 1000;
  auto jitter = [](std::size_t r, std::size_t it, std::size_t k) { return ((r * 37 + it * 11 + k * 7) % 4) * 10; };
  for (std::size_t it = 0; it < iterations; ++it) {
    const char* ops[] = {"MPI_Barrier", "MPI_Allreduce", "MPI_Bcast", "MPI_Reduce", "MPI_Scan", "MPI_Alltoall", "MPI_Allgather"};
    const std::uint32_t tags[] = {0, 2, 1, 0, 0, 2, 0};
    for (std::size_t k = 0; k < 7; ++k) {
      for (std::size_t r = 0; r < P; ++r) {
        std::string op = ops[k];
        // broken 1: rank 1 calls MPI_Allreduce for the world barrier of iterations 7 and 12
        if (broken == 1 && r == 1 && k == 0 && (it == 7 || it == 12)) op = "MPI_Allreduce";
        // broken 2: rank 3 calls MPI_Gather for the reduce of iteration 9, and rank 0 a scan for the alltoall of 15
        if (broken == 2 && r == 3 && k == 3 && it == 9) op = "MPI_Gather";
        if (broken == 2 && r == 0 && k == 5 && it == 15) op = "MPI_Scan";
        std::vector<std::uint32_t> peers;
        if (op == "MPI_Bcast" || op == "MPI_Reduce" || op == "MPI_Gather") peers = {std::uint32_t(it % P)};
        ranks[r].push_back({op, t + jitter(r, it, k), t + 100, peers, tags[k]});
      }
      t += 200;
    }
    // a ring of messages beside
    for (std::size_t r = 0; r < P; ++r) {
      ranks[r].push_back({"MPI_Send", t + jitter(r, it, 9), t + 5 + jitter(r, it, 9), {std::uint32_t((r + 1) % P)}});
      ranks[r].push_back({"MPI_Recv", t + 50, t + 100, {std::uint32_t((r + P - 1) % P)}});
    }
    t += 200;
  }
  // broken 3: rank 2 has one world barrier more (no counterpart) and one less allreduce (lacks)
  if (broken == 3) ranks[2].push_back({"MPI_Barrier", t, t + 50, {}, 0});
  t += 100;
  for (std::size_t r = 0; r < P; ++r)
    if (r != 3) ranks[r].push_back({"MPI_Finalize", t + 10 * r, t + 100, {}});  // rank 3 lacks it
  return ranks;
}

void expect_same_bytes(const std::vector<profile::LocalProfile>& a, const std::vector<profile::LocalProfile>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t r = 0; r < a.size(); ++r) {
    ASSERT_EQ(a[r].metrics.size(), b[r].metrics.size());
    for (std::size_t m = 0; m < a[r].metrics.size(); ++m) {
      ASSERT_EQ(a[r].values[m].bytes(), b[r].values[m].bytes());
      EXPECT_EQ(0, std::memcmp(a[r].values[m].data(), b[r].values[m].data(), a[r].values[m].bytes()))
          << a[r].metrics[m].uniq_name << " rank " << r;
    }
  }
}

void expect_same_statistics(const std::vector<std::vector<analysis::PatternStatistics>>& a,
                            const std::vector<std::vector<analysis::PatternStatistics>>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t r = 0; r < a.size(); ++r) {
    ASSERT_EQ(a[r].size(), b[r].size());
    for (std::size_t p = 0; p < a[r].size(); ++p) {
      const auto &x = a[r][p], &y = b[r][p];
      EXPECT_EQ(x.count, y.count) << p;
      EXPECT_EQ(x.sum, y.sum) << p;
      EXPECT_EQ(x.min, y.min) << p;
      EXPECT_EQ(x.max, y.max) << p;
      EXPECT_EQ(x.sum_of_squares, y.sum_of_squares) << p;
      ASSERT_EQ(x.top.size(), y.top.size()) << p;
      for (std::size_t k = 0; k < x.top.size(); ++k) {
        EXPECT_EQ(x.top[k].ticks, y.top[k].ticks);
        EXPECT_EQ(x.top[k].enter, y.top[k].enter) << "pattern " << p << " top " << k;
        EXPECT_EQ(x.top[k].leave, y.top[k].leave);
        EXPECT_EQ(x.top[k].cnode, y.top[k].cnode);
        EXPECT_EQ(x.top[k].location, y.top[k].location) << "pattern " << p << " top " << k;
      }
    }
  }
}

std::string replay_error(const trace::Trace& t, const std::vector<std::vector<std::uint32_t>>& shares,
                         std::size_t threads, std::uint64_t chunk_records) {
  try {
    replay_complete(t, shares, false, threads, chunk_records);
  } catch (const FormatError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST(ReplayChunks, ChunksOfOneRecordOnEightThreadsAreByteForByteOneThread) {
  TempDir dir("chunks8");
  trace::write_mpi_trace(dir.path.string(), "t", chunk_calls(5, 24, 0), 200000);
  trace::Trace t((dir.path / "t.otf2").string());
  const std::vector<std::vector<std::vector<std::uint32_t>>> layouts{
      {{0, 1, 2, 3, 4}}, {{0, 1}, {2, 3, 4}}, {{3}, {0, 4, 1}, {2}}, {{0}, {1}, {2}, {3}, {4}}};
  for (const auto& shares : layouts)
    for (bool correct : {false, true}) {
      std::vector<std::vector<analysis::PatternStatistics>> s1, s8, s3;
      const auto one = replay_complete(t, shares, correct, 1, 0, &s1);
      const auto eight = replay_complete(t, shares, correct, 8, 1, &s8);
      const auto three = replay_complete(t, shares, correct, 3, 2, &s3);
      expect_same_bytes(one, eight);
      expect_same_bytes(one, three);
      expect_same_statistics(s1, s8);
      expect_same_statistics(s1, s3);
    }
  // and as the one process, per location and metric
  const auto whole = analysis::analyze(t, {0, 1, 2, 3, 4});
  std::vector<std::string> metrics;
  for (const auto& m : whole.metrics) metrics.push_back(m.uniq_name);
  EXPECT_GT(total(whole, "mpi_wait_nxn", 0), 0.0);
  EXPECT_GT(total(whole, "mpi_barrier_wait", 1), 0.0);
  expect_same_as_one_process(t, {{0, 1, 2, 3, 4}}, metrics, false, 8);
  expect_same_as_one_process(t, {{0, 4}, {1, 2, 3}}, metrics, true, 8);
}

TEST(ReplayChunks, ErrorsOnInconsistentTracesAreTheOneThreadsFirst) {
  for (int broken : {1, 2, 3}) {
    TempDir dir("chunks_broken" + std::to_string(broken));
    trace::write_mpi_trace(dir.path.string(), "t", chunk_calls(5, 24, broken), 200000);
    trace::Trace t((dir.path / "t.otf2").string());
    std::string whole = "no error";
    try {
      analysis::analyze(t, {0, 1, 2, 3, 4});
    } catch (const FormatError& e) {
      whole = e.what();
    }
    EXPECT_NE(whole, "no error") << broken;
    for (const auto& shares : std::vector<std::vector<std::vector<std::uint32_t>>>{{{0, 1, 2, 3, 4}}, {{0, 1}, {2, 3, 4}}}) {
      const auto one = replay_error(t, shares, 1, 0);
      EXPECT_NE(one, "no error");
      for (std::size_t threads : {2, 3, 8})
        EXPECT_EQ(replay_error(t, shares, threads, 1), one) << "broken " << broken << " threads " << threads;
      if (shares.size() == 1) EXPECT_EQ(one, whole) << "broken " << broken;
    }
  }
}

TEST(ReplayChunks, ReduceAndExtrasOnSparseInstancesInChunksAsOneChunk) {
  // Instance numbers spread far apart (instance_order's radix fallback), records shuffled.
  TempDir dir("chunks_sparse");
  for (int broken : {0, 2}) {
    trace::write_mpi_trace(dir.path.string(), "t" + std::to_string(broken), chunk_calls(5, 24, broken), 200000);
    trace::Trace t((dir.path / ("t" + std::to_string(broken) + ".otf2")).string());
    analysis::Replay r(t, {0, 1, 2, 3, 4}, {0, 1, 2, 3, 4});
    r.pack_collectives(1);
    auto records = r.outgoing_collectives();
    ASSERT_GT(records.size(), 100u);
    for (auto& c : records) c.instance = c.instance * 100003u % 0x7fffffffu;
    std::uint64_t x = 12345;
    for (std::size_t i = records.size() - 1; i > 0; --i) {
      x = x * 6364136223846793005ull + 1442695040888963407ull;
      std::swap(records[i], records[(x >> 33) % (i + 1)]);
    }
    std::vector<bool> analyzed(t.definitions().locations.size(), true);
    auto reduce = [&](const Chunking& how) -> std::pair<std::vector<analysis::CollectiveReduction>, std::string> {
      try {
        return {analysis::reduce_collectives(t, analyzed, records, 1, how), ""};
      } catch (const FormatError& e) {
        return {{}, e.what()};
      }
    };
    const auto a = reduce({1, 1});
    for (std::size_t threads : {2, 5, 8, 300}) {
      const auto b = reduce({threads, 1});
      EXPECT_EQ(a.second, b.second) << threads;
      ASSERT_EQ(a.first.size(), b.first.size());
      if (!a.first.empty())
        EXPECT_EQ(0, std::memcmp(a.first.data(), b.first.data(), a.first.size() * sizeof(a.first[0])));
    }
    if (broken) EXPECT_NE(a.second, "");
    else {
      analysis::CommunicatorRanks ranks(t.definitions());
      const auto e1 = analysis::collective_extras(records, ranks, 1, {1, 1});
      for (std::size_t threads : {2, 8, 300}) {
        const auto e8 = analysis::collective_extras(records, ranks, 1, {threads, 1});
        ASSERT_EQ(e1.size(), e8.size());
        EXPECT_EQ(0, std::memcmp(e1.data(), e8.data(), e1.size() * sizeof(e1[0])));
      }
    }
  }
}
