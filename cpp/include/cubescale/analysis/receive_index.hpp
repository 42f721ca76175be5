#pragma once
// The receiver's side of the replay's message exchange (replay.hpp): as the sends to a rank's
// locations arrive, round by round in each sender's recorded order, each is paired with its
// receive at once (MPI's rule, message_key.hpp: the k-th send of a queue meets the k-th
// receive of that queue) and written into the receive's record, so that the sends received
// never accumulate beside the receives (a rank whose locations only receive would hold both).
//
// Paired in place: a matched receive's record keeps everything the kernels read of it and
// the search needs (enter, leave, call path, call, kinds, location, peer = the sender,
// communicator, tag) but its time, which takes the send's time (its clock condition against
// the send is decided before, one bit), and its event position (48 bits), which takes how long
// before its time the send's call was entered; nothing reads them afterwards: an error names
// only unmatched receives, whose records stay as recorded. A send entered after its own time
// or 2^48 - 1 ticks or more before it keeps its enter beside (SendEnters; none in a trace
// whose events lie inside their calls, and none in any shared or generated trace).
//
// Finding the receive without a table per message queue (a trace giving every message its own
// tag has one per message): per location its receives' indices sorted by queue (none when the
// receives are in queue order already, such as all from one sender with one tag), searched by
// bisection; the receives of a queue are paired in order, so the paired ones are a prefix of
// its range. A few cursors (direct-mapped by queue) remember where a queue's next receive is,
// so that a queue used again and again (the usual case) costs no search.
//
// An MPI_Irecv's posting (Late Receiver's, late_receiver.hpp: 4 bytes beside the records from
// the extraction on) moves into its record when the index is built, as a 32-bit distance
// before the record's enter in the record's `location` (the list names it too), which pairing
// writes back as it hands the posting out (clear() does for receives left unpaired, before the
// matching names them in its errors); a posting on the other side of its enter or 2^32 - 2
// ticks or more before it stays beside (a table by record). Nothing reads an unpaired receive's
// location during the rounds. Memory: 4 bytes per receive of a location whose receives are
// out of queue order and constants per location; the postings beside the records are gone.
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "cubescale/analysis/late_receiver.hpp"
#include "cubescale/analysis/message_key.hpp"
#include "cubescale/analysis/waitstates.hpp"

namespace cubescale::analysis {

// What the kernels read of a receive's send (match_receives, message_points).
struct PairedSend {
  std::uint64_t enter = 0, time = 0;
  std::uint32_t location = kNone;
};

// The enters that do not fit a receive's position, by receive record.
using SendEnters = std::unordered_map<const MessageRecord*, std::uint64_t>;
// Writes send `s` into its receive `r` (see above); `latency` in ticks: the clock condition.
void pair_in_place(MessageRecord& r, const SendRecord& s, std::uint64_t latency, SendEnters& enters);
// The send paired with `r` (r.paired set).
PairedSend paired_send(const MessageRecord& r, const SendEnters& enters);

class ReceiveIndex {
 public:
  // Over `lists` (each location's receives in recorded order; they must stay where they are
  // until clear()); `location_count`: dense locations. With `postings` (the lists' Late
  // Receiver extras, any order, by location), each MPI_Irecv's posting moves into its record
  // and the extras' postings are released.
  void build(std::vector<LocationRecords>& lists, std::size_t location_count,
             std::vector<PointToPointExtras>* postings = nullptr);
  // Pairs send `s` with the next unpaired receive of its queue (pair_in_place); returns where
  // that receive is ({kNone, 0}: none left, or the receiver has no list here) and when it was
  // posted (an MPI_Recv: its call's enter; an MPI_Irecv: its posting, kNoTime if unknown).
  struct Place {
    std::uint32_t list = kNone, index = 0;
    std::uint64_t posted = kNoTime;
  };
  Place pair(const SendRecord& s, std::uint64_t latency, SendEnters& enters);
  // The time correction's queues (replay_beside.cpp; built without postings): the receives of
  // queue `key` on its receiver's list, positions [begin, end) in queue order (list kNone: the
  // receiver has no list here), the receive at a position, and the first receive of a queue not
  // yet `paired` ({kNone, kNone}: none left), which the caller then marks paired.
  struct Range {
    std::uint32_t list = kNone, begin = 0, end = 0;
  };
  Range range(const MessageKey& key) const;
  std::uint32_t record(std::uint32_t list, std::uint32_t position) const { return at(list, position); }
  RecordRef next(const MessageKey& key);
  std::uint64_t bytes() const;
  bool built() const { return lists_ != nullptr; }
  void clear();  // the unpaired receives get their location back

 private:
  struct Cursor {
    MessageKey key{kNone, kNone, kNone, 0};
    std::uint32_t next = 0, end = 0;  // positions in the list's queue order
  };
  std::uint32_t at(std::uint32_t list, std::uint32_t position) const {
    return order_[list].empty() ? position : order_[list][position];
  }
  Cursor find(std::uint32_t list, const MessageKey& key) const;
  void fold_postings(std::uint32_t list, const PointToPointExtras& x);
  std::uint64_t posting(std::uint32_t list, MessageRecord& r);  // and the location back

  std::vector<LocationRecords>* lists_ = nullptr;
  std::vector<std::uint32_t> list_of_;                      // dense location -> list (kNone)
  std::vector<std::vector<std::uint32_t>> order_;           // per list; empty: in queue order already
  std::vector<bool> folded_;                                // per list: its MPI_Irecvs hold their postings
  std::unordered_map<const MessageRecord*, std::uint64_t> far_postings_;  // those that do not fit
  std::vector<Cursor> cursors_;                             // a power of two of them
};

// match_receives' Queues over receives paired in place; the earliest send no receive took (by
// location and position), kept by the caller, is the error of check_all_received.
class PairedReceives {
 public:
  PairedReceives(const SendEnters& enters, const SendRecord* unreceived) : enters_(enters), unreceived_(unreceived) {}
  const PairedSend* next(const MessageRecord& receive) {  // valid until the next call
    if (!receive.paired) return nullptr;
    current_ = paired_send(receive, enters_);
    return &current_;
  }
  void check_all_received(const trace::Trace& trace) const;

 private:
  const SendEnters& enters_;
  const SendRecord* unreceived_;
  PairedSend current_;
};

}  // namespace cubescale::analysis
