#pragma once
// Thread aggregation (paper 003): with hundreds of threads per process, the per-thread columns
// dominate a report. Each strategy replaces a process's threads by a few locations and keeps
// what a user still needs to find problems:
//   SUM       one location "aggregated threads" + metric num_threads (threads that visited);
//   SET       one location whose every value is a TAU_ATOMIC tuple (N, min, max, sum, sum of
//             squares) over the threads, N = threads that visited the call path;
//   KEY       "master thread", "fastest thread", "slowest thread", "aggregated worker threads":
//             fastest/slowest by work (time outside synchronization regions), both always
//             kept (Score-P's `if ... else if` loses one when one thread sets both extremes);
//   CALLTREE  one location "cluster i" per set of threads with the same visited call paths,
//             + num_threads;
//   VALUE     one "cluster i" per group of threads with similar per-call-path work profiles
//             (deterministic farthest-first seeding + Lloyd iterations, bounded count),
//             + num_threads.
// Everything is per process, without communication, and one pass over the values per metric:
// a strategy only decides which threads form which output location (grouping.hpp); the
// kernels (combine.hpp) then fold the member columns of every output location.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace cubescale::threads {

enum class Strategy : std::uint8_t { Sum, Set, Key, Calltree, Value };

// "sum", "set", "key", "calltree", "value" (Score-P's spellings thread_sum, thread_tuple,
// key_threads and cluster_threads are accepted too); nullopt for anything else.
std::optional<Strategy> parse_strategy(std::string_view name);
const char* strategy_name(Strategy s);

struct Options {
  Strategy strategy = Strategy::Sum;
  // Metric whose time is work or waiting (KEY, VALUE); nullopt: "time", else the first
  // stored scalar metric with unit "sec".
  std::optional<std::size_t> work_metric;
  // Per region: 1 when the region is synchronization / idling / waiting (not work). Empty:
  // the default classification of synchronization.hpp.
  std::vector<std::uint8_t> synchronization;
  std::size_t max_clusters = 8;  // VALUE: at most this many clusters per process
  // VALUE: a thread farther than tolerance x (largest thread profile norm) from every cluster
  // center opens a new cluster.
  double tolerance = 0.1;
};

// Names of the aggregated locations and of the thread-count metric, as Score-P writes them.
inline constexpr std::string_view kAggregatedThreads = "aggregated threads";
inline constexpr std::string_view kMasterThread = "master thread";
inline constexpr std::string_view kFastestThread = "fastest thread";
inline constexpr std::string_view kSlowestThread = "slowest thread";
inline constexpr std::string_view kAggregatedWorkers = "aggregated worker threads";
inline constexpr std::string_view kClusterPrefix = "cluster ";
inline constexpr std::string_view kThreadCountMetric = "num_threads";

}  // namespace cubescale::threads
