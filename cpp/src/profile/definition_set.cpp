#include "cubescale/profile/definition_set.hpp"

#include <algorithm>
#include <map>
#include <numeric>
#include <stdexcept>
#include <tuple>

#include "cubescale/common/bytes.hpp"
#include "cubescale/profile/local_profile.hpp"

namespace cubescale::profile {

using cube::Attributes;
using cube::kNoParent;

namespace {

constexpr std::string_view kMagic = "CSDEFSET";
constexpr std::uint16_t kVersion = 2;  // 2: first visits

auto region_key(const cube::Region& r) {
  return std::tie(r.name, r.mangled_name, r.mod, r.begin, r.end, r.paradigm, r.role, r.descr, r.url, r.attrs);
}

using Children = std::vector<std::vector<std::uint32_t>>;

// Children lists (in index order) and roots of a preorder tree.
Children children_of(const std::vector<std::uint32_t>& parents, std::vector<std::uint32_t>& roots) {
  Children out(parents.size());
  for (std::uint32_t c = 0; c < parents.size(); ++c) (parents[c] == kNoParent ? roots : out[parents[c]]).push_back(c);
  return out;
}

// A call path's identity among its siblings: (region id, parameters).
struct SiblingKey {
  std::uint32_t region;
  const std::vector<Attributes>* parameters;
  bool operator<(const SiblingKey& o) const {
    return region != o.region ? region < o.region : *parameters < *o.parameters;
  }
  bool operator==(const SiblingKey& o) const { return region == o.region && *parameters == *o.parameters; }
};

// Emits a call tree in canonical preorder: `children(node)` gives a node's children already
// sorted by key, `emit(node, parent)` appends it and returns its new id. Iterative: call
// trees may be deeper than the stack allows.
template <class Node, class ChildrenFn, class EmitFn>
void emit_preorder(std::vector<Node> roots, ChildrenFn children, EmitFn emit) {
  struct Frame {
    std::vector<Node> items;
    std::size_t next;
    std::uint32_t parent;
  };
  std::vector<Frame> stack;
  stack.push_back({std::move(roots), 0, kNoParent});
  while (!stack.empty()) {
    if (stack.back().next == stack.back().items.size()) {
      stack.pop_back();
      continue;
    }
    const Node node = stack.back().items[stack.back().next++];
    const std::uint32_t parent = stack.back().parent;
    const std::uint32_t id = emit(node, parent);
    stack.push_back({children(node), 0, id});
  }
}

void append_cnode(DefinitionSet& out, std::uint32_t parent, std::uint32_t region, const std::vector<Attributes>& params) {
  out.cnode_parents.push_back(parent);
  out.cnode_regions.push_back(region);
  out.cnode_parameters.push_back(params);
}

bool same_metric_definition(const cube::Metric& a, const cube::Metric& b) {
  return a.dtype.name == b.dtype.name && a.kind == b.kind && a.uom == b.uom;
}

std::string parent_name(const std::vector<cube::Metric>& metrics, const cube::Metric& m) {
  return m.parent == kNoParent ? std::string() : metrics[m.parent].uniq_name;
}

bool same_metric_lists(const DefinitionSet& a, const DefinitionSet& b) {
  if (a.metrics.size() != b.metrics.size()) return false;
  for (std::size_t i = 0; i < a.metrics.size(); ++i) {
    const auto &x = a.metrics[i], &y = b.metrics[i];
    if (x.uniq_name != y.uniq_name || x.parent != y.parent || !same_metric_definition(x, y)) return false;
  }
  return true;
}

// The union of two metric lists as a tree with siblings sorted by name (any disagreement).
void merge_metric_trees(const DefinitionSet& a, const DefinitionSet& b, Merged& out) {
  struct Entry {
    const cube::Metric* metric;
    std::string parent;
  };
  std::map<std::string, Entry> by_name;  // sorted by name: siblings come out sorted
  for (const auto* set : {&a, &b}) {
    for (const auto& m : set->metrics) {
      auto [it, inserted] = by_name.try_emplace(m.uniq_name, Entry{&m, parent_name(set->metrics, m)});
      if (inserted) continue;
      if (!same_metric_definition(*it->second.metric, m) || it->second.parent != parent_name(set->metrics, m))
        throw std::invalid_argument("metric " + m.uniq_name +
                                    " is defined differently on different ranks (data type, kind, unit or parent)");
    }
  }
  std::map<std::string, std::vector<std::string>> children;
  std::vector<std::string> roots;
  for (const auto& [name, e] : by_name) (e.parent.empty() ? roots : children[e.parent]).push_back(name);
  std::map<std::string, std::uint32_t> id_of;
  emit_preorder<std::string>(
      roots, [&](const std::string& n) { return children[n]; },
      [&](const std::string& n, std::uint32_t parent) {
        cube::Metric m = *by_name.at(n).metric;
        m.parent = parent;
        const auto id = static_cast<std::uint32_t>(out.set.metrics.size());
        out.set.metrics.push_back(std::move(m));
        id_of[n] = id;
        return id;
      });
  out.set.metrics_agree = false;
  for (const auto& m : a.metrics) out.from_a.metrics.push_back(id_of.at(m.uniq_name));
  for (const auto& m : b.metrics) out.from_b.metrics.push_back(id_of.at(m.uniq_name));
}

void merge_metrics(const DefinitionSet& a, const DefinitionSet& b, Merged& out) {
  const auto identity = [](std::size_t n) {
    std::vector<std::uint32_t> v(n);
    std::iota(v.begin(), v.end(), 0u);
    return v;
  };
  // An agreed list meets the same list, or nothing: it stays as given.
  const bool a_empty = a.metrics.empty() && a.metrics_agree, b_empty = b.metrics.empty() && b.metrics_agree;
  if (b_empty || (a.metrics_agree && b.metrics_agree && same_metric_lists(a, b))) {
    out.set.metrics = a.metrics;
    out.set.metrics_agree = a.metrics_agree;
    out.from_a.metrics = identity(a.metrics.size());
    out.from_b.metrics = identity(b.metrics.size());
    return;
  }
  if (a_empty) {
    out.set.metrics = b.metrics;
    out.set.metrics_agree = b.metrics_agree;
    out.from_b.metrics = identity(b.metrics.size());
    return;
  }
  merge_metric_trees(a, b, out);
}

void merge_regions(const DefinitionSet& a, const DefinitionSet& b, Merged& out) {
  out.from_a.regions.resize(a.regions.size());
  out.from_b.regions.resize(b.regions.size());
  std::size_t i = 0, j = 0;
  while (i < a.regions.size() || j < b.regions.size()) {
    const auto id = static_cast<std::uint32_t>(out.set.regions.size());
    if (j == b.regions.size() || (i < a.regions.size() && region_key(a.regions[i]) < region_key(b.regions[j]))) {
      out.from_a.regions[i] = id;
      out.set.regions.push_back(a.regions[i++]);
    } else if (i == a.regions.size() || region_key(b.regions[j]) < region_key(a.regions[i])) {
      out.from_b.regions[j] = id;
      out.set.regions.push_back(b.regions[j++]);
    } else {
      out.from_a.regions[i++] = id;
      out.from_b.regions[j] = id;
      out.set.regions.push_back(b.regions[j++]);
    }
  }
}

constexpr std::uint32_t kAbsent = 0xffffffffu;

std::uint64_t first_visit(const DefinitionSet& set, std::uint32_t c) {
  return set.cnode_first_visit.empty() ? kNeverVisited : set.cnode_first_visit[c];
}

void merge_call_trees(const DefinitionSet& a, const DefinitionSet& b, Merged& out) {
  std::vector<std::uint32_t> roots_a, roots_b;
  const auto kids_a = children_of(a.cnode_parents, roots_a), kids_b = children_of(b.cnode_parents, roots_b);
  out.from_a.cnodes.assign(a.cnode_parents.size(), kAbsent);
  out.from_b.cnodes.assign(b.cnode_parents.size(), kAbsent);
  using Pair = std::pair<std::uint32_t, std::uint32_t>;  // node of a, node of b (kAbsent: none)
  const auto key_a = [&](std::uint32_t c) {
    return SiblingKey{out.from_a.regions[a.cnode_regions[c]], &a.cnode_parameters[c]};
  };
  const auto key_b = [&](std::uint32_t c) {
    return SiblingKey{out.from_b.regions[b.cnode_regions[c]], &b.cnode_parameters[c]};
  };
  // Both lists are sorted by key (canonical input): a merge-join pairs equal call paths.
  const auto join = [&](const std::vector<std::uint32_t>& xs, const std::vector<std::uint32_t>& ys) {
    std::vector<Pair> pairs;
    std::size_t i = 0, j = 0;
    while (i < xs.size() || j < ys.size()) {
      if (j == ys.size() || (i < xs.size() && key_a(xs[i]) < key_b(ys[j]))) pairs.push_back({xs[i++], kAbsent});
      else if (i == xs.size() || key_b(ys[j]) < key_a(xs[i])) pairs.push_back({kAbsent, ys[j++]});
      else pairs.push_back({xs[i++], ys[j++]});
    }
    return pairs;
  };
  static const std::vector<std::uint32_t> none;
  const bool with_first_visits = !a.cnode_first_visit.empty() || !b.cnode_first_visit.empty();
  emit_preorder<Pair>(
      join(roots_a, roots_b),
      [&](const Pair& p) { return join(p.first == kAbsent ? none : kids_a[p.first], p.second == kAbsent ? none : kids_b[p.second]); },
      [&](const Pair& p, std::uint32_t parent) {
        const auto id = static_cast<std::uint32_t>(out.set.cnode_parents.size());
        if (with_first_visits) {
          out.set.cnode_first_visit.push_back(std::min(p.first == kAbsent ? kNeverVisited : first_visit(a, p.first),
                                                       p.second == kAbsent ? kNeverVisited : first_visit(b, p.second)));
        }
        if (p.first != kAbsent) {
          append_cnode(out.set, parent, out.from_a.regions[a.cnode_regions[p.first]], a.cnode_parameters[p.first]);
          out.from_a.cnodes[p.first] = id;
        } else {
          append_cnode(out.set, parent, out.from_b.regions[b.cnode_regions[p.second]], b.cnode_parameters[p.second]);
        }
        if (p.second != kAbsent) out.from_b.cnodes[p.second] = id;
        return id;
      });
}

void write_attributes(ByteWriter& w, const Attributes& attrs) {
  w.varint(attrs.size());
  for (const auto& [k, v] : attrs) {
    w.string(k);
    w.string(v);
  }
}

Attributes read_attributes(ByteReader& r) {
  Attributes out;
  const auto n = r.varint_at_most(r.remaining(), "attribute count");
  for (std::uint64_t i = 0; i < n; ++i) {
    std::string k(r.string(r.remaining()));
    out.emplace_back(std::move(k), std::string(r.string(r.remaining())));
  }
  return out;
}

std::uint32_t read_index(ByteReader& r, std::uint64_t limit, const char* what) {
  const auto v = r.varint();
  if (v > limit) r.fail(std::string(what) + " out of range");
  return v == 0 ? kNoParent : static_cast<std::uint32_t>(v - 1);
}

}  // namespace

DefinitionSet canonical_set(const LocalProfile& profile, IdMaps& local_to_set) {
  DefinitionSet out;
  out.metrics = profile.metrics;
  local_to_set.metrics.resize(profile.metrics.size());
  std::iota(local_to_set.metrics.begin(), local_to_set.metrics.end(), 0u);
  for (std::size_t i = 0; i < profile.metrics.size(); ++i) {
    for (std::size_t j = 0; j < i; ++j) {
      if (profile.metrics[i].uniq_name == profile.metrics[j].uniq_name)
        throw std::invalid_argument("two metrics are named " + profile.metrics[i].uniq_name);
    }
  }
  // Regions sorted by key; equal definitions become one region.
  std::vector<std::uint32_t> order(profile.regions.size());
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(), [&](auto x, auto y) {
    return region_key(profile.regions[x]) < region_key(profile.regions[y]);
  });
  local_to_set.regions.resize(profile.regions.size());
  for (auto r : order) {
    if (out.regions.empty() || region_key(out.regions.back()) != region_key(profile.regions[r]))
      out.regions.push_back(profile.regions[r]);
    local_to_set.regions[r] = static_cast<std::uint32_t>(out.regions.size() - 1);
  }
  // The call tree with each node's children sorted by (region, parameters).
  static const std::vector<Attributes> no_parameters;
  const auto params = [&](std::uint32_t c) -> const std::vector<Attributes>& {
    return profile.cnode_parameters.empty() ? no_parameters : profile.cnode_parameters[c];
  };
  const auto key = [&](std::uint32_t c) { return SiblingKey{local_to_set.regions[profile.cnode_regions[c]], &params(c)}; };
  std::vector<std::uint32_t> roots;
  auto kids = children_of(profile.cnode_parents, roots);
  const auto sorted = [&](std::vector<std::uint32_t> list) {
    std::sort(list.begin(), list.end(), [&](auto x, auto y) { return key(x) < key(y); });
    for (std::size_t i = 1; i < list.size(); ++i) {
      if (key(list[i - 1]) == key(list[i]))
        throw std::invalid_argument("cnodes " + std::to_string(list[i - 1]) + " and " + std::to_string(list[i]) +
                                    " are siblings with the same region and parameters");
    }
    return list;
  };
  local_to_set.cnodes.resize(profile.cnode_count());
  emit_preorder<std::uint32_t>(
      sorted(roots), [&](std::uint32_t c) { return sorted(kids[c]); },
      [&](std::uint32_t c, std::uint32_t parent) {
        const auto id = static_cast<std::uint32_t>(out.cnode_parents.size());
        append_cnode(out, parent, local_to_set.regions[profile.cnode_regions[c]], params(c));
        if (!profile.cnode_first_visit.empty()) out.cnode_first_visit.push_back(profile.cnode_first_visit[c]);
        local_to_set.cnodes[c] = id;
        return id;
      });
  return out;
}

