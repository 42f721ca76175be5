#pragma once
// Independent work split over the cores: rows of a matrix, processes of a report. Each part
// runs body(begin, end) on its own thread; the first exception (by part) is rethrown once
// all parts have joined, so no thread outlives the call.
#include <algorithm>
#include <cstddef>
#include <exception>
#include <thread>
#include <vector>

namespace cubescale::threads {

// Calls body over [0, count) in one part when `small`, else in one part per core (up to 8).
template <class Body>
void over_ranges(std::size_t count, bool small, Body&& body) {
  const unsigned cores = std::min(8u, std::max(1u, std::thread::hardware_concurrency()));
  const std::size_t parts = small ? 1 : std::min<std::size_t>(cores, count);
  if (parts <= 1) return body(std::size_t(0), count);
  std::vector<std::thread> workers;
  std::vector<std::exception_ptr> errors(parts);
  for (std::size_t k = 0; k < parts; ++k)
    workers.emplace_back([&, k] {
      try {
        body(count * k / parts, count * (k + 1) / parts);
      } catch (...) {
        errors[k] = std::current_exception();
      }
    });
  for (auto& w : workers) w.join();
  for (auto& e : errors)
    if (e) std::rethrow_exception(e);
}

}  // namespace cubescale::threads
