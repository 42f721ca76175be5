#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <functional>
#include <optional>

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
  py::class_<SystemTree>(m, "SystemTree",
                           "A system tree in sequence form: records {kind, class, copies, children}; identical "
                           "sibling subtrees are one record with a copy count (the Score-P system-description paper).")
      .def(py::init<>(), "An empty tree; add a root with add_root.")
      .def("add_root", &SystemTree::add_root, py::arg("kind"), py::arg("cls"),
           "Adds the root record (one copy) and returns its index.")
      .def("add_record", &SystemTree::add_record, py::arg("parent"), py::arg("kind"), py::arg("cls"),
           py::arg("copies") = 1, py::arg("properties") = Properties{},
           "Adds a record below `parent` standing for `copies` identical subtrees; returns its index.")
      .def("set_root_properties", &SystemTree::set_root_properties, py::arg("properties"),
           "Replaces the root's properties (key/value pairs).")
      .def(
          "canonicalize",
           [](SystemTree& t) {
             const auto placement = t.canonicalize();
             py::array_t<std::int64_t> record(placement.size()), first(placement.size());
             auto r = record.mutable_unchecked<1>();
             auto f = first.mutable_unchecked<1>();
             for (std::size_t i = 0; i < placement.size(); ++i) {
               r(i) = placement[i].record == Placement::kGone ? -1 : placement[i].record;
               f(i) = static_cast<std::int64_t>(placement[i].first_copy);
             }
             return py::make_tuple(record, first);
           },
           "Folds identical sibling subtrees into one record (bottom-up structural hashing). Returns, per old "
           "record, its new record (-1 if folded away) and the first copy it occupies there.")
      .def_property_readonly("canonical", &SystemTree::canonical, "True when no two sibling records are equal.")
      .def("__len__", &SystemTree::size, "Number of records.")
      .def_property_readonly("classes", &SystemTree::classes, "The class names, indexed by class id.")
      .def_property_readonly("max_depth", &SystemTree::max_depth, "Depth of the deepest record (root: 0).")
      .def(
          "kind", [](const SystemTree& t, std::uint32_t r) { return t.record(r).kind; }, py::arg("record"),
          "The kind (node, location group, location) of a record.")
      .def("class_name", &SystemTree::class_name, py::arg("record"), "The class name of a record.")
      .def(
          "copies", [](const SystemTree& t, std::uint32_t r) { return t.record(r).copies; }, py::arg("record"),
          "How many identical subtrees a record stands for.")
      .def(
          "parent",
          [](const SystemTree& t, std::uint32_t r) -> std::optional<std::uint32_t> {
            const auto p = t.record(r).parent;
            if (p == SystemTree::kNone) return std::nullopt;
            return p;
          },
          py::arg("record"), "The parent record, None for the root.")
      .def(
          "depth", [](const SystemTree& t, std::uint32_t r) { return t.record(r).depth; }, py::arg("record"),
          "Depth of a record (root: 0).")
      .def(
          "children", [](const SystemTree& t, std::uint32_t r) { return t.record(r).children; }, py::arg("record"),
          "The child records in order.")
      .def(
          "properties", [](const SystemTree& t, std::uint32_t r) { return t.record(r).properties; },
          py::arg("record"), "The key/value properties of a record.")
      .def("hash", &SystemTree::hash, py::arg("record"), "Structural hash of the subtree below a record.")
      .def("count", &SystemTree::count, py::arg("record"), py::arg("mask"),
           "Elements of the kinds in `mask` in one copy of the subtree below a record.")
      .def("total", &SystemTree::total, py::arg("mask"), "Elements of the kinds in `mask` in the expanded tree.")
      .def(
          "index_of",
          [](const SystemTree& t, const std::vector<std::pair<std::uint32_t, std::uint64_t>>& path, KindMask mask) {
            return t.index_of(to_path(path), mask);
          },
          py::arg("path"), py::arg("mask"),
          "Depth-first index among the kinds in `mask` of the element at `path` ((record, copy) from the root), "
          "computed without expanding.")
      .def(
          "path_of",
          [](const SystemTree& t, std::uint64_t index, KindMask mask) { return from_path(t.path_of(index, mask)); },
          py::arg("index"), py::arg("mask"), "The (record, copy) path from the root of the element with this index.")
      .def("paths_of",
           [](const SystemTree& t, IndexArray indices, KindMask mask) {
             const auto n = static_cast<std::size_t>(indices.size());
             const std::size_t width = t.max_depth() + 1;
             py::array_t<std::uint32_t> records({n, width});
             py::array_t<std::uint64_t> copies({n, width});
             {
               py::gil_scoped_release release;
               t.paths_of(indices.data(), n, mask, records.mutable_data(), copies.mutable_data());
             }
             return py::make_tuple(records, copies);
           },
           py::arg("indices"), py::arg("mask"),
           "Paths of many elements at once: arrays [n, max_depth + 1] of records and copies.")
      .def("ancestors_of",
           [](const SystemTree& t, IndexArray indices, KindMask from, std::uint32_t depth, KindMask to) {
             py::array_t<std::uint64_t> out(indices.size());
             {
               py::gil_scoped_release release;
               t.ancestors_of(indices.data(), static_cast<std::size_t>(indices.size()), from, depth, to,
                              out.mutable_data());
             }
             return out;
           },
           py::arg("indices"), py::arg("from_mask"), py::arg("depth"), py::arg("to_mask"),
           "For elements given by index among `from_mask`, the index among `to_mask` of their ancestor at `depth`.")
      .def(
          "multiplicities",
          [](const SystemTree& t) {
            const auto v = t.multiplicities();
            return py::array_t<std::uint64_t>(v.size(), v.data());
          },
          "Per record, how many elements of the expanded tree it stands for.")
      .def("counts_per_class", &SystemTree::counts_per_class, "Elements of the expanded tree per class name.")
      .def("counts_per_depth", &SystemTree::counts_per_depth, "Elements of the expanded tree per depth.")
      .def(
          "generated_name",
          [](const SystemTree& t, const std::vector<std::pair<std::uint32_t, std::uint64_t>>& path) {
            return t.generated_name(to_path(path));
          },
          py::arg("path"), "The Score-P-style name (class and running number) of the element at `path`.")
      .def(
          "__eq__",
          [](const SystemTree& a, const py::object& other) -> py::object {
            if (!py::isinstance<SystemTree>(other)) return py::reinterpret_borrow<py::object>(Py_NotImplemented);
            return py::bool_(a == other.cast<const SystemTree&>());
          },
          py::arg("other"), "Structural equality (records, copies, classes, properties).")
      .def(
          "__hash__", [](const SystemTree& t) { return t.size() ? t.hash(0) : 0; },
          "The root's structural hash (equal trees hash equally).")
      .def(
          "serialize", [](const SystemTree& t) { return py::bytes(serialize(t)); },
          "The compact binary form (see deserialize).")
      .def_static(
          "deserialize",
          [](py::bytes data, const std::string& source) { return deserialize(std::string_view(data), source); },
          py::arg("data"), py::arg("source") = "",
          "Reads the binary form; FormatError naming `source` and the offset for bad input.")
      .def("to_json", &to_json, py::arg("indent") = 2, "The records as JSON text (indent < 0: one line).");
}

