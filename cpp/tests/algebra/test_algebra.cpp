// Report algebra: unification of definitions, diff / merge / mean / min / max and cut, on
// small reports built here (values checked by hand) and on the shared real reports.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include "cubescale/algebra/combine.hpp"
#include "cubescale/algebra/cut.hpp"
#include "cubescale/algebra/unify.hpp"
#include "cubescale/cube/aggregate.hpp"
#include "cubescale/cube/assemble.hpp"
#include "cubescale/cube/reader.hpp"
#include "cubescale/cube/writer.hpp"

using namespace cubescale;
using namespace cubescale::algebra;
using cube::kNoParent;

namespace {

std::string shared(const std::string& name) { return std::string(CUBESCALE_SHARED_DATA) + "/cubex/" + name; }

cube::Metric metric(const std::string& name, const char* dtype, cube::MetricKind kind, std::uint32_t parent = kNoParent) {
  cube::Metric m;
  m.uniq_name = m.disp_name = name;
  m.dtype = *cube::parse_data_type(dtype);
  m.kind = kind;
  m.parent = parent;
  return m;
}

cube::Region region(const std::string& name) {
  cube::Region r;
  r.name = name;
  r.mod = "app.c";
  return r;
}

// One machine, `processes` processes of `threads` threads.
systree::SingleNodeTree machine(int processes, int threads) {
  systree::SingleNodeTree t;
  const auto m = t.add_root(systree::Kind::Node, "machine", "m");
  const auto n = t.add_child(m, systree::Kind::Node, "node", "n");
  for (int p = 0; p < processes; ++p) {
    const auto g = t.add_child(n, systree::Kind::LocationGroup, "process", "rank " + std::to_string(p));
    for (int k = 0; k < threads; ++k) t.add_child(g, systree::Kind::Location, "thread", "thread " + std::to_string(k));
  }
  return t;
}

// main -> {children...}; metrics time (DOUBLE, exclusive) and visits (UINT64, inclusive).
std::shared_ptr<cube::Report> report(const std::vector<std::string>& children, int processes, int threads, double scale) {
  std::vector<cube::Region> regions{region("main")};
  cube::CallTreeParts calls;
  calls.parents = {kNoParent};
  calls.regions = {0};
  for (const auto& c : children) {
    regions.push_back(region(c));
    calls.parents.push_back(0);
    calls.regions.push_back(static_cast<std::uint32_t>(regions.size() - 1));
  }
  auto defs = cube::assemble_definitions(
      {metric("time", "DOUBLE", cube::MetricKind::Exclusive), metric("visits", "UINT64", cube::MetricKind::Inclusive)},
      regions, calls, machine(processes, threads));
  auto r = std::make_shared<cube::Report>(std::move(defs));
  const auto cnodes = r->cnode_count(), locations = r->location_count();
  cube::Severity time(*cube::parse_data_type("DOUBLE"), cnodes, locations);
  cube::Severity visits(*cube::parse_data_type("UINT64"), cnodes, locations);
  for (std::size_t c = 0; c < cnodes; ++c) {
    for (std::size_t l = 0; l < locations; ++l) {
      reinterpret_cast<double*>(time.row(c))[l] = scale * static_cast<double>(1 + c + 10 * l);
      reinterpret_cast<std::uint64_t*>(visits.row(c))[l] = (c == 0 ? children.size() + 1 : 1) * (l + 1);
    }
  }
  time.mark_nonzero_rows();
  visits.mark_nonzero_rows();
  r->set_values(0, std::move(time));
  r->set_values(1, std::move(visits));
  return r;
}

template <class T>
T at(const cube::Severity& s, std::size_t c, std::size_t l) {
  T v;
  std::memcpy(&v, s.row(c) + l * sizeof(T), sizeof(T));
  return v;
}

std::string region_of(const cube::Report& r, std::size_t c) {
  return r.definitions().regions[r.definitions().cnodes[c].region].name;
}

}  // namespace

