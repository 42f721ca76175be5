#pragma once
// The rest of the one-process analysis (analyze() in replay.cpp) on one rank of the replay over
// MPI ranks: every metric beside the record patterns, each computed where its data meet.
//
// - OpenMP patterns, counts, the critical path's spans and Late Receiver's send completions and
//   receive postings: observers beside the record extractor on the rank's own locations (a
//   process's threads are all on one rank, so the OpenMP matching is local).
// - Messages: in each round of the send exchange the receiver's owner answers per send received
//   its receive's posting time (8 bytes, in the order the sends came), which a reverse exchange
//   returns to the sender's owner: Late Receiver of the round's sends while their records exist
//   (a Waitall/some's waits at the end, once its Late Sender exclusion is known). After the last
//   round (before matching releases the records) the receiver's owner pairs its receives with
//   the sends received and gets, per receive, what the one-process kernels read of the send:
//   the point-to-point clock condition, the Late Sender sync points of the critical path (and
//   the Late Sender counts), the Late-Sender exclusion of Late Receiver.
// - Collectives: the home of an instance, beside its reduction, tells every member the time its
//   leave must follow (clock condition) and whom it waited for and since when (critical path):
//   one 24-byte CollectiveExtra per record, returned like the reductions.
// - Non-blocking collectives: the records go to the home of their instance (communicator, k-th
//   start) as the blocking ones; the home answers per record its pattern and the time it waits
//   for (16 bytes); the owner keeps the largest per completion call (nonblocking_after). Whether
//   every member starts as many of them is checked first from (communicator, location, count)
//   triples every rank sees.
// - Critical path: the backward walk runs on the rank owning the current location until the path
//   moves to a location of another rank; the caller hands (location, time) over. Attribution is
//   a second pass over the own locations on the path.
#include <cstdint>
#include <map>
#include <memory>
#include <unordered_map>
#include <type_traits>
#include <vector>

#include "cubescale/analysis/clock_condition.hpp"
#include "cubescale/analysis/counts.hpp"
#include "cubescale/analysis/critical_path.hpp"
#include "cubescale/analysis/late_receiver.hpp"
#include "cubescale/analysis/nonblocking_collectives.hpp"
#include "cubescale/analysis/omp_patterns.hpp"
#include "cubescale/analysis/receive_index.hpp"
#include "cubescale/analysis/time_correct.hpp"
#include "cubescale/analysis/waitstates.hpp"

