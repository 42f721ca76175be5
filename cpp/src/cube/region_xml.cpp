#include "cubescale/cube/region_xml.hpp"

#include <bit>
#include <cstring>
#include <optional>
#include <string>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "cubescale/cube/anchor_xml.hpp"
#include "cubescale/cube/text.hpp"
#include "cubescale/cube/xml.hpp"

namespace cubescale::cube {

namespace {

// The text fields of a region, by tag name; nullptr for any other element.
std::string* field_of(Region& r, std::string_view name) {
  switch (name.size()) {
    case 3: return name == "url" ? &r.url : nullptr;
    case 4: return name == "name" ? &r.name : name == "role" ? &r.role : nullptr;
    case 5: return name == "descr" ? &r.descr : nullptr;
    case 8: return name == "paradigm" ? &r.paradigm : nullptr;
    case 12: return name == "mangled_name" ? &r.mangled_name : nullptr;
    default: return nullptr;
  }
}

#if defined(__SSE2__)
// `c` in each of 16 bytes, to compare a chunk with.
__m128i bytes(char c) { return _mm_set1_epi8(c); }
#endif

// The first '<' at or after `pos` that is followed by '!', '?' or "/re" (or `size`): the only
// tags that can end a region body early or end it. 16 bytes a step where SSE2 exists (every
// x86-64): most tags of a body ("</name>", "<paradigm>") are ruled out without a branch.
std::size_t next_candidate(const char* data, std::size_t pos, std::size_t size) {
#if defined(__SSE2__)
  for (; pos + 19 <= size; pos += 16) {
    const auto at = [&](std::size_t k) { return _mm_loadu_si128(reinterpret_cast<const __m128i*>(data + pos + k)); };
    const __m128i next = at(1);
    const __m128i markup = _mm_or_si128(_mm_cmpeq_epi8(next, bytes('!')), _mm_cmpeq_epi8(next, bytes('?')));
    const __m128i close = _mm_and_si128(_mm_cmpeq_epi8(next, bytes('/')),
                                        _mm_and_si128(_mm_cmpeq_epi8(at(2), bytes('r')), _mm_cmpeq_epi8(at(3), bytes('e'))));
    const __m128i hits = _mm_and_si128(_mm_cmpeq_epi8(at(0), bytes('<')), _mm_or_si128(markup, close));
    const auto mask = static_cast<unsigned>(_mm_movemask_epi8(hits));
    if (mask != 0) return pos + static_cast<std::size_t>(std::countr_zero(mask));
  }
#endif
  for (; pos + 3 < size; ++pos) {
    if (data[pos] != '<') continue;
    const char next = data[pos + 1];
    if (next == '!' || next == '?' || (next == '/' && data[pos + 2] == 'r' && data[pos + 3] == 'e')) return pos;
  }
  return size;
}

class RegionParser {
 public:
  RegionParser(std::string_view xml, const std::string& file) : tokens_(xml, file, kAnchorMember) {}

  // The <region> element whose start tag begins at `offset`, through its end tag. Its
  // direct children <name>, <mangled_name>, ... give the fields and <attr> its attributes;
  // other elements are checked for nesting and otherwise ignored.
  Region read(std::size_t offset) {
    tokens_.seek(offset);
    const auto& start = tokens_.next();
    if (start.type != XmlToken::Start || start.name != "region") tokens_.fail(offset, "expected <region>");
    Region r;
    r.file_id = tokens_.id_attribute("id");
    if (const auto v = tokens_.attribute("mod")) r.mod = *v;
    if (const auto v = tokens_.attribute("begin")) r.begin = tokens_.integer(*v, offset, "region begin");
    if (const auto v = tokens_.attribute("end")) r.end = tokens_.integer(*v, offset, "region end");
    read_children(r);
    return r;
  }

 private:
  void read_children(Region& r) {
    open_.clear();
    open_.push_back("region");
    std::string_view text;
    while (!open_.empty()) {
      const auto& t = tokens_.next();
      if (t.type == XmlToken::Eof) tokens_.fail(t.offset, "unexpected end: <" + std::string(open_.back()) + "> not closed");
      if (t.type == XmlToken::Text) {
        text = t.text;
      } else if (t.type == XmlToken::Start) {
        if (open_.size() == 1 && !t.self_closing) {
          // <name>main</name>: the field and its end tag in one step.
          if (auto* field = field_of(r, t.name)) {
            if (const auto leaf = tokens_.leaf_text(t.name)) {
              *field = *leaf;
              continue;
            }
          }
        }
        if (open_.size() == 1 && t.name == "attr") add_attr(r);
        if (open_.size() >= kMaxAnchorNesting) tokens_.fail(t.offset, "elements nested too deeply");
        open_.push_back(t.name);
        text = {};
      } else {
        if (open_.back() != t.name) tokens_.fail(t.offset, "unexpected end tag </" + printable(t.name) + ">");
        open_.pop_back();
        if (open_.size() == 1)
          if (auto* field = field_of(r, t.name)) *field = text;
        text = {};
      }
    }
  }

