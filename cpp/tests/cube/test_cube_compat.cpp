// Reports as Scalasca 2 and CUBE 4.0 writers leave them (issue #19): rows beyond the index,
// padding, ZCUBEX block coverage; and archives read on demand from a file that shrinks.
#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

#include "cubescale/common/format_error.hpp"
#include "cubescale/cube/archive.hpp"
#include "cubescale/cube/dtype.hpp"
#include "cubescale/cube/reader.hpp"
#include "cubescale/cube/values_io.hpp"

using namespace cubescale::cube;

namespace {

constexpr std::size_t kCnodes = 3, kLocations = 4;

// Three rows of four doubles, row r holding r*10 + l.
std::string rows_of_doubles(std::size_t rows) {
  std::string out;
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t l = 0; l < kLocations; ++l) {
      const double v = double(r * 10 + l);
      out.append(reinterpret_cast<const char*>(&v), 8);
    }
  return out;
}

Severity read(const std::string& data, const std::vector<std::uint32_t>& positions, std::uint64_t* ignored = nullptr) {
  const auto index = parse_index(sparse_index(positions), kCnodes, {"f", "0.index"});
  Severity out(*parse_data_type("DOUBLE"), kCnodes, kLocations);
  const auto n = read_data(data, index, {0, 1, 2}, {}, out, {"f", "0.data"});
  if (ignored) *ignored = n;
  return out;
}

double at(const Severity& s, std::size_t c, std::size_t l) {
  double v;
  std::memcpy(&v, s.row(c) + 8 * l, 8);
  return v;
}

std::string zcubex(const std::vector<std::string>& blocks) {
  auto u64 = [](std::uint64_t v) { return std::string(reinterpret_cast<const char*>(&v), 8); };
  std::string table, streams;
  std::uint64_t uoff = 0;
  for (const auto& b : blocks) {
    uLongf size = compressBound(b.size());
    std::string z(size, '\0');
    compress(reinterpret_cast<Bytef*>(z.data()), &size, reinterpret_cast<const Bytef*>(b.data()), b.size());
    z.resize(size);
    table += u64(uoff) + u64(streams.size()) + u64(z.size());
    streams += z;
    uoff += b.size();
  }
  return "ZCUBEX.DATA" + u64(blocks.size()) + table + streams;
}

}  // namespace

TEST(CubeCompat, TrailingRowsAreIgnoredAndCounted) {
  std::uint64_t ignored = 0;
  // Index lists rows 0 and 2; the member holds them plus one zero row and one of any bytes.
  const std::string rows = rows_of_doubles(2);
  const auto out = read("CUBEX.DATA" + rows + std::string(32, '\0') + std::string(32, '\x7f'), {0, 2}, &ignored);
  EXPECT_EQ(ignored, 64u);
  EXPECT_EQ(at(out, 0, 3), 3.0);
  EXPECT_EQ(at(out, 2, 1), 11.0);
  EXPECT_FALSE(out.present(1));
  // An index of no rows with one row of data (Scalasca's empty metric).
  const auto empty = read("CUBEX.DATA" + std::string(32, '\0'), {}, &ignored);
  EXPECT_EQ(ignored, 32u);
  EXPECT_EQ(empty.present_rows(), 0u);
}

TEST(CubeCompat, PaddingAndPartsOfRows) {
  std::uint64_t ignored = 0;
  const std::string rows = "CUBEX.DATA" + rows_of_doubles(1);
  read(rows + std::string(8, '\0'), {1}, &ignored);
  EXPECT_EQ(ignored, 8u);
  read(rows + std::string(32 + 1, '\0'), {1}, &ignored);  // a row and a pad byte
  EXPECT_EQ(ignored, 33u);
  for (const std::string tail : {std::string(9, '\0'), std::string(1, '\x01'), std::string(31, '\x01')}) {
    try {
      read(rows + tail, {1});
      FAIL() << tail.size();
    } catch (const cubescale::FormatError& e) {
      EXPECT_EQ(e.member(), "0.data");
      EXPECT_EQ(e.offset(), 10u + 32u);  // where the rows the index needs end
      EXPECT_NE(e.message().find("not a whole number of rows"), std::string::npos) << e.message();
    }
  }
  EXPECT_THROW(read(rows.substr(0, rows.size() - 1), {1}), cubescale::FormatError);  // fewer than needed
}

