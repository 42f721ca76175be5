#include "cubescale/cube/anchor_xml.hpp"

#include <zlib.h>

#include <algorithm>
#include <cstring>
#include <deque>
#include <limits>

#include "cubescale/common/format_error.hpp"
#include "cubescale/cube/cnode_xml.hpp"
#include "cubescale/cube/region_xml.hpp"
#include "cubescale/cube/system_xml.hpp"
#include "cubescale/cube/text.hpp"
#include "cubescale/cube/xml.hpp"

namespace cubescale::cube {

namespace {

using systree::Kind;


// A system tree element as parsed; SingleNodeTree wants name and class at creation, which come
// after the start tag, so elements are collected first and built in one loop at the end.
// Texts are views into the document, or into the parser's store of decoded texts.
struct SystemElement {
  Kind kind = Kind::Node;
  std::uint32_t parent = kNoParent;
  std::string_view name, cls, type;
  Attributes properties;
  std::uint64_t file_id = 0;
  std::int64_t rank = -1;
  std::size_t offset = 0;
};

// The tags the parser acts on; any other is Other. A tag name is classified once, so that the
// dispatch on every start and end tag compares small numbers instead of strings.
enum class Tag : std::uint8_t {
  Other, Cube, Attr, Murl, Metrics, Metric, Region, Program, Cnode, Parameter, Topologies, System,
  SystemTreeNode, Machine, Node, LocationGroup, Process, Location, Thread,  // system tree elements
  DispName, UniqName, Dtype, Uom, Val, Url, Descr, CubePL, CubePLInit,      // metric fields
  Name, MangledName, Paradigm, Role, Class, Type, Rank                      // region, system fields
};

Tag classify(std::string_view name) {
  // By length first: then each comparison is with a string of known size.
  switch (name.size()) {
    case 3:
      if (name == "uom") return Tag::Uom;
      if (name == "val") return Tag::Val;
      if (name == "url") return Tag::Url;
      break;
    case 4:
      if (name == "cube") return Tag::Cube;
      if (name == "attr") return Tag::Attr;
      if (name == "murl") return Tag::Murl;
      if (name == "name") return Tag::Name;
      if (name == "node") return Tag::Node;
      if (name == "role") return Tag::Role;
      if (name == "rank") return Tag::Rank;
      if (name == "type") return Tag::Type;
      break;
    case 5:
      if (name == "cnode") return Tag::Cnode;
      if (name == "dtype") return Tag::Dtype;
      if (name == "descr") return Tag::Descr;
      if (name == "class") return Tag::Class;
      break;
    case 6:
      if (name == "metric") return Tag::Metric;
      if (name == "region") return Tag::Region;
      if (name == "system") return Tag::System;
      if (name == "thread") return Tag::Thread;
      if (name == "cubepl") return Tag::CubePL;
      break;
    case 7:
      if (name == "metrics") return Tag::Metrics;
      if (name == "program") return Tag::Program;
      if (name == "machine") return Tag::Machine;
      if (name == "process") return Tag::Process;
      break;
    case 8:
      if (name == "location") return Tag::Location;
      if (name == "paradigm") return Tag::Paradigm;
      break;
    case 9:
      if (name == "parameter") return Tag::Parameter;
      if (name == "disp_name") return Tag::DispName;
      if (name == "uniq_name") return Tag::UniqName;
      break;
    case 10:
      if (name == "topologies") return Tag::Topologies;
      if (name == "cubeplinit") return Tag::CubePLInit;
      break;
    case 12:
      if (name == "mangled_name") return Tag::MangledName;
      break;
    case 13:
      if (name == "locationgroup") return Tag::LocationGroup;
      break;
    case 14:
      if (name == "systemtreenode") return Tag::SystemTreeNode;
      break;
  }
  return Tag::Other;
}

// Elements that hold only text: the parser acts on them at their end tag.
bool is_field(Tag tag) {
  switch (tag) {
    case Tag::DispName: case Tag::UniqName: case Tag::Dtype: case Tag::Uom: case Tag::Val: case Tag::Url:
    case Tag::Descr: case Tag::CubePL: case Tag::CubePLInit: case Tag::Name: case Tag::MangledName: case Tag::Paradigm: case Tag::Role:
    case Tag::Class: case Tag::Type: case Tag::Rank: case Tag::Murl:
      return true;
    default:
      return false;
  }
}

// CUBE3-style tags (<machine>, <process>, ...) also give the class of the element.
bool system_kind(Tag tag, std::string_view name, Kind& kind, std::string_view& cube3_class) {
  cube3_class = {};
  switch (tag) {
    case Tag::SystemTreeNode: kind = Kind::Node; break;
    case Tag::Machine: case Tag::Node: kind = Kind::Node, cube3_class = name; break;
    case Tag::LocationGroup: kind = Kind::LocationGroup; break;
    case Tag::Process: kind = Kind::LocationGroup, cube3_class = name; break;
    case Tag::Location: kind = Kind::Location; break;
    case Tag::Thread: kind = Kind::Location, cube3_class = name; break;
    default: return false;
  }
  return true;
}

// The system tree elements whose start tags lie in `body` (the skipped <system> element).
// Only CUBE4's tags: the system member is ours, and our writer spells its tree out in them.
// memmem finds the two rare tags without stopping at every other tag: opening a report of
// 262,144 locations (26 MB of <system>) takes 10 ms of CPU more for it (53 -> 64 ms).
SystemCounts count_system_elements(std::string_view body) {
  SystemCounts counts;
  const char* const end = body.data() + body.size();
  // Whether the tag name that ends at `at` ends there (not "<locationx").
  const auto name_ends = [&](const char* at) {
    const char c = at < end ? *at : '>';
    return c == ' ' || c == '>' || c == '/' || c == '\t' || c == '\n' || c == '\r';
  };
  const auto each = [&](std::string_view tag, auto&& on_match) {
    const char* at = body.data();
    while (const void* hit = memmem(at, static_cast<std::size_t>(end - at), tag.data(), tag.size())) {
      at = static_cast<const char*>(hit) + tag.size();
      on_match(at);
    }
  };
  constexpr std::string_view kGroup = "group";
  each("<systemtreenode", [&](const char* at) { counts.nodes += name_ends(at); });
  each("<location", [&](const char* at) {
    if (name_ends(at)) ++counts.locations;
    else if (std::string_view(at, std::min<std::size_t>(end - at, kGroup.size())) == kGroup && name_ends(at + kGroup.size()))
      ++counts.groups;
  });
  return counts;
}

// An element that is open: its name (to match the end tag) and its class.
struct OpenElement {
  std::string_view name;
  Tag tag;
};

class AnchorParser {
 public:
  AnchorParser(std::string_view xml, const std::string& file, AnchorOptions options)
      : tokens_(xml, file, kAnchorMember), file_(file), options_(options) {}

