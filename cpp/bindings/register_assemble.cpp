// Reports built from parts in Python (cubescale.ReportBuilder): the parts cross as lists of
// dicts (metrics, regions: few) and NumPy arrays (the call tree: possibly millions of cnodes).
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <initializer_list>
#include <utility>

#include "cubescale/cube/assemble.hpp"
#include "cubescale/cube/report.hpp"
#include "register.hpp"

namespace py = pybind11;

namespace cubescale::bindings {
using namespace cubescale::cube;

namespace {

std::string text(const py::dict& d, const char* key) {
  return d.contains(key) && !d[key].is_none() ? py::str(d[key]).cast<std::string>() : std::string();
}

Attributes attribute_list(const py::handle& mapping) {
  Attributes out;
  if (mapping.is_none()) return out;
  for (const auto& [k, v] : mapping.cast<py::dict>()) out.emplace_back(py::str(k), py::str(v));
  return out;
}

// Copies the text fields named in `fields` (member, dict key) from `d` into `out`.
template <class T>
void take_texts(const py::dict& d, T& out, std::initializer_list<std::pair<std::string T::*, const char*>> fields) {
  for (const auto& [member, key] : fields) out.*member = text(d, key);
}

Metric metric_of(const py::dict& d) {
  Metric m;
  take_texts(d, m, {{&Metric::uniq_name, "name"}, {&Metric::disp_name, "display_name"}, {&Metric::uom, "unit"},
                    {&Metric::descr, "description"}, {&Metric::url, "url"}});
  const auto dtype = text(d, "dtype");
  auto parsed = parse_data_type(dtype);
  if (!parsed) throw py::value_error("metric " + m.uniq_name + ": unknown data type \"" + dtype + "\"");
  m.dtype = std::move(*parsed);
  const auto kind = text(d, "kind");
  if (kind != "INCLUSIVE" && kind != "EXCLUSIVE")
    throw py::value_error("metric " + m.uniq_name + ": kind must be INCLUSIVE or EXCLUSIVE, not \"" + kind + "\"");
  m.kind = kind == "INCLUSIVE" ? MetricKind::Inclusive : MetricKind::Exclusive;
  m.parent = d["parent"].is_none() ? kNoParent : d["parent"].cast<std::uint32_t>();
  m.attrs = attribute_list(d["attrs"]);
  return m;
}

Region region_of(const py::dict& d) {
  Region r;
  take_texts(d, r, {{&Region::name, "name"}, {&Region::mangled_name, "mangled_name"}, {&Region::mod, "module"},
                    {&Region::paradigm, "paradigm"}, {&Region::role, "role"}, {&Region::url, "url"},
                    {&Region::descr, "description"}});
  r.begin = d["begin"].cast<std::int64_t>();
  r.end = d["end"].cast<std::int64_t>();
  return r;
}

}  // namespace

void register_assemble(py::module_& m) {
  m.def(
      "report_from_parts",
      [](const py::list& metric_dicts, const py::list& region_dicts,
         py::array_t<std::int64_t, py::array::c_style | py::array::forcecast> parents,
         py::array_t<std::int64_t, py::array::c_style | py::array::forcecast> regions, const py::list& parameters,
         const systree::SingleTree& system) {
        std::vector<Metric> metrics;
        for (const auto& d : metric_dicts) metrics.push_back(metric_of(d.cast<py::dict>()));
        std::vector<Region> region_list;
        for (const auto& d : region_dicts) region_list.push_back(region_of(d.cast<py::dict>()));
        if (parents.ndim() != 1 || regions.ndim() != 1 || parents.size() != regions.size())
          throw py::value_error("cnode parents and regions must be 1-d arrays of one length");
        CallTreeParts calls;
        const auto n = static_cast<std::size_t>(parents.size());
        calls.parents.resize(n);
        calls.regions.resize(n);
        const auto* p = parents.data();
        const auto* r = regions.data();
        for (std::size_t c = 0; c < n; ++c) {
          if (p[c] < -1 || p[c] >= static_cast<std::int64_t>(n) || r[c] < 0 || r[c] > 0xffffffffLL)
            throw py::value_error("cnode " + std::to_string(c) + ": parent or region out of range");
          calls.parents[c] = p[c] < 0 ? kNoParent : static_cast<std::uint32_t>(p[c]);
          calls.regions[c] = static_cast<std::uint32_t>(r[c]);
        }
        if (!parameters.empty()) {
          if (parameters.size() != n) throw py::value_error("parameters: one list per cnode, or none");
          for (const auto& per_cnode : parameters) {
            auto& lists = calls.parameters.emplace_back();
            for (const auto& one : per_cnode) lists.push_back(attribute_list(one));
          }
        }
        return std::make_shared<Report>(
            assemble_definitions(std::move(metrics), std::move(region_list), std::move(calls), system));
      },
      py::arg("metrics"), py::arg("regions"), py::arg("cnode_parents"), py::arg("cnode_regions"),
      py::arg("cnode_parameters"), py::arg("system"));
}

}  // namespace cubescale::bindings
