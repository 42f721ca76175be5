#include <gtest/gtest.h>

#include "cubescale/systree/cpu_list.hpp"
#include "cubescale/systree/hwloc_levels.hpp"
#include "cubescale/systree/sequence.hpp"

using namespace cubescale::systree;

namespace {
std::vector<std::string> classes_in_preorder(const SingleNodeTree& t) {
  std::vector<std::string> out;
  for (auto n : t.preorder()) out.push_back(t.cls(n));
  return out;
}
}  // namespace

TEST(Hwloc, SingleChildRunsAreMerged) {
  // pack:2 l3:1 core:4 pu:2 — every package has exactly one L3, which merges into it.
  const auto topo = Topology::synthetic("pack:2 l3:1 core:4 pu:2");
  SingleNodeTree t;
  const auto node = t.add_root(Kind::Node, "node", "n0");
  const auto levels = add_hardware_levels(t, node, topo);
  const auto seq = fold(t);
  // node > numa > package x2 > core x4 > pu x2
  ASSERT_EQ(seq.size(), 5u);
  EXPECT_EQ(seq.class_name(2), "package");
  EXPECT_EQ(seq.record(2).copies, 2u);
  EXPECT_EQ(seq.record(2).properties.at(0).second, "package+l3cache");
  EXPECT_EQ(seq.record(4).copies, 2u);
  EXPECT_EQ(seq.total(kNodes), 1u + 1 + 2 + 8 + 16);
  EXPECT_EQ(levels.elements().size(), 1u + 2 + 8 + 16);
}

TEST(Hwloc, CoreWithOnePuBecomesOneElement) {
  const auto topo = Topology::synthetic("pack:1 core:2 pu:1");
  const auto view = local_view(topo, "h", "p", 1, "1");
  // hwloc attaches the NUMA node to the only package: package+numa is one element; a core
  // with one PU is one element, and the process bound to PU 1 hangs under core 1.
  EXPECT_EQ(classes_in_preorder(view),
            (std::vector<std::string>{"machine", "node", "package", "core", "core", "process", "thread"}));
  EXPECT_EQ(view.properties(2).at(0).second, "package+numa");
}

TEST(Hwloc, ProcessHangsUnderItsBinding) {
  const auto topo = Topology::synthetic("pack:2 core:2 pu:2");
  SingleNodeTree t;
  const auto node = t.add_root(Kind::Node, "node", "n");
  const auto levels = add_hardware_levels(t, node, topo);
  EXPECT_EQ(t.cls(levels.attach_point("0")), "pu");
  EXPECT_EQ(t.cls(levels.attach_point("0-1")), "core");
  EXPECT_EQ(t.cls(levels.attach_point("0-3")), "package");
  EXPECT_EQ(t.name(levels.attach_point("4-7")), "package 1");
  EXPECT_EQ(t.cls(levels.attach_point("3-4")), "numa");  // spans packages: the common level
  EXPECT_EQ(levels.attach_point("0-7"), node);             // bound to all: the node itself
  EXPECT_EQ(levels.attach_point(""), node);
  EXPECT_THROW(levels.attach_point("x"), std::invalid_argument);
}

TEST(Hwloc, LocalMachineLoads) {
  const auto topo = Topology::local();
  EXPECT_GE(topo.pu_count(), 1u);
  const auto view = local_view(topo, "localhost", "process 0", 2);
  const auto seq = fold(view);
  EXPECT_EQ(seq.total(kLocations), 2u);
  EXPECT_EQ(seq.total(kLocationGroups), 1u);
}

namespace {
// The PUs `cpus` names on "pack:2 l3:1 core:4 pu:2" (PUs 0-15), or the error's text.
std::string pus_of(const char* cpus) {
  static const auto topo = Topology::synthetic("pack:2 l3:1 core:4 pu:2");
  try {
    return checked_cpu_list(cpus, topo);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
}
}  // namespace

// As `hwloc-calc -i 'pack:2 l3:1 core:4 pu:2' --pi pu:LIST --intersect pu` (lists) and
// `hwloc-calc -i ... 0x3 --intersect pu` (masks) answer.
TEST(Hwloc, CpuListsAreReadAsHwlocReadsThem) {
  EXPECT_EQ(pus_of("0-1"), "0-1");
  EXPECT_EQ(pus_of("15"), "15");
  EXPECT_EQ(pus_of("0-1,5"), "0-1,5");
  EXPECT_EQ(pus_of("3-"), "3-15");
  EXPECT_EQ(pus_of("0x3"), "0-1");  // a bitmask, not PU 3
  EXPECT_EQ(pus_of("0xf0"), "4-7");
  EXPECT_EQ(pus_of("0x00000003"), "0-1");
}

// Each once placed the process under the node as if unbound, or read 0x3 as PU 3.
TEST(Hwloc, CpuListsThatNameNoPuOfTheMachineAreErrors) {
  EXPECT_EQ(pus_of("100"), "CPU list '100': PU 100 is not in this machine (PUs 0-15)");
  EXPECT_EQ(pus_of("0-1,100"), "CPU list '0-1,100': PU 100 is not in this machine (PUs 0-15)");
  EXPECT_EQ(pus_of("14-17"), "CPU list '14-17': PUs 16-17 are not in this machine (PUs 0-15)");
  EXPECT_EQ(pus_of("5-3"), "CPU list '5-3': range '5-3' is reversed (PUs 0-15)");
  EXPECT_EQ(pus_of("0,,1"), "CPU list '0,,1': an empty item (PUs 0-15)");
  EXPECT_EQ(pus_of("abc"), "CPU list 'abc': 'abc' is no PU or range (PUs 0-15)");
  EXPECT_EQ(pus_of("1 2"), "CPU list '1 2': '1 2' is no PU or range (PUs 0-15)");
  EXPECT_EQ(pus_of("0x100000"), "CPU list '0x100000': PU 20 is not in this machine (PUs 0-15)");
  EXPECT_EQ(pus_of("0x0"), "CPU list '0x0': no PU (PUs 0-15)");
  EXPECT_NE(pus_of("0xzz").find("not a hwloc bitmask"), std::string::npos);
  const auto topo = Topology::synthetic("pack:2 l3:1 core:4 pu:2");
  EXPECT_THROW(local_view(topo, "h", "p", 1, "0-1,100"), std::invalid_argument);
}
