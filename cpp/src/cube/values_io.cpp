#include "cubescale/cube/values_io.hpp"

#include <zlib.h>

#include <algorithm>
#include <cstring>
#include <limits>

#include "cubescale/common/copy_bytes.hpp"
#include "cubescale/common/format_error.hpp"
#include "cubescale/cube/scale_func.hpp"

namespace cubescale::cube {

namespace {

constexpr std::uint8_t kSparse = 1, kDense = 3;

std::uint64_t read_uint(std::string_view bytes, std::size_t at, int n, bool big_endian) {
  std::uint64_t v = 0;
  for (int i = 0; i < n; ++i) {
    const auto b = static_cast<std::uint8_t>(bytes[at + i]);
    v |= std::uint64_t(b) << (8 * (big_endian ? n - 1 - i : i));
  }
  return v;
}

[[noreturn]] void fail(const MemberName& where, std::size_t offset, const std::string& message) {
  throw FormatError(where.file, where.member, offset, message);
}

void need(std::string_view bytes, std::size_t at, std::size_t n, const MemberName& where, const char* what) {
  if (bytes.size() < at || bytes.size() - at < n)
    fail(where, bytes.size(), std::string("truncated ") + what + " (need " + std::to_string(at + n) + " bytes, have " +
                                  std::to_string(bytes.size()) + ")");
}

// Inflates ZCUBEX streams and hands the `needed` bytes the index asks for to `rows(first, data,
// n)` as runs of n whole rows (row `first` onwards), through a buffer of at most
// kInflateBufferBytes: a compressed metric never exists inflated in full beside its matrix.
// Blocks must follow each other without gaps (every writer we know writes one stream per row,
// in order); output beyond `needed` belongs to trailing rows: it is inflated into scratch
// space, so that the streams' checksums are still verified, counted in `extra` and dropped.
// Fewer bytes than needed, a stream that ends early (a gap) or a truncated stream is a
// FormatError (rows handed over before it are then the caller's to drop).
constexpr std::size_t kInflateBufferBytes = 8 << 20;

template <class Rows>
void inflate_rows(std::string_view bytes, bool big_endian, std::size_t needed, std::size_t row_bytes, std::uint64_t most,
                  std::uint64_t& extra, const MemberName& where, Rows&& rows) {
  std::size_t at = kZDataMagic.size();
  need(bytes, at, 8, where, "ZCUBEX header");
  const auto count = read_uint(bytes, at, 8, big_endian);
  at += 8;
  if (count > (bytes.size() - at) / 24) fail(where, at - 8, "ZCUBEX block count " + std::to_string(count) + " exceeds the member");
  const std::size_t table = at;
  const std::size_t streams = table + 24 * count;
  // Whole rows only, so that every run handed over ends on a row (needed is whole rows).
  const std::size_t per_buffer = row_bytes ? std::max<std::size_t>(1, kInflateBufferBytes / row_bytes) : 0;
  std::vector<std::uint8_t> buffer(std::min<std::size_t>(needed, per_buffer * row_bytes));
  std::size_t filled = 0, first_row = 0;
  const auto hand_over = [&] {
    rows(first_row, buffer.data(), filled / row_bytes);
    first_row += filled / row_bytes;
    filled = 0;
  };
  std::uint64_t covered = 0;  // bytes inflated by the streams before this one
  char scratch[1 << 14];
  for (std::uint64_t b = 0; b < count; ++b) {
    const auto entry = table + 24 * b;
    const auto uoff = read_uint(bytes, entry, 8, big_endian);
    const auto coff = read_uint(bytes, entry + 8, 8, big_endian);
    const auto csize = read_uint(bytes, entry + 16, 8, big_endian);
    if (uoff != covered)
      fail(where, entry, "ZCUBEX block " + std::to_string(b) + " starts at row byte " + std::to_string(uoff) +
                             ", the blocks before it end at " + std::to_string(covered));
    if (csize == 0) continue;
    if (coff > bytes.size() - streams || csize > bytes.size() - streams - coff)
      fail(where, entry, "ZCUBEX block " + std::to_string(b) + " lies outside the member");
    z_stream z{};
    if (inflateInit(&z) != Z_OK) fail(where, entry, "cannot start inflating");
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data() + streams + coff));
    z.avail_in = static_cast<uInt>(csize);
    int rc = Z_OK;
    bool into_rows = false;
    for (;;) {
      if (z.avail_out == 0) {  // room for the next output: the row buffer while rows are due
        const std::uint64_t done = covered + z.total_out;
        into_rows = done < needed;
        const std::size_t room = into_rows ? std::min<std::uint64_t>(buffer.size() - filled, needed - done) : sizeof scratch;
        z.next_out = into_rows ? reinterpret_cast<Bytef*>(buffer.data() + filled) : reinterpret_cast<Bytef*>(scratch);
        z.avail_out = static_cast<uInt>(std::min<std::uint64_t>(room, std::numeric_limits<uInt>::max()));
      }
      const auto room = z.avail_out;
      rc = inflate(&z, Z_NO_FLUSH);
      if (into_rows) {
        filled += room - z.avail_out;
        if (filled == buffer.size() || covered + z.total_out == needed) hand_over();
      }
      if (covered + z.total_out > most) {  // stops a bomb after `most` bytes of work
        inflateEnd(&z);
        fail(where, streams + coff, "ZCUBEX streams inflate to more than " + std::to_string(most) +
                                        " bytes: more than the index's rows and one per call path and one more");
      }
      if (rc == Z_STREAM_END || (rc != Z_OK && rc != Z_BUF_ERROR)) break;
      if (z.avail_out != 0) break;  // the input ended before the stream did
    }
    covered += z.total_out;
    inflateEnd(&z);
    if (rc != Z_STREAM_END) fail(where, streams + coff, "corrupt or truncated zlib stream in ZCUBEX block " + std::to_string(b));
  }
  if (covered < needed)
    fail(where, bytes.size(), "ZCUBEX streams hold " + std::to_string(covered) + " bytes of rows, the index needs " +
                                  std::to_string(needed));
  extra = covered - needed;
}

