// Wait-state analysis (cpp/include/cubescale/analysis/): the whole single-process analysis of a
// trace as one LocalProfile (the call-path profile with Scalasca's pattern metrics), the
// pattern names, and the writer of synthetic MPI traces with stated timings that the tests use.
#include <pybind11/stl.h>

#include <algorithm>
#include <memory>
#include <tuple>

#include "cubescale/analysis/omp_patterns.hpp"
#include "cubescale/analysis/waitstates.hpp"
#include "cubescale/trace/synthetic_mpi.hpp"
#include "cubescale/trace/synthetic_omp.hpp"
#include "register.hpp"

namespace py = pybind11;

namespace cubescale::bindings {

namespace {

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
    out[analysis::pattern_name(static_cast<analysis::Pattern>(p))] = d;
  }
  return out;
}

}  // namespace

void register_analysis(py::module_ m) {
  m.def(
      "analyze",
      [](const trace::Trace& t, std::vector<std::uint32_t> locations, bool time_correct, double min_latency) {
        analysis::AnalysisStats stats;
        std::shared_ptr<profile::LocalProfile> p;
        {
          py::gil_scoped_release release;
          p = std::make_shared<profile::LocalProfile>(
              analysis::analyze(t, locations, &stats, {time_correct, min_latency}));
        }
        py::dict d;
        d["events"] = stats.events;
        d["messages"] = stats.messages;
        d["collectives"] = stats.collectives;
        d["p2p_violations"] = stats.p2p_violations;
        d["collective_violations"] = stats.collective_violations;
        d["corrected_jumps"] = stats.corrected_jumps;
        d["patterns"] = pattern_statistics(t, stats.patterns);
        return py::make_tuple(p, d);
      },
      py::arg("trace"), py::arg("locations"), py::arg("time_correct") = false, py::arg("min_latency") = 0.0,
      "The call-path profile of `locations` (every peer of their messages and collectives among them) with "
      "Scalasca's wait-state metrics below `time` and clock_violations: (LocalProfile, stats dict with events read, "
      "message and collective records, clock-condition violations as recorded, events moved by the time correction "
      "(time_correct=True; min_latency in seconds), and per pattern name its instance statistics). FormatError on "
      "inconsistent communication.");
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
      "write_mpi_trace",
      [](const std::string& directory, const std::string& name, const std::vector<std::vector<py::tuple>>& ranks,
         std::uint64_t end) {
        // (call, enter, leave, peers, tag[, bytes]): the message or collective payload defaults to 8 bytes.
        std::vector<std::vector<trace::MpiCall>> calls(ranks.size());
        for (std::size_t r = 0; r < ranks.size(); ++r)
          for (const auto& t : ranks[r]) {
            if (t.size() != 5 && t.size() != 6)
              throw py::value_error("a call is (call, enter_ns, leave_ns, peers, tag[, bytes])");
            trace::MpiCall c{t[0].cast<std::string>(), t[1].cast<std::uint64_t>(), t[2].cast<std::uint64_t>(),
                             t[3].cast<std::vector<std::uint32_t>>(), t[4].cast<std::uint32_t>()};
            if (t.size() == 6) c.bytes = t[5].cast<std::uint64_t>();
            calls[r].push_back(std::move(c));
          }
        py::gil_scoped_release release;
        return trace::write_mpi_trace(directory, name, calls, end);
      },
      py::arg("directory"), py::arg("name"), py::arg("ranks"), py::arg("end"),
      "Writes <directory>/<name>.otf2: per rank a list of (call, enter_ns, leave_ns, peers, tag[, bytes]), calls such as "
      "'MPI_Send', 'MPI_Ssend', 'MPI_Isend', 'MPI_Irecv', 'MPI_Wait' (completes the open MPI_Isend's too), 'MPI_Recv', 'MPI_Waitall', 'MPI_Barrier', 'MPI_Bcast' (peers = [root]), 'MPI_Allreduce', inside "
      "main from 0 to `end` ns. bytes (default 8) is the message or collective payload. Returns the events written.");
  m.def(
      "write_omp_trace",
      [](const std::string& directory, const std::string& name, const std::vector<py::dict>& regions,
         std::uint32_t threads, std::uint64_t end) {
        std::vector<trace::OmpParallel> parallel;
        for (const auto& r : regions) {
          trace::OmpParallel p{r["fork"].cast<std::uint64_t>(), r["join"].cast<std::uint64_t>(), {}};
          for (const auto& calls : r["threads"].cast<std::vector<std::vector<py::tuple>>>()) {
            p.threads.emplace_back();
            for (const auto& t : calls) {
              if (t.size() != 3 && t.size() != 5)
                throw py::value_error("an OpenMP call is (call, enter_ns, leave_ns[, acquire_ns, lock])");
              trace::OmpCall c{t[0].cast<std::string>(), t[1].cast<std::uint64_t>(), t[2].cast<std::uint64_t>()};
              if (t.size() == 5) c.acquire = t[3].cast<std::uint64_t>(), c.lock = t[4].cast<std::uint32_t>();
              p.threads.back().push_back(std::move(c));
            }
          }
          parallel.push_back(std::move(p));
        }
        py::gil_scoped_release release;
        return trace::write_omp_trace(directory, name, parallel, threads, end);
      },
      py::arg("directory"), py::arg("name"), py::arg("regions"), py::arg("threads"), py::arg("end"),
      "Writes <directory>/<name>.otf2: one process of `threads` threads; per parallel region a dict with 'fork', "
      "'join' (ns) and 'threads': per thread of the team a list of (call, enter_ns, leave_ns) for 'ibarrier', "
      "'barrier' or (call, enter_ns, leave_ns, acquire_ns, lock) for 'critical', 'lock'. Returns the events written.");
}

}  // namespace cubescale::bindings
