#include "cubescale/collective/spanning_tree.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>
#include <vector>

using namespace cubescale::collective;

TEST(SpanningTree, PreorderBinaryTreeCoversEveryRankOnce) {
  for (int size = 1; size <= 40; ++size) {
    std::vector<int> parent_count(size, 0);
    for (int r = 0; r < size; ++r) {
      const auto links = binary_tree_links(r, size);
      EXPECT_EQ(links.parent < 0, r == 0);
      if (links.parent >= 0) EXPECT_LT(links.parent, r);
      EXPECT_LE(links.children.size(), 2u);
      for (auto c : links.children) {
        EXPECT_EQ(binary_tree_links(c, size).parent, r);
        parent_count[c] += 1;
      }
    }
    for (int r = 1; r < size; ++r) EXPECT_EQ(parent_count[r], 1);
  }
  EXPECT_THROW(binary_tree_links(3, 3), std::out_of_range);
}

TEST(SpanningTree, SubtreesAreContiguousRankRanges) {
  for (int size = 1; size <= 33; ++size) {
    // The ranks below r, found by walking down the links, are [r, r + n).
    for (int r = 0; r < size; ++r) {
      std::vector<int> stack{r}, below;
      while (!stack.empty()) {
        const int x = stack.back();
        stack.pop_back();
        below.push_back(x);
        for (int c : binary_tree_links(x, size).children) stack.push_back(c);
      }
      int hi = r;
      for (int x : below) hi = std::max(hi, x);
      EXPECT_EQ(static_cast<int>(below.size()), hi - r + 1) << "size " << size << " rank " << r;
    }
  }
}

TEST(SpanningTree, Fnv1aIsTheStandardHash) {
  EXPECT_EQ(fnv1a(""), 0xcbf29ce484222325ull);
  EXPECT_EQ(fnv1a("a"), 0xaf63dc4c8601ec8cull);
}
