#pragma once
// Synthetic OTF2 traces written with OTF2's writer API: a ring of MPI processes iterating
// solve > {compute, MPI_Send, MPI_Recv, MPI_Allreduce} with PAPI-like counters, of any size
// (benchmarks need traces of 50 M events and more; tests need defects real traces lack).
#include <cstdint>
#include <string>

namespace cubescale::trace {

struct SyntheticTrace {
  std::uint32_t processes = 4;
  std::uint64_t iterations = 1000;  // per process; 18 events each (14 without counters)
  bool counters = true;             // 2 accumulated counters on solve and compute
  // "" (a correct trace), "unclosed" (main is never left), "mismatched_leave" (rank 0 leaves
  // compute as solve in its last iteration).
  std::string defect;
};

// Writes `<directory>/<name>.otf2` (+ .def and the event files); returns the events written.
std::uint64_t write_synthetic_trace(const std::string& directory, const std::string& name, const SyntheticTrace& spec);

}  // namespace cubescale::trace
