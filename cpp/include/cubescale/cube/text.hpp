#pragma once
// Text from hostile files reaches error messages and Python strings: it must be valid UTF-8.
#include <cstddef>
#include <string>
#include <string_view>

namespace cubescale::cube {

// True when `s` is well-formed UTF-8; otherwise `bad_offset` is where it goes wrong.
bool valid_utf8(std::string_view s, std::size_t& bad_offset);
// `s` with every byte that does not start a well-formed UTF-8 character replaced by U+FFFD
// (as Python's errors="replace" does per byte): for binary formats whose strings carry no
// encoding, such as OTF2's.
std::string replace_invalid_utf8(std::string_view s);
// `s` with bytes outside printable ASCII written as \xNN: safe to quote in any message.
std::string printable(std::string_view s);

}  // namespace cubescale::cube
