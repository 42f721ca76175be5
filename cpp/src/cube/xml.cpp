#include "cubescale/cube/xml.hpp"

#include <array>
#include <bit>
#include <charconv>
#include <cstring>

#include "cubescale/common/format_error.hpp"
#include "cubescale/cube/text.hpp"

namespace cubescale::cube {

namespace {

constexpr std::string_view kCdataOpen = "<![CDATA[";

// A table, since names are scanned byte by byte and this is the tokenizer's inner loop.
constexpr std::array<bool, 256> kNameChars = [] {
  std::array<bool, 256> table{};
  for (int c = 0; c < 256; ++c)
    table[c] = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' ||
               c == ':' || c == '.';
  return table;
}();
bool is_name_char(char c) { return kNameChars[static_cast<unsigned char>(c)]; }

// How many of the 8 bytes at `p` are spaces before the first other byte (8: all are).
std::size_t leading_spaces(const char* p) {
  std::uint64_t word;
  std::memcpy(&word, p, sizeof word);
  const std::uint64_t differs = word ^ 0x2020202020202020ull;  // zero bytes where p has ' '
  if (differs == 0) return 8;
  // The first byte in memory is the low byte on little-endian machines, the high one on big.
  const int zero_bits =
      std::endian::native == std::endian::little ? std::countr_zero(differs) : std::countl_zero(differs);
  return static_cast<std::size_t>(zero_bits) / 8;
}

std::string_view trim_trailing_space(std::string_view s) {
  while (!s.empty() && is_xml_space(s.back())) s.remove_suffix(1);
  return s;
}

void append_utf8(std::string& out, std::uint32_t cp) {
  if (cp < 0x80) out += static_cast<char>(cp);
  else if (cp < 0x800) out += static_cast<char>(0xc0 | (cp >> 6)), out += static_cast<char>(0x80 | (cp & 0x3f));
  else if (cp < 0x10000)
    out += static_cast<char>(0xe0 | (cp >> 12)), out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f)),
        out += static_cast<char>(0x80 | (cp & 0x3f));
  else
    out += static_cast<char>(0xf0 | (cp >> 18)), out += static_cast<char>(0x80 | ((cp >> 12) & 0x3f)),
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f)), out += static_cast<char>(0x80 | (cp & 0x3f));
}

}  // namespace

void XmlTokenizer::fail(std::size_t offset, const std::string& message) const {
  throw FormatError(file_, member_, offset, message);
}

std::optional<std::string_view> XmlTokenizer::attribute(std::string_view key) const {
  for (const auto& [k, v] : token_.attributes)
    if (k == key) return v;
  return std::nullopt;
}

std::uint64_t XmlTokenizer::id_attribute(std::string_view key) const {
  const auto v = attribute(key);
  if (!v) fail(token_.offset, "<" + std::string(token_.name) + "> without " + std::string(key));
  std::uint64_t id = 0;
  auto [p, ec] = std::from_chars(v->data(), v->data() + v->size(), id);
  if (ec != std::errc() || p != v->data() + v->size() || id > 0xffffffffull)
    fail(token_.offset, "bad " + std::string(key) + " \"" + printable(*v) + "\"");
  return id;
}

std::int64_t XmlTokenizer::integer(std::string_view text, std::size_t offset, std::string_view what) const {
  std::int64_t v = 0;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || p != text.data() + text.size())
    fail(offset, "bad " + std::string(what) + " \"" + printable(text) + "\"");
  return v;
}

void XmlTokenizer::decode_into(std::string& out, std::string_view raw, std::size_t at) const {
  std::size_t i = 0;
  while (i < raw.size()) {
    const auto amp = raw.find('&', i);
    if (amp == std::string_view::npos) {
      out.append(raw.substr(i));
      return;
    }
    out.append(raw.substr(i, amp - i));
    i = amp;
    const auto semi = raw.find(';', i);
    if (semi == std::string_view::npos || semi - i > 12) fail(at + i, "unterminated entity");
    const auto name = raw.substr(i + 1, semi - i - 1);
    if (name == "lt") out += '<';
    else if (name == "gt") out += '>';
    else if (name == "amp") out += '&';
    else if (name == "quot") out += '"';
    else if (name == "apos") out += '\'';
    else if (name.size() > 1 && name[0] == '#') {
      const bool hex = name[1] == 'x' || name[1] == 'X';
      const auto digits = name.substr(hex ? 2 : 1);
      std::uint32_t cp = 0;
      auto [p, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), cp, hex ? 16 : 10);
      if (ec != std::errc() || p != digits.data() + digits.size() || cp > 0x10ffff || digits.empty())
        fail(at + i, "bad character reference");
      append_utf8(out, cp);
    } else {
      fail(at + i, "unknown entity &" + printable(name) + ";");
    }
    i = semi + 1;
  }
}

