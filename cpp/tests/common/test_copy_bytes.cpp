#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "cubescale/common/copy_bytes.hpp"

using cubescale::copy_bytes;
using cubescale::near_alias;

TEST(CopyBytes, EqualsMemcpyAtEveryPageDistanceAndSize) {
  std::vector<unsigned char> src(3 * 4096), dst(3 * 4096 + 256);
  for (std::size_t i = 0; i < src.size(); ++i) src[i] = static_cast<unsigned char>(i * 131 + 7);
  for (std::size_t n : {0, 1, 63, 64, 65, 2047, 2048, 2049, 4096, 8191}) {
    for (std::size_t shift = 0; shift < 200; ++shift) {
      std::fill(dst.begin(), dst.end(), 0xee);
      copy_bytes(dst.data() + shift, src.data() + 3, n);
      for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(dst[shift + i], src[3 + i]) << n << " " << shift << " " << i;
      if (shift + n < dst.size()) ASSERT_EQ(dst[shift + n], 0xee);
      if (shift) ASSERT_EQ(dst[shift - 1], 0xee);
    }
  }
}

TEST(CopyBytes, NearAliasIsTheWindowAfterTheSourcesPageOffset) {
  alignas(4096) static unsigned char page[3 * 4096];
  EXPECT_FALSE(near_alias(page + 4096, page, 4096));      // same page offset
  EXPECT_TRUE(near_alias(page + 4096 + 16, page, 4096));  // 16 bytes past it
  EXPECT_TRUE(near_alias(page + 63, page, 4096));
  EXPECT_FALSE(near_alias(page + 64, page, 4096));
  EXPECT_FALSE(near_alias(page, page + 16, 4096));        // before it
  EXPECT_FALSE(near_alias(page + 16, page, 1000));        // too short for a string copy
}