  void add_attr(Region& r) {
    const auto key = tokens_.attribute("key");
    const auto value = tokens_.attribute("value");
    if (!key || !value) tokens_.fail(tokens_.token().offset, "<attr> needs key and value");
    r.attrs.emplace_back(*key, *value);
  }

  XmlTokenizer tokens_;
  std::vector<std::string_view> open_;  // names of the open elements; tag names are never decoded
};

}  // namespace

std::size_t region_body_end(std::string_view xml, std::size_t body) {
  const char* data = xml.data();
  const auto size = xml.size();
  // "</region" and the byte after it must be inside the document.
  for (auto pos = next_candidate(data, body, size); pos + 8 < size; pos = next_candidate(data, pos + 1, size)) {
    const char next = data[pos + 1];
    if (next == '!' || next == '?') return std::string_view::npos;
    if (std::memcmp(data + pos + 2, "region", 6) == 0 && (data[pos + 8] == '>' || is_xml_space(data[pos + 8]))) return pos;
  }
  return std::string_view::npos;
}

namespace {

// Past the whitespace at `pos`.
std::size_t skip_spaces(std::string_view xml, std::size_t pos) {
  while (pos < xml.size() && is_xml_space(xml[pos])) ++pos;
  return pos;
}

// One past the '>' that ends a start tag whose attributes go on at `pos` (quoted values may
// hold '>'); npos when a '<' comes first or the tag is empty-element ("/>").
std::size_t start_tag_end(std::string_view xml, std::size_t pos) {
  const char* data = xml.data();
  char quote = 0;
#if defined(__SSE2__)
  // 16 bytes a step while values are in double quotes (as CubeW writes them): a '>' ends the
  // tag when an even number of quotes precede it. The prefix XOR of the quote bits tells,
  // for every byte, whether it is inside a value.
  unsigned inside = 0;  // all ones while a value is open at the start of the chunk
  for (; pos + 16 <= xml.size(); pos += 16) {
    const __m128i chunk = _mm_loadu_si128(reinterpret_cast<const __m128i*>(data + pos));
    const auto mask = [&](char c) { return static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpeq_epi8(chunk, bytes(c)))); };
    if ((mask('<') | mask('\'')) != 0) break;  // the byte loop decides
    const unsigned quotes = mask('"');
    unsigned in_value = quotes;
    in_value ^= in_value << 1, in_value ^= in_value << 2, in_value ^= in_value << 4, in_value ^= in_value << 8;
    in_value = (in_value ^ inside) & 0xffffu;
    const unsigned ends = mask('>') & ~in_value;
    if (ends != 0) {
      pos += static_cast<std::size_t>(std::countr_zero(ends));
      return data[pos - 1] == '/' ? std::string_view::npos : pos + 1;
    }
    if (std::popcount(quotes) & 1) inside = ~inside;
  }
  if (inside) quote = '"';
#endif
  for (; pos < xml.size(); ++pos) {
    const char c = data[pos];
    if (c == '<') return std::string_view::npos;
    if (quote) {
      if (c == quote) quote = 0;
    } else if (c == '"' || c == '\'') {
      quote = c;
    } else if (c == '>') {
      return data[pos - 1] == '/' ? std::string_view::npos : pos + 1;
    }
  }
  return std::string_view::npos;
}

// The id of `<region id="N"` at `pos` and where its start tag ends (one past '>'); nullopt
// unless the tag starts exactly so, its id is a number below 2^32 and it is not empty-element.
// Past the id, quotes are tracked to find the '>' that ends the tag; a '<' ends the attempt.
struct RegionTag {
  std::uint64_t id;
  std::size_t end;
};
std::optional<RegionTag> region_tag(std::string_view xml, std::size_t pos) {
  static constexpr char kOpen[] = "<region id=\"";
  if (pos > xml.size() || !starts_with_at(xml, pos, kOpen)) return std::nullopt;
  pos += sizeof kOpen - 1;
  std::uint64_t id = 0;
  if (!plain_quoted_id(xml, pos, id)) return std::nullopt;
  const auto end = start_tag_end(xml, pos);
  if (end == std::string_view::npos) return std::nullopt;
  return RegionTag{id, end};
}

}  // namespace

std::size_t note_region_run(std::string_view xml, std::size_t close, std::vector<std::uint64_t>& ids,
                            std::vector<std::size_t>& offsets) {
  static constexpr char kClose[] = "</region>";
  while (close <= xml.size() && starts_with_at(xml, close, kClose)) {
    const auto start = skip_spaces(xml, close + sizeof kClose - 1);
    const auto tag = region_tag(xml, start);
    if (!tag) break;
    const auto next_close = region_body_end(xml, tag->end);
    if (next_close == std::string_view::npos) break;
    ids.push_back(tag->id);
    offsets.push_back(start);
    close = next_close;
  }
  return close;
}

std::vector<Region> parse_regions(std::string_view xml, const std::string& file, const std::vector<std::size_t>& offsets) {
  RegionParser parser(xml, file);
  std::vector<Region> regions;
  regions.reserve(offsets.size());
  for (const auto offset : offsets) regions.push_back(parser.read(offset));
  return regions;
}

}  // namespace cubescale::cube