void swap_fields(std::uint8_t* value, const std::vector<std::uint8_t>& fields) {
  for (auto f : fields) {
    std::reverse(value, value + f);
    value += f;
  }
}

template <class T>
inline void swap_copy_loop(std::uint8_t* dst, const std::uint8_t* src, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    T v;
    std::memcpy(&v, src + i * sizeof(T), sizeof v);
    if constexpr (sizeof(T) == 8) v = __builtin_bswap64(v);
    else if constexpr (sizeof(T) == 4) v = __builtin_bswap32(v);
    else v = __builtin_bswap16(v);
    std::memcpy(dst + i * sizeof(T), &v, sizeof v);
  }
}

// Byte swaps of n words from src to dst (which may be src). Where the compiler can clone them
// for AVX2 they become one shuffle per 32 bytes, chosen when the library loads: 190 KB of
// doubles in 3.8 us instead of 14.7 us.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define CUBESCALE_AVX2_CLONE __attribute__((target_clones("avx2", "default")))
#else
#define CUBESCALE_AVX2_CLONE
#endif
CUBESCALE_AVX2_CLONE void swap_copy_words8(std::uint8_t* dst, const std::uint8_t* src, std::size_t n) {
  swap_copy_loop<std::uint64_t>(dst, src, n);
}
CUBESCALE_AVX2_CLONE void swap_copy_words4(std::uint8_t* dst, const std::uint8_t* src, std::size_t n) {
  swap_copy_loop<std::uint32_t>(dst, src, n);
}
CUBESCALE_AVX2_CLONE void swap_copy_words2(std::uint8_t* dst, const std::uint8_t* src, std::size_t n) {
  swap_copy_loop<std::uint16_t>(dst, src, n);
}

// Swaps n words of `word` bytes from src to dst (which may be src); false for other sizes.
bool swap_copy_words(std::size_t word, std::uint8_t* dst, const std::uint8_t* src, std::size_t n) {
  if (word == 8) return swap_copy_words8(dst, src, n), true;
  if (word == 4) return swap_copy_words4(dst, src, n), true;
  if (word == 2) return swap_copy_words2(dst, src, n), true;
  return false;
}