Merged merge(const DefinitionSet& a, const DefinitionSet& b) {
  Merged out;
  merge_metrics(a, b, out);
  merge_regions(a, b, out);
  merge_call_trees(a, b, out);
  return out;
}

DefinitionSet presented_by_first_visit(const DefinitionSet& set, std::vector<std::uint32_t>& set_to_presented) {
  const auto n = set.cnode_parents.size();
  set_to_presented.resize(n);
  std::iota(set_to_presented.begin(), set_to_presented.end(), 0u);
  if (set.cnode_first_visit.empty()) return set;
  std::vector<std::uint32_t> roots;
  auto kids = children_of(set.cnode_parents, roots);
  // Children lists come in canonical order: a stable sort keeps it among equal first visits.
  const auto by_first_visit = [&](std::vector<std::uint32_t> list) {
    std::stable_sort(list.begin(), list.end(),
                     [&](auto x, auto y) { return set.cnode_first_visit[x] < set.cnode_first_visit[y]; });
    return list;
  };
  DefinitionSet out;
  out.metrics = set.metrics;
  out.metrics_agree = set.metrics_agree;
  out.regions = set.regions;
  emit_preorder<std::uint32_t>(
      by_first_visit(roots), [&](std::uint32_t c) { return by_first_visit(kids[c]); },
      [&](std::uint32_t c, std::uint32_t parent) {
        const auto id = static_cast<std::uint32_t>(out.cnode_parents.size());
        append_cnode(out, parent, set.cnode_regions[c], set.cnode_parameters[c]);
        out.cnode_first_visit.push_back(set.cnode_first_visit[c]);
        set_to_presented[c] = id;
        return id;
      });
  return out;
}

