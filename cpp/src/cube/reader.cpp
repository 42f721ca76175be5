#include "cubescale/cube/reader.hpp"

#include <atomic>
#include <cctype>
#include <unordered_map>

#include "cubescale/common/format_error.hpp"
#include "cubescale/cube/anchor_xml.hpp"
#include "cubescale/cube/archive.hpp"
#include "cubescale/cube/system_member.hpp"
#include "cubescale/cube/tar.hpp"
#include "cubescale/cube/values_io.hpp"

namespace cubescale::cube {

namespace {

// Everything a metric loader needs; shared by the loader closure and kept alive by it. It is
// also the report's SourceFile (extra members, ignored bytes).
struct OpenedFile final : SourceFile {
  std::shared_ptr<Archive> archive;
  std::string name;
  std::unordered_map<std::string, TarMember> members;
  std::vector<TarMember> extras;  // members that are not part of the report, in file order
  std::vector<ExtraMember> extra_list;
  std::vector<std::uint32_t> deep, wide;
  std::vector<std::uint32_t> column_of;  // empty when location Ids are in document order
  std::vector<Metric> metrics;           // only file id, kind and data type are used
  std::size_t locations = 0;
  std::unique_ptr<std::atomic<std::int64_t>[]> ignored;  // per metric; -1 until loaded

  MemberBytes member(const TarMember& m) const { return MemberBytes(*archive, m); }
  const TarMember* find(const std::string& n) const {
    const auto it = members.find(n);
    return it == members.end() ? nullptr : &it->second;
  }

