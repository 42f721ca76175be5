// The distributed kernels, driven by the simulation, must give what the naive baseline
// (gather all views, union, fold) gives: the same tree and every rank's same indices.
#include <gtest/gtest.h>

#include <set>

#include "cubescale/common/format_error.hpp"
#include "cubescale/systree/distributed.hpp"
#include "cubescale/systree/hwloc_levels.hpp"
#include "cubescale/systree/serialize.hpp"
#include "cubescale/systree/simulate.hpp"

using namespace cubescale::systree;
using namespace cubescale::systree::distributed;

namespace {

NaiveResult naive_of(const ViewSource& source) {
  std::vector<std::string> packed;
  for (std::uint64_t r = 0; r < source.ranks(); ++r) packed.push_back(pack_view(source.view(r)));
  std::vector<std::string_view> views(packed.begin(), packed.end());
  return naive_build(views, "node", {"node"});
}

void expect_same_as_naive(const ViewSource& source) {
  const auto sim = simulate(source, true);
  const auto naive = naive_of(source);
  EXPECT_TRUE(sim.tree == naive.tree) << to_json(sim.tree, -1) << "\n" << to_json(naive.tree, -1);
  EXPECT_EQ(sim.location_offsets, naive.location_offsets);
  EXPECT_EQ(sim.location_indices, naive.location_indices);
  EXPECT_EQ(sim.location_group_index, naive.location_group_index);
  EXPECT_EQ(sim.responsible, naive.responsible);
  // Every location appears exactly once.
  std::set<std::uint64_t> seen(sim.location_indices.begin(), sim.location_indices.end());
  EXPECT_EQ(seen.size(), sim.tree.total(kLocations));
}

// Inhomogeneous: nodes differ in thread counts, and some processes have a GPU stream.
SingleNodeTree mixed_view(std::uint64_t rank) {
  SingleNodeTree t;
  const auto m = t.add_root(Kind::Node, "machine", "machine");
  const auto n = t.add_child(m, Kind::Node, "node", "host" + std::to_string(rank / 3));
  const auto p = t.add_child(n, Kind::LocationGroup, "process", "rank " + std::to_string(rank));
  const std::uint64_t threads = 1 + (rank / 3) % 2 + (rank % 5 == 0);
  for (std::uint64_t i = 0; i < threads; ++i) t.add_child(p, Kind::Location, "thread", "thread " + std::to_string(i));
  if (rank % 4 == 1) t.add_child(p, Kind::Location, "gpu_stream", "stream 0");
  return t;
}

// Hardware levels from hwloc, different topologies on different hosts, processes bound to
// different cores: the shared hardware must appear once per host.
SingleNodeTree hwloc_view(std::uint64_t rank) {
  static const Topology small = Topology::synthetic("pack:2 core:2 pu:2");
  static const Topology big = Topology::synthetic("pack:1 l3:2 core:2 pu:1");
  const auto host = rank / 3;
  const Topology& topo = host % 2 ? big : small;
  // Increasing CPUs within a host: the simulation needs block placement.
  const auto cpu = std::to_string((rank % 3) * topo.pu_count() / 3);
  return local_view(topo, "host" + std::to_string(host), "rank " + std::to_string(rank), 1 + rank % 2, cpu);
}

}  // namespace

TEST(DistributedMerge, PlacementsGiveOffsetsOfEveryInput) {
  auto payload = [](std::uint64_t threads, std::uint64_t copies) {
    Payload p;
    const auto n = p.tree.add_root(Kind::Node, "node");
    const auto proc = p.tree.add_record(n, Kind::LocationGroup, "process", copies);
    p.tree.add_record(proc, Kind::Location, "thread", threads);
    p.tree.canonicalize();
    return p;
  };
  const Payload a = payload(2, 1), b = payload(4, 1), c = payload(2, 3);
  MergeState state;
  const Payload merged = merge_payloads({&a, &b, &c}, state);
  ASSERT_EQ(merged.tree.record(0).children.size(), 2u);
  const auto starts = state.input_starts(state.result_starts({10, 5, 100}));
  // Canonical order puts the 4-thread process first (by structural hash); then a, and c's
  // three copies right after a's, as equal siblings keep their input order.
  constexpr int loc = static_cast<int>(Kind::Location), group = static_cast<int>(Kind::LocationGroup);
  EXPECT_EQ(starts[1][0][loc], 100u);
  EXPECT_EQ(starts[1][0][group], 5u);
  EXPECT_EQ(starts[0][0][loc], 104u);
  EXPECT_EQ(starts[0][0][group], 6u);
  EXPECT_EQ(starts[2][0][loc], 106u);
  EXPECT_EQ(starts[2][0][group], 7u);
  EXPECT_EQ(unpack_starts(pack_starts(starts[2])), starts[2]);
  const Payload back = Payload::unpack(merged.pack());
  EXPECT_TRUE(back.tree == merged.tree);
}