// How one stored row becomes one matrix row: gathered by column, byte-swapped, or both.
// Decided once per member. Big-endian values made of equal words (integers, doubles, vectors
// of doubles) swap word by word, while they are copied when no gather is needed (one pass);
// mixed fields (TAU_ATOMIC) one by one; SCALE_FUNC slots by their own counts.
class RowDecoder {
 public:
  RowDecoder(const Severity& out, const std::vector<std::uint32_t>& column_of, bool big_endian)
      : dtype_(out.dtype()),
        width_(dtype_.width()),
        locations_(out.locations()),
        row_bytes_(out.row_bytes()),
        column_of_(column_of),
        swap_(big_endian && width_ > 1),
        fields_(dtype_.fields()) {
    const bool uniform = !fields_.empty() && dtype_.kind != ValueKind::ScaleFunc &&
                         std::all_of(fields_.begin(), fields_.end(), [&](auto f) { return f == fields_[0]; });
    word_ = uniform ? fields_[0] : 0;
  }

  // Whether a stored row is the matrix row as it is (no byte swap, no column gather).
  bool plain() const { return !swap_ && column_of_.empty(); }

  void decode(std::uint8_t* dst, const std::uint8_t* src) const {
    if (swap_ && column_of_.empty() && swap_copy_words(word_, dst, src, row_bytes_ / std::max<std::size_t>(word_, 1)))
      return;
    if (column_of_.empty()) copy_bytes(dst, src, row_bytes_);
    else
      for (std::size_t l = 0; l < locations_; ++l) std::memcpy(dst + l * width_, src + column_of_[l] * width_, width_);
    if (swap_) swap_in_place(dst);
  }

 private:
  void swap_in_place(std::uint8_t* row) const {
    if (dtype_.kind == ValueKind::ScaleFunc) {
      for (std::size_t l = 0; l < locations_; ++l) scale_func_swap(row + l * width_, width_);
      return;
    }
    if (word_ == 1 || swap_copy_words(word_, row, row, row_bytes_ / std::max<std::size_t>(word_, 1))) return;
    for (std::size_t l = 0; l < locations_; ++l) swap_fields(row + l * width_, fields_);
  }

  const DataType& dtype_;
  std::size_t width_, locations_, row_bytes_;
  const std::vector<std::uint32_t>& column_of_;
  bool swap_;
  std::vector<std::uint8_t> fields_;
  std::size_t word_ = 0;  // the size of every field when all are equal, else 0
};

}  // namespace

ValueIndex parse_index(const MemberBytes& member, std::size_t rows, const MemberName& where) {
  std::string scratch;  // index members are small: read whole
  return parse_index(member.view(0, member.size(), scratch), rows, where);
}

ValueIndex parse_index(std::string_view bytes, std::size_t rows, const MemberName& where) {
  need(bytes, 0, kIndexMagic.size() + 7, where, "index header");
  if (bytes.substr(0, kIndexMagic.size()) != kIndexMagic) fail(where, 0, "not a CUBEX.INDEX member (wrong magic)");
  ValueIndex index;
  std::size_t at = kIndexMagic.size();
  const auto marker = read_uint(bytes, at, 4, false);
  if (marker == 1) index.big_endian = false;
  else if (marker == 0x01000000u) index.big_endian = true;
  else fail(where, at, "bad endianness marker " + std::to_string(marker));
  at += 4 + 2;  // marker, version
  const auto format = static_cast<std::uint8_t>(bytes[at++]);
  if (format == kDense) {
    index.dense = true;
    index.positions.resize(rows);
    for (std::size_t i = 0; i < rows; ++i) index.positions[i] = static_cast<std::uint32_t>(i);
    return index;
  }
  if (format != kSparse) fail(where, at - 1, "unknown index format " + std::to_string(format));
  need(bytes, at, 4, where, "index count");
  const auto n = read_uint(bytes, at, 4, index.big_endian);
  if (n > rows) fail(where, at, "index lists " + std::to_string(n) + " rows but the call tree has " + std::to_string(rows));
  at += 4;
  need(bytes, at, 4 * n, where, "index positions");
  index.positions.resize(n);
  std::vector<bool> listed(rows, false);  // a row listed twice would leave another unread (zeros)
  for (std::size_t i = 0; i < n; ++i, at += 4) {
    const auto p = read_uint(bytes, at, 4, index.big_endian);
    if (p >= rows) fail(where, at, "row position " + std::to_string(p) + " outside the call tree of " + std::to_string(rows));
    if (listed[p]) fail(where, at, "row position " + std::to_string(p) + " listed twice");
    listed[p] = true;
    index.positions[i] = static_cast<std::uint32_t>(p);
  }
  return index;
}

