// Wait-state analysis (cpp/include/cubescale/analysis/): the whole single-process analysis of a
// trace as one LocalProfile (the call-path profile with Scalasca's pattern metrics), one rank's
// part of the parallel replay (Replay: its record buffers as NumPy byte views that mpi4py moves
// without copies), the pattern names, and the writer of synthetic MPI traces with stated
// timings that the tests use.
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <tuple>
#include <utility>

#include "cubescale/analysis/impact.hpp"
#include "cubescale/analysis/omp_patterns.hpp"
#include "cubescale/analysis/replay.hpp"
#include "cubescale/analysis/root_cause.hpp"
#include "cubescale/analysis/waitstates.hpp"
#include "cubescale/trace/synthetic_hybrid.hpp"
#include "cubescale/trace/synthetic_intercomm.hpp"
#include "cubescale/trace/synthetic_mpi.hpp"
#include "cubescale/trace/synthetic_omp.hpp"
#include "register.hpp"

namespace py = pybind11;

namespace cubescale::bindings {

namespace {

// The name of statistics entry p: the record patterns' (Pattern), then the OpenMP patterns'.
std::string statistics_name(std::size_t p) {
  constexpr auto records = std::size_t(analysis::Pattern::Count);
  return p < records ? analysis::pattern_name(static_cast<analysis::Pattern>(p))
                     : analysis::omp_pattern_name(static_cast<analysis::OmpPattern>(p - records));
}

// {pattern name: {count, sum, min, max, sum_of_squares (seconds), top: [(seconds, enter, leave,
// cnode row, dense location)]}} for the patterns with instances; enter/leave in seconds since
// the trace's start.
py::dict pattern_statistics(const trace::Trace& t, const std::vector<analysis::PatternStatistics>& patterns) {
  const auto& clock = t.definitions().clock;
  const double tick = 1.0 / static_cast<double>(clock.resolution);
  auto since_start = [&](std::uint64_t ticks) { return static_cast<double>(ticks - std::min(ticks, clock.offset)) * tick; };
  py::dict out;
  for (std::size_t p = 0; p < patterns.size(); ++p) {
    const auto& s = patterns[p];
    if (s.count == 0) continue;
    py::list top;
    for (const auto& i : s.top)
      top.append(py::make_tuple(static_cast<double>(i.ticks) * tick, since_start(i.enter), since_start(i.leave), i.cnode,
                                i.location));
    py::dict d;
    d["count"] = s.count;
    d["sum"] = static_cast<double>(s.sum) * tick;
    d["min"] = static_cast<double>(s.min) * tick;
    d["max"] = static_cast<double>(s.max) * tick;
    d["sum_of_squares"] = s.sum_of_squares * tick * tick;
    d["top"] = top;
    out[py::str(statistics_name(p))] = d;
  }
  return out;
}

// The bytes of a record buffer as a uint8 array that keeps the Replay alive (no copy).
template <typename T, typename Allocator>
py::array byte_view(std::vector<T, Allocator>& v, py::object owner) {
  static T empty{};
  auto* data = v.empty() ? &empty : v.data();
  return py::array(py::dtype::of<std::uint8_t>(), {static_cast<py::ssize_t>(v.size() * sizeof(T))},
                   {py::ssize_t(1)}, reinterpret_cast<std::uint8_t*>(data), owner);
}

// The lambda of a Replay method `(n)` that resizes one of its receive buffers (`buffer(replay)`)
// to n records and returns a writable byte view of it, which the rank's MPI receive fills.
template <typename Buffer>
auto receive_view(Buffer buffer) {
  return [buffer](py::object self, std::size_t n) {
    auto& v = buffer(self.cast<analysis::Replay&>());
    v.resize(n);
    return byte_view(v, self);
  };
}

// The time correction's rows of a round (DistributedCorrection::rows, received): ranks x row words.
py::array_t<std::int64_t> rows_view(std::vector<std::int64_t>& v, std::size_t words, py::object owner) {
  const auto row = static_cast<py::ssize_t>(words);
  return py::array_t<std::int64_t>({static_cast<py::ssize_t>(v.size()) / row, row}, v.data(), owner);
}

// One call of write_omp_trace's per-thread lists (see its docstring), by the call's name.
trace::OmpCall omp_call(const py::tuple& t) {
  const auto bad = [] {
    return py::value_error(
        "an OpenMP call is (call, enter_ns, leave_ns[, acquire_ns, lock]), ('task_create', enter_ns, leave_ns, creator, "
        "generation), ('task_begin' | 'task_end', ns, creator, generation, untied), ('task_switch', ns, creator, "
        "generation) or ('enter' | 'leave', ns, region)");
  };
  if (t.size() < 3) throw bad();
  const auto name = t[0].cast<std::string>();
  const auto time = t[1].cast<std::uint64_t>();
  trace::OmpCall c{name, time, time};
  if (name == "task_create" || name == "task_begin" || name == "task_end" || name == "task_switch") {
    const std::size_t first = name == "task_create" ? 3 : 2;  // the creator's place
    if (t.size() != first + 2 + (name == "task_begin" || name == "task_end")) throw bad();
    if (name == "task_create") c.leave = t[2].cast<std::uint64_t>();
    c.creator = t[first].cast<std::uint32_t>();
    c.generation = t[first + 1].cast<std::uint32_t>();
    if (t.size() == first + 3) c.untied = t[first + 2].cast<bool>();
  } else if (name == "enter" || name == "leave") {
    if (t.size() != 3) throw bad();
    c.region = t[2].cast<std::string>();
  } else {
    if (t.size() != 3 && t.size() != 5) throw bad();
    c.leave = t[2].cast<std::uint64_t>();
    if (t.size() == 5) c.acquire = t[3].cast<std::uint64_t>(), c.lock = t[4].cast<std::uint32_t>();
  }
  return c;
}

// One parallel region of write_omp_trace's list (see its docstring).
trace::OmpParallel omp_parallel(const py::dict& r) {
  trace::OmpParallel p{r["fork"].cast<std::uint64_t>(), r["join"].cast<std::uint64_t>(), {}};
  if (r.contains("begin")) p.begins = r["begin"].cast<std::vector<std::uint64_t>>();
  if (r.contains("end")) p.ends = r["end"].cast<std::vector<std::uint64_t>>();
  for (const auto& calls : r["threads"].cast<std::vector<std::vector<py::tuple>>>()) {
    p.threads.emplace_back();
    for (const auto& t : calls) p.threads.back().push_back(omp_call(t));
  }
  return p;
}

// One call of write_mpi_trace's per-rank lists: (call, enter, leave, peers, tag[, bytes[,
// bytes_received]]): the message or collective payload defaults to 8 bytes; a collective
// receives as many as it sends unless told.
trace::MpiCall mpi_call(const py::tuple& t) {
  if (t.size() < 5 || t.size() > 7)
    throw py::value_error("a call is (call, enter_ns, leave_ns, peers, tag[, bytes[, bytes_received]])");
  trace::MpiCall c{t[0].cast<std::string>(), t[1].cast<std::uint64_t>(), t[2].cast<std::uint64_t>(),
                   t[3].cast<std::vector<std::uint32_t>>(), t[4].cast<std::uint32_t>()};
  if (t.size() >= 6) c.bytes = t[5].cast<std::uint64_t>();
  if (t.size() == 7) c.bytes_received = t[6].cast<std::uint64_t>();
  return c;
}

// One call of write_intercomm_trace's per-rank lists: (call, enter, leave[, peer]).
trace::InterCommCall intercomm_call(const py::tuple& t) {
  if (t.size() < 3 || t.size() > 4) throw py::value_error("a call is (call, enter_ns, leave_ns[, peer])");
  return {t[0].cast<std::string>(), t[1].cast<std::uint64_t>(), t[2].cast<std::uint64_t>(),
          t.size() == 4 ? t[3].cast<std::uint32_t>() : 0u};
}

// A synthetic writer's per-rank lists of calls, each tuple made a call by `call`.
template <typename Call>
std::vector<std::vector<Call>> calls_per_rank(const std::vector<std::vector<py::tuple>>& ranks,
                                              Call (*call)(const py::tuple&)) {
  std::vector<std::vector<Call>> out(ranks.size());
  for (std::size_t r = 0; r < ranks.size(); ++r)
    for (const auto& t : ranks[r]) out[r].push_back(call(t));
  return out;
}

py::dict stats_dict(const analysis::AnalysisStats& stats) {
  py::dict d;
  d["events"] = stats.events;
  d["messages"] = stats.messages;
  d["collectives"] = stats.collectives;
  return d;
}

void register_replay(py::module_ m) {
  using analysis::Replay;
  py::class_<Replay>(m, "Replay",
                     "One rank's part of the wait-state replay (analysis/replay.hpp): extraction of its locations, "
                     "then matching with the records the caller exchanges between the ranks.")
      .def(py::init([](const trace::Trace& t, std::vector<std::uint32_t> analyzed, std::vector<std::uint32_t> mine,
                       bool complete, double min_latency, std::optional<double> min_thread_latency,
                       std::int64_t threads, std::uint64_t chunk_records) {
             if (threads < 1) throw py::value_error("threads must be at least 1");
             if (threads > 1 && !complete) throw py::value_error("threads: for a complete replay");
             py::gil_scoped_release release;
             return complete ? std::make_unique<Replay>(t, analyzed, mine, true, min_latency, min_thread_latency,
                                                        static_cast<std::size_t>(threads), chunk_records)
                             : std::make_unique<Replay>(t, analyzed, mine);
           }),
           py::arg("trace"), py::arg("analyzed"), py::arg("mine"), py::arg("complete") = false,
           py::arg("min_latency") = 0.0, py::arg("min_thread_latency") = py::none(), py::arg("threads") = 1,
           py::arg("chunk_records") = Chunking{}.least, py::keep_alive<1, 2>(),
           "Extracts the records (and the call-path profile) of `mine`; `analyzed`: every rank's locations. "
           "`complete`: also everything the one-process analysis computes beside the record patterns "
           "(analysis/replay_beside.hpp; `min_latency` in seconds for the clock condition, `min_thread_latency` "
           "for its OpenMP checks, None: min_latency); `threads`: `mine` read in as many parts at once, the "
           "same records and profile, and the steps after the pass in as many chunks of `chunk_records` records "
           "at least (tests make it small), the same report.")
      .def_property_readonly_static("message_bytes", [](py::object) { return sizeof(analysis::MessageRecord); })
      .def_property_readonly_static("send_bytes", [](py::object) { return sizeof(analysis::SendRecord); })
      .def_property_readonly_static("collective_bytes", [](py::object) { return sizeof(analysis::CollectiveRecord); })
      .def_property_readonly_static("reduction_bytes",
                                    [](py::object) { return sizeof(analysis::CollectiveReduction); })
      .def("pack_sends", &Replay::pack_sends, py::arg("owner"), py::arg("ranks"),
           "Groups own sends by the rank owning the receiver (owner[location]); returns records per rank.")
      .def(
          "outgoing_sends", [](py::object self) { return byte_view(self.cast<Replay&>().outgoing_sends(), self); },
          "The packed sends as bytes (a view).")
      .def(
          "incoming_sends",
          receive_view([](Replay& r) -> auto& { return r.incoming_sends(); }),
          py::arg("records"), "A writable byte view of `records` sends to receive into.")
      .def("begin_sends", &Replay::begin_sends, py::arg("owner"), py::arg("ranks"),
           "The message exchange in rounds: checks own sends (FormatError for a receiver nobody analyzes); "
           "returns own sends per receiver's owner.")
      .def("expect_sends", &Replay::expect_sends, py::arg("total"),
           "The sends this rank receives over all rounds (each round's are paired with their receives as they come).")
      .def("send_rounds", &Replay::send_rounds, py::arg("round_bytes"),
           "Rounds this rank needs with at most `round_bytes` of packed sends per round (and at least "
           "Replay.min_rounds); every rank runs the largest number over the ranks.")
      .def_property_readonly_static("min_rounds", [](py::object) { return Replay::kMinRounds; })
      .def("pack_round", &Replay::pack_round, py::call_guard<py::gil_scoped_release>(),
           "Releases the sends packed before, packs the round's next own sends by receiver's owner "
           "(outgoing_sends); returns records per rank.")
      .def(
          "incoming_round",
          [](py::object self, std::size_t n) {
            auto* data = self.cast<Replay&>().incoming_round(n);
            return py::array(py::dtype::of<std::uint8_t>(), {static_cast<py::ssize_t>(n * sizeof(analysis::SendRecord))},
                             {py::ssize_t(1)}, reinterpret_cast<std::uint8_t*>(data), self);
          },
          py::arg("records"), "A writable byte view of the round's `records` sends to receive (the round before's buffer, once paired).")
      .def("match_messages", &Replay::match_messages, py::call_guard<py::gil_scoped_release>(),
           "Own receives against the sends received; FormatError on unmatched ones.")
      .def("pack_collectives", &Replay::pack_collectives, py::arg("ranks"), py::arg("homes") = std::vector<std::uint32_t>{},
           "Groups own collective records by the home rank of their instance (among `homes`, the ranks owning "
           "locations; empty: all); returns records per rank.")
      .def(
          "outgoing_collectives",
          [](py::object self) { return byte_view(self.cast<Replay&>().outgoing_collectives(), self); },
          "The packed collective records as bytes (a view).")
      .def(
          "incoming_collectives",
          receive_view([](Replay& r) -> auto& { return r.incoming_collectives(); }),
          py::arg("records"), "A writable byte view of `records` collective records to receive into (as home).")
      .def("reduce_collectives", &Replay::reduce_collectives, py::call_guard<py::gil_scoped_release>(),
           "Home: one reduction per collective record received; FormatError on incomplete instances.")
      .def(
          "home_reductions", [](py::object self) { return byte_view(self.cast<Replay&>().home_reductions(), self); },
          "The reductions computed as home, in the order of the records received (a view).")
      .def(
          "reductions",
          receive_view([](Replay& r) -> auto& { return r.reductions(); }),
          py::arg("records"), "A writable byte view of `records` reductions (one per own packed collective record).")
      .def("collective_severities", &Replay::collective_severities, py::call_guard<py::gil_scoped_release>(),
           "The collective patterns of own records from the reductions received.")
      .def_property_readonly_static("listing_bytes", [](py::object) { return sizeof(analysis::Listing); })
      .def("pack_listings", &Replay::pack_listings, py::arg("owner"), py::arg("ranks"),
           "Home, after reduce_collectives: trace.stat's listings of the instances reduced here, grouped by the "
           "rank owning the location naming each (owner[location]); returns listings per rank.")
      .def(
          "outgoing_listings",
          [](py::object self) { return byte_view(self.cast<Replay&>().outgoing_listings(), self); },
          "The packed listings as bytes (a view).")
      .def(
          "incoming_listings",
          receive_view([](Replay& r) -> auto& { return r.incoming_listings(); }),
          py::arg("records"), "A writable byte view of `records` listings to receive into (as owner).")
      .def("take_listings", &Replay::take_listings, "Own: the listings received into the instance statistics.")
      .def("add_idle_threads", &Replay::add_idle_threads, py::arg("profile"),
           "Last, after the impact metrics: scout's omp_idle_threads and omp_limited_parallelism of own processes "
           "below time, and their values added to time.")
      .def("present", [](const Replay& r) { return std::vector<bool>(r.present()); },
           "Per pattern: whether its operations occur among own locations.")
      .def(
          "finish",
          [](Replay& r, std::vector<bool> present) {
            py::gil_scoped_release release;
            return std::make_shared<profile::LocalProfile>(r.finish(present));
          },
          py::arg("present"), "The LocalProfile with the metric tree of the patterns `present` on any rank.")
      .def(
          "stats", [](const Replay& r) { return stats_dict(r.stats()); },
          "Own events read and message / collective records extracted.")
      .def("parts", &Replay::parts,
           "How many parts the own locations were read in at once, a thread each (at most the threads "
           "asked for and one per process).")
      .def("record_bytes", &Replay::record_bytes, "Bytes the record buffers hold now.")
      .def("omp_sync_events", &Replay::omp_sync_events,
           "OpenMP synchronization events (fork, team begin/end, join, barrier enter/leave, lock "
           "acquisition) of the own locations held beside the records: communication events of the "
           "memory bound.")
      // --- complete: the steps of analysis/replay_beside.hpp, in this order around the others ---
      .def_property_readonly_static("extra_bytes", [](py::object) { return sizeof(analysis::CollectiveExtra); })
      .def("answer_round", &Replay::answer_round, py::call_guard<py::gil_scoped_release>(),
           "In each round, after the sends came: per send received its receive's posting time (home_posted, "
           "in the order the sends came).")
      .def(
          "home_posted", [](py::object self) { return byte_view(self.cast<Replay&>().home_posted(), self); },
          "Per send received this round its receive's posting time (8 bytes each, a view).")
      .def(
          "posted",
          receive_view([](Replay& r) -> auto& { return r.posted(); }),
          py::arg("n"), "A writable view for `n` posting times returned for the round's own sends (its exchange reversed).")
      .def("late_receiver_round", &Replay::late_receiver_round, py::call_guard<py::gil_scoped_release>(),
           "With the posting times back: Late Receiver of the round's own sends; releases their records.")
      .def("messages_beside", &Replay::messages_beside, py::call_guard<py::gil_scoped_release>(),
           "After the last round, before match_messages: Late Sender, clock condition and Late Sender sync points "
           "(releases the receives).")
      .def("collectives_beside_home", &Replay::collectives_beside_home, py::call_guard<py::gil_scoped_release>(),
           "Home, before reduce_collectives: per record received its clock reference and whom it waits for.")
      .def(
          "home_extras", [](py::object self) { return byte_view(self.cast<Replay&>().home_extras(), self); },
          "The extras computed as home, in the order of the records received (a view).")
      .def(
          "extras",
          receive_view([](Replay& r) -> auto& { return r.extras(); }),
          py::arg("n"), "A writable view for `n` extras returned for own collective records.")
      .def("collectives_beside", &Replay::collectives_beside, py::call_guard<py::gil_scoped_release>(),
           "Before collective_severities: collective clock conditions and sync points of own records.")
      .def("late_receiver", &Replay::late_receiver, py::call_guard<py::gil_scoped_release>(),
           "After match_messages: Late Receiver of the sends an MPI_Waitall/some completes (frees what it needed).")
      .def("late_receiver_after", &Replay::late_receiver_after, py::call_guard<py::gil_scoped_release>(),
           "After collective_severities: adds the Late Receiver values.")
      .def_property_readonly_static("nonblocking_bytes", [](py::object) { return sizeof(analysis::NonBlockingRecord); })
      .def_property_readonly_static("verdict_bytes", [](py::object) { return sizeof(analysis::NonBlockingVerdict); })
      .def("nonblocking_counts", &Replay::nonblocking_counts,
           "(communicator, location, count) triples of own non-blocking collectives, flat.")
      .def("check_nonblocking_counts", &Replay::check_nonblocking_counts, py::arg("all"),
           "Every rank's triples: FormatError on the rank holding the first record without counterpart.")
      .def("pack_nonblocking", &Replay::pack_nonblocking, py::arg("ranks"), py::arg("homes"),
           "Own non-blocking collective records grouped by the home rank of their instance; records per rank.")
      .def(
          "outgoing_nonblocking", [](py::object self) { return byte_view(self.cast<Replay&>().outgoing_nonblocking(), self); },
          "The packed non-blocking collective records as bytes (a view).")
      .def(
          "incoming_nonblocking",
          receive_view([](Replay& r) -> auto& { return r.incoming_nonblocking(); }),
          py::arg("n"), "A writable view for `n` non-blocking collective records received.")
      .def("reduce_nonblocking", &Replay::reduce_nonblocking, py::call_guard<py::gil_scoped_release>(),
           "Home: per record received its pattern and the time it waits for; FormatError on mixed operations.")
      .def(
          "home_verdicts", [](py::object self) { return byte_view(self.cast<Replay&>().home_verdicts(), self); },
          "The verdicts computed as home, in the order of the records received (a view).")
      .def(
          "verdicts",
          receive_view([](Replay& r) -> auto& { return r.verdicts(); }),
          py::arg("n"), "A writable view for `n` verdicts returned for own non-blocking records.")
      .def("nonblocking_after", &Replay::nonblocking_after, py::call_guard<py::gil_scoped_release>(),
           "After late_receiver_after: the non-blocking collective patterns of own records.")
      // --- --time-correct over ranks (analysis/replay_beside.hpp) ---
      .def_property_readonly_static("send_value_bytes", [](py::object) { return sizeof(analysis::SendValue); })
      .def_property_readonly_static("instance_value_bytes", [](py::object) { return sizeof(analysis::InstanceValue); })
      .def("begin_correction", &Replay::begin_correction, py::arg("owner"), py::arg("ranks"), py::arg("rank"),
           py::arg("homes"), "Starts --time-correct: own collective records to their homes; returns records per rank.")
      .def(
          "correction_outgoing_members", [](py::object self) { return byte_view(self.cast<Replay&>().correction().outgoing_members, self); },
          "Own collective records for the homes (a view).")
      .def(
          "correction_incoming_members",
          receive_view([](Replay& r) -> auto& { return r.correction().incoming_members; }),
          py::arg("n"), "A writable view for `n` collective records received as home.")
      .def_property_readonly_static("send_count_bytes", [](py::object) { return sizeof(analysis::SendCount); })
      .def("pack_send_counts", &Replay::pack_send_counts,
           "After a stall: own sends per (sender, receiver, communicator, tag) for the receivers' owners; records per rank.")
      .def(
          "correction_outgoing_counts", [](py::object self) { return byte_view(self.cast<Replay&>().correction().outgoing_counts, self); },
          "Own send counts for the receivers' owners (a view).")
      .def(
          "correction_incoming_counts",
          receive_view([](Replay& r) -> auto& { return r.correction().incoming_counts; }),
          py::arg("n"), "A writable view for `n` send counts received.")
      .def("take_members", &Replay::take_members, "Home: the members of its instances.")
      .def("take_send_counts", &Replay::take_send_counts,
           "After a stall, the send counts received: a receive beyond its queue's sends waits for nothing.")
      .def("correct_round", &Replay::correct_round, py::call_guard<py::gil_scoped_release>(),
           "Steps own events as far as the known values allow and fills the rows for the round's plan.")
      .def(
          "correction_rows",
          [](py::object self) {
            auto& d = self.cast<Replay&>().correction();
            return rows_view(d.rows, d.row, self);
          },
          "This rank's row for every rank (correct_round fills them; a view, until finish_correction).")
      .def(
          "correction_received_rows",
          [](py::object self) {
            auto& d = self.cast<Replay&>().correction();
            return rows_view(d.received, d.row, self);
          },
          "A writable view for every rank's row for this one (until finish_correction).")
      .def(
          "correction_layout",
          [](py::object self) {
            auto& v = self.cast<Replay&>().correction().layout;
            const auto n = static_cast<py::ssize_t>(v.size() / 12);
            return py::array_t<std::int32_t>({py::ssize_t(3), py::ssize_t(4), n}, v.data(), self);
          },
          "Per kind (sends, enters, references): counts sent, displacements, counts received, displacements "
          "(plan_round fills them; a view, until finish_correction).")
      .def("size_round", &Replay::size_round, "The receive buffers of the planned round.")
      .def("plan_round", &Replay::plan_round,
           "From the rows received: the layout; bit 0 some rank moved, bit 1 some rank has events left, bits 2-4 "
           "each kind some rank sends by Alltoallv (none when every rank's values are in its rows: take_values "
           "reads them there); bit 5 alone: some rank failed (its rows' column 3 negative).")
      .def(
          "correction_outgoing_sends", [](py::object self) { return byte_view(self.cast<Replay&>().correction().outgoing_sends, self); },
          "Corrected send times for the receivers' owners (a view).")
      .def(
          "correction_incoming_sends",
          [](py::object self) { return byte_view(self.cast<Replay&>().correction().incoming_sends, self); },
          "The round's receive buffer of send times, as size_round sized it (a view).")
      .def(
          "correction_outgoing_enters", [](py::object self) { return byte_view(self.cast<Replay&>().correction().outgoing_enters, self); },
          "Corrected collective enters for the homes (a view).")
      .def(
          "correction_incoming_enters",
          [](py::object self) { return byte_view(self.cast<Replay&>().correction().incoming_enters, self); },
          "The round's receive buffer of members' corrected enters, as size_round sized it (a view).")
      .def(
          "correction_outgoing_references", [](py::object self) { return byte_view(self.cast<Replay&>().correction().outgoing_references, self); },
          "References for the members' owners (a view).")
      .def(
          "correction_incoming_references",
          [](py::object self) { return byte_view(self.cast<Replay&>().correction().incoming_references, self); },
          "The round's receive buffer of references, as size_round sized it (a view).")
      .def("take_values", &Replay::take_values, py::call_guard<py::gil_scoped_release>(),
           "Takes the values received (a home's complete instances answer their members).")
      .def(
          "finish_correction",
          [](Replay& r) {
            py::gil_scoped_release release;
            const auto s = r.finish_correction();
            return std::make_pair(s.jumps, s.largest);
          },
          "FormatError on a cycle; moves every own record. Returns (jumps, largest jump in ticks) of own events.")
      .def("correction_peak_bytes", &Replay::correction_peak_bytes,
           "The most bytes of records and buffers held inside finish_correction (the moves).")
      .def("any_records", &Replay::any_records, "Whether an own location has MPI records.")
      .def("path_window_members", &Replay::path_window_members,
           "(own locations with an MPI_Init, with an MPI_Finalize): summed over the ranks for set_path_window.")
      .def("set_path_window", &Replay::set_path_window, py::arg("init_members"), py::arg("finalize_members"),
           "Whether the critical path runs from the last MPI_Finalize back to MPI_Init (every process has them).")
      .def("path_start", &Replay::path_start, py::arg("any_records"),
           "(enter of the latest MPI_Finalize or last Leave, place among analyzed) of this rank's candidate to "
           "start the critical path; place 0xFFFFFFFF: none.")
      .def("walk", &Replay::walk, py::arg("at"), py::arg("time"),
           "The critical path's backward walk from (location, time) while it stays on own locations; returns "
           "where it continues ((0xFFFFFFFF, 0): ended).")
      .def("program_spans", &Replay::program_spans,
           "After finish_complete: per own column the time from PROGRAM_BEGIN to PROGRAM_END in seconds (impact_costs).")
      .def("local_time", &Replay::local_time,
           "After finish_complete: scout's local time profile of OpenMP threads against time, [row * columns + column] "
           "seconds, empty without OpenMP forks (impact_costs' and add_impact's local_time).")
      .def("present_complete", &Replay::present_complete,
           "Record patterns, OpenMP patterns, clock checked: whether each occurs among own locations.")
      .def(
          "finish_complete",
          [](Replay& r, std::vector<bool> present) {
            py::gil_scoped_release release;
            return std::make_shared<profile::LocalProfile>(r.finish_complete(present));
          },
          py::arg("present"), "The LocalProfile with every metric of the one-process analysis.")
      .def(
          "statistics",
          [](const Replay& r) {
            // Raw ticks, so that the ranks' sums merge exactly before they become seconds.
            py::dict out, patterns;
            for (std::size_t p = 0; p < r.pattern_statistics().size(); ++p) {
              const auto& s = r.pattern_statistics()[p];
              if (s.count == 0) continue;
              py::list top;
              for (const auto& i : s.top) top.append(py::make_tuple(i.ticks, i.enter, i.leave, i.cnode, i.location));
              py::dict d;
              d["count"] = s.count, d["sum"] = s.sum, d["min"] = s.min, d["max"] = s.max;
              d["sum_of_squares"] = s.sum_of_squares, d["top"] = top;
              patterns[py::str(statistics_name(p))] = d;
            }
            out["patterns"] = patterns;
            out["p2p_violations"] = r.stats().p2p_violations;
            out["collective_violations"] = r.stats().collective_violations;
            out["omp_violations"] = r.stats().omp_violations;
            out["corrected_jumps"] = r.stats().corrected_jumps;
            return out;
          },
          "After finish_complete: own instance statistics in ticks ({pattern: {count, sum, min, max, "
          "sum_of_squares, top: [(ticks, enter, leave, cnode row, dense location)]}}) and clock-condition "
          "violations as recorded, events the correction moved.")
      .def("beside_bytes", &Replay::beside_bytes, "Bytes the buffers of the complete steps hold now.");
}

}  // namespace

void register_analysis(py::module_ m) {
  register_replay(m);
  m.def(
      "analyze",
      [](const trace::Trace& t, std::vector<std::uint32_t> locations, bool time_correct, double min_latency,
         bool reread_path, std::size_t threads, bool root_cause, std::uint64_t chunk_records,
         std::optional<double> min_thread_latency) {
        analysis::AnalysisStats stats;
        analysis::AnalysisOptions options;
        options.time_correct = time_correct, options.min_latency = min_latency, options.reread_path = reread_path;
        options.min_thread_latency = min_thread_latency;
        options.threads = threads, options.root_cause = root_cause, options.chunk_records = chunk_records;
        std::shared_ptr<profile::LocalProfile> p;
        {
          py::gil_scoped_release release;
          p = std::make_shared<profile::LocalProfile>(
              analysis::analyze(t, locations, &stats, options));
        }
        py::dict d;
        d["events"] = stats.events;
        d["messages"] = stats.messages;
        d["collectives"] = stats.collectives;
        d["p2p_violations"] = stats.p2p_violations;
        d["collective_violations"] = stats.collective_violations;
        d["omp_violations"] = stats.omp_violations;
        d["corrected_jumps"] = stats.corrected_jumps;
        d["critical_path_bytes"] = stats.path_bytes;
        d["critical_path_reread"] = stats.path_reread;
        d["omp_sync_events"] = stats.omp_sync_events;
        d["root_cause_points"] = stats.root_cause_points;
        d["root_cause_bytes"] = stats.root_cause_bytes;
        d["root_cause_read_seconds"] = stats.root_cause_read_seconds;
        d["root_cause_seconds"] = stats.root_cause_seconds;
        d["patterns"] = pattern_statistics(t, stats.patterns);
        py::dict seconds;
        for (const auto& [step, s] : stats.seconds) seconds[py::str(step)] = s;
        d["seconds"] = seconds;
        return py::make_tuple(p, d);
      },
      py::arg("trace"), py::arg("locations"), py::arg("time_correct") = false, py::arg("min_latency") = 0.0,
      py::arg("reread_path") = false, py::arg("threads") = 1, py::arg("root_cause") = false,
      py::arg("chunk_records") = analysis::AnalysisOptions{}.chunk_records, py::arg("min_thread_latency") = py::none(),
      "The call-path profile of `locations` (every peer of their messages and collectives among them) with "
      "Scalasca's wait-state metrics below `time` and clock_violations: (LocalProfile, stats dict with events read, "
      "message and collective records, clock-condition violations as recorded, events moved by the time correction "
      "(time_correct=True; min_latency in seconds, min_thread_latency for the OpenMP checks, None: min_latency), the bytes of the critical path's time lines at the end of the "
      "pass and the locations on the path read a second time (critical_path_bytes, critical_path_reread; OpenMP "
      "synchronization events, omp_sync_events; "
      "reread_path=True, for tests and benchmarks: every location on the path read again instead), and per pattern "
      "name its instance statistics; threads: how many threads read the events, whole processes each, and run the "
      "steps after the pass, chunks of locations of chunk_records records at least each (tests make it small); the "
      "report the same). root_cause=True: scout's delay costs and wait-state propagation too "
      "(root_cause_points: their synchronization points, root_cause_bytes: what they held, root_cause_read_seconds "
      "and root_cause_seconds: wall time of its second read of the events and of all of it; with time_correct on "
      "the corrected times); seconds: the wall seconds of each step, in the order they ran ({step: seconds}). FormatError "
      "on inconsistent communication.");
  m.def(
      "pattern_names",
      [] {
        std::vector<std::string> names;
        for (int p = 0; p < int(analysis::Pattern::Count); ++p)
          names.push_back(analysis::pattern_name(static_cast<analysis::Pattern>(p)));
        for (int p = 0; p < int(analysis::OmpPattern::Count); ++p)
          names.push_back(analysis::omp_pattern_name(static_cast<analysis::OmpPattern>(p)));
        return names;
      },
      "Unique names of the patterns the analysis computes (Scalasca's).");
  m.def(
      "root_cause_names",
      [] {
        std::vector<std::string> names;
        for (const auto* n : analysis::root_cause_metric_names(true)) names.push_back(n);
        return names;
      },
      "Unique names of the root-cause metrics (scout's; analyze(root_cause=True)), in scout's order.");
  m.def(
      "write_intercomm_trace",
      [](const std::string& directory, const std::string& name, const std::vector<std::vector<py::tuple>>& ranks,
         std::uint32_t group_a, std::uint64_t end) {
        const auto calls = calls_per_rank(ranks, intercomm_call);
        py::gil_scoped_release release;
        return trace::write_intercomm_trace(directory, name, calls, group_a, end);
      },
      py::arg("directory"), py::arg("name"), py::arg("ranks"), py::arg("group_a"), py::arg("end"),
      "Writes <directory>/<name>.otf2 with an inter-communicator between the first group_a ranks and the others: per "
      "rank a list of (call, enter_ns, leave_ns[, peer]), calls 'MPI_Send' / 'MPI_Recv' (on the inter-communicator, "
      "peer a rank of the other group), 'MPI_Barrier' (on it), 'MPI_Allreduce' (on MPI_COMM_WORLD), inside main from "
      "0 to `end` ns. Returns the events written.");
  m.def(
      "write_mpi_trace",
      [](const std::string& directory, const std::string& name, const std::vector<std::vector<py::tuple>>& ranks,
         std::uint64_t end) {
        const auto calls = calls_per_rank(ranks, mpi_call);
        py::gil_scoped_release release;
        return trace::write_mpi_trace(directory, name, calls, end);
      },
      py::arg("directory"), py::arg("name"), py::arg("ranks"), py::arg("end"),
      "Writes <directory>/<name>.otf2: per rank a list of (call, enter_ns, leave_ns, peers, tag[, bytes[, bytes_received]]), calls such as "
      "'MPI_Send', 'MPI_Ssend', 'MPI_Isend', 'MPI_Irecv', 'MPI_Wait' (completes the open MPI_Isend's too), 'MPI_Recv', 'MPI_Waitall', 'MPI_Barrier', 'MPI_Bcast' (peers = [root]), 'MPI_Allreduce', 'MPI_Alltoallv', 'MPI_Iscan', inside "
      "main from 0 to `end` ns. bytes (default 8) is the message or collective payload (a collective's bytes sent; "
      "bytes_received defaults to bytes); a collective's tag 1 puts it on MPI_COMM_SELF, tag 2 on MPI_COMM_REVERSED (every process, rank r being process P-1-r). Returns the events written.");
  // scout's performance-impact metrics over the ranks (analysis/impact.hpp): blobs as bytes.
  m.def(
      "impact_path_sums",
      [](const profile::LocalProfile& p) { return py::bytes(analysis::impact_path_sums(p)); }, py::arg("profile"),
      "Step 1 of the performance-impact metrics: per call path this profile's critical_path summed over its locations "
      "(a blob for merge_impact).");
  m.def(
      "merge_impact",
      [](const std::vector<py::bytes>& blobs) {
        std::vector<std::string> parts;
        for (const auto& b : blobs) parts.push_back(b);
        return py::bytes(analysis::merge_impact(parts));
      },
      py::arg("blobs"), "Every rank's blobs of one step, summed exactly per call path.");
  m.def(
      "impact_costs",
      [](const profile::LocalProfile& p, const py::bytes& paths, const std::vector<double>& program_spans,
         const std::vector<double>& local_time) {
        return py::bytes(analysis::impact_costs(p, std::string(paths), program_spans, local_time));
      },
      py::arg("profile"), py::arg("paths"), py::arg("program_spans"), py::arg("local_time") = std::vector<double>(),
      "Step 2: with the merged path sums, per call path the imbalance costs and headrooms of this profile's locations "
      "(program_spans: per column PROGRAM_BEGIN to PROGRAM_END in seconds, Replay.program_spans; local_time: "
      "Replay.local_time).");
  m.def(
      "add_impact",
      [](profile::LocalProfile& p, const py::bytes& paths, const py::bytes& costs, const std::vector<double>& local_time) {
        analysis::add_impact(p, std::string(paths), std::string(costs), local_time);
      },
      py::arg("profile"), py::arg("paths"), py::arg("costs"), py::arg("local_time") = std::vector<double>(),
      "Step 3: appends critical_path_activities, critical_imbalance_impact, inter_partition_imbalance and "
      "non_critical_path_activities (scout's) from the merged sums.");
  m.def(
      "write_omp_trace",
      [](const std::string& directory, const std::string& name, const std::vector<py::dict>& regions,
         std::uint32_t threads, std::uint64_t end, std::optional<std::pair<std::uint64_t, std::uint64_t>> main) {
        std::vector<trace::OmpParallel> parallel;
        for (const auto& r : regions) parallel.push_back(omp_parallel(r));
        py::gil_scoped_release release;
        std::optional<trace::OmpMain> window;
        if (main) window = trace::OmpMain{main->first, main->second};
        return trace::write_omp_trace(directory, name, parallel, threads, end, window);
      },
      py::arg("directory"), py::arg("name"), py::arg("regions"), py::arg("threads"), py::arg("end"),
      py::arg("main") = py::none(),
      "Writes <directory>/<name>.otf2: one process of `threads` threads; per parallel region a dict with 'fork', "
      "'join' (ns) and 'threads': per thread of the team a list of (call, enter_ns, leave_ns) for 'ibarrier', "
      "'barrier' or (call, enter_ns, leave_ns, acquire_ns, lock) for 'critical', 'lock', 'mutex', 'condwait'; tasks as "
      "('task_create', enter_ns, leave_ns, creator, generation), ('task_begin' | 'task_end', ns, creator, generation, "
      "untied), ('task_switch', ns, creator, generation), ('enter' | 'leave', ns, 'taskwait' | 'ibarrier' | 'work'); "
      "optional 'begin' and "
      "'end': per thread its team begin and end (default fork and join). `main` (enter_ns, leave_ns): the master "
      "records PROGRAM_BEGIN at 0 and PROGRAM_END at `end` around main's visit, with the program's region. "
      "Returns the events written.");
  m.def(
      "write_hybrid_trace",
      [](const std::string& directory, const std::string& name, const std::vector<py::dict>& ranks,
         std::uint32_t threads, std::uint64_t end) {
        std::vector<trace::HybridRank> hybrid(ranks.size());
        for (std::size_t p = 0; p < ranks.size(); ++p) {
          for (const auto& key : ranks[p])
            if (key.first.cast<std::string>() != "mpi" && key.first.cast<std::string>() != "regions")
              throw py::value_error("a hybrid rank is a dict of 'mpi' (calls) and 'regions' (parallel regions)");
          if (ranks[p].contains("mpi"))
            for (const auto& t : ranks[p]["mpi"].cast<std::vector<py::tuple>>()) hybrid[p].mpi.push_back(mpi_call(t));
          if (ranks[p].contains("regions"))
            for (const auto& r : ranks[p]["regions"].cast<std::vector<py::dict>>())
              hybrid[p].regions.push_back(omp_parallel(r));
        }
        py::gil_scoped_release release;
        return trace::write_hybrid_trace(directory, name, hybrid, threads, end);
      },
      py::arg("directory"), py::arg("name"), py::arg("ranks"), py::arg("threads"), py::arg("end"),
      "Writes <directory>/<name>.otf2: per rank (MPI process of `threads` OpenMP threads) a dict with 'mpi': the "
      "master's MPI calls as write_mpi_trace's, and 'regions': its parallel regions as write_omp_trace's, each call "
      "outside the regions or inside its master's team between the master's calls; main runs on every master from 0 "
      "to `end` ns. Returns the events written.");
}

}  // namespace cubescale::bindings
