#pragma once
// Two independent steps at once: `second` on a thread of its own, `first` on the calling one.
// An error comes out as one thread doing them in order would meet it: first's before second's
// (second's work is then wasted, never half-kept: it holds only what it writes itself).
#include <exception>
#include <system_error>
#include <thread>
#include <utility>

namespace cubescale {

template <typename First, typename Second>
void run_both(bool at_once, First&& first, Second&& second) {
  if (!at_once) {
    first();
    second();
    return;
  }
  std::exception_ptr second_failed;
  std::thread other;
  try {
    other = std::thread([&] {
      try {
        second();
      } catch (...) {
        second_failed = std::current_exception();
      }
    });
  } catch (const std::system_error&) {  // no thread to be had: in order here
    first();
    second();
    return;
  }
  std::exception_ptr first_failed;
  try {
    first();
  } catch (...) {
    first_failed = std::current_exception();
  }
  other.join();
  if (first_failed) std::rethrow_exception(first_failed);
  if (second_failed) std::rethrow_exception(second_failed);
}

}  // namespace cubescale
