// OTF2 traces (cpp/include/cubescale/trace/): the reader with its definitions as columns,
// event counts, events as NumPy columns, the trace's system tree and the trace -> profile
// kernel. Definitions cross as dicts of lists (small); events as NumPy arrays that take over
// the core's vectors without a copy. cubescale.otf2 builds the DataFrames.
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <memory>

#include "cubescale/trace/columns.hpp"
#include "cubescale/trace/profile.hpp"
#include "cubescale/trace/reader.hpp"
#include "cubescale/trace/synthetic.hpp"
#include "cubescale/trace/system_tree.hpp"
#include "register.hpp"

namespace py = pybind11;

namespace cubescale::bindings {
using namespace cubescale::trace;

namespace {

// A NumPy array owning `v` (moved, not copied).
template <typename T>
py::array_t<T> take(std::vector<T>&& v) {
  auto* owner = new std::vector<T>(std::move(v));
  py::capsule free(owner, [](void* p) { delete static_cast<std::vector<T>*>(p); });
  return py::array_t<T>(static_cast<py::ssize_t>(owner->size()), owner->data(), free);
}

std::int64_t opt(std::uint32_t v) { return v == kNone ? -1 : static_cast<std::int64_t>(v); }

// Per location the events of every type: uint64 array [location, event type].
py::array_t<std::uint64_t> counts_array(const std::vector<std::vector<std::uint64_t>>& counts) {
  py::array_t<std::uint64_t> out({static_cast<py::ssize_t>(counts.size()), py::ssize_t(kEventTypeCount)});
  auto v = out.mutable_unchecked<2>();
  for (std::size_t l = 0; l < counts.size(); ++l)
    for (int k = 0; k < kEventTypeCount; ++k) v(l, k) = counts[l][k];
  return out;
}

std::vector<std::uint32_t> chosen(const Trace& t, const std::optional<std::vector<std::uint32_t>>& locations) {
  return locations ? *locations : t.all_locations();
}

py::dict definitions_dict(const Definitions& d) {
  py::dict out;
  {
    py::list id, name, cls, parent, domains, properties;
    for (const auto& n : d.system_tree_nodes) {
      id.append(n.id), name.append(n.name), cls.append(n.class_name), parent.append(opt(n.parent));
      domains.append(n.domains), properties.append(n.properties);
    }
    out["system_tree_nodes"] = py::dict(py::arg("id") = id, py::arg("name") = name, py::arg("class") = cls,
                                        py::arg("parent") = parent, py::arg("domains") = domains,
                                        py::arg("properties") = properties);
  }
  {
    py::list id, name, type, node, creator;
    for (const auto& g : d.location_groups)
      id.append(g.id), name.append(g.name), type.append(g.type), node.append(opt(g.system_tree_node)),
          creator.append(opt(g.creator));
    out["location_groups"] = py::dict(py::arg("id") = id, py::arg("name") = name, py::arg("type") = type,
                                      py::arg("system_tree_node") = node, py::arg("creator") = creator);
  }
  {
    py::list id, name, type, events, group;
    for (const auto& l : d.locations)
      id.append(l.id), name.append(l.name), type.append(l.type), events.append(l.events), group.append(opt(l.group));
    out["locations"] = py::dict(py::arg("id") = id, py::arg("name") = name, py::arg("type") = type,
                                py::arg("events") = events, py::arg("group") = group);
  }
  {
    py::list id, name, canonical, description, role, paradigm, file, begin, end;
    for (const auto& r : d.regions)
      id.append(r.id), name.append(r.name), canonical.append(r.canonical_name), description.append(r.description),
          role.append(r.role), paradigm.append(r.paradigm), file.append(r.file), begin.append(r.begin_line),
          end.append(r.end_line);
    out["regions"] = py::dict(py::arg("id") = id, py::arg("name") = name, py::arg("canonical_name") = canonical,
                              py::arg("description") = description, py::arg("role") = role,
                              py::arg("paradigm") = paradigm, py::arg("file") = file, py::arg("begin_line") = begin,
                              py::arg("end_line") = end);
  }
  {
    py::list id, name, type, paradigm, members;
    for (const auto& g : d.groups)
      id.append(g.id), name.append(g.name), type.append(g.type), paradigm.append(g.paradigm), members.append(g.members);
    out["groups"] = py::dict(py::arg("id") = id, py::arg("name") = name, py::arg("type") = type,
                             py::arg("paradigm") = paradigm, py::arg("members") = members);
  }
  {
    py::list id, name, group, parent, inter, remote_group;
    for (const auto& c : d.communicators)
      id.append(c.id), name.append(c.name), group.append(opt(c.group)), parent.append(opt(c.parent)),
          inter.append(c.inter), remote_group.append(opt(c.remote_group));
    out["communicators"] = py::dict(py::arg("id") = id, py::arg("name") = name, py::arg("group") = group,
                                    py::arg("parent") = parent, py::arg("inter") = inter,
                                    py::arg("remote_group") = remote_group);
  }
  {
    py::list id, name, description, unit, type, mode, value_type, base, exponent;
    for (const auto& m : d.metric_members)
      id.append(m.id), name.append(m.name), description.append(m.description), unit.append(m.unit),
          type.append(m.metric_type), mode.append(m.mode), value_type.append(m.value_type), base.append(m.base),
          exponent.append(m.exponent);
    out["metric_members"] = py::dict(py::arg("id") = id, py::arg("name") = name, py::arg("description") = description,
                                     py::arg("unit") = unit, py::arg("metric_type") = type, py::arg("mode") = mode,
                                     py::arg("value_type") = value_type, py::arg("base") = base,
                                     py::arg("exponent") = exponent);
  }
  {
    py::list id, instance, members, occurrence, recorder_kind, cls, recorder;
    for (const auto& m : d.metrics)
      id.append(m.id), instance.append(m.instance), members.append(m.members), occurrence.append(m.occurrence),
          recorder_kind.append(m.recorder_kind), cls.append(opt(m.metric_class)), recorder.append(m.recorder);
    out["metrics"] = py::dict(py::arg("id") = id, py::arg("instance") = instance, py::arg("members") = members,
                              py::arg("occurrence") = occurrence, py::arg("recorder_kind") = recorder_kind,
                              py::arg("metric_class") = cls, py::arg("recorder") = recorder);
  }
  {
    py::list id, name, description, type;
    for (const auto& a : d.attributes)
      id.append(a.id), name.append(a.name), description.append(a.description), type.append(a.type);
    out["attributes"] = py::dict(py::arg("id") = id, py::arg("name") = name, py::arg("description") = description,
                                 py::arg("type") = type);
  }
  {
    py::list id, name, type;
    for (const auto& p : d.parameters) id.append(p.id), name.append(p.name), type.append(p.type);
    out["parameters"] = py::dict(py::arg("id") = id, py::arg("name") = name, py::arg("type") = type);
  }
  {
    py::list id, region, parent;
    for (const auto& c : d.calling_contexts) id.append(c.id), region.append(opt(c.region)), parent.append(opt(c.parent));
    out["calling_contexts"] = py::dict(py::arg("id") = id, py::arg("region") = region, py::arg("parent") = parent);
  }
  return out;
}

}  // namespace

void register_trace(py::module_& m) {
  py::class_<Trace, std::shared_ptr<Trace>>(m, "Trace",
                                            "An OTF2 trace opened at its anchor file: global definitions read, events "
                                            "streamed on demand per location.")
      .def(py::init([](const std::string& path) { return std::make_shared<Trace>(path); }), py::arg("path"),
           "Opens the anchor file (.otf2) and reads the global definitions; FormatError for broken input.")
      .def_property_readonly("path", &Trace::path, "The anchor file.")
      .def("events_read", &Trace::events_read,
           "The events every pass over this trace has read so far, on any thread (per batch of 65,536): for a "
           "progress line while an analysis runs.")
      .def_property_readonly(
          "clock",
          [](const Trace& t) {
            const auto& c = t.definitions().clock;
            return py::make_tuple(c.resolution, c.offset, c.length);
          },
          "(ticks per second, global offset, length in ticks).")
      .def_property_readonly(
          "location_count", [](const Trace& t) { return t.definitions().locations.size(); }, "Number of locations.")
      .def_property_readonly(
          "warnings", [](const Trace& t) { return t.definitions().warnings; },
          "Inconsistencies of the definitions that were tolerated (undefined references).")
      .def(
          "definitions", [](const Trace& t) { return definitions_dict(t.definitions()); },
          "The global definitions as a dict of tables (each a dict of equally long lists); references are indices "
          "into the other tables, -1 for none.")
      .def_property_readonly(
          "strings", [](const Trace& t) { return t.definitions().strings; }, "The string definitions, in order.")
      .def(
          "count_events",
          [](const Trace& t, std::optional<std::vector<std::uint32_t>> locations) {
            std::vector<std::vector<std::uint64_t>> counts;
            {
              // (A long pass: the caller's progress line and Ctrl-C keep running meanwhile.)
              py::gil_scoped_release release;
              counts = count_events(t, chosen(t, locations));
            }
            return counts_array(counts);
          },
          py::arg("locations") = py::none(),
          "Events of every type per location: uint64 array [location, event type] (one streaming pass).")
      .def(
          "region_visits",
          [](const Trace& t, std::optional<std::vector<std::uint32_t>> locations) {
            std::vector<std::uint64_t> visits(t.definitions().regions.size());
            std::vector<std::vector<std::uint64_t>> counts;
            {
              py::gil_scoped_release release;
              counts = count_events(t, chosen(t, locations), &visits);
            }
            return py::make_tuple(counts_array(counts), take(std::move(visits)));
          },
          py::arg("locations") = py::none(),
          "count_events and, in the same pass, the Enter and ProgramBegin events per region (uint64 array "
          "[region]): (counts, visits).")
      .def(
          "event_columns",
          [](const Trace& t, std::optional<std::vector<std::uint32_t>> locations,
             std::optional<std::vector<std::uint32_t>> types, std::optional<std::vector<std::uint32_t>> regions,
             bool regions_only, std::uint64_t begin, std::uint64_t end) {
            EventFilter f;
            if (types) {
              f.types.assign(kEventTypeCount, 0);
              for (auto k : *types)
                if (k < std::uint32_t(kEventTypeCount)) f.types[k] = 1;
            }
            if (regions) {
              f.regions.assign(t.definitions().regions.size(), 0);
              for (auto r : *regions)
                if (r < f.regions.size()) f.regions[r] = 1;
              f.regions_only = regions_only;
            }
            f.begin = begin;
            f.end = end;
            EventColumns c;
            {
              py::gil_scoped_release release;
              c = event_columns(t, chosen(t, locations), f);
            }
            py::dict out;
            out["time"] = take(std::move(c.time));
            out["location"] = take(std::move(c.location));
            out["type"] = take(std::move(c.type));
            out["region"] = take(std::move(c.region));
            out["partner"] = take(std::move(c.partner));
            out["communicator"] = take(std::move(c.communicator));
            out["tag"] = take(std::move(c.tag));
            out["bytes"] = take(std::move(c.bytes));
            out["bytes_received"] = take(std::move(c.bytes_received));
            out["request"] = take(std::move(c.request));
            out["metric"] = take(std::move(c.metric));
            py::list members;
            for (auto& col : c.member_values) members.append(take(std::move(col)));
            out["member_values"] = members;
            return out;
          },
          py::arg("locations") = py::none(), py::arg("types") = py::none(), py::arg("regions") = py::none(),
          py::arg("regions_only") = false, py::arg("begin") = 0,
          py::arg("end") = std::numeric_limits<std::uint64_t>::max(),
          "Events as a dict of NumPy columns (time, location, type, region, partner, communicator, tag, bytes, "
          "bytes_received, request, metric; member_values: one float64 column per metric member). Filters: event "
          "type numbers, regions (their Enter/Leave kept, other Enter/Leave dropped; regions_only drops every other "
          "event too), ticks [begin, end).")
      .def(
          "system_tree",
          [](const Trace& t) {
            auto s = system_tree(t.definitions());
            py::list groups;
            for (auto& g : s.groups) groups.append(py::make_tuple(opt(g.group), g.element, take(std::move(g.locations))));
            return py::make_tuple(std::move(s.tree), take(std::move(s.location_order)),
                                  take(std::move(s.location_element)), groups);
          },
          "The trace's machine as a SingleNodeTree, the locations in its depth-first order, each location's tree "
          "element, and the location groups depth-first as (group index or -1, element, location indices).")
      .def(
          "profile",
          [](const Trace& t, std::vector<std::uint32_t> locations) {
            ProfileStats stats;
            std::shared_ptr<profile::LocalProfile> p;
            {
              py::gil_scoped_release release;
              p = std::make_shared<profile::LocalProfile>(trace_profile(t, locations, &stats));
            }
            py::dict d;
            d["events"] = stats.events;
            d["unclosed_frames"] = stats.unclosed_frames;
            return py::make_tuple(p, d);
          },
          py::arg("locations"),
          "The call-path profile of `locations` (columns in this order) in one streaming pass: (LocalProfile, "
          "stats dict with events read and frames left open at a location's end).");
  m.def(
      "read_with_empty_callbacks",
      [](const Trace& t, std::optional<std::vector<std::uint32_t>> locations) {
        py::gil_scoped_release release;
        return t.read_with_empty_callbacks(chosen(t, locations));
      },
      py::arg("trace"), py::arg("locations") = py::none(),
      "Reads the events with callbacks that do nothing (the limit of any reader over libotf2); returns the number "
      "of events.");
  m.def(
      "write_synthetic_trace",
      [](const std::string& directory, const std::string& name, std::uint32_t processes, std::uint64_t iterations,
         bool counters, const std::string& defect) {
        py::gil_scoped_release release;
        return write_synthetic_trace(directory, name, {processes, iterations, counters, defect});
      },
      py::arg("directory"), py::arg("name"), py::arg("processes") = 4, py::arg("iterations") = 1000,
      py::arg("counters") = true, py::arg("defect") = "",
      "Writes a synthetic trace <directory>/<name>.otf2 with OTF2's writer: a ring of MPI processes iterating "
      "solve > {compute, MPI_Send, MPI_Recv, MPI_Allreduce}, two accumulated counters (18 events per iteration, "
      "14 without counters). defect: '' , 'unclosed' or 'mismatched_leave'. Returns the events written.");
  m.def(
      "event_type_names",
      [] {
        std::vector<std::string> names;
        for (int k = 0; k < kEventTypeCount; ++k) names.emplace_back(event_type_name(static_cast<EventType>(k)));
        return names;
      },
      "otf2-print's names of the event types, indexed by event type number.");
}

}  // namespace cubescale::bindings
