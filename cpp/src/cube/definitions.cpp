#include "cubescale/cube/definitions.hpp"

#include <stdexcept>

namespace cubescale::cube {

namespace {

template <class Item>
std::vector<std::vector<std::uint32_t>> children_of(const std::vector<Item>& items) {
  std::vector<std::vector<std::uint32_t>> children(items.size());
  for (std::uint32_t i = 0; i < items.size(); ++i) {
    if (items[i].parent != kNoParent) children[items[i].parent].push_back(i);
  }
  return children;
}

template <class Item>
std::vector<std::uint32_t> parents_of(const std::vector<Item>& items) {
  std::vector<std::uint32_t> parents(items.size());
  for (std::size_t i = 0; i < items.size(); ++i) parents[i] = items[i].parent;
  return parents;
}

}  // namespace

const char* metric_type_name(const Metric& m) {
  switch (m.derivation) {
    case Derivation::PostDerived: return "POSTDERIVED";
    case Derivation::PreDerivedInclusive: return "PREDERIVED_INCLUSIVE";
    case Derivation::PreDerivedExclusive: return "PREDERIVED_EXCLUSIVE";
    case Derivation::Stored: break;
  }
  return m.kind == MetricKind::Inclusive ? "INCLUSIVE" : "EXCLUSIVE";
}

void set_metric_type(Metric& m, std::string_view type) {
  m.derivation = Derivation::Stored;
  m.kind = MetricKind::Exclusive;
  if (type == "INCLUSIVE") {
    m.kind = MetricKind::Inclusive;
  } else if (type == "POSTDERIVED") {
    m.derivation = Derivation::PostDerived, m.kind = MetricKind::Inclusive;
  } else if (type == "PREDERIVED_INCLUSIVE") {
    m.derivation = Derivation::PreDerivedInclusive, m.kind = MetricKind::Inclusive;
  } else if (type == "PREDERIVED_EXCLUSIVE") {
    m.derivation = Derivation::PreDerivedExclusive;
  }
}

std::vector<std::vector<std::uint32_t>> Definitions::cnode_children() const { return children_of(cnodes); }
std::vector<std::vector<std::uint32_t>> Definitions::metric_children() const { return children_of(metrics); }
std::vector<std::uint32_t> Definitions::cnode_parents() const { return parents_of(cnodes); }
std::vector<std::uint32_t> Definitions::metric_parents() const { return parents_of(metrics); }

std::vector<std::uint32_t> Definitions::location_ancestors(std::uint32_t depth) const {
  std::vector<std::uint32_t> out(locations.size());
  for (std::size_t l = 0; l < locations.size(); ++l) {
    std::uint32_t e = locations[l];
    while (system.depth(e) > depth) e = system.parent(e);
    out[l] = e;
  }
  return out;
}

std::vector<std::uint32_t> deep_order(const Definitions& defs) {
  std::vector<std::uint32_t> order(defs.cnodes.size());
  for (std::uint32_t i = 0; i < order.size(); ++i) order[i] = i;
  return order;
}

std::vector<std::uint32_t> wide_order(const Definitions& defs) {
  // Emit a node's children together when the node is visited; visit nodes in preorder.
  // Since the cnodes are stored in preorder, visiting is a forward loop over the indices.
  // Children lists are one array with offsets (children of j at [first[j], first[j + 1])),
  // not a vector per node: opening a report calls this once, and most nodes are leaves.
  const auto n = defs.cnodes.size();
  std::vector<std::uint32_t> first(n + 1, 0), children(n);
  for (const auto& c : defs.cnodes)
    if (c.parent != kNoParent) ++first[c.parent + 1];
  for (std::size_t j = 0; j < n; ++j) first[j + 1] += first[j];
  auto next = first;
  for (std::uint32_t i = 0; i < n; ++i)
    if (defs.cnodes[i].parent != kNoParent) children[next[defs.cnodes[i].parent]++] = i;
  std::vector<std::uint32_t> order;
  order.reserve(n);
  for (std::uint32_t i = 0; i < n; ++i) {
    if (defs.cnodes[i].parent == kNoParent) {
      order.push_back(i);
      // A root's subtree is the contiguous preorder range that starts at it.
      std::uint32_t end = i + 1;
      while (end < n && defs.cnodes[end].parent != kNoParent) ++end;
      order.insert(order.end(), children.begin() + first[i], children.begin() + first[end]);
    }
  }
  return order;
}

const std::vector<std::uint32_t>& row_order(MetricKind kind, const std::vector<std::uint32_t>& deep,
                                            const std::vector<std::uint32_t>& wide) {
  return kind == MetricKind::Inclusive ? wide : deep;
}

void validate(const Definitions& defs) { validate(defs, defs.regions.size()); }

void validate(const Definitions& defs, std::size_t region_count) {
  for (std::size_t i = 0; i < defs.cnodes.size(); ++i) {
    const auto& c = defs.cnodes[i];
    if (c.parent != kNoParent && c.parent >= i) throw std::invalid_argument("cnode parent must precede its child");
    if (c.region >= region_count) throw std::invalid_argument("cnode region out of range");
  }
  for (std::size_t i = 0; i < defs.metrics.size(); ++i) {
    if (defs.metrics[i].parent != kNoParent && defs.metrics[i].parent >= i)
      throw std::invalid_argument("metric parent must precede its child");
  }
  if (defs.location_rank.size() != defs.locations.size() || defs.location_file_id.size() != defs.locations.size() ||
      defs.group_rank.size() != defs.location_groups.size())
    throw std::invalid_argument("location bookkeeping sizes differ");
  for (auto e : defs.locations) {
    if (e >= defs.system.size() || defs.system.kind(e) != systree::Kind::Location)
      throw std::invalid_argument("locations must be system tree locations");
  }
}

}  // namespace cubescale::cube
