// Kernels of the distributed system tree (the Score-P system-description paper, section 4) and its simulation. The
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
      .def(py::init<SingleNodeTree, std::string>(), py::arg("view"), py::arg("host_class") = "node",
           "The state of one rank whose single-node path is `view`; the lowest rank below each element of "
           "class `host_class` is responsible for its hardware.")
      .def_property_readonly("process_depth", &RankState::process_depth, "Depth of this rank's process element.")
      .def_property_readonly("holds", &RankState::holds,
                             "Depth of the element this rank holds now (it takes part in that round).")
      .def_property_readonly("holds_root", &RankState::holds_root, "True on the one rank that holds the root.")
      .def_property_readonly("responsible", &RankState::responsible,
                             "True when this rank is responsible for its host's shared hardware.")
      .def(
          "group_key", [](const RankState& s, std::uint32_t round) { return py::bytes(s.group_key(round)); },
          py::arg("round"), "The name path of the parent of the element held in `round`: the group to join.")
      .def("begin_up", &RankState::begin_up, py::arg("round"), "Starts the up pass of `round` with the own payload.")
      .def(
          "absorb", [](RankState& s, py::bytes child) { s.absorb(std::string_view(child)); }, py::arg("payload"),
          "Merges a child's payload (children in rank order).")
      .def(
          "end_up", [](RankState& s, bool is_root) { return py::bytes(s.end_up(is_root)); }, py::arg("is_root"),
          "Ends the up pass: the payload for the parent (group roots complete the element instead).")
      .def("promote", &RankState::promote, py::arg("round"),
           "On a group root: hold the group's element in the next round.")
      .def(
          "settle",
          [](RankState& s, std::uint32_t round, py::bytes from_parent) {
            return to_bytes_list(s.settle(round, std::string_view(from_parent)));
          },
          py::arg("round"), py::arg("from_parent"),
          "Settles `round` right after its up pass: takes the parent's message (empty at the group root) and "
          "returns one message per child with offsets relative to the group's element.")
      .def(
          "down",
          [](RankState& s, std::uint32_t round, py::bytes from_parent) {
            return to_bytes_list(s.down(round, std::string_view(from_parent)));
          },
          py::arg("round"), py::arg("from_parent"),
          "The final down pass of `round`: the element's global start in, one message per child out.")
      .def(
          "global_tree_bytes", [](const RankState& s) { return py::bytes(serialize(s.global_tree())); },
          "On the root's rank: the global sequence tree in binary form.")
      .def(
          "location_indices", [](const RankState& s) { return to_array(s.location_indices()); },
          "Global location indices of this rank's locations (after the down pass).")
      .def_property_readonly("location_group_index", &RankState::location_group_index,
                             "Global index of this rank's process among all location groups.")
      .def("held_names", &RankState::held_names, py::arg("classes"),
           "(all-kinds index, name) of the elements of `classes` this rank holds, for the name stream.")
      .def_property_readonly(
          "stats", [](const RankState& s) { return stats_dict(s.stats()); },
          "This rank's cost: peak bytes, messages and bytes sent and received, rounds.");
}

void register_naive(py::module_& m) {
  m.def(
      "pack_view", [](const SingleNodeTree& v) { return py::bytes(pack_view(v)); }, py::arg("view"),
      "A rank's view in the binary form the naive gather moves.");
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
      py::arg("views"), py::arg("host_class") = "node", py::arg("name_classes") = std::vector<std::string>{"node"},
      "The baseline: folds every rank's packed view on one rank; returns a dict with the tree and per-rank "
      "indices.");
}

void register_simulation(py::module_& m) {
  py::class_<RegularViews>(m, "RegularViews", "The views of the ranks of a regular machine shape.")
      .def(py::init([](const std::vector<std::pair<std::string, std::uint64_t>>& levels) {
             return RegularViews(to_levels(levels));
           }),
           py::arg("levels"), "The views of a machine given as levels (class, count) from parse_shape.")
      .def_property_readonly("ranks", &RegularViews::ranks, "Number of processes (ranks).")
      .def("view", &RegularViews::view, py::arg("rank"), "The single-node view of one rank.");
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
      py::arg("levels"), py::arg("collect") = false, py::arg("host_class") = "node",
      "Runs the distributed build for every rank of a regular machine in one process (the same kernels, "
      "messages counted); `collect` keeps every rank's indices.");
  m.def(
      "simulate_views",
      [](std::uint64_t ranks, const std::function<SingleNodeTree(std::uint64_t)>& view, bool collect,
         const std::string& host) { return simulation_dict(simulate(FunctionViews(ranks, view), collect, host)); },
      py::arg("ranks"), py::arg("view"), py::arg("collect") = false, py::arg("host_class") = "node",
      "The same for `ranks` views given by a function of the rank.");
}

}  // namespace

void register_distributed(py::module_& m) {
  m.def(
      "hash_name_path", [](py::bytes path) { return hash_name_path(std::string_view(path)); }, py::arg("path"),
      "FNV-1a of an encoded name path: the same value on every machine.");
  m.def(
      "name_path", [](const SingleNodeTree& v, std::uint32_t e) { return py::bytes(name_path(v, e)); }, py::arg("view"),
      py::arg("element"), "An element's identity: the length-prefixed names on its path from the root.");
  m.def(
      "merge_name_chunks",
      [](py::bytes a, py::bytes b, std::size_t limit) {
        return py::bytes(merge_name_chunks(std::string_view(a), std::string_view(b), limit));
      },
      py::arg("a"), py::arg("b"), py::arg("limit"), "The `limit` smallest entries of two name chunks, as a chunk.");
  m.def(
      "name_chunk_after",
      [](const std::vector<std::pair<std::uint64_t, std::string>>& entries, std::optional<std::uint64_t> after,
         std::size_t limit) { return py::bytes(name_chunk_after(entries, after, limit)); },
      py::arg("entries"), py::arg("after"), py::arg("limit"),
      "A chunk of at most `limit` entries with index above `after` (None: from the start).");
  register_rank_state(m);
  register_naive(m);
  register_simulation(m);
}

}  // namespace cubescale::bindings