  AnchorParts run() {
    bool saw_cube = false;
    while (true) {
      const auto& t = tokens_.next();
      if (t.type == XmlToken::Eof) break;
      if (t.type == XmlToken::Start) {
        const auto tag = classify(t.name);
        if (stack_.size() >= kMaxAnchorNesting) tokens_.fail(t.offset, "elements nested too deeply");
        if (stack_.empty() && tag != Tag::Cube) tokens_.fail(t.offset, "the root element must be <cube>");
        saw_cube = true;
        if (is_field(tag) && !t.self_closing) {
          // A field such as <name>main</name>: handled as its end tag with the text.
          if (const auto text = tokens_.leaf_text(t.name)) {
            text_ = *text;  // a view into the document
            text_offset_ = static_cast<std::size_t>(text->data() - tokens_.source().data());
            end(t, tag);
            text_ = {};
            continue;
          }
        }
        stack_.push_back({t.name, tag});
        text_ = {};
        start(t, tag);
      } else if (t.type == XmlToken::End) {
        // The end tag must name the open element, whose class is already known.
        if (stack_.empty() || stack_.back().name != t.name)
          tokens_.fail(t.offset, "unexpected end tag </" + std::string(t.name) + ">");
        const auto tag = stack_.back().tag;
        stack_.pop_back();
        end(t, tag);
        text_ = {};
      } else if (t.type == XmlToken::Text) {
        if (stack_.empty()) tokens_.fail(t.offset, "text outside the root element");
        text_ = t.text;
        text_offset_ = t.offset;
      }
    }
    if (!saw_cube) tokens_.fail(0, "no <cube> element");
    if (!stack_.empty()) tokens_.fail(tokens_.source().size(), "unexpected end: <" + std::string(stack_.back().name) + "> not closed");
    finish();
    return {std::move(defs_), std::move(region_offsets_), system_counts_};
  }

