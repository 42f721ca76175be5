#pragma once
// The counts scout writes beside its patterns (Scalasca's Message.pattern and Counts.pattern):
// how many MPI operations synchronize (move no data) or communicate, and how many bytes they
// move, per call path and location, each an EXCLUSIVE metric tree of its own:
//
//   syncs            MPI synchronizations (occ)         comms            MPI communications (occ)
//   ├ syncs_p2p                                         ├ comms_p2p
//   │ ├ syncs_send   sends of 0 bytes                   │ ├ comms_send   sends of > 0 bytes
//   │ │ └ mpi_slr_count  Late Receiver instances        │ │ └ mpi_clr_count  Late Receiver instances
//   │ └ syncs_recv   receives of 0 bytes                │ └ comms_recv   receives of > 0 bytes
//   │   └ mpi_sls_count  of them Late Sender instances  │   └ mpi_cls_count  of them Late Sender instances
//   │     └ mpi_slswo_count  of them wrong-order        │     └ mpi_clswo_count  of them wrong-order
//   └ syncs_coll     collectives sending and            └ comms_coll
//                    receiving nothing                    ├ comms_cxch   collectives sending and receiving
//   bytes            MPI bytes transferred (bytes)        ├ comms_csrc   only sending
//   ├ bytes_p2p                                           └ comms_cdst   only receiving
//   │ ├ bytes_sent   bytes of sends
//   │ └ bytes_rcvd   bytes of receives
//   └ bytes_coll
//     ├ bytes_cout   bytes a collective sends
//     └ bytes_cin    bytes a collective receives
//
// Everything but the Late Sender and Late Receiver counts is local to a location (CountsObserver
// sees its events beside the profile builder); a receive is classified by its own message length
// (the length of the matching send in a consistent trace, which scout reads from the send). The
// Late Sender counts take the Late Sender instances of the matching (critical_path.hpp's sync
// points), the Late Receiver counts the instances late_receiver() finds (late_receiver.hpp: on
// the call completing the send, classified by the send's own length, as scout does).
// Parents store their children's values too, as the wait-state metrics do.
#include <array>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "cubescale/analysis/critical_path.hpp"
#include "cubescale/profile/local_profile.hpp"
#include "cubescale/trace/profile.hpp"

namespace cubescale::analysis {

// The counted leaves, in the order of their metrics.
enum class Count : std::uint8_t {
  SyncsSend, SlrCount, SyncsRecv, SlsCount, SlswoCount, SyncsColl, CommsSend, ClrCount, CommsRecv, ClsCount,
  ClswoCount, CommsCxch, CommsCsrc, CommsCdst,
  BytesSent, BytesRcvd, BytesCout, BytesCin, Size
};

// Counts per (call path, location) while the profile builder walks the events.
class CountsObserver final : public trace::CallPathObserver {
 public:
  void begin_location(std::uint32_t location) override;
  void event(const trace::Event& e, std::uint32_t cnode) override;
  void rows(const std::vector<std::uint32_t>& rows) override;
  void absorb(trace::CallPathObserver& later) override;  // its columns after ours
  trace::EventTypeSet interest() const override {  // MPI messages and collectives only
    using T = trace::EventType;
    return trace::event_types({T::MpiSend, T::MpiIsend, T::MpiRecv, T::MpiIrecv, T::MpiCollectiveEnd});
  }

  struct Entry {
    std::uint32_t cnode, column;
    std::array<std::uint64_t, std::size_t(Count::Size)> values{};
  };
  // One entry per (call path, location) with a count; locations by column (order of begin_location).
  const std::vector<Entry>& entries() const { return entries_; }

  // One Late Receiver instance on call path `row` (a profile row, after rows()) of `column`, of
  // a send moving no data (`empty`: mpi_slr_count) or some (mpi_clr_count).
  void late_receiver(std::uint32_t row, std::uint32_t column, bool empty);
  // Those of `later` (a later chunk's Late Receiver instances) after ours.
  void absorb_late_receivers(const CountsObserver& later);
  struct LateReceivers {
    std::uint32_t row, column;
    std::uint64_t empty = 0, nonempty = 0;
  };
  // One entry per (row, column) with instances (few: the calls completing sends).
  const std::vector<LateReceivers>& late_receivers() const { return late_receivers_; }

 private:
  Entry& at(std::uint32_t cnode);
  std::vector<Entry> entries_;
  std::vector<LateReceivers> late_receivers_;
  std::unordered_map<std::uint64_t, std::uint32_t> late_receiver_index_;  // (row, column) -> entry
  std::vector<std::uint32_t> index_;  // this location's entry per call path (builder numbering), or kNone
  std::size_t first_ = 0;             // this location's first entry
  std::uint32_t column_ = 0;
  bool started_ = false;
};

// Replaces the profile's Score-P-style `bytes_sent` / `bytes_received` (point-to-point and
// collective bytes together) by Scalasca's syncs, comms and bytes trees, Late Sender counts
// from `points`, Late Receiver counts from `counts.late_receivers()` (per dense location; columns as in the profile; `column` maps a dense
// location to its column, locations without one are skipped).
void add_counts(profile::LocalProfile& p, const CountsObserver& counts, const std::vector<std::vector<SyncPoint>>& points,
                const std::vector<std::uint32_t>& column);

}  // namespace cubescale::analysis
