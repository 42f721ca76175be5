// Thread aggregation (cpp/include/cubescale/threads/): whole reports and one rank's local
// profile, strategy chosen by name. The values are folded in C++ with the GIL released;
// Python only chooses the strategy and, if it wants, which regions are synchronization.
#include <pybind11/functional.h>
#include <pybind11/stl.h>

#include <memory>
#include <optional>
#include <string>

#include "cubescale/threads/aggregate.hpp"
#include "cubescale/threads/synchronization.hpp"
#include "register.hpp"

namespace py = pybind11;

namespace cubescale::bindings {
using namespace cubescale::threads;

namespace {

Options make_options(const std::string& strategy, std::optional<std::size_t> work_metric,
                     std::optional<std::vector<bool>> synchronization, std::size_t max_clusters, double tolerance) {
  Options o;
  const auto s = parse_strategy(strategy);
  if (!s) throw py::value_error("unknown thread aggregation strategy '" + strategy + "' (sum, set, key, calltree, value)");
  o.strategy = *s;
  o.work_metric = work_metric;
  if (synchronization) o.synchronization.assign(synchronization->begin(), synchronization->end());
  o.max_clusters = max_clusters;
  o.tolerance = tolerance;
  return o;
}

}  // namespace

void register_threads(py::module_& m) {
  m.def(
      "aggregate_report",
      [](const std::shared_ptr<cube::Report>& report, const std::string& strategy, std::optional<std::size_t> work_metric,
         std::optional<std::vector<bool>> synchronization, std::size_t max_clusters, double tolerance,
         std::optional<std::function<void(std::size_t, std::size_t)>> progress) {
        const auto options = make_options(strategy, work_metric, std::move(synchronization), max_clusters, tolerance);
        Progress report_progress;
        if (progress && *progress)
          report_progress = [&](std::size_t done, std::size_t total) {
            py::gil_scoped_acquire gil;
            (*progress)(done, total);
          };
        py::gil_scoped_release release;
        return aggregate_report(*report, options, report_progress);
      },
      py::arg("report"), py::arg("strategy"), py::kw_only(), py::arg("work_metric") = py::none(),
      py::arg("synchronization") = py::none(), py::arg("max_clusters") = 8, py::arg("tolerance") = 0.1,
      py::arg("progress") = py::none(),
      "A new report with every process's CPU threads aggregated by `strategy` (sum, set, key, calltree, "
      "value). work_metric: index of the time metric for key / value (default: 'time'); synchronization: one "
      "flag per region (True: not work); progress(done, total) after each metric. ValueError for options "
      "that do not fit the report.");
  m.def(
      "aggregate_profile",
      [](const std::shared_ptr<profile::LocalProfile>& p, const std::string& strategy, std::optional<std::size_t> work_metric,
         std::optional<std::vector<bool>> synchronization, std::size_t max_clusters, double tolerance) {
        const auto options = make_options(strategy, work_metric, std::move(synchronization), max_clusters, tolerance);
        py::gil_scoped_release release;
        return std::make_shared<profile::LocalProfile>(aggregate_profile(*p, options));
      },
      py::arg("profile"), py::arg("strategy"), py::kw_only(), py::arg("work_metric") = py::none(),
      py::arg("synchronization") = py::none(), py::arg("max_clusters") = 8, py::arg("tolerance") = 0.1,
      "One rank's local profile with its CPU threads aggregated (the same strategies and options as "
      "aggregate_report); other locations are kept.");
  m.def(
      "is_synchronization", [](const cube::Region& r) { return is_synchronization(r); }, py::arg("region"),
      "Whether time in this region is synchronization, idling or waiting (by role, else by name) rather than work.");
  m.def(
      "strategy_names",
      [] {
        std::vector<std::string> out;
        for (auto s : {Strategy::Sum, Strategy::Set, Strategy::Key, Strategy::Calltree, Strategy::Value})
          out.emplace_back(strategy_name(s));
        return out;
      },
      "The strategies' names: sum, set, key, calltree, value.");
}

}  // namespace cubescale::bindings
