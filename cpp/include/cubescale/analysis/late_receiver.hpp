#pragma once
// Late Receiver (Scalasca's mpi_latereceiver) and what it needs beyond the wait-state records:
// the call that completes each send and the call that posted each receive.
//
// Scalasca's definition (scout's MPI.pattern, backward replay): a send waits for its receive
// when the call completing it (MPI_Send/MPI_Ssend itself, or the MPI_Wait* completing an
// MPI_Isend) was entered before the receive was posted (MPI_Recv entered, or the MPI_Irecv
// that created the request entered) and left after it:
//   mpi_latereceiver = enter_post - enter_completion,  if enter_completion < enter_post < leave_completion
// counted for completions in MPI_Send/MPI_Ssend (standard and synchronous blocking sends) and
// MPI_Wait/MPI_Waitany (one request); for MPI_Waitall/MPI_Waitsome the largest over the sends
// it completes, and none when the same call also waited as a Late Sender; buffered and ready
// sends, MPI_Sendrecv and MPI_Test* count nothing. The time goes to the completion call's call
// path on the sending location.
//
// Per location, so that a distributed replay can run it: what a send needs of its receive
// (the posting call's enter) is passed in.
#include <cstdint>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "cubescale/analysis/waitstates.hpp"

namespace cubescale::analysis {

class CountsObserver;
struct SyncPoint;

// How the call completing a send counts for Late Receiver.
enum class SendCompletionKind : std::uint8_t { None, Blocking, WaitSingle, WaitMulti };

// One send's completion: the MPI call that completed it (kNone cnode: never completed inside a
// call). Made where it is used (own_completion, held_completion): an MPI_Isend's record holds
// all of it but the enter. The kind and whether the send moves no data (for mpi_slr_count /
// mpi_clr_count) take the top three bits of the call's number, which only groups the sends a
// Waitall/some completes, so that numbers 2^29 calls apart on one location would share a group
// (no trace comes near).
struct SendCompletion {
  std::uint64_t enter = 0, leave = 0;
  std::uint32_t cnode = kNone;
  std::uint32_t call : 29 = 0;  // the call's number on its location (as MessageRecord::call counts)
  std::uint32_t kind_bits : 2 = 0;
  std::uint32_t empty : 1 = 0;  // the send's own length is 0 (scout classifies by the send event)
  static constexpr std::uint32_t kCallMask = (1u << 29) - 1;  // the bits of a call's number kept

  SendCompletion() = default;
  SendCompletion(std::uint64_t enter_, std::uint64_t leave_, std::uint32_t cnode_, std::uint32_t call_,
                 SendCompletionKind kind_)
      : enter(enter_), leave(leave_), cnode(cnode_), call(call_ & kCallMask),
        kind_bits(static_cast<std::uint32_t>(kind_)) {}
  SendCompletionKind kind() const { return static_cast<SendCompletionKind>(kind_bits); }
};
static_assert(std::is_trivially_copyable_v<SendCompletion> && sizeof(SendCompletion) == 24);

inline constexpr std::uint64_t kNoTime = ~std::uint64_t(0);

// Times held as 32-bit distances from a time their reader knows (the enter of the record each
// belongs to): 4 bytes each instead of 8, so that messages that are all non-blocking stay
// within the replay's 64-byte bound through its message exchange (docs/analysis.md). A time
// on the unusual side of its reference, or 2^32 - 2 ticks or more from it, is kept whole in a
// list beside, by entry (16 bytes; none in the generated traces of the tests and benchmarks but
// one made for it); kNoTime has a mark of its own (an MPI_Isend never completed inside a call
// costs nothing beside).
class NearTimes {
 public:
  // `after`: the times usually follow their references (an MPI_Isend's completing call is
  // entered after the MPI_Isend's), else precede them (an MPI_Irecv is posted before the call
  // completing it is entered).
  explicit NearTimes(bool after) : after_(after) {}
  void push_back(std::uint64_t reference, std::uint64_t time);
  // Entry k's time anew (the extraction learns an MPI_Isend's completion later).
  void set(std::size_t k, std::uint64_t reference, std::uint64_t time);
  // Entry k's time; `reference` as it was given for the entry.
  std::uint64_t at(std::size_t k, std::uint64_t reference) const;
  // After finish(): entry k's time anew, from a new reference, in place (the time correction
  // moves the records' enters and the times; a far entry stays in the far list, kept in entry
  // order, so that no copy of the entries is needed).
  void reset(std::size_t k, std::uint64_t reference, std::uint64_t time);
  std::size_t size() const { return near_.size(); }
  bool empty() const { return near_.empty(); }
  void reserve(std::size_t n) { near_.reserve(n); }
  // After the last set(): the far list in entry order (at() bisects it), unused room returned.
  void finish();
  void clear();  // all memory returned
  // The distances' storage (the replay gives back the pages of the entries it has read).
  const void* data() const { return near_.data(); }
  static constexpr std::size_t kEntryBytes = 4;
  std::size_t far_size() const { return far_.size(); }
  std::uint64_t bytes() const { return near_.capacity() * kEntryBytes + far_.capacity() * sizeof(Far); }