void register_single(py::module_& m) {
  py::class_<SingleNodeTree>(m, "SingleNodeTree", "A system tree with one element per node, process and thread.")
      .def(py::init<>(), "An empty tree; add a root with add_root.")
      .def("add_root", &SingleNodeTree::add_root, py::arg("kind"), py::arg("cls"), py::arg("name"),
           "Adds the root element and returns its index.")
      .def("add_child", &SingleNodeTree::add_child, py::arg("parent"), py::arg("kind"), py::arg("cls"), py::arg("name"),
           "Adds an element below `parent` and returns its index.")
      .def("set_property", &SingleNodeTree::set_property, py::arg("element"), py::arg("key"), py::arg("value"),
           "Sets a key/value property of an element.")
      .def("__len__", &SingleNodeTree::size, "Number of elements.")
      .def(
          "parent",
          [](const SingleNodeTree& t, std::uint32_t n) -> std::optional<std::uint32_t> {
            const auto p = t.parent(n);
            if (p == SingleNodeTree::kNoParent) return std::nullopt;
            return p;
          },
          py::arg("element"), "The parent element, None for the root.")
      .def("kind", &SingleNodeTree::kind, py::arg("element"), "The kind of an element.")
      .def("class_name", &SingleNodeTree::cls, py::arg("element"), "The class name of an element.")
      .def(
          "name", [](const SingleNodeTree& t, std::uint32_t n) { return std::string(t.name(n)); }, py::arg("element"),
          "The name of an element.")
      .def("depth", &SingleNodeTree::depth, py::arg("element"), "Depth of an element (root: 0).")
      .def("properties", &SingleNodeTree::properties, py::arg("element"), "The key/value properties of an element.")
      .def("children", &SingleNodeTree::children, py::arg("element"), "The child elements in order.")
      .def("preorder", &SingleNodeTree::preorder, "All elements in depth-first preorder.")
      .def(
          "serialize", [](const SingleNodeTree& t) { return py::bytes(t.serialize()); },
          "The binary form (its size is what the single-node form costs).");
}

