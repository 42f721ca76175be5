#include "cubescale/cube/text.hpp"

#include <cstdint>
#include <cstdio>
#include <cstring>

namespace cubescale::cube {

namespace {

// True when the 16 bytes at `p` are all ASCII (no high bit set). memcpy: no alignment needed.
bool ascii_block(const char* p) {
  std::uint64_t words[2];
  std::memcpy(words, p, sizeof words);
  return ((words[0] | words[1]) & 0x8080808080808080ull) == 0;
}

}  // namespace

bool valid_utf8(std::string_view s, std::size_t& bad_offset) {
  std::size_t i = 0;
  while (i < s.size()) {
    // Documents are almost all ASCII: pass 16 such bytes per step. A block with a non-ASCII
    // byte falls through to the checks below for one character, then blocks are tried again.
    if (s.size() - i >= 16 && ascii_block(s.data() + i)) {
      i += 16;
      continue;
    }
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
    else return bad_offset = i, false;
    if (s.size() - i <= n) return bad_offset = i, false;
    for (std::size_t k = 1; k <= n; ++k) {
      const auto b = static_cast<std::uint8_t>(s[i + k]);
      if ((b & 0xc0) != 0x80) return bad_offset = i, false;
      cp = (cp << 6) | (b & 0x3f);
    }
    // Overlong forms, surrogates and values past U+10FFFF are not UTF-8.
    const std::uint32_t min[] = {0, 0x80, 0x800, 0x10000};
    if (cp < min[n] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return bad_offset = i, false;
    i += n + 1;
  }
  return true;
}

std::string replace_invalid_utf8(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 8);
  std::size_t bad = 0;
  while (!valid_utf8(s, bad)) {
    out.append(s.data(), bad);
    out += "\xEF\xBF\xBD";  // U+FFFD
    s.remove_prefix(bad + 1);
  }
  out.append(s);
  return out;
}

std::string printable(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (c >= 0x20 && c < 0x7f) {
      out += ch;
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    }
  }
  return out;
}

}  // namespace cubescale::cube