 private:
  struct Far {
    std::uint64_t entry, time;
  };
  static constexpr std::uint32_t kNoTimeMark = ~std::uint32_t(0), kFarMark = kNoTimeMark - 1;
  bool after_;
  bool sorted_ = true;  // far_ in entry order
  std::vector<std::uint32_t> near_;
  std::vector<Far> far_;
};

// Beside a location's LocationRecords (RecordExtractor's, extraction.hpp): per MPI_Isend
// record (MessageRecord::beside() == Beside::Extra) the enter of the call completing it (kNoTime:
// none did inside a call), whose leave, call path and number the record itself holds
// (hold_completion); per MPI_Irecv record the enter of the call that posted it; each in the
// records' order, as a distance from its record's enter (NearTimes). Blocking sends and
// receives are their records' own calls (own_completion, a receive's enter). 4 bytes per
// non-blocking message event.
struct PointToPointExtras {
  std::uint32_t location = kNone;
  NearTimes completion_enter{true};  // after the MPI_Isend's enter
  NearTimes receive_posted{false};   // the posting call's enter, before the receive's call's enter
};

// The completion of a send whose record is its own completing call (Beside::Own: MPI_Send,
// MPI_Ssend).
SendCompletion own_completion(const MessageRecord& send);

// An MPI_Isend's record holds its completion but for the enter: its leave, call path and call
// number with the completion's kind and emptiness in the number's top three bits (nothing reads
// the MPI_Isend call's own leave, call path or number; the send's enter, time and the rest stay).
void hold_completion(MessageRecord& send, const SendCompletion& c);
// The completion such a record holds, with its call's `enter` (PointToPointExtras).
SendCompletion held_completion(const MessageRecord& send, std::uint64_t enter);

// Calls several observers in turn (the profile builder takes one).
class ObserverFan final : public trace::CallPathObserver {
 public:
  explicit ObserverFan(std::vector<trace::CallPathObserver*> observers) : observers_(std::move(observers)) {}
  void begin_location(std::uint32_t l) override { for (auto* o : observers_) o->begin_location(l); }
  void event(const trace::Event& e, std::uint32_t c) override { for (auto* o : observers_) o->event(e, c); }
  void end_location(std::uint32_t l) override { for (auto* o : observers_) o->end_location(l); }
  void rows(const std::vector<std::uint32_t>& r) override { for (auto* o : observers_) o->rows(r); }
  std::vector<trace::CallPathObserver*> parts() override { return observers_; }

