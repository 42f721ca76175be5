// PARAMETER_INT64, PARAMETER_UINT64 and PARAMETER_STRING in the trace -> profile kernel, in
// Score-P 8.4's form (docs/trace.md, "Parameters"): a region's call path with parameter call
// paths below it is split into call paths of the same region with Cube call-path parameters,
// one per parameter call path, and keeps only the visits left without parameters.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <map>
#include <string>

#include "cubescale/trace/profile.hpp"
#include "cubescale/trace/reader.hpp"
#include "../analysis/trace_files.hpp"
#include "one_location_trace.hpp"
#include "profile_by_path.hpp"

using namespace cubescale::trace;
using E = cubescale::trace_tests::OneLocationEvent;
using R = cubescale::trace_tests::OneLocationRegion;
using P = cubescale::trace_tests::OneLocationParameter;

namespace {

// Regions 0 main, 1 foo, 2 bar; parameters 0 size (int64), 1 mode (string), 2 count (uint64).
const std::vector<R> kRegions = {{"main", "main"}, {"foo", "foo"}, {"bar", "bar"}};
const std::vector<P> kParameters = {{"size", OTF2_TYPE_INT64}, {"mode", OTF2_TYPE_STRING}, {"count", OTF2_TYPE_UINT64}};

E parameter(E::Kind kind, std::uint64_t time, std::uint32_t p, std::uint64_t value, const std::string& text = {}) {
  E e{kind, time, p};
  e.value = value;
  e.text = text;
  return e;
}

cubescale::profile::LocalProfile profile_of(const std::vector<E>& events) {
  cubescale::analysis_tests::TempDir dir("parameters");
  const auto anchor = cubescale::trace_tests::write_one_location(dir.path, "t", kRegions, events, "t", {}, kParameters);
  const Trace trace(anchor);
  return trace_profile(trace, trace.all_locations());
}

using Visits = std::map<std::string, std::pair<std::uint64_t, double>>;
std::pair<std::uint64_t, double> vt(std::uint64_t visits, double ns) { return {visits, ns}; }


// Per call path, its minimum and maximum visit in ns (location 0).
std::map<std::string, std::pair<double, double>> min_max(const cubescale::profile::LocalProfile& p) {
  std::size_t lo = 0, hi = 0;
  for (std::size_t m = 0; m < p.metrics.size(); ++m) {
    if (p.metrics[m].uniq_name == "min_time") lo = m;
    if (p.metrics[m].uniq_name == "max_time") hi = m;
  }
  const auto paths = cubescale::trace_tests::path_names(p);
  std::map<std::string, std::pair<double, double>> out;
  for (std::size_t c = 0; c < paths.size(); ++c) {
    double a, b;
    std::memcpy(&a, p.values[lo].row(c), 8);
    std::memcpy(&b, p.values[hi].row(c), 8);
    out[paths[c]] = {std::round(a * 1e9), std::round(b * 1e9)};
  }
  return out;
}

// foo entered three times with size=0, 1, 0, each calling bar, and main calling bar.
std::vector<E> foo_three_times(std::uint64_t& t) {
  std::vector<E> events = {{E::Enter, 0, 0}};
  t = 0;
  for (int i = 0; i < 3; ++i) {
    events.push_back({E::Enter, t += 10, 1});
    events.push_back(parameter(E::ParameterInt, t += 5, 0, i % 2));
    events.push_back({E::Enter, t += 10, 2});
    events.push_back({E::Leave, t += 100, 2});
    events.push_back({E::Leave, t += 100, 1});
  }  // each foo lasts 215 ns
  return events;
}

}  // namespace