std::vector<std::uint32_t> compose(const std::vector<std::uint32_t>& a_to_b, const std::vector<std::uint32_t>& b_to_c) {
  std::vector<std::uint32_t> out(a_to_b.size());
  for (std::size_t i = 0; i < a_to_b.size(); ++i) out[i] = b_to_c.at(a_to_b[i]);
  return out;
}

std::string DefinitionSet::pack() const {
  ByteWriter w;
  w.header(kMagic, kVersion);
  w.u8(metrics_agree ? 1 : 0);
  w.varint(metrics.size());
  for (const auto& m : metrics) {
    for (const auto* s : {&m.uniq_name, &m.disp_name, &m.uom, &m.val, &m.url, &m.descr, &m.dtype.name}) w.string(*s);
    w.u8(m.kind == cube::MetricKind::Inclusive ? 1 : 0);
    w.varint(m.parent == kNoParent ? 0 : std::uint64_t(m.parent) + 1);
    write_attributes(w, m.attrs);
    write_attributes(w, m.xml_attributes);
  }
  w.varint(regions.size());
  for (const auto& r : regions) {
    for (const auto* s : {&r.name, &r.mangled_name, &r.mod, &r.paradigm, &r.role, &r.url, &r.descr}) w.string(*s);
    w.u64(static_cast<std::uint64_t>(r.begin));
    w.u64(static_cast<std::uint64_t>(r.end));
    write_attributes(w, r.attrs);
  }
  w.varint(cnode_parents.size());
  for (std::size_t c = 0; c < cnode_parents.size(); ++c) {
    w.varint(cnode_parents[c] == kNoParent ? 0 : std::uint64_t(cnode_parents[c]) + 1);
    w.varint(cnode_regions[c]);
    w.varint(cnode_parameters[c].size());
    for (const auto& p : cnode_parameters[c]) write_attributes(w, p);
  }
  w.u8(cnode_first_visit.empty() ? 0 : 1);
  for (auto t : cnode_first_visit) w.u64(t);
  return w.take();
}

