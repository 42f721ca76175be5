#include "cubescale/algebra/unify.hpp"

#include <map>
#include <set>
#include <tuple>
#include <stdexcept>
#include <string>
#include <unordered_map>

#include "cubescale/cube/anchor_xml.hpp"
#include "cubescale/cube/assemble.hpp"

namespace cubescale::algebra {

using cube::Attributes;
using cube::kNoParent;
using systree::Kind;

namespace {

// A tree grown by union: nodes are added in any order below any earlier node, and numbered in
// depth-first preorder at the end (children in the order they were added).
class UnionTree {
 public:
  std::uint32_t add(std::uint32_t parent) {
    const auto id = static_cast<std::uint32_t>(parent_.size());
    parent_.push_back(parent);
    children_.emplace_back();
    (parent == kAbsent ? roots_ : children_[parent]).push_back(id);
    return id;
  }
  std::size_t size() const { return parent_.size(); }
  std::uint32_t parent(std::uint32_t node) const { return parent_[node]; }
  // Nodes in preorder (iterative: call trees may be deeper than the stack allows).
  std::vector<std::uint32_t> preorder() const {
    std::vector<std::uint32_t> out;
    out.reserve(size());
    std::vector<std::pair<const std::vector<std::uint32_t>*, std::size_t>> stack{{&roots_, 0}};
    while (!stack.empty()) {
      auto& [list, next] = stack.back();
      if (next == list->size()) {
        stack.pop_back();
        continue;
      }
      const auto node = (*list)[next++];
      out.push_back(node);
      stack.emplace_back(&children_[node], 0);
    }
    return out;
  }

