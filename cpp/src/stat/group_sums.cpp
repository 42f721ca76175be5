#include "cubescale/stat/group_sums.hpp"

#include <stdexcept>
#include <string>

namespace cubescale::stat {

namespace {

void check(std::size_t values, std::size_t rows, std::size_t columns, const Grouping& g) {
  if (values != rows * columns) throw std::invalid_argument("group_sums: values are not rows x columns");
  if (g.row_group.size() != rows) throw std::invalid_argument("group_sums: row_group needs one entry per row");
  if (g.column_group.size() != columns) throw std::invalid_argument("group_sums: column_group needs one entry per column");
  if (!g.weight.empty() && g.weight.size() != rows) throw std::invalid_argument("group_sums: weight needs one entry per row");
  for (auto r : g.row_group)
    if (r != kSkip && r >= g.row_groups)
      throw std::invalid_argument("group_sums: row group " + std::to_string(r) + " >= " + std::to_string(g.row_groups));
  for (auto c : g.column_group)
    if (c >= g.column_groups)
      throw std::invalid_argument("group_sums: column group " + std::to_string(c) + " >= " + std::to_string(g.column_groups));
}

template <typename T>
std::vector<double> sums(std::span<const T> values, std::size_t rows, std::size_t columns, const Grouping& g) {
  check(values.size(), rows, columns, g);
  std::vector<double> out(static_cast<std::size_t>(g.row_groups) * g.column_groups, 0.0);
  for (std::size_t r = 0; r < rows; ++r) {
    if (g.row_group[r] == kSkip) continue;
    const double w = g.weight.empty() ? 1.0 : g.weight[r];
    if (w == 0.0) continue;
    double* target = out.data() + static_cast<std::size_t>(g.row_group[r]) * g.column_groups;
    const T* row = values.data() + r * columns;
    for (std::size_t l = 0; l < columns; ++l) target[g.column_group[l]] += static_cast<double>(row[l]) * w;
  }
  return out;
}

}  // namespace

std::vector<double> group_sums(std::span<const double> values, std::size_t rows, std::size_t columns, const Grouping& g) {
  return sums(values, rows, columns, g);
}

std::vector<double> group_sums(std::span<const std::uint64_t> values, std::size_t rows, std::size_t columns,
                               const Grouping& g) {
  return sums(values, rows, columns, g);
}

}  // namespace cubescale::stat
