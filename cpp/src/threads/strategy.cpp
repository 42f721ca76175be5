#include "cubescale/threads/strategy.hpp"

#include <algorithm>
#include <cctype>
#include <string>

namespace cubescale::threads {

std::optional<Strategy> parse_strategy(std::string_view name) {
  std::string s(name);
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  if (s == "sum" || s == "thread_sum") return Strategy::Sum;
  if (s == "set" || s == "thread_tuple" || s == "tuple") return Strategy::Set;
  if (s == "key" || s == "key_threads") return Strategy::Key;
  if (s == "calltree" || s == "cluster_threads") return Strategy::Calltree;
  if (s == "value") return Strategy::Value;
  return std::nullopt;
}

const char* strategy_name(Strategy s) {
  switch (s) {
    case Strategy::Sum: return "sum";
    case Strategy::Set: return "set";
    case Strategy::Key: return "key";
    case Strategy::Calltree: return "calltree";
    case Strategy::Value: return "value";
  }
  return "?";
}

}  // namespace cubescale::threads
