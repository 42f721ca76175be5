#pragma once
// Streaming .cubex writer (paper 001, section 3): rows arrive one (metric, block of cnodes) at
// a time and go straight to the file, so memory is bounded by one block whatever the number of
// locations and cnodes. All-zero rows are left out (SPARSE index) unless the caller says they
// hold values (MIN/MAXDOUBLE rows of zeros, see write_rows); rows may be zlib-compressed
// one stream per row (ZCUBEX). The archive is written through an AtomicFile (exclusive unique
// temporary beside the target, renamed when finish() succeeds), so a failed, abandoned or
// concurrent write never leaves a half-written or mixed report behind. Failed system calls
// throw std::system_error with their errno, naming the target.
#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "cubescale/common/atomic_file.hpp"
#include "cubescale/cube/definitions.hpp"
#include "cubescale/cube/report.hpp"
#include "cubescale/cube/tar.hpp"

namespace cubescale::cube {

struct WriteOptions {
  bool compress = false;       // ZCUBEX rows
  bool system_member = true;   // also store the system tree as sequence definitions
  // Derived metrics: false keeps them as CubePL expressions without data, as CubeW writes
  // them (Cube computes them; pycubexr 2.1 rejects any metric type but INCLUSIVE/EXCLUSIVE);
  // true stores their computed values as ordinary metrics instead (readable everywhere).
  bool derived_as_values = false;
};

class CubexWriter {
 public:
  CubexWriter(const std::string& path, Definitions defs, WriteOptions options = {});
  ~CubexWriter();  // removes the temporary file unless finish() succeeded
  CubexWriter(const CubexWriter&) = delete;
  CubexWriter& operator=(const CubexWriter&) = delete;

  const Definitions& definitions() const { return defs_; }
  // The cnodes whose rows metric m's data member holds, in file order: write_rows() takes rows
  // in exactly this order.
  const std::vector<std::uint32_t>& row_order(std::size_t metric) const;
  // Copies a member that is not part of the report (see source_file.hpp), before any metric:
  // `read(offset, n, dst)` gives its bytes, which go to the file 1 MiB at a time. A member of
  // exactly k x 512 bytes gets a trailing newline (see TarWriter::end_member).
  using MemberReader = std::function<void(std::uint64_t offset, std::size_t n, void* dst)>;
  void add_extra_member(const std::string& name, std::uint64_t size, const MemberReader& read);
  void begin_metric(std::size_t metric);
  // `rows` consecutive rows in row_order, each locations x width bytes in native byte order
  // with columns in our location order.
  void write_rows(const std::uint8_t* data, std::size_t rows);
  // The same, with a flag per row (non-zero: the row holds values): a flagged row is written even
  // when all its values are zero. For types whose zero row is a value (zero_row_is_a_value in
  // aggregate.hpp: a minimum of 0) leaving it out would make it absent when read back.
  void write_rows(const std::uint8_t* data, std::size_t rows, const std::uint8_t* stored);
  // The next `rows` rows are zero everywhere (a collating writer knows it without the data).
  void skip_rows(std::size_t rows);
  // A row that is not zero, given in pieces of whole values in column order (for rows wider
  // than a writer's buffer budget): begin_row(), write_row_piece() until the row is complete,
  // end_row(). Needs our location order to be the file's (true for assembled definitions).
  void begin_row();
  void write_row_piece(const std::uint8_t* data, std::size_t bytes);
  void end_row();
  void end_metric();
  void finish();

 private:
  void write_row(const std::uint8_t* row, bool stored = false);
  void end_compressed();

  std::string path_;
  Definitions defs_;
  WriteOptions options_;
  std::unique_ptr<AtomicFile> file_;
  std::unique_ptr<TarWriter> tar_;
  std::vector<std::uint32_t> deep_, wide_, column_of_;  // column_of_ empty: identity
  std::string anchor_;
  // State of the open metric.
  std::size_t metric_ = 0;
  bool open_ = false, finished_ = false, metrics_begun_ = false;
  std::size_t next_position_ = 0;
  std::vector<std::uint32_t> positions_;
  std::size_t row_bytes_ = 0;
  std::vector<std::uint8_t> row_buffer_;
  std::FILE* spill_ = nullptr;  // compressed rows, copied into the member at end_metric()
  std::vector<std::uint64_t> table_;
  std::uint64_t spilled_ = 0;
  std::vector<std::uint8_t> compressed_;
  // The row being written in pieces.
  bool in_row_ = false;
  std::size_t row_written_ = 0;
  std::unique_ptr<struct RowDeflater> deflater_;
};

// Writes a whole report through CubexWriter, block by block, with the extra members of the
// file it was read from (Report::source()).
void write_cubex(const Report& report, const std::string& path, WriteOptions options = {},
                 std::size_t block_bytes = std::size_t(64) << 20);

}  // namespace cubescale::cube
