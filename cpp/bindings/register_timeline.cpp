// Metric timelines and aggregate expressions (cpp/include/cubescale/timeline/): samples as
// NumPy arrays in, grid values as NumPy arrays out; partials of the staged evaluation cross
// as bytes, which cubescale.parallel.timeline moves along a reduction tree.
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <memory>
#include <string>

#include "cubescale/timeline/evaluate.hpp"
#include "cubescale/timeline/from_trace.hpp"
#include "cubescale/timeline/synthetic_trace.hpp"
#include "arrays.hpp"
#include "register.hpp"

namespace py = pybind11;

namespace cubescale::bindings {
using namespace cubescale::timeline;

namespace {

using Doubles = py::array_t<double, py::array::c_style | py::array::forcecast>;

std::vector<double> to_vector(const Doubles& a) {
  if (a.ndim() != 1) throw py::value_error("expected a 1-d array");
  return std::vector<double>(a.data(), a.data() + a.size());
}

py::array_t<double> to_numpy(const std::vector<double>& v) {
  py::array_t<double> out(static_cast<py::ssize_t>(v.size()));
  std::copy(v.begin(), v.end(), out.mutable_data());
  return out;
}

Grid make_grid(double start, double stop, std::size_t points) {
  Grid g{start, stop, points};
  g.check();
  return g;
}

const Node& aggregate_at(const Expression& e, std::size_t index) {
  const auto nodes = e.aggregates();
  if (index >= nodes.size())
    throw py::index_error("aggregate " + std::to_string(index) + " of " + std::to_string(nodes.size()));
  return *nodes[index];
}

}  // namespace

void register_timeline(py::module_& m) {
  m.attr("max_grid_points") = kMaxGridPoints;  // cubescale.timeline.MOST_POINTS
  py::class_<Timeline>(m, "Timeline", "One metric's samples on one system-tree element.")
      .def(py::init([](const Doubles& times, const Doubles& values, const std::string& mode, const std::string& timing) {
             const auto md = parse_mode(mode);
             if (!md) throw py::value_error("unknown metric mode '" + mode + "' (accumulated, absolute, relative)");
             const auto tm = parse_timing(timing);
             if (!tm) throw py::value_error("unknown timing '" + timing + "' (point, start, last, next)");
             return Timeline(to_vector(times), to_vector(values), *md, *tm);
           }),
           py::arg("times"), py::arg("values"), py::arg("mode") = "accumulated", py::arg("timing") = "point",
           "Samples (times ascending) in OTF2's metric mode and timing; relative samples are summed up.")
      .def_property_readonly(
          "times", [](const Timeline& t) { return to_numpy(t.times()); }, "Sample times (a copy).")
      .def_property_readonly(
          "values", [](const Timeline& t) { return to_numpy(t.values()); },
          "Sample values (a copy; relative samples already summed up).")
      .def_property_readonly(
          "mode", [](const Timeline& t) { return t.mode() == Mode::Absolute ? "absolute" : "accumulated"; },
          "accumulated or absolute (relative samples are stored accumulated).")
      .def(
          "resample",
          [](const Timeline& t, double start, double stop, std::size_t points, const std::string& interpolation) {
            const auto how = parse_interpolation(interpolation);
            if (!how) throw py::value_error("unknown interpolation '" + interpolation + "' (stairstep, linear)");
            const auto grid = make_grid(start, stop, points);  // checked before anything is allocated
            std::vector<double> out(points);
            resample(t, *how, grid, out.data());
            return to_numpy(out);
          },
          py::arg("start"), py::arg("stop"), py::arg("points"), py::arg("interpolation") = "stairstep",
          "Values at `points` equally spaced times from start to stop (the nearest sample holds outside).")
      .def("__len__", [](const Timeline& t) { return t.times().size(); }, "Number of samples.");

  py::class_<Expression, std::shared_ptr<Expression>>(m, "Expression",
                                                        "A metric expression in reverse Polish notation (Vampir's).")
      .def(py::init([](const std::string& text) { return std::make_shared<Expression>(parse_expression(text)); }),
           py::arg("text"), "Parses `text`; ValueError naming the position of the bad token.")
      .def_property_readonly(
          "aggregate_count", [](const Expression& e) { return e.aggregates().size(); },
          "Number of aggregate operations (each one reduced across workers).")
      .def("__str__", &Expression::to_string, "The expression in canonical reverse Polish notation.");

  py::class_<TimelineStore, std::shared_ptr<TimelineStore>>(
      m, "TimelineStore", "The timelines a worker owns, by (system-tree element, metric), over a tree's parent array.")
      .def(py::init([](const std::vector<std::int64_t>& parents) {
             std::vector<std::uint32_t> p;
             for (auto x : parents) {
               if (x < -1 || x >= 0xffffffffLL) throw py::value_error("parent out of range");
               p.push_back(x < 0 ? kNoElement : static_cast<std::uint32_t>(x));
             }
             return std::make_shared<TimelineStore>(std::move(p));
           }),
           py::arg("parents"), "A store over a system tree given by each element's parent (-1 for roots, preorder).")
      .def(
          "get",
          [](const TimelineStore& s, std::uint32_t element, const std::string& metric) -> std::optional<Timeline> {
            const auto* t = s.find(element, metric);
            return t ? std::optional<Timeline>(*t) : std::nullopt;
          },
          py::arg("element"), py::arg("metric"), "The timeline of `metric` on `element` (a copy), or None.")
      .def("add", &TimelineStore::add, py::arg("element"), py::arg("metric"), py::arg("timeline"),
           "Adds (or replaces) the timeline of `metric` on `element`.")
      .def("time_range", &TimelineStore::time_range,
           "(earliest, latest) sample time over all timelines; (inf, -inf) when there are none.")
      .def(
          "elements", [](const TimelineStore& s, const std::string& metric) {
            std::vector<std::uint32_t> out;
            for (const auto& [key, tl] : s.timelines())
              if (key.second == metric) out.push_back(key.first);
            return out;
          },
          py::arg("metric"), "Elements that have a timeline of `metric`.")
      .def(
          "metrics", [](const TimelineStore& s) {
            std::vector<std::pair<std::uint32_t, std::string>> out;
            for (const auto& [key, tl] : s.timelines()) out.push_back(key);
            return out;
          },
          "(element, metric) of every timeline.")
      .def("__len__", [](const TimelineStore& s) { return s.timelines().size(); }, "Number of timelines.");

  m.def(
      "partial_aggregate",
      [](const Expression& e, std::size_t index, const TimelineStore& store, std::uint32_t target, double start,
         double stop, std::size_t points) {
        const auto grid = make_grid(start, stop, points);
        std::string bytes;
        {
          py::gil_scoped_release release;
          bytes = partial_aggregate(aggregate_at(e, index), store, target, grid).serialize();
        }
        return py::bytes(bytes);
      },
      py::arg("expression"), py::arg("index"), py::arg("store"), py::arg("target"), py::arg("start"), py::arg("stop"),
      py::arg("points"),
      "This worker's partial of aggregate `index` for `target` as bytes (16 bytes per grid point + 13).");
  m.def(
      "merge_partials",
      [](const py::bytes& a, const py::bytes& b) {
        auto p = Partial::deserialize(std::string_view(a));
        merge(p, Partial::deserialize(std::string_view(b)));
        return py::bytes(p.serialize());
      },
      py::arg("a"), py::arg("b"), "Two partials of one aggregate merged (bytes).");
  m.def(
      "evaluate",
      [](const Expression& e, const std::vector<py::bytes>& partials, const TimelineStore& store, std::uint32_t target,
         double start, double stop, std::size_t points) {
        std::vector<Partial> ps;
        for (const auto& b : partials) ps.push_back(Partial::deserialize(std::string_view(b)));
        return to_numpy(evaluate(e, ps, store, target, make_grid(start, stop, points)));
      },
      py::arg("expression"), py::arg("partials"), py::arg("store"), py::arg("target"), py::arg("start"),
      py::arg("stop"), py::arg("points"),
      "The expression on the grid from the merged partials of its aggregates (in order).");
  m.def(
      "evaluate_local",
      [](const Expression& e, const TimelineStore& store, std::uint32_t target, double start, double stop,
         std::size_t points) {
        std::vector<double> out;
        {
          py::gil_scoped_release release;
          out = evaluate(e, store, target, make_grid(start, stop, points));
        }
        return to_numpy(out);
      },
      py::arg("expression"), py::arg("store"), py::arg("target"), py::arg("start"), py::arg("stop"), py::arg("points"),
      "The expression on the grid with every aggregate over this store alone (one process).");
  m.def(
      "write_synthetic_trace",
      [](const std::string& directory, const std::string& name, std::uint32_t nodes, std::uint32_t packages_per_node,
         std::uint32_t cores_per_package, std::uint32_t gpus_per_node, std::uint32_t seconds,
         std::uint32_t samples_per_second) {
        SyntheticMachine machine;
        machine.nodes = nodes, machine.packages_per_node = packages_per_node;
        machine.cores_per_package = cores_per_package, machine.gpus_per_node = gpus_per_node;
        machine.seconds = seconds, machine.samples_per_second = samples_per_second;
        py::gil_scoped_release release;
        return write_synthetic_trace(directory, name, machine);
      },
      py::arg("directory"), py::arg("name") = "traces", py::kw_only(), py::arg("nodes") = 2,
      py::arg("packages_per_node") = 2, py::arg("cores_per_package") = 4, py::arg("gpus_per_node") = 1,
      py::arg("seconds") = 60, py::arg("samples_per_second") = 1,
      "Writes an OTF2 trace of a machine with packages, cores and GPUs whose energy (J) and FLOP counters grow "
      "at known rates (see synthetic_trace.hpp); returns the anchor file's path.");
  m.def(
      "trace_timelines",
      [](const trace::Trace& t, std::optional<std::vector<std::uint32_t>> locations) {
        const auto system = trace::system_tree(t.definitions());
        TraceTimelines out{TimelineStore({})};
        {
          py::gil_scoped_release release;
          out = trace_timelines(t, system, locations ? *locations : t.all_locations());
        }
        py::dict stats;
        stats["metric_events"] = out.metric_events;
        stats["samples"] = out.samples;
        return py::make_tuple(std::make_shared<TimelineStore>(std::move(out.store)), stats);
      },
      py::arg("trace"), py::arg("locations") = py::none(),
      "The metric timelines of a trace's locations (dense indices; default all) as a TimelineStore over the "
      "trace's machine (elements as in Trace.system_tree()): class metrics on their location, instances on their "
      "scope. Also {metric_events, samples}.");
}

}  // namespace cubescale::bindings
