// Report algebra (cpp/include/cubescale/algebra/): unification of reports, diff / merge / mean /
// min / max and cut. Results are reports whose values are computed in C++ metric by metric on
// first use; Python only chooses the operation and resolves names to call paths.
#include <pybind11/stl.h>

#include <memory>
#include <string>
#include <vector>

#include "cubescale/algebra/combine.hpp"
#include "cubescale/algebra/cut.hpp"
#include "cubescale/algebra/unify.hpp"
#include "arrays.hpp"
#include "register.hpp"

namespace py = pybind11;

namespace cubescale::bindings {
using namespace cubescale::algebra;

namespace {

SystemMatch system_match(const std::string& name) {
  const auto s = parse_system_match(name);
  if (!s) throw py::value_error("system= must be 'auto', 'same', 'processes' or 'reduce', not '" + name + "'");
  return *s;
}

Inputs inputs_of(const std::vector<std::shared_ptr<cube::Report>>& reports) {
  return Inputs(reports.begin(), reports.end());
}

}  // namespace

void register_algebra(py::module_ m) {
  m.def(
      "combine",
      [](const std::string& operation, const std::vector<std::shared_ptr<cube::Report>>& reports, const std::string& system) {
        const auto op = parse_operation(operation);
        if (!op) throw py::value_error("unknown operation '" + operation + "' (diff, merge, mean, median, min, max)");
        const auto match = system_match(system);
        const auto inputs = inputs_of(reports);
        py::gil_scoped_release release;
        return std::static_pointer_cast<cube::Report>(combine(*op, inputs, match));
      },
      py::arg("operation"), py::arg("reports"), py::arg("system") = "auto",
      "A report over the unified definitions of `reports` whose values are `operation` (diff: A - B of two; "
      "merge, mean, median, min, max: of one or more) of the inputs' aligned values, computed per metric on first use. "
      "system: 'auto' (same layout, else collapsed to processes), 'same', 'processes' (Cube's -C) or 'reduce' (machines and nodes, Cube's -c). ValueError when the "
      "inputs cannot be unified.");
  m.def(
      "alignment",
      [](const std::vector<std::shared_ptr<cube::Report>>& reports, const std::string& system) {
        std::vector<const cube::Definitions*> defs;
        for (const auto& r : reports) defs.push_back(&r->definitions());
        const auto match = system_match(system);
        const auto unified = unify(defs, match);
        py::list out;
        for (const auto& map : unified.inputs)
          out.append(py::make_tuple(to_array(map.metrics), to_array(map.cnodes), to_array(map.locations)));
        return out;
      },
      py::arg("reports"), py::arg("system") = "auto",
      "Per report, where its metrics, call paths and locations are in the unified definitions that combine() "
      "uses: a tuple of three uint32 arrays indexed by the report's own metric, cnode and location indices.");
  m.def(
      "cut",
      [](const std::shared_ptr<cube::Report>& report, const std::vector<std::uint32_t>& roots,
         const std::vector<std::uint32_t>& prunes) {
        std::shared_ptr<const cube::Report> input = report;
        py::gil_scoped_release release;
        return cut(input, roots, prunes);
      },
      py::arg("report"), py::arg("roots"), py::arg("prunes"),
      "A report whose call tree is the subtrees of `roots` (cnode indices; empty: all), with the call paths "
      "`prunes` keeping their inclusive values and their descendants folded into their exclusive values.");
  m.def(
      "common",
      [](const std::vector<std::shared_ptr<cube::Report>>& reports) {
        const auto inputs = inputs_of(reports);
        py::gil_scoped_release release;
        return common(inputs);
      },
      py::arg("reports"),
      "Per report, the report reduced to the call paths that every report has (unified by region, call site, "
      "parameters and attributes from the roots down); the other call paths' exclusive values are folded into "
      "their nearest common ancestor. ValueError when no call path is common to all.");
  m.def(
      "stream_values", [](const std::shared_ptr<cube::Report>& report) { report->set_keep_loaded(false); },
      py::arg("report"),
      "From now on, values that `report` loads or computes are not kept: each use loads them again, so writing "
      "it needs memory for one metric at a time (for reports read once, as the command line does).");
}

}  // namespace cubescale::bindings
