// Wait-state analysis (cpp/include/cubescale/analysis/): the whole single-process analysis of a
// trace as one LocalProfile (the call-path profile with Scalasca's pattern metrics), the
// pattern names, and the writer of synthetic MPI traces with stated timings that the tests use.
#include <pybind11/stl.h>

#include <memory>
#include <tuple>

#include "cubescale/analysis/waitstates.hpp"
#include "cubescale/trace/synthetic_mpi.hpp"
#include "register.hpp"

namespace py = pybind11;

namespace cubescale::bindings {

void register_analysis(py::module_ m) {
  m.def(
      "analyze",
      [](const trace::Trace& t, std::vector<std::uint32_t> locations) {
        analysis::AnalysisStats stats;
        std::shared_ptr<profile::LocalProfile> p;
        {
          py::gil_scoped_release release;
          p = std::make_shared<profile::LocalProfile>(analysis::analyze(t, locations, &stats));
        }
        py::dict d;
        d["events"] = stats.events;
        d["messages"] = stats.messages;
        d["collectives"] = stats.collectives;
        return py::make_tuple(p, d);
      },
      py::arg("trace"), py::arg("locations"),
      "The call-path profile of `locations` (every peer of their messages and collectives among them) with "
      "Scalasca's wait-state metrics below `time`: (LocalProfile, stats dict with events read, message and "
      "collective records). FormatError on inconsistent communication.");
  m.def(
      "pattern_names",
      [] {
        std::vector<std::string> names;
        for (int p = 0; p < int(analysis::Pattern::Count); ++p)
          names.push_back(analysis::pattern_name(static_cast<analysis::Pattern>(p)));
        return names;
      },
      "Unique names of the patterns the analysis computes (Scalasca's).");
  m.def(
      "write_mpi_trace",
      [](const std::string& directory, const std::string& name,
         const std::vector<std::vector<std::tuple<std::string, std::uint64_t, std::uint64_t, std::vector<std::uint32_t>,
                                                  std::uint32_t>>>& ranks,
         std::uint64_t end) {
        std::vector<std::vector<trace::MpiCall>> calls(ranks.size());
        for (std::size_t r = 0; r < ranks.size(); ++r)
          for (const auto& [call, enter, leave, peers, tag] : ranks[r]) calls[r].push_back({call, enter, leave, peers, tag});
        py::gil_scoped_release release;
        return trace::write_mpi_trace(directory, name, calls, end);
      },
      py::arg("directory"), py::arg("name"), py::arg("ranks"), py::arg("end"),
      "Writes <directory>/<name>.otf2: per rank a list of (call, enter_ns, leave_ns, peers, tag), calls such as "
      "'MPI_Send', 'MPI_Recv', 'MPI_Waitall', 'MPI_Barrier', 'MPI_Bcast' (peers = [root]), 'MPI_Allreduce', inside "
      "main from 0 to `end` ns. Returns the events written.");
}

}  // namespace cubescale::bindings
