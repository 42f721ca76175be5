#pragma once
// The per-metric members N.index and N.data. The index says which rows are stored (as
// positions in the metric's row enumeration, see definitions.hpp) and, through its marker,
// the byte order of both members. Data rows are fixed-width values, one per location Id;
// ZCUBEX.DATA holds zlib streams addressed by a table of (uncompressed offset, compressed
// offset, compressed size).
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "cubescale/cube/archive.hpp"
#include "cubescale/cube/severity.hpp"

namespace cubescale::cube {

struct MemberName {
  std::string file;
  std::string member;
};

struct ValueIndex {
  bool big_endian = false;
  bool dense = false;
  std::vector<std::uint32_t> positions;  // stored rows, in the order of the data member
};

// `rows` is the size of the metric's row enumeration (the number of cnodes).
ValueIndex parse_index(std::string_view bytes, std::size_t rows, const MemberName& where);
ValueIndex parse_index(const MemberBytes& bytes, std::size_t rows, const MemberName& where);

// Decodes the data member into `out` (cnodes x locations; rows the index lists are written,
// marked present, others left alone). Position p of the index is the row of cnode order[p];
// destination column l takes file column column_of[l] (empty column_of: identity).
//
// Returns the number of bytes of rows beyond what the index needs, which are ignored, as Cube
// ignores them: Scalasca's analyzer writes one trailing all-zero row per metric, and CUBE 4.0
// writers leave the rows of call paths that the index does not list. Those bytes must be whole
// rows (for ZCUBEX.DATA: inflated bytes), at most one per call path and one more, or,
// in CUBEX.DATA, up to 8 zero bytes of padding;
// anything else means the rows are not of the metric's width (a wrong data type) and is a
// FormatError, as are fewer bytes than the index needs, gaps between ZCUBEX blocks and
// truncated or corrupt zlib streams.
std::uint64_t read_data(const MemberBytes& bytes, const ValueIndex& index, const std::vector<std::uint32_t>& order,
                        const std::vector<std::uint32_t>& column_of, Severity& out, const MemberName& where);
std::uint64_t read_data(std::string_view bytes, const ValueIndex& index, const std::vector<std::uint32_t>& order,
                        const std::vector<std::uint32_t>& column_of, Severity& out, const MemberName& where);

// One call path's row of a CUBEX.DATA member into `row` (1 x locations, the metric's type):
// read where the index puts it, byte-swapped and gathered as read_data does, all zero when the
// index lists no row for it. Returns false for ZCUBEX.DATA (rows are inside zlib streams: the
// caller loads the metric whole). FormatError when the member ends before the row.
bool read_row(const MemberBytes& bytes, const ValueIndex& index, const std::vector<std::uint32_t>& order,
              const std::vector<std::uint32_t>& column_of, std::size_t cnode, Severity& row, const MemberName& where);

// Little-endian SPARSE index for the given positions.
std::string sparse_index(const std::vector<std::uint32_t>& positions);

inline constexpr std::string_view kDataMagic = "CUBEX.DATA";
inline constexpr std::string_view kZDataMagic = "ZCUBEX.DATA";
inline constexpr std::string_view kIndexMagic = "CUBEX.INDEX";

}  // namespace cubescale::cube
