// SCALE_FUNC values (CubeLib's 848-byte slots): decoding, term-wise sums as CubeLib adds them,
// big-endian swapping, limits, and a sum that overflows failing cleanly (also on threads).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>

#include "cubescale/cube/aggregate.hpp"
#include "cubescale/cube/dtype.hpp"
#include "cubescale/cube/scale_func.hpp"

using namespace cubescale::cube;

namespace {

std::vector<std::uint8_t> slot_of(const ScaleFunc& f) {
  std::vector<std::uint8_t> slot(kScaleFuncWidth);
  f.encode(slot.data(), slot.size());
  return slot;
}

}  // namespace

TEST(ScaleFunc, EncodeDecodeRoundTrip) {
  ScaleFunc f;
  f.terms = {{2.0, 2, 3, 4}, {1.0, 1, 2, 3}};
  f.measurements = {{64, 1.5, 0.25}};
  const auto slot = slot_of(f);
  std::uint32_t counts[2];
  std::memcpy(counts, slot.data(), 8);
  EXPECT_EQ(counts[0], 2u);
  EXPECT_EQ(counts[1], 1u);
  const auto back = ScaleFunc::decode(slot.data(), slot.size());
  ASSERT_EQ(back.terms.size(), 2u);
  EXPECT_EQ(back.terms[1].a, 1.0);
  EXPECT_EQ(back.terms[1].c, 2u);
  ASSERT_EQ(back.measurements.size(), 1u);
  EXPECT_EQ(back.measurements[0].processes, 64u);
  EXPECT_EQ(back.measurements[0].width, 0.25);
}

TEST(ScaleFunc, SumsAddEqualExponentsAndAppendOthers) {
  ScaleFunc left, right;
  left.terms = {{2.0, 1, 2, 0}};
  left.measurements = {{8, 1.0, 0.0}};
  right.terms = {{3.0, 1, 2, 0}, {1.0, 2, 1, 0}, {0.0, 3, 1, 0}};  // a zero term adds nothing
  left.add(right, +1);
  ASSERT_EQ(left.terms.size(), 2u);
  EXPECT_EQ(left.terms[0].b, 2);  // x^2 dominates x^(1/2): first
  EXPECT_EQ(left.terms[1].a, 5.0);
  EXPECT_EQ(left.measurements.size(), 1u);  // the left operand's measurements stay
  EXPECT_DOUBLE_EQ(left.asymptotic(), 1000.0 * 2 + 0 + 1.0 / 1000);
  left.add(right, -1);
  EXPECT_EQ(left.terms.size(), 2u);
  const auto half = std::find_if(left.terms.begin(), left.terms.end(), [](auto& t) { return t.b == 1; });
  EXPECT_EQ(half->a, 2.0);
}

TEST(ScaleFunc, HostileCountsStayInsideTheSlot) {
  std::vector<std::uint8_t> slot(kScaleFuncWidth, 0x7f);
  const std::uint32_t huge[2] = {0xffffffffu, 0xffffffffu};
  std::memcpy(slot.data(), huge, 8);
  const auto f = ScaleFunc::decode(slot.data(), slot.size());
  EXPECT_EQ(f.terms.size(), kScaleFuncMaxTerms);
  EXPECT_EQ(f.measurements.size(), kScaleFuncMaxMeasurements);
  EXPECT_TRUE(ScaleFunc::decode(slot.data(), 4).terms.empty());
}

TEST(ScaleFunc, BigEndianSlotsSwapToNative) {
  ScaleFunc f;
  f.terms = {{2.5, -1, 3, 2}};
  f.measurements = {{16, 4.0, 0.5}};
  const auto native = slot_of(f);
  auto big = native;
  auto flip = [&](std::size_t at, std::size_t n) { std::reverse(big.begin() + at, big.begin() + at + n); };
  flip(0, 4), flip(4, 4), flip(8, 8), flip(16, 4), flip(20, 4), flip(24, 4), flip(28, 4), flip(32, 8), flip(40, 8);
  scale_func_swap(big.data(), big.size());
  EXPECT_EQ(big, native);
}

TEST(ScaleFunc, TooManyTermsFailAlsoOnThreads) {
  // Each location of two cnodes holds terms with different exponents: the sum needs 40 terms.
  const auto t = *parse_data_type("SCALE_FUNC");
  Severity s(t, 2, 600);
  for (std::size_t c = 0; c < 2; ++c) {
    ScaleFunc f;
    for (int i = 0; i < 20; ++i) f.terms.push_back({1.0, static_cast<std::int32_t>(i + 20 * static_cast<int>(c)), 1, 0});
    const auto slot = slot_of(f);
    for (std::size_t l = 0; l < s.locations(); ++l) std::memcpy(s.row(c) + l * t.width(), slot.data(), slot.size());
    s.set_present(c, true);
  }
  const std::vector<std::uint32_t> parents{kNoParent, 0};
  EXPECT_THROW(to_inclusive(s, parents, 1), ScaleFuncOverflow);
  EXPECT_THROW(to_inclusive(s, parents, 3), ScaleFuncOverflow);  // rethrown after the threads joined
  EXPECT_THROW(to_exclusive(s, parents, 3), ScaleFuncOverflow);  // root minus child: 40 terms too
}