void register_names(py::module_& m) {
  py::class_<NameMap>(m, "NameMap", "Real names (e.g. host names) of elements, by all-kinds depth-first index.")
      .def(py::init<>(), "An empty map.")
      .def("add", &NameMap::add, py::arg("index"), py::arg("name"), "Adds the name of the element at `index`.")
      .def(
          "add_stream",
          [](NameMap& n, py::bytes data, const std::string& source) {
            return n.add_stream(std::string_view(data), source);
          },
          py::arg("data"), py::arg("source") = "",
          "Adds the entries of a name stream chunk; returns the last index added, or None if it was empty.")
      .def(
          "find",
          [](const NameMap& n, std::uint64_t i) -> std::optional<std::string> {
            auto s = n.find(i);
            if (!s) return std::nullopt;
            return std::string(*s);
          },
          py::arg("index"), "The name of the element at `index`, or None.")
      .def("__len__", &NameMap::size, "Number of names.")
      .def("entries", &NameMap::entries, "All (index, name) pairs in index order.")
      .def(
          "serialize", [](const NameMap& n, std::size_t chunk) { return py::bytes(n.serialize(chunk)); },
          py::arg("chunk_entries") = 4096, "The streamable binary form: chunks of at most `chunk_entries` names.")
      .def_static(
          "deserialize",
          [](py::bytes data, const std::string& source) { return NameMap::deserialize(std::string_view(data), source); },
          py::arg("data"), py::arg("source") = "", "Reads the binary form; FormatError naming `source` for bad input.");
  // Streams over a bytes object that the reader keeps alive.
  struct PyNameStream {
    py::bytes data;
    NameStreamReader reader;
    PyNameStream(py::bytes d, const std::string& source)
        : data(std::move(d)), reader(std::string_view(data), source) {}
  };
  py::class_<PyNameStream>(m, "NameStreamReader", "Iterates over the chunks of a name stream.")
      .def(py::init<py::bytes, const std::string&>(), py::arg("data"), py::arg("source") = "",
           "A reader over `data`; FormatError naming `source` for bad input.")
      .def(
          "__iter__", [](PyNameStream& s) -> PyNameStream& { return s; }, "The reader itself.")
      .def(
          "__next__",
          [](PyNameStream& s) {
            std::vector<std::pair<std::uint64_t, std::string>> chunk;
            if (!s.reader.next(chunk)) throw py::stop_iteration();
            return chunk;
          },
          "The next chunk: a list of (index, name).");
}

