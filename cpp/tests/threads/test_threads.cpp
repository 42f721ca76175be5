// Thread aggregation kernels: KEY's choice at its edges, CALLTREE and VALUE clusters, the
// folding kernels (integer wrap-around, minima of visiting threads, SET tuples) and a local
// profile with a GPU stream that must be kept.
#include <gtest/gtest.h>

#include <cstring>
#include <limits>

#include "cubescale/common/unaligned.hpp"
#include "cubescale/threads/aggregate.hpp"
#include "cubescale/threads/combine.hpp"
#include "cubescale/threads/grouping.hpp"
#include "cubescale/threads/synchronization.hpp"

using namespace cubescale;
using namespace cubescale::threads;

namespace {

std::vector<std::int64_t> ranks(std::size_t n) {
  std::vector<std::int64_t> r(n);
  for (std::size_t i = 0; i < n; ++i) r[i] = static_cast<std::int64_t>(i);
  return r;
}

cube::Severity matrix(const char* dtype, std::size_t cnodes, std::size_t locations) {
  return cube::Severity(*cube::parse_data_type(dtype), cnodes, locations);
}

template <class T>
void set(cube::Severity& s, std::size_t c, std::size_t l, T v) {
  std::memcpy(s.row(c) + l * sizeof(T), &v, sizeof(T));
  s.set_present(c, true);
}

template <class T>
T get(const cube::Severity& s, std::size_t c, std::size_t l) {
  return load_unaligned<T>(s.row(c) + l * s.dtype().width());
}

}  // namespace

TEST(KeyThreads, BothExtremesAreKeptWhicheverThreadSetsThem) {
  for (const auto& work : std::vector<std::vector<double>>{{9, 5, 1}, {9, 1, 5}, {9, 3, 3}, {9, 2, 7, 1, 7}}) {
    const auto g = key_groups(work, ranks(work.size()));
    ASSERT_GE(g.size(), 3u);
    EXPECT_EQ(g[0].name, kMasterThread);
    EXPECT_EQ(g[1].name, kFastestThread);
    EXPECT_EQ(g[2].name, kSlowestThread);
    EXPECT_NE(g[1].members, g[2].members);
    double lo = 1e300, hi = -1e300;
    for (std::size_t t = 1; t < work.size(); ++t) lo = std::min(lo, work[t]), hi = std::max(hi, work[t]);
    EXPECT_EQ(work[g[1].members[0]], lo);
    EXPECT_EQ(work[g[2].members[0]], hi);
  }
}

TEST(KeyThreads, FewThreads) {
  EXPECT_EQ(key_groups({1.0}, ranks(1)).size(), 1u);
  const auto two = key_groups({1.0, 2.0}, ranks(2));
  ASSERT_EQ(two.size(), 2u);
  EXPECT_EQ(two[1].name, kSlowestThread);
  const auto five = key_groups({1, 4, 2, 3, 5}, {10, 11, 12, 13, 14});
  ASSERT_EQ(five.size(), 4u);
  EXPECT_EQ(five[1].rank, 12);  // a single thread keeps its own rank
  EXPECT_EQ(five[2].rank, 14);
  EXPECT_EQ(five[3].members, (std::vector<std::uint32_t>{1, 3}));
}

TEST(Clusters, CalltreeGroupsEqualVisitedSetsAndValueSplitsByWork) {
  ThreadProfiles p;
  p.threads = 6, p.cnodes = 2;
  // Threads 0..5 visit {0,1},{0,1},{0},{0,1},{0},{0,1}; work per cnode 0 only.
  const std::uint8_t v[] = {1, 1, 1, 1, 1, 0, 1, 1, 1, 0, 1, 1};
  p.visited.assign(v, v + 12);
  const auto calltree = calltree_groups(p);
  ASSERT_EQ(calltree.size(), 2u);
  EXPECT_EQ(calltree[0].members, (std::vector<std::uint32_t>{0, 1, 3, 5}));
  EXPECT_EQ(calltree[1].members, (std::vector<std::uint32_t>{2, 4}));
  p.time = {4, 0, 4, 0, 4, 0, 2, 0, 2, 0, 4, 0};
  const auto value = value_groups(p, 8, 0.1);
  ASSERT_EQ(value.size(), 2u);
  EXPECT_EQ(value[0].members, (std::vector<std::uint32_t>{0, 1, 2, 5}));
  EXPECT_EQ(value[1].members, (std::vector<std::uint32_t>{3, 4}));
  EXPECT_EQ(value_groups(p, 1, 0.1).size(), 1u);
  EXPECT_THROW(value_groups(p, 0, 0.1), std::invalid_argument);
}