TEST(AlgebraUnify, ReportWithItselfIsIdentity) {
  const auto a = cube::open_cubex(shared("bt-mz.B.8x4.cubex"));
  const auto u = unify({&a->definitions(), &a->definitions()});
  EXPECT_FALSE(u.collapsed);
  EXPECT_EQ(u.defs.cnodes.size(), a->cnode_count());
  EXPECT_EQ(u.defs.metrics.size(), a->metric_count());
  EXPECT_EQ(u.defs.locations.size(), a->location_count());
  for (const auto& map : u.inputs) {
    for (std::uint32_t c = 0; c < map.cnodes.size(); ++c) ASSERT_EQ(map.cnodes[c], c);
    for (std::uint32_t m = 0; m < map.metrics.size(); ++m) ASSERT_EQ(map.metrics[m], m);
    EXPECT_TRUE(map.identity_locations);
  }
}

TEST(AlgebraUnify, CallTreesUniteAndKeepFirstOrder) {
  const auto a = report({"foo", "bar"}, 1, 2, 1), b = report({"baz", "foo"}, 1, 2, 1);
  const auto u = unify({&a->definitions(), &b->definitions()});
  ASSERT_EQ(u.defs.cnodes.size(), 4u);  // main, foo, bar, baz
  const auto name = [&](std::size_t c) { return u.defs.regions[u.defs.cnodes[c].region].name; };
  EXPECT_EQ(name(0), "main");
  EXPECT_EQ(name(1), "foo");
  EXPECT_EQ(name(2), "bar");
  EXPECT_EQ(name(3), "baz");
  EXPECT_EQ(u.inputs[1].cnodes, (std::vector<std::uint32_t>{0, 3, 1}));
}

TEST(AlgebraUnify, MetricUnderAnotherParentKeepsTheFirstInputsPlace) {
  auto regions = std::vector<cube::Region>{region("main")};
  cube::CallTreeParts calls{{kNoParent}, {0}, {}};
  auto d1 = cube::assemble_definitions({metric("time", "DOUBLE", cube::MetricKind::Exclusive),
                                        metric("mpi", "DOUBLE", cube::MetricKind::Exclusive, 0)},
                                       regions, calls, machine(1, 1));
  auto d2 = cube::assemble_definitions({metric("other", "DOUBLE", cube::MetricKind::Exclusive),
                                        metric("mpi", "DOUBLE", cube::MetricKind::Exclusive, 0)},
                                       regions, calls, machine(1, 1));
  const auto u = unify({&d1, &d2});  // one mpi, below time as in the first input
  ASSERT_EQ(u.defs.metrics.size(), 3u);
  EXPECT_EQ(u.defs.metrics[1].uniq_name, "mpi");
  EXPECT_EQ(u.defs.metrics[1].parent, 0u);
  EXPECT_EQ(u.defs.metrics[2].uniq_name, "other");
  EXPECT_EQ(u.inputs[1].metrics, (std::vector<std::uint32_t>{2, 1}));
}

TEST(AlgebraUnify, TopologiesFollowTheirLocationsFirstOfANameWinsProcessCoordinatesGo) {
  // a: 2 processes x 2 threads, b: 3 processes x 1 thread, collapsed: locations are (rank,
  // thread) 0:(0,0) 1:(0,1) 2:(1,0) 3:(1,1) 4:(2,0). a's "grid" stays (b's has that name too),
  // b's "line" comes with its coordinates renamed, a's "groups" (lgId coordinates) goes.
  auto a = report({"foo"}, 2, 2, 1)->definitions(), b = report({"foo"}, 3, 1, 1)->definitions();
  a.topologies_xml = "\n<cart name=\"grid\" ndims=\"1\">\n<dim name=\"x\" size=\"2\" periodic=\"false\"/>\n"
                     "<coord locId=\"2\">0</coord>\n<coord locId=\"3\">1</coord>\n</cart>\n"
                     "<cart name=\"groups\" ndims=\"1\">\n<dim name=\"x\" size=\"1\" periodic=\"false\"/>\n"
                     "<coord lgId=\"0\">0</coord>\n</cart>\n";
  b.topologies_xml = "<cart name=\"grid\" ndims=\"1\"><dim name=\"x\" size=\"9\" periodic=\"false\"/>"
                     "<coord locId=\"0\">0</coord></cart>"
                     "<cart name=\"line\" ndims=\"1\"><dim name=\"x\" size=\"3\" periodic=\"false\"/>"
                     "<coord locId=\"1\">0</coord><coord locId=\"2\">1</coord></cart>";
  const auto u = unify({&a, &b});
  ASSERT_TRUE(u.collapsed);
  EXPECT_EQ(u.defs.topologies_xml,
            "<cart name=\"grid\" ndims=\"1\">\n<dim name=\"x\" size=\"2\" periodic=\"false\"/>\n"
            "<coord locId=\"2\">0</coord>\n<coord locId=\"3\">1</coord>\n</cart>\n"
            "<cart name=\"line\" ndims=\"1\"><dim name=\"x\" size=\"3\" periodic=\"false\"/>"
            "<coord locId=\"2\">0</coord><coord locId=\"4\">1</coord></cart>\n");
}