TEST(DistributedMerge, RejectsDifferentRoots) {
  Payload a, b;
  a.tree.add_root(Kind::Node, "node");
  a.tree.canonicalize();
  b.tree.add_root(Kind::Node, "rack");
  b.tree.canonicalize();
  MergeState state;
  EXPECT_THROW(merge_payloads({&a, &b}, state), std::invalid_argument);
}

TEST(DistributedView, PackUnpackRoundTrip) {
  const auto view = hwloc_view(4);
  const auto back = unpack_view(pack_view(view));
  EXPECT_EQ(back.serialize(), view.serialize());
  EXPECT_THROW(unpack_view("CSVIEW01\x05"), cubescale::FormatError);
}

TEST(DistributedSimulation, RegularMachineEqualsNaive) {
  for (const char* shape : {"node:4 process:2 thread:3", "rack:2 node:3 process:4 thread:2 gpu_stream:1",
                            "node:1 process:1 thread:1", "node:5 process:3"}) {
    SCOPED_TRACE(shape);
    expect_same_as_naive(RegularViews(parse_shape(shape)));
  }
}

TEST(DistributedSimulation, RegularMachineGivesConstantSizeTree) {
  const auto sim = simulate(RegularViews(parse_shape("rack:2 nodeboard:4 node:8 process:16 thread:4")));
  EXPECT_TRUE(sim.tree == regular_sequence(parse_shape("rack:2 nodeboard:4 node:8 process:16 thread:4")));
  EXPECT_EQ(sim.rounds, 4u);
  EXPECT_GT(sim.peak_bytes_min, 0u);
}

TEST(DistributedSimulation, InhomogeneousMachineEqualsNaive) {
  for (std::uint64_t p : {1, 2, 5, 12, 31}) {
    SCOPED_TRACE(p);
    expect_same_as_naive(FunctionViews(p, mixed_view));
  }
}

TEST(DistributedSimulation, HardwareLevelsAppearOncePerHost) {
  for (std::uint64_t p : {1, 3, 4, 9, 13}) {
    SCOPED_TRACE(p);
    expect_same_as_naive(FunctionViews(p, hwloc_view));
  }
}

TEST(DistributedSimulation, PeakBytesFlatOnRegularMachines) {
  const auto small = simulate(RegularViews(parse_shape("rack:2 midplane:2 nodeboard:3 node:4 process:8 thread:4")));
  // 16x the ranks of `small` (the 1.8M-rank runs are in benchmarks/systree_mpi.py; this test
  // also runs under ASan, which is ~100x slower).
  const auto large = simulate(RegularViews(parse_shape("rack:4 midplane:2 nodeboard:6 node:8 process:32 thread:4")));
  EXPECT_LE(large.peak_bytes_max, small.peak_bytes_max * 11 / 10);
  EXPECT_GT(large.naive_rank0_bytes, 1000 * large.peak_bytes_rank0);
}

TEST(DistributedSimulation, RejectsScatteredPlacement) {
  // Hosts 0 and 1 alternate: the ranks of a host are not consecutive.
  auto scattered = [](std::uint64_t rank) {
    SingleNodeTree t;
    const auto m = t.add_root(Kind::Node, "machine", "machine");
    const auto n = t.add_child(m, Kind::Node, "node", "host" + std::to_string(rank % 2));
    t.add_child(n, Kind::LocationGroup, "process", "rank " + std::to_string(rank));
    return t;
  };
  EXPECT_THROW(simulate(FunctionViews(4, scattered)), std::invalid_argument);
}

TEST(DistributedRank, ResponsibleIsLowestRankOfHost) {
  const auto sim = simulate(FunctionViews(9, hwloc_view), true);
  for (std::uint64_t r = 0; r < 9; ++r) EXPECT_EQ(sim.responsible[r], r % 3 == 0) << r;
}

