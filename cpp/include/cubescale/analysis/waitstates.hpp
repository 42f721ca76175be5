#pragma once
// Wait-state analysis of MPI traces (paper 002, section 5.2; Scalasca's scout patterns).
//
// Three steps, so that a replay can run them on different ranks (replay.hpp drives them; the
// ranks own contiguous shares of the locations and exchange records in between):
// 1. Extraction, per location, streaming: beside the trace -> profile builder (which owns the
//    call tree, trace/profile.hpp's CallPathObserver), every MPI message event and every MPI
//    collective becomes one fixed-size record holding what matching needs: the MPI call
//    region's enter and leave, the peer or root as a location, communicator, tag, call path.
//    Nothing else of the trace is kept, so memory grows with communication events only. The
//    records are trivially copyable: a replay moves them as bytes.
// 2. Meeting: each send goes to the rank owning its receiver (SendQueues holds the sends to one
//    rank's locations); each collective record goes to the "home" rank of its instance
//    (collective_home), which reduces the instance's members (reduce_collectives: Scalasca's
//    synchronization-point decision, collective_sync: whom each member waits for, the earliest
//    leave of the synchronizing members) and returns one CollectiveReduction per member record.
// 3. Per-location kernels on the rank owning the waiting location: match_receives (one
//    location's receives against the sends to it) and collective_severities (one collective
//    record with its instance's reduction). A new pattern adds its arithmetic here; what it
//    needs from the other side of a message or collective goes into the records or the
//    reduction (both fixed-size and trivially copyable).
//
// The k-th message from A to B on (comm, tag) is the k-th one B receives from A on (comm, tag)
// (MPI's non-overtaking rule); the k-th collective of each member of a communicator is one
// instance. Each pattern's waiting time goes to the call path of the MPI call where the waiting
// happened, on the waiting location:
//      mpi_latesender     receive:   min(enter_send, leave_recv) - enter_recv   (> 0 only)
//                         MPI_Waitall/any/some: only the largest of its receives; MPI_Test*: none
//      mpi_latesender_wo  a Late Sender whose message was sent after one the same location
//                         receives later (among its last 100 Late Senders, as scout keeps),
//                         split into mpi_lswo_different / mpi_lswo_same by the two senders
//   Collectives count only at Scalasca's synchronization points, with the enter each member
//   waits for there (collective_sync below: "latest enter" may be the latest sender's):
//      mpi_barrier_wait   barrier:   min(latest enter, my leave) - my enter
//      mpi_wait_nxn       N x N:     min(latest enter, my leave) - my enter
//      mpi_barrier_completion, mpi_nxn_completion (barrier, N x N):
//                         my leave - max(earliest leave, min(latest enter, my leave))
//      mpi_latebroadcast  1 to N:    min(root's enter, my leave) - my enter      (non-roots)
//      mpi_earlyreduce    N to 1:    min(latest enter, my leave) - my enter      (root only)
//      mpi_earlyscan      (ex)scan:  min(latest enter of ranks <= mine, my leave) - my enter
//      mpi_init_completion  MPI_Init(_thread): completion as for barriers
//      mpi_finalize_wait  MPI_Finalize: min(latest enter, my leave) - my enter
//                         (both only for instances every process of MPI_COMM_WORLD has)
// Inconsistent traces (a receive without its send, a send never received, a collective some
// members of its communicator lack or call as another operation) raise FormatError naming the
// location's event file, the event's position and its time.
#include <cstdint>
#include <string>
#include <memory>
#include <optional>
#include <type_traits>
#include <utility>
#include <unordered_map>
#include <vector>

#include "cubescale/analysis/instance_stats.hpp"
#include "cubescale/common/column_sums.hpp"
#include "cubescale/common/run_chunks.hpp"
#include "cubescale/analysis/message_key.hpp"
#include "cubescale/profile/local_profile.hpp"
#include "cubescale/trace/profile.hpp"
#include "cubescale/trace/reader.hpp"

