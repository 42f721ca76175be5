// Container and document layer: tar, XML, anchor.xml, and whole files from the shared data.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>

#include "cubescale/common/format_error.hpp"
#include "cubescale/cube/anchor_xml.hpp"
#include "cubescale/cube/reader.hpp"
#include "cubescale/cube/report.hpp"
#include "cubescale/cube/tar.hpp"
#include "cubescale/cube/writer.hpp"
#include "cubescale/cube/xml.hpp"

using namespace cubescale::cube;

namespace {
std::string shared(const std::string& name) { return std::string(CUBESCALE_SHARED_DATA) + "/cubex/" + name; }
std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}
// The writers' temporaries for `target` still in its directory (see common/atomic_file.hpp).
int temporaries_of(const std::string& target) {
  const std::filesystem::path path(target);
  const std::string prefix = "." + path.filename().string() + ".cubescale-tmp.";
  int n = 0;
  for (const auto& entry : std::filesystem::directory_iterator(path.parent_path()))
    n += entry.path().filename().string().rfind(prefix, 0) == 0;
  return n;
}
}  // namespace

TEST(CubeTar, HeaderChecksumAndListing) {
  std::string archive = tar_header("a.txt", 3) + "abc" + std::string(509, '\0') + std::string(1024, '\0');
  auto members = list_tar(archive, "t");
  ASSERT_EQ(members.size(), 1u);
  EXPECT_EQ(members[0].name, "a.txt");
  EXPECT_EQ(members[0].size, 3u);
  EXPECT_TRUE(members[0].checksum_ok);
  archive[0] = 'b';  // a wrong checksum is tolerated, as Cube does
  members = list_tar(archive, "t");
  EXPECT_FALSE(members[0].checksum_ok);
  EXPECT_EQ(members[0].name, "b.txt");
}

TEST(CubeTar, RealFileWithWrongChecksumsLists) {
  const auto data = slurp(shared("bt-mz.p2x4.bad_checksums.cubex"));
  const auto members = list_tar(data, "bad");
  ASSERT_FALSE(members.empty());
  EXPECT_FALSE(members[0].checksum_ok);
  EXPECT_EQ(members.back().name, "anchor.xml");
}

TEST(CubeXml, EntitiesCdataAndSelfClosing) {
  XmlTokenizer t("<?xml version=\"1.0\"?><a k=\"x&amp;y\"><b/>t &lt;1&#65;<![CDATA[<raw>]]></a>", "f", "m");
  EXPECT_EQ(t.next().name, "a");
  EXPECT_EQ(t.token().attributes[0].second, "x&y");
  EXPECT_EQ(t.next().name, "b");
  EXPECT_TRUE(t.token().self_closing);
  EXPECT_EQ(t.next().type, XmlToken::End);
  EXPECT_EQ(t.next().text, "t <1A<raw>");
  EXPECT_EQ(t.next().type, XmlToken::End);
  EXPECT_EQ(t.next().type, XmlToken::Eof);
  XmlTokenizer bad("<a k=\"1></a>", "f", "m");
  EXPECT_THROW(bad.next(), cubescale::FormatError);
}

// XML 1.0 holds no control character but tab, LF and CR (not even as &#1;), no U+FFFE or
// U+FFFF and no invalid UTF-8: each becomes U+FFFD; valid text is escaped as it always was.
TEST(CubeXml, EscapeReplacesWhatXmlCannotHold) {
  EXPECT_EQ(xml_escape("a<b>&\"c'\t\n\r \xC3\xBC\xE2\x82\xAC\xF0\x9F\x98\x80"),
            "a&lt;b&gt;&amp;&quot;c&apos;\t\n\r \xC3\xBC\xE2\x82\xAC\xF0\x9F\x98\x80");
  const std::string fffd = "\xEF\xBF\xBD";
  EXPECT_EQ(xml_escape(std::string("ctl\x01", 4)), "ctl" + fffd);
  EXPECT_EQ(xml_escape(std::string("\0\x1F\x7F", 3)), fffd + fffd + "\x7F");  // DEL is an XML Char
  EXPECT_EQ(xml_escape("\xEF\xBF\xBE\xEF\xBF\xBF"), fffd + fffd);              // U+FFFE, U+FFFF
  EXPECT_EQ(xml_escape("\xFF" "a\xC3"), fffd + "a" + fffd);                   // bad byte, cut sequence
  EXPECT_EQ(xml_escape("\xC0\xAF"), fffd + fffd);                             // overlong '/'
  EXPECT_EQ(xml_escape("\xED\xA0\x80"), fffd + fffd + fffd);                  // a surrogate
  EXPECT_EQ(xml_escape("\xF4\x90\x80\x80"), fffd + fffd + fffd + fffd);       // above U+10FFFF
}

