// Writes anchor.xml in CubeW's layout: CubeLib reads it with a grammar, so element order
// (name, class, attrs, location groups, then child nodes; metric fields in fixed order)
// matters, not only well-formedness. Ids are our indices, so location Id = data column.
#include <algorithm>
#include <charconv>
#include <cstdint>
#include <optional>

#include "cubescale/common/format_error.hpp"
#include "cubescale/cube/anchor_xml.hpp"
#include "cubescale/cube/xml.hpp"

namespace cubescale::cube {

namespace {

using systree::Kind;

void element(std::string& out, const char* tag, std::string_view text) {
  out += '<';
  out += tag;
  out += '>';
  out += xml_escape(text);
  out += "</";
  out += tag;
  out += ">\n";
}

void attrs(std::string& out, const Attributes& a) {
  for (const auto& [k, v] : a) out += "<attr key=\"" + xml_escape(k) + "\" value=\"" + xml_escape(v) + "\"/>\n";
}

void write_header(std::string& out, const Definitions& d) {
  out += "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\n<cube version=\"4.4\">\n";
  attrs(out, d.attrs);
  out += "<doc>\n<mirrors>\n";
  for (const auto& m : d.mirrors) element(out, "murl", m);
  out += "</mirrors>\n</doc>\n";
}

void write_metrics(std::string& out, const Definitions& d) {
  out += "<metrics>\n";
  const auto n = d.metrics.size();
  std::vector<std::uint32_t> open;  // metric ancestors whose </metric> is pending
  for (std::uint32_t i = 0; i < n; ++i) {
    const auto& m = d.metrics[i];
    while (!open.empty() && open.back() != m.parent) out += "</metric>\n", open.pop_back();
    out += "<metric id=\"" + std::to_string(i) + "\" type=\"" + metric_type_name(m) + "\"";
    for (const auto& [k, v] : m.xml_attributes) out += " " + k + "=\"" + xml_escape(v) + "\"";
    out += ">\n";
    element(out, "disp_name", m.disp_name);
    element(out, "uniq_name", m.uniq_name);
    element(out, "dtype", m.dtype.name);
    element(out, "uom", m.uom);
    if (!m.val.empty()) element(out, "val", m.val);
    element(out, "url", m.url);
    element(out, "descr", m.descr);
    if (is_derived(m)) element(out, "cubepl", m.cubepl);  // CubeW: after <descr>; no data members
    if (!m.cubepl_init.empty()) element(out, "cubeplinit", m.cubepl_init);  // also kept for stored metrics
    attrs(out, m.attrs);
    open.push_back(i);
  }
  while (!open.empty()) out += "</metric>\n", open.pop_back();
  out += "</metrics>\n";
}

void write_program(std::string& out, const Definitions& d) {
  out += "<program>\n";
  for (std::size_t i = 0; i < d.regions.size(); ++i) {
    const auto& r = d.regions[i];
    out += "<region id=\"" + std::to_string(i) + "\" mod=\"" + xml_escape(r.mod) + "\" begin=\"" +
           std::to_string(r.begin) + "\" end=\"" + std::to_string(r.end) + "\">\n";
    element(out, "name", r.name);
    element(out, "mangled_name", r.mangled_name);
    element(out, "paradigm", r.paradigm);
    element(out, "role", r.role);
    element(out, "url", r.url);
    element(out, "descr", r.descr);
    attrs(out, r.attrs);
    out += "</region>\n";
  }
  std::vector<std::uint32_t> open;
  for (std::uint32_t i = 0; i < d.cnodes.size(); ++i) {
    const auto& c = d.cnodes[i];
    while (!open.empty() && open.back() != c.parent) out += "</cnode>\n", open.pop_back();
    out += "<cnode id=\"" + std::to_string(i) + "\"";
    if (c.line) out += " line=\"" + std::to_string(*c.line) + "\"";
    if (c.mod) out += " mod=\"" + xml_escape(*c.mod) + "\"";
    out += " calleeId=\"" + std::to_string(c.region) + "\">\n";
    for (const auto& p : c.parameters) {
      out += "<parameter";
      for (const auto& [k, v] : p) out += " " + k + "=\"" + xml_escape(v) + "\"";
      out += "/>\n";
    }
    attrs(out, c.attrs);
    open.push_back(i);
  }
  while (!open.empty()) out += "</cnode>\n", open.pop_back();
  out += "</program>\n";
}

// Depth-first over the system tree with an explicit stack; location groups are written
// before child nodes, as CubeW does.
class SystemWriter {
 public:
  SystemWriter(const Definitions& d, std::string& out) : d_(d), out_(out) {
    location_index_.assign(d.system.size(), 0);
    group_index_.assign(d.system.size(), 0);
    for (std::uint32_t l = 0; l < d.locations.size(); ++l) location_index_[d.locations[l]] = l;
    for (std::uint32_t g = 0; g < d.location_groups.size(); ++g) group_index_[d.location_groups[g]] = g;
  }

  std::vector<std::uint32_t> run() {
    out_ += "<system>\n";
    for (std::uint32_t e = 0; e < d_.system.size(); ++e)
      if (d_.system.parent(e) == systree::SingleNodeTree::kNoParent) write_from(e);
    out_ += "<topologies>\n";
    if (const auto topologies = topologies_with_written_ids()) {
      // The text as read begins after <topologies>, with its line break: not a second one
      // (else every round trip would add a blank line).
      const std::string_view text = !topologies->empty() && topologies->front() == '\n'
                                        ? std::string_view(*topologies).substr(1) : std::string_view(*topologies);
      out_ += text;
      if (!text.empty() && text.back() != '\n') out_ += '\n';
    }
    out_ += "</topologies>\n</system>\n";
    return std::move(order_);
  }