std::optional<std::string_view> XmlTokenizer::leaf_text(std::string_view name) {
  if (pending_end_) return std::nullopt;
  // Field texts are short (names, numbers): one byte loop that also notes entities beats two
  // memchr calls.
  const char* data = xml_.data();
  const auto size = xml_.size();
  auto lt = pos_;
  bool has_entity = false;
  while (lt < size && data[lt] != '<') has_entity |= data[lt++] == '&';
  if (has_entity || size - lt < name.size() + 3) return std::nullopt;
  const char* close = data + lt;
  if (close[1] != '/' || std::memcmp(close + 2, name.data(), name.size()) != 0 || close[2 + name.size()] != '>')
    return std::nullopt;
  auto text = xml_.substr(pos_, lt - pos_);
  while (!text.empty() && is_xml_space(text.front())) text.remove_prefix(1);
  pos_ = lt + name.size() + 3;
  return trim_trailing_space(text);
}

std::size_t XmlTokenizer::skip_special() {
  auto skip_to = [&](std::string_view terminator) {
    const auto end = xml_.find(terminator, pos_);
    if (end == std::string_view::npos) fail(pos_, "unterminated " + printable(xml_.substr(pos_, 4)));
    return end + terminator.size();
  };
  if (xml_.substr(pos_, 2) == "<?") return skip_to("?>");
  if (xml_.substr(pos_, 4) == "<!--") return skip_to("-->");
  return skip_to(">");  // <!DOCTYPE ...> without internal subset
}

// Most calls find no space at all (before '>' or '=', before a tag after text): only those
// that do pay for the call of skip_space_run().
inline void XmlTokenizer::skip_space() {
  if (pos_ < xml_.size() && is_xml_space(xml_[pos_])) skip_space_run();
}

void XmlTokenizer::skip_space_run() {
  const auto size = xml_.size();
  auto pos = pos_;
  while (pos < size) {
    // Indentation is a newline and a run of spaces: take the spaces up to 8 at a time.
    if (size - pos >= 8) {
      const auto spaces = leading_spaces(xml_.data() + pos);
      pos += spaces;
      if (spaces == 8) continue;
    }
    if (!is_xml_space(xml_[pos])) break;
    ++pos;
  }
  pos_ = pos;
}

std::size_t XmlTokenizer::name_end(std::size_t pos) const {
  const auto size = xml_.size();
  const char* data = xml_.data();
  // Four bytes per bounds check: the busiest loop of the tokenizer.
  for (; size - pos >= 4; pos += 4) {
    if (!is_name_char(data[pos])) return pos;
    if (!is_name_char(data[pos + 1])) return pos + 1;
    if (!is_name_char(data[pos + 2])) return pos + 2;
    if (!is_name_char(data[pos + 3])) return pos + 3;
  }
  while (pos < size && is_name_char(data[pos])) ++pos;
  return pos;
}

void XmlTokenizer::begin_token(XmlToken::Type type) {
  token_.type = type;
  token_.name = {};
  token_.attributes.clear();
  token_.text = {};
  token_.self_closing = false;
  token_.offset = token_.end = pos_;
}

const XmlToken& XmlTokenizer::next() {
  if (pending_end_) {
    pending_end_ = false;
    token_.type = XmlToken::End;
    token_.self_closing = false;
    token_.attributes.clear();
    return token_;
  }
  while (true) {
    skip_space();
    if (pos_ >= xml_.size()) {
      begin_token(XmlToken::Eof);
      return token_;
    }
    if (xml_[pos_] != '<') return read_text(), token_;
    // Only the byte after '<' tells tags from the rest.
    const char after = pos_ + 1 < xml_.size() ? xml_[pos_ + 1] : '\0';
    if (after == '!' && xml_.substr(pos_, kCdataOpen.size()) == kCdataOpen) return read_text(), token_;
    if (after == '?' || after == '!') {
      pos_ = skip_special();
      continue;
    }
    read_tag();
    return token_;
  }
}

