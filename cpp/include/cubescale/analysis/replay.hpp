#pragma once
// One rank's part of the wait-state analysis as a parallel replay (paper 002, section 5.2):
// the steps of waitstates.hpp for the rank's own share of the trace's locations, with the
// exchanges between them left to the caller (Python over mpi4py; this core has no MPI):
//
//   Replay r(trace, analyzed, mine);          extraction of `mine` (and their call-path profile)
//   r.begin_sends(owner, ranks)                checks own sends; own sends per receiver's owner
//   <Alltoall of those totals> r.expect_sends(total received)
//   rounds = max over ranks of r.send_rounds(round_bytes); then per round (every rank, also
//   one without sends or locations):
//     r.pack_round()                           the round's own sends grouped by the receiver's owner
//     <Alltoallv outgoing_sends -> incoming_round(n)>   (the round before's were paired with
//                                              their receives: receive_index.hpp)
//   r.match_messages()                         own receives against the sends paired with them
//   (r.pack_sends(owner, ranks) instead packs every send at once: the records-only replay)
//   r.pack_collectives(ranks, homes)           own collective records grouped by home rank
//   <Alltoallv outgoing_collectives -> incoming_collectives>
//   r.reduce_collectives()                     home: one reduction per incoming record
//   <Alltoallv home_reductions -> reductions (the reverse of the first exchange)>
//   r.collective_severities()                  own records with their reductions
//   r.pack_listings(owner, ranks)              home: the instances as trace.stat lists them, to
//   <Alltoallv outgoing_listings -> incoming_listings>   the owners of the locations naming them
//   r.take_listings()                          own: into the instance statistics
//   r.finish(present)                          the profile with the metric tree of every
//                                              rank's `present` patterns (OR over ranks)
//
// With `complete` (replay_beside.hpp) every metric of the one-process analyze(), in steps
// around those above (each named where it goes; the caller exchanges between them):
//   [begin_correction ... finish_correction]   --time-correct (see below), before everything else
//   in each round of the message exchange, after the sends came:
//     answer_round()                           per send received its receive's posting time
//     <Alltoallv home_posted -> posted (the round's send exchange reversed)>
//     late_receiver_round()                    Late Receiver of the round's own sends, then
//                                              their records are released
//   messages_beside()                          after the last round, before match_messages:
//                                              also the Late Sender kernel (match_messages then
//                                              only releases), the receives go as it ends
//   late_receiver()                            after match_messages: the Waitall/some sends
//   collectives_beside_home()                  before reduce_collectives
//   <Alltoallv home_extras -> extras (like the reductions)>
//   collectives_beside()                       before reduce_collectives (extras and reductions
//                                              never coexist: the memory bound)
//   late_receiver_after()                      after collective_severities: adds its values
//   nonblocking_counts() <allgather> check_nonblocking_counts(all), pack_nonblocking(ranks, homes)
//   <Alltoallv> reduce_nonblocking() <Alltoallv back> nonblocking_after()
//   path_window_members() <allreduce> set_path_window(init, finalize)  MPI_Init/Finalize in every process?
//   path_start() / walk(at, t)                 the critical path's backward walk, handed over
//   present_complete() / finish_complete(present)
//
// Memory: the records of the rank's own communication events (56 bytes per message event and
// per collective), one round's sends to its locations (40 bytes each, paired with their
// receives into the receives' records as they come; its own sends are packed a bounded round
// at a time, their records released as they go), the receivers' index (receive_index.hpp) and
// the instances it is home of; each buffer is released as soon as its step is done (docs/analysis.md has the bound).
#include <cstdint>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "cubescale/analysis/receive_index.hpp"
#include "cubescale/analysis/replay_beside.hpp"
#include "cubescale/analysis/waitstates.hpp"

