#pragma once
// Kernels of the distributed construction of sequence definitions (paper 000, section 4).
// No MPI here: a driver (mpi4py in python/cubescale/parallel, or the simulation in
// simulate.hpp) moves the byte strings these kernels produce between ranks.
//
// The algorithm, for one rank:
// * Its local view is a single-node path machine > ... > node > (hardware) > process >
//   threads; the elements from the root to the process are its *spine*. Elements off the
//   spine (hardware the process does not run on) are shared with the other ranks of the host.
// * Round d (d = deepest depth .. 1): the ranks holding a depth-d element form one group per
//   parent element N (the driver splits by a hash of N's name path and checks the names).
//   Each sends a *payload* - a sequence tree rooted at N with its element below - and the
//   group merges them along a binary spanning tree to its first rank. That rank completes N
//   with N's children that no process runs below (from its own view: identical on a host)
//   and holds N in round d-1. Every element is therefore contributed exactly once.
// * Settling, right after round d: offsets *relative to N's start* flow back down the group's
//   spanning tree, and each member keeps only where its element starts inside N (one Counts)
//   instead of the merge states. So between the passes every rank holds one Counts per round
//   it took part in, whatever the size of its groups.
// * Down pass: N's global start flows back along the same edges (one Counts per message);
//   a member's element starts at N's start plus its relative start, and its locations at
//   that plus their index inside its own process subtree.
// The first rank of a group is the lowest rank below N, so the rank holding a host's node
// element is the lowest rank on the host: the one responsible for its shared hardware (004).
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cubescale/collective/spanning_tree.hpp"
#include "cubescale/systree/names.hpp"
#include "cubescale/systree/sequence.hpp"
#include "cubescale/systree/single.hpp"

namespace cubescale::systree::distributed {

// Elements of each kind (indexed by Kind) before an element, or in one copy of a subtree.
using Counts = std::array<std::uint64_t, kKindCount>;

// An element's identity: the names on its path from the root, each length-prefixed.
std::string name_path(const SingleNodeTree& view, std::uint32_t element);
// FNV-1a over an encoded name path: the same value on every machine.
std::uint64_t hash_name_path(std::string_view path);

// The spanning tree of every round's group (collective/spanning_tree.hpp): merging own,
// left, right keeps rank order, which makes equal siblings take their copies in rank order,
// as a sequential fold would.
using collective::TreeLinks;
using collective::binary_tree_links;

// What a group member sends up: a tree rooted at the group's element N holding the members'
// children of N, and the names of those children that have siblings in the views (so that
// the group's first rank knows which of N's hardware children are already there).
struct Payload {
  SystemTree tree;
  std::vector<std::string> held;  // sorted, unique

  std::string pack() const;
  static Payload unpack(std::string_view bytes);
};

// How one merge placed its inputs' top-level records (the children of N) in the result:
// kept until the round is settled, so that offsets can be sent back without the trees.
class MergeState {
 public:
  struct Slot {
    std::uint32_t position;   // index among the result's top-level records
    std::uint64_t first_copy; // first copy of that record the input's record occupies
  };
  std::vector<std::vector<Slot>> inputs;  // per input, per top-level record of that input
  std::vector<Counts> per_copy;           // per top-level record of the result: one copy's elements
  std::vector<std::uint64_t> copies;      // per top-level record of the result
  Kind root_kind = Kind::Node;

