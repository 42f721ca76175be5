#include "cubescale/cube/xml.hpp"

#include <charconv>

#include "cubescale/common/format_error.hpp"
#include "cubescale/cube/text.hpp"

namespace cubescale::cube {

namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
bool is_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' ||
         c == ':' || c == '.';
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

const std::string* XmlTokenizer::attribute(std::string_view key) const {
  for (const auto& [k, v] : token_.attributes)
    if (k == key) return &v;
  return nullptr;
}

std::string XmlTokenizer::decode(std::string_view raw, std::size_t at) const {
  if (raw.find('&') == std::string_view::npos) return std::string(raw);
  std::string out;
  out.reserve(raw.size());
  for (std::size_t i = 0; i < raw.size(); ++i) {
    if (raw[i] != '&') {
      out += raw[i];
      continue;
    }
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
    i = semi;
  }
  return out;
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

const XmlToken& XmlTokenizer::next() {
  if (pending_end_) {
    pending_end_ = false;
    token_.type = XmlToken::End;
    token_.self_closing = false;
    token_.attributes.clear();
    return token_;
  }
  while (true) {
    while (pos_ < xml_.size() && is_space(xml_[pos_])) ++pos_;
    if (pos_ >= xml_.size()) {
      token_ = XmlToken{};
      token_.offset = token_.end = pos_;
      return token_;
    }
    if (xml_[pos_] != '<') return read_text(), token_;
    if (xml_.substr(pos_, 9) == "<![CDATA[") return read_text(), token_;
    if (xml_.substr(pos_, 2) == "<?" || xml_.substr(pos_, 2) == "<!") {
      pos_ = skip_special();
      continue;
    }
    read_tag();
    return token_;
  }
}

void XmlTokenizer::read_text() {
  token_ = XmlToken{};
  token_.type = XmlToken::Text;
  token_.offset = pos_;
  // Leading whitespace was skipped by next(); text is kept as written otherwise.
  while (pos_ < xml_.size()) {
    if (xml_.substr(pos_, 9) == "<![CDATA[") {
      const auto end = xml_.find("]]>", pos_ + 9);
      if (end == std::string_view::npos) fail(pos_, "unterminated CDATA section");
      token_.text.append(xml_.substr(pos_ + 9, end - pos_ - 9));
      pos_ = end + 3;
      continue;
    }
    if (xml_[pos_] == '<') break;
    auto end = xml_.find_first_of("<", pos_);
    if (end == std::string_view::npos) end = xml_.size();
    token_.text += decode(xml_.substr(pos_, end - pos_), pos_);
    pos_ = end;
  }
  while (!token_.text.empty() && is_space(token_.text.back())) token_.text.pop_back();
  token_.end = pos_;
}

void XmlTokenizer::read_tag() {
  token_.attributes.clear();
  token_.text.clear();
  token_.self_closing = false;
  token_.offset = pos_;
  ++pos_;  // '<'
  const bool closing = pos_ < xml_.size() && xml_[pos_] == '/';
  if (closing) ++pos_;
  const auto name_start = pos_;
  while (pos_ < xml_.size() && is_name_char(xml_[pos_])) ++pos_;
  if (pos_ == name_start) fail(token_.offset, "expected a tag name after '<'");
  token_.name = xml_.substr(name_start, pos_ - name_start);
  token_.type = closing ? XmlToken::End : XmlToken::Start;
  while (true) {
    while (pos_ < xml_.size() && is_space(xml_[pos_])) ++pos_;
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
    while (pos_ < xml_.size() && is_name_char(xml_[pos_])) ++pos_;
    if (pos_ == key_start) fail(pos_, "expected an attribute name");
    const auto key = xml_.substr(key_start, pos_ - key_start);
    while (pos_ < xml_.size() && is_space(xml_[pos_])) ++pos_;
    if (pos_ >= xml_.size() || xml_[pos_] != '=') fail(pos_, "expected '=' after attribute " + printable(key));
    ++pos_;
    while (pos_ < xml_.size() && is_space(xml_[pos_])) ++pos_;
    if (pos_ >= xml_.size() || (xml_[pos_] != '"' && xml_[pos_] != '\'')) fail(pos_, "expected a quoted value");
    const char quote = xml_[pos_++];
    const auto end = xml_.find(quote, pos_);
    if (end == std::string_view::npos) fail(pos_, "unterminated attribute value");
    token_.attributes.emplace_back(key, decode(xml_.substr(pos_, end - pos_), pos_));
    pos_ = end + 1;
  }
  token_.end = pos_;
}

std::string xml_escape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default: out += c;
    }
  }
  return out;
}

}  // namespace cubescale::cube
