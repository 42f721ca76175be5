#pragma once
// The pattern match of Score-P's filters, POSIX fnmatch without flags (what Score-P calls):
// * any run of characters (also '/' and a leading '.'), ? one character, [abc] [a-z] [!abc] [^abc]
// [[:digit:]] a set, \c the character c itself (also inside a set); a '[' without its ']' is
// itself; a pattern ending in a lone backslash matches nothing. Case-sensitive, bytes.
#include <string_view>

namespace cubescale::measure {

bool glob_match(std::string_view pattern, std::string_view text);

}  // namespace cubescale::measure
