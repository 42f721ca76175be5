#include "cubescale/cube/assemble.hpp"

#include <stdexcept>
#include <string>

namespace cubescale::cube {

namespace {

using systree::Kind;

// Preorder means: the parent of element i is element i-1 or one of its ancestors (a root
// may follow anything). One pass with the path from the root to the previous element.
void check_preorder(const std::vector<std::uint32_t>& parents, const char* what) {
  std::vector<std::uint32_t> path;
  for (std::uint32_t i = 0; i < parents.size(); ++i) {
    const auto p = parents[i];
    if (p == kNoParent) {
      path.clear();
    } else {
      while (!path.empty() && path.back() != p) path.pop_back();
      if (path.empty())
        throw std::invalid_argument(std::string(what) + " " + std::to_string(i) + ": parent " + std::to_string(p) +
                                    " is not the previous " + what + " or one of its ancestors (not preorder)");
    }
    path.push_back(i);
  }
}

void check_nesting(const systree::SingleNodeTree& tree, std::uint32_t e) {
  if (e == 0) {
    if (tree.kind(e) != Kind::Node) throw std::invalid_argument("the system tree's root must be a node (machine)");
    return;
  }
  const auto parent_kind = tree.kind(tree.parent(e));
  const bool ok = tree.kind(e) == Kind::Location ? parent_kind == Kind::LocationGroup : parent_kind == Kind::Node;
  if (!ok)
    throw std::invalid_argument("system tree element " + std::to_string(e) + " (" + tree.cls(e) +
                                "): a location belongs to a location group, anything else to a node");
}

// The tree copied in preorder, with the bookkeeping the reader fills: location groups and
// locations in preorder, default ranks (group index; index inside the group), Id = column.
void take_system(const systree::SingleNodeTree& tree, Definitions& d) {
  if (tree.size() == 0) throw std::invalid_argument("the system tree is empty");
  std::vector<std::uint32_t> copy_of(tree.size());
  std::vector<std::int64_t> next_rank(tree.size(), 0);
  for (const auto e : tree.preorder()) {
    check_nesting(tree, e);
    const auto c = e == 0 ? d.system.add_root(tree.kind(e), tree.cls(e), tree.name(e))
                          : d.system.add_child(copy_of[tree.parent(e)], tree.kind(e), tree.cls(e), tree.name(e));
    copy_of[e] = c;
    for (const auto& [k, v] : tree.properties(e)) d.system.set_property(c, k, v);
    if (tree.kind(e) == Kind::LocationGroup) {
      d.group_rank.push_back(static_cast<std::int64_t>(d.location_groups.size()));
      d.location_groups.push_back(c);
    } else if (tree.kind(e) == Kind::Location) {
      d.location_rank.push_back(next_rank[tree.parent(e)]++);
      d.location_file_id.push_back(d.locations.size());
      d.locations.push_back(c);
    }
  }
  if (d.locations.empty()) throw std::invalid_argument("the system tree has no location (thread)");
}

}  // namespace

Definitions assemble_definitions(std::vector<Metric> metrics, std::vector<Region> regions, CallTreeParts calls,
                                 const systree::SingleNodeTree& system) {
  Definitions d;
  if (metrics.empty()) throw std::invalid_argument("a report needs at least one metric");
  std::vector<std::uint32_t> metric_parents;
  for (std::size_t i = 0; i < metrics.size(); ++i) {
    if (metrics[i].dtype.name.empty()) throw std::invalid_argument("metric " + std::to_string(i) + " has no data type");
    if (metrics[i].uniq_name.empty()) throw std::invalid_argument("metric " + std::to_string(i) + " has no name");
    metrics[i].file_id = i;
    metric_parents.push_back(metrics[i].parent);
  }
  check_preorder(metric_parents, "metric");
  for (std::size_t i = 0; i < regions.size(); ++i) regions[i].file_id = i;
  const auto n = calls.parents.size();
  if (n == 0) throw std::invalid_argument("a report needs at least one call path (cnode)");
  if (calls.regions.size() != n) throw std::invalid_argument("one region per cnode is needed");
  if (!calls.parameters.empty() && calls.parameters.size() != n)
    throw std::invalid_argument("parameters: one list per cnode, or none");
  check_preorder(calls.parents, "cnode");
  d.cnodes.resize(n);
  for (std::size_t c = 0; c < n; ++c) {
    if (calls.regions[c] >= regions.size())
      throw std::invalid_argument("cnode " + std::to_string(c) + " calls region " + std::to_string(calls.regions[c]) +
                                  ", but there are " + std::to_string(regions.size()) + " regions");
    d.cnodes[c].file_id = c;
    d.cnodes[c].parent = calls.parents[c];
    d.cnodes[c].region = calls.regions[c];
    if (!calls.parameters.empty()) d.cnodes[c].parameters = std::move(calls.parameters[c]);
  }
  d.metrics = std::move(metrics);
  d.regions = std::move(regions);
  take_system(system, d);
  validate(d);
  return d;
}

}  // namespace cubescale::cube
