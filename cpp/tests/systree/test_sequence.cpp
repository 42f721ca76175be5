#include <gtest/gtest.h>

#include <map>
#include <random>

#include "cubescale/systree/names.hpp"
#include "cubescale/systree/sequence.hpp"
#include "cubescale/systree/shapes.hpp"

using namespace cubescale::systree;

namespace {

// A random single-node tree: nodes below nodes, processes below nodes, threads/GPU streams
// below processes, with few classes so that equal subtrees (and folding) are common.
SingleNodeTree random_tree(std::mt19937& rng, int max_elements) {
  SingleNodeTree t;
  t.add_root(Kind::Node, "machine", "m");
  std::vector<std::uint32_t> open_nodes{0}, groups;
  const char* node_classes[] = {"rack", "node"};
  const char* loc_classes[] = {"thread", "gpu_stream"};
  for (int i = 1; i < max_elements; ++i) {
    const int choice = std::uniform_int_distribution<int>(0, 9)(rng);
    if (choice < 3 || groups.empty()) {
      const auto parent = open_nodes[rng() % open_nodes.size()];
      if (choice == 0 && t.depth(parent) < 4) {
        open_nodes.push_back(t.add_child(parent, Kind::Node, node_classes[rng() % 2], "n" + std::to_string(i)));
      } else {
        groups.push_back(t.add_child(parent, Kind::LocationGroup, "process", "p" + std::to_string(i)));
      }
    } else {
      const auto parent = groups[rng() % groups.size()];
      t.add_child(parent, Kind::Location, loc_classes[rng() % 2], "t" + std::to_string(i));
    }
  }
  return t;
}

// The expanded tree as text in preorder (kind, class, depth), which must be equal for
// two trees describing the same machine in the same order.
std::string shape_of(const SingleNodeTree& t) {
  std::string s;
  for (auto n : t.preorder())
    s += std::to_string(static_cast<int>(t.kind(n))) + t.cls(n) + std::to_string(t.depth(n)) + ";";
  return s;
}

}  // namespace

TEST(Sequence, RegularJuqueenHasOneRecordPerLevel) {
  const auto tree = regular_sequence(parse_shape("juqueen"));
  EXPECT_EQ(tree.size(), 7u);
  EXPECT_EQ(tree.total(kLocationGroups), 1835008u);
  EXPECT_EQ(tree.total(kLocations), 1835008u);
  EXPECT_EQ(tree.total(kNodes), 1u + 28 + 56 + 896 + 28672);
}

TEST(Sequence, IndexOfMatchesPathOf) {
  const auto tree = figure4_sequence();
  for (KindMask mask : {kNodes, kLocationGroups, kLocations, kAllKinds}) {
    for (std::uint64_t i = 0; i < tree.total(mask); ++i) {
      const auto path = tree.path_of(i, mask);
      ASSERT_EQ(tree.index_of(path, mask), i) << "mask " << int(mask);
    }
    EXPECT_THROW(tree.path_of(tree.total(mask), mask), std::out_of_range);
  }
}

TEST(Sequence, EnumerationEqualsExpandedPreorder) {
  std::mt19937 rng(7);
  for (int round = 0; round < 50; ++round) {
    const auto single = random_tree(rng, 60);
    const auto seq = fold(single);
    const auto expanded = expand(seq);
    // Walk the expanded tree in preorder; the k-th location must have path_of(k) ending at a
    // record of the same class and at the same depth.
    std::uint64_t k = 0;
    for (auto n : expanded.preorder()) {
      if (expanded.kind(n) != Kind::Location) continue;
      const auto path = seq.path_of(k++, kLocations);
      ASSERT_EQ(seq.class_name(path.back().record), expanded.cls(n));
      ASSERT_EQ(path.size() - 1, expanded.depth(n));
    }
    ASSERT_EQ(k, seq.total(kLocations));
  }
}

TEST(Sequence, FoldThenExpandThenFoldIsStable) {
  std::mt19937 rng(11);
  for (int round = 0; round < 50; ++round) {
    const auto single = random_tree(rng, 80);
    const auto seq = fold(single);
    const auto again = fold(expand(seq));
    ASSERT_TRUE(seq == again);
    ASSERT_EQ(shape_of(expand(seq)), shape_of(expand(again)));
    ASSERT_EQ(seq.total(kAllKinds), single.size());
  }
}

TEST(Sequence, FoldIsIndependentOfSiblingOrder) {
  SingleNodeTree a, b;
  a.add_root(Kind::Node, "machine", "m");
  b.add_root(Kind::Node, "machine", "m");
  auto pa = a.add_child(0, Kind::LocationGroup, "process", "p0");
  a.add_child(pa, Kind::Location, "thread", "t");
  a.add_child(pa, Kind::Location, "gpu_stream", "g");
  auto pb = b.add_child(0, Kind::LocationGroup, "process", "p0");
  b.add_child(pb, Kind::Location, "gpu_stream", "g");
  b.add_child(pb, Kind::Location, "thread", "t");
  EXPECT_TRUE(fold(a) == fold(b));
}

TEST(Sequence, MergeAddsCopiesAndIsOrderIndependent) {
  const auto a = regular_sequence(parse_shape("node:2 process:4 thread:2"));
  const auto b = regular_sequence(parse_shape("node:3 process:4 thread:2"));
  const auto c = regular_sequence(parse_shape("node:1 process:2 thread:2"));
  const auto ab = merge(a, b);
  EXPECT_EQ(ab.size(), 4u);
  EXPECT_EQ(ab.record(1).copies, 5u);
  EXPECT_TRUE(merge(ab, c) == merge(c, merge(b, a)));
  EXPECT_EQ(merge(ab, c).size(), 7u);  // two node records now
}