namespace cubescale::analysis {

class Replay {
 public:
  // `analyzed`: every location some rank analyzes (peers must be among them); `mine`: this
  // rank's, the columns of its profile in this order. Runs the extraction (FormatError on a
  // broken event file); `beside` (optional: the one-process analysis) sees the same pass after
  // the record extractor, which then also makes the extras (point_to_point(), nonblocking()).
  Replay(const trace::Trace& trace, const std::vector<std::uint32_t>& analyzed, const std::vector<std::uint32_t>& mine,
         trace::CallPathObserver* beside = nullptr);
  // The same with `mine` cut into parts (trace::part_locations) read at once on a thread each,
  // beside[k] seeing part k's pass; what they keep is then beside[0]'s (trace_profile's absorb).
  Replay(const trace::Trace& trace, const std::vector<std::uint32_t>& analyzed,
         const std::vector<std::vector<std::uint32_t>>& parts, const std::vector<trace::CallPathObserver*>& beside);

  // `complete`: also every metric beside the record patterns (replay_beside.hpp); `min_latency`
  // in seconds for the clock condition, `min_thread_latency` for its OpenMP checks (none:
  // min_latency; AnalysisOptions). `threads`: `mine` read in as many parts at once (a rank
  // with several cores; trace::part_locations), the same records and profile as one part; the
  // steps after the pass then cut their records into as many chunks at once, of `chunk_records`
  // records at least each (tests make it small), the same report as one thread.
  Replay(const trace::Trace& trace, const std::vector<std::uint32_t>& analyzed, const std::vector<std::uint32_t>& mine,
         bool complete, double min_latency = 0.0, std::optional<double> min_thread_latency = std::nullopt,
         std::size_t threads = 1, std::uint64_t chunk_records = Chunking{}.least);
  ~Replay();

