// The one-process analysis on several threads: the locations cut into whole processes
// (part_locations), the same profile as one thread, errors in the order one thread meets them
// (run_both), and the steps after the pass cut into chunks (run_chunks).
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "cubescale/analysis/waitstates.hpp"
#include "cubescale/common/run_both.hpp"
#include "cubescale/common/run_chunks.hpp"
#include "cubescale/trace/profile.hpp"
#include "cubescale/trace/synthetic_omp.hpp"
#include "trace_files.hpp"

using namespace cubescale;
using namespace cubescale::analysis_tests;

namespace {

// A ring of 4 ranks: odd ranks receive from the left (before its send: Late Sender) and then
// send to the right, even ranks the other way round; an allreduce.
std::vector<std::vector<trace::MpiCall>> ring() {
  std::vector<std::vector<trace::MpiCall>> ranks(4);
  for (std::uint32_t r = 0; r < 4; ++r) {
    const trace::MpiCall send{"MPI_Send", r % 2 ? 130u : 100u, r % 2 ? 140u : 110u, {(r + 1) % 4}};
    const trace::MpiCall receive{"MPI_Recv", r % 2 ? 20u : 200u, r % 2 ? 120u : 300u, {(r + 3) % 4}};
    ranks[r] = r % 2 ? std::vector<trace::MpiCall>{receive, send} : std::vector<trace::MpiCall>{send, receive};
    ranks[r].push_back({"MPI_Allreduce", 400 + 10 * r, 500, {}});
  }
  return ranks;
}

void expect_same(const profile::LocalProfile& a, const profile::LocalProfile& b) {
  ASSERT_EQ(a.metrics.size(), b.metrics.size());
  EXPECT_EQ(a.cnode_parents, b.cnode_parents);
  EXPECT_EQ(a.cnode_regions, b.cnode_regions);
  EXPECT_EQ(a.cnode_first_visit, b.cnode_first_visit);
  for (std::size_t m = 0; m < a.metrics.size(); ++m) {
    EXPECT_EQ(a.metrics[m].uniq_name, b.metrics[m].uniq_name);
    ASSERT_EQ(a.values[m].bytes(), b.values[m].bytes()) << a.metrics[m].uniq_name;
    EXPECT_EQ(std::memcmp(a.values[m].data(), b.values[m].data(), a.values[m].bytes()), 0) << a.metrics[m].uniq_name;
  }
}

}  // namespace

TEST(Threads, PartsAreWholeProcessesOfAboutEqualEvents) {
  TempDir dir("parts");
  trace::Trace t(write(dir, ring(), 1000));
  const auto all = t.all_locations();
  using Parts = std::vector<std::vector<std::uint32_t>>;
  EXPECT_EQ(trace::part_locations(t, all, 1), Parts{all});
  EXPECT_EQ(trace::part_locations(t, all, 2), (Parts{{0, 1}, {2, 3}}));
  EXPECT_EQ(trace::part_locations(t, all, 8), (Parts{{0}, {1}, {2}, {3}}));  // no more parts than processes
  EXPECT_EQ(trace::part_locations(t, {3, 1}, 2), (Parts{{3}, {1}}));         // in the order given
}

TEST(Threads, FewerPartsWhereTheirTablesOutweighTheEvents) {
  // 128 bytes per location and part beyond the first, at most 64 MiB or 16 bytes per event.
  EXPECT_EQ(trace::most_parts(4, 0), (std::size_t(64) << 20) / 512 + 1);
  EXPECT_EQ(trace::most_parts(1 << 20, 0), 1u);             // a million locations, events unknown
  EXPECT_EQ(trace::most_parts(1 << 20, 100u << 20), 13u);   // 100 events per location: 1.6 GiB of tables
  EXPECT_EQ(trace::most_parts(1 << 19, 0), 2u);
}

