#include "cubescale/measure/glob.hpp"

#include <cctype>
#include <optional>

namespace cubescale::measure {

namespace {

// One element of the pattern matched against one character: where the next element starts and
// whether it matched.
struct Step {
  std::size_t next;
  bool match;
};

bool in_class(std::string_view name, unsigned char c) {
  if (name == "alpha") return std::isalpha(c);
  if (name == "digit") return std::isdigit(c);
  if (name == "alnum") return std::isalnum(c);
  if (name == "upper") return std::isupper(c);
  if (name == "lower") return std::islower(c);
  if (name == "space") return std::isspace(c);
  if (name == "blank") return c == ' ' || c == '\t';
  if (name == "punct") return std::ispunct(c);
  if (name == "xdigit") return std::isxdigit(c);
  if (name == "cntrl") return std::iscntrl(c);
  if (name == "print") return std::isprint(c);
  if (name == "graph") return std::isgraph(c);
  return false;
}

// A set's member at p[at] (a character, possibly escaped): the character and where it ends.
std::optional<std::pair<unsigned char, std::size_t>> member(std::string_view p, std::size_t at) {
  if (at >= p.size()) return std::nullopt;
  if (p[at] == '\\') {
    if (at + 1 >= p.size()) return std::nullopt;
    return std::pair{static_cast<unsigned char>(p[at + 1]), at + 2};
  }
  return std::pair{static_cast<unsigned char>(p[at]), at + 1};
}

// The set "[...]" starting at p[at]; none when it has no closing ']' (the '[' is then itself).
std::optional<Step> set(std::string_view p, std::size_t at, unsigned char c) {
  ++at;
  const bool negate = at < p.size() && (p[at] == '!' || p[at] == '^');
  if (negate) ++at;
  bool hit = false;
  for (bool first = true; at < p.size() && (first || p[at] != ']'); first = false) {
    if (p.compare(at, 2, "[:") == 0) {
      if (auto end = p.find(":]", at + 2); end != std::string_view::npos) {
        hit |= in_class(p.substr(at + 2, end - at - 2), c);
        at = end + 2;
        continue;
      }
    }
    const auto low = member(p, at);
    if (!low) return std::nullopt;
    at = low->second;
    if (at + 1 < p.size() && p[at] == '-' && p[at + 1] != ']') {  // a range low-high
      const auto high = member(p, at + 1);
      if (!high) return std::nullopt;
      hit |= low->first <= c && c <= high->first;
      at = high->second;
    } else {
      hit |= low->first == c;
    }
  }
  if (at >= p.size()) return std::nullopt;
  return Step{at + 1, hit != negate};
}

// The element at p[at] (not '*') against the character c.
Step step(std::string_view p, std::size_t at, char c) {
  switch (p[at]) {
    case '?':
      return {at + 1, true};
    case '\\':  // an escape: the next character itself; a lone one at the end matches nothing
      return at + 1 < p.size() ? Step{at + 2, p[at + 1] == c} : Step{p.size(), false};
    case '[':
      if (auto s = set(p, at, static_cast<unsigned char>(c))) return *s;
      return {at + 1, c == '['};
    default:
      return {at + 1, p[at] == c};
  }
}

}  // namespace

bool glob_match(std::string_view p, std::string_view t) {
  // Every element but '*' matches one character, so one backtracking point (after the last '*')
  // suffices: linear for most inputs, at worst pattern x text.
  std::size_t pi = 0, ti = 0, star = std::string_view::npos, mark = 0;
  while (ti < t.size()) {
    if (pi < p.size() && p[pi] == '*') {
      star = ++pi;
      mark = ti;
      continue;
    }
    if (pi < p.size()) {
      if (const auto s = step(p, pi, t[ti]); s.match) {
        pi = s.next, ++ti;
        continue;
      }
    }
    if (star == std::string_view::npos) return false;
    pi = star;
    ti = ++mark;
  }
  while (pi < p.size() && p[pi] == '*') ++pi;
  return pi == p.size();
}

}  // namespace cubescale::measure