  // Start offsets of the result's top-level records (copy 0) when its root starts at `root`.
  std::vector<Counts> result_starts(const Counts& root) const;
  // Start offsets of every input's top-level records from the result's.
  std::vector<std::vector<Counts>> input_starts(const std::vector<Counts>& result) const;
  // Until its round is settled a rank keeps the round's state packed (varints): on a
  // regular machine a dozen bytes.
  std::string pack() const;
  // One state for two merges in a row, where `latest` took the result of `earlier` as its
  // input 0: the inputs of `earlier`, then the other inputs of `latest`, all placed in the
  // result of `latest`. A rank that absorbs its children one by one keeps one state per
  // round this way, growing by one input (a few bytes) per child instead of a whole state.
  static MergeState compose(const MergeState& earlier, const MergeState& latest);
  static MergeState unpack(std::string_view bytes);
};

// Merges payloads rooted at the same element (inputs[0] first: equal siblings take their
// copies in input order). Throws std::invalid_argument if the roots differ.
Payload merge_payloads(const std::vector<const Payload*>& inputs, MergeState& state);

std::string pack_starts(const std::vector<Counts>& starts);
std::vector<Counts> unpack_starts(std::string_view bytes);

// Cost of one rank's part of the algorithm: the algorithm's own data only (payloads,
// merge states, relative starts, offsets; not the input view, not MPI's communicators),
// and the point-to-point traffic of the up, settle and down passes.
struct RankStats {
  std::uint64_t peak_bytes = 0;
  std::uint64_t messages_sent = 0, messages_received = 0;
  std::uint64_t bytes_sent = 0, bytes_received = 0;
  std::uint32_t rounds = 0;  // rounds it took part in
};

// One rank's state machine. The driver calls, for d = deepest .. 1, on the ranks that hold a
// depth-d element (holds() == d): the up pass (begin_up, absorb, end_up) in every group
// member, promote(d) in the group's first rank, then settle(d, ...) in every member, parents
// before children; after the last round, for d = 1 .. deepest down(d, ...) on the ranks that
// took part in round d, parents before children.
class RankState {
 public:
  // `host_class`: class of the element whose holder is responsible for the shared hardware.
  explicit RankState(SingleNodeTree view, std::string host_class = "node");

  std::uint32_t process_depth() const { return process_depth_; }
  // Depth of the element this rank holds now (process_depth() before the first round).
  std::uint32_t holds() const { return holds_; }
  // Identity of this rank's group in round d: the name path of its depth d-1 element.
  std::string group_key(std::uint32_t round) const;

  // Up pass, round d: begin_up(d), absorb() each binary-tree child's payload as it arrives
  // (in rank order: one received payload at a time is held), then end_up(), which returns
  // the merged payload that a group member sends to its parent; a group root keeps it for
  // promote().
  void begin_up(std::uint32_t round);
  void absorb(std::string_view child_payload);
  std::string end_up(bool is_group_root);
  // The three in one, for drivers that have all children's payloads at hand.
  std::string up(std::uint32_t round, const std::vector<std::string>& children, bool is_group_root);
  // Group root: adds the children of its depth d-1 element that nobody holds and holds that
  // element from now on.
  void promote(std::uint32_t round);

  // Settling round d, right after its up pass (and promote): `from_parent` holds the packed
  // offsets of the payload it sent, relative to the start of the group's element (empty for
  // the group root). Keeps where its own element starts inside the group's element, drops
  // the round's merge states, and returns the packed relative offsets for each child, in
  // the order of absorb().
  std::vector<std::string> settle(std::uint32_t round, std::string_view from_parent);
  // Down pass, after the last round: `from_parent` holds the packed global start of the
  // group's element (empty for the group root, which knows it from round d-1). Returns the
  // message for each child (that same start).
  std::vector<std::string> down(std::uint32_t round, std::string_view from_parent);
  // The effect on stats() of settling the round it was absorbed in and of the down pass,
  // without their values (message sizes do not depend on them): lets a simulation drop a
  // rank as soon as its up pass is over.
  void account_down_pass();
  // Whether this rank took part in round d.
  bool took_part(std::uint32_t round) const;

  // Results, after the down pass.
  // The global tree: only on the rank that promoted in round 1.
  const SystemTree& global_tree() const;
  bool holds_root() const { return holds_ == 0 && root_tree_.has_value(); }
  // Global indices of its locations, in the order of a preorder walk of its view.
  std::vector<std::uint64_t> location_indices() const;
  std::uint64_t location_group_index() const;
  // Global (all-kinds) start of the spine element at `depth`.
  Counts element_start(std::uint32_t depth) const;
  // True on the lowest rank of its host: it holds the host element (of class host_class).
  bool responsible() const;
  std::uint32_t host_depth() const { return host_depth_; }
  // (all-kinds index, name) of the spine elements it holds and of its locations, for those
  // whose class is in `classes`.
  std::vector<std::pair<std::uint64_t, std::string>> held_names(const std::vector<std::string>& classes) const;