// A rank absorbing children one by one keeps one composed merge state per round: it must
// place every input exactly where a single merge of all inputs places it.
TEST(DistributedMergeState, ComposedMergesPlaceInputsLikeOneMerge) {
  auto payload = [](std::vector<std::pair<std::string, int>> nodes) {
    SingleNodeTree t;
    const auto m = t.add_root(Kind::Node, "machine", "machine");
    for (const auto& [name, threads] : nodes) {
      const auto p = t.add_child(t.add_child(m, Kind::Node, "node", name), Kind::LocationGroup, "process", "p");
      for (int i = 0; i < threads; ++i) t.add_child(p, Kind::Location, "thread", "t");
    }
    return Payload{fold(t), {}};
  };
  // Equal subtrees across inputs (copies to share) and different ones (new records).
  const auto a = payload({{"n0", 2}, {"n1", 4}});
  const auto b = payload({{"n2", 2}});
  const auto c = payload({{"n3", 4}, {"n4", 2}, {"n5", 1}});
  MergeState all, first, second;
  const auto once = merge_payloads({&a, &b, &c}, all);
  const auto ab = merge_payloads({&a, &b}, first);
  const auto abc = merge_payloads({&ab, &c}, second);
  EXPECT_TRUE(once.tree == abc.tree);
  const auto composed = MergeState::compose(first, second);
  ASSERT_EQ(composed.inputs.size(), 3u);
  const Counts root{0, 0, 0};
  EXPECT_EQ(composed.input_starts(composed.result_starts(root)), all.input_starts(all.result_starts(root)));
  // Packed, the composed state grows by a few bytes per input, not by a whole state.
  EXPECT_LT(composed.pack().size(), first.pack().size() + second.pack().size());
  EXPECT_THROW(MergeState::compose(second, first), std::invalid_argument);
}

// Three processes of one node, driven by hand as the MPI driver does: between the passes each
// rank keeps one relative start per round it took part in, not the merge states.
TEST(DistributedRankState, SettlingKeepsOneStartPerRound) {
  const RegularViews views(parse_shape("node:1 process:3 thread:2"));
  std::vector<RankState> ranks;
  for (std::uint64_t r = 0; r < 3; ++r) ranks.emplace_back(views.view(r));
  constexpr std::uint64_t kStart = sizeof(Counts);
  // Round 2: ranks 1 and 2 are rank 0's spanning-tree children.
  const auto from1 = ranks[1].up(2, {}, false);
  const auto from2 = ranks[2].up(2, {}, false);
  ranks[0].up(2, {from1, from2}, true);
  EXPECT_GT(ranks[0].retained_bytes(), 0u);  // the composed merge state
  EXPECT_THROW(ranks[0].settle(2, ""), std::logic_error);  // before promote()
  ranks[0].promote(2);
  const auto to_children = ranks[0].settle(2, "");
  ASSERT_EQ(to_children.size(), 2u);
  EXPECT_EQ(ranks[0].retained_bytes(), kStart);
  EXPECT_THROW(ranks[0].settle(2, ""), std::logic_error);  // settled already
  EXPECT_TRUE(ranks[1].settle(2, to_children[0]).empty());
  EXPECT_TRUE(ranks[2].settle(2, to_children[1]).empty());
  EXPECT_EQ(ranks[1].retained_bytes(), kStart);
  EXPECT_EQ(ranks[2].retained_bytes(), kStart);
  // Round 1: rank 0 alone under the machine.
  EXPECT_THROW(ranks[0].down(1, ""), std::logic_error);  // round 1 not taken part in yet
  ranks[0].up(1, {}, true);
  ranks[0].promote(1);
  EXPECT_TRUE(ranks[0].settle(1, "").empty());
  EXPECT_EQ(ranks[0].retained_bytes(), 2 * kStart);
  // Down pass: the node's global start reaches both children.
  EXPECT_TRUE(ranks[0].down(1, "").empty());
  const auto starts = ranks[0].down(2, "");
  ASSERT_EQ(starts.size(), 2u);
  EXPECT_EQ(starts[0], starts[1]);
  EXPECT_THROW(ranks[1].down(2, pack_starts({Counts{}, Counts{}})), std::invalid_argument);
  ranks[1].down(2, starts[0]);
  ranks[2].down(2, starts[1]);
  for (std::uint64_t r = 0; r < 3; ++r) {
    EXPECT_EQ(ranks[r].retained_bytes(), 0u);
    EXPECT_EQ(ranks[r].location_indices(), (std::vector<std::uint64_t>{2 * r, 2 * r + 1}));
    EXPECT_EQ(ranks[r].location_group_index(), r);
  }
  EXPECT_TRUE(ranks[0].global_tree() == regular_sequence(parse_shape("node:1 process:3 thread:2")));
}
