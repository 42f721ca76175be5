// The kernels of `cubescale stat` and `cubescale score`: group sums on a small matrix checked by
// hand, and OTF2 record sizes against libotf2's documented example (otf2-estimator --help: with
// 4 regions and 1 metric, Enter and Leave take 3 bytes, a timestamp 9).
#include <gtest/gtest.h>

#include <cstdint>
#include <stdexcept>
#include <vector>

#include "cubescale/stat/group_sums.hpp"
#include "cubescale/stat/record_sizes.hpp"

using namespace cubescale::stat;

TEST(StatGroupSums, SumsRowsAndColumnsWithWeights) {
  // 3 cnodes x 4 locations; cnodes 0 and 2 -> group 0, cnode 1 skipped; locations {0,1} {2,3}
  const std::vector<double> values = {1, 2, 3, 4,  10, 20, 30, 40,  100, 200, 300, 400};
  const std::vector<std::uint32_t> rows = {0, kSkip, 0}, columns = {0, 0, 1, 1};
  const std::vector<double> weight = {1.0, 5.0, 2.0};
  const auto out = group_sums(values, 3, 4, Grouping{rows, 1, columns, 2, weight});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_DOUBLE_EQ(out[0], 3 + 2 * 300.0);
  EXPECT_DOUBLE_EQ(out[1], 7 + 2 * 700.0);
}

TEST(StatGroupSums, UnsignedValuesAndNoWeight) {
  const std::vector<std::uint64_t> values = {1, 2, 3, 4};
  const std::vector<std::uint32_t> rows = {1, 0}, columns = {0, 1};
  const auto out = group_sums(values, 2, 2, Grouping{rows, 2, columns, 2, {}});
  EXPECT_EQ(out, (std::vector<double>{3, 4, 1, 2}));
}

TEST(StatGroupSums, IdentityRunsAndScatteredColumnsAgree) {
  // 2 rows x 12 columns: identity columns, runs of 4 (one sum per run) and scattered groups
  std::vector<double> values(24);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<double>(i * i % 7) + 0.5;
  const std::vector<std::uint32_t> rows = {0, 0};
  std::vector<std::uint32_t> identity(12), runs(12), scattered(12);
  for (std::uint32_t l = 0; l < 12; ++l) identity[l] = l, runs[l] = l / 4, scattered[l] = l % 3;
  const auto a = group_sums(values, 2, 12, Grouping{rows, 1, identity, 12, {}});
  const auto b = group_sums(values, 2, 12, Grouping{rows, 1, runs, 3, {}});
  const auto c = group_sums(values, 2, 12, Grouping{rows, 1, scattered, 3, {}});
  for (std::uint32_t k = 0; k < 3; ++k) {
    double by_run = 0, by_scatter = 0;
    for (std::uint32_t l = 0; l < 12; ++l) by_run += runs[l] == k ? a[l] : 0, by_scatter += scattered[l] == k ? a[l] : 0;
    EXPECT_DOUBLE_EQ(b[k], by_run);
    EXPECT_DOUBLE_EQ(c[k], by_scatter);
  }
}

TEST(StatGroupSums, RejectsGroupsOutOfRange) {
  const std::vector<double> values = {1, 2};
  const std::vector<std::uint32_t> rows = {3}, columns = {0, 0};
  EXPECT_THROW(group_sums(values, 1, 2, Grouping{rows, 2, columns, 1, {}}), std::invalid_argument);
  const std::vector<std::uint32_t> ok_rows = {0}, bad_columns = {0, 1};
  EXPECT_THROW(group_sums(values, 1, 2, Grouping{ok_rows, 1, bad_columns, 1, {}}), std::invalid_argument);
  EXPECT_THROW(group_sums(values, 2, 2, Grouping{ok_rows, 1, columns, 1, {}}), std::invalid_argument);
}

TEST(StatRecordSizes, MatchOtf2EstimatorExample) {
  const auto sizes = otf2_record_sizes({{"Region", 4}, {"Metric", 1}}, 0, 0);
  EXPECT_EQ(sizes.at("Enter"), 3u);
  EXPECT_EQ(sizes.at("Leave"), 3u);
  EXPECT_EQ(sizes.at("Timestamp"), 9u);
  EXPECT_EQ(sizes.count("Metric"), 0u);
  // More regions need wider references: 300 regions take two bytes.
  EXPECT_EQ(otf2_record_sizes({{"Region", 300}}, 0, 0).at("Enter"), 4u);
  EXPECT_GT(otf2_record_sizes({}, 2, 0).at("Metric"), 0u);
}

TEST(StatRecordSizes, RejectsUnknownDefinitions) {
  EXPECT_THROW(otf2_record_sizes({{"Regions", 4}}, 0, 0), std::invalid_argument);
}