TEST(CubeCompat, CompressedBlocksMustCoverTheRows) {
  const auto rows = rows_of_doubles(3);
  std::uint64_t ignored = 0;
  // Three rows for an index of two: the third is inflated (checksum verified) and dropped.
  const auto out = read(zcubex({rows.substr(0, 32), rows.substr(32, 32), rows.substr(64)}), {0, 1}, &ignored);
  EXPECT_EQ(ignored, 32u);
  EXPECT_EQ(at(out, 1, 2), 12.0);
  EXPECT_THROW(read(zcubex({rows.substr(0, 32)}), {0, 1}), cubescale::FormatError);  // streams end early
  EXPECT_THROW(read(zcubex({rows.substr(0, 32), rows.substr(32, 16)}), {0}), cubescale::FormatError);  // half a row
  auto gap = zcubex({rows.substr(0, 24), rows.substr(24, 40)});  // blocks need not be rows
  EXPECT_NO_THROW(read(gap, {0}));
  gap[11 + 8 + 24] = 40;  // block 1 now starts at 40: bytes 24..40 missing
  EXPECT_THROW(read(gap, {0}), cubescale::FormatError);
}

// Compressed rows are inflated through a bounded buffer, not whole: streams that cut rows at
// any byte and cross the buffer's boundary (8 MiB) give the same matrix as the plain member,
// with rows in any order, rows the index leaves out, and trailing rows; a corrupt stream past
// the first buffer is still a FormatError.
TEST(CubeCompat, CompressedRowsAcrossTheInflateBuffer) {
  constexpr std::size_t cnodes = 40000, locations = 64, row = 8 * locations;  // 20 MB of rows
  std::vector<std::uint32_t> positions, order(cnodes);
  for (std::uint32_t c = 0; c < cnodes; ++c) {
    order[c] = static_cast<std::uint32_t>(cnodes - 1 - c);
    if (c % 7 != 3) positions.push_back(c);
  }
  std::vector<std::uint32_t> column_of(locations);
  for (std::size_t l = 0; l < locations; ++l) column_of[l] = static_cast<std::uint32_t>((l * 5) % locations);
  std::string rows(positions.size() * row + 2 * row, '\0');  // two trailing rows
  for (std::size_t i = 0; i < rows.size(); i += 8) {
    const double v = double(i) * 0.25;
    std::memcpy(rows.data() + i, &v, 8);
  }
  const auto index = parse_index(sparse_index(positions), cnodes, {"f", "0.index"});
  const auto decode = [&](const std::string& member, std::uint64_t* ignored) {
    Severity out(*parse_data_type("DOUBLE"), cnodes, locations);
    *ignored = read_data(member, index, order, column_of, out, {"f", "0.data"});
    return out;
  };
  std::uint64_t plain_ignored = 0, z_ignored = 0;
  const auto plain = decode("CUBEX.DATA" + rows, &plain_ignored);
  std::vector<std::string> blocks;
  std::size_t from = 0;
  for (std::size_t cut : {std::size_t(1000003), std::size_t((8 << 20) - 1), std::size_t((8 << 20) + 1),
                          std::size_t(16777300), rows.size()}) {
    blocks.push_back(rows.substr(from, cut - from));
    from = cut;
  }
  const auto member = zcubex(blocks);
  const auto inflated = decode(member, &z_ignored);
  EXPECT_EQ(z_ignored, plain_ignored);
  EXPECT_EQ(z_ignored, 2 * row);
  for (std::size_t c = 0; c < cnodes; ++c) {
    ASSERT_EQ(inflated.present(c), plain.present(c)) << c;
    ASSERT_EQ(std::memcmp(inflated.row(c), plain.row(c), row), 0) << c;
  }
  auto corrupt = member;
  corrupt[corrupt.size() - 100] ^= 0x55;  // inside the last stream, beyond the first buffer
  std::uint64_t ignored = 0;
  EXPECT_THROW(decode(corrupt, &ignored), cubescale::FormatError);
  EXPECT_THROW(decode(zcubex({blocks[0], blocks[1], blocks[2]}), &ignored), cubescale::FormatError);  // too few rows
}