 private:
  std::vector<std::uint32_t> parent_;
  std::vector<std::vector<std::uint32_t>> children_;
  std::vector<std::uint32_t> roots_;
};

// Position of each node in `order` (node -> position).
std::vector<std::uint32_t> positions(const std::vector<std::uint32_t>& order) {
  std::vector<std::uint32_t> out(order.size());
  for (std::uint32_t p = 0; p < order.size(); ++p) out[order[p]] = p;
  return out;
}

// Keys are byte strings with field separators that names cannot contain in XML (\x1f, \x1e).
void append_field(std::string& key, std::string_view field) {
  key.append(field);
  key.push_back('\x1f');
}

void append_attributes(std::string& key, const Attributes& attrs) {
  for (const auto& [k, v] : attrs) {
    append_field(key, k);
    append_field(key, v);
  }
  key.push_back('\x1e');
}

// CubeLib's Cnode equality compares the call site (line and module) too; absent and present
// differ (a report that records call sites against one that does not matches nothing).
void append_call_site(std::string& key, const cube::Cnode& c) {
  append_field(key, c.line ? std::to_string(*c.line) : std::string("\x1c"));
  append_field(key, c.mod ? *c.mod : std::string("\x1c"));
}

std::string region_key(const cube::Region& r) {
  std::string key;
  append_field(key, r.name);
  append_field(key, r.mod);
  append_field(key, std::to_string(r.begin));
  append_field(key, std::to_string(r.end));
  return key;
}

struct Source {
  std::uint32_t input, index;  // where a unified element's definition comes from
};

struct MetricUnion {
  UnionTree tree;
  std::vector<Source> source;
  std::unordered_map<std::string, std::uint32_t> by_name;
};

void add_metrics(MetricUnion& u, const cube::Definitions& d, std::uint32_t input, InputMap& map) {
  map.metrics.resize(d.metrics.size());
  for (std::uint32_t m = 0; m < d.metrics.size(); ++m) {
    const auto& metric = d.metrics[m];
    const auto parent = metric.parent == kNoParent ? kAbsent : map.metrics[metric.parent];
    auto [it, inserted] = u.by_name.try_emplace(metric.uniq_name, static_cast<std::uint32_t>(u.tree.size()));
    if (inserted) {
      u.tree.add(parent);
      u.source.push_back({input, m});
    }
    // Matched by unique name wherever it sits: a metric an earlier input has keeps the earlier
    // input's place (a Score-P profile has bytes_put below bytes, Scalasca's remapped summary
    // below another parent; both are the same measurement).
    map.metrics[m] = it->second;
  }
}

struct CallUnion {
  UnionTree tree;
  std::vector<Source> source;
  std::unordered_map<std::string, std::uint32_t> by_key;  // (parent, region, parameters, attributes)
  std::vector<cube::Region> regions;
  std::unordered_map<std::string, std::uint32_t> region_by_key;
};

void add_calls(CallUnion& u, const cube::Definitions& d, std::uint32_t input, InputMap& map) {
  std::vector<std::uint32_t> region_map(d.regions.size());
  for (std::uint32_t r = 0; r < d.regions.size(); ++r) {
    auto [it, inserted] = u.region_by_key.try_emplace(region_key(d.regions[r]), static_cast<std::uint32_t>(u.regions.size()));
    if (inserted) u.regions.push_back(d.regions[r]);
    region_map[r] = it->second;
  }
  map.cnodes.resize(d.cnodes.size());
  std::string key;
  for (std::uint32_t c = 0; c < d.cnodes.size(); ++c) {
    const auto& cnode = d.cnodes[c];
    const auto parent = cnode.parent == kNoParent ? kAbsent : map.cnodes[cnode.parent];
    key.clear();
    append_field(key, std::to_string(parent));
    append_field(key, std::to_string(region_map[cnode.region]));
    append_call_site(key, cnode);
    for (const auto& p : cnode.parameters) append_attributes(key, p);
    key.push_back('\x1d');
    append_attributes(key, cnode.attrs);
    auto [it, inserted] = u.by_key.try_emplace(key, static_cast<std::uint32_t>(u.tree.size()));
    if (inserted) {
      u.tree.add(parent);
      u.source.push_back({input, c});
    }
    map.cnodes[c] = it->second;
  }
}

// Same layout: the first input's system tree, with its ranks and names.
systree::SingleNodeTree same_system(const std::vector<const cube::Definitions*>& inputs, std::vector<InputMap>& maps) {
  for (auto& m : maps) {
    m.locations.resize(inputs[0]->locations.size());
    for (std::uint32_t l = 0; l < m.locations.size(); ++l) m.locations[l] = l;
    m.identity_locations = true;
  }
  return inputs[0]->system;
}

struct CollapsedThread {
  std::string name, cls;
};
struct CollapsedProcess {
  std::string name, cls;
  std::map<std::int64_t, CollapsedThread> threads;  // by rank: come out sorted
};

// One virtual machine and node, processes by rank, threads by rank inside them (Cube's -C).
systree::SingleNodeTree collapsed_system(const std::vector<const cube::Definitions*>& inputs, std::vector<InputMap>& maps,
                                     std::vector<std::int64_t>& group_ranks, std::vector<std::int64_t>& location_ranks) {
  std::map<std::int64_t, CollapsedProcess> processes;
  const auto conflict = [](std::size_t input, const std::string& what) {
    throw std::invalid_argument("the system trees cannot be reconciled: input " + std::to_string(input) + " has " + what);
  };
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const auto& d = *inputs[i];
    std::unordered_map<std::uint32_t, std::int64_t> rank_of_group;  // tree element -> rank
    for (std::size_t g = 0; g < d.location_groups.size(); ++g) {
      const auto e = d.location_groups[g];
      const auto rank = d.group_rank[g];
      if (!rank_of_group.try_emplace(e, rank).second) continue;
      auto [it, inserted] = processes.try_emplace(rank, CollapsedProcess{std::string(d.system.name(e)), d.system.cls(e), {}});
      if (!inserted && it->second.cls != d.system.cls(e))
        conflict(i, "process rank " + std::to_string(rank) + " of class '" + d.system.cls(e) + "', another input '" + it->second.cls + "'");
    }
    std::map<std::int64_t, std::int64_t> seen_groups;
    for (const auto& [e, rank] : rank_of_group)
      if (++seen_groups[rank] > 1) conflict(i, "two processes of rank " + std::to_string(rank));
    std::map<std::pair<std::int64_t, std::int64_t>, int> seen;
    for (std::size_t l = 0; l < d.locations.size(); ++l) {
      const auto e = d.locations[l];
      const auto group = rank_of_group.at(d.system.parent(e));
      const auto rank = d.location_rank[l];
      if (++seen[{group, rank}] > 1)
        conflict(i, "two locations of rank " + std::to_string(rank) + " in process " + std::to_string(group));
      auto& threads = processes.at(group).threads;
      auto [it, inserted] = threads.try_emplace(rank, CollapsedThread{std::string(d.system.name(e)), d.system.cls(e)});
      if (!inserted && it->second.cls != d.system.cls(e))
        conflict(i, "location " + std::to_string(rank) + " of process " + std::to_string(group) + " of class '" +
                        d.system.cls(e) + "', another input '" + it->second.cls + "'");
    }
  }
  systree::SingleNodeTree tree;
  const auto machine = tree.add_root(Kind::Node, "machine", "Virtual machine");
  const auto node = tree.add_child(machine, Kind::Node, "node", "Virtual node");
  std::map<std::pair<std::int64_t, std::int64_t>, std::uint32_t> column;
  for (const auto& [g, p] : processes) {
    const auto group = tree.add_child(node, Kind::LocationGroup, p.cls, p.name);
    group_ranks.push_back(g);
    for (const auto& [t, thread] : p.threads) {
      tree.add_child(group, Kind::Location, thread.cls, thread.name);
      column[{g, t}] = static_cast<std::uint32_t>(location_ranks.size());
      location_ranks.push_back(t);
    }
  }
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const auto& d = *inputs[i];
    std::unordered_map<std::uint32_t, std::int64_t> rank_of_group;
    for (std::size_t g = 0; g < d.location_groups.size(); ++g) rank_of_group.emplace(d.location_groups[g], d.group_rank[g]);
    maps[i].locations.resize(d.locations.size());
    for (std::size_t l = 0; l < d.locations.size(); ++l)
      maps[i].locations[l] = column.at({rank_of_group.at(d.system.parent(d.locations[l])), d.location_rank[l]});
    maps[i].identity_locations = false;
  }
  return tree;
}