namespace {

// Up to this many zero bytes after the last whole row are padding (our writer appends one to
// keep a member off a multiple of 512 bytes, see writer.hpp).
constexpr std::size_t kMaxPadding = 8;

// The bytes after the indexed rows (`extra` of them, ending with `tail`) must be whole rows or a
// short zero padding: a value width that differs from the file's (a wrong data type) almost
// always leaves a part of a row, which is then reported instead of being read as values.
void check_trailing(std::uint64_t extra, std::size_t row_bytes, std::string_view tail, bool whole_rows_only,
                    std::uint64_t offset, std::size_t rows, const DataType& dtype, const MemberName& where) {
  const auto part = row_bytes ? extra % row_bytes : extra;
  if (part == 0) return;
  if (!whole_rows_only && part <= kMaxPadding && tail.size() == part &&
      std::all_of(tail.begin(), tail.end(), [](char c) { return c == 0; }))
    return;
  fail(where, offset,
       "the index lists " + std::to_string(rows) + " rows of " + std::to_string(row_bytes) + " bytes and " +
           std::to_string(extra) + " bytes follow them, which is not a whole number of rows: the values are not " +
           dtype.name);
}

// Rows of a CUBEX.DATA member that is read on demand: runs of rows that go unchanged to
// consecutive matrix rows and are large enough (a system call costs about as much as copying
// 64 KiB) are read straight into the matrix, others 8 MB at a time through a buffer.
void read_rows_on_demand(const MemberBytes& bytes, const ValueIndex& index, const std::vector<std::uint32_t>& order,
                         const RowDecoder& decoder, Severity& out) {
  constexpr std::size_t kDirectBytes = 64 << 10, kBufferBytes = 8 << 20;
  const std::size_t row_bytes = out.row_bytes();
  const auto& positions = index.positions;
  std::string scratch;
  const std::size_t rows_per_read = std::max<std::size_t>(1, kBufferBytes / std::max<std::size_t>(row_bytes, 1));
  for (std::size_t k = 0; k < positions.size();) {
    if (decoder.plain()) {
      const auto first = order[positions[k]];
      std::size_t run = 1;
      while (k + run < positions.size() && order[positions[k + run]] == first + run) ++run;
      if (run * row_bytes >= kDirectBytes) {
        bytes.copy(kDataMagic.size() + k * row_bytes, run * row_bytes, out.row(first));
        for (std::size_t r = 0; r < run; ++r) out.set_present(first + r, true);
        k += run;
        continue;
      }
    }
    const auto run = std::min(rows_per_read, positions.size() - k);
    const auto block = bytes.view(kDataMagic.size() + k * row_bytes, run * row_bytes, scratch);
    for (std::size_t r = 0; r < run; ++r) {
      const auto c = order[positions[k + r]];
      decoder.decode(out.row(c), reinterpret_cast<const std::uint8_t*>(block.data()) + r * row_bytes);
      out.set_present(c, true);
    }
    k += run;
  }
}

}  // namespace

bool read_row(const MemberBytes& bytes, const ValueIndex& index, const std::vector<std::uint32_t>& order,
              const std::vector<std::uint32_t>& column_of, std::size_t cnode, Severity& row, const MemberName& where) {
  std::string scratch;
  const auto head = bytes.view(0, std::min<std::uint64_t>(bytes.size(), kZDataMagic.size()), scratch);
  if (head.substr(0, kZDataMagic.size()) == kZDataMagic) return false;
  if (head.substr(0, kDataMagic.size()) != kDataMagic) fail(where, 0, "not a CUBEX.DATA member (wrong magic)");
  std::fill(row.data(), row.data() + row.bytes(), std::uint8_t(0));
  const std::size_t row_bytes = row.row_bytes();
  for (std::size_t k = 0; k < index.positions.size(); ++k) {
    if (index.positions[k] >= order.size() || order[index.positions[k]] != cnode) continue;
    const std::uint64_t at = kDataMagic.size() + std::uint64_t(k) * row_bytes;
    if (at + row_bytes > bytes.size())
      fail(where, bytes.size(), "the member ends inside row " + std::to_string(k) + " of the " +
                                    std::to_string(index.positions.size()) + " the index lists");
    const auto src = bytes.view(at, row_bytes, scratch);
    RowDecoder(row, column_of, index.big_endian).decode(row.row(0), reinterpret_cast<const std::uint8_t*>(src.data()));
    row.set_present(0, true);
    break;
  }
  return true;
}