// A file above the whole-read limit is read on demand; once shortened, the bytes it lost are a
// FormatError naming the member, and what it still has reads as before.
TEST(CubeCompat, ArchiveReadOnDemandFromAShrinkingFile) {
  const auto path = (std::filesystem::temp_directory_path() / ("cubescale-shrink-" + std::to_string(::getpid()))).string();
  const std::size_t data_bytes = std::size_t(6) << 20;
  std::string data(data_bytes, '\0');
  for (std::size_t i = 0; i < data_bytes; ++i) data[i] = static_cast<char>(i * 7);
  const std::string archive = tar_header("big.bin", data_bytes) + data + std::string(1024, '\0');
  std::ofstream(path, std::ios::binary) << archive;
  const auto file = Archive::open(path);
  EXPECT_FALSE(file->in_memory());
  const auto members = file->members();
  ASSERT_EQ(members.size(), 1u);
  EXPECT_EQ(members[0].size, data_bytes);
  EXPECT_EQ(list_tar(archive, path)[0].data_offset, members[0].data_offset);
  const MemberBytes member(*file, members[0]);
  std::string scratch;
  EXPECT_EQ(member.view(data_bytes - 100, 100, scratch), std::string_view(data).substr(data_bytes - 100));
  ASSERT_EQ(::truncate(path.c_str(), 512 + 4096), 0);
  EXPECT_EQ(member.view(0, 4096, scratch), std::string_view(data).substr(0, 4096));
  try {
    member.view(0, 8192, scratch);
    FAIL();
  } catch (const cubescale::FormatError& e) {
    EXPECT_EQ(e.file(), path);
    EXPECT_EQ(e.member(), "big.bin");
    EXPECT_EQ(e.offset(), 512u + 4096u);
    EXPECT_NE(e.message().find("shortened"), std::string::npos) << e.message();
  }
  std::filesystem::remove(path);
}

// A whole report above 4 MiB (a shared report behind a 5 MiB extra member), shortened while a
// Report holds it: loading a metric whose members are gone is a FormatError (also under ASan);
// what was read at open still works.
TEST(CubeCompat, ReportTruncatedWhileOpen) {
  std::ifstream in(std::string(CUBESCALE_SHARED_DATA) + "/cubex/call_tree_test.cubex", std::ios::binary);
  const std::string original((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::size_t pad = std::size_t(5) << 20;
  const auto path = (std::filesystem::temp_directory_path() / ("cubescale-report-" + std::to_string(::getpid()))).string();
  std::ofstream(path, std::ios::binary) << tar_header("padding.bin", pad) << std::string(pad, 'x') << original;
  const auto report = open_cubex(path);
  ASSERT_EQ(report->source()->extra_members().size(), 2u);  // padding.bin, remapping.spec
  ASSERT_EQ(::truncate(path.c_str(), 512 + pad + 4096), 0);
  std::size_t failed = 0;
  for (std::size_t m = 0; m < report->metric_count(); ++m) {
    try {
      report->values(m);
    } catch (const cubescale::FormatError& e) {
      EXPECT_EQ(e.file(), path);
      EXPECT_NE(e.message().find("shortened"), std::string::npos) << e.message();
      ++failed;
    }
  }
  EXPECT_GT(failed, 0u);
  EXPECT_FALSE(report->definitions().regions.empty());  // parsed from anchor.xml read at open
  std::filesystem::remove(path);
}