// Cube's -c ("reduce"): the machine and node levels kept, the levels between them dropped.
// Reports here have one root system node, so the inputs' machines become one (matched by class
// as CubeLib's non-strict merge does, named as in the first input); nodes are matched by class
// and name below it, processes by rank and name inside their node, threads by rank inside their
// process. A process that lies below no node, or twice in one node of one input, and a thread
// twice in one process cannot be reconciled.
bool kept_level(std::string_view cls) { return cls == "node" || cls == "nodecard"; }

struct ReducedElement {
  std::uint32_t parent;
  Kind kind;
  std::string cls, name;
  std::int64_t rank;
};

systree::SingleNodeTree reduced_system(const std::vector<const cube::Definitions*>& inputs, std::vector<InputMap>& maps,
                                   std::vector<std::int64_t>& group_ranks, std::vector<std::int64_t>& location_ranks) {
  const auto conflict = [](std::size_t input, const std::string& what) {
    throw std::invalid_argument("the system trees cannot be reduced to machines and nodes: input " + std::to_string(input) +
                                " has " + what);
  };
  std::vector<ReducedElement> elements;  // union, element 0 the machine
  std::map<std::tuple<std::uint32_t, int, std::string, std::string>, std::uint32_t> by_key;  // parent, kind, cls/rank, name
  const auto element = [&](std::uint32_t parent, Kind kind, std::string cls, std::string name, std::int64_t rank) {
    const auto key = std::make_tuple(parent, static_cast<int>(kind), kind == Kind::Node ? cls : std::to_string(rank),
                                     kind == Kind::Location ? std::string() : name);
    auto [it, inserted] = by_key.try_emplace(key, static_cast<std::uint32_t>(elements.size()));
    if (inserted) elements.push_back({parent, kind, std::move(cls), std::move(name), rank});
    return std::make_pair(it->second, inserted);
  };
  std::vector<std::vector<std::uint32_t>> location_of(inputs.size());  // input location -> union element
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const auto& d = *inputs[i];
    const auto& tree = d.system;
    std::vector<std::uint32_t> place(tree.size(), kAbsent);  // input element -> union element (or its kept ancestor's)
    std::vector<std::int64_t> rank(tree.size(), 0);
    for (std::size_t g = 0; g < d.location_groups.size(); ++g) rank[d.location_groups[g]] = d.group_rank[g];
    for (std::size_t l = 0; l < d.locations.size(); ++l) rank[d.locations[l]] = d.location_rank[l];
    std::map<std::uint32_t, bool> fresh;  // union groups and locations this input added or matched
    for (const auto e : tree.preorder()) {
      const auto parent = tree.parent(e);
      const auto above = parent == cube::kNoParent ? kAbsent : place[parent];
      const auto name = std::string(tree.name(e));
      if (tree.kind(e) == Kind::Node) {
        if (parent == cube::kNoParent) {
          if (elements.empty()) elements.push_back({kAbsent, Kind::Node, tree.cls(e), name, 0});
          place[e] = 0;
        } else {
          place[e] = kept_level(tree.cls(e)) ? element(above, Kind::Node, tree.cls(e), name, 0).first : above;
        }
        continue;
      }
      if (tree.kind(e) == Kind::LocationGroup && (above == kAbsent || !kept_level(elements[above].cls)))
        conflict(i, "process '" + name + "' below no node (class 'node' or 'nodecard')");
      const auto [u, inserted] = element(above, tree.kind(e), tree.cls(e), name, rank[e]);
      if (!fresh.try_emplace(u, true).second)
        conflict(i, std::string(tree.kind(e) == Kind::Location ? "two locations" : "two processes") + " of rank " +
                        std::to_string(rank[e]) + " in '" + elements[above].name + "'");
      place[e] = u;
    }
    for (const auto e : d.locations) location_of[i].push_back(place[e]);
  }
  // Built in preorder of the union (children in order of discovery): columns follow that order.
  std::vector<std::vector<std::uint32_t>> children(elements.size());
  for (std::uint32_t e = 1; e < elements.size(); ++e) children[elements[e].parent].push_back(e);
  systree::SingleNodeTree tree;
  std::vector<std::uint32_t> column(elements.size(), kAbsent), built(elements.size(), kAbsent);
  std::vector<std::uint32_t> stack{0};
  while (!stack.empty()) {
    const auto e = stack.back();
    stack.pop_back();
    const auto& x = elements[e];
    built[e] = e == 0 ? tree.add_root(x.kind, x.cls, x.name) : tree.add_child(built[x.parent], x.kind, x.cls, x.name);
    if (x.kind == Kind::LocationGroup) group_ranks.push_back(x.rank);
    if (x.kind == Kind::Location) {
      column[e] = static_cast<std::uint32_t>(location_ranks.size());
      location_ranks.push_back(x.rank);
    }
    for (auto c = children[e].rbegin(); c != children[e].rend(); ++c) stack.push_back(*c);
  }
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    maps[i].locations.clear();
    for (const auto u : location_of[i]) maps[i].locations.push_back(column[u]);
    maps[i].identity_locations = false;
  }
  return tree;
}