namespace cubescale::analysis {

using trace::kNone;

// How the MPI call around a receive completes it (Scalasca treats them differently).
enum class CallKind : std::uint8_t { Single, WaitMulti, Test };

// Where Late Receiver (late_receiver.hpp) finds what it needs of a message beyond its record:
// a blocking MPI_Send/MPI_Ssend's completing call and an MPI_Recv's posting call are the
// record's own call (Own: enter, leave, call path, call number); an MPI_Isend's record holds
// its completing call's leave, call path and number instead of its own (hold_completion), and
// that call's enter, like an MPI_Irecv's posting, is an entry beside the records (Extra: the
// k-th Extra record of a location has its k-th entry in PointToPointExtras); other sends
// (MPI_Bsend, MPI_Sendrecv, outside any call ...) count for nothing (None). So only
// non-blocking messages cost memory beside the records, 4 bytes each (a distance from the
// record's enter, NearTimes; the replay's bound, docs/analysis.md).
enum class Beside : std::uint8_t { None, Own, Extra };

// One MPI_SEND/ISEND or MPI_RECV/IRECV event. Times are ticks of the trace's clock. 56 bytes:
// the event's position takes 48 bits (2.8e14 events per location), so that the call kind and
// the flags share its word (the replay's memory bound, docs/analysis.md).
struct MessageRecord {
  std::uint64_t enter = 0, leave = 0;  // the MPI call region around the event
  std::uint64_t time = 0;              // the event itself
  std::uint64_t position : 48 = 0;     // the event's number in its location's stream (errors)
  CallKind call_kind = CallKind::Single;
  std::uint8_t empty : 1 = 0;      // no payload (0 bytes): Scalasca counts it as a synchronization
  std::uint8_t beside_bits : 2 = 0;  // Beside
  // A receive paired in place with its send in the replay's rounds (receive_index.hpp), and
  // whether it completed before that send's time plus the latency (the clock condition).
  std::uint8_t paired : 1 = 0;
  std::uint8_t clock_violation : 1 = 0;
  std::uint32_t location = kNone;  // where it was recorded (dense location index)
  std::uint32_t peer = kNone;      // receiver of a send, sender of a receive (dense index)
  std::uint32_t communicator = kNone, tag = 0;
  std::uint32_t cnode = kNone;  // call path of the MPI call (row of the profile)
  std::uint32_t call = 0;       // number of the MPI call on its location (a Waitall's receives share it)
  Beside beside() const { return static_cast<Beside>(beside_bits); }
};

// What the receiver of a send needs of it in the replay's exchange (its kernel: the send's
// enter and time, its sender; its errors: position, time, receiver, tag): 40 bytes instead of
// the 56 of the sender's record.
// Trivially default-constructible: a SendBuffer grows without writing (see below).
struct SendRecord {
  std::uint64_t enter, time;
  std::uint64_t position;
  std::uint32_t location, peer;
  std::uint32_t communicator, tag;
  SendRecord() = default;
  explicit SendRecord(const MessageRecord& s)
      : enter(s.enter), time(s.time), position(s.position), location(s.location), peer(s.peer),
        communicator(s.communicator), tag(s.tag) {}
};

// MPI_Init(_thread) and MPI_Finalize calls become collectives over all of MPI_COMM_WORLD
// (they synchronize its processes) with these operation numbers beyond OTF2's, each kind on
// a communicator number of its own (so that one missing on a process spoils only its kind).
inline constexpr std::uint32_t kInitOp = 1000, kFinalizeOp = 1001;
inline constexpr std::uint32_t kInitCommunicator = kNone - 2, kFinalizeCommunicator = kNone - 1;

// One MPI collective (MPI_COLLECTIVE_END, with its MPI call region). 56 bytes: the event's
// position takes 48 bits, so that whether the member sends and receives bytes (what decides
// Scalasca's synchronization points, collective_sync) and is alone share its word.
struct CollectiveRecord {
  std::uint64_t enter = 0, leave = 0, time = 0;
  std::uint64_t position : 48 = 0;
  std::uint8_t sends : 1 = 0;     // the member's MPI_COLLECTIVE_END records bytes sent
  std::uint8_t receives : 1 = 0;  // ... bytes received
  std::uint8_t self : 1 = 0;      // on a self communicator (one number for every location's own)
  std::uint32_t location = kNone;
  std::uint32_t communicator = kNone;
  std::uint32_t op = 0;        // OTF2_CollectiveOp
  std::uint32_t root = kNone;  // the root's location (rooted operations), else kNone
  std::uint32_t cnode = kNone;
  std::uint32_t instance = 0;  // this location's collective number on `communicator` (from 0)
};
static_assert(std::is_trivially_copyable_v<MessageRecord> && sizeof(MessageRecord) == 56);
static_assert(std::is_trivially_copyable_v<SendRecord> && sizeof(SendRecord) == 40);

// Leaves elements of a trivial type uninitialized where a vector would zero them: a buffer
// the packing fills in rank order while it releases the location lists it copies from (so
// that fresh pages are touched as the old ones go, not all at once) or MPI receives into.
template <typename T>
struct UninitializedAllocator : std::allocator<T> {
  template <typename U>
  struct rebind {
    using other = UninitializedAllocator<U>;
  };
  UninitializedAllocator() = default;
  template <typename U>
  UninitializedAllocator(const UninitializedAllocator<U>&) noexcept {}
  template <typename U>
  void construct(U* p) noexcept {
    ::new (static_cast<void*>(p)) U;
  }
  template <typename U, typename... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};
using SendBuffer = std::vector<SendRecord, UninitializedAllocator<SendRecord>>;

// Gives the whole pages inside [data, data + bytes) back to the system (their contents are
// lost: for a buffer about to be freed whose start was already copied elsewhere).
void give_back_pages(const void* data, std::size_t bytes);
static_assert(std::is_trivially_copyable_v<CollectiveRecord> && sizeof(CollectiveRecord) == 56);

// What one location contributes to matching, each vector in recorded order.
struct LocationRecords {
  std::uint32_t location = kNone;
  std::vector<MessageRecord> sends, receives;
  std::vector<CollectiveRecord> collectives;
};

// Per list, the number of its first collective record among all lists' (in list order); the
// total at the end (records.size() + 1 entries): where a per-record array keeps a record.
std::vector<std::size_t> collective_offsets(const std::vector<LocationRecords>& records);

// Per list, `count(list)`: the weight of each list for chunk_bounds (run_chunks.hpp).
template <typename Count>
std::vector<std::uint64_t> list_weights(const std::vector<LocationRecords>& records, Count count) {
  std::vector<std::uint64_t> weight(records.size());
  for (std::size_t l = 0; l < records.size(); ++l) weight[l] = count(records[l]);
  return weight;
}

// The patterns computed, in the order of their metrics below their parents.
enum class Pattern : std::uint8_t {
  BarrierWait, BarrierCompletion, LateSender, LateSenderWrongOrder, WrongOrderDifferent, WrongOrderSame,
  LateReceiver,  // analysis/late_receiver.hpp (one process)
  EarlyReduce, EarlyScan, LateBroadcast, WaitNxN, NxNCompletion, InitCompletion, FinalizeWait, Count
};
const char* pattern_name(Pattern p);  // Scalasca's unique name: "mpi_latesender", ...

// RecordExtractor (extraction.hpp) builds them while the profile builder walks a location's events.

// Pattern severities of one rank's own locations, [pattern][cnode row * locations + column]
// (exclusive along the call tree: on the MPI call's own call path), in ticks until scaled to
// seconds; and which patterns had operations to look at.
struct Severities {
  std::size_t cnodes = 0, locations = 0;
  std::vector<std::vector<double>> values;
  std::vector<bool> present;
  std::vector<std::uint32_t> column;  // dense location index -> column, kNone if not owned
  InstanceStats* instances = nullptr;  // when given, every instance goes there too (trace.stat)
  // A chunk's view (view()): its adds go to shared's values (by shared's columns: a view holds
  // none), its marks and instances stay its own, so that chunks of a step over disjoint
  // locations run at once (absorb_view after).
  Severities* shared = nullptr;

