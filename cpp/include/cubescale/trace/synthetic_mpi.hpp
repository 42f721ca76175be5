#pragma once
// Synthetic MPI traces with stated timings, written with OTF2's writer: each rank runs `main`
// and inside it a list of MPI calls whose enter and leave times the caller chooses, so that a
// test can state the exact wait states (a Late Sender chain, a barrier some ranks enter late, a
// broadcast with a late root ...). One tick is one nanosecond.
//
// Per call the events are those Score-P writes: MPI_Send/Ssend/Isend: Enter, MPI_SEND/ISEND at
// the enter time, Leave; MPI_Irecv: Enter, MPI_IRECV_REQUEST at the enter time, Leave;
// MPI_Recv: Enter, MPI_RECV at the leave time, Leave; MPI_Sendrecv (peers = [receiver, sender]):
// Enter, MPI_SEND at the enter time, MPI_RECV at the leave time, Leave; MPI_Wait/Waitall (and
// Waitany/Waitsome/Testall/Testsome, written alike: Score-P's Waitany completes one request, so
// a caller lists one peer and keeps no other request open; the MPI_REQUEST_TESTED events Score-P
// writes for requests a test leaves open are not written): Enter, at the leave
// time an MPI_ISEND_COMPLETE for every MPI_Isend of the rank not yet completed, then one
// MPI_IRECV per peer (with the request of the oldest open MPI_Irecv from that peer, if any),
// Leave; MPI_Ibarrier/Ibcast/Ireduce/Iallreduce: Enter, NON_BLOCKING_COLLECTIVE_REQUEST at the
// enter time, Leave, completed (NON_BLOCKING_COLLECTIVE_COMPLETE at the leave time, before the
// sends) by the rank's next MPI_Wait/Waitall/Test; collectives: Enter, MPI_COLLECTIVE_BEGIN, MPI_COLLECTIVE_END (root,
// bytes sent and received, on MPI_COMM_WORLD, or on MPI_COMM_SELF when the call's tag is 1, or when
// it is 2 on MPI_COMM_REVERSED, whose rank r is process P-1-r, as MPI_Comm_split with key -rank), Leave.
#include <cstdint>
#include <string>
#include <vector>

namespace cubescale::trace {

// The prefix of an MpiCall's name that makes it a parameter ("parameter size=4").
inline constexpr const char* kParameterCall = "parameter ";

struct MpiCall {
  // "MPI_Send", "MPI_Ssend", "MPI_Isend", "MPI_Irecv", "MPI_Recv", "MPI_Ibarrier", "MPI_Ibcast" (peers =
  // [root]), "MPI_Ireduce" ([root]), "MPI_Iallreduce", "MPI_Test" (completes like MPI_Wait), "MPI_Wait", "MPI_Waitall", "MPI_Barrier", "MPI_Bcast",
  // "MPI_Reduce", "MPI_Gather", "MPI_Scatter", "MPI_Allreduce", "MPI_Alltoall", "MPI_Alltoallv", "MPI_Allgather", "MPI_Scan",
  // "MPI_Init", "MPI_Finalize" (Enter and Leave only), "MPI_Iscan", "MPI_Sendrecv" ([receiver, sender]),
  // "MPI_Waitany", "MPI_Waitsome", "MPI_Testall", "MPI_Testsome"; "outside main": main left at
  // `enter` and entered again at `leave` (top-level regions with a gap between, no PROGRAM_BEGIN);
  // "main", as a rank's first call only: the rank records its program as Score-P 7 and later
  // does, PROGRAM_BEGIN at 0, main from `enter` to `leave` (its other calls inside), PROGRAM_END
  // at the trace's end, with the program's region (artificial, measurement system, named after
  // the trace; PROGRAM_BEGIN names "/synthetic/<name>").
  // Without it main runs from 0 to the end and there is no PROGRAM_BEGIN.
  // "parameter NAME=VALUE": a PARAMETER_INT64 (VALUE a decimal integer) or PARAMETER_STRING
  // at `enter` (<= the end), written before the next call given, inside main; other fields unused.
  std::string name;
  std::uint64_t enter = 0, leave = 0;  // ticks (ns), leave >= enter
  std::vector<std::uint32_t> peers;    // receiver / senders (ranks); the root of rooted collectives
  std::uint32_t tag = 0;   // collectives: 0 MPI_COMM_WORLD, 1 MPI_COMM_SELF, 2 MPI_COMM_REVERSED (non-blocking: 0, 2)
  std::uint64_t bytes = 8;  // message length; collectives: bytes sent
  static constexpr std::uint64_t kAsSent = ~std::uint64_t(0);
  std::uint64_t bytes_received = kAsSent;  // collectives: bytes received (kAsSent: `bytes`)
};

// Writes `<directory>/<name>.otf2` with one process per entry of `ranks` (its calls in time
// order); main runs from 0 to `end`. Returns the events written. std::invalid_argument for an
// unknown call name, missing peer or times out of order.
std::uint64_t write_mpi_trace(const std::string& directory, const std::string& name,
                              const std::vector<std::vector<MpiCall>>& ranks, std::uint64_t end);

}  // namespace cubescale::trace
