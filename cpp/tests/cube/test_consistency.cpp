// What a .cubex file announces is checked against what its bytes hold before memory is
// reserved (gzip and ZCUBEX inflation, the compact system member), and parts that disagree
// are a FormatError instead of a silent misread (ids named twice, value members without their
// partner, member names that are not UTF-8). Inputs are the shared reports, altered.
#include <gtest/gtest.h>
#include <zlib.h>

#include <fstream>
#include <sstream>

#include "cubescale/common/format_error.hpp"
#include "cubescale/cube/anchor_xml.hpp"
#include "cubescale/cube/dtype.hpp"
#include "cubescale/cube/reader.hpp"
#include "cubescale/cube/system_member.hpp"
#include "cubescale/cube/tar.hpp"
#include "cubescale/cube/values_io.hpp"

using namespace cubescale::cube;

namespace {

std::string slurp(const std::string& name) {
  std::ifstream in(std::string(CUBESCALE_SHARED_DATA) + "/cubex/" + name, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string member_of(const std::string& archive, const std::string& name) {
  for (const auto& m : list_tar(archive, "t"))
    if (m.name == name) return archive.substr(m.data_offset, m.size);
  return {};
}

// The archive without member `name`: the other members' blocks as they were.
std::string without(const std::string& archive, const std::string& name) {
  std::string out;
  for (const auto& m : list_tar(archive, "t"))
    if (m.name != name) out += archive.substr(m.header_offset, 512 + (m.size + 511) / 512 * 512);
  return out + std::string(1024, '\0');
}

// zlib (gzip = true: with the gzip wrapper) of `n` zero bytes.
std::string zeros_deflated(std::size_t n, bool gzip) {
  z_stream z{};
  EXPECT_EQ(deflateInit2(&z, 9, Z_DEFLATED, gzip ? 31 : 15, 9, Z_DEFAULT_STRATEGY), Z_OK);
  const std::string chunk(1 << 20, '\0');
  std::string out;
  char buf[1 << 16];
  for (std::size_t done = 0; done < n || z.avail_in; ) {
    if (z.avail_in == 0) {
      const auto take = std::min(chunk.size(), n - done);
      z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(chunk.data()));
      z.avail_in = static_cast<uInt>(take);
      done += take;
    }
    z.next_out = reinterpret_cast<Bytef*>(buf);
    z.avail_out = sizeof buf;
    deflate(&z, Z_NO_FLUSH);
    out.append(buf, sizeof buf - z.avail_out);
  }
  int rc = Z_OK;
  while (rc != Z_STREAM_END) {
    z.next_out = reinterpret_cast<Bytef*>(buf);
    z.avail_out = sizeof buf;
    rc = deflate(&z, Z_FINISH);
    out.append(buf, sizeof buf - z.avail_out);
  }
  deflateEnd(&z);
  return out;
}

template <class F>
cubescale::FormatError error_of(F&& f) {
  try {
    f();
  } catch (const cubescale::FormatError& e) {
    return e;
  }
  ADD_FAILURE() << "no FormatError";
  return cubescale::FormatError("", "", 0, "");
}

}  // namespace

TEST(CubeInflation, GzipAnchorIsCappedByItsCompressedSize) {
  const auto bomb = zeros_deflated(std::size_t(64) << 20, true);  // 64 MiB in about 64 KB
  ASSERT_LT(gzip_inflation_cap(bomb.size()), std::uint64_t(64) << 20);
  const auto e = error_of([&] { inflate_if_gzip(bomb, "f", "anchor.xml"); });
  EXPECT_EQ(e.member(), "anchor.xml");
  EXPECT_NE(std::string(e.what()).find("inflates to more than"), std::string::npos) << e.what();
  // A real document inflates as before; bytes after its stream are refused.
  const auto gzipped = member_of(slurp("mm.zcubex.cubex"), "anchor.xml");
  ASSERT_TRUE(is_gzip(gzipped));
  const auto xml = inflate_if_gzip(gzipped, "f", "anchor.xml");
  EXPECT_EQ(xml.size(), 4756u);
  const auto trailing = error_of([&] { inflate_if_gzip(gzipped + "garbage", "f", "anchor.xml"); });
  EXPECT_EQ(trailing.offset(), gzipped.size());
}

TEST(CubeInflation, ZcubexRowsAreCappedByTheCallTree) {
  // One stream of 64 MiB of zeros where the index needs one row of one DOUBLE (8 bytes) of a
  // call tree of 2: at most (1 + 2 + 1) rows may be inflated.
  const auto stream = zeros_deflated(std::size_t(64) << 20, false);
  std::string member(kZDataMagic);
  auto put = [&](std::uint64_t v) {
    for (int i = 0; i < 8; ++i) member.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  };
  put(1);
  put(0), put(0), put(stream.size());
  member += stream;
  const auto index = parse_index(sparse_index({0}), 2, {"f", "0.index"});
  auto out = Severity::for_overwrite(*parse_data_type("DOUBLE"), 2, 1);
  const std::vector<std::uint32_t> order{0, 1};
  const auto e = error_of([&] { read_data(member, index, order, {}, out, {"f", "0.data"}); });
  EXPECT_EQ(e.member(), "0.data");
  EXPECT_NE(std::string(e.what()).find("inflate to more than 32 bytes"), std::string::npos) << e.what();
}

TEST(CubeInflation, SystemMemberMustExpandToTheElementsOfAnchorXml) {
  const auto report = open_cubex_bytes(slurp("bt-mz.B.8x4.cubex"), "bt");
  const auto& defs = report->structure();
  const auto bytes = encode_system_member(defs);
  ASSERT_TRUE(bytes);
  SystemCounts spelled;
  for (std::uint32_t e = 0; e < defs.system.size(); ++e) {
    const auto k = defs.system.kind(e);
    ++(k == cubescale::systree::Kind::Node ? spelled.nodes
       : k == cubescale::systree::Kind::LocationGroup ? spelled.groups : spelled.locations);
  }
  Definitions decoded;
  decode_system_member(*bytes, decoded, "bt", spelled);
  EXPECT_EQ(decoded.locations.size(), 32u);
  spelled.locations = 31;
  const auto e = error_of([&] { decode_system_member(*bytes, decoded, "bt", spelled); });
  EXPECT_EQ(e.member(), kSystemMember);
  EXPECT_NE(std::string(e.what()).find("expands to 32 locations"), std::string::npos) << e.what();
}

TEST(CubeConsistency, IdsNamedTwiceAreRefused) {
  const auto xml = member_of(slurp("time.p4.cubex"), "anchor.xml");
  ASSERT_NO_THROW(parse_anchor(xml, "f"));
  struct Case {
    std::string from, to, what;
  };
  for (const auto& c : {Case{"<metric id=\"1\"", "<metric id=\"0\"", "a second metric with id 0"},
                        Case{"<region id=\"1\"", "<region id=\"0\"", "a second region with id 0"},
                        Case{"<cnode id=\"1\"", "<cnode id=\"0\"", "a second cnode with id 0"}}) {
    auto changed = xml;
    const auto at = changed.find(c.from);
    ASSERT_NE(at, std::string::npos) << c.from;
    changed.replace(at, c.from.size(), c.to);
    const auto e = error_of([&] { parse_anchor(changed, "f"); });
    EXPECT_EQ(e.member(), "anchor.xml");
    EXPECT_NE(std::string(e.what()).find(c.what), std::string::npos) << e.what();
  }
}

TEST(CubeConsistency, ValueMembersComeInPairs) {
  const auto archive = slurp("call_tree_test.cubex");
  ASSERT_NO_THROW(load_all(*open_cubex_bytes(archive, "f")));
  for (const std::string lost : {"1.data", "1.index"}) {
    const auto e = error_of([&] { open_cubex_bytes(without(archive, lost), "f"); });
    const std::string kept = lost == "1.data" ? "1.index" : "1.data";
    EXPECT_EQ(e.member(), kept);
    EXPECT_NE(std::string(e.what()).find(kept + " without " + lost), std::string::npos) << e.what();
  }
}

TEST(CubeConsistency, MemberNamesMustBeUtf8) {
  const std::string archive = tar_header("1.d\xe1ta", 3) + "abc" + std::string(509, '\0') + std::string(1024, '\0');
  const auto e = error_of([&] { list_tar(archive, "t"); });
  EXPECT_EQ(e.offset(), 3u);
  EXPECT_EQ(e.member(), "1.d\\xe1ta");
}
