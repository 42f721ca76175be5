#include <gtest/gtest.h>

#include <map>
#include <tuple>

#include "cubescale/cube/sequence_form.hpp"
#include "cubescale/systree/sequence.hpp"

using namespace cubescale;
using systree::Kind;
using systree::SingleNodeTree;

namespace {

// machine > 3 nodes; nodes 0 and 2 hold 2 processes x 2 threads, node 1 holds 1 process x 2
// threads (another shape); an empty node 3 (no locations: no record).
SingleNodeTree small_machine(bool empty_node = true) {
  SingleNodeTree t;
  t.add_root(Kind::Node, "machine", "m");
  for (int node = 0; node < (empty_node ? 4 : 3); ++node) {
    const auto n = t.add_child(0, Kind::Node, "node", "n" + std::to_string(node));
    const int processes = node == 1 ? 1 : node == 3 ? 0 : 2;
    for (int p = 0; p < processes; ++p) {
      const auto g = t.add_child(n, Kind::LocationGroup, "process", "p");
      for (int th = 0; th < 2; ++th) t.add_child(g, Kind::Location, "thread", "t");
    }
  }
  return t;
}

using Shapes = std::map<std::tuple<std::uint32_t, std::string, std::uint64_t>, int>;
Shapes::key_type key(std::uint64_t depth, const std::string& cls, std::uint64_t copies) {
  return {static_cast<std::uint32_t>(depth), cls, copies};
}

// (depth, class, copies) -> how many records, from the core's canonical fold
Shapes folded(const SingleNodeTree& t) {
  Shapes out;
  const auto tree = systree::fold(t);
  for (std::uint32_t r = 0; r < tree.size(); ++r) ++out[key(tree.record(r).depth, tree.class_name(r), tree.record(r).copies)];
  return out;
}

}  // namespace

TEST(SequenceForm, RecordsAndElementsOfASmallMachine) {
  const auto t = small_machine();
  const auto f = cube::sequence_form(t);
  // machine; node x2 (2 processes), node x1 (1 process); process x2, process x1; thread x2 twice
  ASSERT_EQ(f.parent.size(), 7u);
  EXPECT_EQ(f.parent[0], -1);
  EXPECT_EQ(f.cls[1], "node");
  EXPECT_EQ(f.copies[1], 2u);  // nodes 0 and 2: first instance first
  EXPECT_EQ(f.copies[2], 1u);
  EXPECT_EQ(f.instances[3], 4u);  // the processes of nodes 0 and 2
  EXPECT_EQ(f.copies[3], 2u);
  EXPECT_EQ(f.instances[5], 8u);  // their threads
  EXPECT_EQ(f.copies[5], 2u);
  EXPECT_EQ(f.instances[6], 2u);  // the threads of node 1's process
  std::uint64_t elements = 0;
  for (auto r : f.record_of) elements += r >= 0;
  EXPECT_EQ(elements, 1u + 3u + 5u + 10u);  // the empty node has no record
  ASSERT_EQ(f.elements.size(), elements);
  EXPECT_EQ(f.depth_start, (std::vector<std::uint64_t>{0, 1, 4, 9, 19}));
  for (std::size_t d = 0; d + 1 < f.depth_start.size(); ++d)
    for (auto i = f.depth_start[d]; i < f.depth_start[d + 1]; ++i) {
      EXPECT_EQ(t.depth(f.elements[i]), d);
      if (i > f.depth_start[d]) EXPECT_LT(f.elements[i - 1], f.elements[i]);
    }
  EXPECT_EQ(f.record_of[t.children(0).back()], -1);
  // every element's record has the element's class and depth, and its parent's record as parent
  for (std::uint32_t e = 1; e < t.size(); ++e) {
    if (f.record_of[e] < 0) continue;
    const auto r = static_cast<std::size_t>(f.record_of[e]);
    EXPECT_EQ(f.cls[r], t.cls(e));
    EXPECT_EQ(f.depth[r], t.depth(e));
    EXPECT_EQ(f.parent[r], f.record_of[t.parent(e)]);
  }
}

TEST(SequenceForm, SameRecordsAsTheCoresFold) {
  for (const char* shape : {"node:4 process:3 thread:2", "rack:2 node:3 process:2 thread:1"}) {
    SingleNodeTree t;
    t.add_root(Kind::Node, "machine", "m");
    // expand the shape by hand: a regular machine folds into one record per level
    std::vector<std::uint32_t> level{0};
    std::string spec = shape;
    for (std::size_t at = 0; at < spec.size();) {
      const auto end = std::min(spec.find(' ', at), spec.size());
      const auto item = spec.substr(at, end - at);
      const auto colon = item.find(':');
      const auto cls = item.substr(0, colon);
      const int count = std::stoi(item.substr(colon + 1));
      const Kind kind = systree::kind_of_class(cls);
      std::vector<std::uint32_t> next;
      for (auto p : level)
        for (int i = 0; i < count; ++i) next.push_back(t.add_child(p, kind, cls, cls + std::to_string(i)));
      level = next;
      at = end + 1;
    }
    const auto f = cube::sequence_form(t);
    Shapes ours;
    for (std::size_t r = 0; r < f.parent.size(); ++r) ++ours[key(f.depth[r], f.cls[r], f.copies[r])];
    EXPECT_EQ(ours, folded(t)) << shape;
  }
  const auto t = small_machine(false);  // two shapes of node (the core's fold keeps empty nodes: we do not)
  const auto f = cube::sequence_form(t);
  Shapes ours;
  for (std::size_t r = 0; r < f.parent.size(); ++r) ++ours[key(f.depth[r], f.cls[r], f.copies[r])];
  EXPECT_EQ(ours, folded(t));
}

TEST(SequenceForm, EmptyTree) {
  SingleNodeTree t;
  EXPECT_TRUE(cube::sequence_form(t).parent.empty());
}
