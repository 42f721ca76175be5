// The C++ side of benchmarks/measure_overhead.py: ns per enter/exit pair of the recorder
// through the RAII scope, the C API, and an empty loop, for a call path that exists (the hot
// path) in a small tree (3 regions nested). Prints one JSON line.
#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "cubescale/measure/c_api.h"
#include "cubescale/measure/scope.hpp"

using namespace cubescale::measure;
using Clock = std::chrono::steady_clock;

namespace {
volatile long sink = 0;

double ns_per(long n, Clock::duration d) { return std::chrono::duration<double, std::nano>(d).count() / double(n); }
}  // namespace

int main(int argc, char** argv) {
  const long n = argc > 1 ? std::atol(argv[1]) : 10000000;
  const auto outer = global().region("outer"), inner = global().region("inner");
  auto t0 = Clock::now();
  for (long i = 0; i < n; ++i) sink = sink + i;
  const double empty = ns_per(n, Clock::now() - t0);
  Scope top(outer);
  t0 = Clock::now();
  for (long i = 0; i < n; ++i) {
    Scope s(inner);
    sink = sink + i;
  }
  const double scope = ns_per(n, Clock::now() - t0) - empty;
  t0 = Clock::now();
  for (long i = 0; i < n; ++i) {
    cubescale_enter(inner);
    sink = sink + i;
    cubescale_exit();
  }
  const double c_api = ns_per(n, Clock::now() - t0) - empty;
  std::printf("{\"calls\": %ld, \"scope_ns\": %.2f, \"c_api_ns\": %.2f, \"memory_bytes\": %zu}\n", n, scope, c_api,
              global().memory_bytes());
  return 0;
}
