#pragma once
// Region filters in Score-P's filter-file syntax, read and matched as Score-P does:
//   SCOREP_FILE_NAMES_BEGIN
//     EXCLUDE */lib/python3*
//   SCOREP_FILE_NAMES_END
//   SCOREP_REGION_NAMES_BEGIN
//     EXCLUDE *
//     INCLUDE main solve_* void\ usage()
//     EXCLUDE MANGLED _Z5usagev
//   SCOREP_REGION_NAMES_END
// Words are separated by blanks that no backslash precedes; a "#" that no backslash precedes
// starts a comment; a rule lasts from EXCLUDE/INCLUDE to the next one or the block's end, across
// lines. Patterns are fnmatch globs (glob.hpp), case-sensitive, their backslashes escapes.
// MANGLED makes the rule's further patterns match the region's mangled name (its name when it has
// none, as Score-P), DEMANGLED switches back. Within each block the last matching rule decides
// (no match: included); a region is recorded when neither its source file nor its name is
// excluded. Stricter than Score-P, a block without its END is an error (Score-P keeps the rules).
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cubescale/measure/glob.hpp"

namespace cubescale::measure {

// What Score-P matches a region by.
struct RegionNames {
  std::string_view name;
  std::string_view mangled;               // empty: none, MANGLED rules match `name`
  std::optional<std::string_view> file;  // none: the file rules do not apply
};

class RegionFilter {
 public:
  RegionFilter() = default;
  // Throws std::invalid_argument, one line naming the filter line, for a syntax error.
  static RegionFilter parse(std::string_view text);
  void exclude(std::string pattern, bool mangled = false) { rules_.push_back({false, mangled, std::move(pattern)}); }
  void include(std::string pattern, bool mangled = false) { rules_.push_back({true, mangled, std::move(pattern)}); }
  void exclude_file(std::string pattern) { file_rules_.push_back({false, false, std::move(pattern)}); }
  void include_file(std::string pattern) { file_rules_.push_back({true, false, std::move(pattern)}); }
  bool included(const RegionNames& region) const;
  // `file` empty: the region has no source file (Score-P's runtime then skips the file rules).
  bool included(std::string_view name, std::string_view file = {}) const {
    return included(RegionNames{name, {}, file.empty() ? std::nullopt : std::optional(file)});
  }
  bool empty() const { return rules_.empty() && file_rules_.empty(); }

 private:
  struct Rule {
    bool include;
    bool mangled;
    std::string pattern;
  };
  static bool decide(const std::vector<Rule>& rules, std::string_view name, std::string_view mangled);
  std::vector<Rule> rules_, file_rules_;
};

}  // namespace cubescale::measure