TEST(CubeAnchor, ParsesRealAnchorAndWritesItBack) {
  const auto report = open_cubex(shared("call_tree_test.cubex"));
  const auto& d = report->definitions();
  EXPECT_EQ(d.metrics.size(), 8u);
  EXPECT_EQ(d.cnodes.size(), 18u);
  EXPECT_EQ(d.regions[d.cnodes[1].region].name, "main");
  EXPECT_EQ(d.system.name(d.locations[0]), "Master thread");
  const auto text = write_anchor(d);
  const auto again = parse_anchor(text.xml, "again");
  EXPECT_EQ(again.cnodes.size(), d.cnodes.size());
  EXPECT_EQ(again.metrics[1].uniq_name, "time");
  EXPECT_EQ(again.metrics[1].kind, MetricKind::Inclusive);
  EXPECT_NE(text.xml.find("<cart name=\"Process x Thread\""), std::string::npos);
}

TEST(CubeAnchor, MalformedXmlNamesTheOffset) {
  const std::string xml = "<cube version=\"4.4\"><metrics><metric id=\"0\"></metrics></cube>";
  try {
    parse_anchor(xml, "file.cubex");
    FAIL();
  } catch (const cubescale::FormatError& e) {
    EXPECT_EQ(e.file(), "file.cubex");
    EXPECT_EQ(e.member(), "anchor.xml");
    EXPECT_EQ(e.offset(), xml.find("</metrics>"));
  }
}

TEST(CubeAnchor, Cube3SystemTags) {
  const std::string xml =
      "<cube version=\"3.0\"><program><region id=\"0\" mod=\"\" begin=\"1\" end=\"2\"><name>main</name></region>"
      "<cnode id=\"0\" calleeId=\"0\"/></program><system><machine Id=\"0\"><name>m</name><node Id=\"0\">"
      "<name>n0</name><process Id=\"0\"><name>p</name><rank>0</rank><thread Id=\"0\"><name>t</name><rank>0</rank>"
      "</thread></process></node></machine></system></cube>";
  const auto d = parse_anchor(xml, "cube3");
  ASSERT_EQ(d.locations.size(), 1u);
  EXPECT_EQ(d.system.cls(d.locations[0]), "thread");
  EXPECT_EQ(d.system.cls(d.location_groups[0]), "process");
  EXPECT_EQ(d.system.name(d.system.parent(d.location_groups[0])), "n0");
}

TEST(CubeWriter, StreamedBlocksReadBackAndTempFileIsRenamed) {
  const auto original = open_cubex(shared("time.p4.cubex"));
  const std::string path = ::testing::TempDir() + "/cube_writer_test.cubex";
  for (bool compress : {false, true}) {
    write_cubex(*original, path, WriteOptions{compress, true}, 64);  // tiny blocks: many write_rows calls
    const auto copy = open_cubex(path);
    for (std::size_t m = 0; m < original->metric_count(); ++m) {
      const auto a = original->values(m), b = copy->values(m);
      ASSERT_EQ(a->bytes(), b->bytes());
      EXPECT_EQ(std::memcmp(a->data(), b->data(), a->bytes()), 0) << "metric " << m;
    }
  }
  EXPECT_EQ(temporaries_of(path), 0);
  std::remove(path.c_str());
}

TEST(CubeWriter, AbandonedWriteLeavesNoFile) {
  const auto original = open_cubex(shared("call_tree_test.cubex"));
  const std::string path = ::testing::TempDir() + "/cube_abandoned.cubex";
  {
    CubexWriter writer(path, original->definitions());
    writer.begin_metric(0);
    EXPECT_EQ(temporaries_of(path), 1);
  }
  EXPECT_EQ(std::fopen(path.c_str(), "rb"), nullptr);
  EXPECT_EQ(temporaries_of(path), 0);
}

