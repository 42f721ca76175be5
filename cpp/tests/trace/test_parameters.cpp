// PARAMETER_INT64, PARAMETER_UINT64 and PARAMETER_STRING in the trace -> profile kernel: a
// parameter opens a call path below the current one that holds the following Enters until the
// enclosing region is left, and that call path becomes a region named `name=value` (paradigm
// user), as Score-P's profile writes parameters for formats without parameter call paths
// (docs/trace.md, "Parameters").
#include <gtest/gtest.h>

#include <algorithm>
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

}  // namespace

// The reviewer's case: foo entered 3 times with size=0, 1, 0, each calling bar; then mode=fast
// in main before bar. Score-P's parameter call path starts at its region's Enter (its time is
// the enclosing visit's), one visit per parameter event, and the region keeps its own visits.
TEST(Parameters, ParameterCallPathsHoldTheFollowingEnters) {
  std::vector<E> events = {{E::Enter, 0, 0}};
  std::uint64_t t = 0;
  for (int i = 0; i < 3; ++i) {
    events.push_back({E::Enter, t += 10, 1});
    events.push_back(parameter(E::ParameterInt, t += 5, 0, i % 2));
    events.push_back({E::Enter, t += 10, 2});
    events.push_back({E::Leave, t += 100, 2});
    events.push_back({E::Leave, t += 100, 1});
  }  // each foo lasts 215 ns
  events.push_back(parameter(E::ParameterString, t += 5, 1, 0, "fast"));
  events.push_back({E::Enter, t += 10, 2});
  events.push_back({E::Leave, t += 100, 2});
  events.push_back({E::Leave, t += 10, 0});
  const auto p = profile_of(events);
  auto v = cubescale::trace_tests::visits_and_time(p);
  EXPECT_EQ(v["main"], vt(1, double(t)));
  EXPECT_EQ(v["main/foo"], vt(3, 645));
  EXPECT_EQ(v["main/foo/size=0"], vt(2, 430));
  EXPECT_EQ(v["main/foo/size=1"], vt(1, 215));
  EXPECT_EQ(v["main/foo/size=0/bar"], vt(2, 200));
  EXPECT_EQ(v["main/foo/size=1/bar"], vt(1, 100));
  EXPECT_EQ(v["main/mode=fast"], vt(1, double(t)));  // from main's Enter to its Leave
  EXPECT_EQ(v["main/mode=fast/bar"], vt(1, 100));
  EXPECT_EQ(v.size(), 8u);
  // One region per name=value, paradigm user, without file or lines, after the trace's regions.
  std::vector<std::string> names;
  for (const auto& r : p.regions) names.push_back(r.name);
  EXPECT_EQ(names, (std::vector<std::string>{"main", "foo", "bar", "size=0", "size=1", "mode=fast"}));
  for (std::size_t r = 3; r < p.regions.size(); ++r) {
    EXPECT_EQ(p.regions[r].paradigm, "user");
    EXPECT_EQ(p.regions[r].role, "unknown");
    EXPECT_EQ(p.regions[r].mod, "");
    EXPECT_EQ(p.regions[r].begin, -1);
    EXPECT_EQ(p.regions[r].end, -1);
  }
}

// Parameters in a row nest (the second below the first), all closed by their region's Leave;
// signed and unsigned values are printed as such; the same name=value below another call path
// is the same region; a parameter outside every region has no call path to go below.
TEST(Parameters, ParametersInARowNestAndShareTheirRegions) {
  const auto p = profile_of({parameter(E::ParameterInt, 0, 0, 7),  // outside every region: dropped
                             {E::Enter, 10, 0},
                             {E::Enter, 20, 1},
                             parameter(E::ParameterInt, 25, 0, std::uint64_t(-3)),
                             parameter(E::ParameterUint, 26, 2, ~std::uint64_t(0)),
                             {E::Enter, 30, 2},
                             {E::Leave, 40, 2},
                             {E::Leave, 60, 1},
                             {E::Enter, 70, 2},
                             parameter(E::ParameterInt, 75, 0, std::uint64_t(-3)),
                             {E::Leave, 80, 2},
                             {E::Leave, 100, 0}});
  auto v = cubescale::trace_tests::visits_and_time(p);
  EXPECT_EQ(v["main/foo/size=-3"], vt(1, 40));
  EXPECT_EQ(v["main/foo/size=-3/count=18446744073709551615"], vt(1, 40));
  EXPECT_EQ(v["main/foo/size=-3/count=18446744073709551615/bar"], vt(1, 10));
  EXPECT_EQ(v["main/bar/size=-3"], vt(1, 10));
  EXPECT_EQ(v.count("size=7"), 0u);
  EXPECT_EQ(v.size(), 7u);
  EXPECT_EQ(std::count_if(p.regions.begin(), p.regions.end(), [](const auto& r) { return r.name == "size=-3"; }), 1);
}

// A parameter's call path starts where its region was entered (Score-P takes its first visit
// from there), so it comes before the children its region entered before the parameter.
TEST(Parameters, ParameterCallPathsOrderByTheirRegionsEnter) {
  const auto p = profile_of({{E::Enter, 0, 1},
                             {E::Enter, 10, 2},
                             {E::Leave, 20, 2},
                             parameter(E::ParameterString, 30, 1, 0, "slow"),
                             {E::Enter, 40, 2},
                             {E::Leave, 50, 2},
                             {E::Leave, 60, 1}});
  const auto paths = cubescale::trace_tests::path_names(p);
  EXPECT_EQ(paths, (std::vector<std::string>{"foo", "foo/mode=slow", "foo/mode=slow/bar", "foo/bar"}));
}

// Event type names are otf2-print's (its PARAMETER_INT64, not OTF2's callback name ParameterInt).
TEST(Parameters, EventTypeNamesAreOtf2Prints) {
  EXPECT_EQ(event_type_name(EventType::ParameterInt), "PARAMETER_INT64");
  EXPECT_EQ(event_type_name(EventType::ParameterUnsignedInt), "PARAMETER_UINT64");
  EXPECT_EQ(event_type_name(EventType::ParameterString), "PARAMETER_STRING");
  EXPECT_EQ(event_type_name(EventType::IoChangeStatusFlags), "IO_CHANGE_FLAGS");
  EXPECT_EQ(event_type_name(EventType::MpiIsend), "MPI_ISEND");
}