 private:
  std::vector<trace::CallPathObserver*> observers_;
};

// Which record matches which: per location (index into the records vector) per send the
// (location index, receive index) of its receive, per receive its send's; kNone where there
// is none (the matcher reports those).
struct RecordRef {
  std::uint32_t list = kNone, index = kNone;
  bool operator==(const RecordRef&) const = default;
};
struct MessagePairs {
  std::vector<std::vector<RecordRef>> receive_of_send, send_of_receive;
};
MessagePairs pair_messages(const std::vector<LocationRecords>& records);

// Late Receiver of one location's sends, fed in parts (the replay's rounds: each send while its
// record exists, with its receive's posting time), into sev.values[LateReceiver] (seconds:
// ticks * `tick`, column `column`) and `counts` when given, in the order of the function
// below: every send but those an MPI_Waitall/some completes at once, in recorded order; those
// (the largest per call, calls in the order of their first wait) at finish(), once the call's
// own receives are known.
class LateReceiverSends {
 public:
  LateReceiverSends(std::uint32_t location, std::size_t column) : location_(location), column_(column) {}
  // With `points`, each instance is also appended there as the critical path's sync point
  // (scout's Late Receiver hand-off): on the sender, waiting until the posting enter, caused by
  // the receiver. 24 bytes per send that waited; `points` must outlive finish().
  void keep_points(std::vector<SyncPoint>* points) { points_ = points; }
  // `c`: the completion of a send made at `sent` (the send event's time; kind None: counts
  // nothing) to `receiver` (its dense location); `posted`: kNoTime if unmatched.
  void send(const SendCompletion& c, std::uint64_t sent, std::uint64_t posted, std::uint32_t receiver, double tick,
            Severities& sev, CountsObserver* counts);
  // `receives` with `sender_enter` (the enter of each one's send): a Waitall/some that waited as
  // a Late Sender is no Late Receiver (scout's exclusion); receives of other calls count nothing.
  void finish(const std::vector<MessageRecord>& receives, const std::vector<std::uint64_t>& sender_enter,
              double tick, Severities& sev, CountsObserver* counts);
  std::size_t bytes() const { return multi_.size() * sizeof(Largest) + open_.size() * 40; }

 private:
  struct Largest {
    std::uint64_t idle;
    SendCompletion call;
    std::uint32_t receiver;  // of the send with that wait (the sync point's causer)
  };
  void add(const SendCompletion& c, std::uint64_t ticks, std::uint32_t receiver, double tick, Severities& sev,
           CountsObserver* counts) const;
  std::uint32_t location_;
  std::size_t column_;
  std::vector<SyncPoint>* points_ = nullptr;
  // Per Waitall/some call that waited (in the order of its first wait) its largest Late
  // Receiver: 40 bytes each until finish(); a call without a wait keeps nothing (its largest, 0,
  // adds nothing). `open_` finds the calls that may still complete later sends (call -> index
  // or none yet, and the call's leave): a call left before a send was made completes no later
  // send, so such calls leave it (those left before `pruned_`); a call left before it and not
  // found there is searched in `multi_` (a trace out of time order).
  struct Open {
    std::size_t index;
    std::uint64_t leave;
  };
  std::vector<Largest> multi_;
  std::unordered_map<std::uint32_t, Open> open_;
  std::uint64_t pruned_ = 0;
};

// Late Receiver of one location into sev.values[LateReceiver] (seconds: ticks * `tick`,
// column `column`), and each instance into `counts` when given (CountsObserver::late_receiver:
// on the completing call's call path; a Waitall/some's instance classified by the send of its
// largest waiting time, the last of equal ones, as scout's backward replay keeps the first it
// meets):
// `posted[i]` is the posting enter of the receive matching send i (kNoTime: unmatched),
// `sender_enter[j]` the enter of the send matching receive j (for the Late Sender exclusion of
// Waitall/Waitsome).
// With `points`, each instance is also the critical path's sync point (LateReceiverSends::keep_points;
// the receiver: the send's peer).
void late_receiver(const LocationRecords& own, const PointToPointExtras& extras, const std::vector<std::uint64_t>& posted,
                   const std::vector<std::uint64_t>& sender_enter, std::size_t column, double tick,
                   Severities& sev, CountsObserver* counts = nullptr, std::vector<SyncPoint>* points = nullptr);

// All locations at once (a single process): Late Receiver for every location in `records`
// (`extras` in the same order; `column` maps a dense location index to its column).
// `points` (per dense location): the instances as sync points, as above. `chunking`: the
// locations cut into chunks that run at once (the same values: a location's cells,
// points and counts are its own; the instances and counts kept in location order).
void late_receiver(const std::vector<LocationRecords>& records, const std::vector<PointToPointExtras>& extras,
                   const MessagePairs& pairs, const std::vector<std::uint32_t>& column, double tick, Severities& sev,
                   CountsObserver* counts = nullptr, std::vector<std::vector<SyncPoint>>* points = nullptr,
                   const Chunking& chunking = {});

}  // namespace cubescale::analysis
