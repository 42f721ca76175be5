#include "cubescale/cube/writer.hpp"

#include <zlib.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <system_error>

#include "cubescale/cube/aggregate.hpp"
#include "cubescale/cube/anchor_xml.hpp"
#include "cubescale/cube/severity.hpp"
#include "cubescale/cube/system_member.hpp"
#include "cubescale/cube/values_io.hpp"

namespace cubescale::cube {

namespace {

void put_u64(std::string& out, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

}  // namespace

// One row compressed as it arrives in pieces: a single zlib stream, as write_row makes.
struct RowDeflater {
  z_stream z{};
  bool open = false;
  ~RowDeflater() {
    if (open) deflateEnd(&z);
  }
};

constexpr std::size_t kOutputBuffer = 1 << 17;
// Where std::tmpfile() spills compressed rows, named in its errors (a full /tmp is not a full target).
constexpr const char* kSpillDirectory = P_tmpdir;

CubexWriter::CubexWriter(const std::string& path, Definitions defs, WriteOptions options)
    : path_(path), defs_(std::move(defs)), options_(options) {
  validate(defs_);
  deep_ = deep_order(defs_);
  wide_ = wide_order(defs_);
  auto anchor = write_anchor(defs_);
  anchor_ = std::move(anchor.xml);
  bool identity = true;
  for (std::size_t i = 0; i < anchor.location_order.size(); ++i) identity &= anchor.location_order[i] == i;
  if (!identity) column_of_ = std::move(anchor.location_order);
  // Only valid definitions get a temporary file.
  file_ = std::make_unique<AtomicFile>(path_);
  // Values arrive row by row (a few KiB each): a larger buffer than stdio's 4 KiB default
  // turns thousands of small write calls into a few.
  std::setvbuf(file_->stream(), nullptr, _IOFBF, kOutputBuffer);
  tar_ = std::make_unique<TarWriter>(file_->stream(), path_);
  if (options_.system_member && identity) {
    if (auto member = encode_system_member(defs_)) tar_->add_member(kSystemMember, *member, 0);
  }
}

CubexWriter::~CubexWriter() {
  deflater_.reset();
  if (spill_) std::fclose(spill_);
  tar_.reset();
  file_.reset();  // removes the temporary unless finish() renamed it
}

const std::vector<std::uint32_t>& CubexWriter::row_order(std::size_t metric) const {
  return cube::row_order(defs_.metrics.at(metric).kind, deep_, wide_);
}

void CubexWriter::add_extra_member(const std::string& name, std::uint64_t size, const MemberReader& read) {
  if (metrics_begun_ || finished_) throw std::logic_error("add_extra_member: extra members go before the metrics");
  tar_->begin_member(name);
  std::vector<char> buf(std::min<std::uint64_t>(size, 1 << 20));
  for (std::uint64_t at = 0; at < size; at += buf.size()) {
    const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(buf.size(), size - at));
    read(at, n, buf.data());
    tar_->write(buf.data(), n);
  }
  tar_->end_member('\n');
}

void CubexWriter::begin_metric(std::size_t metric) {
  if (open_ || finished_) throw std::logic_error("begin_metric: metric still open, or the file finished");
  metrics_begun_ = true;
  if (metric >= defs_.metrics.size()) throw std::out_of_range("metric index out of range");
  if (is_derived(defs_.metrics[metric]))
    throw std::logic_error("begin_metric: metric '" + defs_.metrics[metric].uniq_name + "' is derived and stores no data");
  metric_ = metric;
  open_ = true;
  next_position_ = 0;
  positions_.clear();
  row_bytes_ = defs_.locations.size() * defs_.metrics[metric].dtype.width();
  // Only a permuted location order needs a row of its own (rows in pieces never allocate one).
  row_buffer_.resize(column_of_.empty() ? 0 : row_bytes_);
  const auto name = std::to_string(metric) + ".data";
  if (options_.compress) {
    spill_ = std::tmpfile();  // unlinked already: nothing to clean up after a crash
    if (!spill_) throw_errno(kSpillDirectory);
    table_.clear();
    spilled_ = 0;
  } else {
    tar_->begin_member(name);
    tar_->write(kDataMagic);
  }
}

void CubexWriter::write_rows(const std::uint8_t* data, std::size_t rows) {
  if (!open_) throw std::logic_error("write_rows: no metric open");
  const std::size_t row_bytes = row_bytes_;
  if (next_position_ + rows > defs_.cnodes.size()) throw std::out_of_range("more rows than cnodes");
  for (std::size_t r = 0; r < rows; ++r) write_row(data + r * row_bytes);
}

void CubexWriter::write_rows(const std::uint8_t* data, std::size_t rows, const std::uint8_t* stored) {
  if (!stored) return write_rows(data, rows);
  if (!open_) throw std::logic_error("write_rows: no metric open");
  const std::size_t row_bytes = row_bytes_;
  if (next_position_ + rows > defs_.cnodes.size()) throw std::out_of_range("more rows than cnodes");
  for (std::size_t r = 0; r < rows; ++r) write_row(data + r * row_bytes, stored[r] != 0);
}

void CubexWriter::write_row(const std::uint8_t* row, bool stored) {
  const std::size_t row_bytes = row_bytes_;
  const auto position = next_position_++;
  // Keep all-zero rows out, except rows the caller says hold values and, as a metric gets at
  // least its first row, the last chance of a metric without rows: some readers (pycubexr)
  // reject an empty index.
  const bool last_chance = next_position_ == defs_.cnodes.size() && positions_.empty();
  if (!stored && !last_chance && row_is_zero(row, row_bytes)) return;
  positions_.push_back(static_cast<std::uint32_t>(position));
  const std::uint8_t* src = row;
  if (!column_of_.empty()) {
    const std::size_t w = defs_.metrics[metric_].dtype.width();
    for (std::size_t l = 0; l < column_of_.size(); ++l) std::memcpy(row_buffer_.data() + l * w, row + column_of_[l] * w, w);
    src = row_buffer_.data();
  }
  if (!options_.compress) {
    tar_->write(src, row_bytes);
    return;
  }
  uLongf size = compressBound(row_bytes);
  compressed_.resize(size);
  if (compress2(compressed_.data(), &size, src, row_bytes, Z_DEFAULT_COMPRESSION) != Z_OK)
    throw std::runtime_error("zlib compression failed");
  if (std::fwrite(compressed_.data(), 1, size, spill_) != size) throw_errno(kSpillDirectory);
  table_.push_back((positions_.size() - 1) * row_bytes);
  table_.push_back(spilled_);
  table_.push_back(size);
  spilled_ += size;
}

void CubexWriter::skip_rows(std::size_t rows) {
  if (!open_ || in_row_) throw std::logic_error("skip_rows: no metric open, or a row in pieces");
  if (next_position_ + rows > defs_.cnodes.size()) throw std::out_of_range("more rows than cnodes");
  if (rows == 0) return;
  next_position_ += rows - 1;
  if (next_position_ + 1 == defs_.cnodes.size() && positions_.empty() && !column_of_.empty()) {
    const std::vector<std::uint8_t> zeros(row_bytes_, 0);
    write_row(zeros.data());
  } else if (next_position_ + 1 == defs_.cnodes.size() && positions_.empty()) {
    // write_row's rule: a metric keeps at least one row. Zeros in pieces: no whole-row buffer.
    const std::vector<std::uint8_t> zeros(std::min<std::size_t>(row_bytes_, 1 << 16), 0);
    begin_row();
    for (std::size_t done = 0; done < row_bytes_; done += zeros.size())
      write_row_piece(zeros.data(), std::min(zeros.size(), row_bytes_ - done));
    end_row();
  } else {
    next_position_ += 1;
  }
}

void CubexWriter::begin_row() {
  if (!open_ || in_row_) throw std::logic_error("begin_row: no metric open, or a row already begun");
  if (!column_of_.empty()) throw std::logic_error("begin_row: rows in pieces need the file's location order");
  if (next_position_ >= defs_.cnodes.size()) throw std::out_of_range("more rows than cnodes");
  positions_.push_back(static_cast<std::uint32_t>(next_position_++));
  in_row_ = true;
  row_written_ = 0;
  if (!options_.compress) return;
  if (!deflater_) deflater_ = std::make_unique<RowDeflater>();
  deflater_->z = z_stream{};
  if (deflateInit(&deflater_->z, Z_DEFAULT_COMPRESSION) != Z_OK) throw std::runtime_error("zlib init failed");
  deflater_->open = true;
}

void CubexWriter::write_row_piece(const std::uint8_t* data, std::size_t bytes) {
  if (!in_row_) throw std::logic_error("write_row_piece: no row begun");
  if (row_written_ + bytes > row_bytes_) throw std::out_of_range("row piece past the end of the row");
  row_written_ += bytes;
  if (!options_.compress) {
    tar_->write(data, bytes);
    return;
  }
  auto& z = deflater_->z;
  z.next_in = const_cast<Bytef*>(data);
  z.avail_in = static_cast<uInt>(bytes);
  const bool last = row_written_ == row_bytes_;
  compressed_.resize(1 << 16);
  int status;
  do {
    z.next_out = compressed_.data();
    z.avail_out = static_cast<uInt>(compressed_.size());
    status = deflate(&z, last ? Z_FINISH : Z_NO_FLUSH);
    if (status == Z_STREAM_ERROR) throw std::runtime_error("zlib compression failed");
    const std::size_t n = compressed_.size() - z.avail_out;
    if (n && std::fwrite(compressed_.data(), 1, n, spill_) != n) throw_errno(kSpillDirectory);
  } while (z.avail_out == 0 || (last && status != Z_STREAM_END));
}

void CubexWriter::end_row() {
  if (!in_row_) throw std::logic_error("end_row: no row begun");
  if (row_written_ != row_bytes_)
    throw std::logic_error("end_row: " + std::to_string(row_written_) + " of " + std::to_string(row_bytes_) +
                           " row bytes written");
  in_row_ = false;
  if (!options_.compress) return;
  const std::uint64_t size = deflater_->z.total_out;
  deflateEnd(&deflater_->z);
  deflater_->open = false;
  table_.push_back((positions_.size() - 1) * row_bytes_);
  table_.push_back(spilled_);
  table_.push_back(size);
  spilled_ += size;
}

void CubexWriter::end_compressed() {
  const auto name = std::to_string(metric_) + ".data";
  std::string head(kZDataMagic);
  put_u64(head, table_.size() / 3);
  for (auto v : table_) put_u64(head, v);
  tar_->begin_member(name);
  tar_->write(head);
  if (std::fflush(spill_) != 0 || std::fseek(spill_, 0, SEEK_SET) != 0) throw_errno(kSpillDirectory);
  std::vector<char> buf(1 << 20);
  std::size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), spill_)) > 0) tar_->write(buf.data(), n);
  if (std::ferror(spill_)) throw_errno(kSpillDirectory);
  std::fclose(spill_);
  spill_ = nullptr;
  tar_->end_member(0);  // a trailing zero byte after the last stream is ignored by readers
}

