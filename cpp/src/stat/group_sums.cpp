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

// Column groups as runs of consecutive columns (locations of one process are usually
// adjacent): a row then costs one sum per run instead of a scattered add per value.
struct Run {
  std::size_t begin, end;
  std::uint32_t group;
};

std::vector<Run> runs_of(std::span<const std::uint32_t> column_group) {
  std::vector<Run> runs;
  for (std::size_t l = 0; l < column_group.size(); ++l) {
    if (runs.empty() || runs.back().group != column_group[l]) runs.push_back({l, l, column_group[l]});
    runs.back().end = l + 1;
  }
  return runs;
}

bool identity(std::span<const std::uint32_t> column_group) {
  for (std::size_t l = 0; l < column_group.size(); ++l)
    if (column_group[l] != l) return false;
  return true;
}

template <typename T>
void add_row(const T* __restrict row, double* __restrict target, double w, const std::vector<Run>& runs, bool same,
             std::span<const std::uint32_t> column_group) {
  const std::size_t columns = column_group.size();
  if (same) {  // one column group per column: a loop the compiler vectorizes
    for (std::size_t l = 0; l < columns; ++l) target[l] += static_cast<double>(row[l]) * w;
  } else if (runs.size() * 4 <= columns) {  // long runs: sum each, then one add
    for (const auto& run : runs) {
      double sum = 0.0;
      for (std::size_t l = run.begin; l < run.end; ++l) sum += static_cast<double>(row[l]);
      target[run.group] += sum * w;
    }
  } else {
    for (std::size_t l = 0; l < columns; ++l) target[column_group[l]] += static_cast<double>(row[l]) * w;
  }
}

template <typename T>
void add_sums(std::span<const T> values, std::size_t rows, std::size_t columns, const Grouping& g, std::span<double> out) {
  check(values.size(), rows, columns, g);
  if (out.size() != static_cast<std::size_t>(g.row_groups) * g.column_groups)
    throw std::invalid_argument("group_sums: out is not row_groups x column_groups");
  const bool same = g.column_groups == columns && identity(g.column_group);
  const auto runs = same ? std::vector<Run>{} : runs_of(g.column_group);
  for (std::size_t r = 0; r < rows; ++r) {
    if (g.row_group[r] == kSkip) continue;
    const double w = g.weight.empty() ? 1.0 : g.weight[r];
    if (w == 0.0) continue;
    add_row(values.data() + r * columns, out.data() + static_cast<std::size_t>(g.row_group[r]) * g.column_groups, w,
            runs, same, g.column_group);
  }
}

template <typename T>
std::vector<double> sums(std::span<const T> values, std::size_t rows, std::size_t columns, const Grouping& g) {
  std::vector<double> out(static_cast<std::size_t>(g.row_groups) * g.column_groups, 0.0);
  add_sums(values, rows, columns, g, std::span<double>(out));
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

void add_group_sums(std::span<const double> values, std::size_t rows, std::size_t columns, const Grouping& g,
                    std::span<double> out) {
  add_sums(values, rows, columns, g, out);
}

void add_group_sums(std::span<const std::uint64_t> values, std::size_t rows, std::size_t columns, const Grouping& g,
                    std::span<double> out) {
  add_sums(values, rows, columns, g, out);
}

}  // namespace cubescale::stat
