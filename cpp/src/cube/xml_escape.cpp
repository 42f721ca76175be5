// Text and attribute values as XML 1.0 can hold them (xml.hpp's xml_escape).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "cubescale/cube/xml.hpp"

namespace cubescale::cube {

namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD

// The length of the well-formed UTF-8 sequence at s[i] (RFC 3629: no overlong forms, no
// surrogates, at most U+10FFFF) and its code point; 0 when the bytes there are none.
std::size_t utf8_sequence(std::string_view s, std::size_t i, std::uint32_t& code) {
  const auto b = static_cast<unsigned char>(s[i]);
  std::size_t n;
  std::uint32_t min;
  if (b < 0x80) return code = b, 1;
  if (b >= 0xC2 && b <= 0xDF) n = 2, min = 0x80, code = b & 0x1F;
  else if (b >= 0xE0 && b <= 0xEF) n = 3, min = 0x800, code = b & 0x0F;
  else if (b >= 0xF0 && b <= 0xF4) n = 4, min = 0x10000, code = b & 0x07;
  else return 0;
  if (s.size() - i < n) return 0;
  for (std::size_t k = 1; k < n; ++k) {
    const auto c = static_cast<unsigned char>(s[i + k]);
    if ((c & 0xC0) != 0x80) return 0;
    code = (code << 6) | (c & 0x3F);
  }
  if (code < min || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) return 0;
  return n;
}

// XML 1.0's Char production, for code points that UTF-8 can carry.
bool xml_char(std::uint32_t c) { return c >= 0x20 ? c != 0xFFFE && c != 0xFFFF : c == 0x9 || c == 0xA || c == 0xD; }

}  // namespace

bool xml_can_hold(std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    std::uint32_t code = 0;
    const auto n = utf8_sequence(s, i, code);
    if (n == 0 || !xml_char(code)) return false;
    i += n;
  }
  return true;
}

std::string xml_escape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    std::uint32_t code = 0;
    const auto n = utf8_sequence(s, i, code);
    if (n == 0 || !xml_char(code)) {  // one U+FFFD per bad byte, or per forbidden character
      out += kReplacement;
      i += n == 0 ? 1 : n;
      continue;
    }
    switch (code) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default: out.append(s.substr(i, n));
    }
    i += n;
  }
  return out;
}

}  // namespace cubescale::cube
