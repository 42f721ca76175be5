#pragma once
// How a strategy groups one process's threads into output locations. Every strategy except
// SET is "partition the threads, fold each part": SUM one part, KEY four (the master, the
// fastest and the slowest worker alone, the other workers together), CALLTREE and VALUE one
// per cluster. Deterministic: the result depends on the values only, never on timing or
// memory addresses; ties go to the lower thread index.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "cubescale/threads/strategy.hpp"

namespace cubescale::threads {

// One process's threads as the strategies see them. Threads are numbered 0 .. threads-1 in
// the process's order (0 is the master thread); matrices are [thread][cnode].
struct ThreadProfiles {
  std::size_t threads = 0, cnodes = 0;
  std::vector<std::uint8_t> visited;  // 1 where the thread visited the call path
  // Exclusive values of the work metric (time) per call path, for KEY and VALUE; else empty.
  std::vector<double> time;
  // KEY: each thread's work (time outside synchronization); empty: computed from `time`.
  std::vector<double> work;
  const std::uint8_t* visited_row(std::size_t t) const { return visited.data() + t * cnodes; }
  const double* time_row(std::size_t t) const { return time.data() + t * cnodes; }
};

// An output location: its name, its <rank> in the report and the threads folded into it.
struct ThreadGroup {
  std::string name;
  std::int64_t rank = 0;
  std::vector<std::uint32_t> members;  // thread numbers (0 .. threads-1), ascending
};

// Work of every thread: its exclusive time summed over the call paths that are work
// (`is_work[c]`, 1 for work).
std::vector<double> thread_work(const ThreadProfiles& p, const std::vector<std::uint8_t>& is_work);

// The groups of a strategy other than SET (SET keeps one group of all threads, as SUM).
// KEY with one worker thread records it once, as the slowest thread; with none, only the
// master. `thread_ranks` are the threads' own <rank> values: a group of one thread keeps its
// thread's rank (Cube shows which thread was the fastest), an aggregate gets its position.
std::vector<ThreadGroup> group_threads(const ThreadProfiles& p, const Options& options,
                                       const std::vector<std::uint8_t>& is_work,
                                       const std::vector<std::int64_t>& thread_ranks);

// The parts on their own (for tests and other drivers).
std::vector<ThreadGroup> key_groups(const std::vector<double>& work, const std::vector<std::int64_t>& thread_ranks);
std::vector<ThreadGroup> calltree_groups(const ThreadProfiles& p);
std::vector<ThreadGroup> value_groups(const ThreadProfiles& p, std::size_t max_clusters, double tolerance);

}  // namespace cubescale::threads
