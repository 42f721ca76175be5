#include "cubescale/measure/clock.hpp"

#include <fstream>
#include <string>

namespace cubescale::measure {

bool ticks_are_tsc() {
#ifdef CUBESCALE_HAVE_TSC
  static const bool invariant = [] {
    std::ifstream cpuinfo("/proc/cpuinfo");
    std::string line;
    while (std::getline(cpuinfo, line))
      if (line.rfind("flags", 0) == 0)
        return line.find(" constant_tsc") != std::string::npos && line.find(" nonstop_tsc") != std::string::npos;
    return false;
  }();
  return invariant;
#else
  return false;
#endif
}

namespace {
struct Calibration {
  std::int64_t ticks = now_ticks(), ns = steady_ns();
};
Calibration& start() {
  static Calibration c;
  return c;
}
// Starts the calibration when the library loads, so that finalization rarely has to wait.
const bool started = (start(), true);
}  // namespace

double seconds_per_tick() {
  if (!ticks_are_tsc()) return 1e-9;
  const auto& s = start();
  std::int64_t ticks = now_ticks(), ns = steady_ns();
  while (ns - s.ns < 20'000'000) ticks = now_ticks(), ns = steady_ns();  // at least 20 ms of both clocks
  return ticks > s.ticks ? double(ns - s.ns) * 1e-9 / double(ticks - s.ticks) : 1e-9;
}

}  // namespace cubescale::measure