 private:
  // Topologies address locations by the Ids of the file read; the Ids written are the write
  // order. Verbatim when the two agree, else with every locId rewritten; dropped (nullopt)
  // when coordinates also name other elements, whose Ids are not kept.
  std::optional<std::string> topologies_with_written_ids() const {
    const auto n = d_.location_file_id.size();
    std::vector<std::uint64_t> written_id(n);  // indexed by the Id in the file read
    std::vector<bool> seen(n, false);
    bool same = true;
    for (std::uint32_t w = 0; w < order_.size(); ++w) {
      const auto file_id = d_.location_file_id[order_[w]];
      if (file_id >= n || seen[file_id]) return std::nullopt;  // not a permutation: cannot rename
      seen[file_id] = true;
      written_id[file_id] = w;
      same = same && file_id == w;
    }
    if (same) return d_.topologies_xml;
    return remap_location_ids(d_.topologies_xml, written_id);
  }

  void write_from(std::uint32_t root) {
    // Stack entries: element to open, or (element | kClose) to close.
    constexpr std::uint64_t kClose = 1ull << 32;
    std::vector<std::uint64_t> stack{root};
    while (!stack.empty()) {
      const auto top = stack.back();
      stack.pop_back();
      const auto e = static_cast<std::uint32_t>(top & 0xffffffffu);
      if (top & kClose) {
        close(e);
        continue;
      }
      open(e);
      stack.push_back(kClose | e);
      const auto& children = d_.system.children(e);
      // Pushed in reverse so that they pop in order: groups/locations first, then nodes.
      for (auto it = children.rbegin(); it != children.rend(); ++it)
        if (d_.system.kind(*it) == Kind::Node) stack.push_back(*it);
      for (auto it = children.rbegin(); it != children.rend(); ++it)
        if (d_.system.kind(*it) != Kind::Node) stack.push_back(*it);
    }
  }

  void open(std::uint32_t e) {
    const auto& t = d_.system;
    const auto props = [&] { attrs(out_, t.properties(e)); };
    switch (t.kind(e)) {
      case Kind::Node:
        out_ += "<systemtreenode Id=\"" + std::to_string(node_id_++) + "\">\n";
        element(out_, "name", t.name(e));
        element(out_, "class", t.cls(e));
        props();
        break;
      case Kind::LocationGroup: {
        const auto g = group_index_[e];
        out_ += "<locationgroup Id=\"" + std::to_string(g) + "\">\n";
        element(out_, "name", t.name(e));
        element(out_, "rank", std::to_string(d_.group_rank[g]));
        element(out_, "type", t.cls(e));
        props();
        break;
      }
      case Kind::Location: {
        const auto l = location_index_[e];
        out_ += "<location Id=\"" + std::to_string(order_.size()) + "\">\n";
        order_.push_back(l);
        element(out_, "name", t.name(e));
        element(out_, "rank", std::to_string(d_.location_rank[l]));
        element(out_, "type", t.cls(e));
        props();
        break;
      }
    }
  }

  void close(std::uint32_t e) {
    switch (d_.system.kind(e)) {
      case Kind::Node: out_ += "</systemtreenode>\n"; break;
      case Kind::LocationGroup: out_ += "</locationgroup>\n"; break;
      case Kind::Location: out_ += "</location>\n"; break;
    }
  }

  const Definitions& d_;
  std::string& out_;
  std::vector<std::uint32_t> location_index_, group_index_, order_;
  std::uint64_t node_id_ = 0;
};

}  // namespace

std::optional<std::string> remap_location_ids(std::string_view topologies, const std::vector<std::uint64_t>& new_id) {
  // The tokenizer finds each coordinate's attribute value in place; all else is copied as written.
  XmlTokenizer tokens(topologies, "", "topologies");
  const auto begin = reinterpret_cast<std::uintptr_t>(topologies.data());
  std::string out;
  std::size_t copied = 0;
  try {
    for (const auto* t = &tokens.next(); t->type != XmlToken::Eof; t = &tokens.next()) {
      if (t->type != XmlToken::Start || t->name != "coord") continue;
      if (t->attributes.size() != 1 || t->attributes[0].first != "locId") return std::nullopt;
      const auto value = t->attributes[0].second;
      const auto at = reinterpret_cast<std::uintptr_t>(value.data()) - begin;
      if (at == 0 || at > topologies.size() || value.size() > topologies.size() - at)
        return std::nullopt;  // decoded from an entity: not in the text
      std::uint64_t id = 0;
      const auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), id);
      if (ec != std::errc() || p != value.data() + value.size() || id >= new_id.size()) return std::nullopt;
      out.append(topologies.substr(copied, at - 1 - copied));  // up to the opening quote
      out += '"';
      out += std::to_string(new_id[id]);
      out += '"';
      copied = at + value.size() + 1;  // past the closing quote
    }
  } catch (const FormatError&) {
    return std::nullopt;
  }
  out.append(topologies.substr(copied));
  return out;
}

AnchorText write_anchor(const Definitions& defs) {
  AnchorText result;
  auto& out = result.xml;
  write_header(out, defs);
  write_metrics(out, defs);
  write_program(out, defs);
  result.location_order = SystemWriter(defs, out).run();
  out += "</cube>\n";
  return result;
}

}  // namespace cubescale::cube