 private:
  // The class of the element around the current start tag (whose own entry is on the stack).
  Tag parent_tag() const { return stack_.size() >= 2 ? stack_[stack_.size() - 2].tag : Tag::Other; }

  void start(const XmlToken& t, Tag tag) {
    if (tag == Tag::Cube) {
      if (const auto v = tokens_.attribute("version")) defs_.version = *v;
    } else if (tag == Tag::System && options_.skip_system) {
      skip_system(t);
    } else if (tag == Tag::Metric) {
      start_metric(t);
    } else if (tag == Tag::Region) {
      start_region(t);
    } else if (tag == Tag::Cnode) {
      const auto id = tokens_.id_attribute("id");
      const auto parent = cnode_parent(t.offset);
      add_cnode(id, parent, tokens_.id_attribute("calleeId"), t.offset);
      if (!t.self_closing) read_plain_cnodes(t.end);
    } else if (tag == Tag::Parameter && parent_tag() == Tag::Cnode) {
      Attributes a;
      for (const auto& [k, v] : t.attributes) a.emplace_back(k, v);
      defs_.cnodes[cnode_stack_.back()].parameters.push_back(std::move(a));
    } else if (tag == Tag::Attr) {
      add_attr(t);
    } else if (tag == Tag::Topologies) {
      topologies_start_ = t.end;
    } else if (tag == Tag::LocationGroup && in_system_ && read_plain_groups_at(t)) {
      // this group and the plain ones after it are read (see system_xml.hpp)
    } else {
      Kind kind;
      std::string_view cube3_class;
      if (in_system_ && system_kind(tag, t.name, kind, cube3_class)) start_system_element(t, kind, cube3_class);
      else if (tag == Tag::System) in_system_ = true;
    }
  }

  // Jumps to </system>; only the verbatim <topologies> text is taken from the skipped part,
  // and the elements it spells out are counted (see SystemCounts).
  void skip_system(const XmlToken& t) {
    const auto src = tokens_.source();
    const auto end = src.find("</system>", t.end);
    if (end == std::string_view::npos) tokens_.fail(t.offset, "<system> not closed");
    const auto body = src.substr(t.end, end - t.end);
    system_counts_ = count_system_elements(body);
    system_counts_.offset = t.offset;
    const auto open = body.find("<topologies>");
    const auto close = body.rfind("</topologies>");
    if (open != std::string_view::npos && close != std::string_view::npos && close > open)
      defs_.topologies_xml = std::string(body.substr(open + 12, close - open - 12));
    tokens_.seek(end);
  }

  void start_metric(const XmlToken& t) {
    Metric m;
    m.file_id = tokens_.id_attribute("id");
    m.parent = parent_tag() == Tag::Metric ? metric_stack_.back() : kNoParent;
    if (m.parent == kNoParent && parent_tag() != Tag::Metrics) tokens_.fail(t.offset, "<metric> outside <metrics>");
    if (const auto type = tokens_.attribute("type")) set_metric_type(m, *type);
    for (const auto& [k, v] : t.attributes)
      if (k != "id" && k != "type") m.xml_attributes.emplace_back(k, v);
    metric_stack_.push_back(static_cast<std::uint32_t>(defs_.metrics.size()));
    defs_.metrics.push_back(std::move(m));
    metric_offsets_.push_back(t.offset);
  }

  // A region is noted by id and offset and read by parse_regions(); its body is skipped here
  // when that is safe, which is most of the document.
  void start_region(const XmlToken& t) {
    region_ids_.push_back(tokens_.id_attribute("id"));
    region_offsets_.push_back(t.offset);
    if (!t.self_closing) skip_region_body(t);
  }