  const std::vector<ExtraMember>& extra_members() const override { return extra_list; }
  void read_extra(std::size_t i, std::uint64_t offset, std::size_t n, void* dst) const override {
    const auto& m = extras.at(i);
    member(m).copy(offset, n, dst);
  }
  bool stores_values(std::size_t metric) const override {
    const auto id = std::to_string(metrics.at(metric).file_id);
    return find(id + ".index") && find(id + ".data");
  }
  std::optional<std::uint64_t> ignored_bytes(std::size_t metric) const override {
    const auto v = ignored[metric].load(std::memory_order_relaxed);
    if (v < 0) return std::nullopt;
    return static_cast<std::uint64_t>(v);
  }
};

// Whether a member belongs to the report itself: anchor.xml, our system tree member, or a
// values member `N.index` / `N.data` (of a metric or a stale id: those are not copied either,
// as the writer renumbers metric ids).
bool report_member(const std::string& name) {
  if (name == "anchor.xml" || name == kSystemMember) return true;
  const auto dot = name.find('.');
  if (dot == 0 || dot == std::string::npos) return false;
  for (std::size_t i = 0; i < dot; ++i)
    if (!std::isdigit(static_cast<unsigned char>(name[i]))) return false;
  const auto ext = name.substr(dot);
  return ext == ".index" || ext == ".data";
}

// N.index and N.data come in pairs: one without the other read as an all-zero metric (a
// renamed or lost member). A metric without both is all zero on purpose (Score-P leaves out
// metrics without values, derived metrics have none); a pair of an id no metric has is
// ignored (a stale id: the writer renumbers metric ids and does not copy it).
// `names` are the archive's members in file order: the first half pair is named.
void check_value_pairs(const OpenedFile& f, const std::vector<std::string>& names) {
  for (const auto& name : names) {
    if (!report_member(name) || name == "anchor.xml" || name == kSystemMember) continue;
    const auto dot = name.find('.');
    const bool index = name.compare(dot, std::string::npos, ".index") == 0;
    const auto other = name.substr(0, dot) + (index ? ".data" : ".index");
    if (!f.find(other)) throw FormatError(f.name, name, f.find(name)->header_offset, name + " without " + other);
  }
}

Severity load_metric(const OpenedFile& f, std::size_t metric) {
  const auto& m = f.metrics[metric];
  const auto cnodes = f.deep.size();
  const auto id = std::to_string(m.file_id);
  const auto* index_member = f.find(id + ".index");
  const auto* data_member = f.find(id + ".data");
  if (!index_member || !data_member) {  // no data: all zero
    f.ignored[metric].store(0, std::memory_order_relaxed);
    return Severity(m.dtype, cnodes, f.locations);
  }
  const auto index = parse_index(f.member(*index_member), cnodes, {f.name, id + ".index"});
  // Rows in the file are written whole; only the others need clearing.
  auto out = Severity::for_overwrite(m.dtype, cnodes, f.locations);
  const auto ignored = read_data(f.member(*data_member), index, row_order(m.kind, f.deep, f.wide), f.column_of, out,
                                 {f.name, id + ".data"});
  out.zero_absent_rows();
  f.ignored[metric].store(static_cast<std::int64_t>(ignored), std::memory_order_relaxed);
  return out;
}

// One stored row of a metric (Report::RowLoader); false for compressed rows.
bool load_row(const OpenedFile& f, std::size_t metric, std::size_t cnode, Severity& row) {
  const auto& m = f.metrics[metric];
  const auto id = std::to_string(m.file_id);
  const auto* index_member = f.find(id + ".index");
  const auto* data_member = f.find(id + ".data");
  if (!index_member || !data_member) {  // no data: all zero
    std::fill(row.data(), row.data() + row.bytes(), std::uint8_t(0));
    return true;
  }
  const auto index = parse_index(f.member(*index_member), f.deep.size(), {f.name, id + ".index"});
  return read_row(f.member(*data_member), index, row_order(m.kind, f.deep, f.wide), f.column_of, cnode, row,
                  {f.name, id + ".data"});
}

std::vector<std::uint32_t> columns_of(const Definitions& defs) {
  bool identity = true;
  for (std::size_t l = 0; l < defs.location_file_id.size() && identity; ++l) identity = defs.location_file_id[l] == l;
  if (identity) return {};
  std::vector<std::uint32_t> cols(defs.location_file_id.size());
  for (std::size_t l = 0; l < cols.size(); ++l) cols[l] = static_cast<std::uint32_t>(defs.location_file_id[l]);
  return cols;
}

// No anchor.xml: not a CUBE4 report, or a file cut short. Every writer ends the archive with zero
// blocks: a last member whose blocks reach the end of the file (`listed_end`) without them is a
// file cut between two members (the anchor, which CubeLib writes last, lost with the rest).
[[noreturn]] void refuse_without_anchor(const OpenedFile& f, const std::string& last, std::uint64_t listed_end) {
  if (!last.empty() && listed_end >= f.archive->size())
    throw FormatError(f.name, "anchor.xml", listed_end,
                      "no anchor.xml member, and the archive ends after member " + last +
                          " without tar's end blocks: the file was cut short");
  throw FormatError(f.name, "anchor.xml", 0, "no anchor.xml member: not a CUBE4 report");
}

std::shared_ptr<Report> open_archive(std::shared_ptr<Archive> archive, const std::string& name) {
  auto f = std::make_shared<OpenedFile>();
  f->archive = std::move(archive);
  f->name = name;
  std::vector<std::string> names;
  std::uint64_t listed_end = 0;  // where the last member's blocks end
  for (auto& m : f->archive->members()) {
    names.push_back(m.name);
    listed_end = m.data_offset + (m.size + 511) / 512 * 512;
    const bool seen = f->members.count(m.name) != 0;
    // A member of the report named twice is ambiguous (tar extracts the last, we would read
    // the first): refused. An extra member named twice counts once, the first (members.emplace
    // keeps it), so every listed extra member is found by its name.
    if (seen && report_member(m.name))
      throw FormatError(name, m.name, m.header_offset, "a second member named " + m.name);
    if (!report_member(m.name) && !seen) {
      f->extras.push_back(m);
      f->extra_list.push_back({m.name, m.size});
    }
    f->members.emplace(m.name, std::move(m));
  }
  const auto* anchor = f->find("anchor.xml");
  if (!anchor) refuse_without_anchor(*f, names.empty() ? std::string() : names.back(), listed_end);
  check_value_pairs(*f, names);  // (after: a cut leaves a pair half)
  const auto* system = f->find(kSystemMember);
  // A plain anchor.xml of an archive in memory is parsed where it lies; one read on demand is
  // read into a buffer, a gzipped one inflated into one.
  std::shared_ptr<const std::string> anchor_copy;
  std::string_view stored_anchor;
  if (f->archive->in_memory()) {
    stored_anchor = f->archive->memory().substr(anchor->data_offset, anchor->size);
  } else {
    auto text = std::make_shared<std::string>(anchor->size, '\0');
    f->member(*anchor).copy(0, anchor->size, text->data());
    stored_anchor = *text;
    anchor_copy = std::move(text);
  }
  // Regions are parsed from these bytes later (see Report::definitions()): they stay alive
  // with the regions, as the archive in memory or as a text of their own.
  DeferredRegions regions{anchor_copy ? std::shared_ptr<const void>(anchor_copy) : std::shared_ptr<const void>(f->archive),
                          stored_anchor, name, {}};
  if (is_gzip(stored_anchor)) {
    auto inflated = std::make_shared<const std::string>(inflate_if_gzip(stored_anchor, name, "anchor.xml"));
    regions.xml = *inflated;
    regions.owner = std::move(inflated);
  }
  auto [defs, region_offsets, spelled] = parse_anchor_parts(regions.xml, name, AnchorOptions{system != nullptr});
  regions.offsets = std::move(region_offsets);
  if (system) {
    std::string scratch;
    decode_system_member(f->member(*system).view(0, system->size, scratch), defs, name, spelled);
  }
  f->deep = deep_order(defs);
  f->wide = wide_order(defs);
  f->column_of = columns_of(defs);
  f->locations = defs.locations.size();
  for (const auto& m : defs.metrics) {
    Metric slim;
    slim.file_id = m.file_id;
    slim.kind = m.kind;
    slim.dtype = m.dtype;
    f->metrics.push_back(std::move(slim));
  }
  f->ignored = std::make_unique<std::atomic<std::int64_t>[]>(f->metrics.size());
  for (std::size_t m = 0; m < f->metrics.size(); ++m) f->ignored[m].store(-1, std::memory_order_relaxed);
  auto loader = [f](std::size_t metric) { return load_metric(*f, metric); };
  auto report = std::make_shared<Report>(std::move(defs), std::move(loader), std::move(regions));
  report->set_source(f);
  report->set_row_loader([f](std::size_t metric, std::size_t cnode, Severity& row) { return load_row(*f, metric, cnode, row); });
  return report;
}

}  // namespace

std::shared_ptr<Report> open_cubex(const std::string& path) { return open_archive(Archive::open(path), path); }

std::shared_ptr<Report> open_cubex(const std::string& path, std::uint64_t read_whole_below) {
  return open_archive(Archive::open(path, read_whole_below), path);
}

std::shared_ptr<Report> open_cubex_bytes(std::string bytes, const std::string& name) {
  return open_archive(Archive::own(std::move(bytes), name), name);
}

void load_all(const Report& report) {
  for (std::size_t m = 0; m < report.metric_count(); ++m)
    if (!is_derived(report.structure().metrics[m])) report.values(m);  // derived ones are computed on use
}

}  // namespace cubescale::cube