  Severities() = default;
  Severities(std::size_t cnodes, const std::vector<std::uint32_t>& locations, std::size_t all_locations);
  // How trace.stat takes a value: as an instance of its own (counted and listed), as a member's
  // share of a collective instance (counted; the instance is listed apart), or not at all
  // (scout's trace.stat has no MPI_Init/Finalize patterns).
  enum class Listing : std::uint8_t { Instance, Counted, None };
  // `enter`, `leave`: the MPI call of the instance (trace.stat names it).
  // (inline: once per instance of every pattern, in the matching's and the collectives' loops)
  void add(Pattern p, std::uint32_t cnode, std::uint32_t location, std::uint64_t ticks, std::uint64_t enter = 0,
           std::uint64_t leave = 0, Listing listing = Listing::Instance) {
    const auto& columns = shared ? shared->column : column;
    if (ticks == 0 || cnode == kNone || cnode >= cnodes || location >= columns.size() || columns[location] == kNone)
      return;
    if (instances && listing == Listing::Instance) instances->add(std::size_t(p), {ticks, enter, leave, cnode, location});
    if (instances && listing == Listing::Counted) instances->count(std::size_t(p), ticks);
    if (shared) pending(p).add(cnode, columns[location], static_cast<double>(ticks));
    else matrix(p)[std::size_t(cnode) * locations + columns[location]] += static_cast<double>(ticks);
  }
  // A view's adds still to go to shared's matrices (SeverityChunks::absorb flushes them).
  void flush_pending() {
    for (auto& sums : pending_) sums.flush();
  }
  std::vector<double>& matrix(Pattern p) { return (shared ? shared->values : values)[std::size_t(p)]; }
  void mark(Pattern p) { present[std::size_t(p)] = true; }
  void to_seconds(const trace::Definitions& defs);
  // A view of this for one chunk; `instances` its own (or nullptr where this keeps none).
  Severities view(InstanceStats* instances);
  // A view's marks (its instances are the caller's to absorb, in chunk order).
  void absorb_view(const Severities& view);

