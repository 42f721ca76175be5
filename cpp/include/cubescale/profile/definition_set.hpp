#pragma once
// Definitions in canonical form: the unit that unification merges (paper 002, section 4.3).
//
// A set holds metrics, regions and a call tree with ids that depend only on the contents,
// never on which rank saw what first:
// * regions sorted by their key (name, mangled name, module, lines, paradigm, role, ...);
// * the call tree in preorder with each node's children sorted by (region, parameters), so
//   a call path is identified by its path of (region, parameters) from a root;
// * optionally each call path's first visit (the minimum over every contributor), so that
//   the root can present siblings in order of first visit afterwards (presented_by_first_visit);
// * metrics identified by unique name, in the order every contributor gave them when all
//   gave the same list; otherwise (any disagreement) as a tree with siblings sorted by name.
// Merging two canonical sets is a merge-join of sorted lists (regions, then siblings level by
// level): O(size of the inputs), commutative and associative, so a reduction tree of any shape
// over any number of ranks gives the same global set. Each merge also returns, per input, the
// map from the input's ids to the merged ids; composing them down the reduction tree gives
// every rank its local -> global maps.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "cubescale/cube/definitions.hpp"

namespace cubescale::profile {

struct LocalProfile;

struct DefinitionSet {
  std::vector<cube::Metric> metrics;  // preorder; parents are indices into metrics
  bool metrics_agree = true;          // false: some contributors listed other metrics
  std::vector<cube::Region> regions;  // sorted by region key
  std::vector<std::uint32_t> cnode_parents;  // canonical preorder
  std::vector<std::uint32_t> cnode_regions;
  std::vector<std::vector<cube::Attributes>> cnode_parameters;  // one list per cnode
  std::vector<std::uint64_t> cnode_first_visit;  // empty, or one per cnode (kNeverVisited: unknown)

  std::string pack() const;
  // FormatError naming `source` for bytes that are not a packed set.
  static DefinitionSet unpack(std::string_view bytes, const std::string& source);
};

// Maps from one input's ids to the ids of a set built from it.
struct IdMaps {
  std::vector<std::uint32_t> metrics, regions, cnodes;
};

// The canonical set of a local profile and the maps from its local ids. Throws
// std::invalid_argument if the profile has two sibling call paths with the same region and
// parameters (they would be one call path).
DefinitionSet canonical_set(const LocalProfile& profile, IdMaps& local_to_set);

struct Merged {
  DefinitionSet set;
  IdMaps from_a, from_b;
};
// Throws std::invalid_argument when two metrics of one name disagree on data type, kind,
// unit or parent.
Merged merge(const DefinitionSet& a, const DefinitionSet& b);

// The same set with each node's children ordered by first visit (ties: canonical order), as
// Score-P presents call trees; `set_to_presented` maps the canonical ids to the new ones.
// A set without first visits comes back unchanged (identity map).
DefinitionSet presented_by_first_visit(const DefinitionSet& set, std::vector<std::uint32_t>& set_to_presented);

// a -> b -> c as a -> c.
std::vector<std::uint32_t> compose(const std::vector<std::uint32_t>& a_to_b, const std::vector<std::uint32_t>& b_to_c);

}  // namespace cubescale::profile