  // --- complete: the steps of replay_beside.hpp (replay_beside.cpp) ---
  // --time-correct, right after the extraction: own collective records to their homes (returns
  // records per rank; `rank`: this one), then take_members() (the homes' instances), then rounds
  // of correct_round() (fills the rows of the plan), the rows' Alltoall, plan_round(), size_round()
  // and an Alltoallv per kind of value planned, and take_values(), until no rank moves or
  // queues anything (parallel/analysis.py's _time_correct). Every receive
  // waits for a send: if some rank then has events left (correction_pending), the ranks stalled
  // on a receive without a send (an inconsistent trace) or a cycle; once, its own send counts go
  // to the receivers' owners (pack_send_counts, an exchange, take_send_counts: a receive beyond
  // its queue's sends waits for nothing) and the rounds go on. finish_correction() raises on a
  // cycle and moves every own record.
  std::vector<std::uint64_t> begin_correction(const std::vector<std::uint32_t>& owner, std::size_t ranks,
                                              std::uint32_t rank, const std::vector<std::uint32_t>& homes);
  std::vector<std::uint64_t> pack_send_counts();  // per receiver's owner: own sends per queue
  DistributedCorrection& correction();
  void take_members();
  bool correction_pending();  // some own location has events left to step
  void take_send_counts();
  void correct_round();  // steps own events; fills correction().rows
  // From correction().received (the rows of every rank): the round's layout; returns bit 0: some
  // rank moved or queued, bit 1: some rank has events left, bits 2-4: each kind some rank sends;
  // kRoundFailed alone when some rank's rows say it failed (a negative "moved").
  // A round whose values all fit in the rows sets no kind bit (take_values reads the rows).
  static constexpr std::uint32_t kRoundFailed = 1u << 5;
  std::uint32_t plan_round();
  void size_round();  // the receive buffers of the planned round (may throw bad_alloc)
  void take_values();
  TimeCorrectionStats finish_correction();
  // The most bytes of records and buffers (record_bytes() + beside_bytes()) held inside
  // finish_correction, where the moves of each location hold what the steps between do not.
  std::uint64_t correction_peak_bytes() const;
  void answer_round();         // receiver: home_posted for the round's sends received
  void late_receiver_round();  // sender: with posted, Late Receiver of the round's own sends
  void messages_beside();
  std::vector<std::uint64_t>& home_posted() { return beside().home_posted; }
  std::vector<std::uint64_t>& posted() { return beside().posted; }
  void collectives_beside_home();
  std::vector<CollectiveExtra>& home_extras() { return beside().home_extras; }
  std::vector<CollectiveExtra>& extras() { return beside().extras; }
  void collectives_beside();
  void late_receiver();        // after match_messages: the Waitall/some sends (frees what Late Receiver needed)
  void late_receiver_after();  // after collective_severities
  // Non-blocking collectives: (communicator, location, count) triples of own locations; every
  // rank checks all ranks' triples (FormatError on the rank holding the first record without
  // counterpart); own records to the homes of their instances; home verdicts; own patterns.
  std::vector<std::uint32_t> nonblocking_counts() const;
  void check_nonblocking_counts(const std::vector<std::uint32_t>& all);
  std::vector<std::uint64_t> pack_nonblocking(std::size_t ranks, const std::vector<std::uint32_t>& homes);
  std::vector<NonBlockingRecord>& outgoing_nonblocking() { return beside().outgoing_nonblocking; }
  std::vector<NonBlockingRecord>& incoming_nonblocking() { return beside().incoming_nonblocking; }
  void reduce_nonblocking();
  std::vector<NonBlockingVerdict>& home_verdicts() { return beside().home_verdicts; }
  std::vector<NonBlockingVerdict>& verdicts() { return beside().verdicts; }
  void nonblocking_after();  // after late_receiver_after (the same order of additions as analyze())
  // How many own locations have an MPI_Init / MPI_Finalize; with every rank's sums
  // set_path_window decides whether the path runs between them (PathWindow).
  std::pair<std::size_t, std::size_t> path_window_members() const;
  void set_path_window(std::size_t init_members, std::size_t finalize_members);
  // This rank's candidate to start the path (after set_path_window): (enter of the latest
  // MPI_Finalize, or the last Leave without the window; position among analyzed); position
  // kNone when it has none. `any_records`: some rank's location has records.
  std::pair<std::uint64_t, std::uint32_t> path_start(bool any_records) const;
  bool any_records() const;
  // Walks back from (at, t) while the path stays on own locations; returns where it continues
  // ((kNone, 0) when it ended).
  std::pair<std::uint32_t, std::uint64_t> walk(std::uint32_t at, std::uint64_t t);
  // Record patterns, then OpenMP, then clock checked; the OpenMP patterns' values kept for
  // finish_complete.
  std::vector<bool> present_complete();
  // After finish_complete: per own column its PROGRAM_BEGIN to PROGRAM_END in seconds
  // (impact_costs' program_spans).
  const std::vector<double>& program_spans() const { return program_spans_; }
  // After finish_complete: scout's local time profile of OpenMP threads against `time`
  // (impact_costs' and add_impact's local_time; empty without OpenMP fork and join).
  const std::vector<double>& local_time() const { return local_time_; }
  profile::LocalProfile finish_complete(const std::vector<bool>& present);
  // Bytes of the buffers above and of the extractors' records beside the wait-state records
  // (Late Receiver's completions and postings, non-blocking collectives, sync points).
  std::uint64_t beside_bytes();
  // OpenMP synchronization events of the own locations the beside patterns hold (complete only).
  std::uint64_t omp_sync_events() const;
  // After finish_complete: the instance statistics of own locations (raw ticks; trace.stat), per
  // Pattern, then per OmpPattern;
  // stats() then also has the clock-condition violations as recorded and the events moved.
  const std::vector<PatternStatistics>& pattern_statistics() const { return pattern_statistics_; }