 private:
  // A view's adds go through a ColumnSums per pattern: its chunk's threads and the others' add
  // to neighbouring columns' cells, which share cache lines (add's ticks are integers: the
  // sums come out the same).
  std::vector<ColumnSums<double>> pending_;
  ColumnSums<double>& pending(Pattern p) {
    if (pending_.empty())
      for (auto& m : shared->values) pending_.emplace_back(m, locations);
    return pending_[std::size_t(p)];
  }
};

// The views of one Severities for the chunks of a step (run_chunks.hpp), each with instance
// statistics of its own: absorb() takes their marks and instances over in chunk order, as one
// pass over the chunks in order would have added them.
class SeverityChunks {
 public:
  SeverityChunks(Severities& sev, std::size_t chunks);
  Severities& operator[](std::size_t chunk) { return views_[chunk]; }
  void absorb();

 private:
  Severities& sev_;
  std::vector<InstanceStats> instances_;
  std::vector<Severities> views_;
};

// MPI_COMM_WORLD rank -> dense location index (kNone where a rank has no location): the first
// MPI comm_locations group.
std::vector<std::uint32_t> world_locations(const trace::Definitions& defs);

// `execution`'s (the wait-state tree's and the OpenMP tree's, whichever makes it).
inline constexpr const char* kExecutionDescription =
    "Time less the idle time of OpenMP worker threads (omp_idle_threads) and the measurement's overhead";

// `overhead`'s: the measurement's own time, which Scalasca 2.6 takes out of `execution`.
inline constexpr const char* kOverheadDescription = "Time the measurement spent on itself: flushing its trace buffers";
// A region of that time (as 2.6's scout.spec classifies them: the measurement system's
// TRACE BUFFER FLUSH and TRACING, CUDA's and OpenCL's BUFFER FLUSH).
bool measurement_overhead(const cube::Region& region);

// Scout's link to a metric's description: Scalasca's pattern page at the metric's unique name,
// below the report's documentation mirrors (Cube puts each mirror in place of "@mirror@").
std::string scout_url(const std::string& unique_name);
// The mirrors of Scalasca 2.6's pattern documentation (scout writes them into every report),
// where some metric links to it; else none.
std::vector<std::string> documentation_mirrors(const std::vector<cube::Metric>& metrics);
// Links `time` and `visits` (the trace profile's, which scout's report has too) to their
// descriptions.
void link_profile_metrics(profile::LocalProfile& p);

// A metric of the wait-state report as scout stores it: DOUBLE seconds, EXCLUSIVE (its values
// on the call path itself), linked to its description (scout_url); and exclusive values
// [cnode][column] as its DOUBLE matrix. The pattern tree, the OpenMP tree, the critical path
// and its impact metrics share them.
cube::Metric seconds_metric(const char* name, const char* display, const char* description);
cube::Severity exclusive_matrix(std::size_t cnodes, std::size_t cols, const std::vector<double>& values);
// The exclusive values [cnode * columns + column] of an INCLUSIVE DOUBLE metric (`time`), the
// same whatever order a rank numbers its call paths in.
std::vector<double> exclusive_values(const profile::LocalProfile& p, std::size_t metric);

// A location's rank in a communicator, so that every caller of collective_sync hands it an
// instance's members in communicator rank order (scans: "the senders ranked up to mine"), as the
// patterns do: the communicator's group (MPI_Init/Finalize: MPI_COMM_WORLD's). Self communicators
// and locations outside the group have no rank (kNone); `before` then orders by location.
// Whether a communicator is a self one (MPI_COMM_SELF: one definition, every process its own).
bool self_communicator(const trace::Definitions& defs, std::uint32_t communicator);

class CommunicatorRanks {
 public:
  explicit CommunicatorRanks(const trace::Definitions& defs);
  std::uint32_t rank(std::uint32_t communicator, std::uint32_t location) const;
  // Whether location a's member comes before b's in rank order (ties: the lower location).
  bool before(std::uint32_t communicator, std::uint32_t a, std::uint32_t b) const {
    const auto ra = rank(communicator, a), rb = rank(communicator, b);
    return ra != rb ? ra < rb : a < b;
  }
  // An MPI_Init or MPI_Finalize instance that `members` processes (fewer than MPI_COMM_WORLD's
  // with locations) recorded: a measurement that started after MPI_Init or ended before
  // MPI_Finalize on some process. It synchronizes nothing (reduce_collectives skips its
  // patterns, and so do the clock check and the critical path).
  bool partial_init_exit(std::uint32_t communicator, std::size_t members) const {
    return (communicator == kInitCommunicator || communicator == kFinalizeCommunicator) && members < world_.size();
  }

