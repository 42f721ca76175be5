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
  // Per position 0 .. positions-1, what this rank's part of a whole-row block costs the writer
  // for that row: its values, the row's position (4), a share of the part header (8) and the
  // writer's index entry (24, see write_parts); 0 where it has no row. Summed over ranks,
  // these plan blocks by the bytes really sent.
  std::vector<std::uint64_t> row_costs(std::uint32_t global_metric, std::uint32_t positions) const;
  static constexpr std::uint64_t kRowOverhead = 12 + 24;  // position, header share, index entry

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

// The writer's side without a dense copy of the block: the ranks' parts of positions
// [p0, p1) and columns [c0, c1) as gathered (`sizes[r]` bytes from rank r, one after the
// other) are checked and indexed by row (24 bytes per rank and row); each row some rank sent
// is composed in one row buffer and written, runs of rows nobody sent are skipped. With
// `piece`, the block is one row and goes out as the next piece of the writer's open row.
// `trailer` bytes follow each rank's part and are not values (collation carries the size of
// the rank's next part there). Returns the bytes it held besides the parts (index and row
// buffer). FormatError for parts that do not fit the block.
std::size_t write_parts(cube::CubexWriter& writer, std::string_view parts, const std::vector<std::int64_t>& sizes,
                        std::uint32_t p0, std::uint32_t p1, std::uint64_t c0, std::uint64_t c1, std::size_t width,
                        bool piece, std::size_t trailer = 0);
}  // namespace cubescale::profile
