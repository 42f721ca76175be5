#pragma once
// Which regions are not work (paper 003, section 4.3): KEY tells the fastest and the slowest
// thread by the time they spent outside synchronization, idling and waiting. Measurement
// systems mark such regions by their role (OTF2's region roles as Score-P writes them into
// CUBE: "barrier", "implicit barrier", "critical", "taskwait", "thread wait" ...); older
// reports only name them ("!$omp implicit barrier @file:line", "omp_set_lock", "MPI_Wait"),
// so names are checked too. A user may override the whole classification per region.
#include <cstdint>
#include <vector>

#include "cubescale/cube/definitions.hpp"

namespace cubescale::threads {

// Whether time in this region is synchronization, idling or waiting rather than work.
bool is_synchronization(const cube::Region& region);
// One flag per region (1: synchronization).
std::vector<std::uint8_t> synchronization_flags(const std::vector<cube::Region>& regions);

}  // namespace cubescale::threads