// foo's visits with parameters become foo[size=0] (2 visits) and foo[size=1] (1 visit) beside
// it, each with its visits' time and callees; foo has no visit of its own left and goes, its
// call path with no parameters too.
TEST(Parameters, ARegionSplitsByItsParameters) {
  std::uint64_t t;
  auto events = foo_three_times(t);
  events.push_back({E::Enter, t += 10, 2});
  events.push_back({E::Leave, t += 100, 2});
  events.push_back({E::Leave, t += 10, 0});
  const auto p = profile_of(events);
  auto v = cubescale::trace_tests::visits_and_time(p);
  EXPECT_EQ(v["main"], vt(1, double(t)));
  EXPECT_EQ(v["main/foo[size=0]"], vt(2, 430));
  EXPECT_EQ(v["main/foo[size=1]"], vt(1, 215));
  EXPECT_EQ(v["main/foo[size=0]/bar"], vt(2, 200));
  EXPECT_EQ(v["main/foo[size=1]/bar"], vt(1, 100));
  EXPECT_EQ(v["main/bar"], vt(1, 100));
  EXPECT_EQ(v.size(), 6u);
  // In order of first visit (the parameters' call paths from their region's Enter).
  EXPECT_EQ(cubescale::trace_tests::path_names(p),
            (std::vector<std::string>{"main", "main/foo[size=0]", "main/foo[size=0]/bar", "main/foo[size=1]",
                                      "main/foo[size=1]/bar", "main/bar"}));
  // Cube's call-path parameters as Score-P's Cube writer writes an int64; no region per value.
  const auto& rows = p.cnode_parameters;
  ASSERT_EQ(rows.size(), 6u);
  EXPECT_EQ(rows[1], (std::vector<cubescale::cube::Attributes>{{{"partype", "numeric"}, {"parkey", "size"}, {"parvalue", "0"}}}));
  EXPECT_TRUE(rows[0].empty() && rows[2].empty() && rows[5].empty());
  std::vector<std::string> names;
  for (const auto& r : p.regions) names.push_back(r.name);
  EXPECT_EQ(names, (std::vector<std::string>{"main", "foo", "bar"}));
}

// The reviewer's case: the same, then mode=fast in main before a call of bar. main's one visit
// is then mode=fast's, so main has none of its own left: Score-P 8.4 drops main with every call
// path below it that is not a parameter's (foo's split call paths included, since they would
// hang below main), and keeps main[mode=fast] with its time from main's Enter and its bar.
TEST(Parameters, ALateParameterTakesItsRegionsVisit) {
  std::uint64_t t;
  auto events = foo_three_times(t);
  events.push_back(parameter(E::ParameterString, t += 5, 1, 0, "fast"));
  events.push_back({E::Enter, t += 10, 2});
  events.push_back({E::Leave, t += 100, 2});
  events.push_back({E::Leave, t += 10, 0});
  const auto p = profile_of(events);
  auto v = cubescale::trace_tests::visits_and_time(p);
  EXPECT_EQ(v["main[mode=fast]"], vt(1, double(t)));  // from main's Enter to its Leave
  EXPECT_EQ(v["main[mode=fast]/bar"], vt(1, 100));
  EXPECT_EQ(v.size(), 2u);
  ASSERT_EQ(p.cnode_parameters.size(), 2u);
  EXPECT_EQ(p.cnode_parameters[0],
            (std::vector<cubescale::cube::Attributes>{{{"partype", "string"}, {"parkey", "mode"}, {"parvalue", "fast"}}}));
}

// A region keeps its visits without parameters, less the others' time, with the shortest and
// longest of all its visits (Score-P subtracts visits, time and counters only).
TEST(Parameters, ARegionKeepsItsOwnVisits) {
  const auto p = profile_of({{E::Enter, 0, 0},
                             {E::Enter, 10, 1},
                             {E::Leave, 20, 1},  // foo, 10 ns, no parameter
                             {E::Enter, 30, 1},
                             parameter(E::ParameterInt, 31, 0, 1),
                             {E::Leave, 70, 1},  // foo[size=1], 40 ns
                             {E::Leave, 100, 0}});
  auto v = cubescale::trace_tests::visits_and_time(p);
  EXPECT_EQ(v["main/foo"], vt(1, 10));
  EXPECT_EQ(v["main/foo[size=1]"], vt(1, 40));
  auto mm = min_max(p);
  EXPECT_EQ(mm["main/foo"], std::make_pair(10.0, 40.0));
  EXPECT_EQ(mm["main/foo[size=1]"], std::make_pair(40.0, 40.0));
  EXPECT_EQ(cubescale::trace_tests::path_names(p), (std::vector<std::string>{"main", "main/foo", "main/foo[size=1]"}));
}

