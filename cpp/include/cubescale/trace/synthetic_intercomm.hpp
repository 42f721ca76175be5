#pragma once
// A synthetic MPI trace with an inter-communicator (OTF2 3's InterComm definition, as Score-P 8
// and later write it for MPI_Intercomm_create): its group A the first `group_a` world ranks,
// group B the others. Each rank runs `main` from 0 to `end` and inside it its calls at stated
// times (1 tick = 1 ns), with the events Score-P writes:
// "MPI_Send": Enter, MPI_SEND at the enter time, Leave; "MPI_Recv": Enter, MPI_RECV at the
// leave time, Leave (both on the inter-communicator, `peer` a rank of the other group, tag 5);
// "MPI_Barrier": Enter, MPI_COLLECTIVE_BEGIN, MPI_COLLECTIVE_END (barrier on the
// inter-communicator), Leave; "MPI_Allreduce": the same on MPI_COMM_WORLD.
#include <cstdint>
#include <string>
#include <vector>

namespace cubescale::trace {

struct InterCommCall {
  std::string name;                    // "MPI_Send", "MPI_Recv", "MPI_Barrier", "MPI_Allreduce"
  std::uint64_t enter = 0, leave = 0;  // ns, leave >= enter, calls in time order
  std::uint32_t peer = 0;              // send / receive: a rank of the other group
};

// Writes `<directory>/<name>.otf2`; returns the events written. std::invalid_argument for an
// unknown call, a peer outside the other group, times out of order, or group_a not in
// [1, ranks - 1].
std::uint64_t write_intercomm_trace(const std::string& directory, const std::string& name,
                                    const std::vector<std::vector<InterCommCall>>& ranks, std::uint32_t group_a,
                                    std::uint64_t end);

}  // namespace cubescale::trace
