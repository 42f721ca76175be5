#pragma once
// Unification of local definitions into global ones as a reduction over a spanning tree
// (paper 002, section 4.3), never a loop over ranks on one rank. No MPI here: a driver moves
// the byte strings (python/cubescale/parallel/unify.py, or the in-process simulation).
//
// Up pass: a rank turns its profile into a canonical DefinitionSet, merges its children's sets
// into it as they arrive (keeping, per input, the map from the input's ids to the merged ids)
// and sends the merged set to its parent. The root's set is the global definitions: the same
// for every number of ranks and every placement of the profiles (definition_set.hpp).
// Down pass: each rank receives the map from the set it sent to global ids and sends each
// child the map for the child's set, composed through its own merge; so a rank receives only
// maps of the size of its subtree's definitions, and ends with its local -> global maps:
// metrics, call paths, and each local call path's row position in both row enumerations of
// the CUBE4 data members (EXCLUSIVE: preorder; INCLUSIVE: "wide" order).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cubescale/profile/definition_set.hpp"
#include "cubescale/profile/local_profile.hpp"

namespace cubescale::profile {

struct UnifyStats {
  std::uint64_t peak_bytes = 0;  // packed sets and maps held at once
  std::uint64_t messages_sent = 0, messages_received = 0;
  std::uint64_t bytes_sent = 0, bytes_received = 0;
};

class UnifyState {
 public:
  explicit UnifyState(const LocalProfile& profile);

  // Up pass: absorb() each child's set in rank order, then end_up(): the packed merged set for
  // the parent (non-root), or "" at the root, which keeps it as the global definitions.
  void absorb(std::string_view child_set);
  std::string end_up(bool is_root);
  // Down pass: `from_parent` is the packed map of the set this rank sent ("" at the root).
  // Returns one message per child, in the order of absorb().
  std::vector<std::string> down(std::string_view from_parent);

  // Root only, after end_up: the global definitions (canonical set).
  const DefinitionSet& global() const;
  bool is_root() const { return root_; }
  // After down(): this rank's local ids in global terms.
  const std::vector<std::uint32_t>& metric_map() const { return local_metric_; }
  const std::vector<std::uint32_t>& cnode_map() const { return local_cnode_; }       // global preorder index
  const std::vector<std::uint32_t>& cnode_wide_position() const { return local_wide_; }
  const UnifyStats& stats() const { return stats_; }

 private:
  struct Maps {  // of one set into global ids
    std::vector<std::uint32_t> metrics, cnodes, wide;
  };
  static std::string pack_maps(const Maps& maps);
  static Maps unpack_maps(std::string_view bytes);
  void hold(std::uint64_t bytes);

  IdMaps local_to_set_;
  DefinitionSet merged_;
  // Per input (own set first, then each child): its ids -> merged_'s ids.
  std::vector<IdMaps> inputs_;
  bool ended_ = false, root_ = false, down_done_ = false;
  std::uint64_t held_ = 0;
  std::vector<std::uint32_t> local_metric_, local_cnode_, local_wide_;
  UnifyStats stats_;
};

// The whole unification for P profiles in one process, along the same spanning tree: global
// definitions and, per profile, its local -> global maps (tests, simulation, benchmarks).
struct UnifiedInProcess {
  DefinitionSet global;
  std::vector<std::vector<std::uint32_t>> metric_maps, cnode_maps, wide_positions;
  std::uint32_t rounds = 0;  // levels of the spanning tree
  // The up and down passes' critical path with one core per rank: the longest chain of
  // merges (and map compositions) from a leaf to the root and back, messages not counted.
  double critical_path_seconds = 0, total_seconds = 0;
  std::uint64_t max_bytes_received = 0;  // by any one rank
};
UnifiedInProcess unify_in_process(const std::vector<const LocalProfile*>& profiles);

}  // namespace cubescale::profile