  // Jumps to the region's end tag where that is safe (see region_body_end()).
  void skip_region_body(const XmlToken& t) {
    const auto close = region_body_end(tokens_.source(), t.end);
    if (close == std::string_view::npos) return;
    // The regions that follow are most of the document: noted in one scan where possible.
    tokens_.seek(note_region_run(tokens_.source(), close, region_ids_, region_offsets_));
  }

  // The parent of the <cnode> whose entry is on the stack.
  std::uint32_t cnode_parent(std::size_t offset) const {
    if (parent_tag() == Tag::Cnode) return cnode_stack_.back();
    if (parent_tag() != Tag::Program) tokens_.fail(offset, "<cnode> outside <program>");
    return kNoParent;
  }

  void add_cnode(std::uint64_t id, std::uint32_t parent, std::uint64_t callee, std::size_t offset) {
    Cnode c;
    c.file_id = id;
    c.parent = parent;
    callee_.push_back({callee, offset});
    cnode_stack_.push_back(static_cast<std::uint32_t>(defs_.cnodes.size()));
    defs_.cnodes.push_back(std::move(c));
  }

  // Applies the plain cnode tags from `pos` on as their tokens would be applied, and hands
  // the first other tag back to the tokenizer (see cnode_xml.hpp).
  void read_plain_cnodes(std::size_t pos) {
    static constexpr std::string_view kCnode = "cnode";
    while (true) {
      const auto tag = read_plain_cnode_tag(tokens_.source(), pos);
      if (tag.kind == PlainCnodeTag::Close) {
        if (stack_.empty() || stack_.back().tag != Tag::Cnode) break;
        stack_.pop_back();
        cnode_stack_.pop_back();
      } else if (tag.kind == PlainCnodeTag::Open) {
        // Where the general parser would fail, it is left to fail with its own message.
        if (stack_.size() >= kMaxAnchorNesting || stack_.empty() ||
            (stack_.back().tag != Tag::Cnode && stack_.back().tag != Tag::Program))
          break;
        stack_.push_back({kCnode, Tag::Cnode});
        add_cnode(tag.id, cnode_parent(tag.offset), tag.callee, tag.offset);
      } else {
        break;
      }
      pos = tag.end;
    }
    tokens_.seek(pos);
  }

  void start_system_element(const XmlToken& t, Kind kind, std::string_view cube3_class) {
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
    e.file_id = tokens_.id_attribute(id_key);
    system_stack_.push_back(static_cast<std::uint32_t>(system_.size()));
    system_.push_back(std::move(e));
  }

  // Reads the location groups from the start tag `t` on in one pass where they have CubeW's
  // layout; false (nothing read) otherwise, or where the general checks would fail.
  bool read_plain_groups_at(const XmlToken& t) {
    // A location and its fields nest two elements below the group: where that would pass a
    // nesting limit, the general parser reports it.
    if (t.self_closing || system_stack_.empty() || system_[system_stack_.back()].kind != Kind::Node ||
        system_stack_.size() + 1 >= systree::kMaxDepth || stack_.size() + 2 >= kMaxAnchorNesting)
      return false;
    plain_.clear();
    const auto end = read_plain_groups(tokens_.source(), t.offset, plain_);
    if (end == t.offset) return false;
    const auto node = system_stack_.back();
    for (std::size_t i = 0; i < plain_.size(); i += 1 + plain_[i].locations) {
      const auto group = add_plain(plain_[i], Kind::LocationGroup, node);
      for (std::uint32_t k = 1; k <= plain_[i].locations; ++k) add_plain(plain_[i + k], Kind::Location, group);
    }
    stack_.pop_back();  // the group's entry, pushed by run(): its end tag is read too
    tokens_.seek(end);
    return true;
  }

  std::uint32_t add_plain(const PlainSystemElement& p, Kind kind, std::uint32_t parent) {
    SystemElement e;
    e.kind = kind;
    e.parent = parent;
    e.name = p.name;
    e.type = p.type;
    e.file_id = p.id;
    e.rank = p.rank;
    e.offset = p.offset;
    system_.push_back(std::move(e));
    return static_cast<std::uint32_t>(system_.size() - 1);
  }

