#pragma once
// Adds to the cells of a [row * columns + column] matrix that chunks of columns share
// (run_chunks: each chunk adds only to its own columns' cells). The cells of neighbouring
// columns share a cache line: two threads adding to them add by add pass the line back and
// forth between their cores (the clock checks took half as long again on 2 threads as on 1).
// A ColumnSums keeps the sums of the column it is at apart and adds them to the matrix when it
// moves to another column and at its end; a chunk that goes column by column touches the
// matrix once per cell. Each cell then receives the sum of a run of adds instead of each add:
// the same value for integers (counts, and ticks as doubles below 2^53).
#include <cstddef>
#include <cstdint>
#include <vector>

namespace cubescale {

template <typename T>
class ColumnSums {
 public:
  ColumnSums(std::vector<T>& matrix, std::size_t columns) : matrix_(&matrix), columns_(columns) {}
  ColumnSums(const ColumnSums&) = delete;
  ColumnSums& operator=(const ColumnSums&) = delete;
  ColumnSums(ColumnSums&&) noexcept = default;
  ColumnSums& operator=(ColumnSums&& other) noexcept {  // our pending sums go to our matrix first
    if (this != &other) {
      flush();
      matrix_ = other.matrix_, columns_ = other.columns_, column_ = other.column_;
      pending_ = std::move(other.pending_), touched_ = std::move(other.touched_);
    }
    return *this;
  }
  ~ColumnSums() { flush(); }

  // `value` > 0 (a zero changes nothing and is dropped).
  void add(std::uint32_t row, std::uint32_t column, T value = 1) {
    if (!(value > T{})) return;
    if (column != column_) flush(), column_ = column;
    if (row >= pending_.size()) pending_.resize(std::size_t(row) + 1, T{});
    if (pending_[row] == T{}) touched_.push_back(row);
    pending_[row] += value;
  }

  void flush() {
    for (auto row : touched_) {
      (*matrix_)[std::size_t(row) * columns_ + column_] += pending_[row];
      pending_[row] = T{};
    }
    touched_.clear();
  }

 private:
  std::vector<T>* matrix_;
  std::size_t columns_;
  std::uint32_t column_ = 0;
  std::vector<T> pending_;               // per row, the current column's sum not yet added
  std::vector<std::uint32_t> touched_;  // rows with a pending sum
};

}  // namespace cubescale