TEST(AlgebraUnify, DifferentLayoutsCollapseToProcessesOrFail) {
  const auto a = report({"foo"}, 4, 2, 1), b = report({"foo"}, 2, 3, 1);
  EXPECT_THROW(unify({&a->definitions(), &b->definitions()}, SystemMatch::Same), std::invalid_argument);
  const auto u = unify({&a->definitions(), &b->definitions()});
  EXPECT_TRUE(u.collapsed);
  // 4 processes: ranks 0, 1 with threads 0..2, ranks 2, 3 with threads 0..1.
  EXPECT_EQ(u.defs.location_groups.size(), 4u);
  EXPECT_EQ(u.defs.locations.size(), 10u);
  EXPECT_EQ(u.inputs[1].locations, (std::vector<std::uint32_t>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(u.inputs[0].locations, (std::vector<std::uint32_t>{0, 1, 3, 4, 6, 7, 8, 9}));
}

TEST(AlgebraCombine, DiffMeanMinMaxByHand) {
  const auto a = report({"foo", "bar"}, 1, 2, 2), b = report({"foo", "baz"}, 1, 2, 1);
  const auto d = combine(Operation::Diff, {a, b});
  ASSERT_EQ(d->cnode_count(), 4u);
  EXPECT_EQ(d->definitions().metrics[1].dtype.name, "INT64");
  const auto t = d->values(0);
  const auto ta = a->values(0), tb = b->values(0);
  for (std::size_t l = 0; l < 2; ++l) {
    EXPECT_EQ(at<double>(*t, 0, l), at<double>(*ta, 0, l) - at<double>(*tb, 0, l));
    EXPECT_EQ(at<double>(*t, 1, l), at<double>(*ta, 1, l) - at<double>(*tb, 1, l));  // foo
    EXPECT_EQ(at<double>(*t, 2, l), at<double>(*ta, 2, l));                          // bar: only in A
    EXPECT_EQ(at<double>(*t, 3, l), -at<double>(*tb, 2, l));                         // baz: only in B
  }
  const auto v = d->values(1);  // visits: inclusive, equal in both at main and foo
  EXPECT_EQ(at<std::int64_t>(*v, 0, 1), 0);
  EXPECT_EQ(at<std::int64_t>(*v, 3, 1), -2);
  const auto mean = combine(Operation::Mean, {a, b})->values(0);
  EXPECT_DOUBLE_EQ(at<double>(*mean, 2, 1), at<double>(*ta, 2, 1) / 2);
  const auto lo = combine(Operation::Min, {a, b})->values(0), hi = combine(Operation::Max, {a, b})->values(0);
  EXPECT_EQ(at<double>(*lo, 1, 0), at<double>(*tb, 1, 0));
  EXPECT_EQ(at<double>(*hi, 1, 0), at<double>(*ta, 1, 0));
  EXPECT_EQ(at<double>(*lo, 3, 0), 0.0);  // baz is zero in A
  EXPECT_THROW(combine(Operation::Diff, {a}), std::invalid_argument);
}

TEST(AlgebraCombine, MergeWritesEveryInputInOrderAndKeepsTypes) {
  // As cube_merge: every input's values in input order, a later input overwriting an earlier one
  // where both have the call path and location. b (1 process) overwrites a (2 processes) at
  // main and foo on location 0 only; baz is a's alone, bar b's alone.
  const auto a = report({"foo", "baz"}, 2, 1, 3), b = report({"foo", "bar"}, 1, 1, 5);
  const auto m = combine(Operation::Merge, {a, b});
  EXPECT_EQ(m->definitions().metrics[1].dtype.name, "UINT64");
  ASSERT_EQ(region_of(*m, 2), "baz");
  ASSERT_EQ(region_of(*m, 3), "bar");
  const auto t = m->values(0), ta = a->values(0), tb = b->values(0);
  EXPECT_EQ(at<double>(*t, 0, 0), at<double>(*tb, 0, 0));
  EXPECT_EQ(at<double>(*t, 0, 1), at<double>(*ta, 0, 1));
  EXPECT_EQ(at<double>(*t, 1, 0), at<double>(*tb, 1, 0));
  EXPECT_EQ(at<double>(*t, 1, 1), at<double>(*ta, 1, 1));
  EXPECT_EQ(at<double>(*t, 2, 0), at<double>(*ta, 2, 0));
  EXPECT_EQ(at<double>(*t, 2, 1), at<double>(*ta, 2, 1));
  EXPECT_EQ(at<double>(*t, 3, 0), at<double>(*tb, 2, 0));  // bar: only in the second input
  EXPECT_EQ(at<double>(*t, 3, 1), 0.0);
  EXPECT_EQ(at<std::uint64_t>(*m->values(1), 0, 0), at<std::uint64_t>(*b->values(1), 0, 0));
  EXPECT_EQ(at<std::uint64_t>(*m->values(1), 0, 1), at<std::uint64_t>(*a->values(1), 0, 1));
}

TEST(AlgebraCombine, RealReportsDiffWithItselfIsZeroAndMeanIsItself) {
  const auto a = cube::open_cubex(shared("bt-mz.p2x4.bad_checksums.cubex"));
  const auto d = combine(Operation::Diff, {a, a});
  const auto mean = combine(Operation::Mean, {a, a, a});
  for (std::size_t m = 0; m < a->metric_count(); ++m) {
    if (cube::is_derived(a->definitions().metrics[m])) continue;
    const auto v = d->values(m);
    EXPECT_EQ(v->present_rows(), 0u) << a->definitions().metrics[m].uniq_name;
    const auto kind = a->definitions().metrics[m].kind;
    std::vector<double> x(a->cnode_count() * a->location_count()), y(x.size());
    cube::to_doubles(*a->values(m, kind), x.data());
    cube::to_doubles(*mean->values(m), y.data());
    for (std::size_t i = 0; i < x.size(); ++i) ASSERT_NEAR(y[i], x[i], 1e-12 * (1 + std::fabs(x[i])));
  }
}

TEST(AlgebraCut, PruneInlinesIntoTheCallerAndRerootKeepsSubtree) {
  // As cube_cut -p: a pruned call path goes, its values (and its subtree's) go to its caller.
  const auto a = report({"foo", "bar"}, 1, 2, 1);
  const auto pruned = cut(a, {}, {1});
  ASSERT_EQ(pruned->cnode_count(), 2u);
  EXPECT_EQ(region_of(*pruned, 1), "bar");
  const auto ex = a->values(0);
  EXPECT_EQ(at<double>(*pruned->values(0), 0, 1), at<double>(*ex, 0, 1) + at<double>(*ex, 1, 1));
  EXPECT_EQ(at<double>(*pruned->values(0), 1, 1), at<double>(*ex, 2, 1));
  EXPECT_EQ(at<std::uint64_t>(*pruned->values(1), 0, 1), at<std::uint64_t>(*a->values(1), 0, 1));
  const auto rerooted = cut(a, {2}, {});
  ASSERT_EQ(rerooted->cnode_count(), 1u);
  EXPECT_EQ(region_of(*rerooted, 0), "bar");
  EXPECT_EQ(at<double>(*rerooted->values(0), 0, 0), at<double>(*ex, 2, 0));
  EXPECT_THROW(cut(a, {0, 1}, {}), std::invalid_argument);  // 1 lies inside 0
  EXPECT_THROW(cut(a, {7}, {}), std::invalid_argument);
  EXPECT_THROW(cut(a, {}, {0}), std::invalid_argument);    // the root has no caller
  EXPECT_THROW(cut(a, {1}, {1}), std::invalid_argument);   // both root and pruned
  EXPECT_THROW(cut(a, {}, {0, 1}), std::invalid_argument);  // 1 lies inside pruned 0 (and 0 is a root)
}

TEST(AlgebraCombine, MedianByHandOddAndEven) {
  const auto a = report({"foo"}, 1, 2, 1), b = report({"foo"}, 1, 2, 4), c = report({"foo", "bar"}, 1, 2, 2);
  const auto t = [](const std::shared_ptr<cube::Report>& r) { return r->values(0); };
  const auto odd = combine(Operation::Median, {a, b, c});
  EXPECT_EQ(odd->definitions().metrics[1].dtype.name, "DOUBLE");
  EXPECT_EQ(at<double>(*t(odd), 1, 1), at<double>(*t(c), 1, 1));  // scales 1, 4, 2: the middle one
  EXPECT_EQ(at<double>(*t(odd), 2, 0), 0.0);                      // bar: 0, 0 and c's value
  const auto even = combine(Operation::Median, {a, b, c, c});     // 1, 2, 2, 4: mean of the middle two
  EXPECT_EQ(at<double>(*t(even), 1, 0), at<double>(*t(c), 1, 0));
  const auto two = combine(Operation::Median, {a, b});
  EXPECT_DOUBLE_EQ(at<double>(*t(two), 0, 1), (at<double>(*t(a), 0, 1) + at<double>(*t(b), 0, 1)) / 2);
  EXPECT_EQ(two->cnode_count(), a->cnode_count());  // no bar: neither input has it
}

TEST(AlgebraCommon, KeepsCallPathsOfAllAndFoldsTheRest) {
  const auto a = report({"foo", "bar"}, 1, 2, 1), b = report({"baz", "foo"}, 1, 2, 1);
  const auto out = common({a, b});
  ASSERT_EQ(out.size(), 2u);
  for (const auto& r : out) {
    ASSERT_EQ(r->cnode_count(), 2u);
    EXPECT_EQ(region_of(*r, 0), "main");
    EXPECT_EQ(region_of(*r, 1), "foo");
  }
  const auto ex = a->values(0);  // main of A gains bar's exclusive time; inclusive visits unchanged
  EXPECT_EQ(at<double>(*out[0]->values(0), 0, 1), at<double>(*ex, 0, 1) + at<double>(*ex, 2, 1));
  EXPECT_EQ(at<double>(*out[0]->values(0), 1, 1), at<double>(*ex, 1, 1));
  EXPECT_EQ(at<std::uint64_t>(*out[1]->values(1), 0, 1), at<std::uint64_t>(*b->values(1), 0, 1));
  // Different roots: nothing in common.
  auto regions = std::vector<cube::Region>{region("other")};
  cube::CallTreeParts calls{{kNoParent}, {0}, {}};
  const auto c = std::make_shared<cube::Report>(cube::assemble_definitions(
      {metric("time", "DOUBLE", cube::MetricKind::Exclusive)}, regions, calls, machine(1, 2)));
  EXPECT_THROW(common({a, c}), std::invalid_argument);
}

TEST(AlgebraUnify, CallSitesArePartOfACallPath) {
  auto a = report({"foo", "foo"}, 1, 1, 1);  // two call paths of foo, from two call sites
  auto defs = a->definitions();
  defs.cnodes[1].line = 10;
  defs.cnodes[2].line = 20;
  defs.cnodes[1].mod = defs.cnodes[2].mod = "app.c";
  const auto u = unify({&defs, &defs});
  EXPECT_EQ(u.defs.cnodes.size(), 3u);
  EXPECT_EQ(u.defs.cnodes[2].line, 20);
  EXPECT_EQ(u.defs.cnodes[2].mod, "app.c");
  auto other = defs;
  other.cnodes[2].line = 30;  // another call site: another call path
  EXPECT_EQ(unify({&defs, &other}).defs.cnodes.size(), 4u);
  other.cnodes[2].line.reset();  // one without call site matches none with one
  EXPECT_EQ(unify({&defs, &other}).defs.cnodes.size(), 4u);
}

TEST(CubeCallSite, ReadWriteReadKeepsLineAndModule) {
  const auto a = cube::open_cubex(shared("all_dtypes.cubex"));
  const auto& c = a->definitions().cnodes;
  ASSERT_GE(c.size(), 3u);
  EXPECT_EQ(c[0].line, 21);
  EXPECT_EQ(c[1].line, 60);
  EXPECT_EQ(c[0].mod, "/ICL/CUBE/example.c");
  const auto path = (std::filesystem::temp_directory_path() / "cubescale_call_site.cubex").string();
  cube::write_cubex(*a, path);
  const auto b = cube::open_cubex(path);
  std::filesystem::remove(path);
  ASSERT_EQ(b->definitions().cnodes.size(), c.size());
  for (std::size_t i = 0; i < c.size(); ++i) {
    EXPECT_EQ(b->definitions().cnodes[i].line, c[i].line) << i;
    EXPECT_EQ(b->definitions().cnodes[i].mod, c[i].mod) << i;
  }
  // A report without call sites has none after the round trip either.
  EXPECT_FALSE(cube::open_cubex(shared("bt-mz.B.8x4.cubex"))->definitions().cnodes[0].line.has_value());
}

TEST(AlgebraUnify, ReduceKeepsMachinesAndNodesMatchedByName) {
  // A: machine > rack > node n0 > 2 processes; B: machine > node n0 (1 process), node n1 (1 process).
  systree::SingleNodeTree ta;
  const auto m = ta.add_root(systree::Kind::Node, "machine", "m");
  const auto rack = ta.add_child(m, systree::Kind::Node, "rack", "rack 0");
  const auto n0 = ta.add_child(rack, systree::Kind::Node, "node", "n0");
  for (int p = 0; p < 2; ++p)
    ta.add_child(ta.add_child(n0, systree::Kind::LocationGroup, "process", "rank " + std::to_string(p)), systree::Kind::Location,
                 "thread", "t");
  systree::SingleNodeTree tb;
  const auto mb = tb.add_root(systree::Kind::Node, "machine", "other machine");
  for (int n = 0; n < 2; ++n) {
    const auto node = tb.add_child(mb, systree::Kind::Node, "node", "n" + std::to_string(n));
    tb.add_child(tb.add_child(node, systree::Kind::LocationGroup, "process", "rank " + std::to_string(n)), systree::Kind::Location,
                 "thread", "t");
  }
  auto regions = std::vector<cube::Region>{region("main")};
  cube::CallTreeParts calls{{kNoParent}, {0}, {}};
  const std::vector<cube::Metric> metrics{metric("time", "DOUBLE", cube::MetricKind::Exclusive)};
  const auto a = cube::assemble_definitions(metrics, regions, calls, ta);
  const auto b = cube::assemble_definitions(metrics, regions, calls, tb);
  const auto u = unify({&a, &b}, SystemMatch::Reduce);
  EXPECT_TRUE(u.reduced);
  // machine m > n0 (ranks 0, 1), n1 (rank 1): rank 1 on n1 is another process than rank 1 on n0.
  EXPECT_EQ(u.defs.locations.size(), 3u);
  EXPECT_EQ(u.inputs[0].locations, (std::vector<std::uint32_t>{0, 1}));
  EXPECT_EQ(u.inputs[1].locations, (std::vector<std::uint32_t>{0, 2}));
  EXPECT_EQ(u.defs.system.name(0), "m");
  EXPECT_EQ(u.defs.group_rank, (std::vector<std::int64_t>{0, 1, 1}));
  // Processes directly below the machine cannot be placed on a node.
  systree::SingleNodeTree flat;
  const auto fm = flat.add_root(systree::Kind::Node, "machine", "m");
  flat.add_child(flat.add_child(fm, systree::Kind::LocationGroup, "process", "rank 0"), systree::Kind::Location, "thread", "t");
  const auto f = cube::assemble_definitions(metrics, regions, calls, flat);
  EXPECT_THROW(unify({&a, &f}, SystemMatch::Reduce), std::invalid_argument);
}

// ---- Review findings on the shared reports: min / max / median of metrics stored inclusive,
// and minima of call paths that a cut or the common call tree keeps.

namespace {

std::size_t metric_named(const cube::Report& r, const std::string& name) {
  const auto& m = r.definitions().metrics;
  for (std::size_t i = 0; i < m.size(); ++i)
    if (m[i].uniq_name == name) return i;
  throw std::invalid_argument("no metric " + name);
}

std::size_t cnode_named(const cube::Report& r, const std::string& region) {
  for (std::size_t c = 0; c < r.cnode_count(); ++c)
    if (region_of(r, c) == region) return c;
  throw std::invalid_argument("no call path of " + region);
}

const std::string kModel1 = "MODEL_1(unsigned long, unsigned long, int, int)";

std::vector<double> doubles(const cube::Severity& s) {
  std::vector<double> out(s.cnodes() * s.locations());
  cube::to_doubles(s, out.data());
  return out;
}

}  // namespace

TEST(AlgebraCombine, MinMaxMedianOfInclusiveTimeAreTakenOfExclusiveValues) {
  // One run of time.p4 as it is, one with 0.1 s of every location moved from main's child
  // MPI_Init to its child MODEL_1. The maximum of the stored (inclusive) values gave main
  // -0.197 s of exclusive time: the children's maxima add up to more than main's maximum.
  const auto a = cube::open_cubex(shared("time.p4.cubex"));
  const auto b = cube::open_cubex(shared("time.p4.cubex"));
  const auto time = metric_named(*a, "time");
  ASSERT_EQ(a->definitions().metrics[time].kind, cube::MetricKind::Inclusive);
  const auto init = cnode_named(*a, "MPI_Init"), model = cnode_named(*a, kModel1), main_ = cnode_named(*a, "main");
  cube::Severity moved = *b->values(time);
  for (std::size_t l = 0; l < moved.locations(); ++l) {
    reinterpret_cast<double*>(moved.row(init))[l] -= 0.1;
    reinterpret_cast<double*>(moved.row(model))[l] += 0.1;
  }
  b->set_values(time, std::move(moved));
  const auto ex_a = doubles(*a->values(time, cube::MetricKind::Exclusive));
  const auto ex_b = doubles(*b->values(time, cube::MetricKind::Exclusive));
  const auto locations = a->location_count(), cnodes = a->cnode_count();
  for (const auto op : {Operation::Max, Operation::Min, Operation::Median}) {
    const auto out = op == Operation::Median ? combine(op, {a, b, b}) : combine(op, {a, b});
    const auto ex = doubles(*out->values(time, cube::MetricKind::Exclusive));
    const auto in = doubles(*out->values(time, cube::MetricKind::Inclusive));
    ASSERT_EQ(ex.size(), ex_a.size());
    for (std::size_t l = 0; l < locations; ++l) {
      double total = 0;
      for (std::size_t c = 0; c < cnodes; ++c) {
        const auto i = c * locations + l;
        const double x = ex_a[i], y = ex_b[i];
        const double expected = op == Operation::Max ? std::max(x, y) : op == Operation::Min ? std::min(x, y) : y;
        EXPECT_NEAR(ex[i], expected, 1e-12) << static_cast<int>(op) << " " << region_of(*a, c) << " " << l;
        EXPECT_GE(ex[i], 0.0) << static_cast<int>(op) << " " << region_of(*a, c) << " " << l;
        total += ex[i];
      }
      EXPECT_NEAR(in[l], total, 1e-12);  // the root's inclusive time: all exclusive time below it
      EXPECT_NEAR(ex[main_ * locations + l], ex_a[main_ * locations + l], 1e-12);  // main spent the same
    }
  }
}

TEST(AlgebraCombine, MaxOfTwoProgramsHasNoNegativeExclusiveValues) {
  // blast.p64 and kripke.p8: max gave PARALLEL -17.74 s of exclusive time on 8 locations.
  const auto blast = cube::open_cubex(shared("blast.p64.cubex")), kripke = cube::open_cubex(shared("kripke.p8.cubex"));
  for (const auto op : {Operation::Max, Operation::Min, Operation::Median}) {
    const auto out = op == Operation::Median ? combine(op, {blast, kripke, kripke}) : combine(op, {blast, kripke});
    for (const std::string name : {"time", "PAPI_TOT_INS", "PEVT_L2_FETCH_LINE"}) {
      const auto m = metric_named(*out, name);
      ASSERT_EQ(out->definitions().metrics[m].kind, cube::MetricKind::Inclusive) << name;
      const auto ex = doubles(*out->values(m, cube::MetricKind::Exclusive));
      const auto lowest = std::min_element(ex.begin(), ex.end()) - ex.begin();
      EXPECT_GE(ex[lowest], 0.0) << static_cast<int>(op) << " " << name << " at "
                                 << region_of(*out, lowest / out->location_count());
    }
  }
}

TEST(AlgebraCut, KeptCallPathsKeepTheirInclusiveMinimaAlsoWrittenAndInCommon) {
  // Pruning MODEL_1 of time.p4 folds its subtree's exclusive minima (zero somewhere below it on
  // every location) into its caller. Taken for absent, a folded row of zeros no longer lowered
  // the inclusive min_time of main and bg_time (7.65e-7 at location 0 instead of 0,
  // time.p4.incl.csv); the writer also left the row out.
  const auto t = cube::open_cubex(shared("time.p4.cubex"));
  const auto model = cnode_named(*t, kModel1);
  std::vector<std::size_t> kept;  // the input's call paths outside MODEL_1's subtree
  std::vector<bool> below(t->cnode_count(), false);
  for (std::size_t c = 0; c < t->cnode_count(); ++c) {
    const auto p = t->definitions().cnodes[c].parent;
    below[c] = c == model || (p != kNoParent && below[p]);
    if (!below[c]) kept.push_back(c);
  }
  const auto pruned = cut(t, {}, {static_cast<std::uint32_t>(model)});
  const auto path = (std::filesystem::temp_directory_path() / ("cubescale_cut_" + std::to_string(::getpid()) + ".cubex")).string();
  cube::write_cubex(*pruned, path);
  const auto written = cube::open_cubex(path);
  std::filesystem::remove(path);
  const auto shared_tree = common({t, pruned});
  for (const auto& [what, out] : {std::pair<const char*, std::shared_ptr<const cube::Report>>{"cut", pruned},
                                  {"cut written", written}, {"common", shared_tree[0]}}) {
    ASSERT_EQ(out->cnode_count(), kept.size()) << what;
    for (std::size_t m = 0; m < t->metric_count(); ++m) {
      const auto want = doubles(*t->values(m, cube::MetricKind::Inclusive));
      const auto got = doubles(*out->values(m, cube::MetricKind::Inclusive));
      const auto locations = t->location_count();
      for (std::size_t k = 0; k < kept.size(); ++k)
        for (std::size_t l = 0; l < locations; ++l)
          ASSERT_EQ(got[k * locations + l], want[kept[k] * locations + l])
              << what << " " << t->definitions().metrics[m].uniq_name << " " << region_of(*t, kept[k]) << " " << l;
    }
    const auto min_time = metric_named(*out, "min_time");
    EXPECT_EQ(doubles(*out->values(min_time, cube::MetricKind::Inclusive))[0], 0.0) << what;  // bg_time, location 0
  }
}
