#include "cubescale/cube/anchor_xml.hpp"

#include <zlib.h>

#include <charconv>
#include <unordered_map>

#include "cubescale/common/format_error.hpp"
#include "cubescale/cube/text.hpp"
#include "cubescale/cube/xml.hpp"

namespace cubescale::cube {

namespace {

using systree::Kind;

constexpr const char* kMember = "anchor.xml";
// Far deeper than any real tree; bounds the explicit stacks against hostile nesting.
constexpr std::size_t kMaxNesting = 100000;

// A system tree element as parsed; SingleTree wants name and class at creation, which come
// after the start tag, so elements are collected first and built in one loop at the end.
struct SystemElement {
  Kind kind = Kind::Node;
  std::uint32_t parent = kNoParent;
  std::string name, cls, type;
  Attributes properties;
  std::uint64_t file_id = 0;
  std::int64_t rank = -1;
  std::size_t offset = 0;
};

bool system_kind(std::string_view tag, Kind& kind, std::string& cube3_class) {
  cube3_class.clear();
  if (tag == "systemtreenode") kind = Kind::Node;
  else if (tag == "machine" || tag == "node") kind = Kind::Node, cube3_class = tag;
  else if (tag == "locationgroup") kind = Kind::LocationGroup;
  else if (tag == "process") kind = Kind::LocationGroup, cube3_class = tag;
  else if (tag == "location") kind = Kind::Location;
  else if (tag == "thread") kind = Kind::Location, cube3_class = tag;
  else return false;
  return true;
}

class AnchorParser {
 public:
  AnchorParser(std::string_view xml, const std::string& file, AnchorOptions options)
      : tokens_(xml, file, kMember), file_(file), options_(options) {}

  Definitions run() {
    bool saw_cube = false;
    while (true) {
      const auto& t = tokens_.next();
      if (t.type == XmlToken::Eof) break;
      if (t.type == XmlToken::Start) {
        if (stack_.size() >= kMaxNesting) tokens_.fail(t.offset, "elements nested too deeply");
        if (stack_.empty() && t.name != "cube") tokens_.fail(t.offset, "the root element must be <cube>");
        saw_cube = true;
        stack_.push_back(t.name);
        text_.clear();
        start(t);
      } else if (t.type == XmlToken::End) {
        if (stack_.empty() || stack_.back() != t.name)
          tokens_.fail(t.offset, "unexpected end tag </" + std::string(t.name) + ">");
        stack_.pop_back();
        end(t);
        text_.clear();
      } else if (t.type == XmlToken::Text) {
        if (stack_.empty()) tokens_.fail(t.offset, "text outside the root element");
        text_ = t.text;
        text_offset_ = t.offset;
      }
    }
    if (!saw_cube) tokens_.fail(0, "no <cube> element");
    if (!stack_.empty()) tokens_.fail(tokens_.source().size(), "unexpected end: <" + std::string(stack_.back()) + "> not closed");
    finish();
    return std::move(defs_);
  }

 private:
  std::string_view parent_tag() const { return stack_.size() >= 2 ? stack_[stack_.size() - 2] : std::string_view(); }

  std::uint64_t id_attribute(const XmlToken& t, std::string_view key) {
    const auto* v = tokens_.attribute(key);
    if (!v) tokens_.fail(t.offset, "<" + std::string(t.name) + "> without " + std::string(key));
    std::uint64_t id = 0;
    auto [p, ec] = std::from_chars(v->data(), v->data() + v->size(), id);
    if (ec != std::errc() || p != v->data() + v->size() || id > 0xffffffffull)
      tokens_.fail(t.offset, "bad " + std::string(key) + " \"" + printable(*v) + "\"");
    return id;
  }

  std::int64_t integer(const std::string& text, std::size_t offset, const char* what) {
    std::int64_t v = 0;
    auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc() || p != text.data() + text.size())
      tokens_.fail(offset, std::string("bad ") + what + " \"" + printable(text) + "\"");
    return v;
  }

