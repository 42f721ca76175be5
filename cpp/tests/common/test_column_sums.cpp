#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <tuple>
#include <vector>

#include "cubescale/common/column_sums.hpp"
#include "cubescale/common/run_chunks.hpp"

using cubescale::ColumnSums;

namespace {

constexpr std::size_t kRows = 37, kColumns = 11;

// Adds (row, column, value) in column runs, each column's adds in one run or several (a
// chunk that comes back to a column), the values whole numbers as ticks are.
std::vector<std::tuple<std::uint32_t, std::uint32_t, double>> adds(std::uint32_t seed) {
  std::mt19937 random(seed);
  std::vector<std::tuple<std::uint32_t, std::uint32_t, double>> out;
  for (int run = 0; run < 200; ++run) {
    const auto column = std::uint32_t(random() % kColumns);
    for (auto n = random() % 50; n-- > 0;)
      out.emplace_back(std::uint32_t(random() % kRows), column, double(random() % 1000));  // zeros too
  }
  return out;
}

std::vector<double> direct(const std::vector<std::tuple<std::uint32_t, std::uint32_t, double>>& list) {
  std::vector<double> m(kRows * kColumns, 0.0);
  for (const auto& [row, column, value] : list) m[row * kColumns + column] += value;
  return m;
}

}  // namespace

TEST(ColumnSums, GivesTheSumsOfAddingEachValueDirectly) {
  const auto list = adds(7);
  std::vector<double> m(kRows * kColumns, 0.0);
  {
    ColumnSums<double> sums(m, kColumns);
    for (const auto& [row, column, value] : list) sums.add(row, column, value);
  }  // the last column's sums at the end
  EXPECT_EQ(m, direct(list));
}

TEST(ColumnSums, FlushAddsWhatIsPendingOnceAndKeepsCounting) {
  std::vector<std::uint64_t> m(kRows * kColumns, 5);
  ColumnSums<std::uint64_t> counts(m, kColumns);
  counts.add(3, 2);
  counts.add(3, 2);
  EXPECT_EQ(m[3 * kColumns + 2], 5u);  // still pending
  counts.flush();
  counts.flush();  // nothing twice
  EXPECT_EQ(m[3 * kColumns + 2], 7u);
  counts.add(3, 2, 4);
  counts.add(0, 9);  // another column: column 2's sum goes now
  EXPECT_EQ(m[3 * kColumns + 2], 11u);
  EXPECT_EQ(m[0 * kColumns + 9], 5u);
}

TEST(ColumnSums, ChunksOfColumnsOnThreadsGiveTheMatrixOfOnePass) {
  // Each chunk adds to its own columns only, as the analysis' steps do.
  const auto list = adds(11);
  std::vector<double> m(kRows * kColumns, 0.0);
  const std::vector<std::size_t> bounds{0, 3, 4, 8, kColumns};
  cubescale::run_chunks(bounds, [&](std::size_t, std::size_t begin, std::size_t end) {
    ColumnSums<double> sums(m, kColumns);
    for (const auto& [row, column, value] : list)
      if (column >= begin && column < end) sums.add(row, column, value);
  });
  EXPECT_EQ(m, direct(list));
}

TEST(ColumnSums, AMoveAssignmentAddsWhatTheTargetHadPendingFirst) {
  std::vector<std::uint64_t> a(kRows * kColumns, 0), b(kRows * kColumns, 0);
  ColumnSums<std::uint64_t> x(a, kColumns), y(b, kColumns);
  x.add(0, 1, 5);
  y.add(2, 3, 7);
  x = std::move(y);  // x's 5 must not vanish
  EXPECT_EQ(a[0 * kColumns + 1], 5u);
  x.flush();
  EXPECT_EQ(b[2 * kColumns + 3], 7u);
}
