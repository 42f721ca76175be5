#pragma once
// The wait-state analysis' pass over the events (step 1 of waitstates.hpp): one observer of
// the trace -> profile builder (trace/profile.hpp's CallPathObserver) with one call stack
// makes, per location, everything the later steps read of its communication:
// - the records (waitstates.hpp): per MPI message event and per MPI collective (and
//   MPI_Init/Finalize) a fixed-size record;
// - with `extras`, what Late Receiver and the non-blocking collectives need beyond them
//   (late_receiver.hpp, nonblocking_collectives.hpp): an MPI_Isend's completing call goes into
//   the send's own record as soon as its MPI_ISEND_COMPLETE is seen (its leave, call path and
//   number, held_completion), and only that call's enter stays beside; an MPI_Irecv's posting
//   call's enter; each 4 bytes (a distance from its record's enter, NearTimes); the
//   non-blocking collectives' records.
// One stack and one dispatch per event instead of one extractor per kind, each with its own
// stack (docs/analysis.md, "Speed and memory"); and nothing beside a non-blocking message but
// 4 bytes, so that messages that are all non-blocking stay within the replay's 64-byte bound.
#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "cubescale/analysis/late_receiver.hpp"
#include "cubescale/analysis/nonblocking_collectives.hpp"
#include "cubescale/analysis/waitstates.hpp"
#include "cubescale/trace/profile.hpp"
#include "cubescale/trace/reader.hpp"

namespace cubescale::analysis {

class RecordExtractor final : public trace::CallPathObserver {
 public:
  // `extras`: also the Late Receiver extras and the non-blocking collectives (the records-only
  // replay reads none of them).
  RecordExtractor(const trace::Trace& trace, bool extras);
  void begin_location(std::uint32_t location) override;
  void event(const trace::Event& e, std::uint32_t cnode) override;
  void end_location(std::uint32_t location) override;
  void rows(const std::vector<std::uint32_t>& rows) override;  // call paths -> profile rows
  void absorb(trace::CallPathObserver& later) override;        // its locations' lists after ours
  std::vector<LocationRecords>& records() { return records_; }
  // Per location (in the records' order), empty without `extras`.
  std::vector<PointToPointExtras>& point_to_point() { return point_to_point_; }
  std::vector<NonBlockingLocation>& nonblocking() { return nonblocking_; }

 private:
  struct Frame {
    std::uint64_t enter;
    std::uint32_t region, call, cnode;
    bool p2p;  // a message event happened in it (a completion call's non-blocking collectives)
  };
  // Records still waiting for the leave time of the frame they were made in (innermost last).
  enum class List : std::uint8_t { Sends, Receives, Collectives, NonBlocking };
  struct Pending {
    List list;
    std::size_t index, depth;
  };
  // Collectives so far per communicator (then MPI_Init's and MPI_Finalize's pseudo-communicators).
  std::uint32_t& instances(std::uint32_t communicator);
  std::uint32_t peer_location(std::uint32_t communicator, std::uint32_t rank, const trace::Event& e) const;
  void message(const trace::Event& e, std::uint32_t cnode);
  void collective(const trace::Event& e, std::uint32_t cnode);
  void leave(const trace::Event& e, std::uint32_t cnode);
  void isend_complete(const trace::Event& e);
  void irecv(const trace::Event& e, std::uint64_t enter);  // `enter`: its record's
  void nonblocking_complete(const trace::Event& e, std::uint32_t cnode);
  void close(std::uint64_t leave);
  std::uint64_t enter_or(std::uint64_t time) const { return stack_.empty() ? time : stack_.back().enter; }

  const trace::Trace& trace_;
  const trace::Definitions& defs_;
  bool extras_;
  std::vector<std::uint32_t> rank_location_;  // MPI_COMM_WORLD rank -> dense location index
  // Per location: whether it is another thread of a process one of whose threads an
  // MPI_COMM_WORLD rank names (the one that called MPI_Init); an MPI event there is refused
  // (threads_refused). other_thread_: the location being read's.
  std::vector<bool> other_thread_of_;
  bool other_thread_ = false;
  // MPI called by a thread other than the one its rank names (MPI_THREAD_SERIALIZED or
  // MULTIPLE): a FormatError at the event, where matching would fail on a message it cannot place.
  [[noreturn]] void threads_refused(const trace::Event& e) const;
  std::vector<std::vector<std::uint32_t>> comm_locations_;  // [communicator][rank] -> location
  std::vector<bool> comm_self_;
  // Inter-communicators: per communicator its group B's locations by rank (empty: none), the
  // peers of group A's members (comm_locations_ holds group A's, the peers of B's members), and
  // each group's locations sorted (a location's group found in log time, memory per member).
  std::vector<std::vector<std::uint32_t>> comm_remote_, sorted_a_, sorted_b_;
  bool inter(std::uint32_t communicator) const {
    return communicator < defs_.communicators.size() && defs_.communicators[communicator].inter;
  }
  // The locations that `location` names ranks of on inter-communicator `communicator` (the
  // other group's); null where it is in neither group.
  const std::vector<std::uint32_t>* peers_on_inter(std::uint32_t communicator, std::uint32_t location) const;
  // Per region: how a receive's call completes it, MPI_Init/Finalize (kInitOp, kFinalizeOp or
  // 0), a blocking MPI_Send/MPI_Ssend (a send's record is its completion), how a send's
  // completion counts for Late Receiver, MPI_Test* (non-blocking collectives).
  struct RegionClass {
    CallKind kind = CallKind::Single;
    std::uint32_t init_exit = 0;
    bool blocking_send = false, test = false;
    SendCompletionKind completion = SendCompletionKind::None;
  };
  std::vector<RegionClass> regions_;
  // regions_ ends with the class of an unknown region.
  const RegionClass& region(std::uint32_t r) const { return regions_[std::min<std::size_t>(r, regions_.size() - 1)]; }

  std::vector<LocationRecords> records_;
  std::vector<PointToPointExtras> point_to_point_;
  std::vector<NonBlockingLocation> nonblocking_;
  std::vector<std::uint32_t> instances_;
  std::vector<Frame> stack_;
  std::vector<Pending> pending_;
  std::uint32_t calls_ = 0;
  std::uint64_t last_time_ = 0;
  // Open requests of the location: MPI_Isend -> (its send record, its entry beside); MPI_Irecv
  // -> the posting call's enter; non-blocking collectives -> their start.
  struct OpenSend {
    std::uint64_t request;
    std::size_t send, entry;
  };
  std::vector<OpenSend> open_isends_;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> open_irecvs_;
  struct Started {
    std::uint64_t request, start, position;
    std::uint32_t order;
  };
  std::vector<Started> open_collectives_;
  std::uint32_t started_ = 0;
};

}  // namespace cubescale::analysis
