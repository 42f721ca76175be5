#pragma once
// The definitions of a CUBE report: metric tree, regions, call tree and system tree.
// Every tree is stored in depth-first preorder (a child has a higher index than its parent),
// so aggregation is one loop over the index range, forwards or backwards, never recursion.
// Ids as they appear in a file are kept only to read that file; our indices are positions.
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cubescale/cube/dtype.hpp"
#include "cubescale/systree/single.hpp"

namespace cubescale::cube {

inline constexpr std::uint32_t kNoParent = 0xffffffffu;
using Attributes = std::vector<std::pair<std::string, std::string>>;

// Along the call tree, a metric's stored values are either inclusive (a call path includes its
// callees) or exclusive.
enum class MetricKind : std::uint8_t { Exclusive, Inclusive };

// Derived metrics store no values: a CubePL expression computes them (cube/derived.hpp).
// PREDERIVED ones are computed per (call path, location) from their operands in one flavour
// and then aggregated like stored metrics in `kind` (PREDERIVED_EXCLUSIVE: Exclusive);
// POSTDERIVED ones are computed from their operands in whichever flavour is asked for.
enum class Derivation : std::uint8_t { Stored, PostDerived, PreDerivedInclusive, PreDerivedExclusive };

struct Metric {
  std::uint64_t file_id = 0;
  std::uint32_t parent = kNoParent;
  MetricKind kind = MetricKind::Exclusive;
  Derivation derivation = Derivation::Stored;
  std::string cubepl, cubepl_init;  // <cubepl>, <cubeplinit> of a derived metric (unescaped)
  DataType dtype;
  std::string disp_name, uniq_name, uom, val, url, descr;
  Attributes xml_attributes;  // attributes of <metric> other than id and type (viewtype, ...)
  Attributes attrs;           // <attr key value/> children
};

// The `type` attribute of <metric>: INCLUSIVE, EXCLUSIVE, POSTDERIVED, PREDERIVED_INCLUSIVE ...
const char* metric_type_name(const Metric& m);
// Sets kind and derivation from a `type` attribute; unknown types read as EXCLUSIVE.
void set_metric_type(Metric& m, std::string_view type);
inline bool is_derived(const Metric& m) { return m.derivation != Derivation::Stored; }

struct Region {
  std::uint64_t file_id = 0;
  std::string name, mangled_name, mod, paradigm, role, url, descr;
  std::int64_t begin = -1, end = -1;
  Attributes attrs;
};

struct Cnode {
  std::uint64_t file_id = 0;
  std::uint32_t parent = kNoParent;
  std::uint32_t region = 0;  // index into Definitions::regions
  std::vector<Attributes> parameters;  // attribute lists of <parameter .../> children
  Attributes attrs;
};

struct Definitions {
  std::string version = "4.4";
  Attributes attrs;                  // report-level <attr>s
  std::vector<std::string> mirrors;  // <doc><mirrors><murl>
  std::vector<Metric> metrics;       // preorder of the metric tree
  std::vector<Region> regions;
  std::vector<Cnode> cnodes;         // preorder of the call tree
  // The system tree: nodes, location groups (class = type, e.g. "process") and locations
  // (class = type, e.g. "thread"), created in preorder.
  systree::SingleNodeTree system;
  std::vector<std::uint32_t> location_groups;  // tree element of each location group, preorder
  std::vector<std::uint32_t> locations;        // tree element of each location, preorder
  std::vector<std::int64_t> group_rank;        // <rank> of each location group
  std::vector<std::int64_t> location_rank;     // <rank> of each location
  std::vector<std::uint64_t> location_file_id; // <location Id> of each location: data column
  std::string topologies_xml;                  // inner text of <topologies>, kept verbatim

  std::size_t location_count() const { return locations.size(); }
  // Children lists in index order (children follow parents, so built in one loop).
  std::vector<std::vector<std::uint32_t>> cnode_children() const;
  std::vector<std::vector<std::uint32_t>> metric_children() const;
  std::vector<std::uint32_t> cnode_parents() const;
  std::vector<std::uint32_t> metric_parents() const;
  // For each location, the system-tree element at `depth` above it (or itself if shallower).
  std::vector<std::uint32_t> location_ancestors(std::uint32_t depth) const;
};

// Row positions of a metric's .data member: position p holds the row of cnode order[p].
// EXCLUSIVE metrics use preorder (identity); INCLUSIVE metrics the "wide" order: each root,
// then all children of a node before descending, in depth-first order of the parents.
std::vector<std::uint32_t> deep_order(const Definitions& defs);
std::vector<std::uint32_t> wide_order(const Definitions& defs);
const std::vector<std::uint32_t>& row_order(MetricKind kind, const std::vector<std::uint32_t>& deep,
                                            const std::vector<std::uint32_t>& wide);

// Checks the invariants that the rest of the core relies on (parents precede children,
// region indices valid, location bookkeeping consistent); throws std::invalid_argument.
void validate(const Definitions& defs);
// The same for definitions whose `region_count` regions are not parsed yet.
void validate(const Definitions& defs, std::size_t region_count);

}  // namespace cubescale::cube
