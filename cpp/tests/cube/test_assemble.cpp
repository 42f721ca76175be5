// Definitions assembled from parts: preorder and nesting are checked, the system tree is taken
// in preorder with the reader's bookkeeping, and the result writes and reads back.
#include <gtest/gtest.h>

#include "cubescale/cube/assemble.hpp"
#include "cubescale/cube/dtype.hpp"

using namespace cubescale::cube;
using cubescale::systree::Kind;
using cubescale::systree::SingleNodeTree;

namespace {

Metric metric(const char* name, std::uint32_t parent = kNoParent) {
  Metric m;
  m.uniq_name = name;
  m.dtype = *parse_data_type("DOUBLE");
  m.parent = parent;
  return m;
}

SingleNodeTree two_nodes_out_of_order() {
  SingleNodeTree t;
  const auto m = t.add_root(Kind::Node, "machine", "m");
  const auto a = t.add_child(m, Kind::Node, "node", "a");
  const auto b = t.add_child(m, Kind::Node, "node", "b");
  const auto pb = t.add_child(b, Kind::LocationGroup, "process", "p1");
  const auto pa = t.add_child(a, Kind::LocationGroup, "process", "p0");
  t.add_child(pb, Kind::Location, "thread", "t1");
  t.add_child(pa, Kind::Location, "thread", "t0a");
  t.add_child(pa, Kind::Location, "thread", "t0b");
  return t;
}

}  // namespace

TEST(Assemble, TakesTheSystemTreeInPreorder) {
  CallTreeParts calls{{kNoParent, 0, 1, 0}, {0, 1, 1, 1}, {}};
  const auto d = assemble_definitions({metric("time"), metric("mpi", 0)}, {Region{}, Region{}}, calls,
                                      two_nodes_out_of_order());
  ASSERT_EQ(d.locations.size(), 3u);
  EXPECT_EQ(d.system.name(d.locations[0]), "t0a");
  EXPECT_EQ(d.system.name(d.locations[2]), "t1");
  EXPECT_EQ(d.location_rank, (std::vector<std::int64_t>{0, 1, 0}));
  EXPECT_EQ(d.group_rank, (std::vector<std::int64_t>{0, 1}));
  EXPECT_EQ(d.location_file_id, (std::vector<std::uint64_t>{0, 1, 2}));
  EXPECT_EQ(d.cnodes[2].parent, 1u);
  EXPECT_EQ(d.regions[1].file_id, 1u);
}

TEST(Assemble, RejectsTreesOutOfPreorder) {
  // cnode 3's parent 1 was closed when root 2 began.
  CallTreeParts calls{{kNoParent, 0, kNoParent, 1}, {0, 0, 0, 0}, {}};
  EXPECT_THROW(assemble_definitions({metric("time")}, {Region{}}, calls, two_nodes_out_of_order()),
               std::invalid_argument);
  CallTreeParts fine{{kNoParent}, {0}, {}};
  EXPECT_THROW(assemble_definitions({metric("a"), metric("b", 1)}, {Region{}}, fine, two_nodes_out_of_order()),
               std::invalid_argument);
  EXPECT_THROW(assemble_definitions({metric("a")}, {}, fine, two_nodes_out_of_order()), std::invalid_argument);
}

TEST(Assemble, RejectsSystemTreesCubeCannotExpress) {
  SingleNodeTree t;
  t.add_child(t.add_root(Kind::Node, "machine", "m"), Kind::Location, "thread", "orphan");
  CallTreeParts calls{{kNoParent}, {0}, {}};
  EXPECT_THROW(assemble_definitions({metric("a")}, {Region{}}, calls, t), std::invalid_argument);
  SingleNodeTree no_threads;
  no_threads.add_root(Kind::Node, "machine", "m");
  EXPECT_THROW(assemble_definitions({metric("a")}, {Region{}}, calls, no_threads), std::invalid_argument);
}
