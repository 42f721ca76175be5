#pragma once
// Collation kernels (paper 001, section 3): the rows of every rank's local profile go into
// one .cubex in blocks, so that the writer's memory is bounded by a fixed budget whatever the
// number of ranks. No MPI here: the driver (python/cubescale/parallel/collate.py) gathers the
// byte strings these kernels make and hands them to the writer's assembler.
//
// For one metric, the file holds the rows in the metric's row order (positions). A block is
// a range of positions [p0, p1) and a range of global columns (locations) [c0, c1): whole rows
// when they fit the budget, else pieces of one row. A rank's locations are contiguous in the
// global order (they are one process's subtree), so its part of a block is a rectangle:
//   u32 first column, u32 k, k x u32 positions, k x (its columns in the block) x width bytes,
// holding only the rows it has non-zero values in: a rank that never visited a call path
// sends nothing for it, and a rank with no such row in the block sends nothing at all.
// Rows nobody sent are zero everywhere and are skipped by the writer (SPARSE index) without
// a second pass over the data.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "cubescale/cube/severity.hpp"
#include "cubescale/cube/writer.hpp"
#include "cubescale/profile/local_profile.hpp"

namespace cubescale::profile {

// A rank's side.
class RowSource {
 public:
  // `metric_map`, `cnode_map`, `wide_position`: from unification; `first_location`: the
  // global index of the profile's first location. Keeps a reference to the profile.
  RowSource(const LocalProfile& profile, const std::vector<std::uint32_t>& metric_map,
            const std::vector<std::uint32_t>& cnode_map, const std::vector<std::uint32_t>& wide_position,
            std::uint64_t first_location);

  // This rank's part of the block, "" if it has none.
  std::string block(std::uint32_t global_metric, std::uint32_t p0, std::uint32_t p1, std::uint64_t c0,
                    std::uint64_t c1) const;
  // Whether this rank has non-zero values in the row at `position` of a metric.
  bool nonzero(std::uint32_t global_metric, std::uint32_t position) const;

 private:
  struct Row {
    std::uint32_t position, cnode;
  };
  const LocalProfile& profile_;
  std::uint64_t first_location_;
  // Per global metric: the local metric (or none) and its non-zero rows sorted by position.
  std::vector<std::int64_t> local_metric_;
  std::vector<std::vector<Row>> rows_;
};

// The writer's side: one dense block of rows, filled from the ranks' parts.
class BlockAssembler {
 public:
  explicit BlockAssembler(std::size_t width) : width_(width) {}
  // Starts a block of positions [p0, p1) and columns [c0, c1), all zero.
  void reset(std::uint32_t p0, std::uint32_t p1, std::uint64_t c0, std::uint64_t c1);
  // Places one rank's part; FormatError if it does not fit the block.
  void add(std::string_view part);
  // Rows of the block that some rank sent (the others are zero everywhere).
  const std::vector<std::uint8_t>& sent() const { return sent_; }
  const std::uint8_t* row(std::size_t r) const { return data_.data() + r * row_bytes(); }
  std::size_t row_bytes() const { return (c1_ - c0_) * width_; }
  std::size_t rows() const { return p1_ - p0_; }
  std::size_t capacity_bytes() const { return data_.capacity() + sent_.capacity(); }

 private:
  std::size_t width_;
  std::uint32_t p0_ = 0, p1_ = 0;
  std::uint64_t c0_ = 0, c1_ = 0;
  std::vector<std::uint8_t> data_, sent_;
};

// Hands a block of whole rows to the writer: the rows some rank sent are written, the others
// skipped (zero everywhere).
void write_block(cube::CubexWriter& writer, const BlockAssembler& block);

}  // namespace cubescale::profile