 private:
  using Ranks = std::vector<std::pair<std::uint32_t, std::uint32_t>>;  // (location, rank) by location
  std::vector<Ranks> communicators_;                                    // [communicator]
  Ranks world_;                                                         // MPI_Init/Finalize
};

// A FormatError naming the location's event file, the event's position, the location, its
// process and the time.
[[noreturn]] void fail(const trace::Trace& trace, std::uint32_t location, std::uint64_t position, std::uint64_t time,
                       const std::string& what);

// The sends to one rank's locations, queued per (sender, receiver, communicator, tag) in send
// order (the records must come in each sender's recorded order): the sender's own
// MessageRecords (one process matches its sends where they are; the replay's ranks pair the
// sends they receive with their receives as they arrive instead, receive_index.hpp).
template <typename Send>
class BasicSendQueues {
 public:
  template <typename Allocator>
  explicit BasicSendQueues(const std::vector<Send, Allocator>& sends);
  explicit BasicSendQueues(const std::vector<LocationRecords>& records);  // their own sends (one process)
  const Send* next(const MessageRecord& receive);  // its send, nullptr if none is left
  // Raises FormatError naming the earliest (by location, position) send nobody received.
  void check_all_received(const trace::Trace& trace) const;

 private:
  using Key = MessageKey;
  struct Queue {
    std::vector<const Send*> sends;
    std::size_t next = 0;
  };
  std::unordered_map<Key, Queue, MessageKeyHash> queues_;
};
using SendQueues = BasicSendQueues<MessageRecord>;

// One process that paired its messages already (pair_messages, the same rule: the k-th receive
// of B from A on (communicator, tag) is A's k-th such send): the queues' answers from the pairs,
// without hashing every send again.
struct MessagePairs;
class PairedSends {
 public:
  PairedSends(const std::vector<LocationRecords>& records, const MessagePairs& pairs) : records_(records), pairs_(pairs) {}
  const MessageRecord* next(const MessageRecord& receive);  // `receive`: one of the records' own
  // The receives that follow are list `list`'s (else next() looks for their list: a walk over
  // the lists at each new one, quadratic in the locations).
  void at_list(std::size_t list) { list_ = list; }
  void check_all_received(const trace::Trace& trace) const;  // as BasicSendQueues'

