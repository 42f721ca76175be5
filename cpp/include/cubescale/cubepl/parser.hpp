#pragma once
// CubePL parser: recursive descent over a hand-written lexer, into the tree of ast.hpp.
// It reads the subset of CubePL that Score-P's and Scalasca's remapping specs use, and more:
// numbers, "strings", ${variables} with [index], metric::name(), metric::name(i|e|*[, i|e|*]),
// + - * / ^, unary -, == != < > <= >=, and or xor not, eq seq =~ /regex/, lowercase,
// uppercase, sqrt sin asin cos acos tan atan exp log abs sgn floor ceil, min, max, blocks { ...; return x; }, if / elseif / else, while,
// global(name), local(name), cube::metric::set::m("key", "value") (accepted, no effect on
// values) and // comments. Constructs of full CubePL outside the subset
// (metric::fixed::, metric::call::, cube::metric::..., env, random, sizeof, defined, pos,
// neg, arg1, arg2, <cubeplaggr> programs) are an Error naming the construct.
// Nesting is bounded (kMaxNesting), so hostile input cannot overflow the stack, and regular
// expressions are bounded in length and groups before std::regex compiles them.
#include <string_view>

#include "cubescale/cubepl/ast.hpp"
#include "cubescale/cubepl/error.hpp"

namespace cubescale::cubepl {

inline constexpr std::size_t kMaxNesting = 256;
inline constexpr std::size_t kMaxRegexBytes = 4096;

// Throws Error (offset into `text`) on a syntax error or an unsupported construct.
Program parse(std::string_view text);

}  // namespace cubescale::cubepl