namespace cubescale::analysis {

// What the home of a collective instance tells a member beyond its CollectiveReduction.
struct CollectiveExtra {
  std::uint64_t reference = kNoTime;  // the member's leave must not precede it (clock condition)
  std::uint64_t causer_time = 0;      // the enter of the member it waits for (critical path)
  std::uint32_t causer = kNone;       // that member's location; kNone: waits for nobody
  std::uint32_t padding = 0;
};
static_assert(std::is_trivially_copyable_v<CollectiveExtra> && sizeof(CollectiveExtra) == 24);

// Home kernel: one CollectiveExtra per record (same order), the instances' members in
// communicator rank order (as the one-process analysis hands them to collective_sync).
// `stride`: the home has every stride-th instance of a communicator (instance_order.hpp);
// `chunking`: the instances cut into chunks that run at once (instance_chunks).
std::vector<CollectiveExtra> collective_extras(const std::vector<CollectiveRecord>& records,
                                               const CommunicatorRanks& ranks, std::uint32_t stride = 1,
                                               const Chunking& chunking = {});

// What the home of a non-blocking collective instance tells a member: its pattern (Pattern::Count:
// none) and the time its completion call waits for (kNoTime: nothing), as nonblocking_collectives(),
// and whether the instance synchronizes (two members or more: its clock condition is checked,
// nonblocking_references).
struct NonBlockingVerdict {
  std::uint64_t until = kNoTime;
  std::uint32_t pattern = std::uint32_t(Pattern::Count);
  std::uint32_t synchronizes = 0;
};
static_assert(std::is_trivially_copyable_v<NonBlockingVerdict> && sizeof(NonBlockingVerdict) == 16);
static_assert(std::is_trivially_copyable_v<NonBlockingRecord> && sizeof(NonBlockingRecord) == 64);

// Home kernel: one verdict per record (same order; `order` holds the record's instance on its
// communicator). FormatError when members call different operations as one instance.
std::vector<NonBlockingVerdict> nonblocking_verdicts(const trace::Trace& trace,
                                                     const std::vector<NonBlockingRecord>& records);

// --time-correct over ranks: time_correct.hpp's forward amortization in rounds. Each rank steps
// its locations' communication events as far as the producers' corrected times it knows allow;
// a corrected send time goes to the receiver's owner, a corrected collective enter to the
// instance's home, which, once every member's enter is known, returns to each member the time
// its leave must follow. First the receivers' owners learn how many sends each of their
// receive queues gets, so that a receive without a send waits for nothing (as in one process).
// Rounds end when no rank moved an event or a value; a location left with events is in a cycle
// (FormatError, as time_correct.hpp). The backward amortization runs per location as the
// events are stepped (a ramp walks its events again when a jump ends it), and the moves at the
// end take the offset function from its runs (LocationCorrection): nothing is held per event
// beyond the records but a send's corrected time in its receive's record.
// `recorded`: the value before the correction (the receiver counts the violations as recorded,
// when the value arrives).
struct SendValue {  // the k-th send from `from` to `to` on (communicator, tag): its corrected time
  // (k kNone: the queue's next; a location whose events are in time order sends its values of
  // a queue in the queue's order)
  std::uint32_t from = kNone, to = kNone, communicator = kNone, tag = 0, k = 0, padding = 0;
  std::uint64_t value = 0, recorded = 0;
};
struct InstanceValue {  // a member's corrected enter (to the home) or its reference (back)
  std::uint32_t communicator = kNone, instance = 0, location = kNone, padding = 0;
  std::uint64_t value = 0, recorded = 0;
};
struct SendCount {  // how many sends go from `from` to `to` on (communicator, tag)
  std::uint32_t from = kNone, to = kNone, communicator = kNone, tag = 0, count = 0, padding = 0;
};
static_assert(std::is_trivially_copyable_v<SendValue> && sizeof(SendValue) == 40);
static_assert(std::is_trivially_copyable_v<SendCount> && sizeof(SendCount) == 24);
static_assert(std::is_trivially_copyable_v<InstanceValue> && sizeof(InstanceValue) == 32);

// A non-blocking collective's instance travels as a collective's, its members as
// CollectiveRecords (enter: the start, leave: the completion call's leave, root: the root's
// location) whose instance numbers have this bit, so that they never meet blocking ones.
inline constexpr std::uint32_t kNonBlockingInstance = 0x80000000u;

// One own location in the forward amortization: its events walked in order without holding
// them (SyncWalk), the offset carried, and the ramp since its last producer or jump kept as
// where it begins and how many events it has (the events in a ramp share the offset until a
// jump raises them, time_correct.hpp), so that nothing is held per event but a run per change
// of the offset.
struct LocationCorrection {
  SyncWalk walk;
  SyncWalk::Position window;          // the ramp's first event
  std::uint64_t offset = 0;           // carried forward
  std::uint64_t first = 0;            // the location's first time (the ramp's start before any)
  std::uint64_t start = 0;            // the recorded time of the last producer or jump
  bool started = false;               // there was one
  std::uint32_t pending = 0;          // events in the ramp
  std::uint64_t pending_first = 0, pending_last = 0;
  OffsetRuns runs;
  std::vector<std::uint32_t> send_k;  // a held walk's sends: ordinal per (peer, communicator, tag)
};

struct DistributedCorrection {
  std::uint32_t rank = 0;
  std::vector<std::uint32_t> owner, homes;
  std::size_t ranks = 1;
  // Per own location (records order).
  std::vector<LocationCorrection> locations;
  std::vector<NonBlockingLocation*> nonblocking;          // per own location its non-blocking collectives (null: none)
  std::vector<std::vector<std::uint32_t>> nonblocking_k;  // per such record its instance (kNonBlockingInstance set)
  std::vector<std::size_t> extras_of;                     // per dense location its Late Receiver extras (kNone)
  // OpenMP (local: a process's threads are on one rank), as time_correct.cpp's one-process replay.
  std::vector<OmpSyncLocation*> omp;                      // per own location (null: none)
  // Per group: its producers not yet stepped (a consumer waits until none is left) and the
  // latest corrected one so far (kNoTime: none); 12 bytes per group instead of 16 per producer.
  std::vector<std::uint32_t> group_waiting;
  std::vector<std::uint64_t> group_reference;
  std::uint64_t recorded_omp = 0;
  struct Key {
    std::uint64_t a, b, c;
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    std::size_t operator()(const Key& k) const {
      return std::hash<std::uint64_t>()((k.a * 0x9e3779b97f4a7c15ull) ^ (k.b * 0xc2b2ae3d27d4eb4full) ^ k.c);
    }
  };
  // A collective's reference arrived and not yet used (value, recorded): at most a few per
  // location (a member's next enter goes out after its leave used the last one).
  std::unordered_map<Key, std::pair<std::uint64_t, std::uint64_t>, KeyHash> references_known;
  std::uint64_t recorded_p2p = 0, recorded_collective = 0;  // clock-condition violations before correcting
  // The corrected time of a receive's send goes into the receive's record until the moves: its
  // `paired` bit set and, in its `location` (the list names it), how long before the receive's
  // recorded time (kNone: the table beside, for a send after its receive or 2^32 - 1 ticks or
  // more before it). Unpaired, `location` says whether a send will come (kWaitingForSend: every
  // receive, until a stall brings the counts of the sends per queue, receive_index.hpp's queues)
  // or none (kNone: a receive beyond its queue's sends waits for nothing, as in one process; the
  // matching reports it).
  ReceiveIndex receives;
  std::unordered_map<const MessageRecord*, std::uint64_t> far_sends;
  std::vector<SendCount> outgoing_counts, incoming_counts;
  // Home: the instances (communicator, instance) some of whose members came (each with its
  // corrected enter as it is stepped, Replay::collective_member: the home holds only instances
  // under way), and how many members each has: per (communicator, kind: 0 blocking, 1
  // non-blocking) the instance counts of its member locations, sorted (begin_correction sends a
  // (communicator, kind, location, count) entry per own location to every home, in
  // outgoing_members: communicator, op = kind, location, instance = count).
  struct Instance {
    std::vector<CollectiveRecord> members;
  };
  std::map<std::pair<std::uint32_t, std::uint32_t>, Instance> instances;
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::vector<std::uint32_t>> member_counts;
  std::size_t members(std::uint32_t communicator, std::uint32_t instance) const;
  std::vector<std::uint32_t> world, home_ranks;  // world_locations; the home ranks, each once
  std::vector<CollectiveRecord> outgoing_members, incoming_members;
  // A round queues at most this many values for other ranks (a kMinRounds-th of the own
  // producers, at least 256), so that its buffers stay a small part of the records (a location
  // that only sends would queue all its sends in the first round).
  std::size_t round_values = 256;
  std::vector<std::pair<std::uint32_t, SendValue>> queued_sends;
  std::vector<std::pair<std::uint32_t, CollectiveRecord>> queued_enters;
  std::vector<std::pair<std::uint32_t, InstanceValue>> queued_references;
  // One round's exchange plan, so that a round costs one Alltoall, and an Alltoallv per kind of
  // value some rank sends only when some rank's values do not fit in its rows: `rows`
  // (correct_round) per rank `row` words: the values of each kind (sends, enters, references)
  // for it, whether this rank moved an event or queued a value (-1: it failed), whether it has
  // events left (bit 0) and whether its values do not fit in its rows (bit 1), its values of
  // each kind for all ranks, then `row - 8` words holding its values for that rank (sends,
  // enters, references, as bytes) when every rank's fit; `received` the rows every rank sent
  // this one; `layout` (plan_round) per kind four arrays of `ranks`: the counts sent, their
  // displacements, the counts received, their displacements. A hand-off between ranks usually
  // moves one or two values: carried in the rows, its round needs no Alltoallv, nor the check
  // that sizing their receive buffers succeeded everywhere. Up to kInlineWords (a ring's
  // hand-off: a send and two members' enters, 152 bytes; room for 256), fewer on many ranks,
  // so that a rank's rows stay within kRowsBytes (an Alltoall per round moves them all), none
  // where fewer than 4 words (the smallest value) would be left: from 171 ranks on.
  static constexpr std::size_t kInlineWords = 32, kRowsBytes = std::size_t(16) << 10;
  static std::size_t row_words(std::size_t ranks) {
    const auto budget = kRowsBytes / 8 / std::max<std::size_t>(ranks, 1);
    return 8 + (budget >= 8 + 4 ? std::min(kInlineWords, budget - 8) : 0);
  }
  std::size_t row = 8;  // words per rank in rows and received: row_words(ranks)
  std::vector<std::int64_t> rows, received;
  std::vector<std::int32_t> layout;
  bool inline_round = false;  // plan_round: this round's values are in `received` (take_values)
  std::vector<SendValue> outgoing_sends, incoming_sends;
  std::vector<CollectiveRecord> outgoing_enters, incoming_enters;
  std::vector<InstanceValue> outgoing_references, incoming_references;
  TimeCorrectionStats stats;
  // Bytes held now (hash tables and maps: their nodes and buckets, estimated), counted in
  // Replay::beside_bytes while the correction runs.
  std::uint64_t bytes() const;
};

// The observers of one part of a rank's pass beside the record extractor, which makes Late
// Receiver's and the non-blocking collectives' extras (Replay::point_to_point, nonblocking).
// A later part's (Replay's `threads`, a thread each) are absorbed into the first's after it.
struct BesideObservers {
  explicit BesideObservers(const trace::Trace& trace);
  // `fan` points at the members beside it: neither copied nor moved.
  BesideObservers(const BesideObservers&) = delete;
  BesideObservers& operator=(const BesideObservers&) = delete;
  OmpObserver omp;
  CountsObserver counts;
  SpanObserver spans;
  ObserverFan fan;
};

// The state of these steps on one rank (replay.hpp's Replay holds one), beside the observers
// of its first part (all parts' after the pass).
struct ReplayBeside : BesideObservers {
  explicit ReplayBeside(const trace::Trace& trace) : BesideObservers(trace) {}

