#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <random>
#include <tuple>
#include <vector>

#include "cubescale/analysis/instance_order.hpp"
#include "cubescale/analysis/waitstates.hpp"

using cubescale::analysis::CollectiveRecord;
using cubescale::analysis::instance_order;

namespace {

// What instance_order must give: the indices stably sorted by (communicator, instance).
std::vector<std::uint32_t> stable_sorted(const std::vector<CollectiveRecord>& records) {
  std::vector<std::uint32_t> out(records.size());
  std::iota(out.begin(), out.end(), 0u);
  std::stable_sort(out.begin(), out.end(), [&](std::uint32_t a, std::uint32_t b) {
    return std::tie(records[a].communicator, records[a].instance) < std::tie(records[b].communicator, records[b].instance);
  });
  return out;
}

// `members` locations each calling `instances` collectives on each of `communicators`
// communicators (numbered from `first`), interleaved as a location's events are; of them the
// records a home of every `stride`-th instance gets (collective_home's round robin), shuffled
// by sender as they arrive from several ranks.
std::vector<CollectiveRecord> home_records(std::uint32_t members, std::uint32_t instances, std::uint32_t communicators,
                                           std::uint32_t first, std::uint32_t stride, std::uint32_t home, unsigned seed) {
  std::vector<std::vector<CollectiveRecord>> by_location(members);
  for (std::uint32_t l = 0; l < members; ++l)
    for (std::uint32_t k = 0; k < instances; ++k)
      for (std::uint32_t c = 0; c < communicators; ++c) {
        CollectiveRecord r;
        r.location = l, r.communicator = first + c * 7, r.instance = k;
        if ((std::uint64_t(r.communicator) * 1000003ull + k) % stride == home) by_location[l].push_back(r);
      }
  std::mt19937 random(seed);
  std::shuffle(by_location.begin(), by_location.end(), random);
  std::vector<CollectiveRecord> out;
  for (const auto& l : by_location) out.insert(out.end(), l.begin(), l.end());
  return out;
}

}  // namespace

TEST(InstanceOrder, EqualsAStableSortByCommunicatorAndInstance) {
  for (std::uint32_t stride : {1u, 2u, 3u, 7u}) {
    for (std::uint32_t home = 0; home < stride; ++home) {
      const auto records = home_records(5, 300, 3, 2, stride, home, stride * 31 + home);
      EXPECT_EQ(instance_order(records, stride), stable_sorted(records)) << "stride " << stride << " home " << home;
      // A stride the instances do not keep (or none given) falls back or counts coarser: the same order.
      EXPECT_EQ(instance_order(records, stride + 1), stable_sorted(records));
      EXPECT_EQ(instance_order(records), stable_sorted(records));
    }
  }
}

TEST(InstanceOrder, SparseOrHostileInstancesFallBackToTheSameOrder) {
  std::mt19937 random(5);
  std::vector<CollectiveRecord> records(5000);
  for (auto& r : records) r.communicator = random() % 4, r.instance = random();  // far apart
  records[7].instance = cubescale::analysis::kNone, records[8].instance = 0;
  EXPECT_EQ(instance_order(records), stable_sorted(records));
  EXPECT_EQ(instance_order(records, 1000), stable_sorted(records));
  EXPECT_TRUE(instance_order(std::vector<CollectiveRecord>{}).empty());
  // The extreme numbers: an instance 2^32 - 1 beside 0 (a span of 2^32 slots), first on its
  // communicator, and communicator 2^32 - 1 first (the look-up cache's start).
  const auto most = cubescale::analysis::kNone;
  auto made = [](std::vector<std::pair<std::uint32_t, std::uint32_t>> pairs) {
    std::vector<CollectiveRecord> out(pairs.size());
    for (std::size_t i = 0; i < pairs.size(); ++i) out[i].communicator = pairs[i].first, out[i].instance = pairs[i].second;
    return out;
  };
  for (const auto& extreme : {made({{1, 0}, {1, most}}), made({{1, most}, {1, 5}}), made({{most, 3}, {2, 9}, {most, 3}}),
                              made({{most, most}, {most, 0}, {0, most}})}) {
    EXPECT_EQ(instance_order(extreme), stable_sorted(extreme));
    EXPECT_EQ(instance_order(extreme, 2), stable_sorted(extreme));
  }
  // Ties (a self communicator's one number on every location) keep the records' order.
  std::vector<CollectiveRecord> ties(9);
  for (std::uint32_t i = 0; i < ties.size(); ++i) ties[i].communicator = 3 - i % 2, ties[i].instance = 0, ties[i].location = i;
  EXPECT_EQ(instance_order(ties), stable_sorted(ties));
}