void CubexWriter::end_metric() {
  if (!open_ || in_row_) throw std::logic_error("end_metric: no metric open, or a row in pieces");
  if (next_position_ != defs_.cnodes.size())
    throw std::logic_error("end_metric: " + std::to_string(next_position_) + " of " + std::to_string(defs_.cnodes.size()) +
                           " rows written");
  if (options_.compress) end_compressed();
  else tar_->end_member(0);  // only 1- and 2-byte types can hit a 512 multiple; readers ignore the byte
  tar_->add_member(std::to_string(metric_) + ".index", sparse_index(positions_));
  open_ = false;
}

void CubexWriter::finish() {
  if (open_ || finished_) throw std::logic_error("finish: metric still open, or finish() called before");
  // Whether it succeeds or not, the file takes no more writes (a failed commit closes it).
  finished_ = true;
  // A trailing newline pads anchor.xml off a 512-byte multiple (see TarWriter::end_member).
  tar_->add_member("anchor.xml", anchor_, '\n');
  tar_->finish();
  file_->commit();
}

namespace {

// The definitions to write: derived metrics become stored ones in their own kind.
Definitions written_definitions(const Definitions& defs, const WriteOptions& options) {
  Definitions out = defs;
  if (!options.derived_as_values) return out;
  for (auto& m : out.metrics) {
    if (!is_derived(m)) continue;
    m.derivation = Derivation::Stored;
    m.cubepl.clear();
    m.cubepl_init.clear();
  }
  return out;
}

}  // namespace

