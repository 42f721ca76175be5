#pragma once
// Region filters in Score-P's filter-file syntax (the region-name block):
//   SCOREP_REGION_NAMES_BEGIN
//     EXCLUDE *
//     INCLUDE main solve_*
//   SCOREP_REGION_NAMES_END
// Rules apply in order and the last one that matches a name decides (no match: included);
// patterns are shell globs (* any run, ? one character, [...] a set), "#" starts a comment,
// MANGLED / DEMANGLED keywords and the file-name block are accepted and ignored.
#include <string>
#include <string_view>
#include <vector>

namespace cubescale::measure {

class RegionFilter {
 public:
  RegionFilter() = default;
  // Throws std::invalid_argument naming the line of a rule outside a block or an unknown word.
  static RegionFilter parse(std::string_view text);
  void exclude(std::string pattern) { rules_.push_back({false, std::move(pattern)}); }
  void include(std::string pattern) { rules_.push_back({true, std::move(pattern)}); }
  bool included(std::string_view name) const;
  bool empty() const { return rules_.empty(); }

 private:
  struct Rule {
    bool include;
    std::string pattern;
  };
  std::vector<Rule> rules_;
};

// Shell-style glob match (*, ?, [abc], [a-z], [!abc]).
bool glob_match(std::string_view pattern, std::string_view text);

}  // namespace cubescale::measure
