#include "cubescale/measure/filter.hpp"

#include <sstream>
#include <stdexcept>

namespace cubescale::measure {

namespace {

[[noreturn]] void fail(int line, const std::string& what) {
  throw std::invalid_argument("filter line " + std::to_string(line) + ": " + what);
}

bool escaped(std::string_view line, std::size_t at) { return at > 0 && line[at - 1] == '\\'; }

// The words of a line as Score-P splits them: the text before the first '#' no backslash
// precedes, cut at blanks no backslash precedes. The backslashes stay: the matcher reads them.
std::vector<std::string> words(std::string_view line, int number) {
  for (std::size_t at = line.find('#'); at != std::string_view::npos; at = line.find('#', at + 1))
    if (!escaped(line, at)) {
      line = line.substr(0, at);
      break;
    }
  while (!line.empty() && (line.back() == '\r' || line.back() == '\n')) line.remove_suffix(1);
  if (!line.empty() && line.back() == '\\') fail(number, "a backslash at the end of a line (escaped line break) is not supported");
  std::vector<std::string> out;
  std::size_t start = 0;
  for (std::size_t at = 0; at <= line.size(); ++at) {
    if (at < line.size() && !((line[at] == ' ' || line[at] == '\t') && !escaped(line, at))) continue;
    if (at > start) out.emplace_back(line.substr(start, at - start));
    start = at + 1;
  }
  return out;
}

// The reading state: which block, which rule, where the block began.
struct Reader {
  enum Block { Outside, Regions, Files } block = Outside;
  std::string block_word;
  int block_line = 0;
  enum Rule { None, Exclude, Include } rule = None;
  bool mangled = false;

  void begin(Block b, const std::string& word, int line) {
    if (block != Outside) fail(line, word + " inside the " + block_word + " block of line " + std::to_string(block_line));
    block = b, block_word = word, block_line = line, rule = None, mangled = false;
  }
  void end(Block b, const std::string& word, int line) {
    if (block != b) fail(line, word + " without " + (b == Regions ? "SCOREP_REGION_NAMES_BEGIN" : "SCOREP_FILE_NAMES_BEGIN"));
    block = Outside, rule = None, mangled = false;
  }
  void start_rule(Rule r, const std::string& word, int line) {
    if (block == Outside) fail(line, word + " outside a block");
    rule = r, mangled = false;
  }
  void set_mangled(bool on, const std::string& word, int line) {
    if (block != Regions || rule == None) fail(line, word + " only after EXCLUDE or INCLUDE in a SCOREP_REGION_NAMES block");
    mangled = on;
  }
  void pattern(RegionFilter& f, std::string word, int line) const {
    if (rule == None) fail(line, "unexpected '" + word + "': a pattern belongs after EXCLUDE or INCLUDE inside a block");
    if (block == Regions) (rule == Include ? f.include(std::move(word), mangled) : f.exclude(std::move(word), mangled));
    else (rule == Include ? f.include_file(std::move(word)) : f.exclude_file(std::move(word)));
  }
  void word(RegionFilter& f, std::string w, int line) {
    if (w == "SCOREP_REGION_NAMES_BEGIN") begin(Regions, w, line);
    else if (w == "SCOREP_FILE_NAMES_BEGIN") begin(Files, w, line);
    else if (w == "SCOREP_REGION_NAMES_END") end(Regions, w, line);
    else if (w == "SCOREP_FILE_NAMES_END") end(Files, w, line);
    else if (w == "EXCLUDE") start_rule(Exclude, w, line);
    else if (w == "INCLUDE") start_rule(Include, w, line);
    else if (w == "MANGLED") set_mangled(true, w, line);
    else if (w == "DEMANGLED") set_mangled(false, w, line);
    else pattern(f, std::move(w), line);
  }
};

}  // namespace

bool RegionFilter::decide(const std::vector<Rule>& rules, std::string_view name, std::string_view mangled) {
  bool in = true;
  for (const auto& r : rules)
    if (glob_match(r.pattern, r.mangled && !mangled.empty() ? mangled : name)) in = r.include;
  return in;
}

bool RegionFilter::included(const RegionNames& region) const {
  if (region.file && !decide(file_rules_, *region.file, {})) return false;
  return decide(rules_, region.name, region.mangled);
}

RegionFilter RegionFilter::parse(std::string_view text) {
  RegionFilter f;
  Reader reader;
  std::istringstream lines{std::string(text)};
  std::string line;
  int number = 0;
  while (std::getline(lines, line)) {
    ++number;
    for (auto& w : words(line, number)) reader.word(f, std::move(w), number);
  }
  if (reader.block != Reader::Outside)
    fail(reader.block_line, reader.block_word + " without its " +
                                (reader.block == Reader::Regions ? "SCOREP_REGION_NAMES_END" : "SCOREP_FILE_NAMES_END"));
  return f;
}

}  // namespace cubescale::measure
