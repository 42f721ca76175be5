#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include "cubescale/systree/hwloc_levels.hpp"
#include "cubescale/systree/names.hpp"
#include "cubescale/systree/sequence.hpp"
#include "cubescale/systree/serialize.hpp"
#include "cubescale/systree/shapes.hpp"
#include "register.hpp"

namespace py = pybind11;

namespace cubescale::bindings {
using namespace cubescale::systree;

namespace {

using IndexArray = py::array_t<std::uint64_t, py::array::c_style | py::array::forcecast>;

std::vector<PathStep> to_path(const std::vector<std::pair<std::uint32_t, std::uint64_t>>& steps) {
  std::vector<PathStep> path;
  path.reserve(steps.size());
  for (auto [r, c] : steps) path.push_back({r, c});
  return path;
}

py::list from_path(const std::vector<PathStep>& path) {
  py::list out;
  for (auto s : path) out.append(py::make_tuple(s.record, s.copy));
  return out;
}

void register_sequence(py::module_& m) {
  py::class_<SequenceTree>(m, "SequenceTree")
      .def(py::init<>())
      .def("add_root", &SequenceTree::add_root)
      .def("add_record", &SequenceTree::add_record, py::arg("parent"), py::arg("kind"), py::arg("cls"),
           py::arg("copies") = 1, py::arg("properties") = Properties{})
      .def("set_root_properties", &SequenceTree::set_root_properties)
      .def("graft", &SequenceTree::graft)
      .def("canonicalize",
           [](SequenceTree& t) {
             const auto placement = t.canonicalize();
             py::array_t<std::int64_t> record(placement.size()), first(placement.size());
             auto r = record.mutable_unchecked<1>();
             auto f = first.mutable_unchecked<1>();
             for (std::size_t i = 0; i < placement.size(); ++i) {
               r(i) = placement[i].record == Placement::kGone ? -1 : placement[i].record;
               f(i) = static_cast<std::int64_t>(placement[i].first_copy);
             }
             return py::make_tuple(record, first);
           })
      .def_property_readonly("canonical", &SequenceTree::canonical)
      .def("__len__", &SequenceTree::size)
      .def_property_readonly("classes", &SequenceTree::classes)
      .def_property_readonly("max_depth", &SequenceTree::max_depth)
      .def("kind", [](const SequenceTree& t, std::uint32_t r) { return t.record(r).kind; })
      .def("class_name", &SequenceTree::class_name)
      .def("copies", [](const SequenceTree& t, std::uint32_t r) { return t.record(r).copies; })
      .def("parent", [](const SequenceTree& t, std::uint32_t r) -> py::object {
        const auto p = t.record(r).parent;
        return p == SequenceTree::kNone ? py::object(py::none()) : py::int_(p);
      })
      .def("depth", [](const SequenceTree& t, std::uint32_t r) { return t.record(r).depth; })
      .def("children", [](const SequenceTree& t, std::uint32_t r) { return t.record(r).children; })
      .def("properties", [](const SequenceTree& t, std::uint32_t r) { return t.record(r).properties; })
      .def("hash", &SequenceTree::hash)
      .def("count", &SequenceTree::count)
      .def("total", &SequenceTree::total)
      .def("index_of",
           [](const SequenceTree& t, const std::vector<std::pair<std::uint32_t, std::uint64_t>>& path, KindMask mask) {
             return t.index_of(to_path(path), mask);
           })
      .def("path_of", [](const SequenceTree& t, std::uint64_t index, KindMask mask) {
        return from_path(t.path_of(index, mask));
      })
      .def("paths_of",
           [](const SequenceTree& t, IndexArray indices, KindMask mask) {
             const auto n = static_cast<std::size_t>(indices.size());
             const std::size_t width = t.max_depth() + 1;
             py::array_t<std::uint32_t> records({n, width});
             py::array_t<std::uint64_t> copies({n, width});
             {
               py::gil_scoped_release release;
               t.paths_of(indices.data(), n, mask, records.mutable_data(), copies.mutable_data());
             }
             return py::make_tuple(records, copies);
           })
      .def("ancestors_of",
           [](const SequenceTree& t, IndexArray indices, KindMask from, std::uint32_t depth, KindMask to) {
             py::array_t<std::uint64_t> out(indices.size());
             {
               py::gil_scoped_release release;
               t.ancestors_of(indices.data(), static_cast<std::size_t>(indices.size()), from, depth, to,
                              out.mutable_data());
             }
             return out;
           })
      .def("multiplicities",
           [](const SequenceTree& t) {
             const auto v = t.multiplicities();
             return py::array_t<std::uint64_t>(v.size(), v.data());
           })
      .def("counts_per_class", &SequenceTree::counts_per_class)
      .def("counts_per_depth", &SequenceTree::counts_per_depth)
      .def("generated_name",
           [](const SequenceTree& t, const std::vector<std::pair<std::uint32_t, std::uint64_t>>& path) {
             return t.generated_name(to_path(path));
           })
      .def("__eq__", [](const SequenceTree& a, const SequenceTree& b) { return a == b; })
      .def("serialize", [](const SequenceTree& t) { return py::bytes(serialize(t)); })
      .def_static(
          "deserialize",
          [](py::bytes data, const std::string& source) { return deserialize(std::string_view(data), source); },
          py::arg("data"), py::arg("source") = "")
      .def("to_json", &to_json, py::arg("indent") = 2)
      .def("__copy__", [](const SequenceTree& t) { return SequenceTree(t); });
}

void register_single(py::module_& m) {
  py::class_<SingleTree>(m, "SingleTree")
      .def(py::init<>())
      .def("add_root", &SingleTree::add_root)
      .def("add_child", &SingleTree::add_child)
      .def("set_property", &SingleTree::set_property)
      .def("__len__", &SingleTree::size)
      .def("parent", [](const SingleTree& t, std::uint32_t n) -> py::object {
        const auto p = t.parent(n);
        return p == SingleTree::kNoParent ? py::object(py::none()) : py::int_(p);
      })
      .def("kind", &SingleTree::kind)
      .def("class_name", &SingleTree::cls)
      .def("name", [](const SingleTree& t, std::uint32_t n) { return std::string(t.name(n)); })
      .def("depth", &SingleTree::depth)
      .def("properties", &SingleTree::properties)
      .def("children", &SingleTree::children)
      .def("preorder", &SingleTree::preorder)
      .def("serialize", [](const SingleTree& t) { return py::bytes(t.serialize()); });
}

void register_names(py::module_& m) {
  py::class_<NameMap>(m, "NameMap")
      .def(py::init<>())
      .def("add", &NameMap::add)
      .def(
          "add_stream",
          [](NameMap& n, py::bytes data, const std::string& source) {
            return n.add_stream(std::string_view(data), source);
          },
          py::arg("data"), py::arg("source") = "")
      .def("find", [](const NameMap& n, std::uint64_t i) -> py::object {
        auto s = n.find(i);
        return s ? py::object(py::str(std::string(*s))) : py::object(py::none());
      })
      .def("__len__", &NameMap::size)
      .def("entries", &NameMap::entries)
      .def("serialize", [](const NameMap& n, std::size_t chunk) { return py::bytes(n.serialize(chunk)); },
           py::arg("chunk_entries") = 4096)
      .def_static(
          "deserialize",
          [](py::bytes data, const std::string& source) { return NameMap::deserialize(std::string_view(data), source); },
          py::arg("data"), py::arg("source") = "");
  // Streams over a bytes object that the reader keeps alive.
  struct PyNameStream {
    py::bytes data;
    NameStreamReader reader;
    PyNameStream(py::bytes d, const std::string& source)
        : data(std::move(d)), reader(std::string_view(data), source) {}
  };
  py::class_<PyNameStream>(m, "NameStreamReader")
      .def(py::init<py::bytes, const std::string&>(), py::arg("data"), py::arg("source") = "")
      .def("__iter__", [](PyNameStream& s) -> PyNameStream& { return s; })
      .def("__next__", [](PyNameStream& s) {
        std::vector<std::pair<std::uint64_t, std::string>> chunk;
        if (!s.reader.next(chunk)) throw py::stop_iteration();
        return chunk;
      });
}

void register_hwloc(py::module_& m) {
  py::class_<Topology>(m, "Topology")
      .def_static("local", &Topology::local)
      .def_static("synthetic", &Topology::synthetic)
      .def_static("from_xml", &Topology::from_xml)
      .def_property_readonly("is_this_system", &Topology::is_this_system)
      .def_property_readonly("pu_count", &Topology::pu_count)
      .def("current_binding", &Topology::current_binding);
  py::class_<HardwareLevels>(m, "HardwareLevels")
      .def_property_readonly("node", &HardwareLevels::node)
      .def_property_readonly("elements", &HardwareLevels::elements)
      .def("attach_point", &HardwareLevels::attach_point);
  m.def("add_hardware_levels", &add_hardware_levels, py::arg("tree"), py::arg("node"), py::arg("topology"));
  m.def("local_view", &local_view, py::arg("topology"), py::arg("host"), py::arg("process_name"),
        py::arg("threads"), py::arg("cpus") = "");
}

}  // namespace

void register_systree(py::module_& m) {
  py::enum_<Kind>(m, "Kind")
      .value("NODE", Kind::Node)
      .value("LOCATION_GROUP", Kind::LocationGroup)
      .value("LOCATION", Kind::Location);
  m.attr("MASK_NODES") = kNodes;
  m.attr("MASK_LOCATION_GROUPS") = kLocationGroups;
  m.attr("MASK_LOCATIONS") = kLocations;
  m.attr("MASK_ALL") = kAllKinds;
  m.def("kind_of_class", &kind_of_class);
  register_sequence(m);
  register_single(m);
  register_names(m);
  register_hwloc(m);
  m.def(
      "fold",
      [](const SingleTree& t, bool with_names, KindMask name_kinds) {
        NameMap names;
        auto seq = fold(t, with_names ? &names : nullptr, name_kinds);
        return py::make_tuple(std::move(seq), std::move(names));
      },
      py::arg("tree"), py::arg("with_names") = true, py::arg("name_kinds") = kNodes);
  m.def(
      "expand", [](const SequenceTree& t, const NameMap* names) { return expand(t, names); }, py::arg("tree"),
      py::arg("names") = nullptr);
  m.def("merge", &merge);
  m.def("single_serialized_size", &single_serialized_size);
  m.def("parse_shape", [](const std::string& spec) {
    std::vector<std::pair<std::string, std::uint64_t>> out;
    for (auto& l : parse_shape(spec)) out.emplace_back(l.cls, l.count);
    return out;
  });
  m.def("shape_preset", &shape_preset);
  m.def("regular_sequence", [](const std::vector<std::pair<std::string, std::uint64_t>>& levels) {
    std::vector<Level> ls;
    for (auto& [c, n] : levels) ls.push_back({c, n});
    return regular_sequence(ls);
  });
  m.def("figure4_sequence", &figure4_sequence);
}

}  // namespace cubescale::bindings