DefinitionSet DefinitionSet::unpack(std::string_view bytes, const std::string& source) {
  ByteReader r(bytes, source, "definition set");
  r.expect_header(kMagic, kVersion, "definition set");
  DefinitionSet out;
  out.metrics_agree = r.u8() != 0;
  const auto metrics = r.varint_at_most(r.remaining(), "metric count");
  for (std::uint64_t i = 0; i < metrics; ++i) {
    cube::Metric m;
    for (auto* s : {&m.uniq_name, &m.disp_name, &m.uom, &m.val, &m.url, &m.descr}) *s = r.string(r.remaining());
    const auto dtype = r.string(r.remaining());
    auto parsed = cube::parse_data_type(dtype);
    if (!parsed) r.fail("unknown data type");
    m.dtype = std::move(*parsed);
    m.kind = r.u8() ? cube::MetricKind::Inclusive : cube::MetricKind::Exclusive;
    m.parent = read_index(r, i, "metric parent");
    m.attrs = read_attributes(r);
    m.xml_attributes = read_attributes(r);
    out.metrics.push_back(std::move(m));
  }
  const auto regions = r.varint_at_most(r.remaining(), "region count");
  for (std::uint64_t i = 0; i < regions; ++i) {
    cube::Region reg;
    for (auto* s : {&reg.name, &reg.mangled_name, &reg.mod, &reg.paradigm, &reg.role, &reg.url, &reg.descr})
      *s = r.string(r.remaining());
    reg.begin = static_cast<std::int64_t>(r.u64());
    reg.end = static_cast<std::int64_t>(r.u64());
    reg.attrs = read_attributes(r);
    out.regions.push_back(std::move(reg));
  }
  const auto cnodes = r.varint_at_most(r.remaining(), "cnode count");
  for (std::uint64_t c = 0; c < cnodes; ++c) {
    out.cnode_parents.push_back(read_index(r, c, "cnode parent"));
    const auto region = r.varint();
    if (region >= out.regions.size()) r.fail("cnode region out of range");
    out.cnode_regions.push_back(static_cast<std::uint32_t>(region));
    auto& params = out.cnode_parameters.emplace_back();
    const auto n = r.varint_at_most(r.remaining(), "parameter count");
    for (std::uint64_t i = 0; i < n; ++i) params.push_back(read_attributes(r));
  }
  if (r.u8() != 0) {
    if (r.remaining() / 8 < cnodes) r.fail("first visits cut short");
    out.cnode_first_visit.resize(cnodes);
    for (auto& t : out.cnode_first_visit) t = r.u64();
  }
  if (!r.at_end()) r.fail("trailing bytes after the definition set");
  return out;
}

}  // namespace cubescale::profile