void write_cubex(const Report& report, const std::string& path, WriteOptions options, std::size_t block_bytes) {
  CubexWriter writer(path, written_definitions(report.definitions(), options), options);
  if (const auto* source = report.source()) {
    const auto& extras = source->extra_members();
    for (std::size_t i = 0; i < extras.size(); ++i)
      writer.add_extra_member(extras[i].name, extras[i].size,
                              [&](std::uint64_t at, std::size_t n, void* dst) { source->read_extra(i, at, n, dst); });
  }
  std::vector<std::uint8_t> block;
  for (std::size_t m = 0; m < report.metric_count(); ++m) {
    if (is_derived(report.definitions().metrics[m]) && !options.derived_as_values) continue;  // CubeW: no data
    const auto values = report.values(m);
    const auto& order = writer.row_order(m);
    const std::size_t row_bytes = values->row_bytes();
    const std::size_t rows_per_block = std::max<std::size_t>(1, block_bytes / std::max<std::size_t>(1, row_bytes));
    // Present rows of zeros that are values (a minimum of 0) are written; other zero rows not.
    std::vector<std::uint8_t> stored;
    if (zero_row_is_a_value(values->dtype())) {
      stored.resize(order.size());
      for (std::size_t r = 0; r < order.size(); ++r) stored[r] = values->present(order[r]) ? 1 : 0;
    }
    const auto stored_from = [&](std::size_t first) { return stored.empty() ? nullptr : stored.data() + first; };
    writer.begin_metric(m);
    if (report.definitions().metrics[m].kind == MetricKind::Exclusive) {  // preorder: rows already in file order
      writer.write_rows(values->data(), values->cnodes(), stored_from(0));
      writer.end_metric();
      continue;
    }
    for (std::size_t first = 0; first < order.size(); first += rows_per_block) {
      const std::size_t rows = std::min(rows_per_block, order.size() - first);
      block.resize(rows * row_bytes);
      for (std::size_t r = 0; r < rows; ++r) std::memcpy(block.data() + r * row_bytes, values->row(order[first + r]), row_bytes);
      writer.write_rows(block.data(), rows, stored_from(first));
    }
    writer.end_metric();
  }
  writer.finish();
}

}  // namespace cubescale::cube
