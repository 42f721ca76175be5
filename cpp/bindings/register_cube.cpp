// CUBE4 reports for Python. Metric values cross as NumPy arrays over the core's own buffers
// (uint8 [cnodes, locations * width], viewed as the metric's dtype by cubescale.report), kept
// alive by the shared_ptr that the array's base capsule holds: no copies.
#include <pybind11/functional.h>
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include "cubescale/cube/aggregate.hpp"
#include "cubescale/cube/anchor_xml.hpp"
#include "cubescale/cube/reader.hpp"
#include "cubescale/cube/sequence_form.hpp"
#include "cubescale/cube/writer.hpp"
#include "arrays.hpp"
#include "register.hpp"

namespace py = pybind11;

namespace cubescale::bindings {
using namespace cubescale::cube;

namespace {

using ByteArray = py::array_t<std::uint8_t, py::array::c_style>;
using IndexArray = py::array_t<std::uint32_t, py::array::c_style | py::array::forcecast>;

// A read-only view of a (shared, cached) matrix.
py::array bytes_view(std::shared_ptr<const Severity> values) {
  const auto rows = static_cast<py::ssize_t>(values->cnodes());
  const auto row_bytes = static_cast<py::ssize_t>(values->row_bytes());
  auto* holder = new std::shared_ptr<const Severity>(values);
  py::capsule base(holder, [](void* p) { delete static_cast<std::shared_ptr<const Severity>*>(p); });
  py::array out(py::dtype::of<std::uint8_t>(), {rows, row_bytes}, {row_bytes, py::ssize_t(1)}, values->data(), base);
  py::detail::array_proxy(out.ptr())->flags &= ~py::detail::npy_api::NPY_ARRAY_WRITEABLE_;
  return out;
}

py::array present_view(const Severity& values) {
  py::array_t<bool> out(static_cast<py::ssize_t>(values.cnodes()));
  auto m = out.mutable_unchecked<1>();
  for (std::size_t c = 0; c < values.cnodes(); ++c) m(c) = values.present(c);
  return out;
}

py::dict attributes(const Attributes& a) {
  py::dict d;
  for (const auto& [k, v] : a) d[py::str(k)] = v;
  return d;
}

MetricKind kind_of(bool inclusive) { return inclusive ? MetricKind::Inclusive : MetricKind::Exclusive; }

std::shared_ptr<const Severity> select(const Report& r, std::size_t metric, py::object inclusive) {
  // Python objects are read before the GIL is released (np.bool_ converts through Python).
  const bool stored = inclusive.is_none();
  const MetricKind kind = stored ? MetricKind::Inclusive : kind_of(inclusive.cast<bool>());
  py::gil_scoped_release release;
  return stored ? r.values(metric) : r.values(metric, kind);
}

void register_report(py::module_& m) {
  py::class_<Report, std::shared_ptr<Report>>(
      m, "Report",
      "A CUBE4 report: definitions (metric tree, regions, call tree, system tree, all in preorder) and "
      "per-metric value matrices [cnode, location] loaded on first use.")
      .def_property_readonly("metric_count", &Report::metric_count, "Number of metrics.")
      .def_property_readonly("cnode_count", &Report::cnode_count, "Number of call paths (rows).")
      .def_property_readonly("location_count", &Report::location_count, "Number of locations (columns).")
      .def_property_readonly(
          "version", [](const Report& r) { return r.structure().version; }, "The CUBE format version read.")
      .def_property_readonly(
          "attrs", [](const Report& r) { return attributes(r.structure().attrs); }, "Report-level <attr>s as a dict.")
      .def_property_readonly(
          "mirrors", [](const Report& r) { return r.structure().mirrors; }, "Documentation mirror URLs.")
      .def(
          "metrics", [](const Report& r) { return r.structure().metrics; },
          "The metric definitions in preorder (copies).")
      .def(
          "regions", [](const Report& r) { return r.definitions().regions; },
          "The region definitions (copies); parses deferred regions first.")
      .def(
          "cnode_parents",
          [](const Report& r) {
            std::vector<std::int64_t> p;
            for (auto v : r.cnode_parents()) p.push_back(v == kNoParent ? -1 : std::int64_t(v));
            return to_array(p);
          },
          "Parent index of every call path (-1 for roots), int64.")
      .def(
          "cnode_regions",
          [](const Report& r) {
            std::vector<std::uint32_t> v;
            for (const auto& c : r.structure().cnodes) v.push_back(c.region);
            return to_array(v);
          },
          "Region index of every call path, uint32.")
      .def(
          "cnode_file_ids",
          [](const Report& r) {
            std::vector<std::uint64_t> v;
            for (const auto& c : r.structure().cnodes) v.push_back(c.file_id);
            return to_array(v);
          },
          "The id every call path has in the file it was read from, uint64.")
      .def(
          "cnode_parameters",
          [](const Report& r, std::size_t c) {
            py::list out;
            for (const auto& p : r.structure().cnodes.at(c).parameters) out.append(attributes(p));
            return out;
          },
          py::arg("cnode"), "The <parameter> attribute dicts of one call path.")
      .def(
          "system_tree", [](const Report& r) { return r.structure().system; },
          "The system tree (a copy) as a SingleNodeTree.")
      .def(
          "location_elements", [](const Report& r) { return to_array(r.structure().locations); },
          "System-tree element of every location, uint32.")
      .def(
          "location_group_elements", [](const Report& r) { return to_array(r.structure().location_groups); },
          "System-tree element of every location group, uint32.")
      .def(
          "location_ranks", [](const Report& r) { return to_array(r.structure().location_rank); },
          "<rank> of every location, int64.")
      .def(
          "location_group_ranks", [](const Report& r) { return to_array(r.structure().group_rank); },
          "<rank> of every location group, int64.")
      .def(
          "location_file_ids", [](const Report& r) { return to_array(r.structure().location_file_id); },
          "<location Id> of every location (its data column in the file), uint64.")
      .def(
          "location_ancestors",
          [](const Report& r, std::uint32_t depth) { return to_array(r.structure().location_ancestors(depth)); },
          py::arg("depth"), "For every location, its system-tree ancestor at `depth` (itself if shallower).")
      .def(
          "sequence_form",
          [](const Report& r) {
            SequenceForm f;
            {
              py::gil_scoped_release release;
              f = sequence_form(r.structure().system);
            }
            py::dict d;
            d["record_of"] = to_array(f.record_of);
            d["elements"] = to_array(f.elements);
            d["depth_start"] = to_array(f.depth_start);
            d["parent"] = to_array(f.parent);
            d["depth"] = to_array(f.depth);
            d["instances"] = to_array(f.instances);
            d["copies"] = to_array(f.copies);
            d["cls"] = f.cls;
            return d;
          },
          "The system tree in sequence form with each element's record: a dict of record_of (per element, "
          "-1 without a location below), elements (those with a record, by depth) and depth_start (where each "
          "depth's begin in elements), and per record parent (-1 for the root), depth, instances, copies, cls.")
      .def_property_readonly(
          "topologies_xml", [](const Report& r) { return r.structure().topologies_xml; },
          "The inner text of <topologies>, verbatim.")
      .def("loaded", &Report::loaded, py::arg("metric"), "True once a metric's values are in memory.")
      .def(
          "stores_values",
          [](const Report& r, std::size_t metric) {
            if (metric >= r.metric_count()) throw py::index_error("metric index out of range");
            return r.source() == nullptr || r.source()->stores_values(metric);
          },
          py::arg("metric"),
          "Whether the file the report was read from holds the metric's values (its N.index and N.data "
          "members; without them it reads as zero); True for reports built in memory.")
      .def(
          "values", [](const Report& r, std::size_t metric, py::object inclusive) { return bytes_view(select(r, metric, inclusive)); },
          py::arg("metric"), py::arg("inclusive") = py::none(),
          "A read-only uint8 view [cnodes, locations * width] of a metric's values: as stored (None), inclusive "
          "(True) or exclusive (False) along the call tree.")
      .def(
          "values_into",
          [](const Report& r, std::size_t metric, py::object inclusive, py::array out) {
            if (metric >= r.metric_count()) throw py::index_error("metric index out of range");
            if (!out.writeable()) throw py::value_error("out= must be a writable array");
            if (!(out.flags() & py::array::c_style)) throw py::value_error("out= must be C-contiguous");
            const auto& meta = r.structure().metrics[metric];
            const auto want = r.cnode_count() * r.location_count() * meta.dtype.width();
            if (static_cast<std::size_t>(out.nbytes()) != want)
              throw py::value_error("out= holds " + std::to_string(out.nbytes()) + " bytes, the metric needs " +
                                    std::to_string(want));
            auto* memory = static_cast<std::uint8_t*>(out.mutable_data());
            const auto kind = inclusive.is_none() ? meta.kind : kind_of(inclusive.cast<bool>());
            Severity target;
            try {
              target = Severity::borrowing(memory, meta.dtype, r.cnode_count(), r.location_count());
            } catch (const std::invalid_argument& e) {  // e.g. misaligned for the value type
              throw py::value_error(std::string("out= ") + e.what());
            }
            py::gil_scoped_release release;
            r.values_into(metric, kind, target);
          },
          py::arg("metric"), py::arg("inclusive"), py::arg("out"),
          "Writes a metric's values (stored kind if `inclusive` is None) into the writable C-contiguous array `out`.")
      .def(
          "present", [](const Report& r, std::size_t metric, py::object inclusive) { return present_view(*select(r, metric, inclusive)); },
          py::arg("metric"), py::arg("inclusive") = py::none(), "Which rows of a metric are stored (bool per cnode).")
      .def(
          "combine_locations",
          [](const Report& r, std::size_t metric, py::object inclusive, IndexArray group, std::size_t groups) {
            auto v = select(r, metric, inclusive);
            std::vector<std::uint32_t> g(group.data(), group.data() + group.size());
            auto out = std::make_shared<const Severity>(combine_locations(*v, g, groups));
            return bytes_view(out);
          },
          py::arg("metric"), py::arg("inclusive"), py::arg("group"), py::arg("groups"),
          "Combines the location columns into `groups` columns (location l into column group[l]): uint8 view.")
      .def(
          "set_values",
          [](Report& r, std::size_t metric, ByteArray data) {
        const auto& dt = r.structure().metrics.at(metric).dtype;
        Severity s(dt, r.cnode_count(), r.location_count());
        if (static_cast<std::size_t>(data.size()) != s.bytes())
          throw std::invalid_argument("expected " + std::to_string(s.bytes()) + " bytes of values");
        std::memcpy(s.data(), data.data(), s.bytes());
            s.mark_nonzero_rows();
            r.set_values(metric, std::move(s));
          },
          py::arg("metric"), py::arg("data"),
          "Replaces a metric's values (in its stored kind) by the bytes of a [cnode, location] array.");
}

void register_writer(py::module_& m) {
  py::class_<CubexWriter>(m, "CubexWriter",
                          "Streams a .cubex: per metric, blocks of rows in the metric's row order; the file "
                          "appears under its name only when finish() completes.")
      .def(py::init([](const std::shared_ptr<Report>& report, const std::string& path, bool compress, bool system_member) {
             return std::make_unique<CubexWriter>(path, report->definitions(), WriteOptions{compress, system_member});
           }),
           py::arg("definitions_from"), py::arg("path"), py::arg("compress") = false, py::arg("system_member") = true,
           "A writer of the definitions of `definitions_from` to `path` (zlib rows if `compress`; our compact "
           "system tree member if `system_member`).")
      .def(
          "row_order", [](const CubexWriter& w, std::size_t metric) { return to_array(w.row_order(metric)); },
          py::arg("metric"), "The cnode of each row position of a metric, in the order rows are written.")
      .def("begin_metric", &CubexWriter::begin_metric, py::arg("metric"), "Starts writing a metric's rows.")
      .def(
          "write_rows",
          [](CubexWriter& w, ByteArray rows) {
            if (rows.ndim() != 2) throw std::invalid_argument("rows must be a 2-d byte array [rows, row bytes]");
            py::gil_scoped_release release;
            w.write_rows(rows.data(), static_cast<std::size_t>(rows.shape(0)));
          },
          py::arg("rows"), "Writes the next rows (uint8 [rows, row bytes]); all-zero rows are left out.")
      .def("skip_rows", &CubexWriter::skip_rows, py::arg("rows"), "The next rows are zero everywhere: left out.")
      .def("begin_row", &CubexWriter::begin_row, "Starts a non-zero row given in pieces (write_row_piece).")
      .def("end_row", &CubexWriter::end_row, "Ends the row given in pieces (all its bytes written).")
      .def("end_metric", &CubexWriter::end_metric, "Ends the metric: writes its index.")
      .def("finish", &CubexWriter::finish, "Writes anchor.xml and renames the file into place.");
}

}  // namespace

void register_cube(py::module_& m) {
  register_report(m);
  register_writer(m);
  m.def(
      "open_cubex",
      [](const std::string& path) {
        py::gil_scoped_release release;
        return open_cubex(path);
      },
      py::arg("path"),
      "Opens a .cubex (reads anchor.xml only); FormatError for malformed input, OSError if unreadable.");
  m.def(
      "open_cubex_bytes", [](py::bytes data, const std::string& name) { return open_cubex_bytes(std::string(data), name); },
      py::arg("data"), py::arg("name") = "<bytes>", "The same over the bytes of a .cubex (tests, fuzzing).");
  m.def(
      "report_from_anchor",
      [](py::bytes xml, const std::string& name) {
        return std::make_shared<Report>(parse_anchor(inflate_if_gzip(std::string(xml), name, "anchor.xml"), name));
      },
      py::arg("xml"), py::arg("name") = "<anchor.xml>",
      "A report with the definitions of an anchor.xml text (gzipped or not) and all values zero.");
  m.def(
      "load_all",
      [](const Report& r) {
        py::gil_scoped_release release;
        load_all(r);
      },
      py::arg("report"), "Loads every metric's values now.");
  m.def(
      "write_cubex",
      [](const Report& r, const std::string& path, bool compress, bool system_member, bool derived_as_values) {
        py::gil_scoped_release release;
        write_cubex(r, path, WriteOptions{compress, system_member, derived_as_values});
      },
      py::arg("report"), py::arg("path"), py::arg("compress") = false, py::arg("system_member") = true,
      py::arg("derived_as_values") = false,
      "Writes a report as .cubex through a temporary file renamed when complete; derived metrics as CubePL "
      "expressions without data, or with derived_as_values as ordinary metrics holding their values.");

  // --- what a report knows about its file (issue #19): ignored bytes, extra members.
  // A separate block, to be moved into the `_core.cube` submodule.
  m.def(
      "report_ignored_bytes",
      [](const Report& r, std::size_t metric) -> std::uint64_t {
        if (metric >= r.metric_count()) throw py::index_error("metric index out of range");
        const auto* source = r.source();
        if (!source) return 0;
        if (const auto counted = source->ignored_bytes(metric)) return *counted;  // loaded once already
        {
          py::gil_scoped_release release;
          r.values(metric);  // loading counts them
        }
        return source->ignored_bytes(metric).value_or(0);
      },
      "Bytes of the metric's data member beyond the rows its index lists (trailing rows, padding), "
      "ignored when it was loaded; loads the metric first unless it was loaded before (also when "
      "released since). 0 for reports not read from a file.",
      py::arg("report"), py::arg("metric"));
  m.def(
      "report_extra_members",
      [](const Report& r) {
        std::vector<std::pair<std::string, std::uint64_t>> out;
        if (const auto* source = r.source())
          for (const auto& e : source->extra_members()) out.emplace_back(e.name, e.size);
        return out;
      },
      "(name, size) of every member of the report's file that is not part of the report "
      "(not anchor.xml, N.index, N.data or cubescale.systree), in file order; written again by write_cubex.",
      py::arg("report"));
  m.def(
      "report_extra_member_bytes",
      [](const Report& r, const std::string& name) {
        const auto* source = r.source();
        const auto& extras = source ? source->extra_members() : std::vector<ExtraMember>{};
        for (std::size_t i = 0; i < extras.size(); ++i) {
          if (extras[i].name != name) continue;
          std::string bytes(extras[i].size, '\0');
          {
            py::gil_scoped_release release;
            source->read_extra(i, 0, bytes.size(), bytes.data());
          }
          return py::bytes(bytes);
        }
        throw py::key_error("no extra member named " + name);
      },
      "The bytes of the extra member `name` (KeyError if there is none).", py::arg("report"), py::arg("name"));
}

}  // namespace cubescale::bindings
