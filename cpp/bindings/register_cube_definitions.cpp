// The vocabulary of report definitions across the boundary: CUBE data types, and metric and
// region definitions as bound structs whose fields carry the same Python names in both
// directions (a report hands them out, ReportBuilder passes them back). Constructors take
// keyword arguments only, so an unknown field is a TypeError, and setters check values (an
// unknown data type or kind is a ValueError). Call trees cross as NumPy arrays (possibly
// millions of cnodes) in report_from_parts.
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <optional>
#include <string>
#include <utility>

#include "cubescale/cube/assemble.hpp"
#include "cubescale/cube/dtype.hpp"
#include "cubescale/cube/report.hpp"
#include "register.hpp"

namespace py = pybind11;

namespace cubescale::bindings {
using namespace cubescale::cube;

namespace {

py::dict to_dict(const Attributes& a) {
  py::dict d;
  for (const auto& [k, v] : a) d[py::str(k)] = v;
  return d;
}

Attributes from_dict(const py::dict& d) {
  Attributes out;
  for (const auto& [k, v] : d) out.emplace_back(py::str(k), py::str(v));
  return out;
}

DataType data_type(const std::string& name) {
  auto parsed = parse_data_type(name);
  if (!parsed) throw py::value_error("unknown CUBE data type \"" + name + "\"");
  return std::move(*parsed);
}

// INCLUSIVE / EXCLUSIVE, or a derived type whose values a CubePL expression computes.
void set_kind(Metric& m, const std::string& text) {
  static constexpr const char* kKinds[] = {"INCLUSIVE", "EXCLUSIVE", "POSTDERIVED", "PREDERIVED_INCLUSIVE",
                                           "PREDERIVED_EXCLUSIVE"};
  for (const char* k : kKinds) {
    if (text == k) return set_metric_type(m, text);
  }
  throw py::value_error("metric kind must be INCLUSIVE or EXCLUSIVE (or derived: POSTDERIVED, PREDERIVED_INCLUSIVE, "
                        "PREDERIVED_EXCLUSIVE), not \"" + text + "\"");
}

std::optional<std::uint32_t> optional_parent(std::uint32_t p) {
  if (p == kNoParent) return std::nullopt;
  return p;
}

void register_data_types(py::module_& m) {
  py::enum_<ValueKind>(m, "ValueKind", "How one value of a CUBE data type is laid out.")
      .value("INT8", ValueKind::Int8).value("INT16", ValueKind::Int16).value("INT32", ValueKind::Int32)
      .value("INT64", ValueKind::Int64).value("UINT8", ValueKind::UInt8).value("UINT16", ValueKind::UInt16)
      .value("UINT32", ValueKind::UInt32).value("UINT64", ValueKind::UInt64).value("DOUBLE", ValueKind::Double)
      .value("MINDOUBLE", ValueKind::MinDouble).value("MAXDOUBLE", ValueKind::MaxDouble)
      .value("TAU_ATOMIC", ValueKind::TauAtomic, "uint32 N, f64 min, max, sum, sum2 (packed, 36 bytes)")
      .value("RATE", ValueKind::Rate, "f64 main, f64 time")
      .value("COMPLEX", ValueKind::Complex, "f64 real, f64 imaginary")
      .value("NDOUBLES", ValueKind::NDoubles, "n x f64")
      .value("HISTOGRAM", ValueKind::Histogram, "f64 min, f64 max, n x f64 bins")
      .value("SCALE_FUNC", ValueKind::ScaleFunc, "a scaling function in an 848-byte slot");
  py::class_<DataType>(m, "DataType", "A CUBE data type parsed from its name (DOUBLE, UINT64, NDOUBLES(4) ...).")
      .def(py::init(&data_type), py::arg("name"), "Parses a data type name; ValueError if unknown.")
      .def_readonly("name", &DataType::name, "The name as spelled in the file.")
      .def_readonly("kind", &DataType::kind, "The value layout.")
      .def_readonly("count", &DataType::count, "n of NDOUBLES(n) / HISTOGRAM(n), else 1.")
      .def_property_readonly("width", &DataType::width, "Bytes per value.")
      .def_property_readonly("is_integer", &DataType::is_integer, "True for the integer types.")
      .def("__repr__", [](const DataType& t) { return "DataType(\"" + t.name + "\")"; }, "DataType(\"NAME\").");
  m.def(
      "data_type_names",
      []() {
        std::vector<std::string> out;
        for (auto name : data_type_names()) out.emplace_back(name);
        return out;
      },
      "Every plain data type name the reader accepts (aliases included; NDOUBLES(n) and HISTOGRAM(n) besides).");
}

void register_metric_definition(py::module_& m) {
  py::class_<Metric>(m, "Metric",
                     "A metric as a report defines it. Fields: name (unique name), display_name, unit, dtype, "
                     "kind (INCLUSIVE / EXCLUSIVE / POSTDERIVED / PREDERIVED_INCLUSIVE / PREDERIVED_EXCLUSIVE), "
                     "parent (index or None), description, url, value, attrs, expression, init_expression.")
      .def(py::init([](const std::string& name, const std::string& unit, const std::string& dtype,
                       const std::string& kind, std::optional<std::uint32_t> parent,
                       std::optional<std::string> display_name, const std::string& description,
                       const std::string& url, const std::string& value, const py::dict& attrs,
                       const std::string& expression, const std::string& init_expression) {
             Metric out;
             out.uniq_name = name;
             out.disp_name = display_name.value_or(name);
             out.uom = unit;
             out.dtype = data_type(dtype);
             set_kind(out, kind);
             out.parent = parent.value_or(kNoParent);
             out.descr = description;
             out.url = url;
             out.val = value;
             out.attrs = from_dict(attrs);
             out.cubepl = expression;
             out.cubepl_init = init_expression;
             return out;
           }),
           py::kw_only(), py::arg("name"), py::arg("unit") = "", py::arg("dtype") = "DOUBLE",
           py::arg("kind") = "EXCLUSIVE", py::arg("parent") = py::none(), py::arg("display_name") = py::none(),
           py::arg("description") = "", py::arg("url") = "", py::arg("value") = "", py::arg("attrs") = py::dict(),
           py::arg("expression") = "", py::arg("init_expression") = "",
           "A metric definition; every field by keyword (an unknown one is a TypeError).")
      .def_readonly("file_id", &Metric::file_id, "The metric's id in the file it was read from (0 if built).")
      .def_readwrite("name", &Metric::uniq_name, "The unique name.")
      .def_readwrite("display_name", &Metric::disp_name, "The name Cube shows.")
      .def_readwrite("unit", &Metric::uom, "The unit of measurement (sec, occ, bytes ...).")
      .def_property(
          "dtype", [](const Metric& x) { return x.dtype.name; },
          [](Metric& x, const std::string& name) { x.dtype = data_type(name); }, "The CUBE data type name.")
      .def_property(
          "kind", [](const Metric& x) { return metric_type_name(x); }, &set_kind,
          "How values are stored along the call tree (INCLUSIVE, EXCLUSIVE), or the derived type whose "
          "CubePL expression computes them (POSTDERIVED, PREDERIVED_INCLUSIVE, PREDERIVED_EXCLUSIVE).")
      .def_readwrite("expression", &Metric::cubepl, "The CubePL program (<cubepl>) of a derived metric.")
      .def_readwrite("init_expression", &Metric::cubepl_init,
                     "The CubePL program run once before any derived metric is computed (<cubeplinit>).")
      .def_property(
          "parent", [](const Metric& x) { return optional_parent(x.parent); },
          [](Metric& x, std::optional<std::uint32_t> p) { x.parent = p.value_or(kNoParent); },
          "Index of the parent metric, None for a root.")
      .def_readwrite("description", &Metric::descr, "The description.")
      .def_readwrite("url", &Metric::url, "A documentation URL.")
      .def_readwrite("value", &Metric::val, "CUBE's <val> text (rarely used).")
      .def_property(
          "attrs", [](const Metric& x) { return to_dict(x.attrs); },
          [](Metric& x, const py::dict& d) { x.attrs = from_dict(d); }, "The <attr> key/value pairs.")
      .def("__repr__", [](const Metric& x) { return "Metric(name=\"" + x.uniq_name + "\")"; },
           "Metric(name=\"...\").");
}

void register_region_definition(py::module_& m) {
  py::class_<Region>(m, "Region",
                     "A code region as a report defines it. Fields: name, mangled_name, module, begin, end, "
                     "paradigm, role, description, url, attrs.")
      .def(py::init([](const std::string& name, std::optional<std::string> mangled_name, const std::string& module,
                       std::int64_t begin, std::int64_t end, const std::string& paradigm, const std::string& role,
                       const std::string& description, const std::string& url, const py::dict& attrs) {
             Region out;
             out.name = name;
             out.mangled_name = mangled_name.value_or(name);
             out.mod = module;
             out.begin = begin;
             out.end = end;
             out.paradigm = paradigm;
             out.role = role;
             out.descr = description;
             out.url = url;
             out.attrs = from_dict(attrs);
             return out;
           }),
           py::kw_only(), py::arg("name"), py::arg("mangled_name") = py::none(), py::arg("module") = "",
           py::arg("begin") = -1, py::arg("end") = -1, py::arg("paradigm") = "user", py::arg("role") = "function",
           py::arg("description") = "", py::arg("url") = "", py::arg("attrs") = py::dict(),
           "A region definition; every field by keyword (an unknown one is a TypeError).")
      .def_readonly("file_id", &Region::file_id, "The region's id in the file it was read from (0 if built).")
      .def_readwrite("name", &Region::name, "The region's name.")
      .def_readwrite("mangled_name", &Region::mangled_name, "The mangled (linker) name.")
      .def_readwrite("module", &Region::mod, "The source file or module.")
      .def_readwrite("begin", &Region::begin, "First source line (-1: unknown).")
      .def_readwrite("end", &Region::end, "Last source line (-1: unknown).")
      .def_readwrite("paradigm", &Region::paradigm, "mpi, openmp, user, cuda ...")
      .def_readwrite("role", &Region::role, "function, loop, barrier, wrapper ...")
      .def_readwrite("description", &Region::descr, "The description.")
      .def_readwrite("url", &Region::url, "A documentation URL.")
      .def_property(
          "attrs", [](const Region& x) { return to_dict(x.attrs); },
          [](Region& x, const py::dict& d) { x.attrs = from_dict(d); }, "The <attr> key/value pairs.")
      .def("__repr__", [](const Region& x) { return "Region(name=\"" + x.name + "\")"; },
           "Region(name=\"...\").");
}

Attributes attribute_list(const py::handle& mapping) {
  if (mapping.is_none()) return {};
  return from_dict(mapping.cast<py::dict>());
}

CallTreeParts call_tree(py::array_t<std::int64_t, py::array::c_style | py::array::forcecast> parents,
                        py::array_t<std::int64_t, py::array::c_style | py::array::forcecast> regions,
                        const py::list& parameters) {
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
  return calls;
}

}  // namespace

void register_cube_definitions(py::module_& m) {
  register_data_types(m);
  register_metric_definition(m);
  register_region_definition(m);
}

void register_cube_builder(py::module_& m) {
  m.def(
      "report_from_parts",
      [](std::vector<Metric> metrics, std::vector<Region> regions,
         py::array_t<std::int64_t, py::array::c_style | py::array::forcecast> parents,
         py::array_t<std::int64_t, py::array::c_style | py::array::forcecast> cnode_regions,
         const py::list& parameters, const systree::SingleNodeTree& system) {
        auto calls = call_tree(parents, cnode_regions, parameters);
        return std::make_shared<Report>(
            assemble_definitions(std::move(metrics), std::move(regions), std::move(calls), system));
      },
      py::arg("metrics"), py::arg("regions"), py::arg("cnode_parents"), py::arg("cnode_regions"),
      py::arg("cnode_parameters"), py::arg("system"),
      "A report with all values zero from metric and region definitions, a call tree in preorder (parent "
      "indices, -1 for roots, and region indices; per cnode a list of <parameter> attribute dicts, or an empty "
      "list) and a system tree; ValueError naming the bad element.");
}

}  // namespace cubescale::bindings
