#pragma once
// Clock-condition checks (Scalasca's controlled logical clock, src/clc, counts the same two
// kinds): with the trace's clock offsets applied (libotf2 applies a location's ClockOffset
// records while reading its events, so every time here already has them), an event that
// depends on another must not be recorded before it:
//   point to point: a receive's MPI_RECV/MPI_IRECV event before its send's MPI_SEND/MPI_ISEND
//                   event plus the minimum latency;
//   collective:     a member leaving the MPI call before the events it depends on plus the
//                   minimum latency: what it waits for at a synchronization point
//                   (collective_sync, as scout checks them only there): the latest enter
//                   (barrier, N x N, MPI_Init/Finalize; N x N without full overlap the latest
//                   sender's), the root's enter (1-to-N, non-roots receiving bytes), the latest
//                   sender's enter (N-to-1, root only), the latest sender's up to mine (scans).
// Non-blocking collectives (nonblocking_collectives.hpp: a completion call left before the
// starts it waits for) count as collective; OpenMP fork/join/barriers (omp_patterns.hpp,
// time_correct.hpp's count_omp_violations) as `omp`.
// Scout writes no metric for them (clc prints totals); our report has `clock_violations`
// (occurrences, on the call path of the receive or collective and the location that recorded it).
#include <cstdint>
#include <vector>

#include "cubescale/analysis/late_receiver.hpp"
#include "cubescale/analysis/waitstates.hpp"

namespace cubescale::analysis {

// What a member's leave of a collective must follow, by Scalasca's collective classes.
enum class SyncRule : std::uint8_t { None, AllEnter, RootEnter, AllEnterAtRoot, EnterUpToMine };
SyncRule sync_rule(std::uint32_t op);  // op: OTF2_CollectiveOp, kInitOp or kFinalizeOp

// Instances of collectives: the k-th collective of every location that has collectives on a
// communicator, members in communicator rank order as collective_sync needs them (a self
// communicator's collective alone: the communicator's number is every location's own).
// Communicators whose members call different numbers of collectives are left out (the matcher
// reports them).
std::vector<std::vector<RecordRef>> collective_instances(const std::vector<LocationRecords>& records,
                                                         const CommunicatorRanks& ranks);

// For every member of an instance (same order), the time its leave must follow (kNoTime: none);
// `enters` (per member) replaces the records' enter times when given.
std::vector<std::uint64_t> collective_references(const std::vector<LocationRecords>& records,
                                                 const std::vector<RecordRef>& instance,
                                                 const std::vector<std::uint64_t>* enters = nullptr);

struct ClockViolations {
  bool checked = false;  // there were messages or collectives to check
  std::size_t cnodes = 0, locations = 0;
  std::vector<std::uint64_t> counts;  // [cnode * locations + column]
  std::uint64_t point_to_point = 0, collective = 0, omp = 0;
};

// Counts the violations of all records (`column` maps a dense location index to a column);
// `latency` in ticks. `decisions`, when given: each instance's collective_sync decisions kept
// per record, for reduce_collectives to take over (it decides the same instances again else).
// `chunking`: receivers, instances and members cut into chunks that run at once.
ClockViolations count_clock_violations(const std::vector<LocationRecords>& records, const MessagePairs& pairs,
                                       const std::vector<std::vector<RecordRef>>& instances,
                                       const std::vector<std::uint32_t>& column, std::size_t cnodes,
                                       std::size_t locations, std::uint64_t latency,
                                       CollectiveDecisions* decisions = nullptr, const Chunking& chunking = {});

// The clock condition's minimum latency `seconds` in ticks of a clock of `resolution` ticks per
// second, rounded; std::invalid_argument for a latency that is not a number, negative, or 2^62
// ticks or more (about 146 years at a nanosecond clock: no latency, an error in the input).
std::uint64_t latency_ticks(double seconds, std::uint64_t resolution);

// The profile with `clock_violations` (UINT64, occurrences, EXCLUSIVE along the call tree, a
// root metric after the others) when anything was checked.
profile::LocalProfile with_clock_violations(profile::LocalProfile p, const ClockViolations& v);

}  // namespace cubescale::analysis
