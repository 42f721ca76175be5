#pragma once
// Region filters in Score-P's filter-file syntax:
//   SCOREP_FILE_NAMES_BEGIN
//     EXCLUDE */lib/python3*
//   SCOREP_FILE_NAMES_END
//   SCOREP_REGION_NAMES_BEGIN
//     EXCLUDE *
//     INCLUDE main solve_*
//   SCOREP_REGION_NAMES_END
// Within each block, rules apply in order and the last one that matches decides (no match:
// included). A region is recorded when neither its source file (if it has one) nor its name is
// excluded, as in Score-P. Patterns are shell globs (* any run, ? one character, [...] a set),
// "#" starts a comment, the MANGLED / DEMANGLED keywords are accepted and ignored (regions here
// have one name).
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
  void exclude_file(std::string pattern) { file_rules_.push_back({false, std::move(pattern)}); }
  void include_file(std::string pattern) { file_rules_.push_back({true, std::move(pattern)}); }
  // `file` empty: the region has no source file, only its name is matched.
  bool included(std::string_view name, std::string_view file = {}) const;
  bool empty() const { return rules_.empty() && file_rules_.empty(); }

 private:
  struct Rule {
    bool include;
    std::string pattern;
  };
  static bool decide(const std::vector<Rule>& rules, std::string_view text);
  std::vector<Rule> rules_, file_rules_;
};

// Shell-style glob match (*, ?, [abc], [a-z], [!abc]).
bool glob_match(std::string_view pattern, std::string_view text);

}  // namespace cubescale::measure