TEST(CubeWriter, FailedWriteIsSystemErrorWithErrnoAndKeepsTheOldReport) {
  const auto original = open_cubex(shared("call_tree_test.cubex"));
  const std::string path = ::testing::TempDir() + "/cube_too_big.cubex";
  { std::ofstream(path) << "old"; }
  // Writes past RLIMIT_FSIZE fail with EFBIG, as a full disk fails with ENOSPC.
  rlimit old{};
  ::getrlimit(RLIMIT_FSIZE, &old);
  auto* old_handler = ::signal(SIGXFSZ, SIG_IGN);
  rlimit limit = old;
  limit.rlim_cur = 16 << 10;
  ::setrlimit(RLIMIT_FSIZE, &limit);
  int error = 0;
  std::string what;
  try {
    write_cubex(*original, path);
  } catch (const std::system_error& e) {
    error = e.code().value();
    what = e.what();
  }
  ::setrlimit(RLIMIT_FSIZE, &old);
  ::signal(SIGXFSZ, old_handler);
  EXPECT_EQ(error, EFBIG);
  EXPECT_EQ(what.rfind(path + ": ", 0), 0u) << what;  // the bindings make OSError(errno, ..., path) of it
  EXPECT_EQ(slurp(path), "old");
  EXPECT_EQ(temporaries_of(path), 0);
  std::remove(path.c_str());
}

TEST(CubeAnchor, TopologyLocationIdsAreRenamed) {
  const std::vector<std::uint64_t> new_id{2, 0, 1};
  EXPECT_EQ(remap_location_ids("<cart name=\"c\" ndims=\"1\">\n<dim name=\"x\" size=\"3\"/>\n"
                               "<coord locId=\"0\">0</coord>\n<coord  locId='2'>2</coord>\n<coord locId=\"1\"/>\n</cart>",
                               new_id),
            "<cart name=\"c\" ndims=\"1\">\n<dim name=\"x\" size=\"3\"/>\n"
            "<coord locId=\"2\">0</coord>\n<coord  locId=\"1\">2</coord>\n<coord locId=\"0\"/>\n</cart>");
  EXPECT_EQ(remap_location_ids("", new_id), "");
  EXPECT_EQ(remap_location_ids("<coordinates/>", new_id), "<coordinates/>");  // not a coord tag
  // Coordinates of other elements, unknown Ids and broken tags cannot be renamed.
  EXPECT_FALSE(remap_location_ids("<coord lgId=\"0\">0</coord>", new_id));
  EXPECT_FALSE(remap_location_ids("<coord locId=\"3\">0</coord>", new_id));
  EXPECT_FALSE(remap_location_ids("<coord locId=\"x\">0</coord>", new_id));
  EXPECT_FALSE(remap_location_ids("<coord>0</coord>", new_id));
  EXPECT_FALSE(remap_location_ids("<coord locId=\"0\"", new_id));
}

// Found by the CubePL fuzzer: a derived metric of a report without locations has no values to
// store, and storing them must not hand memcpy a null pointer (UBSan reported it).
TEST(CubeDerived, ReportWithoutLocationsEvaluatesToNothing) {
  const std::string xml =
      R"(<cube version="4.4"><metrics><metric id="0" type="EXCLUSIVE"><uniq_name>time</uniq_name>)"
      R"(<dtype>DOUBLE</dtype></metric><metric id="1" type="POSTDERIVED"><uniq_name>d</uniq_name>)"
      R"(<dtype>DOUBLE</dtype><cubepl>metric::time() + 1</cubepl></metric></metrics><program>)"
      R"(<region id="0" mod="MPI" begin="0" end="0"><name>MPI_Send</name></region>)"
      R"(<cnode id="0" calleeId="0"/></program><system><systemtreenode Id="0"><name>m</name>)"
      R"(<class>machine</class><locationgroup Id="0"><name>p</name><rank>0</rank><type>process</type>)"
      R"(</locationgroup></systemtreenode></system></cube>)";
  try {
    const Report report(parse_anchor(xml, "no-locations"));
    EXPECT_EQ(report.values(1, MetricKind::Inclusive)->bytes(), 0u);
    EXPECT_EQ(report.values(1, MetricKind::Exclusive)->bytes(), 0u);
  } catch (const std::invalid_argument&) {
    // Definitions may also be refused whole; either way no undefined behaviour.
  }
}