  const RankStats& stats() const { return stats_; }
  // Bytes kept between the passes right now: merge states of a round not settled yet, and
  // one Counts per settled round.
  std::uint64_t retained_bytes() const { return retained_; }

 private:
  struct Round {
    std::string merges;                     // packed: all merges of the round composed (own, children...)
    std::string completion;                 // packed; group root with unheld children only
    Counts within{};                        // after settle(): its element's start inside N's
    std::uint32_t children = 0;             // spanning-tree children absorbed
    bool group_root = false;
    bool took_part = false;
    bool settled = false;                   // merge states replaced by `within`
    bool done = false;                      // down pass over
  };
  static constexpr std::uint64_t kWithinBytes = sizeof(Counts);
  static std::uint64_t round_bytes(const Round& r);
  std::size_t result_records(const Round& r) const;
  void release_merges(Round& r);
  void count_settle(Round& r, std::uint64_t in, std::uint64_t out);
  void count_down(Round& r, std::uint64_t in, std::uint64_t message);
  std::vector<Counts> group_root_starts(std::uint32_t round, const Round& r) const;
  Payload initial_payload() const;
  Payload completion_payload(std::uint32_t depth, const std::vector<std::string>& held) const;
  Payload promoted_payload(const Payload& merged_at) const;
  std::vector<std::string> held_entry(std::uint32_t depth) const;
  void observe(std::uint64_t transient);

  SingleNodeTree view_;
  std::vector<std::uint32_t> spine_;       // element ids, root first, process last
  std::uint32_t process_depth_ = 0;
  std::uint32_t host_depth_ = 0;
  std::uint32_t holds_ = 0;
  SystemTree process_tree_;              // the folded process subtree
  std::vector<std::uint64_t> local_locations_;  // per location of the view: index in process_tree_
  std::optional<Payload> payload_;         // what it sends or merges in the current round
  std::uint32_t round_ = 0;                // round under way in the up pass
  std::vector<Round> rounds_;              // indexed by round
  std::vector<std::optional<Counts>> starts_;  // per spine depth, after the down pass
  std::optional<SystemTree> root_tree_;
  RankStats stats_;
  std::uint64_t retained_ = 0;
};

// ---- host names, streamed in index order with bounded memory

// Merges two name chunks (NameMap byte streams, indices ascending and distinct) and keeps the
// `limit` smallest indices: the reduction that brings the next chunk of names to rank 0.
std::string merge_name_chunks(std::string_view a, std::string_view b, std::size_t limit);
// The first `limit` entries (sorted by index) with an index above `after` (all when unset),
// as a name stream.
std::string name_chunk_after(const std::vector<std::pair<std::uint64_t, std::string>>& entries,
                             std::optional<std::uint64_t> after, std::size_t limit);

// ---- the naive baseline: gather every view to one rank and fold there

// Compact byte form of a single-node view (preorder: parent, kind, class, name, properties).
std::string pack_view(const SingleNodeTree& view);
SingleNodeTree unpack_view(std::string_view bytes);

struct NaiveResult {
  SystemTree tree;
  std::vector<std::uint64_t> location_offsets;  // per rank: begin in location_indices (size ranks+1)
  std::vector<std::uint64_t> location_indices;  // each rank's locations, in its view's preorder
  std::vector<std::uint64_t> location_group_index;  // per rank
  std::vector<std::uint8_t> responsible;        // per rank: lowest rank of its host element
  NameMap names;                                // all-kinds index -> name, for classes asked
  std::uint64_t peak_bytes = 0;                 // gathered views + union tree + folded tree
};
// Unions the views by name path in rank order (so equal siblings are ordered by their lowest
// rank) and folds the union.
NaiveResult naive_build(const std::vector<std::string_view>& packed_views, const std::string& host_class,
                        const std::vector<std::string>& name_classes);

}  // namespace cubescale::systree::distributed
