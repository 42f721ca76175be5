#include "cubescale/measure/filter.hpp"

#include <sstream>
#include <stdexcept>

namespace cubescale::measure {

bool glob_match(std::string_view p, std::string_view t) {
  // Iterative matching with one backtracking point for the last '*' (linear for most inputs).
  std::size_t pi = 0, ti = 0, star = std::string_view::npos, mark = 0;
  auto set_match = [&](std::size_t& at, char c) {  // at points after '['; returns match, moves past ']'
    bool negate = at < p.size() && (p[at] == '!' || p[at] == '^');
    if (negate) ++at;
    bool hit = false, first = true;
    while (at < p.size() && (first || p[at] != ']')) {
      first = false;
      if (at + 2 < p.size() && p[at + 1] == '-' && p[at + 2] != ']') {
        hit |= p[at] <= c && c <= p[at + 2];
        at += 3;
      } else {
        hit |= p[at] == c;
        ++at;
      }
    }
    if (at < p.size()) ++at;  // the ']'
    return hit != negate;
  };
  while (ti < t.size()) {
    if (pi < p.size() && p[pi] == '*') {
      star = pi++;
      mark = ti;
      continue;
    }
    if (pi < p.size() && p[pi] == '[' && p.find(']', pi + 2) != std::string_view::npos) {
      std::size_t at = pi + 1;
      if (set_match(at, t[ti])) {
        pi = at, ++ti;
        continue;
      }
    } else if (pi < p.size() && (p[pi] == '?' || p[pi] == t[ti])) {
      ++pi, ++ti;
      continue;
    }
    if (star == std::string_view::npos) return false;
    pi = star + 1;
    ti = ++mark;
  }
  while (pi < p.size() && p[pi] == '*') ++pi;
  return pi == p.size();
}

bool RegionFilter::decide(const std::vector<Rule>& rules, std::string_view text) {
  bool in = true;
  for (const auto& r : rules)
    if (glob_match(r.pattern, text)) in = r.include;
  return in;
}

bool RegionFilter::included(std::string_view name, std::string_view file) const {
  if (!file.empty() && !decide(file_rules_, file)) return false;
  return decide(rules_, name);
}

RegionFilter RegionFilter::parse(std::string_view text) {
  RegionFilter f;
  std::istringstream lines{std::string(text)};
  std::string line;
  int number = 0;
  enum { Outside, Regions, Files } block = Outside;
  // A rule lasts until the next INCLUDE/EXCLUDE or the block's end, across line breaks, as
  // Score-P reads it ("EXCLUDE" on one line, a name per line below it).
  bool include = false, in_rule = false;
  while (std::getline(lines, line)) {
    ++number;
    if (auto hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    std::istringstream words(line);
    std::string word;
    while (words >> word) {
      if (word == "SCOREP_REGION_NAMES_BEGIN") block = Regions, in_rule = false;
      else if (word == "SCOREP_FILE_NAMES_BEGIN") block = Files, in_rule = false;
      else if (word == "SCOREP_REGION_NAMES_END" || word == "SCOREP_FILE_NAMES_END") block = Outside, in_rule = false;
      else if (word == "EXCLUDE" || word == "INCLUDE") {
        if (block == Outside)
          throw std::invalid_argument("filter line " + std::to_string(number) + ": " + word + " outside a block");
        include = word == "INCLUDE", in_rule = true;
      } else if (word == "MANGLED" || word == "DEMANGLED") {
        continue;
      } else if (in_rule) {
        if (block == Regions) (include ? f.include(word) : f.exclude(word));
        else (include ? f.include_file(word) : f.exclude_file(word));
      } else {
        throw std::invalid_argument("filter line " + std::to_string(number) + ": unexpected '" + word + "'");
      }
    }
  }
  return f;
}

}  // namespace cubescale::measure
