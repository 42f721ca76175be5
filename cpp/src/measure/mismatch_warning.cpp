#include "cubescale/measure/mismatch_warning.hpp"

#include <cstdint>
#include <functional>
#include <vector>

namespace cubescale::measure {

namespace {

// "N <what>s (thread a, thread b) <verb>" over the threads where count() is not 0; names
// beyond the fourth are summed up, so that the line stays one line with many threads.
std::string clause(const std::vector<const ThreadRecorder*>& threads,
                   const std::function<std::uint64_t(const ThreadRecorder&)>& count, const char* one,
                   const char* many, const char* verb_one, const char* verb_many) {
  std::uint64_t total = 0;
  std::string names;
  std::size_t named = 0, unnamed = 0;
  for (const auto* t : threads) {
    const auto n = count(*t);
    if (n == 0) continue;
    total += n;
    if (named == 4) {
      ++unnamed;
      continue;
    }
    names += (named++ ? ", " : "") + t->name();
  }
  if (total == 0) return "";
  if (unnamed) names += " and " + std::to_string(unnamed) + " more threads";
  return std::to_string(total) + " " + (total == 1 ? one : many) + " (" + names + ") " +
         (total == 1 ? verb_one : verb_many);
}

}  // namespace

std::string mismatch_warning(const Recorder& recorder) {
  const auto threads = recorder.threads();
  const std::string parts[] = {
      clause(threads, [](const ThreadRecorder& t) { return t.unmatched_exits(); }, "exit without an enter",
             "exits without an enter", "was ignored", "were ignored"),
      clause(threads, [](const ThreadRecorder& t) { return t.unknown_enters(); },
             "enter of an unknown region id", "enters of unknown region ids",
             "was ignored", "were ignored"),
      clause(threads, [](const ThreadRecorder& t) { return std::uint64_t(t.depth()); }, "region still open",
             "regions still open", "is not in the report (only completed calls are written)",
             "are not in the report (only completed calls are written)"),
  };
  std::string out;
  for (const auto& p : parts)
    if (!p.empty()) out += (out.empty() ? "" : "; ") + p;
  return out;
}

}  // namespace cubescale::measure
