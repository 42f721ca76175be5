#pragma once
// The recorder's clock. Reading steady_clock costs ~20 ns (clock_gettime through the vDSO),
// twice per enter/exit pair; the CPU's time-stamp counter costs a few. Where the counter is
// invariant (x86-64 CPUs that report constant_tsc and nonstop_tsc: it ticks at a fixed rate in
// every power state and on every core), timestamps are counter ticks, and durations are turned
// into seconds once, at finalization, by a factor calibrated against steady_clock since the
// first use. Elsewhere ticks are steady_clock nanoseconds.
#include <chrono>
#include <cstdint>

#if defined(__x86_64__) || defined(_M_X64)
#include <x86intrin.h>
#define CUBESCALE_HAVE_TSC 1
#endif

namespace cubescale::measure {

// Whether ticks are time-stamp-counter ticks (decided once, from /proc/cpuinfo's flags).
bool ticks_are_tsc();

inline std::int64_t steady_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

inline std::int64_t now_ticks() {
#ifdef CUBESCALE_HAVE_TSC
  static const bool tsc = ticks_are_tsc();
  if (tsc) return static_cast<std::int64_t>(__rdtsc());
#endif
  return steady_ns();
}

// Seconds per tick: 1e-9 for steady_clock ticks; for the counter, measured against
// steady_clock over the time since the first call (at least 20 ms: the first call spins).
double seconds_per_tick();

}  // namespace cubescale::measure