void register_hwloc(py::module_& m) {
  py::class_<Topology>(m, "Topology", "An hwloc topology: this machine's, a synthetic one or one from XML.")
      .def_static("local", &Topology::local, "This machine's topology.")
      .def_static("synthetic", &Topology::synthetic, py::arg("description"),
                  "A synthetic topology such as \"pack:2 l3:1 core:4 pu:2\" (hwloc's syntax).")
      .def_static("from_xml", &Topology::from_xml, py::arg("xml"), "A topology from hwloc's XML export.");
  m.def("local_view", &local_view, py::arg("topology"), py::arg("host"), py::arg("process_name"),
        py::arg("threads"), py::arg("cpus") = "",
        "One process's single-node view: machine > node `host` > hardware levels (runs of single-child levels "
        "merged, PCI bridges skipped) > process > `threads` threads, under the hardware its binding `cpus` "
        "(hwloc list syntax; empty: the current binding) covers.");
}

}  // namespace

void register_systree(py::module_& m) {
  py::enum_<Kind>(m, "Kind", "What a system-tree element is: a node, a location group or a location.")
      .value("NODE", Kind::Node, "machine, rack, node, hardware element ...")
      .value("LOCATION_GROUP", Kind::LocationGroup, "process, accelerator context")
      .value("LOCATION", Kind::Location, "thread, GPU stream");
  m.attr("MASK_NODES") = kNodes;
  m.attr("MASK_LOCATION_GROUPS") = kLocationGroups;
  m.attr("MASK_LOCATIONS") = kLocations;
  m.attr("MASK_ALL") = kAllKinds;
  m.def("kind_of_class", &kind_of_class, py::arg("cls"),
        "The kind Score-P gives an element of this class (process: location group, thread: location, ...).");
  register_sequence(m);
  register_single(m);
  register_names(m);
  register_hwloc(m);
  m.def(
      "fold",
      [](const SingleNodeTree& t, bool with_names, KindMask name_kinds) {
        NameMap names;
        auto seq = fold(t, with_names ? &names : nullptr, name_kinds);
        return py::make_tuple(std::move(seq), std::move(names));
      },
      py::arg("tree"), py::arg("with_names") = true, py::arg("name_kinds") = kNodes,
      "Folds a single-node tree into sequence form; returns (SystemTree, NameMap of the real names of the "
      "kinds in `name_kinds`).");
  m.def(
      "expand", [](const SystemTree& t, std::optional<std::reference_wrapper<const NameMap>> names) {
        return expand(t, names ? &names->get() : nullptr);
      },
      py::arg("tree"), py::arg("names") = py::none(), "Expands a sequence tree into single-node form (generated or real names).");
  m.def("merge", &merge, py::arg("a"), py::arg("b"),
        "Merges two sequence trees with one root: equal elements once, children of both in order.");
  m.def("single_serialized_size", &single_serialized_size, py::arg("tree"),
        "Bytes the single-node form of a sequence tree would take, computed without expanding.");
  m.def(
      "parse_shape",
      [](const std::string& spec) {
        std::vector<std::pair<std::string, std::uint64_t>> out;
        for (auto& l : parse_shape(spec)) out.emplace_back(l.cls, l.count);
        return out;
      },
      py::arg("spec"),
      "Levels (class, count) of a shape such as \"node:4 process:8 thread:2\" or a preset name (juqueen, ...).");
  m.def(
      "regular_sequence",
      [](const std::vector<std::pair<std::string, std::uint64_t>>& levels) {
        std::vector<Level> ls;
        for (auto& [c, n] : levels) ls.push_back({c, n});
        return regular_sequence(ls);
      },
      py::arg("levels"), "The sequence tree of a regular machine: one record per level below a machine root.");
  m.def("figure4_sequence", &figure4_sequence, "The inhomogeneous machine of the Score-P system-description paper, Figure 4.");
}

}  // namespace cubescale::bindings