  void start(const XmlToken& t) {
    const auto name = t.name;
    if (name == "cube") {
      if (const auto* v = tokens_.attribute("version")) defs_.version = *v;
    } else if (name == "system" && options_.skip_system) {
      skip_system(t);
    } else if (name == "metric") {
      start_metric(t);
    } else if (name == "region") {
      start_region(t);
    } else if (name == "cnode") {
      start_cnode(t);
    } else if (name == "parameter" && parent_tag() == "cnode") {
      Attributes a;
      for (const auto& [k, v] : t.attributes) a.emplace_back(std::string(k), v);
      defs_.cnodes[cnode_stack_.back()].parameters.push_back(std::move(a));
    } else if (name == "attr") {
      add_attr(t);
    } else if (name == "topologies") {
      topologies_start_ = t.end;
    } else {
      Kind kind;
      std::string cube3_class;
      if (in_system_ && system_kind(name, kind, cube3_class)) start_system_element(t, kind, cube3_class);
      else if (name == "system") in_system_ = true;
    }
  }

  // Jumps to </system>; only the verbatim <topologies> text is taken from the skipped part.
  void skip_system(const XmlToken& t) {
    const auto src = tokens_.source();
    const auto end = src.find("</system>", t.end);
    if (end == std::string_view::npos) tokens_.fail(t.offset, "<system> not closed");
    const auto body = src.substr(t.end, end - t.end);
    const auto open = body.find("<topologies>");
    const auto close = body.rfind("</topologies>");
    if (open != std::string_view::npos && close != std::string_view::npos && close > open)
      defs_.topologies_xml = std::string(body.substr(open + 12, close - open - 12));
    tokens_.seek(end);
  }

  void start_metric(const XmlToken& t) {
    Metric m;
    m.file_id = id_attribute(t, "id");
    m.parent = parent_tag() == "metric" ? metric_stack_.back() : kNoParent;
    if (m.parent == kNoParent && parent_tag() != "metrics") tokens_.fail(t.offset, "<metric> outside <metrics>");
    const auto* type = tokens_.attribute("type");
    m.kind = (type && *type == "INCLUSIVE") ? MetricKind::Inclusive : MetricKind::Exclusive;
    for (const auto& [k, v] : t.attributes)
      if (k != "id" && k != "type") m.xml_attributes.emplace_back(std::string(k), v);
    metric_stack_.push_back(static_cast<std::uint32_t>(defs_.metrics.size()));
    defs_.metrics.push_back(std::move(m));
    metric_offsets_.push_back(t.offset);
  }

  void start_region(const XmlToken& t) {
    Region r;
    r.file_id = id_attribute(t, "id");
    if (const auto* v = tokens_.attribute("mod")) r.mod = *v;
    if (const auto* v = tokens_.attribute("begin")) r.begin = integer(*v, t.offset, "region begin");
    if (const auto* v = tokens_.attribute("end")) r.end = integer(*v, t.offset, "region end");
    defs_.regions.push_back(std::move(r));
    region_open_ = true;
  }

  void start_cnode(const XmlToken& t) {
    Cnode c;
    c.file_id = id_attribute(t, "id");
    c.parent = parent_tag() == "cnode" ? cnode_stack_.back() : kNoParent;
    if (c.parent == kNoParent && parent_tag() != "program") tokens_.fail(t.offset, "<cnode> outside <program>");
    callee_.push_back({id_attribute(t, "calleeId"), t.offset});
    cnode_stack_.push_back(static_cast<std::uint32_t>(defs_.cnodes.size()));
    defs_.cnodes.push_back(std::move(c));
  }

  void start_system_element(const XmlToken& t, Kind kind, const std::string& cube3_class) {
    SystemElement e;
    e.kind = kind;
    e.offset = t.offset;
    e.cls = cube3_class;
    e.parent = system_stack_.empty() ? kNoParent : system_stack_.back();
    if (e.parent != kNoParent) {
      const auto pk = system_[e.parent].kind;
      const bool ok = (pk == Kind::Node && kind != Kind::Location) || (pk == Kind::LocationGroup && kind == Kind::Location);
      if (!ok) tokens_.fail(t.offset, "<" + std::string(t.name) + "> cannot be nested here");
    } else if (kind != Kind::Node) {
      tokens_.fail(t.offset, "<" + std::string(t.name) + "> outside a system tree node");
    } else if (has_system_root_) {
      tokens_.fail(t.offset, "a second root system tree node (a report has one machine root)");
    } else {
      has_system_root_ = true;
    }
    if (system_stack_.size() >= systree::kMaxDepth) tokens_.fail(t.offset, "system tree deeper than the limit");
    const char* id_key = tokens_.attribute("Id") ? "Id" : "id";
    e.file_id = id_attribute(t, id_key);
    system_stack_.push_back(static_cast<std::uint32_t>(system_.size()));
    system_.push_back(std::move(e));
  }