  void add_attr(const XmlToken& t) {
    const auto key = tokens_.attribute("key");
    const auto value = tokens_.attribute("value");
    if (!key || !value) tokens_.fail(t.offset, "<attr> needs key and value");
    const auto parent = parent_tag();
    if (parent == Tag::Cube) defs_.attrs.emplace_back(*key, *value);
    else if (parent == Tag::Metric) defs_.metrics[metric_stack_.back()].attrs.emplace_back(*key, *value);
    else if (parent == Tag::Region) return;  // read by parse_regions()
    else if (parent == Tag::Cnode) defs_.cnodes[cnode_stack_.back()].attrs.emplace_back(*key, *value);
    else if (!system_stack_.empty()) system_[system_stack_.back()].properties.emplace_back(*key, *value);
  }

  // `tag` is the class of the element that ends; the stack already holds its parent on top.
  void end(const XmlToken& t, Tag tag) {
    const auto parent = stack_.empty() ? Tag::Other : stack_.back().tag;
    if (tag == Tag::Metric) {
      metric_stack_.pop_back();
    } else if (tag == Tag::Cnode) {
      cnode_stack_.pop_back();
    } else if (tag == Tag::Murl) {
      defs_.mirrors.emplace_back(text_);
    } else if (tag == Tag::Topologies && topologies_start_) {
      defs_.topologies_xml = std::string(tokens_.source().substr(topologies_start_, t.offset - topologies_start_));
    } else if (tag == Tag::System) {
      in_system_ = false;
    } else if (parent == Tag::Metric) {
      metric_field(tag, defs_.metrics[metric_stack_.back()]);
    } else if (parent == Tag::Region) {
      // a field of a region whose body was not skipped: read by parse_regions()
    } else if (!system_stack_.empty() &&
               (tag == Tag::Name || tag == Tag::Class || tag == Tag::Type || tag == Tag::Rank)) {
      system_field(tag, system_[system_stack_.back()]);
    } else if (!system_stack_.empty()) {
      Kind kind;
      std::string_view ignored;
      if (system_kind(tag, t.name, kind, ignored)) system_stack_.pop_back();
    }
  }

  void metric_field(Tag tag, Metric& m) {
    if (tag == Tag::DispName) m.disp_name = text_;
    else if (tag == Tag::UniqName) m.uniq_name = text_;
    else if (tag == Tag::Uom) m.uom = text_;
    else if (tag == Tag::Val) m.val = text_;
    else if (tag == Tag::Url) m.url = text_;
    else if (tag == Tag::Descr) m.descr = text_;
    else if (tag == Tag::CubePL) m.cubepl = text_;
    else if (tag == Tag::CubePLInit) m.cubepl_init = text_;
    else if (tag == Tag::Dtype) {
      auto t = parse_data_type(text_);
      if (!t) tokens_.fail(text_offset_, "unknown metric data type \"" + printable(text_) + "\"");
      m.dtype = std::move(*t);
    }
  }

  void system_field(Tag tag, SystemElement& e) {
    if (tag == Tag::Name) e.name = kept(text_);
    else if (tag == Tag::Class) e.cls = kept(text_);
    else if (tag == Tag::Type) e.type = kept(text_);
    else if (tag == Tag::Rank) e.rank = tokens_.integer(text_, text_offset_, "rank");
  }

  // `text` itself when it lies in the document, else a stored copy: decoded texts live in the
  // tokenizer's buffer only until the next text.
  std::string_view kept(std::string_view text) {
    const auto doc = tokens_.source();
    if (text.empty() || (text.data() >= doc.data() && text.data() + text.size() <= doc.data() + doc.size())) return text;
    return decoded_texts_.emplace_back(text);
  }

