#pragma once
// Synthetic OTF2 traces with a hardware hierarchy and counters whose rates are known, for
// testing trace metrics (paper 004): machine > nodes > packages (sockets) > cores, plus GPUs
// per node. Every core is a CPU-thread location of its node's process and records a FLOP
// counter (a metric class, ACCUMULATED_START, recorded by itself); every package and GPU has
// an energy counter in microjoules (a metric instance scoped to its system-tree node, recorded
// by the node's first core), as Score-P records RAPL and GPU sensors. Counters grow at constant
// integer rates and are sampled every 1 / samples_per_second seconds (which must divide 1000
// and the FLOP rate): every sample is exact, so expressions over them have analytic values
// (energy per FLOP in uJ per FLOP = 1e6 x watts / FLOP rate).
#include <cstdint>
#include <string>

namespace cubescale::timeline {

struct SyntheticMachine {
  std::uint32_t nodes = 2, packages_per_node = 2, cores_per_package = 4, gpus_per_node = 1;
  std::uint32_t seconds = 60, samples_per_second = 1;
  std::uint64_t ticks_per_second = 1000000000;  // the trace's timer resolution
  // Rates: package p (counting over the machine) draws package_watts + p * package_watts_step W,
  // GPU g gpu_watts + g * gpu_watts_step W, core c runs (c + 1) * core_flops FLOP/s.
  std::uint64_t package_watts = 40, package_watts_step = 5, gpu_watts = 200, gpu_watts_step = 50;
  std::uint64_t core_flops = 1000;
};

// Writes the archive `directory`/`name`.otf2 (+ its definition and event files); returns the
// anchor file's path. Throws std::runtime_error naming the OTF2 call that failed.
std::string write_synthetic_trace(const std::string& directory, const std::string& name, const SyntheticMachine& m);

}  // namespace cubescale::timeline
