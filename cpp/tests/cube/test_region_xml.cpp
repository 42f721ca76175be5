// The region scans (16 bytes a step) against plain definitions, at every alignment; reports
// whose regions are parsed on first use: same regions, errors then, one parse under threads.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <thread>
#include <vector>

#include "cubescale/common/format_error.hpp"
#include "cubescale/cube/anchor_xml.hpp"
#include "cubescale/cube/reader.hpp"
#include "cubescale/cube/region_xml.hpp"
#include "cubescale/cube/report.hpp"
#include "cubescale/cube/xml.hpp"

using namespace cubescale;
using namespace cubescale::cube;

namespace {

// region_body_end() by its definition, a byte at a time.
std::size_t reference_body_end(const std::string& xml, std::size_t pos) {
  for (; pos + 8 < xml.size(); ++pos) {
    if (xml[pos] != '<') continue;
    if (xml[pos + 1] == '!' || xml[pos + 1] == '?') return std::string::npos;
    const char after = xml[pos + 8];
    if (xml.compare(pos, 8, "</region") == 0 && (after == '>' || after == ' ' || after == '\n' || after == '\t' || after == '\r'))
      return pos;
  }
  return std::string::npos;
}

// Pieces a body is made of: tags that look like the end tag, markup, text.
const std::vector<std::string> kPieces = {"<name>", "</name>", "text ", "</re>", "</regionx>", "</region>", "</region\n>",
                                          "<!-- c -->", "<?p?>", "<b/>", "</role>", "  ", "&amp;", "<region id=\"1\">"};

std::string random_text(std::mt19937& rng, std::size_t pieces) {
  std::string s;
  for (std::size_t i = 0; i < pieces; ++i) s += kPieces[rng() % kPieces.size()];
  return s;
}

// Offsets and ids of the <region> start tags, as the tokenizer finds them.
void tokenized_regions(const std::string& xml, std::vector<std::uint64_t>& ids, std::vector<std::size_t>& offsets) {
  XmlTokenizer tokens(xml, "t", "anchor.xml");
  for (auto* t = &tokens.next(); t->type != XmlToken::Eof; t = &tokens.next())
    if (t->type == XmlToken::Start && t->name == "region") ids.push_back(tokens.id_attribute("id")), offsets.push_back(t->offset);
}

}  // namespace

TEST(RegionScan, BodyEndAgreesWithItsDefinitionAtEveryAlignment) {
  std::mt19937 rng(7);
  for (int round = 0; round < 3000; ++round) {
    const auto xml = std::string(rng() % 19, ' ') + random_text(rng, rng() % 12);
    for (std::size_t from = 0; from < std::min<std::size_t>(xml.size(), 20); ++from)
      ASSERT_EQ(region_body_end(xml, from), reference_body_end(xml, from)) << "'" << xml << "' from " << from;
  }
}

TEST(RegionScan, RunNotesTheRegionsTheTokenizerFinds) {
  // Attribute values with '>', "/>", quotes of the other kind and lengths that put the tag's
  // end on every side of a 16-byte step.
  const std::vector<std::string> values = {"", "a>b", "x/>y", "it's", "0123456789abcdef>", std::string(31, 'm')};
  std::mt19937 rng(11);
  for (int round = 0; round < 500; ++round) {
    std::string xml = "<program>" + std::string(rng() % 17, ' ');
    const auto regions = 1 + rng() % 6;
    for (std::size_t r = 0; r < regions; ++r) {
      xml += "<region id=\"" + std::to_string(rng() % 100000) + "\" mod=\"" + values[rng() % values.size()] + "\"";
      xml += rng() % 2 ? " end='-1'>" : ">";
      xml += "<name>f</name>" + std::string(rng() % 20, ' ') + "</region>" + std::string(rng() % 3, '\n');
    }
    xml += "</program>";
    std::vector<std::uint64_t> ids, want_ids;
    std::vector<std::size_t> offsets, want_offsets;
    tokenized_regions(xml, want_ids, want_offsets);
    // The parser hands over at the first region's end tag; the rest are noted by the run.
    XmlTokenizer tokens(xml, "t", "anchor.xml");
    tokens.seek(want_offsets[0]);
    const auto& start = tokens.next();
    ids.push_back(tokens.id_attribute("id")), offsets.push_back(start.offset);
    const auto close = region_body_end(xml, start.end);
    ASSERT_NE(close, std::string::npos);
    const auto last = note_region_run(xml, close, ids, offsets);
    EXPECT_EQ(ids, want_ids) << xml;
    EXPECT_EQ(offsets, want_offsets) << xml;
    EXPECT_EQ(xml.compare(last, 9, "</region>"), 0);
    EXPECT_EQ(xml.find("</region>", want_offsets.back()), last) << xml;
  }
}

TEST(DeferredRegions, OpenedReportsParseRegionsOnFirstUseOnce) {
  for (const char* name : {"l2dcm.p128.cubex", "bt-mz.B.8x4.cubex", "mm.zcubex.cubex"}) {
    const auto report = open_cubex(std::string(CUBESCALE_SHARED_DATA) + "/cubex/" + name);
    EXPECT_TRUE(report->structure().regions.empty()) << name;
    const auto count = report->region_count();
    EXPECT_GT(count, 0u);
    // Several threads ask at once: one parse, one result.
    std::vector<std::thread> threads;
    std::vector<std::size_t> seen(4);
    for (std::size_t i = 0; i < seen.size(); ++i)
      threads.emplace_back([&, i] { seen[i] = report->definitions().regions.size(); });
    for (auto& t : threads) t.join();
    for (auto s : seen) EXPECT_EQ(s, count);
    for (const auto& c : report->definitions().cnodes) EXPECT_LT(c.region, count);
  }
}

TEST(DeferredRegions, ABadRegionBodyFailsOnFirstUseAndAgain) {
  const std::string anchor =
      "<cube version=\"4.4\"><metrics><metric id=\"0\"><disp_name>t</disp_name><uniq_name>t</uniq_name>"
      "<dtype>DOUBLE</dtype></metric></metrics><program><region id=\"0\"><name>main</nome></region>"
      "<cnode id=\"0\" calleeId=\"0\"></cnode></program><system><systemtreenode Id=\"0\"><name>m</name>"
      "<locationgroup Id=\"0\"><location Id=\"0\"><name>t</name></location></locationgroup></systemtreenode>"
      "</system></cube>";
  const auto parts = parse_anchor_parts(anchor, "bad.cubex");
  Report report(parts.defs, nullptr, DeferredRegions{nullptr, anchor, "bad.cubex", parts.region_offsets});
  EXPECT_EQ(report.region_count(), 1u);
  for (int i = 0; i < 2; ++i) {
    try {
      report.definitions();
      FAIL() << "no FormatError";
    } catch (const FormatError& e) {
      EXPECT_EQ(e.member(), "anchor.xml");
      EXPECT_EQ(e.offset(), anchor.find("</nome>"));
    }
  }
  EXPECT_THROW(parse_anchor(anchor, "bad.cubex"), FormatError);  // the eager parser fails at once
}
