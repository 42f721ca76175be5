// Core pieces of the cube concept: data types, orders, aggregation, index/data decoding.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>

#include "cubescale/common/format_error.hpp"
#include "cubescale/cube/aggregate.hpp"
#include "cubescale/cube/definitions.hpp"
#include "cubescale/cube/dtype.hpp"
#include "cubescale/cube/values_io.hpp"

using namespace cubescale::cube;

namespace {

// Call tree of DESIGN.md: root 0 with children [1, 3], 1 with child [2] (preorder 0,1,2,3).
Definitions small_tree() {
  Definitions d;
  d.regions.resize(1);
  d.cnodes.resize(4);
  d.cnodes[1].parent = 0;
  d.cnodes[2].parent = 1;
  d.cnodes[3].parent = 0;
  return d;
}

Severity doubles(const std::vector<std::vector<double>>& rows, ValueKind kind = ValueKind::Double) {
  Severity s(DataType{kind, 1, "DOUBLE"}, rows.size(), rows[0].size());
  for (std::size_t c = 0; c < rows.size(); ++c) {
    std::memcpy(s.row(c), rows[c].data(), rows[c].size() * 8);
    s.set_present(c, true);
  }
  return s;
}

double at(const Severity& s, std::size_t c, std::size_t l) {
  double v;
  std::memcpy(&v, s.row(c) + 8 * l, 8);
  return v;
}

}  // namespace

TEST(CubeDtype, ParsesNamesAliasesAndParameters) {
  EXPECT_EQ(parse_data_type("FLOAT")->kind, ValueKind::Double);
  EXPECT_EQ(parse_data_type("INTEGER")->kind, ValueKind::Int64);
  EXPECT_EQ(parse_data_type("TAU_ATOMIC")->width(), 36u);
  EXPECT_EQ(parse_data_type("NDOUBLES(10)")->width(), 80u);
  EXPECT_EQ(parse_data_type("HISTOGRAM(5)")->width(), 56u);
  EXPECT_EQ(parse_data_type("SCALE_FUNC")->width(), 848u);  // all_dtypes.cubex: 12 values in 10176 bytes
  EXPECT_FALSE(parse_data_type("NDOUBLES(0)"));
  EXPECT_FALSE(parse_data_type("NDOUBLES(99999999)"));
  EXPECT_FALSE(parse_data_type("WIDE"));
}

TEST(CubeOrder, WideOrderEmitsChildrenTogether) {
  const auto d = small_tree();
  EXPECT_EQ(wide_order(d), (std::vector<std::uint32_t>{0, 1, 3, 2}));
  EXPECT_EQ(deep_order(d), (std::vector<std::uint32_t>{0, 1, 2, 3}));
}

TEST(CubeAggregate, InclusiveAndExclusiveAreInverse) {
  const auto d = small_tree();
  const auto excl = doubles({{1, 10}, {2, 20}, {3, 30}, {4, 40}});
  const auto incl = to_inclusive(excl, d.cnode_parents());
  EXPECT_EQ(at(incl, 0, 0), 10);
  EXPECT_EQ(at(incl, 1, 1), 50);
  EXPECT_EQ(at(incl, 3, 0), 4);
  const auto back = to_exclusive(incl, d.cnode_parents());
  for (std::size_t c = 0; c < 4; ++c)
    for (std::size_t l = 0; l < 2; ++l) EXPECT_EQ(at(back, c, l), at(excl, c, l));
}

TEST(CubeAggregate, MinimumIgnoresAbsentRows) {
  const auto d = small_tree();
  auto excl = doubles({{0, 0}, {5, 6}, {3, 9}, {4, 1}}, ValueKind::MinDouble);
  excl.set_present(0, false);  // an absent row must not contribute a zero minimum
  const auto incl = to_inclusive(excl, d.cnode_parents());
  EXPECT_EQ(at(incl, 0, 0), 3);
  EXPECT_EQ(at(incl, 0, 1), 1);
  EXPECT_EQ(at(incl, 1, 1), 6);
}

TEST(CubeAggregate, UnsignedSumsWrapAround) {
  const auto d = small_tree();
  Severity s(*parse_data_type("UINT64"), 4, 1);
  const std::uint64_t big = ~std::uint64_t(0);
  std::memcpy(s.row(1), &big, 8);
  const std::uint64_t two = 2;
  std::memcpy(s.row(2), &two, 8);
  s.mark_nonzero_rows();
  const auto incl = to_inclusive(s, d.cnode_parents());
  std::uint64_t v;
  std::memcpy(&v, incl.row(1), 8);
  EXPECT_EQ(v, 1u);
  const auto back = to_exclusive(incl, d.cnode_parents());
  std::memcpy(&v, back.row(1), 8);
  EXPECT_EQ(v, big);
}

