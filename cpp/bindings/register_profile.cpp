// Local profiles, unification and collation kernels (cpp/include/cubescale/profile/). Value
// matrices cross as byte arrays of the metric's data type [cnodes, locations * width], viewed
// by cubescale.profile; definitions as the bound Metric / Region of
// _core.cube. The mpi4py drivers in cubescale.parallel only move the bytes made here.
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <cstring>
#include <memory>

#include "cubescale/analysis/waitstates.hpp"
#include "cubescale/cube/assemble.hpp"
#include "cubescale/cube/report.hpp"
#include "cubescale/cube/writer.hpp"
#include "cubescale/profile/collate.hpp"
#include "cubescale/profile/merge.hpp"
#include "cubescale/profile/unify.hpp"
#include "arrays.hpp"
#include "register.hpp"

namespace py = pybind11;

namespace cubescale::bindings {
using namespace cubescale::profile;

namespace {

using ByteArray = py::array_t<std::uint8_t, py::array::c_style>;
using IndexArray = py::array_t<std::int64_t, py::array::c_style | py::array::forcecast>;

cube::Attributes attribute_list(const py::handle& mapping) {
  cube::Attributes out;
  for (const auto& [k, v] : mapping.cast<py::dict>()) out.emplace_back(py::str(k), py::str(v));
  return out;
}

py::dict attribute_dict(const cube::Attributes& a) {
  py::dict d;
  for (const auto& [k, v] : a) d[py::str(k)] = v;
  return d;
}

std::shared_ptr<LocalProfile> make_profile(std::vector<cube::Metric> metrics, std::vector<cube::Region> regions,
                                           IndexArray parents, IndexArray cnode_regions, const py::list& parameters,
                                           const std::vector<std::pair<std::string, std::string>>& locations,
                                           const std::vector<ByteArray>& values) {
  auto p = std::make_shared<LocalProfile>();
  p->metrics = std::move(metrics);
  p->regions = std::move(regions);
  if (parents.ndim() != 1 || cnode_regions.ndim() != 1 || parents.size() != cnode_regions.size())
    throw py::value_error("cnode parents and regions must be 1-d arrays of one length");
  const auto n = static_cast<std::size_t>(parents.size());
  for (std::size_t c = 0; c < n; ++c) {
    const auto parent = parents.data()[c], region = cnode_regions.data()[c];
    if (parent < -1 || parent >= static_cast<std::int64_t>(n) || region < 0 || region > 0xffffffffLL)
      throw py::value_error("cnode " + std::to_string(c) + ": parent or region out of range");
    p->cnode_parents.push_back(parent < 0 ? cube::kNoParent : static_cast<std::uint32_t>(parent));
    p->cnode_regions.push_back(static_cast<std::uint32_t>(region));
  }
  if (!parameters.empty()) {
    if (parameters.size() != n) throw py::value_error("cnode parameters: one list per cnode, or none");
    for (const auto& per_cnode : parameters) {
      auto& lists = p->cnode_parameters.emplace_back();
      for (const auto& one : per_cnode) lists.push_back(attribute_list(one));
    }
  }
  for (const auto& [name, type] : locations) p->locations.push_back({name, type});
  if (values.size() != p->metrics.size())
    throw py::value_error(std::to_string(values.size()) + " value arrays for " + std::to_string(p->metrics.size()) +
                          " metrics");
  for (std::size_t m = 0; m < values.size(); ++m) {
    cube::Severity s(p->metrics[m].dtype, n, p->locations.size());
    if (static_cast<std::size_t>(values[m].size()) != s.bytes())
      throw py::value_error("metric " + p->metrics[m].uniq_name + ": expected " + std::to_string(s.bytes()) +
                            " bytes of values [" + std::to_string(n) + " cnodes, " +
                            std::to_string(p->locations.size()) + " locations]");
    if (s.bytes()) std::memcpy(s.data(), values[m].data(), s.bytes());
    p->values.push_back(std::move(s));
  }
  try {
    p->validate();
  } catch (const std::invalid_argument& e) {
    throw py::value_error(e.what());
  }
  return p;
}

py::dict stats_dict(const UnifyStats& s) {
  py::dict d;
  d["peak_bytes"] = s.peak_bytes;
  d["messages_sent"] = s.messages_sent;
  d["messages_received"] = s.messages_received;
  d["bytes_sent"] = s.bytes_sent;
  d["bytes_received"] = s.bytes_received;
  return d;
}

// The global definitions as a report of zeros over `system` (the writer's definitions), with
// each location group's <rank> (its MPI rank) when one is given per group, else its position.
std::shared_ptr<cube::Report> global_report(const DefinitionSet& set, const systree::SingleNodeTree& system,
                                            const std::vector<std::int64_t>& group_ranks) {
  cube::CallTreeParts calls{set.cnode_parents, set.cnode_regions, set.cnode_parameters};
  auto defs = cube::assemble_definitions(set.metrics, set.regions, std::move(calls), system);
  // A wait-state report links its metrics to Scalasca's pages: Cube needs their mirrors.
  defs.mirrors = analysis::documentation_mirrors(defs.metrics);
  // One process per rank (write_report): each group's <rank> is its rank. Ranks holding several
  // processes (a trace's) keep the positions.
  if (group_ranks.size() == defs.group_rank.size()) defs.group_rank = group_ranks;
  return std::make_shared<cube::Report>(std::move(defs));
}

void register_local_profile(py::module_& m) {
  py::class_<LocalProfile, std::shared_ptr<LocalProfile>>(
      m, "LocalProfile", "What one rank measured, with local ids: definitions, locations and value matrices.")
      .def(py::init(&make_profile), py::kw_only(), py::arg("metrics"), py::arg("regions"), py::arg("cnode_parents"),
           py::arg("cnode_regions"), py::arg("cnode_parameters"), py::arg("locations"), py::arg("values"),
           "A profile from metric and region definitions, a call tree in preorder (parents, -1 for roots; region "
           "indices; per cnode a list of parameter dicts, or an empty list), locations as (name, type) and per "
           "metric the bytes of a [cnode, location] array of its data type; ValueError naming the bad part.")
      .def_property_readonly("cnode_count", &LocalProfile::cnode_count, "Number of local call paths.")
      .def_property_readonly(
          "location_count", [](const LocalProfile& p) { return p.locations.size(); }, "Number of local locations.")
      .def_property_readonly(
          "metrics", [](const LocalProfile& p) { return p.metrics; }, "The metric definitions (copies).")
      .def_property_readonly(
          "regions", [](const LocalProfile& p) { return p.regions; }, "The region definitions (copies).")
      .def(
          "cnode_parents",
          [](const LocalProfile& p) {
            std::vector<std::int64_t> v;
            for (auto x : p.cnode_parents) v.push_back(x == cube::kNoParent ? -1 : std::int64_t(x));
            return to_array(v);
          },
          "Parent of every local call path (-1 for roots), int64.")
      .def(
          "cnode_regions", [](const LocalProfile& p) { return to_array(p.cnode_regions); },
          "Local region index of every call path, uint32.")
      .def_property_readonly(
          "locations",
          [](const LocalProfile& p) {
            std::vector<std::pair<std::string, std::string>> out;
            for (const auto& l : p.locations) out.emplace_back(l.name, l.type);
            return out;
          },
          "(name, type) of every location.")
      .def(
          "values",
          [](const LocalProfile& p, std::size_t metric) {
            const auto& v = p.values.at(metric);
            py::array_t<std::uint8_t> out({v.cnodes(), v.row_bytes()});
            if (v.bytes()) std::memcpy(out.mutable_data(), v.data(), v.bytes());
            return out;
          },
          py::arg("metric"), "A copy of a metric's values as bytes [cnodes, locations * width].")
      .def(
          "parameters",
          [](const LocalProfile& p, std::size_t cnode) {
            py::list out;
            if (!p.cnode_parameters.empty())
              for (const auto& a : p.cnode_parameters.at(cnode)) out.append(attribute_dict(a));
            return out;
          },
          py::arg("cnode"), "The parameter dicts of one local call path.");
}

void register_unify(py::module_& m) {
  py::class_<UnifyState>(m, "UnifyState",
                         "One rank's part of the unification: up pass (absorb, end_up), down pass (down).")
      .def(py::init<const LocalProfile&>(), py::arg("profile"), "The state of a rank holding `profile`.")
      .def(
          "absorb", [](UnifyState& s, py::bytes child) { s.absorb(std::string_view(child)); }, py::arg("child_set"),
          "Merges a child's packed definitions (children in rank order).")
      .def(
          "end_up", [](UnifyState& s, bool is_root) { return py::bytes(s.end_up(is_root)); }, py::arg("is_root"),
          "Ends the up pass: the packed merged definitions for the parent (b'' at the root).")
      .def(
          "down",
          [](UnifyState& s, py::bytes from_parent) {
            py::list out;
            for (auto& msg : s.down(std::string_view(from_parent))) out.append(py::bytes(msg));
            return out;
          },
          py::arg("from_parent"), "The down pass: the parent's map message in (b'' at the root), one per child out.")
      .def(
          "global_report",
          [](const UnifyState& s, const systree::SingleNodeTree& system, const std::vector<std::int64_t>& group_ranks) {
            return global_report(s.global(), system, group_ranks);
          },
          py::arg("system"), py::arg("group_ranks") = std::vector<std::int64_t>{},
          "At the root: the global definitions over `system` as a report of zeros; group_ranks: each location "
          "group's <rank> when one per group is given (else its position).")
      .def_property_readonly(
          "global_counts",
          [](const UnifyState& s) {
            const auto& g = s.global();
            return py::make_tuple(g.metrics.size(), g.regions.size(), g.cnode_parents.size());
          },
          "At the root: (metrics, regions, call paths) of the global definitions.")
      .def_property_readonly(
          "global_widths",
          [](const UnifyState& s) {
            std::vector<std::size_t> widths;
            for (const auto& m : s.global().metrics) widths.push_back(m.dtype.width());
            return widths;
          },
          "At the root: the bytes of one value of every global metric, in global order.")
      .def(
          "global_definitions", [](const UnifyState& s) { return py::bytes(s.global().pack()); },
          "At the root: the packed global definitions (compare with definitions_bytes of another run).")
      .def(
          "metric_map", [](const UnifyState& s) { return to_array(s.metric_map()); },
          "After down: the global index of every local metric.")
      .def(
          "cnode_map", [](const UnifyState& s) { return to_array(s.cnode_map()); },
          "After down: the global (preorder) index of every local call path.")
      .def(
          "cnode_wide_position", [](const UnifyState& s) { return to_array(s.cnode_wide_position()); },
          "After down: each local call path's row position in INCLUSIVE metrics' data.")
      .def_property_readonly(
          "stats", [](const UnifyState& s) { return stats_dict(s.stats()); },
          "Peak bytes held, messages and bytes sent and received.");
  m.def(
      "merge_profiles",
      [](const std::vector<std::shared_ptr<LocalProfile>>& profiles) {
        std::vector<const LocalProfile*> ptrs;
        for (const auto& p : profiles) ptrs.push_back(p.get());
        py::gil_scoped_release release;
        return std::make_shared<LocalProfile>(merge_profiles(ptrs));
      },
      py::arg("profiles"),
      "Several profiles as one: the union of their definitions in canonical order, their locations side by "
      "side (profile i's after those of profiles before it); zero where a profile never visited a call path.");
  m.def(
      "unify_in_process",
      [](const std::vector<std::shared_ptr<LocalProfile>>& profiles) {
        std::vector<const LocalProfile*> ptrs;
        for (const auto& p : profiles) ptrs.push_back(p.get());
        auto r = unify_in_process(ptrs);
        py::list metric_maps, cnode_maps, wide;
        for (std::size_t i = 0; i < ptrs.size(); ++i) {
          metric_maps.append(to_array(r.metric_maps[i]));
          cnode_maps.append(to_array(r.cnode_maps[i]));
          wide.append(to_array(r.wide_positions[i]));
        }
        py::dict d;
        d["definitions"] = py::bytes(r.global.pack());
        d["metrics"] = r.global.metrics;
        d["regions"] = r.global.regions;
        std::vector<std::int64_t> parents;
        for (auto x : r.global.cnode_parents) parents.push_back(x == cube::kNoParent ? -1 : std::int64_t(x));
        d["cnode_parents"] = to_array(parents);
        d["cnode_regions"] = to_array(r.global.cnode_regions);
        d["metric_maps"] = metric_maps;
        d["cnode_maps"] = cnode_maps;
        d["wide_positions"] = wide;
        d["rounds"] = r.rounds;
        d["critical_path_seconds"] = r.critical_path_seconds;
        d["total_seconds"] = r.total_seconds;
        d["max_bytes_received"] = r.max_bytes_received;
        return d;
      },
      py::arg("profiles"),
      "The whole unification of P profiles in one process along the same spanning tree (tests, simulation): "
      "a dict with the packed global definitions, metrics, regions, call tree, per-profile maps, the rounds, "
      "the passes' critical path with a core per rank and their total time (seconds), and the most bytes any "
      "rank received.");
}

void register_collation(py::module_& m) {
  py::class_<RowSource>(m, "RowSource", "A rank's side of collation: its non-zero rows, cut into block parts.")
      .def(py::init([](std::shared_ptr<LocalProfile> p, py::array_t<std::uint32_t> metric_map,
                       py::array_t<std::uint32_t> cnode_map, py::array_t<std::uint32_t> wide, std::uint64_t first) {
             auto vec = [](const py::array_t<std::uint32_t>& a) {
               return std::vector<std::uint32_t>(a.data(), a.data() + a.size());
             };
             // The source keeps the profile alive through the py::keep_alive below.
             return std::make_unique<RowSource>(*p, vec(metric_map), vec(cnode_map), vec(wide), first);
           }),
           py::arg("profile"), py::arg("metric_map"), py::arg("cnode_map"), py::arg("wide_position"),
           py::arg("first_location"), py::keep_alive<1, 2>(),
           "The rows of `profile` placed by unification's maps, its locations starting at global column "
           "`first_location`.")
      .def(
          "block",
          [](const RowSource& s, std::uint32_t metric, std::uint32_t p0, std::uint32_t p1, std::uint64_t c0,
             std::uint64_t c1) {
            std::string part;
            {
              py::gil_scoped_release release;
              part = s.block(metric, p0, p1, c0, c1);
            }
            return py::array_t<std::uint8_t>(static_cast<py::ssize_t>(part.size()),
                                             reinterpret_cast<const std::uint8_t*>(part.data()));
          },
          py::arg("metric"), py::arg("p0"), py::arg("p1"), py::arg("c0"), py::arg("c1"),
          "This rank's part of the block of row positions [p0, p1) and columns [c0, c1) of a global metric "
          "(uint8 array, empty when it has no non-zero row there).")
      .def("nonzero", &RowSource::nonzero, py::arg("metric"), py::arg("position"),
           "Whether this rank has non-zero values in a row of a global metric.")
      .def(
          "row_costs",
          [](const RowSource& s, std::uint32_t metric, std::uint32_t positions) {
            return to_array(s.row_costs(metric, positions));
          },
          py::arg("metric"), py::arg("positions"),
          "Per position, the bytes this rank's part costs the writer for that row (values + 12), 0 where it "
          "sends nothing; uint64.");
  m.def(
      "write_parts",
      [](cube::CubexWriter& writer, ByteArray buffer, py::array_t<std::int64_t> counts, std::uint32_t p0,
         std::uint32_t p1, std::uint64_t c0, std::uint64_t c1, std::size_t width, bool piece, std::size_t trailer) {
        const std::string_view parts(reinterpret_cast<const char*>(buffer.data()), std::size_t(buffer.size()));
        const std::vector<std::int64_t> sizes(counts.data(), counts.data() + counts.size());
        return write_parts(writer, parts, sizes, p0, p1, c0, c1, width, piece, trailer);
      },
      py::arg("writer"), py::arg("buffer"), py::arg("counts"), py::arg("p0"), py::arg("p1"), py::arg("c0"),
      py::arg("c1"), py::arg("width"), py::arg("piece") = false, py::arg("trailer") = 0,
      "Writes a block from the ranks' gathered parts (counts: bytes per rank) without a dense copy: sent rows "
      "composed one at a time, the others skipped; piece: one row as the next piece of the open row; trailer: "
      "bytes after each rank's part that are not values. Returns the bytes held besides the parts.");
}

}  // namespace

void register_profile(py::module_& m) {
  register_local_profile(m);
  register_unify(m);
  register_collation(m);
}

}  // namespace cubescale::bindings
