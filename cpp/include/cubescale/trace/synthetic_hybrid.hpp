#pragma once
// Synthetic hybrid (MPI + OpenMP) traces with stated timings, written with OTF2's writer: every
// process (MPI rank) has the same number of threads; its master thread runs main and in it the
// rank's MPI calls and parallel regions, interleaved in time order, so that a test can state
// exact wait states that cross the paradigms (a Late Sender whose sender was held up at an
// OpenMP barrier ...). One tick is one nanosecond.
//
// Events as the two one-paradigm writers write them (and as Score-P writes them): an MPI call's
// as synthetic_mpi.hpp says, a parallel region's as synthetic_omp.hpp says (the master's
// THREAD_FORK, every team thread's THREAD_TEAM_BEGIN, Enter "!$omp parallel", its calls, Leave,
// THREAD_TEAM_END, the master's THREAD_JOIN). Workers record their teams' events only.
//
// Definitions as Score-P writes a hybrid trace: location group p "MPI Rank p" (process) holds
// locations p * threads + t ("Master thread", "OMP thread t"); MPI_COMM_WORLD over the master
// threads (a COMM_LOCATIONS group of paradigm MPI), MPI_COMM_SELF (and MPI_COMM_REVERSED where a
// collective uses it) as in synthetic_mpi; a COMM_LOCATIONS group of paradigm OPENMP of every
// thread and per process a team communicator ("OpenMP team") whose group lists its threads'
// indices in that group. Regions: 0 main, 1.. the MPI calls (source file "MPI"), then the
// OpenMP regions, then the program's region where a rank records its program, then the task
// regions where a call uses them.
#include <cstdint>
#include <string>
#include <vector>

#include "cubescale/trace/synthetic_mpi.hpp"
#include "cubescale/trace/synthetic_omp.hpp"

namespace cubescale::trace {

struct HybridRank {
  // The master's MPI calls in time order (as write_mpi_trace's, "main" first included: the rank
  // records its program, the parallel regions inside main), each outside every parallel region
  // of the rank (an MPI call may end where a region forks and begin where it joins) or inside
  // the master's team of one, between the master's calls there (MPI_THREAD_FUNNELED code: the
  // call path main / !$omp parallel / MPI_...).
  std::vector<MpiCall> mpi;
  std::vector<OmpParallel> regions;  // the rank's parallel regions in time order (as write_omp_trace's)
};

// Writes `<directory>/<name>.otf2` with one process of `threads` threads per entry of `ranks`;
// main runs on every master from 0 to `end` (or as its "main" call states). Returns the events
// written. std::invalid_argument (before the archive exists) for what write_mpi_trace and
// write_omp_trace refuse, and for an MPI call that overlaps a parallel region's bounds or a master's call in it.
std::uint64_t write_hybrid_trace(const std::string& directory, const std::string& name,
                                 const std::vector<HybridRank>& ranks, std::uint32_t threads, std::uint64_t end);

}  // namespace cubescale::trace
