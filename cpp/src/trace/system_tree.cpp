#include "cubescale/trace/system_tree.hpp"

#include <functional>

namespace cubescale::trace {

using systree::Kind;

const char* location_class(const Location& location) {
  if (location.type == "accelerator_stream") return "gpu";
  if (location.type == "metric") return "metric";
  return "thread";
}

TraceSystem system_tree(const Definitions& defs) {
  TraceSystem out;
  auto& tree = out.tree;
  const auto n_nodes = defs.system_tree_nodes.size();
  std::vector<std::vector<std::uint32_t>> node_children(n_nodes), node_groups(n_nodes);
  std::vector<std::uint32_t> roots, orphan_groups;
  for (std::uint32_t i = 0; i < n_nodes; ++i) {
    const auto p = defs.system_tree_nodes[i].parent;
    // A parent defined later than its child is fine; a cycle is cut at the child.
    if (p == kNone || p == i) roots.push_back(i);
    else node_children[p].push_back(i);
  }
  for (std::uint32_t g = 0; g < defs.location_groups.size(); ++g) {
    const auto node = defs.location_groups[g].system_tree_node;
    (node == kNone ? orphan_groups : node_groups[node]).push_back(g);
  }
  std::vector<std::vector<std::uint32_t>> group_locations(defs.location_groups.size());
  std::vector<std::uint32_t> orphan_locations;
  for (std::uint32_t l = 0; l < defs.locations.size(); ++l) {
    const auto g = defs.locations[l].group;
    (g == kNone ? orphan_locations : group_locations[g]).push_back(l);
  }
  out.location_element.assign(defs.locations.size(), 0);
  out.node_element.assign(n_nodes, 0);
  out.group_element.assign(defs.location_groups.size(), 0);
  std::vector<std::uint8_t> placed(n_nodes, 0);

  const auto add_group = [&](std::uint32_t parent, std::uint32_t g, const std::string& cls, const std::string& name,
                             const std::vector<std::uint32_t>& locations) {
    const auto e = tree.add_child(parent, Kind::LocationGroup, cls, name);
    if (g != kNone) out.group_element[g] = e;
    TraceSystem::Group group{g, e, {}};
    for (auto l : locations) {
      const auto& loc = defs.locations[l];
      out.location_element[l] = tree.add_child(e, Kind::Location, location_class(loc), loc.name);
      out.location_order.push_back(l);
      group.locations.push_back(l);
    }
    out.groups.push_back(std::move(group));
  };
  const auto add_groups = [&](std::uint32_t element, const std::vector<std::uint32_t>& groups) {
    for (auto g : groups) {
      const auto& lg = defs.location_groups[g];
      add_group(element, g, lg.type == "accelerator" ? "accelerator" : "process", lg.name, group_locations[g]);
    }
  };
  // Iterative depth-first placement of a node subtree: groups of a node before its child nodes
  // (as Score-P's reports list them).
  const auto place = [&](std::uint32_t parent_element, std::uint32_t root) {
    std::vector<std::pair<std::uint32_t, std::uint32_t>> stack{{root, parent_element}};
    while (!stack.empty()) {
      auto [node, parent] = stack.back();
      stack.pop_back();
      if (placed[node]) continue;
      placed[node] = 1;
      const auto& n = defs.system_tree_nodes[node];
      const auto cls = n.class_name.empty() ? std::string("node") : n.class_name;
      // The trace's names ("zih"), as cubescale's own profiles name hosts and as `timeline
      // --node` takes them; Score-P's profiles say "node zih" (docs/trace.md: where we differ).
      const auto e = parent == systree::SingleNodeTree::kNoParent ? tree.add_root(Kind::Node, cls, n.name)
                                                              : tree.add_child(parent, Kind::Node, cls, n.name);
      for (const auto& [k, v] : n.properties) tree.set_property(e, k, v);
      out.node_element[node] = e;
      add_groups(e, node_groups[node]);
      for (auto it = node_children[node].rbegin(); it != node_children[node].rend(); ++it) stack.push_back({*it, e});
    }
  };
  const bool synthetic_root = roots.size() != 1 || !orphan_groups.empty() || !orphan_locations.empty();
  if (synthetic_root) {
    const auto machine = tree.add_root(Kind::Node, "machine", "machine");
    for (auto r : roots) place(machine, r);
    add_groups(machine, orphan_groups);
    for (auto l : orphan_locations) add_group(machine, kNone, "process", defs.locations[l].name, {l});
  } else {
    place(systree::SingleNodeTree::kNoParent, roots[0]);
  }
  // Nodes in a parent cycle are unreachable from a root: their groups go below the root.
  for (std::uint32_t i = 0; i < n_nodes; ++i)
    if (!placed[i]) place(0, i);
  return out;
}

}  // namespace cubescale::trace