 private:
  const std::vector<LocationRecords>& records_;
  const MessagePairs& pairs_;
  std::size_t list_ = 0;  // the records' list the last receive came from
};

// Kernel: the point-to-point patterns of one location's receives (in recorded order); `sends`:
// SendQueues, PairedSends or PairedReceives (receive_index.hpp). `points`, when given: the
// critical path's Late Sender sync points of these receives appended (its Late Sender instances,
// the wrong-order ones marked: what sync_points would make of them, without walking them again).
struct SyncPoint;
template <typename Queues>
void match_receives(const trace::Trace& trace, const std::vector<MessageRecord>& receives, Queues& sends,
                    Severities& out, std::vector<SyncPoint>* points = nullptr);

// What the members of a collective instance tell each member (computed by the instance's home
// with collective_sync).
struct CollectiveReduction {
  std::uint64_t until = 0;           // the enter this member waits for (MemberSync::until)
  std::uint64_t earliest_leave = 0;  // of the instance's synchronizing members
  std::uint32_t skip = 0;            // 1: left out (MPI_Init/Finalize some processes lack), 2: no synchronization point
  std::uint32_t padding = 0;
};
static_assert(std::is_trivially_copyable_v<CollectiveReduction> && sizeof(CollectiveReduction) == 24);

// Scalasca's synchronization-point decision (scout's MpiCommunicationHandler.cpp, the dispatch
// of MPI_COLLECTIVE_END and its cb_pre_coll_* / cb_pre_sync_coll callbacks) for one member of
// a blocking collective instance; times are the MPI call's enter and leave where scout takes
// MPI_COLLECTIVE_BEGIN and _END. An instance of one member (a size-1 communicator) and
// MPI_Alltoallv/w synchronize nobody. Barrier, MPI_Init/Finalize: every member. 1-to-N: none if
// the root sends nothing; else the members receiving bytes that entered before the root wait
// for it, and the root synchronizes if one does. N x N, scans: a member sending and receiving
// nothing takes no part; N x N with full overlap (earliest leave > latest enter): every member
// waits for the latest; else for the latest *sender*, and only the receivers entered before it
// and that sender synchronize. N-to-1: none if the root receives nothing; else the root and the
// latest sender if the root entered before it. Scans: a member waits for the latest sender
// ranked up to it. The latest among equal enters is the lowest location (scout: lowest rank).
struct MemberSync {
  std::uint64_t until = 0;           // the enter it waits for (its waiting ends there)
  std::uint64_t earliest_leave = 0;  // of the instance's synchronizing members (completion)
  std::uint64_t reference = ~std::uint64_t(0);  // its leave must not precede it (clock condition); none: ~0
  std::uint32_t causer = kNone;      // the member (index) whose enter `until` is (critical path); kNone: nobody
  bool sync = false;                 // a synchronization point: its patterns count
};

// `members`: the instance's records in communicator rank order; `enters` (per member) replaces
// their enter times when given (time correction).
void collective_sync(const std::vector<const CollectiveRecord*>& members, std::vector<MemberSync>& out,
                     const std::uint64_t* enters = nullptr);

// The members' reductions from collective_sync's decision (`out[i]`: member i's), and the
// instance as trace.stat lists it into `listings` (when given; InstanceListings).
void decide_reductions(const std::vector<const CollectiveRecord*>& members, const std::vector<MemberSync>& sync,
                       CollectiveReduction* const* out, InstanceListings* listings);

// The rank (of `ranks`) that reduces the instance a collective record belongs to: spread by
// (communicator, instance), so that no rank gathers every instance of a large communicator.
std::uint32_t collective_home(const CollectiveRecord& c, std::size_t ranks);

// Home kernel: one reduction per record (same order) of the instances the records complete.
// `analyzed[l]`: whether location l is analyzed by some rank (the members expected). Raises
// FormatError on an instance some member lacks or calls as another operation.
// `stride`: the home has every stride-th instance of a communicator (instance_order.hpp);
// `chunking`: the instances cut into chunks that run at once (an error is the first in order).
// `listings`, when given: the instances as trace.stat lists them (decide_reductions).
std::vector<CollectiveReduction> reduce_collectives(const trace::Trace& trace, const std::vector<bool>& analyzed,
                                                    const std::vector<CollectiveRecord>& records, std::uint32_t stride = 1,
                                                    const Chunking& chunking = {}, InstanceListings* listings = nullptr);
// The same for one process over its locations' own lists, without copying them: the records
// in list order (each location's collectives after the previous one's).
std::vector<CollectiveReduction> reduce_collectives(const trace::Trace& trace, const std::vector<bool>& analyzed,
                                                    const std::vector<LocationRecords>& lists,
                                                    InstanceListings* listings = nullptr);
// The same from the instances collective_instances built of the lists (members in rank
// order), without sorting, when they are what the above would check (every record in one, each
// with exactly the analyzed members of its communicator and one operation); else the above
// (which raises on an inconsistent trace). `causers`, when given: per record (the same order)
// the index in its instance of the member it waits for where it is a synchronization point
// (collective_sync's causer), kNone elsewhere, so that the critical path's sync points need not
// decide each instance again (sync_points); left empty where the above ran instead.
// `decided`, when given with one reduction per record: collective_sync's decisions of the same
// instances on the same records (the clock checks' count_clock_violations made them), taken
// over (emptied) instead of deciding each instance again, once the instances are checked.
struct RecordRef;
struct CollectiveDecisions {
  std::vector<CollectiveReduction> reductions;  // per record, list order
  std::vector<std::uint32_t> causers;           // per record, as `causers` below
  InstanceListings listings;                    // the instances as trace.stat lists them
};
std::vector<CollectiveReduction> reduce_collectives(const trace::Trace& trace, const std::vector<bool>& analyzed,
                                                    const std::vector<LocationRecords>& lists,
                                                    const std::vector<std::vector<RecordRef>>& instances,
                                                    std::vector<std::uint32_t>* causers = nullptr,
                                                    CollectiveDecisions* decided = nullptr,
                                                    InstanceListings* listings = nullptr);

// Kernel: the collective patterns of one record, from its instance's reduction.
void collective_severities(const CollectiveRecord& c, const CollectiveReduction& r, Severities& out);

// The profile of `p` with the metric tree of the patterns `present` (see below) and the
// severities (seconds) of its locations.
profile::LocalProfile with_metric_tree(profile::LocalProfile p, const Severities& sev,
                                       const std::vector<bool>& present);

// The profile of the trace (trace_profile) with Scalasca's metric tree below `time`:
// execution > mpi > mpi_synchronization > mpi_sync_collective > {mpi_barrier_wait,
// mpi_barrier_completion}, mpi > mpi_communication > mpi_point2point > mpi_latesender >
// mpi_latesender_wo > {mpi_lswo_different, mpi_lswo_same} and
// mpi_collective > {mpi_earlyreduce, mpi_earlyscan, mpi_latebroadcast, mpi_wait_nxn,
// mpi_nxn_completion}, mpi > mpi_init_exit > {mpi_init_completion, mpi_finalize_wait},
// for the patterns present; as scout
// writes them, every metric below `time` is EXCLUSIVE along the call tree (`time` stays
// INCLUSIVE, as Score-P's profile has it) and stores its value including its child metrics.
// Beside the tree, in one process: the OpenMP patterns, the critical path and counts
// (beside_patterns.hpp), Late Receiver (late_receiver.hpp), non-blocking collectives
// (nonblocking_collectives.hpp) and `clock_violations` (clock_condition.hpp); with
// options.time_correct the records are corrected first (time_correct.hpp). The replay over
// ranks (replay.hpp) computes the MPI patterns of the records alone.
struct AnalysisStats {
  std::uint64_t events = 0, messages = 0, collectives = 0;
  std::uint64_t p2p_violations = 0, collective_violations = 0;  // as recorded (before any correction)
  std::uint64_t omp_violations = 0;                              // OpenMP fork/join/barrier, as recorded
  std::uint64_t corrected_jumps = 0;                             // events the time correction moved forward
  // One process: the critical path's time lines at the end of the pass (bytes) and the
  // locations on the path read a second time (critical_path.hpp, PathTimeline).
  std::uint64_t path_bytes = 0, path_reread = 0;
  std::uint64_t omp_sync_events = 0;  // OpenMP fork, team begin/end, join, barrier enter/leave, lock acquisition
  std::uint64_t root_cause_points = 0, root_cause_bytes = 0;  // with options.root_cause (RootCauseStats)
  double root_cause_read_seconds = 0, root_cause_seconds = 0;
  std::vector<PatternStatistics> patterns;  // per Pattern, then per OmpPattern (trace.stat)
  // One process: wall seconds of each step, in the order they ran (benchmarks: which steps
  // the threads share).
  std::vector<std::pair<std::string, double>> seconds;
};
struct AnalysisOptions {
  bool time_correct = false;
  double min_latency = 0.0;  // seconds: a receive must follow its send by this much (clock condition)
  // Seconds for the OpenMP threads' checks (a team begin after its fork, a join after the team's
  // ends, a barrier left after its last enter); none: min_latency. Scalasca's clc has a
  // shared-memory latency of its own, below its message latencies.
  std::optional<double> min_thread_latency;
  // Tests and benchmarks: the critical path's time per call path by a second read of every
  // location on the path (as before PathTimeline), not from the time lines of the pass.
  bool reread_path = false;
  // Threads for the pass over the events (1: the calling thread only): the locations cut
  // into as many parts, whole processes each (trace::part_locations); the report is the same.
  // The steps after the pass (clock checks, matching, collectives, Late Receiver) cut their
  // locations into as many chunks, of chunk_records records at least.
  std::size_t threads = 1;
  std::uint64_t chunk_records = Chunking{}.least;
  // scout's root-cause metrics (delay costs, wait-state propagation: root_cause.hpp); one process
  // only; with time_correct on the corrected times (its second read moves the events as the
  // correction moved the records).
  bool root_cause = false;
};
profile::LocalProfile analyze(const trace::Trace& trace, const std::vector<std::uint32_t>& locations,
                              AnalysisStats* stats = nullptr, const AnalysisOptions& options = {});

}  // namespace cubescale::analysis