TEST(Threads, ThreadsOfOneProcessStayInOnePart) {
  TempDir dir("omp_parts");
  trace::OmpParallel region;
  region.fork = 100, region.join = 500;
  region.threads = {{{"ibarrier", 200, 400}}, {{"ibarrier", 300, 400}}, {{"ibarrier", 350, 400}}};
  trace::write_omp_trace(dir.path.string(), "t", {region}, 3, 1000);
  trace::Trace t((dir.path / "t.otf2").string());
  const auto parts = trace::part_locations(t, t.all_locations(), 3);
  ASSERT_EQ(parts.size(), 1u);
  EXPECT_EQ(parts[0], t.all_locations());
}

TEST(Threads, AnalysisOnThreadsEqualsOneThread) {
  TempDir dir("threads");
  trace::Trace t(write(dir, ring(), 1000));
  analysis::AnalysisStats one_stats, two_stats;
  analysis::AnalysisOptions two;
  two.threads = 2;
  const auto one = analysis::analyze(t, t.all_locations(), &one_stats);
  const auto both = analysis::analyze(t, t.all_locations(), &two_stats, two);
  expect_same(one, both);
  EXPECT_EQ(one_stats.events, two_stats.events);
  EXPECT_EQ(one_stats.messages, two_stats.messages);
  EXPECT_EQ(one_stats.p2p_violations, two_stats.p2p_violations);
  EXPECT_GT(by_call(both, "mpi_latesender").size(), 0u);
}

TEST(Threads, StepsInChunksOfOneRecordEqualOneThread) {
  // Every step after the pass cut into a chunk per location (3 threads for 4 locations, at
  // least one record a chunk): the same profile and pattern statistics as one thread, with
  // and without the time correction (sanitizer builds run the chunks at once here).
  TempDir dir("chunks");
  trace::Trace t(write(dir, ring(), 1000));
  for (bool correct : {false, true}) {
    analysis::AnalysisOptions one, chunks;
    one.time_correct = chunks.time_correct = correct;
    chunks.threads = 3, chunks.chunk_records = 1;
    analysis::AnalysisStats one_stats, chunk_stats;
    const auto a = analysis::analyze(t, t.all_locations(), &one_stats, one);
    const auto b = analysis::analyze(t, t.all_locations(), &chunk_stats, chunks);
    expect_same(a, b);
    ASSERT_EQ(one_stats.patterns.size(), chunk_stats.patterns.size());
    for (std::size_t p = 0; p < one_stats.patterns.size(); ++p) {
      const auto &x = one_stats.patterns[p], &y = chunk_stats.patterns[p];
      EXPECT_EQ(x.count, y.count);
      EXPECT_EQ(x.sum, y.sum);
      EXPECT_EQ(x.sum_of_squares, y.sum_of_squares);
      ASSERT_EQ(x.top.size(), y.top.size());
      for (std::size_t i = 0; i < x.top.size(); ++i) {
        EXPECT_EQ(x.top[i].location, y.top[i].location);
        EXPECT_EQ(x.top[i].enter, y.top[i].enter);
      }
    }
    EXPECT_GT(one_stats.patterns[std::size_t(analysis::Pattern::LateSender)].count, 0u);
  }
}

TEST(Threads, RunBothFailsAsOneThreadInOrder) {
  std::atomic<int> ran = 0;
  auto fail = [](const char* what) { return [what] { throw std::runtime_error(what); }; };
  for (bool at_once : {false, true}) {
    ran = 0;
    EXPECT_NO_THROW(run_both(at_once, [&] { ++ran; }, [&] { ++ran; }));
    EXPECT_EQ(ran, 2);
    try {
      run_both(at_once, fail("first"), fail("second"));
      FAIL() << "no error";
    } catch (const std::runtime_error& e) {
      EXPECT_STREQ(e.what(), "first");
    }
    try {
      run_both(at_once, [] {}, fail("second"));
      FAIL() << "no error";
    } catch (const std::runtime_error& e) {
      EXPECT_STREQ(e.what(), "second");
    }
  }
}