  void add_attr(const XmlToken& t) {
    const auto* key = tokens_.attribute("key");
    const auto* value = tokens_.attribute("value");
    if (!key || !value) tokens_.fail(t.offset, "<attr> needs key and value");
    const auto parent = parent_tag();
    if (parent == "cube") defs_.attrs.emplace_back(*key, *value);
    else if (parent == "metric") defs_.metrics[metric_stack_.back()].attrs.emplace_back(*key, *value);
    else if (parent == "region" && region_open_) defs_.regions.back().attrs.emplace_back(*key, *value);
    else if (parent == "cnode") defs_.cnodes[cnode_stack_.back()].attrs.emplace_back(*key, *value);
    else if (!system_stack_.empty()) system_[system_stack_.back()].properties.emplace_back(*key, *value);
  }

  void end(const XmlToken& t) {
    const auto name = t.name;
    const auto parent = stack_.empty() ? std::string_view() : stack_.back();
    if (name == "metric") {
      metric_stack_.pop_back();
    } else if (name == "cnode") {
      cnode_stack_.pop_back();
    } else if (name == "region") {
      region_open_ = false;
    } else if (name == "murl") {
      defs_.mirrors.push_back(text_);
    } else if (name == "topologies" && topologies_start_) {
      defs_.topologies_xml = std::string(tokens_.source().substr(topologies_start_, t.offset - topologies_start_));
    } else if (name == "system") {
      in_system_ = false;
    } else if (parent == "metric") {
      metric_field(name, defs_.metrics[metric_stack_.back()]);
    } else if (parent == "region" && region_open_) {
      region_field(name, defs_.regions.back());
    } else if (!system_stack_.empty() && (name == "name" || name == "class" || name == "type" || name == "rank")) {
      system_field(name, system_[system_stack_.back()]);
    } else if (!system_stack_.empty()) {
      Kind kind;
      std::string ignored;
      if (system_kind(name, kind, ignored)) system_stack_.pop_back();
    }
  }

  void metric_field(std::string_view name, Metric& m) {
    if (name == "disp_name") m.disp_name = text_;
    else if (name == "uniq_name") m.uniq_name = text_;
    else if (name == "uom") m.uom = text_;
    else if (name == "val") m.val = text_;
    else if (name == "url") m.url = text_;
    else if (name == "descr") m.descr = text_;
    else if (name == "dtype") {
      auto t = parse_data_type(text_);
      if (!t) tokens_.fail(text_offset_, "unknown metric data type \"" + printable(text_) + "\"");
      m.dtype = std::move(*t);
    }
  }

  void region_field(std::string_view name, Region& r) {
    if (name == "name") r.name = text_;
    else if (name == "mangled_name") r.mangled_name = text_;
    else if (name == "paradigm") r.paradigm = text_;
    else if (name == "role") r.role = text_;
    else if (name == "url") r.url = text_;
    else if (name == "descr") r.descr = text_;
  }

  void system_field(std::string_view name, SystemElement& e) {
    if (name == "name") e.name = text_;
    else if (name == "class") e.cls = text_;
    else if (name == "type") e.type = text_;
    else if (name == "rank") e.rank = integer(text_, text_offset_, "rank");
  }

  void finish() {
    resolve_callees();
    for (std::size_t i = 0; i < defs_.metrics.size(); ++i) {
      if (defs_.metrics[i].dtype.name.empty()) tokens_.fail(metric_offsets_[i], "metric without <dtype>");
    }
    if (!options_.skip_system) build_system();
  }

  void resolve_callees() {
    std::unordered_map<std::uint64_t, std::uint32_t> region_of_id;
    for (std::uint32_t i = 0; i < defs_.regions.size(); ++i) region_of_id.emplace(defs_.regions[i].file_id, i);
    for (std::size_t c = 0; c < defs_.cnodes.size(); ++c) {
      const auto it = region_of_id.find(callee_[c].first);
      if (it == region_of_id.end())
        tokens_.fail(callee_[c].second, "cnode calls unknown region " + std::to_string(callee_[c].first));
      defs_.cnodes[c].region = it->second;
    }
  }