  // Own sends grouped by the rank `owner[receiver]` owns (stable); returns records per rank.
  std::vector<std::uint64_t> pack_sends(const std::vector<std::uint32_t>& owner, std::size_t ranks);
  SendBuffer& outgoing_sends() { return outgoing_sends_; }  // what receivers need of them
  SendBuffer& incoming_sends() { return incoming_sends_; }
  // The exchange in rounds: FormatError for a send to a location nobody analyzes (the first,
  // by location and event), else own sends per receiver's owner (and the receivers' index of
  // own receives); then the sends this rank will receive in all (a check of the rounds).
  std::vector<std::uint64_t> begin_sends(const std::vector<std::uint32_t>& owner, std::size_t ranks);
  void expect_sends(std::uint64_t total);
  // Rounds this rank needs with at most `round_bytes` of packed sends per round and at least
  // kMinRounds of them (so that a round's buffers stay a small part of the records).
  static constexpr std::uint64_t kMinRounds = 64;
  std::uint64_t send_rounds(std::uint64_t round_bytes);
  // Releases the sends packed the round before (after late_receiver_round when complete), then
  // packs the next ones; returns records per rank (zeros once every send went).
  std::vector<std::uint64_t> pack_round();
  // Room for the round's `n` sends received, in the buffer of the round before, whose sends are
  // paired first (answer_round pairs them when complete).
  SendRecord* incoming_round(std::size_t n);
  void match_messages();
  // One process: own receives against own sends, without packing; `keep`: the records stay
  // (the one-process analysis reads them again for the patterns beside these).
  void match_own_messages(bool keep = false);
  // The same with the sends `pairs` found (pair_messages of records()); the records stay.
  // `points` (per dense location), when given: the critical path's Late Sender sync points
  // appended (match_receives). `chunking`: the receivers cut into chunks that run at once
  // (the same values: a receiver's cells and points are its own, the instances kept in
  // location order; an error the first in location order).
  void match_own_messages(const MessagePairs& pairs, std::vector<std::vector<SyncPoint>>* points = nullptr,
                          const Chunking& chunking = {});

  // `homes`: the ranks that reduce instances (those owning locations; empty: every rank), so
  // that a rank without locations holds no records.
  std::vector<std::uint64_t> pack_collectives(std::size_t ranks, const std::vector<std::uint32_t>& homes = {});
  std::vector<CollectiveRecord>& outgoing_collectives() { return outgoing_collectives_; }
  std::vector<CollectiveRecord>& incoming_collectives() { return incoming_collectives_; }
  void reduce_collectives();
  std::vector<CollectiveReduction>& home_reductions() { return home_reductions_; }
  std::vector<CollectiveReduction>& reductions() { return reductions_; }
  void collective_severities();
  // trace.stat's listings of the instances this rank reduced (InstanceListings: a few per call
  // path and location, not per instance), grouped by the rank owning the location that names
  // each (owner[location]); returns listings per rank. The owners name the call paths.
  std::vector<std::uint64_t> pack_listings(const std::vector<std::uint32_t>& owner, std::size_t ranks);
  std::vector<Listing>& outgoing_listings() { return outgoing_listings_; }
  std::vector<Listing>& incoming_listings() { return incoming_listings_; }
  void take_listings();
  // Last, on the profile of finish_complete (after the impact metrics): scout's idle threads of
  // own processes (omp_patterns.hpp, add_idle_threads).
  void add_idle_threads(profile::LocalProfile& p) const;
  // One process that keeps its records: every step of the collectives on them where they are.
  void own_collectives_keeping_records();
  // The same with the instances collective_instances built of records() (no sort); `causers`,
  // `decided`: see reduce_collectives.
  void own_collectives_keeping_records(const std::vector<std::vector<RecordRef>>& instances,
                                       std::vector<std::uint32_t>* causers = nullptr,
                                       CollectiveDecisions* decided = nullptr, const Chunking& chunking = {});

  std::vector<LocationRecords>& records() { return records_; }
  // Late Receiver's and the non-blocking collectives' extras of own locations (extraction.hpp;
  // with `beside` or `complete` only).
  std::vector<PointToPointExtras>& point_to_point() { return point_to_point_; }
  std::vector<NonBlockingLocation>& nonblocking() { return nonblocking_; }
  Severities& severities() { return severities_; }
  std::size_t cnode_count() const { return profile_.cnode_count(); }
  profile::LocalProfile take_profile() { return std::move(profile_); }

  const std::vector<bool>& present() const { return severities_.present; }
  profile::LocalProfile finish(const std::vector<bool>& present);
  const AnalysisStats& stats() const { return stats_; }
  // How many parts the own locations were read in at once (threads; at most one per process).
  std::size_t parts() const { return parts_; }
  // Bytes the records hold now (for the benchmark's memory table).
  std::uint64_t record_bytes() const;

