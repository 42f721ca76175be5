#pragma once
// Sums of a [cnode][location] matrix over groups of rows and groups of columns: the one
// data-proportional loop of `cubescale stat` (call paths -> regions, per location) and of
// `cubescale score` (call paths -> regions or region types, locations -> processes).
//
// out[row_group[c]][column_group[l]] += values[c][l] * weight[c]
//
// Rows whose group is kSkip are left out (a region's inclusive value counts only the call
// paths not nested in another call path of the same region, as CubeLib's flat profile does).
// One pass over the matrix in storage order; the output is small (groups x column groups).
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

namespace cubescale::stat {

inline constexpr std::uint32_t kSkip = std::numeric_limits<std::uint32_t>::max();

struct Grouping {
  std::span<const std::uint32_t> row_group;     // one per cnode (row); kSkip leaves the row out
  std::uint32_t row_groups = 0;
  std::span<const std::uint32_t> column_group;  // one per location (column)
  std::uint32_t column_groups = 0;
  std::span<const double> weight;               // one per row, or empty for 1
};

// Throws std::invalid_argument when a span's length or a group index does not fit.
std::vector<double> group_sums(std::span<const double> values, std::size_t rows, std::size_t columns, const Grouping& g);
std::vector<double> group_sums(std::span<const std::uint64_t> values, std::size_t rows, std::size_t columns,
                               const Grouping& g);
// The same, added into `out` (row_groups x column_groups, usually zeros): the caller's array,
// so that a result as large as the input (regions x locations) is neither copied nor zeroed twice.
void add_group_sums(std::span<const double> values, std::size_t rows, std::size_t columns, const Grouping& g,
                    std::span<double> out);
void add_group_sums(std::span<const std::uint64_t> values, std::size_t rows, std::size_t columns, const Grouping& g,
                    std::span<double> out);

}  // namespace cubescale::stat
