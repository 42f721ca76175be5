#pragma once
// A report's system tree in sequence form *with the way back to its elements*: per element
// the sequence record it is an instance of. systree::fold gives the canonical records (the
// Score-P system-description paper) but, by design, not which element went into which record;
// a viewer that shows a record's values over its instances needs that map. Records are the
// same as fold's up to their order: identical sibling subtrees (same kind, class and, below,
// the same multiset of child subtrees) are one record with `copies`.
//
// Exact: subtrees are compared by interned shape ids (no hashes that could collide), bottom-up
// (a child's id is larger than its parent's in a SingleNodeTree, so descending ids visit
// children first), then records top-down as (parent's record, shape). O(n log k) for n
// elements with at most k children each. Elements without a location below them (an empty
// node) carry no values and get no record.
#include <cstdint>
#include <string>
#include <vector>

#include "cubescale/systree/single.hpp"

namespace cubescale::cube {

struct SequenceForm {
  static constexpr std::int64_t kNone = -1;
  // Per element of the tree: its record, or kNone (no location below it).
  std::vector<std::int64_t> record_of;
  // The elements with a record, depth by depth (ascending ids within a depth); those at depth d
  // are elements[depth_start[d] .. depth_start[d + 1]).
  std::vector<std::uint32_t> elements;
  std::vector<std::uint64_t> depth_start;
  // Per record, numbered depth by depth, within a depth in the order of their first instance.
  std::vector<std::int64_t> parent;      // the parent record, kNone for the root record
  std::vector<std::uint32_t> depth;      // the root record has depth 0
  std::vector<std::uint64_t> instances;  // elements of the tree that are instances of it
  std::vector<std::uint64_t> copies;     // instances per instance of its parent record
  std::vector<std::string> cls;          // class name
};

SequenceForm sequence_form(const systree::SingleNodeTree& tree);

}  // namespace cubescale::cube
