// Kernels of the distributed system tree (paper 000, section 4) and its simulation. The
// mpi4py driver in cubescale.parallel moves the bytes these functions return.
#include <pybind11/functional.h>
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include "cubescale/systree/distributed.hpp"
#include "cubescale/systree/serialize.hpp"
#include "cubescale/systree/simulate.hpp"
#include "arrays.hpp"
#include "register.hpp"

namespace py = pybind11;

namespace cubescale::bindings {
using namespace cubescale::systree;
using namespace cubescale::systree::distributed;

namespace {

py::dict stats_dict(const RankStats& s) {
  py::dict d;
  d["peak_bytes"] = s.peak_bytes;
  d["messages_sent"] = s.messages_sent;
  d["messages_received"] = s.messages_received;
  d["bytes_sent"] = s.bytes_sent;
  d["bytes_received"] = s.bytes_received;
  d["rounds"] = s.rounds;
  return d;
}

py::dict simulation_dict(SimulationResult&& r) {
  py::dict d;
  d["ranks"] = r.ranks;
  d["rounds"] = r.rounds;
  d["peak_bytes_max"] = r.peak_bytes_max;
  d["peak_bytes_min"] = r.peak_bytes_min;
  d["peak_bytes_rank0"] = r.peak_bytes_rank0;
  d["messages_max"] = r.messages_max;
  d["bytes_max"] = r.bytes_max;
  d["bytes_total"] = r.bytes_total;
  d["naive_gathered_bytes"] = r.naive_gathered_bytes;
  d["naive_rank0_bytes"] = r.naive_rank0_bytes;
  d["location_offsets"] = to_array(r.location_offsets);
  d["location_indices"] = to_array(r.location_indices);
  d["location_group_index"] = to_array(r.location_group_index);
  d["responsible"] = to_array(r.responsible).attr("astype")("bool");
  d["tree"] = std::move(r.tree);
  return d;
}

std::vector<Level> to_levels(const std::vector<std::pair<std::string, std::uint64_t>>& levels) {
  std::vector<Level> out;
  for (const auto& [c, n] : levels) out.push_back({c, n});
  return out;
}

py::list to_bytes_list(const std::vector<std::string>& messages) {
  py::list out;
  for (const auto& msg : messages) out.append(py::bytes(msg));
  return out;
}

void register_rank_state(py::module_& m) {
  py::class_<RankState>(m, "RankState", "One rank's part of the distributed system tree algorithm.")
      .def(py::init<SingleTree, std::string>(), py::arg("view"), py::arg("host_class") = "node")
      .def_property_readonly("process_depth", &RankState::process_depth)
      .def_property_readonly("holds", &RankState::holds)
      .def_property_readonly("holds_root", &RankState::holds_root)
      .def_property_readonly("host_depth", &RankState::host_depth)
      .def_property_readonly("responsible", &RankState::responsible)
      .def("group_key", [](const RankState& s, std::uint32_t round) { return py::bytes(s.group_key(round)); })
      .def("begin_up", &RankState::begin_up)
      .def("absorb", [](RankState& s, py::bytes child) { s.absorb(std::string_view(child)); })
      .def("end_up", [](RankState& s, bool is_root) { return py::bytes(s.end_up(is_root)); })
      .def("promote", &RankState::promote)
      .def("took_part", &RankState::took_part)
      .def("settle",
           [](RankState& s, std::uint32_t round, py::bytes from_parent) {
             return to_bytes_list(s.settle(round, std::string_view(from_parent)));
           })
      .def("down",
           [](RankState& s, std::uint32_t round, py::bytes from_parent) {
             return to_bytes_list(s.down(round, std::string_view(from_parent)));
           })
      .def("global_tree", [](const RankState& s) { return SequenceTree(s.global_tree()); })
      .def("global_tree_bytes", [](const RankState& s) { return py::bytes(serialize(s.global_tree())); })
      .def("location_indices", [](const RankState& s) { return to_array(s.location_indices()); })
      .def_property_readonly("location_group_index", &RankState::location_group_index)
      .def("held_names", &RankState::held_names)
      .def_property_readonly("stats", [](const RankState& s) { return stats_dict(s.stats()); });
}

void register_naive(py::module_& m) {
  m.def("pack_view", [](const SingleTree& v) { return py::bytes(pack_view(v)); });
  m.def("unpack_view", [](py::bytes b) { return unpack_view(std::string_view(b)); });
  m.def(
      "naive_build",
      [](const std::vector<py::bytes>& views, const std::string& host_class, const std::vector<std::string>& classes) {
        std::vector<std::string_view> v;
        for (const auto& b : views) v.emplace_back(std::string_view(b));
        NaiveResult r = naive_build(v, host_class, classes);
        py::dict d;
        d["location_offsets"] = to_array(r.location_offsets);
        d["location_indices"] = to_array(r.location_indices);
        d["location_group_index"] = to_array(r.location_group_index);
        d["responsible"] = to_array(r.responsible).attr("astype")("bool");
        d["peak_bytes"] = r.peak_bytes;
        d["names"] = std::move(r.names);
        d["tree"] = std::move(r.tree);
        return d;
      },
      py::arg("views"), py::arg("host_class") = "node", py::arg("name_classes") = std::vector<std::string>{"node"});
}

void register_simulation(py::module_& m) {
  py::class_<RegularViews>(m, "RegularViews", "The views of the ranks of a regular machine shape.")
      .def(py::init([](const std::vector<std::pair<std::string, std::uint64_t>>& levels) {
        return RegularViews(to_levels(levels));
      }))
      .def_property_readonly("ranks", &RegularViews::ranks)
      .def("view", &RegularViews::view);
  m.def(
      "simulate_regular",
      [](const std::vector<std::pair<std::string, std::uint64_t>>& levels, bool collect, const std::string& host) {
        const RegularViews views(to_levels(levels));
        SimulationResult r;
        {
          py::gil_scoped_release release;
          r = simulate(views, collect, host);
        }
        return simulation_dict(std::move(r));
      },
      py::arg("levels"), py::arg("collect") = false, py::arg("host_class") = "node");
  m.def(
      "simulate_views",
      [](std::uint64_t ranks, const std::function<SingleTree(std::uint64_t)>& view, bool collect,
         const std::string& host) { return simulation_dict(simulate(FunctionViews(ranks, view), collect, host)); },
      py::arg("ranks"), py::arg("view"), py::arg("collect") = false, py::arg("host_class") = "node");
}

}  // namespace

void register_distributed(py::module_& m) {
  m.def("hash_name_path", [](py::bytes path) { return hash_name_path(std::string_view(path)); });
  m.def("name_path", [](const SingleTree& v, std::uint32_t e) { return py::bytes(name_path(v, e)); });
  m.def("binary_tree_links", [](int rank, int size) {
    const auto l = binary_tree_links(rank, size);
    return py::make_tuple(l.parent, l.children);
  });
  m.def("merge_name_chunks",
        [](py::bytes a, py::bytes b, std::size_t limit) {
          return py::bytes(merge_name_chunks(std::string_view(a), std::string_view(b), limit));
        });
  m.def("name_chunk_after",
        [](const std::vector<std::pair<std::uint64_t, std::string>>& entries, std::optional<std::uint64_t> after,
           std::size_t limit) { return py::bytes(name_chunk_after(entries, after, limit)); });
  register_rank_state(m);
  register_naive(m);
  register_simulation(m);
}

}  // namespace cubescale::bindings