void XmlTokenizer::read_text() {
  begin_token(XmlToken::Text);
  // Leading whitespace was skipped by next(); text is kept as written otherwise. Most text
  // has no entity and no CDATA: then it is the bytes up to the next '<', viewed in place.
  const auto text_end = std::min(xml_.find('<', pos_), xml_.size());
  const auto raw = xml_.substr(pos_, text_end - pos_);
  if (raw.find('&') != std::string_view::npos || xml_.substr(text_end, kCdataOpen.size()) == kCdataOpen) {
    read_text_with_markup();
  } else {
    token_.text = trim_trailing_space(raw);
    pos_ = text_end;
  }
  token_.end = pos_;
}

void XmlTokenizer::read_text_with_markup() {
  decoded_text_.clear();
  while (pos_ < xml_.size()) {
    if (xml_.substr(pos_, kCdataOpen.size()) == kCdataOpen) {
      const auto end = xml_.find("]]>", pos_ + kCdataOpen.size());
      if (end == std::string_view::npos) fail(pos_, "unterminated CDATA section");
      decoded_text_.append(xml_.substr(pos_ + kCdataOpen.size(), end - pos_ - kCdataOpen.size()));
      pos_ = end + 3;
      continue;
    }
    if (xml_[pos_] == '<') break;
    const auto end = std::min(xml_.find('<', pos_), xml_.size());
    decode_into(decoded_text_, xml_.substr(pos_, end - pos_), pos_);
    pos_ = end;
  }
  token_.text = trim_trailing_space(decoded_text_);
}

std::string_view XmlTokenizer::attribute_value(std::size_t start, char quote) {
  // Values are short (ids, keys): one byte loop that also notes entities beats two memchr calls.
  const auto size = xml_.size();
  const char* data = xml_.data();
  auto end = start;
  bool has_entity = false, has_lt = false;
  while (end < size && data[end] != quote) {
    const char c = data[end++];
    has_entity |= c == '&';
    has_lt |= c == '<';
  }
  if (end == size) fail(start, "unterminated attribute value");
  const auto raw = xml_.substr(start, end - start);
  // XML forbids a raw '<' in values; the anchor parser relies on that to skip region bodies.
  if (has_lt) fail(start + raw.find('<'), "'<' in an attribute value");
  pos_ = end + 1;
  if (!has_entity) return raw;
  if (decoded_values_used_ == decoded_values_.size()) decoded_values_.emplace_back();
  auto& out = decoded_values_[decoded_values_used_++];
  out.clear();
  decode_into(out, raw, start);
  return out;
}

void XmlTokenizer::read_tag() {
  begin_token(XmlToken::Start);
  decoded_values_used_ = 0;
  ++pos_;  // '<'
  const bool closing = pos_ < xml_.size() && xml_[pos_] == '/';
  if (closing) ++pos_;
  const auto name_start = pos_;
  pos_ = name_end(pos_);
  if (pos_ == name_start) fail(token_.offset, "expected a tag name after '<'");
  token_.name = xml_.substr(name_start, pos_ - name_start);
  token_.type = closing ? XmlToken::End : XmlToken::Start;
  while (true) {
    skip_space();
    if (pos_ >= xml_.size()) fail(token_.offset, "unterminated tag <" + printable(token_.name));
    const char c = xml_[pos_];
    if (c == '>') {
      ++pos_;
      break;
    }
    if (c == '/' && !closing && pos_ + 1 < xml_.size() && xml_[pos_ + 1] == '>') {
      pos_ += 2;
      token_.self_closing = true;
      pending_end_ = true;
      break;
    }
    if (closing) fail(pos_, "unexpected character in end tag");
    const auto key_start = pos_;
    pos_ = name_end(pos_);
    if (pos_ == key_start) fail(pos_, "expected an attribute name");
    const auto key = xml_.substr(key_start, pos_ - key_start);
    skip_space();
    if (pos_ >= xml_.size() || xml_[pos_] != '=') fail(pos_, "expected '=' after attribute " + printable(key));
    ++pos_;
    skip_space();
    if (pos_ >= xml_.size() || (xml_[pos_] != '"' && xml_[pos_] != '\'')) fail(pos_, "expected a quoted value");
    const char quote = xml_[pos_++];
    token_.attributes.emplace_back(key, attribute_value(pos_, quote));
  }
  token_.end = pos_;
}

}  // namespace cubescale::cube
