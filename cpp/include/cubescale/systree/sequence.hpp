#pragma once
// Sequence definitions (paper 000): a record stands for `copies` consecutive, structurally
// identical siblings, each with the record's children below it. Identical sibling subtrees
// are folded into one record, so a regular machine has a description of constant size.
//
// Canonical form: after canonicalize(), the children of every record are sorted by
// (kind, class, structural hash, structure) and no two siblings have equal structure.
// Folding, merging and deserializing all end in this form, so the same machine always
// gives the same records, whatever order its parts were added in. Records are then stored
// in depth-first preorder: a child always has a higher id than its parent, and bottom-up
// work is one backward loop.
#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "cubescale/systree/kind.hpp"
#include "cubescale/systree/single.hpp"

namespace cubescale::systree {

struct Record {
  Kind kind = Kind::Node;
  std::uint32_t cls = 0;  // index into SystemTree::classes()
  std::uint64_t copies = 1;
  std::uint32_t parent = 0xffffffffu;
  std::uint32_t depth = 0;
  Properties properties;  // structural: part of a record's identity
  std::vector<std::uint32_t> children;
};

// One step of a path from the root: which record, and which of its copies.
struct PathStep {
  std::uint32_t record;
  std::uint64_t copy;
};

// Where canonicalize() put each record that existed before it: the surviving record it was
// folded into and the first copy of that survivor that it occupies. Records below a folded
// record map to `kGone` (their structure lives on in the survivor's subtree).
struct Placement {
  static constexpr std::uint32_t kGone = 0xffffffffu;
  std::uint32_t record = kGone;
  std::uint64_t first_copy = 0;
};

namespace detail {
struct CanonicalTrace;
}
class NameMap;

class SystemTree {
 public:
  static constexpr std::uint32_t kNone = 0xffffffffu;

  // ---- building (leaves the tree non-canonical until canonicalize())
  std::uint32_t add_root(Kind kind, std::string_view cls);
  std::uint32_t add_record(std::uint32_t parent, Kind kind, std::string_view cls, std::uint64_t copies,
                           Properties properties = {});
  // Deep-copies `other`'s subtree at `record` (with its copies) as a new child of `parent`.
  std::uint32_t graft(std::uint32_t parent, const SystemTree& other, std::uint32_t record);
  // Sorts, folds equal siblings, renumbers in preorder and computes hashes and counts.
  // Returns, for every record id before the call, where it went.
  std::vector<Placement> canonicalize();
  bool canonical() const { return canonical_; }
  // Properties of the root (add_root takes none; readers set them afterwards).
  void set_root_properties(Properties props) {
    records_.at(0).properties = std::move(props);
    canonical_ = false;
  }

  // ---- structure (valid in canonical form)
  std::uint32_t root() const { return 0; }
  std::size_t size() const { return records_.size(); }
  const Record& record(std::uint32_t r) const { return records_.at(r); }
  const std::vector<Record>& records() const { return records_; }
  const std::vector<std::string>& classes() const { return classes_; }
  const std::string& class_name(std::uint32_t r) const { return classes_.at(records_.at(r).cls); }
  std::uint64_t hash(std::uint32_t r) const { return hash_.at(r); }
  std::uint32_t max_depth() const { return max_depth_; }
  // Structural equality of two subtrees, possibly of different trees; copies of the two
  // top records are not compared (that is what folding sums up).
  static bool same_structure(const SystemTree& a, std::uint32_t ra, const SystemTree& b, std::uint32_t rb);
  // Same records, classes and copies: the trees describe the same machine.
  bool operator==(const SystemTree& other) const;

  // ---- enumeration without expansion (paper 000, section 3)
  // Elements of the kinds in `mask` inside ONE copy of record r's subtree, r included.
  std::uint64_t count(std::uint32_t r, KindMask mask) const;
  // Elements of the kinds in `mask` in the whole expanded tree.
  std::uint64_t total(KindMask mask) const { return count(0, mask); }
  // Depth-first index, among the elements of the kinds in `mask`, of the element at the end
  // of `path`. Throws std::out_of_range on a path that is not in the tree.
  std::uint64_t index_of(const std::vector<PathStep>& path, KindMask mask) const;
  // The reverse: the path of the element with that index. Throws std::out_of_range.
  std::vector<PathStep> path_of(std::uint64_t index, KindMask mask) const;
  // Bulk forms for NumPy: records and copies are row-major [n][max_depth()+1], padded with
  // kNone / UINT64_MAX past the end of each path.
  void paths_of(const std::uint64_t* indices, std::size_t n, KindMask mask, std::uint32_t* records,
                std::uint64_t* copies) const;
  // The index, in the `to` enumeration, of the ancestor at `depth` of each element (element
  // itself if it is shallower) — e.g. the node of every location.
  void ancestors_of(const std::uint64_t* indices, std::size_t n, KindMask from, std::uint32_t depth,
                    KindMask to, std::uint64_t* out) const;

  // ---- statistics of the expanded tree
  // Number of expanded elements each record stands for (product of copies on its path).
  std::vector<std::uint64_t> multiplicities() const;
  std::vector<std::pair<std::string, std::uint64_t>> counts_per_class() const;
  std::vector<std::uint64_t> counts_per_depth() const;

  // ---- generated names ("node 17", as Score-P names elements of sequence definitions)
  // Nodes and location groups are numbered per class across the whole tree in depth-first
  // order; locations per class within their location group ("thread 0" .. "thread 3").
  std::string generated_name(const std::vector<PathStep>& path) const;

 private:
  std::uint32_t intern_class(std::string_view cls);
  std::uint32_t add(std::uint32_t parent, Kind kind, std::uint32_t cls, std::uint64_t copies, Properties props);
  void require_canonical() const;
  // Count of class `cls` in one copy of each record's subtree (for generated names).
  std::vector<std::uint64_t> class_counts(std::uint32_t cls) const;
  std::vector<Placement> canonicalize_traced(detail::CanonicalTrace* trace);
  friend SystemTree fold(const SingleNodeTree&, NameMap*, KindMask);

  std::vector<std::string> classes_;
  std::vector<Record> records_;
  std::vector<std::uint64_t> hash_;
  std::vector<std::array<std::uint64_t, kKindCount>> count_;   // per copy, per kind
  std::vector<std::array<std::uint64_t, kKindCount>> prefix_;  // elements of earlier siblings
  std::uint32_t max_depth_ = 0;
  bool canonical_ = false;
};

// Converts a single-node tree to sequence records in O(n log k) (k = children per element).
// When `node_names` is given, it receives for every element whose kind is in `name_kinds`
// its all-kinds depth-first index in the folded tree and its name: the separate name map.
SystemTree fold(const SingleNodeTree& tree, NameMap* node_names = nullptr, KindMask name_kinds = kNodes);
// Expands sequence records into single elements in depth-first order, with generated names,
// or the names in `names` where it has one. Property values come from the records.
SingleNodeTree expand(const SystemTree& tree, const NameMap* names = nullptr);
// Merges two trees whose roots are the same element: children are unioned, equal subtrees add
// their copies. Order-independent: merge(a, b) == merge(b, a).
SystemTree merge(const SystemTree& a, const SystemTree& b);
// Bytes that expand(tree).serialize() would take (generated names), computed from the records
// without expanding: the single-node size of a machine too large to spell out.
std::uint64_t single_serialized_size(const SystemTree& tree);

}  // namespace cubescale::systree
