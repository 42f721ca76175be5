#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <tuple>
#include <vector>

#include "cubescale/common/radix_sort.hpp"

using cubescale::radix_sort;

namespace {

struct Key {
  std::uint32_t a, b, c, index;
};

std::uint32_t field(const Key& k, std::size_t i) { return i == 0 ? k.a : i == 1 ? k.b : k.c; }

// Random keys whose fields take few values in some bytes and many in others, so that passes
// are both skipped (every key agrees) and run; `index` their original order.
std::vector<Key> keys(std::size_t n, std::uint32_t a_values, std::uint32_t b_values, std::uint32_t seed) {
  std::mt19937 random(seed);
  std::vector<Key> out(n);
  for (std::uint32_t i = 0; i < n; ++i)
    out[i] = {std::uint32_t(random() % a_values), std::uint32_t((random() % b_values) << 9),
              std::uint32_t(random() & 0xff00ffu), i};
  return out;
}

}  // namespace

TEST(RadixSort, EqualsAStableSortByTheFieldsInOrder) {
  for (auto [a_values, b_values] : {std::pair{1u, 1u}, {3u, 1u}, {1u, 70000u}, {5u, 300u}, {1u << 31, 1u << 20}}) {
    auto mine = keys(20000, a_values, b_values, a_values ^ b_values);
    auto expected = mine;
    std::stable_sort(expected.begin(), expected.end(), [](const Key& x, const Key& y) {
      return std::tie(x.a, x.b, x.c) < std::tie(y.a, y.b, y.c);
    });
    radix_sort<3>(mine, field);
    ASSERT_EQ(mine.size(), expected.size());
    for (std::size_t i = 0; i < mine.size(); ++i) ASSERT_EQ(mine[i].index, expected[i].index) << a_values << " " << i;
  }
}

TEST(RadixSort, KeepsTheOrderOfEqualKeysAndOfSortedOnes) {
  std::vector<Key> equal(1000, Key{7, 7, 7, 0});
  for (std::uint32_t i = 0; i < equal.size(); ++i) equal[i].index = i;
  radix_sort<3>(equal, field);
  for (std::uint32_t i = 0; i < equal.size(); ++i) ASSERT_EQ(equal[i].index, i);
  std::vector<Key> none;
  radix_sort<3>(none, field);
  EXPECT_TRUE(none.empty());
  std::vector<Key> descending;
  for (std::uint32_t i = 0; i < 600; ++i) descending.push_back({0, 600 - i, 0, i});
  radix_sort<3>(descending, field);
  for (std::uint32_t i = 0; i < 600; ++i) ASSERT_EQ(descending[i].index, 599 - i);
}