  // Per own location (records order).
  std::vector<bool> had_sends;
  // The message exchange in rounds: per own location its Late Receiver so far and its next
  // MPI_Isend completion entry; per dense location its entry in Replay::point_to_point() (kNone).
  // (The receiver pairs each send received with its receive, whose posting time answers it:
  // Replay's ReceiveIndex, receive_index.hpp.)
  std::vector<LateReceiverSends> late_sends;
  // Per own location: its Late Receiver instances as the critical path's sync points (24 bytes
  // per send that waited), moved into `points` by late_receiver().
  std::vector<std::vector<SyncPoint>> late_points;
  std::vector<std::size_t> next_completion, completions_given_back;  // entries; bytes of whole pages
  std::vector<std::size_t> extras_of;
  std::vector<LocationRecords> late_multi;             // receives of Waitall/some that waited as Late Sender
  std::vector<std::vector<std::uint64_t>> late_multi_enter;  // their sends' enters
  std::vector<bool> has_records;                       // per dense location (own ones set)
  std::vector<std::uint64_t> home_posted, posted;      // the reverse exchange of posting times
  std::vector<double> late_receiver_values;            // Late Receiver in seconds, until the others are
  std::vector<CollectiveExtra> home_extras, extras;
  std::vector<std::vector<SyncPoint>> points;          // per dense location (own ones)
  ClockViolations clock;
  std::uint64_t latency = 0;                           // ticks
  std::uint64_t thread_latency = 0;                    // ticks, the OpenMP checks' (AnalysisOptions)
  std::vector<std::vector<Segment>> segments;          // per dense location (own ones)
  std::vector<std::size_t> unused;                     // per dense location: sync points not yet used
  std::vector<std::uint64_t> floor;                    // per dense location: where the path left it last
  PathWindow window;                                   // the path's MPI_Init / MPI_Finalize (own locations)
  std::vector<NonBlockingRecord> outgoing_nonblocking, incoming_nonblocking;  // `order`: the instance
  std::vector<NonBlockingVerdict> home_verdicts, verdicts;
  std::vector<ClassMove> moves;                        // completion calls' time into the collective classes
  bool seconds = false;                                // the severities are in seconds already
  std::unique_ptr<DistributedCorrection> correction;   // --time-correct, until finished
  bool corrected = false;                              // the clock statistics are those before correcting
  std::uint64_t correction_peak = 0;                   // bytes, inside finish_correction
  InstanceStats instances{std::size_t(Pattern::Count)};  // trace.stat of own instances
  std::unique_ptr<OmpSeverities> omp_matched;          // present_complete's, until finish_complete,
  std::size_t omp_matched_cnodes = 0;                  // for this many call paths
};

}  // namespace cubescale::analysis
