#pragma once
// One step cut into chunks that run at once, a thread each (the calling thread takes the first):
// [0, n) cut into contiguous ranges of about equal weight. An error comes out as one thread
// doing the chunks in order would meet it: the earliest chunk's (a later chunk's work is then
// wasted, never half-kept: each writes only what it owns, and the caller drops it all).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <thread>
#include <vector>

namespace cubescale {

// How a step is cut: into `threads` chunks at most, each of `least` weight at least (the
// records a chunk takes: below that a thread of its own costs more than it saves; tests make
// it small to cut small traces).
struct Chunking {
  std::size_t threads = 1;
  std::uint64_t least = std::uint64_t(1) << 16;
};
constexpr std::size_t kMostChunks = 256;  // a thread each: whatever `threads` asks

// Boundaries of contiguous ranges of [0, weights.size()) as `how` cuts them, each of about the
// total weight / chunks and never empty; front() is 0 and back() weights.size() (one range
// for a small step).
inline std::vector<std::size_t> chunk_bounds(const std::vector<std::uint64_t>& weights, const Chunking& how) {
  std::uint64_t total = 0;
  for (auto w : weights) total += w;
  const std::size_t chunks = std::min<std::uint64_t>(
      {how.threads, kMostChunks, weights.size(), total / std::max<std::uint64_t>(how.least, 1)});
  std::vector<std::size_t> bounds{0};
  std::uint64_t sum = 0;
  for (std::size_t i = 0; i < weights.size() && bounds.size() < chunks; ++i) {
    sum += weights[i];
    // the chunk ends where the running sum reaches its share of the total
    if (sum * chunks >= total * bounds.size() && i + 1 < weights.size()) bounds.push_back(i + 1);
  }
  bounds.push_back(weights.size());
  return bounds;
}

// fn(chunk, begin, end) for each range of `bounds` (chunk_bounds'), at once.
template <typename Fn>
void run_chunks(const std::vector<std::size_t>& bounds, Fn&& fn) {
  const std::size_t chunks = bounds.empty() ? 0 : bounds.size() - 1;
  std::vector<std::exception_ptr> failed(chunks);
  auto run = [&](std::size_t k) {
    try {
      fn(k, bounds[k], bounds[k + 1]);
    } catch (...) {
      failed[k] = std::current_exception();
    }
  };
  std::vector<std::thread> threads;
  std::size_t started = 1;
  try {
    threads.reserve(chunks);
    for (; started < chunks; ++started) threads.emplace_back(run, started);
  } catch (...) {  // no thread (or no memory for one) to be had: the rest in turn here
    for (std::size_t k = started; k < chunks; ++k) run(k);
  }
  if (chunks > 0) run(0);
  for (auto& t : threads) t.join();
  for (const auto& e : failed)
    if (e) std::rethrow_exception(e);
}

}  // namespace cubescale