TEST(Fold, IntegersWrapAroundMinimaTakeVisitingThreads) {
  ColumnGroups g;
  g.add({0, 1, 2});
  g.add({3});
  auto counts = matrix("UINT64", 1, 4);
  set<std::uint64_t>(counts, 0, 0, std::numeric_limits<std::uint64_t>::max());
  set<std::uint64_t>(counts, 0, 1, 2);
  std::vector<std::uint8_t> visited = {1, 0, 1, 1};
  const auto sum = fold_columns(counts, g, visited);
  EXPECT_EQ(get<std::uint64_t>(sum, 0, 0), 1u);  // max + 2 wraps to 1, as counters do
  auto minima = matrix("MINDOUBLE", 1, 4);
  set<double>(minima, 0, 0, 3.0);
  set<double>(minima, 0, 1, 0.0);  // not visited: its 0 is no measurement
  set<double>(minima, 0, 2, 2.0);
  set<double>(minima, 0, 3, 5.0);
  const auto min = fold_columns(minima, g, visited);
  EXPECT_EQ(get<double>(min, 0, 0), 2.0);
  EXPECT_EQ(get<double>(min, 0, 1), 5.0);
  const auto n = count_visits(g, visited, 1, 4, *cube::parse_data_type("UINT64"));
  EXPECT_EQ(get<std::uint64_t>(n, 0, 0), 2u);
  EXPECT_THROW(fold_columns(counts, g, {1, 0}), std::invalid_argument);
}

TEST(Fold, SetTuplesOverVisitingThreads) {
  ColumnGroups g;
  g.add({0, 1, 2, 3});
  auto time = matrix("DOUBLE", 2, 4);
  for (std::size_t l = 0; l < 4; ++l) set<double>(time, 0, l, double(l + 1));
  std::vector<std::uint8_t> visited = {1, 1, 0, 1, 1, 1, 0, 0};  // row 1: zeros where visited
  const auto t = tuple_columns(time, g, visited);
  const auto* v = t.row(0);
  EXPECT_EQ(load_unaligned<std::uint32_t>(v), 3u);
  EXPECT_EQ(load_unaligned<double>(v + 4), 1.0);
  EXPECT_EQ(load_unaligned<double>(v + 12), 4.0);
  EXPECT_EQ(load_unaligned<double>(v + 20), 10.0);  // sums keep every member's value
  EXPECT_EQ(load_unaligned<double>(v + 28), 30.0);
  EXPECT_TRUE(t.present(1));
  EXPECT_EQ(load_unaligned<std::uint32_t>(t.row(1)), 2u);
}

TEST(Synchronization, RolesAndNames) {
  cube::Region r;
  r.role = "implicit barrier";
  EXPECT_TRUE(is_synchronization(r));
  r.role = "function", r.name = "!$omp critical sblock @a.c:3";
  EXPECT_FALSE(is_synchronization(r));
  r.name = "!$omp critical @a.c:3";
  EXPECT_TRUE(is_synchronization(r));
  r.name = "MPI_Waitall";
  EXPECT_TRUE(is_synchronization(r));
  r.name = "solve";
  EXPECT_FALSE(is_synchronization(r));
}

TEST(AggregateProfile, KeepsGpuStreamsAndRejectsBadOptions) {
  profile::LocalProfile p;
  cube::Metric visits;
  visits.uniq_name = "visits", visits.dtype = *cube::parse_data_type("UINT64");
  p.metrics = {visits};
  cube::Region main_region;
  main_region.name = "main";
  p.regions = {main_region};
  p.cnode_parents = {cube::kNoParent};
  p.cnode_regions = {0};
  p.locations = {{"Master thread", "thread"}, {"OMP thread 1", "thread"}, {"CUDA stream 1", "gpu"}};
  p.values = {matrix("UINT64", 1, 3)};
  set<std::uint64_t>(p.values[0], 0, 0, 3);
  set<std::uint64_t>(p.values[0], 0, 1, 4);
  set<std::uint64_t>(p.values[0], 0, 2, 9);
  Options o;
  o.strategy = Strategy::Sum;
  const auto out = aggregate_profile(p, o);
  ASSERT_EQ(out.locations.size(), 2u);
  EXPECT_EQ(out.locations[0].name, kAggregatedThreads);
  EXPECT_EQ(out.locations[1].name, "CUDA stream 1");
  EXPECT_EQ(get<std::uint64_t>(out.values[0], 0, 0), 7u);
  EXPECT_EQ(get<std::uint64_t>(out.values[0], 0, 1), 9u);
  EXPECT_EQ(out.metrics.back().uniq_name, kThreadCountMetric);
  o.strategy = Strategy::Key;  // no time metric to tell work from waiting
  EXPECT_THROW(aggregate_profile(p, o), std::invalid_argument);
  EXPECT_EQ(parse_strategy("cluster_threads"), Strategy::Calltree);
  EXPECT_FALSE(parse_strategy("mean"));
}