// Parameters in a row nest into one list, outermost first (numbers before strings, as Score-P's
// Cube writer writes them); a uint64 is written as Score-P stores it, a signed 64-bit integer,
// and every number with %g; a parameter outside every region is left out; a region entered
// below a parameter's call path moves with it.
TEST(Parameters, ParametersInARowMakeOneList) {
  const auto p = profile_of({parameter(E::ParameterInt, 0, 0, 7),  // outside every region: dropped
                             {E::Enter, 10, 0},
                             {E::Enter, 20, 1},
                             parameter(E::ParameterString, 24, 1, 0, "slow"),
                             parameter(E::ParameterInt, 25, 0, std::uint64_t(-3)),
                             parameter(E::ParameterUint, 26, 2, ~std::uint64_t(0)),
                             {E::Enter, 30, 2},
                             {E::Leave, 40, 2},
                             {E::Leave, 60, 1},
                             {E::Enter, 70, 2},
                             parameter(E::ParameterInt, 75, 0, 1234567),
                             {E::Leave, 80, 2},
                             {E::Leave, 100, 0}});
  auto v = cubescale::trace_tests::visits_and_time(p);
  EXPECT_EQ(v["main"], vt(1, 90));
  EXPECT_EQ(v["main/foo[size=-3,count=-1,mode=slow]"], vt(1, 40));
  EXPECT_EQ(v["main/foo[size=-3,count=-1,mode=slow]/bar"], vt(1, 10));
  EXPECT_EQ(v["main/bar[size=1.23457e+06]"], vt(1, 10));
  EXPECT_EQ(v.size(), 4u);
  const auto paths = cubescale::trace_tests::path_names(p);
  const auto at = std::find(paths.begin(), paths.end(), "main/foo[size=-3,count=-1,mode=slow]") - paths.begin();
  EXPECT_EQ(p.cnode_parameters[at][2],
            (cubescale::cube::Attributes{{"partype", "string"}, {"parkey", "mode"}, {"parvalue", "slow"}}));
}

// An int64 parameter `instance` (Score-P's profile's own, for dynamic regions) stays a region
// `instance=value` below its region, whose visits it takes.
TEST(Parameters, TheInstanceParameterStaysARegion) {
  const std::vector<P> parameters = {{"instance", OTF2_TYPE_INT64}};
  cubescale::analysis_tests::TempDir dir("instance");
  const auto anchor = cubescale::trace_tests::write_one_location(
      dir.path, "t", kRegions,
      {{E::Enter, 0, 1}, parameter(E::ParameterInt, 1, 0, 5), {E::Leave, 10, 1}, {E::Enter, 20, 1}, {E::Leave, 30, 1}}, "t",
      {}, parameters);
  const Trace trace(anchor);
  const auto p = trace_profile(trace, trace.all_locations());
  auto v = cubescale::trace_tests::visits_and_time(p);
  EXPECT_EQ(v["foo"], vt(1, 20));
  EXPECT_EQ(v["foo/instance=5"], vt(1, 10));
  EXPECT_EQ(v.size(), 2u);
  EXPECT_TRUE(p.cnode_parameters.empty());
  EXPECT_EQ(p.regions.back().name, "instance=5");
  EXPECT_EQ(p.regions.back().paradigm, "user");
}

// Parameters set one after another in one visit nest until Score-P's default call-tree depth
// (100, regions and parameters open): foo and 99 parameters; only the innermost keeps a visit.
TEST(Parameters, ParametersNestUpToScorePsDepthLimit) {
  std::vector<E> events = {{E::Enter, 0, 1}};
  for (std::uint64_t i = 0; i < 150; ++i) events.push_back(parameter(E::ParameterInt, 1 + i, 0, i));
  events.push_back({E::Leave, 200, 1});
  const auto p = profile_of(events);
  ASSERT_EQ(p.cnode_count(), 1u);
  ASSERT_EQ(p.cnode_parameters.size(), 1u);
  const auto& list = p.cnode_parameters[0];
  ASSERT_EQ(list.size(), 99u);
  EXPECT_EQ(list.front()[2].second, "0");
  EXPECT_EQ(list.back()[2].second, "98");
}

// Event type names are otf2-print's (its PARAMETER_INT64, not OTF2's callback name ParameterInt).
TEST(Parameters, EventTypeNamesAreOtf2Prints) {
  EXPECT_EQ(event_type_name(EventType::ParameterInt), "PARAMETER_INT64");
  EXPECT_EQ(event_type_name(EventType::ParameterUnsignedInt), "PARAMETER_UINT64");
  EXPECT_EQ(event_type_name(EventType::ParameterString), "PARAMETER_STRING");
  EXPECT_EQ(event_type_name(EventType::IoChangeStatusFlags), "IO_CHANGE_FLAGS");
  EXPECT_EQ(event_type_name(EventType::MpiIsend), "MPI_ISEND");
}
