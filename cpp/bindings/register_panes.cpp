// Cube's panes for Python (cpp/include/cubescale/cube/panes.hpp): per-cnode totals as a
// read-only NumPy view over the report's cached totals (no copy, kept alive by the array),
// one call path's row as a fresh float64 array. Both release the GIL while they compute.
#include <pybind11/numpy.h>

#include <memory>

#include "cubescale/cube/report.hpp"
#include "register.hpp"

namespace py = pybind11;

namespace cubescale::bindings {
using namespace cubescale::cube;

namespace {

MetricKind kind_of(bool inclusive) { return inclusive ? MetricKind::Inclusive : MetricKind::Exclusive; }

void check_metric(const Report& r, std::size_t metric) {
  if (metric >= r.metric_count()) throw py::index_error("metric index out of range");
}

// A read-only float64 view of one kind's totals; the capsule keeps the (shared) totals alive.
py::array_t<double> totals_view(std::shared_ptr<const CnodeTotals> totals, MetricKind kind) {
  const auto& values = totals->of(kind);
  auto* holder = new std::shared_ptr<const CnodeTotals>(std::move(totals));
  py::capsule base(holder, [](void* p) { delete static_cast<std::shared_ptr<const CnodeTotals>*>(p); });
  py::array_t<double> out({static_cast<py::ssize_t>(values.size())}, {py::ssize_t(sizeof(double))}, values.data(), base);
  py::detail::array_proxy(out.ptr())->flags &= ~py::detail::npy_api::NPY_ARRAY_WRITEABLE_;
  return out;
}

}  // namespace

void register_panes(py::module_& m) {
  m.def(
      "cnode_totals",
      [](const Report& r, std::size_t metric, bool inclusive) {
        check_metric(r, metric);
        std::shared_ptr<const CnodeTotals> totals;
        {
          py::gil_scoped_release release;
          totals = r.cnode_totals(metric);
        }
        return totals_view(std::move(totals), kind_of(inclusive));
      },
      py::arg("report"), py::arg("metric"), py::arg("inclusive"),
      "Per call path, a metric over all locations (sum, or min / max for MIN/MAXDOUBLE) with or without\n"
      "callees: a read-only float64 view of totals the report computes once per metric, in one pass\n"
      "over the stored values on all cores.");
  m.def(
      "cnode_row",
      [](const Report& r, std::size_t metric, bool inclusive, std::size_t cnode) {
        check_metric(r, metric);
        if (cnode >= r.cnode_count()) throw py::index_error("call path index out of range");
        py::array_t<double> out(static_cast<py::ssize_t>(r.location_count()));
        double* data = out.mutable_data();
        {
          py::gil_scoped_release release;
          r.cnode_row(metric, kind_of(inclusive), cnode, data);
        }
        return out;
      },
      py::arg("report"), py::arg("metric"), py::arg("inclusive"), py::arg("cnode"),
      "One call path's values per location as float64, with or without callees, computed from the\n"
      "stored values without converting the whole matrix.");
}

}  // namespace cubescale::bindings