// The <cart> elements of a <topologies> text, one per topology.
std::vector<std::string_view> cartesians(std::string_view xml) {
  std::vector<std::string_view> out;
  for (auto at = xml.find("<cart"); at != std::string_view::npos;) {
    const auto close = xml.find("</cart>", at);
    if (close == std::string_view::npos) break;
    const auto end = close + 7;
    out.push_back(xml.substr(at, end - at));
    at = xml.find("<cart", end);
  }
  return out;
}

// What makes two topologies the same one: the name (CubeLib's topologies have one), or for an
// unnamed one its declaration and dimensions (the text before its first coordinate).
std::string topology_key(std::string_view cart) {
  const auto tag = cart.substr(0, cart.find('>'));
  const auto at = tag.find(" name=\"");
  if (at != std::string_view::npos) {
    const auto begin = at + 7, end = tag.find('"', begin);
    return "name\x1f" + std::string(tag.substr(begin, end - begin));
  }
  return "dims\x1f" + std::string(cart.substr(0, cart.find("<coord")));
}

// Every input's Cartesian topologies moved to the result's locations (CubeLib carries them
// too): coordinates are renamed from the input's location Ids to the result's. Where two inputs
// have a topology of one name, the first input's is kept. A topology whose coordinates name
// anything but locations (lgId, stnId, CUBE3 forms), which a collapsed or reduced system tree
// has no counterpart for, is dropped.
std::string carried_topologies(const std::vector<const cube::Definitions*>& inputs, const std::vector<InputMap>& maps,
                               const cube::Definitions& out) {
  std::set<std::string> kept;
  std::string text;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const auto& d = *inputs[i];
    const auto n = d.location_file_id.size();
    std::vector<std::uint64_t> new_id(n);
    std::vector<bool> seen(n, false);
    bool ids = true;  // the input's location Ids are a permutation of 0 .. n-1
    for (std::size_t l = 0; l < n && ids; ++l) {
      const auto id = d.location_file_id[l];
      ids = id < n && !seen[id];
      if (!ids) break;
      seen[id] = true;
      new_id[id] = out.location_file_id[maps[i].locations[l]];
    }
    if (!ids) continue;  // not renamable, as the writer judges (anchor_writer.cpp)
    for (const auto cart : cartesians(d.topologies_xml)) {
      auto key = topology_key(cart);
      if (kept.count(key)) continue;
      const auto moved = cube::remap_location_ids(cart, new_id);
      if (!moved) continue;
      kept.insert(std::move(key));
      text += *moved;
      text += '\n';
    }
  }
  return text;
}

}  // namespace