TEST(CubeAggregate, CombineLocationsIntoGroups) {
  const auto s = doubles({{1, 2, 3, 4}});
  const auto g = combine_locations(s, {0, 0, 1, 1}, 2);
  EXPECT_EQ(at(g, 0, 0), 3);
  EXPECT_EQ(at(g, 0, 1), 7);
  const auto m = combine_locations(doubles({{5, 2, 3, 4}}, ValueKind::MaxDouble), {0, 0, 1, 1}, 2);
  EXPECT_EQ(at(m, 0, 0), 5);
}

TEST(CubeValuesIo, DenseBigEndianIndexAndData) {
  // DENSE index (format 3), big-endian: all rows present, in enumeration order.
  std::string index = "CUBEX.INDEX";
  index += std::string("\x01\x00\x00\x00", 4).substr(0, 0) + std::string("\x00\x00\x00\x01", 4);
  index += std::string("\x00\x00", 2);
  index += '\x03';
  const auto parsed = parse_index(index, 2, {"f", "0.index"});
  EXPECT_TRUE(parsed.big_endian);
  EXPECT_TRUE(parsed.dense);
  std::string data = "CUBEX.DATA";
  for (std::uint64_t v : {1ull, 2ull, 3ull, 4ull})
    for (int i = 7; i >= 0; --i) data += static_cast<char>((v >> (8 * i)) & 0xff);
  Severity out(*parse_data_type("UINT64"), 2, 2);
  read_data(data, parsed, {1, 0}, {1, 0}, out, {"f", "0.data"});  // rows and columns permuted
  std::uint64_t v;
  std::memcpy(&v, out.row(1), 8);
  EXPECT_EQ(v, 2u);
  std::memcpy(&v, out.row(0) + 8, 8);
  EXPECT_EQ(v, 3u);
}

// Big-endian rows in place (no column permutation) are swapped while they are copied; every
// word size and the mixed TAU_ATOMIC fields must equal the little-endian reading of the same values.
TEST(CubeValuesIo, BigEndianRowsEqualLittleEndianRows) {
  for (const char* type : {"INT16", "UINT32", "DOUBLE", "TAU_ATOMIC", "COMPLEX"}) {
    const auto dtype = *parse_data_type(type);
    const std::size_t cnodes = 3, locations = 5, width = dtype.width();
    std::string le_rows;
    for (std::size_t i = 0; i < cnodes * locations * width; ++i) le_rows += static_cast<char>(i * 37 + 11);
    std::string be_rows = le_rows;
    for (std::size_t v = 0; v < cnodes * locations; ++v) {
      std::size_t at = v * width;
      for (auto f : dtype.fields()) {
        std::reverse(be_rows.begin() + at, be_rows.begin() + at + f);
        at += f;
      }
    }
    auto index_of = [](bool big) {
      std::string index = "CUBEX.INDEX";
      index += big ? std::string("\x00\x00\x00\x01", 4) : std::string("\x01\x00\x00\x00", 4);
      index += std::string("\x00\x00\x03", 3);
      return parse_index(index, 3, {"f", "0.index"});
    };
    Severity le(dtype, cnodes, locations), be(dtype, cnodes, locations);
    read_data("CUBEX.DATA" + le_rows, index_of(false), {2, 0, 1}, {}, le, {"f", "0.data"});
    read_data("CUBEX.DATA" + be_rows, index_of(true), {2, 0, 1}, {}, be, {"f", "0.data"});
    EXPECT_EQ(std::memcmp(le.data(), be.data(), le.bytes()), 0) << type;
    EXPECT_EQ(std::memcmp(le.row(2), le_rows.data(), locations * width), 0) << type;
  }
}

TEST(CubeValuesIo, SparseIndexRoundTripAndErrors) {
  const auto bytes = sparse_index({0, 2});
  const auto parsed = parse_index(bytes, 3, {"f", "1.index"});
  EXPECT_EQ(parsed.positions, (std::vector<std::uint32_t>{0, 2}));
  try {
    parse_index(bytes, 2, {"f", "1.index"});  // position 2 outside a 2-row tree
    FAIL();
  } catch (const cubescale::FormatError& e) {
    EXPECT_EQ(e.member(), "1.index");
    EXPECT_EQ(e.offset(), 26u);
  }
  EXPECT_THROW(parse_index(bytes.substr(0, 20), 3, {"f", "1.index"}), cubescale::FormatError);
  try {  // a row listed twice: the rows after it would be read one place off, the last as zeros
    parse_index(sparse_index({0, 0}), 3, {"f", "1.index"});
    FAIL();
  } catch (const cubescale::FormatError& e) {
    EXPECT_EQ(e.offset(), 26u);
    EXPECT_NE(std::string(e.what()).find("row position 0 listed twice"), std::string::npos) << e.what();
  }
}
