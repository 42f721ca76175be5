// Conversion into a caller's buffer (Severity::borrowing): whatever the buffer held before,
// the result has the bytes and present flags of a conversion into fresh zeroed memory, on one
// thread and on several, for every combine rule and with absent rows.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <stdexcept>
#include <vector>

#include "cubescale/cube/aggregate.hpp"
#include "cubescale/cube/dtype.hpp"
#include "expect_same_severity.hpp"

using namespace cubescale::cube;

namespace {

std::vector<std::uint32_t> chain_and_fan(std::size_t n) {
  // 0 > 1 > 2, then every further cnode a child of 1: absent rows meet present children.
  std::vector<std::uint32_t> parents(n, 1);
  parents[0] = kNoParent;
  parents[1] = 0;
  return parents;
}

Severity some_values(const DataType& t, std::size_t cnodes, std::size_t locations, std::mt19937& rng) {
  Severity s(t, cnodes, locations);
  for (std::size_t c = 0; c < cnodes; ++c) {
    if (c % 3 == 1) continue;  // absent, among them cnode 1 with present children
    for (std::size_t b = 0; b + 8 <= s.row_bytes(); b += 8) {
      const double v = static_cast<double>(rng() % 1000);
      std::memcpy(s.row(c) + b, &v, 8);
    }
    s.set_present(c, true);
  }
  return s;
}

// 8-byte aligned memory that starts full of garbage.
struct DirtyBuffer {
  std::vector<std::uint64_t> words;
  explicit DirtyBuffer(std::size_t bytes) : words((bytes + 7) / 8, 0xabababababababababull) {}
  std::uint8_t* data() { return reinterpret_cast<std::uint8_t*>(words.data()); }
};


}  // namespace

TEST(CubeConvertInto, DirtyBufferGetsTheBytesOfFreshMemory) {
  std::mt19937 rng(11);
  for (const char* name : {"DOUBLE", "MINDOUBLE", "TAU_ATOMIC", "NDOUBLES(2)", "HISTOGRAM(2)"}) {
    SCOPED_TRACE(name);
    const auto t = *parse_data_type(name);
    const auto parents = chain_and_fan(40);
    const auto values = some_values(t, parents.size(), 2500, rng);
    for (unsigned threads : {1u, 3u}) {
      for (auto [from, to] : {std::pair{MetricKind::Exclusive, MetricKind::Inclusive},
                              std::pair{MetricKind::Inclusive, MetricKind::Exclusive},
                              std::pair{MetricKind::Inclusive, MetricKind::Inclusive}}) {
        // Offsets that the input's alignment shares and ones it does not (staged writes).
        for (std::size_t offset : {0, 8, 16, 64}) {
          SCOPED_TRACE(offset);
          DirtyBuffer memory(values.bytes() + offset);
          Severity out = Severity::borrowing(memory.data() + offset, t, values.cnodes(), values.locations());
          for (std::size_t c = 0; c < out.cnodes(); ++c) out.set_present(c, true);  // stale flags too
          convert(values, from, to, parents, out, threads);
          expect_same(convert(values, from, to, parents, 1), out);
          EXPECT_EQ(out.data(), memory.data() + offset);  // written in place, not reallocated
        }
      }
    }
  }
}

TEST(CubeConvertInto, RejectsMisalignedOrMismatchedOutput) {
  const auto t = *parse_data_type("DOUBLE");
  DirtyBuffer memory(8 * 12 + 8);
  EXPECT_THROW(Severity::borrowing(memory.data() + 1, t, 3, 4), std::invalid_argument);
  EXPECT_NO_THROW(Severity::borrowing(memory.data() + 1, *parse_data_type("TAU_ATOMIC"), 1, 1));
  const Severity values(t, 3, 4);
  Severity narrower = Severity::borrowing(memory.data(), t, 3, 3);
  EXPECT_THROW(convert(values, MetricKind::Inclusive, MetricKind::Exclusive, chain_and_fan(3), narrower),
               std::invalid_argument);
  Severity other_type = Severity::borrowing(memory.data(), *parse_data_type("UINT64"), 3, 4);
  EXPECT_THROW(convert(values, MetricKind::Inclusive, MetricKind::Inclusive, chain_and_fan(3), other_type),
               std::invalid_argument);
}

TEST(CubeConvertInto, CopiesOfABorrowingMatrixOwnTheirMemory) {
  const auto t = *parse_data_type("DOUBLE");
  DirtyBuffer memory(8 * 6);
  Severity borrowed = Severity::borrowing(memory.data(), t, 2, 3);
  const Severity copy = borrowed;
  EXPECT_NE(copy.data(), borrowed.data());
  EXPECT_EQ(std::memcmp(copy.data(), borrowed.data(), borrowed.bytes()), 0);
}

TEST(CubeConvertInto, AReusedMatrixLosesRowsThatBecomeAbsent) {
  const auto t = *parse_data_type("DOUBLE");
  const auto parents = chain_and_fan(6);
  Severity full(t, parents.size(), 3), sparse(t, parents.size(), 3);
  for (std::size_t c = 0; c < full.cnodes(); ++c) {
    for (std::size_t l = 0; l < 3; ++l) {
      const double v = 1.0 + static_cast<double>(c);
      std::memcpy(full.row(c) + 8 * l, &v, 8);
      if (c == 0) std::memcpy(sparse.row(c) + 8 * l, &v, 8);
    }
    full.set_present(c, true);
  }
  sparse.set_present(0, true);  // only the root row
  DirtyBuffer memory(full.bytes());
  Severity owned(t, parents.size(), 3);
  Severity borrowed = Severity::borrowing(memory.data(), t, parents.size(), 3);
  for (Severity* out : {&owned, &borrowed}) {
    for (auto to : {MetricKind::Exclusive, MetricKind::Inclusive}) {
      convert(full, MetricKind::Inclusive, to, parents, *out, 2);
      convert(sparse, MetricKind::Inclusive, to, parents, *out, 2);
      expect_same(convert(sparse, MetricKind::Inclusive, to, parents, 1), *out);
    }
  }
}

TEST(CubeConvertInto, RejectsAnOutputOverlappingTheInput) {
  const auto t = *parse_data_type("DOUBLE");
  const auto parents = chain_and_fan(4);
  DirtyBuffer memory(2 * 8 * 4 * 2);
  Severity in = Severity::borrowing(memory.data(), t, 4, 2);
  for (std::size_t c = 0; c < 4; ++c) in.set_present(c, true);
  Severity same = Severity::borrowing(memory.data(), t, 4, 2);
  Severity shifted = Severity::borrowing(memory.data() + 8, t, 4, 2);
  Severity after = Severity::borrowing(memory.data() + in.bytes(), t, 4, 2);
  EXPECT_THROW(to_inclusive(in, parents, same), std::invalid_argument);
  EXPECT_THROW(convert(in, MetricKind::Inclusive, MetricKind::Inclusive, parents, shifted), std::invalid_argument);
  EXPECT_NO_THROW(to_exclusive(in, parents, after));  // right after the input: no overlap
}

TEST(CubeConvertInto, EmptyBorrowedMatrices) {
  const auto t = *parse_data_type("DOUBLE");
  const auto parents = chain_and_fan(3);
  const Severity none(t, parents.size(), 0);
  Severity out = Severity::borrowing(nullptr, t, parents.size(), 0);
  to_exclusive(none, parents, out);
  EXPECT_EQ(out.bytes(), 0u);
}