std::optional<SystemMatch> parse_system_match(std::string_view name) {
  if (name == "auto") return SystemMatch::Auto;
  if (name == "same") return SystemMatch::Same;
  if (name == "processes") return SystemMatch::Processes;
  if (name == "reduce") return SystemMatch::Reduce;
  return std::nullopt;
}

CallPathUnion unify_call_paths(const std::vector<const cube::Definitions*>& inputs) {
  CallUnion calls;
  CallPathUnion out;
  for (std::uint32_t i = 0; i < inputs.size(); ++i) {
    InputMap map;
    add_calls(calls, *inputs[i], i, map);
    out.cnodes.push_back(std::move(map.cnodes));
  }
  out.size = calls.tree.size();
  return out;
}

bool same_layout(const cube::Definitions& a, const cube::Definitions& b) {
  const auto &x = a.system, &y = b.system;
  if (x.size() != y.size() || a.locations != b.locations || a.location_groups != b.location_groups) return false;
  for (std::uint32_t e = 0; e < x.size(); ++e) {
    if (x.kind(e) != y.kind(e) || x.parent(e) != y.parent(e) || x.cls(e) != y.cls(e)) return false;
  }
  return true;
}

Unified unify(const std::vector<const cube::Definitions*>& inputs, SystemMatch system) {
  if (inputs.empty()) throw std::invalid_argument("unification needs at least one report");
  Unified out;
  out.inputs.resize(inputs.size());
  MetricUnion metrics;
  CallUnion calls;
  for (std::uint32_t i = 0; i < inputs.size(); ++i) {
    add_metrics(metrics, *inputs[i], i, out.inputs[i]);
    add_calls(calls, *inputs[i], i, out.inputs[i]);
  }
  // Metrics and call paths renumbered in preorder of the unified trees.
  const auto metric_order = metrics.tree.preorder();
  const auto metric_pos = positions(metric_order);
  std::vector<cube::Metric> unified_metrics;
  for (const auto node : metric_order) {
    const auto [input, index] = metrics.source[node];
    cube::Metric m = inputs[input]->metrics[index];
    const auto parent = metrics.tree.parent(node);
    m.parent = parent == kAbsent ? kNoParent : metric_pos[parent];
    unified_metrics.push_back(std::move(m));
  }
  const auto cnode_order = calls.tree.preorder();
  const auto cnode_pos = positions(cnode_order);
  cube::CallTreeParts parts;
  std::vector<const cube::Cnode*> cnode_sources;
  for (const auto node : cnode_order) {
    const auto [input, index] = calls.source[node];
    const auto& c = inputs[input]->cnodes[index];
    const auto parent = calls.tree.parent(node);
    parts.parents.push_back(parent == kAbsent ? kNoParent : cnode_pos[parent]);
    parts.regions.push_back(calls.region_by_key.at(region_key(inputs[input]->regions[c.region])));
    parts.parameters.push_back(c.parameters);
    cnode_sources.push_back(&c);
  }
  for (auto& map : out.inputs) {
    for (auto& m : map.metrics) m = metric_pos[m];
    for (auto& c : map.cnodes) c = cnode_pos[c];
    map.metric_of.assign(unified_metrics.size(), kAbsent);
    for (std::uint32_t m = 0; m < map.metrics.size(); ++m) map.metric_of[map.metrics[m]] = m;
  }
  // System trees.
  bool same = true;
  for (std::size_t i = 1; i < inputs.size() && same; ++i) same = same_layout(*inputs[0], *inputs[i]);
  if (system == SystemMatch::Same && !same)
    throw std::invalid_argument("the system trees have different layouts (machines, processes, threads): "
                                "collapse them to processes (system='processes')");
  out.reduced = system == SystemMatch::Reduce;
  out.collapsed = system == SystemMatch::Processes || (system == SystemMatch::Auto && !same);
  std::vector<std::int64_t> group_ranks, location_ranks;
  const auto tree = out.reduced     ? reduced_system(inputs, out.inputs, group_ranks, location_ranks)
                    : out.collapsed ? collapsed_system(inputs, out.inputs, group_ranks, location_ranks)
                                    : same_system(inputs, out.inputs);
  out.defs = cube::assemble_definitions(std::move(unified_metrics), std::move(calls.regions), std::move(parts), tree);
  for (std::size_t c = 0; c < cnode_sources.size(); ++c) {
    auto& cnode = out.defs.cnodes[c];
    cnode.attrs = cnode_sources[c]->attrs;
    cnode.line = cnode_sources[c]->line;
    cnode.mod = cnode_sources[c]->mod;
  }
  if (out.collapsed || out.reduced) {
    out.defs.group_rank = std::move(group_ranks);
    out.defs.location_rank = std::move(location_ranks);
  } else {  // the first input's ranks (the tree is its own, in the same preorder)
    out.defs.group_rank = inputs[0]->group_rank;
    out.defs.location_rank = inputs[0]->location_rank;
  }
  out.defs.topologies_xml = carried_topologies(inputs, out.inputs, out.defs);
  out.defs.version = inputs[0]->version;
  out.defs.attrs = inputs[0]->attrs;
  out.defs.mirrors = inputs[0]->mirrors;
  return out;
}

}  // namespace cubescale::algebra