TEST(Sequence, CanonicalizeReportsPlacementOfFoldedRecords) {
  SystemTree t;
  t.add_root(Kind::Node, "machine");
  const auto n0 = t.add_record(0, Kind::Node, "node", 3);
  t.add_record(n0, Kind::LocationGroup, "process", 2);
  const auto n1 = t.add_record(0, Kind::Node, "node", 5);
  t.add_record(n1, Kind::LocationGroup, "process", 2);
  const auto placement = t.canonicalize();
  EXPECT_EQ(placement[n0].record, 1u);
  EXPECT_EQ(placement[n0].first_copy, 0u);
  EXPECT_EQ(placement[n1].record, 1u);
  EXPECT_EQ(placement[n1].first_copy, 3u);  // after the three copies already there
  EXPECT_EQ(placement[n1 + 1].record, Placement::kGone);
  EXPECT_EQ(t.record(1).copies, 8u);
}

TEST(Sequence, FoldKeepsRealNamesAtTheirIndices) {
  std::mt19937 rng(3);
  for (int round = 0; round < 30; ++round) {
    const auto single = random_tree(rng, 50);
    NameMap names;
    const auto seq = fold(single, &names, kAllKinds);
    const auto back = expand(seq, &names);
    // Every original name appears exactly once, attached to an element of its class.
    std::map<std::string, std::string> original, restored;
    for (std::uint32_t i = 0; i < single.size(); ++i) original[std::string(single.name(i))] = single.cls(i);
    for (std::uint32_t i = 0; i < back.size(); ++i) restored[std::string(back.name(i))] = back.cls(i);
    ASSERT_EQ(original, restored);
    // And parents are preserved: the parent of a named element keeps its name.
    std::map<std::string, std::string> parent_a, parent_b;
    for (std::uint32_t i = 1; i < single.size(); ++i)
      parent_a[std::string(single.name(i))] = std::string(single.name(single.parent(i)));
    for (std::uint32_t i = 1; i < back.size(); ++i)
      parent_b[std::string(back.name(i))] = std::string(back.name(back.parent(i)));
    ASSERT_EQ(parent_a, parent_b);
  }
}

TEST(Sequence, GeneratedNamesFollowScorePStyle) {
  const auto tree = regular_sequence(parse_shape("node:2 process:2 thread:3"));
  const auto single = expand(tree);
  for (std::uint64_t i = 0; i < tree.total(kAllKinds); ++i)
    ASSERT_EQ(tree.generated_name(tree.path_of(i, kAllKinds)), std::string(single.name(single.preorder()[i])));
  EXPECT_EQ(tree.generated_name(tree.path_of(5, kLocations)), "thread 2");
  EXPECT_EQ(tree.generated_name(tree.path_of(3, kLocationGroups)), "process 3");
}

TEST(Sequence, SingleSizeIsComputedWithoutExpanding) {
  std::mt19937 rng(5);
  for (int round = 0; round < 30; ++round) {
    const auto seq = fold(random_tree(rng, 120));
    ASSERT_EQ(single_serialized_size(seq), expand(seq).serialize().size());
  }
  const auto f4 = figure4_sequence();
  EXPECT_EQ(single_serialized_size(f4), expand(f4).serialize().size());
}

TEST(Sequence, CountOverflowIsRejected) {
  SystemTree t;
  t.add_root(Kind::Node, "machine");
  auto a = t.add_record(0, Kind::Node, "node", std::uint64_t(1) << 40);
  t.add_record(a, Kind::LocationGroup, "process", std::uint64_t(1) << 40);
  EXPECT_THROW(t.canonicalize(), std::overflow_error);
}

TEST(Sequence, StructuralRulesAreEnforced) {
  SystemTree t;
  t.add_root(Kind::Node, "machine");
  auto p = t.add_record(0, Kind::LocationGroup, "process", 1);
  auto l = t.add_record(p, Kind::Location, "thread", 1);
  EXPECT_THROW(t.add_record(l, Kind::Location, "thread", 1), std::invalid_argument);
  EXPECT_THROW(t.add_record(p, Kind::Node, "node", 1), std::invalid_argument);
  EXPECT_THROW(t.add_record(0, Kind::Node, "node", 0), std::invalid_argument);
}

TEST(Sequence, SubtreesRootedBelowTheMachineWork) {
  // Found by fuzzing: a tree whose root is a location (or a process) has no parent to
  // number its locations within.
  SystemTree thread;
  thread.add_root(Kind::Location, "thread");
  thread.canonicalize();
  EXPECT_EQ(thread.generated_name({{0, 0}}), "thread 0");
  EXPECT_EQ(single_serialized_size(thread), expand(thread).serialize().size());

  SystemTree process;
  const auto p = process.add_root(Kind::LocationGroup, "process");
  process.add_record(p, Kind::Location, "thread", 4);
  process.add_record(p, Kind::Location, "gpu_stream", 2);
  process.canonicalize();
  EXPECT_EQ(process.generated_name(process.path_of(5, kLocations)), "thread 3");
  EXPECT_EQ(single_serialized_size(process), expand(process).serialize().size());
}