std::uint64_t read_data(const MemberBytes& bytes, const ValueIndex& index, const std::vector<std::uint32_t>& order,
                        const std::vector<std::uint32_t>& column_of, Severity& out, const MemberName& where) {
  const std::size_t row_bytes = out.row_bytes();
  const std::size_t rows = index.positions.size();
  const std::size_t needed = rows * row_bytes;
  std::string head_scratch;
  const std::string head(bytes.view(0, std::min<std::uint64_t>(bytes.size(), kZDataMagic.size()), head_scratch));
  std::string whole_scratch;
  std::string_view raw;
  std::uint64_t extra = 0;
  const RowDecoder decoder(out, column_of, index.big_endian);
  // Rows beyond the index are tolerated (see values_io.hpp), up to one per call path and one
  // more: what CUBE 4.0 writers (rows of call paths the index leaves out) and Scalasca (one
  // trailing row) leave. More is not a report of this call tree, and for ZCUBEX.DATA the bound
  // is one on the work of inflating (a 4 MB stream can inflate to 4 GB).
  const std::uint64_t most_rows = std::uint64_t(rows) + out.cnodes() + 1;
  if (std::string_view(head).substr(0, kZDataMagic.size()) == kZDataMagic) {
    const auto whole = bytes.view(0, bytes.size(), whole_scratch);
    inflate_rows(whole, index.big_endian, needed, row_bytes, most_rows * row_bytes, extra, where,
                 [&](std::size_t first, const std::uint8_t* data, std::size_t n) {
                   for (std::size_t r = 0; r < n; ++r) {
                     const auto c = order[index.positions[first + r]];
                     decoder.decode(out.row(c), data + r * row_bytes);
                     out.set_present(c, true);
                   }
                 });
    check_trailing(extra, row_bytes, {}, true, bytes.size(), rows, out.dtype(), where);
    return extra;
  } else if (std::string_view(head).substr(0, kDataMagic.size()) == kDataMagic) {
    const auto stored = bytes.size() - kDataMagic.size();
    if (stored < needed)
      fail(where, bytes.size(), "data member has " + std::to_string(stored) + " bytes of rows, the index needs " +
                                    std::to_string(needed));
    extra = stored - needed;
    const auto part = row_bytes ? extra % row_bytes : extra;
    std::string tail_scratch;
    const auto tail = part <= kMaxPadding ? bytes.view(bytes.size() - part, part, tail_scratch) : std::string_view();
    check_trailing(extra, row_bytes, tail, false, kDataMagic.size() + needed, rows, out.dtype(), where);
    if (row_bytes && stored / row_bytes > most_rows)
      fail(where, kDataMagic.size() + most_rows * row_bytes,
           "data member holds " + std::to_string(stored / row_bytes) + " rows of " + std::to_string(row_bytes) +
               " bytes: more than the index's " + std::to_string(rows) + " and one per call path (" +
               std::to_string(out.cnodes()) + ") and one more");
    if (!bytes.in_memory()) {
      read_rows_on_demand(bytes, index, order, decoder, out);
      return extra;
    }
    raw = bytes.view(kDataMagic.size(), needed, whole_scratch);
  } else {
    fail(where, 0, "not a CUBEX.DATA member (wrong magic)");
  }
  const auto* stored_rows = reinterpret_cast<const std::uint8_t*>(raw.data());
  for (std::size_t k = 0; k < rows; ++k) {
    const auto c = order[index.positions[k]];
    decoder.decode(out.row(c), stored_rows + k * row_bytes);
    out.set_present(c, true);
  }
  return extra;
}

std::uint64_t read_data(std::string_view bytes, const ValueIndex& index, const std::vector<std::uint32_t>& order,
                        const std::vector<std::uint32_t>& column_of, Severity& out, const MemberName& where) {
  return read_data(MemberBytes(bytes), index, order, column_of, out, where);
}

std::string sparse_index(const std::vector<std::uint32_t>& positions) {
  std::string out(kIndexMagic);
  auto put = [&](std::uint64_t v, int n) {
    for (int i = 0; i < n; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  };
  put(1, 4);
  put(0, 2);
  put(kSparse, 1);
  put(positions.size(), 4);
  for (auto p : positions) put(p, 4);
  return out;
}

}  // namespace cubescale::cube
