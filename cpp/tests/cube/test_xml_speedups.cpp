// The fast paths of valid_utf8 (16 ASCII bytes per step) and of the XML tokenizer (views into
// the document, decoded buffers only for entities and CDATA) against their plain definitions.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "cubescale/common/format_error.hpp"
#include "cubescale/cube/text.hpp"
#include "cubescale/cube/xml.hpp"

using namespace cubescale::cube;

namespace {

// The byte-at-a-time definition the fast path must agree with.
bool reference_utf8(const std::string& s, std::size_t& bad) {
  std::size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<std::uint8_t>(s[i]);
    if (c < 0x80) {
      ++i;
      continue;
    }
    std::size_t n;
    std::uint32_t cp;
    if ((c & 0xe0) == 0xc0) n = 1, cp = c & 0x1f;
    else if ((c & 0xf0) == 0xe0) n = 2, cp = c & 0x0f;
    else if ((c & 0xf8) == 0xf0) n = 3, cp = c & 0x07;
    else return bad = i, false;
    if (s.size() - i <= n) return bad = i, false;
    for (std::size_t k = 1; k <= n; ++k) {
      const auto b = static_cast<std::uint8_t>(s[i + k]);
      if ((b & 0xc0) != 0x80) return bad = i, false;
      cp = (cp << 6) | (b & 0x3f);
    }
    const std::uint32_t min[] = {0, 0x80, 0x800, 0x10000};
    if (cp < min[n] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return bad = i, false;
    i += n + 1;
  }
  return true;
}

void expect_same(const std::string& s) {
  std::size_t bad = 12345, expected_bad = 12345;
  const bool expected = reference_utf8(s, expected_bad);
  ASSERT_EQ(valid_utf8(s, bad), expected) << printable(s);
  if (!expected) EXPECT_EQ(bad, expected_bad) << printable(s);
}

}  // namespace

TEST(Utf8FastPath, MultibyteCharactersAtEveryOffsetOfABlock) {
  const std::vector<std::string> chars = {"\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80"};
  for (const auto& ch : chars)
    for (std::size_t before = 0; before < 40; ++before)
      for (std::size_t after : {0, 1, 7, 8, 15, 16, 17, 33}) expect_same(std::string(before, 'a') + ch + std::string(after, 'b'));
}

TEST(Utf8FastPath, InvalidBytesAtEveryPosition) {
  const std::vector<std::string> bad = {
      "\x80", "\xbf", "\xc0\xaf", "\xc1\xbf",          // stray continuation, overlong 2-byte
      "\xe0\x80\xaf", "\xed\xa0\x80", "\xed\xbf\xbf",  // overlong 3-byte, surrogates
      "\xf0\x80\x80\xaf", "\xf4\x90\x80\x80",          // overlong 4-byte, past U+10FFFF
      "\xf8\x88\x80\x80\x80", "\xff", "\xc3", "\xe2\x82", "\xc3\x28"};  // bad lead, truncated
  for (const auto& b : bad)
    for (std::size_t before = 0; before < 40; ++before)
      for (std::size_t after : {0, 1, 8, 16, 20}) {
        const auto s = std::string(before, 'x') + b + std::string(after, 'y');
        expect_same(s);
        std::size_t offset = 0;
        EXPECT_FALSE(valid_utf8(s, offset));
        EXPECT_EQ(offset, before) << printable(s);
      }
}

TEST(Utf8FastPath, AsciiAndEmpty) {
  std::size_t bad = 0;
  EXPECT_TRUE(valid_utf8("", bad));
  for (std::size_t n = 0; n < 70; ++n) expect_same(std::string(n, 'q'));
  for (std::size_t n = 0; n < 70; ++n) expect_same(std::string(n, 'q') + "\xe9");
}

TEST(XmlFastPath, DecodedAttributeValuesStayValidTogether) {
  // Several decoded values in one tag: each keeps its own buffer.
  std::string xml = "<a";
  for (int i = 0; i < 40; ++i) xml += " k" + std::to_string(i) + "=\"v" + std::to_string(i) + " &amp; a long enough value\"";
  xml += " plain='x'/>";
  XmlTokenizer t(xml, "f", "m");
  const auto& token = t.next();
  ASSERT_EQ(token.attributes.size(), 41u);
  for (int i = 0; i < 40; ++i) EXPECT_EQ(token.attributes[i].second, "v" + std::to_string(i) + " & a long enough value");
  EXPECT_EQ(*t.attribute("plain"), "x");
  EXPECT_FALSE(t.attribute("missing").has_value());
}