  void build_system() {
    std::vector<std::uint32_t> element(system_.size());
    std::vector<std::uint32_t> location_in_group(system_.size(), 0);
    for (std::size_t i = 0; i < system_.size(); ++i) {
      auto& e = system_[i];
      std::string cls = e.kind == Kind::Node ? e.cls : (!e.type.empty() ? e.type : (!e.cls.empty() ? e.cls : std::string()));
      if (cls.empty()) cls = e.kind == Kind::Node ? "node" : e.kind == Kind::LocationGroup ? "process" : "thread";
      element[i] = e.parent == kNoParent ? defs_.system.add_root(e.kind, cls, e.name)
                                         : defs_.system.add_child(element[e.parent], e.kind, cls, e.name);
      for (const auto& [k, v] : e.properties) defs_.system.set_property(element[i], k, v);
      if (e.kind == Kind::LocationGroup) {
        defs_.location_groups.push_back(element[i]);
        defs_.group_rank.push_back(e.rank >= 0 ? e.rank : std::int64_t(defs_.location_groups.size() - 1));
      } else if (e.kind == Kind::Location) {
        defs_.locations.push_back(element[i]);
        const auto in_group = location_in_group[e.parent]++;
        defs_.location_rank.push_back(e.rank >= 0 ? e.rank : std::int64_t(in_group));
        defs_.location_file_id.push_back(e.file_id);
      }
    }
    check_location_ids();
  }

  // Data columns are addressed by location Id, so the Ids must be a permutation of 0..n-1.
  void check_location_ids() {
    const auto n = defs_.location_file_id.size();
    std::vector<std::uint8_t> seen(n, 0);
    std::size_t l = 0;
    for (std::size_t i = 0; i < system_.size(); ++i) {
      if (system_[i].kind != Kind::Location) continue;
      const auto id = defs_.location_file_id[l++];
      if (id >= n || seen[id])
        tokens_.fail(system_[i].offset, "location Id " + std::to_string(id) + " is not a unique number below " +
                                            std::to_string(n));
      seen[id] = 1;
    }
  }

  XmlTokenizer tokens_;
  std::string file_;
  AnchorOptions options_;
  Definitions defs_;
  std::vector<std::string_view> stack_;
  std::string text_;
  std::size_t text_offset_ = 0;
  std::vector<std::uint32_t> metric_stack_, cnode_stack_, system_stack_;
  std::vector<std::size_t> metric_offsets_;
  std::vector<std::pair<std::uint64_t, std::size_t>> callee_;
  std::vector<SystemElement> system_;
  bool region_open_ = false, in_system_ = false, has_system_root_ = false;
  std::size_t topologies_start_ = 0;
};

}  // namespace

Definitions parse_anchor(std::string_view xml, const std::string& file, AnchorOptions options) {
  // Names end up as Python strings: reject bytes that are not UTF-8 once, up front.
  std::size_t bad = 0;
  if (!valid_utf8(xml, bad)) throw FormatError(file, kMember, bad, "anchor.xml is not valid UTF-8");
  return AnchorParser(xml, file, options).run();
}

std::string inflate_if_gzip(std::string_view bytes, const std::string& file, const std::string& member) {
  if (bytes.size() < 2 || static_cast<unsigned char>(bytes[0]) != 0x1f || static_cast<unsigned char>(bytes[1]) != 0x8b)
    return std::string(bytes);
  z_stream z{};
  if (inflateInit2(&z, 15 + 32) != Z_OK) throw FormatError(file, member, 0, "cannot start inflating");
  std::string out;
  char buf[1 << 16];
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
  z.avail_in = static_cast<uInt>(bytes.size());
  int rc = Z_OK;
  while (rc != Z_STREAM_END) {
    z.next_out = reinterpret_cast<Bytef*>(buf);
    z.avail_out = sizeof buf;
    rc = inflate(&z, Z_NO_FLUSH);
    if (rc != Z_OK && rc != Z_STREAM_END) {
      const auto at = z.total_in;
      inflateEnd(&z);
      throw FormatError(file, member, at, "corrupt gzip data");
    }
    out.append(buf, sizeof buf - z.avail_out);
    if (rc == Z_OK && z.avail_in == 0 && z.avail_out != 0) {
      inflateEnd(&z);
      throw FormatError(file, member, bytes.size(), "truncated gzip data");
    }
  }
  inflateEnd(&z);
  return out;
}

}  // namespace cubescale::cube
