#pragma once
// Work over a metric's matrix split along the location axis, one slice per thread.
//
// Every kernel over a [cnode][location] matrix (inclusive <-> exclusive, per-cnode totals,
// one cnode's subtree row) is bound by memory bandwidth, and for fresh output also by the
// page faults the kernel pays on first touch; both grow with the cores that work. Slicing the
// location axis (not the cnode axis) keeps every thread busy whatever the shape, even a
// report with one call path and millions of locations, and lets each slice walk the call
// tree in the same order as one thread would. Slices start on page boundaries of a row, so
// that threads never share a page of output.
#include <algorithm>
#include <cstddef>
#include <exception>
#include <system_error>
#include <thread>
#include <vector>

namespace cubescale::cube {

// How many threads a kernel uses: kAutomaticThreads picks one per core (up to
// kMaxSliceThreads) when the kernel touches at least kThreadedFromBytes, else one.
constexpr unsigned kAutomaticThreads = 0;
constexpr unsigned kMaxSliceThreads = 8;
constexpr std::size_t kThreadedFromBytes = std::size_t(64) << 20;

// Calls body(first, count) for slices [first, first + count) of `locations` values of `width`
// bytes each, on several threads when `threads` asks for it (or, automatically, when the
// kernel touches `work_bytes` >= kThreadedFromBytes). Slices are disjoint and cover the axis;
// with one thread, or no locations, body(0, locations) runs on the calling thread. An
// exception in any slice is rethrown (the first, by slice order) once all have joined.
template <class Body>
void over_location_slices(std::size_t locations, std::size_t width, std::size_t work_bytes, unsigned threads,
                          Body&& body) {
  if (locations == 0 || width == 0) return body(std::size_t(0), locations);
  if (threads == kAutomaticThreads)
    threads = work_bytes >= kThreadedFromBytes ? std::min(std::max(1u, std::thread::hardware_concurrency()), kMaxSliceThreads)
                                               : 1;
  const std::size_t per_page = std::max<std::size_t>(1, 4096 / width);
  threads = static_cast<unsigned>(std::min<std::size_t>(threads, (locations + per_page - 1) / per_page));
  if (threads <= 1) return body(std::size_t(0), locations);
  const std::size_t per_thread = (locations + threads - 1) / threads;
  const std::size_t step = (per_thread + per_page - 1) / per_page * per_page;
  // An exception must not leave a worker (that would terminate the process): each slice keeps
  // its own, and the first is rethrown once all have joined.
  std::vector<std::exception_ptr> errors((locations + step - 1) / step);
  auto slice = [&body, &errors, step, locations](std::size_t first) {
    try {
      body(first, std::min(step, locations - first));
    } catch (...) {
      errors[first / step] = std::current_exception();
    }
  };
  std::vector<std::thread> workers;
  std::size_t first = step;
  try {
    for (; first < locations; first += step) workers.emplace_back(slice, first);
  } catch (const std::system_error&) {
    // No more threads (process or cgroup limit): the slices left run here.
    for (; first < locations; first += step) slice(first);
  }
  slice(0);
  for (auto& w : workers) w.join();
  for (const auto& e : errors)
    if (e) std::rethrow_exception(e);
}

}  // namespace cubescale::cube