  // Ids name metrics (N.index, N.data), call paths (cnode_file_ids, CSV exports) and
  // regions (a cnode's calleeId): each must name one element. Two metrics with one id made
  // both read one metric's members, the second in the first's data type (UINT64 visits read
  // as DOUBLE time). `offset_of(i)` is where element i starts; the second one is named.
  template <class Id, class Offset>
  void check_unique(std::size_t n, Id id_of, Offset offset_of, const char* what) {
    std::vector<std::pair<std::uint64_t, std::uint32_t>> ids(n);
    for (std::uint32_t i = 0; i < n; ++i) ids[i] = {id_of(i), i};
    std::sort(ids.begin(), ids.end());
    for (std::size_t k = 1; k < n; ++k)
      if (ids[k].first == ids[k - 1].first)
        tokens_.fail(offset_of(ids[k].second), std::string("a second ") + what + " with id " + std::to_string(ids[k].first));
  }

  void finish() {
    check_unique(defs_.metrics.size(), [&](std::uint32_t i) { return defs_.metrics[i].file_id; },
                 [&](std::uint32_t i) { return metric_offsets_[i]; }, "metric");
    check_unique(region_ids_.size(), [&](std::uint32_t i) { return region_ids_[i]; },
                 [&](std::uint32_t i) { return region_offsets_[i]; }, "region");
    check_unique(defs_.cnodes.size(), [&](std::uint32_t i) { return defs_.cnodes[i].file_id; },
                 [&](std::uint32_t i) { return callee_[i].second; }, "cnode");
    resolve_callees();
    for (std::size_t i = 0; i < defs_.metrics.size(); ++i) {
      if (defs_.metrics[i].dtype.name.empty()) tokens_.fail(metric_offsets_[i], "metric without <dtype>");
    }
    if (!options_.skip_system) build_system();
  }

  void resolve_callees() {
    // (id, region index) sorted by id: one allocation instead of a hash node per region (ids
    // are unique, see check_unique).
    std::vector<std::pair<std::uint64_t, std::uint32_t>> region_of_id(region_ids_.size());
    for (std::uint32_t i = 0; i < region_ids_.size(); ++i) region_of_id[i] = {region_ids_[i], i};
    std::sort(region_of_id.begin(), region_of_id.end());
    for (std::size_t c = 0; c < defs_.cnodes.size(); ++c) {
      const auto id = callee_[c].first;
      const auto it = std::lower_bound(region_of_id.begin(), region_of_id.end(), std::pair<std::uint64_t, std::uint32_t>{id, 0});
      if (it == region_of_id.end() || it->first != id)
        tokens_.fail(callee_[c].second, "cnode calls unknown region " + std::to_string(id));
      defs_.cnodes[c].region = it->second;
    }
  }