 private:
  template <typename Queues>
  void match_receives_of(Queues& queues, bool keep, std::vector<std::vector<SyncPoint>>* points = nullptr);
  // One location's receives (their peers checked) into `out`.
  template <typename Queues>
  void match_location(const LocationRecords& l, Queues& queues, Severities& out,
                      std::vector<std::vector<SyncPoint>>* points) const;
  std::uint32_t rank_of(const MessageRecord& send) const { return owner_[send.peer]; }
  // Whether send i of location list l comes before the next one to pack.
  bool packed_before(std::size_t l, std::size_t i) const { return l < next_list_ || (l == next_list_ && i < next_index_); }
  void release_packed();  // the records of the sends packed so far (whole pages; lists once done)
  void begin_sends_beside();  // complete: Late Receiver's state for the rounds (replay_beside.cpp)

  // The exchange in rounds: the receivers' owners, the next send to pack (location list, index),
  // the round packed last (its first send and counts per rank), per location the bytes of its
  // send list given back so far.
  std::vector<std::uint32_t> owner_;
  std::size_t ranks_ = 0, round_size_ = 0;
  std::size_t next_list_ = 0, next_index_ = 0, round_list_ = 0, round_index_ = 0;
  std::vector<std::uint64_t> round_counts_;
  std::vector<std::uint64_t> given_back_;
  // The receiver's side: the sends received are paired with their receives as each round
  // arrives (receive_index.hpp) and their buffer reused: the sends received up to `paired_`
  // are; the earliest send no receive took (by location and position) waits for the error.
  ReceiveIndex receive_index_;
  std::size_t paired_ = 0;
  std::uint64_t expected_ = 0, received_ = 0;  // sends announced by expect_sends, received so far
  SendEnters send_enters_;  // the rare enters that do not fit their receive's record
  SendRecord unreceived_{};
  bool any_unreceived_ = false, messages_matched_ = false;
  void match_paired_receives(bool keep);  // the kernel over the receives paired in place
  void pair_received();  // pairs the sends received not yet paired (the posting answers aside)
  ReceiveIndex::Place pair_one(const SendRecord& s);
  // records' order; `chunking`: the locations cut into chunks, at once (as match_own_messages)
  void own_collective_severities(const std::vector<CollectiveReduction>& reductions, const Chunking& chunking = {});
  void extract(const std::vector<std::uint32_t>& analyzed, const std::vector<std::vector<std::uint32_t>>& parts,
               const std::vector<trace::CallPathObserver*>& beside, bool extras);

  const trace::Trace& trace_;
  std::vector<bool> analyzed_;
  profile::LocalProfile profile_;
  std::vector<LocationRecords> records_;
  std::vector<PointToPointExtras> point_to_point_;
  std::vector<NonBlockingLocation> nonblocking_;
  Severities severities_;
  AnalysisStats stats_;
  SendBuffer outgoing_sends_, incoming_sends_;
  std::vector<CollectiveRecord> outgoing_collectives_, incoming_collectives_;
  std::uint32_t collective_stride_ = 1;  // a home has every stride-th instance (pack_collectives' homes)
  std::vector<CollectiveReduction> home_reductions_, reductions_;
  InstanceListings listings_;  // home: the instances it reduced, as trace.stat lists them
  std::vector<Listing> outgoing_listings_, incoming_listings_;
  std::vector<PatternStatistics> pattern_statistics_;
  std::vector<double> program_spans_, local_time_;
  std::vector<std::uint32_t> mine_, position_;  // own locations; dense location -> place in `analyzed`
  std::size_t parts_ = 1;
  Chunking chunking_;  // the steps after the pass: the constructor's threads
  std::unique_ptr<ReplayBeside> beside_;        // complete only
  void arrive(const CollectiveRecord& m);       // home: a member with its corrected enter
  // A member record for its home: `enter` the corrected one, `time` the recorded enter.
  CollectiveRecord collective_member(const CollectiveRecord& c, std::uint64_t corrected) const;
  void send_arrived(const SendValue& v);        // a receiver's owner: a send's corrected time
  void unpack_inline_values();                  // a round carried in the rows: into the incoming buffers
  ReplayBeside& beside();                       // std::logic_error unless `complete`
};

}  // namespace cubescale::analysis