TEST(Threads, ChunkBoundsCutByWeight) {
  // 4 threads over weights 5, 1, 1, 1, 5, 1, 1, 1: about 4 each.
  const std::vector<std::uint64_t> w{5, 1, 1, 1, 5, 1, 1, 1};
  EXPECT_EQ(chunk_bounds(w, {4, 1}), (std::vector<std::size_t>{0, 1, 4, 5, 8}));
  EXPECT_EQ(chunk_bounds(w, {1, 1}), (std::vector<std::size_t>{0, 8}));
  // At least 8 per chunk: two of the 16.
  EXPECT_EQ(chunk_bounds(w, {4, 8}), (std::vector<std::size_t>{0, 4, 8}));
  // More threads than items, a small step, nothing at all: never an empty chunk.
  EXPECT_EQ(chunk_bounds({3, 3}, {8, 1}), (std::vector<std::size_t>{0, 1, 2}));
  EXPECT_EQ(chunk_bounds(w, {4, 1000}), (std::vector<std::size_t>{0, 8}));
  EXPECT_EQ(chunk_bounds({}, {4, 1}), (std::vector<std::size_t>{0, 0}));
  EXPECT_EQ(chunk_bounds({0, 0, 0}, {4, 1}), (std::vector<std::size_t>{0, 3}));
}

TEST(Threads, RunChunksCoversEachOnceAndFailsAsInOrder) {
  std::vector<int> seen(1000, 0);
  std::vector<std::uint64_t> w(seen.size(), 1);
  const auto bounds = chunk_bounds(w, {3, 1});
  ASSERT_EQ(bounds.size(), 4u);
  run_chunks(bounds, [&](std::size_t, std::size_t begin, std::size_t end) {
    for (auto i = begin; i < end; ++i) ++seen[i];
  });
  EXPECT_EQ(std::count(seen.begin(), seen.end(), 1), 1000);
  try {  // chunks 1 and 2 fail: chunk 1's error, the first in order
    run_chunks(bounds, [&](std::size_t k, std::size_t, std::size_t) {
      if (k > 0) throw std::runtime_error("chunk " + std::to_string(k));
    });
    FAIL() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "chunk 1");
  }
}

TEST(Threads, InstanceStatsAbsorbedAsAddedInOrder) {
  // Instances added to one InstanceStats in order, or split in two absorbed after: the same
  // statistics (sums of squares exact, the first of equal instances kept).
  const std::vector<analysis::PatternInstance> all{
      {3, 1, 2, 0, 0}, {7, 3, 4, 1, 0}, {7, 5, 6, 1, 1}, {3000000000u, 7, 8, 0, 1}, {5, 9, 10, 2, 2}, {3000000000u, 11, 12, 0, 3}};
  analysis::InstanceStats one(2), first(2), second(2);
  for (std::size_t i = 0; i < all.size(); ++i) {
    one.add(1, all[i]);
    (i < 2 ? first : second).add(1, all[i]);
  }
  first.absorb(second);
  const auto a = one.finish(), b = first.finish();
  ASSERT_EQ(a.size(), 2u);
  EXPECT_EQ(b[1].count, 6u);
  EXPECT_EQ(a[1].count, b[1].count);
  EXPECT_EQ(a[1].sum, b[1].sum);
  EXPECT_EQ(a[1].min, b[1].min);
  EXPECT_EQ(a[1].max, b[1].max);
  EXPECT_EQ(a[1].sum_of_squares, b[1].sum_of_squares);
  EXPECT_EQ(b[1].sum_of_squares, 2 * 9e18 + 9 + 49 + 49 + 25);  // exact before the one rounding
  ASSERT_EQ(b[1].top.size(), 3u);
  EXPECT_EQ(b[1].top[0].location, 1u);  // the first of the two 3e9 on call path 0
  EXPECT_EQ(b[1].top[1].location, 0u);  // the first 7 on call path 1
  EXPECT_EQ(a[1].top[0].location, b[1].top[0].location);
  EXPECT_EQ(a[0].count + b[0].count, 0u);
}