  void build_system() {
    std::vector<std::uint32_t> element(system_.size());
    std::vector<std::uint32_t> location_in_group(system_.size(), 0);
    std::size_t name_bytes = 0, locations = 0, groups = 0;
    for (const auto& e : system_) {
      name_bytes += e.name.size();
      locations += e.kind == Kind::Location;
      groups += e.kind == Kind::LocationGroup;
    }
    defs_.system.reserve(system_.size(), name_bytes);
    defs_.locations.reserve(locations), defs_.location_rank.reserve(locations), defs_.location_file_id.reserve(locations);
    defs_.location_groups.reserve(groups), defs_.group_rank.reserve(groups);
    for (std::size_t i = 0; i < system_.size(); ++i) {
      auto& e = system_[i];
      std::string_view cls = e.kind == Kind::Node ? e.cls : (!e.type.empty() ? e.type : e.cls);
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
  std::vector<OpenElement> stack_;
  std::string_view text_;  // of the last Text token: a view, see XmlToken::text
  std::size_t text_offset_ = 0;
  std::vector<std::uint32_t> metric_stack_, cnode_stack_, system_stack_;
  std::vector<std::size_t> metric_offsets_;
  std::vector<std::pair<std::uint64_t, std::size_t>> callee_;
  std::vector<std::uint64_t> region_ids_;
  std::vector<std::size_t> region_offsets_;
  std::vector<SystemElement> system_;
  std::vector<PlainSystemElement> plain_;
  std::deque<std::string> decoded_texts_;  // see kept()
  SystemCounts system_counts_;
  bool in_system_ = false, has_system_root_ = false;
  std::size_t topologies_start_ = 0;
};

}  // namespace

AnchorParts parse_anchor_parts(std::string_view xml, const std::string& file, AnchorOptions options) {
  // Names end up as Python strings: reject bytes that are not UTF-8 once, up front.
  std::size_t bad = 0;
  if (!valid_utf8(xml, bad)) throw FormatError(file, kAnchorMember, bad, "anchor.xml is not valid UTF-8");
  return AnchorParser(xml, file, options).run();
}

Definitions parse_anchor(std::string_view xml, const std::string& file, AnchorOptions options) {
  auto parts = parse_anchor_parts(xml, file, options);
  parts.defs.regions = parse_regions(xml, file, parts.region_offsets);
  return std::move(parts.defs);
}

bool is_gzip(std::string_view bytes) {
  return bytes.size() >= 2 && static_cast<unsigned char>(bytes[0]) == 0x1f && static_cast<unsigned char>(bytes[1]) == 0x8b;
}

std::uint64_t gzip_inflation_cap(std::uint64_t compressed) {
  return kGzipFloor + (compressed > (~std::uint64_t(0) - kGzipFloor) / kGzipRatio ? ~std::uint64_t(0) - kGzipFloor
                                                                                    : compressed * kGzipRatio);
}

namespace {

// One pass of zlib over a gzip member: `sink(data, n)` receives the output in pieces. Returns
// the inflated size; FormatError for corrupt or truncated data, for bytes after the stream,
// and for output beyond `cap` (then inflating stops there: a bomb costs at most `cap` bytes
// of work and no memory).
template <class Sink>
std::uint64_t inflate_gzip(std::string_view bytes, std::uint64_t cap, const std::string& file, const std::string& member,
                           Sink&& sink) {
  z_stream z{};
  if (inflateInit2(&z, 15 + 32) != Z_OK) throw FormatError(file, member, 0, "cannot start inflating");
  struct End {
    z_stream* z;
    ~End() { inflateEnd(z); }
  } end{&z};
  char buf[1 << 16];
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
  z.avail_in = static_cast<uInt>(std::min<std::size_t>(bytes.size(), std::numeric_limits<uInt>::max()));
  std::uint64_t in_left = bytes.size() - z.avail_in;  // beyond what one call of zlib takes
  int rc = Z_OK;
  while (rc != Z_STREAM_END) {
    if (z.avail_in == 0 && in_left) {
      z.avail_in = static_cast<uInt>(std::min<std::uint64_t>(in_left, std::numeric_limits<uInt>::max()));
      in_left -= z.avail_in;
    }
    z.next_out = reinterpret_cast<Bytef*>(buf);
    z.avail_out = sizeof buf;
    rc = inflate(&z, Z_NO_FLUSH);
    if (rc != Z_OK && rc != Z_STREAM_END) throw FormatError(file, member, z.total_in, "corrupt gzip data");
    if (z.total_out > cap)
      throw FormatError(file, member, z.total_in,
                        "inflates to more than " + std::to_string(cap) + " bytes, the most " +
                            std::to_string(bytes.size()) + " gzipped bytes may hold here (" +
                            std::to_string(kGzipRatio) + " x their size + " + std::to_string(kGzipFloor >> 20) + " MiB)");
    sink(buf, sizeof buf - z.avail_out);
    if (rc == Z_OK && z.avail_in == 0 && in_left == 0 && z.avail_out != 0)
      throw FormatError(file, member, bytes.size(), "truncated gzip data");
  }
  if (z.total_in != bytes.size())
    throw FormatError(file, member, z.total_in,
                      std::to_string(bytes.size() - z.total_in) + " bytes follow the gzip stream");
  return z.total_out;
}

}  // namespace

std::string inflate_if_gzip(std::string_view bytes, const std::string& file, const std::string& member) {
  if (!is_gzip(bytes)) return std::string(bytes);
  // Counted first, then inflated into a string of that size: nothing is allocated for what a
  // bomb claims, and a real document takes its own size once (no regrowing).
  const auto size = inflate_gzip(bytes, gzip_inflation_cap(bytes.size()), file, member, [](const char*, std::size_t) {});
  std::string out;
  out.reserve(size);
  inflate_gzip(bytes, size, file, member, [&](const char* data, std::size_t n) { out.append(data, n); });
  return out;
}

}  // namespace cubescale::cube