TEST(XmlFastPath, TextViewsAndDecodedText) {
  XmlTokenizer t("<a>  plain text \n </a><b>x &lt; y&#32;</b><c>p<![CDATA[ q ]]>  </c><d>&#x20;&#x20;</d>", "f", "m");
  t.next();
  EXPECT_EQ(t.next().text, "plain text");
  t.next();
  t.next();
  EXPECT_EQ(t.next().text, "x < y");  // trailing space from a reference is trimmed too
  const auto kept = t.token().text;
  EXPECT_EQ(t.next().type, XmlToken::End);
  EXPECT_EQ(kept, "x < y");  // decoded text survives the tags that follow
  t.next();
  EXPECT_EQ(t.next().text, "p q");
  t.next();
  t.next();
  const auto& spaces = t.next();
  EXPECT_EQ(spaces.type, XmlToken::Text);
  EXPECT_EQ(spaces.text, "");
}

TEST(XmlFastPath, ErrorOffsets) {
  auto offset_of = [](const std::string& xml) -> std::uint64_t {
    XmlTokenizer t(xml, "f", "m");
    try {
      while (t.next().type != XmlToken::Eof) {
      }
    } catch (const cubescale::FormatError& e) {
      return e.offset();
    }
    return ~std::uint64_t(0);
  };
  EXPECT_EQ(offset_of("<a k=\"unterminated"), 6u);
  EXPECT_EQ(offset_of("<a k=\"x &bogus; y\"/>"), 8u);
  EXPECT_EQ(offset_of("<a>text &unterminated</a>"), 8u);
  EXPECT_EQ(offset_of("<a>ok</a>   <"), 12u);
  EXPECT_EQ(offset_of("<a>x<![CDATA[never closed</a>"), 4u);
}

// leaf_text takes <name>text</name> in one step: where it does, it must give the text and the
// position of the Start, Text, End sequence; where it does not, it must consume nothing.
TEST(XmlFastPath, LeafTextAgreesWithTheTokens) {
  const std::vector<std::pair<std::string, bool>> bodies = {
      {"", true},           {"   ", true},        {"main", true},         {"  main \n ", true},
      {"\n a b \t\n", true}, {"a&amp;b", false},  {"a<!--c-->b", false},  {"<x/>", false},
      {"a</name >", false},  {"a</nam>", false},  {"a<![CDATA[b]]>", false}, {"a</namex>", false}};
  for (const auto& [body, taken] : bodies) {
    const std::string xml = "<name>" + body + (body.find("</") == std::string::npos ? "</name>" : "") + "<next/>";
    SCOPED_TRACE(xml);
    XmlTokenizer fast(xml, "f", "m");
    fast.next();
    const auto before = fast.offset();
    const auto text = fast.leaf_text("name");
    ASSERT_EQ(text.has_value(), taken);
    if (!taken) {
      EXPECT_EQ(fast.offset(), before);
      continue;
    }
    XmlTokenizer slow(xml, "f", "m");
    slow.next();
    std::string_view expected;
    while (slow.next().type != XmlToken::End) expected = slow.token().text;
    EXPECT_EQ(*text, expected);
    EXPECT_EQ(fast.offset(), slow.offset());
    EXPECT_EQ(fast.next().name, "next");
  }
}

TEST(Utf8Replacement, EveryInvalidByteBecomesOneReplacementCharacter) {
  const std::string fffd = "\xEF\xBF\xBD";
  EXPECT_EQ(replace_invalid_utf8("plain"), "plain");
  EXPECT_EQ(replace_invalid_utf8("caf\xC3\xA9"), "caf\xC3\xA9");           // valid stays
  EXPECT_EQ(replace_invalid_utf8("caf\xE9"), "caf" + fffd);                 // Latin-1 at the end
  EXPECT_EQ(replace_invalid_utf8("\xE9t\xE9"), fffd + "t" + fffd);
  EXPECT_EQ(replace_invalid_utf8("\xC3"), fffd);                             // cut sequence
  EXPECT_EQ(replace_invalid_utf8("\xED\xA0\x80x"), fffd + fffd + fffd + "x");  // a surrogate
  std::size_t bad = 0;
  EXPECT_TRUE(valid_utf8(replace_invalid_utf8(std::string(40, '\xFF') + "abc"), bad));
}
