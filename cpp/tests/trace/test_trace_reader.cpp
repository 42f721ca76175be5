// The OTF2 reader on the shared traces: definitions, per-location streaming, event counts
// that add up to what the definitions announce, and FormatError on broken archives.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <numeric>

#include "cubescale/common/format_error.hpp"
#include "cubescale/trace/reader.hpp"

namespace fs = std::filesystem;
using namespace cubescale::trace;

namespace {
std::string shared(const std::string& rel) { return std::string(CUBESCALE_SHARED_DATA) + "/otf2/" + rel; }

std::uint64_t total(const std::vector<std::uint64_t>& v) { return std::accumulate(v.begin(), v.end(), std::uint64_t(0)); }

fs::path copy_trace(const std::string& name, const std::string& tag) {
  const auto dst = fs::temp_directory_path() / ("cubescale_trace_" + tag + "_" + std::to_string(::getpid()));
  fs::remove_all(dst);
  fs::copy(shared(name), dst, fs::copy_options::recursive);
  for (auto& p : fs::recursive_directory_iterator(dst)) fs::permissions(p.path(), fs::perms::owner_all, fs::perm_options::add);
  fs::permissions(dst, fs::perms::owner_all, fs::perm_options::add);
  return dst;
}
}  // namespace

TEST(TraceReader, PingPongDefinitions) {
  Trace t(shared("ping-pong-papi/traces.otf2"));
  const auto& d = t.definitions();
  ASSERT_EQ(d.locations.size(), 2u);
  EXPECT_EQ(d.locations[0].name, "Master thread");
  EXPECT_EQ(d.locations[0].type, "cpu_thread");
  EXPECT_EQ(d.location_groups[d.locations[1].group].name, "MPI Rank 1");
  EXPECT_EQ(d.clock.resolution, 2095191439u);
  EXPECT_EQ(d.system_tree_nodes[1].name, "quartz10");
  EXPECT_EQ(d.system_tree_nodes[0].domains, std::vector<std::string>{"machine"});
  EXPECT_EQ(d.regions[11].name, "MPI_Barrier");
  EXPECT_EQ(d.regions[11].role, "barrier");
  EXPECT_EQ(d.regions[11].paradigm, "mpi");
  ASSERT_EQ(d.metric_members.size(), 3u);
  EXPECT_EQ(d.metric_members[0].name, "PAPI_TOT_CYC");
  EXPECT_TRUE(d.metric_members[0].accumulated);
}

TEST(TraceReader, CountsMatchAnnouncedEvents) {
  for (const auto* name : {"ping-pong/traces.otf2", "ping-pong-papi/traces.otf2", "integrity/TestTrace.otf2",
                           "late-sender-barrier/traces.otf2", "openmp-nested/traces.otf2",
                           "bcast-scorep8/traces.otf2", "jacobi-hybrid/traces.otf2"}) {
    Trace t(shared(name));
    const auto counts = count_events(t, t.all_locations());
    for (std::size_t l = 0; l < counts.size(); ++l) {
      const auto announced = t.definitions().locations[l].events;
      if (announced) EXPECT_EQ(total(counts[l]), announced) << name << " location " << l;
      EXPECT_EQ(counts[l][std::size_t(EventType::Enter)], counts[l][std::size_t(EventType::Leave)]) << name;
    }
  }
}

TEST(TraceReader, SubsetOfLocations) {
  Trace t(shared("late-sender-barrier/traces.otf2"));
  const auto all = count_events(t, t.all_locations());
  const auto two = count_events(t, {3, 1});
  EXPECT_EQ(two[0], all[3]);
  EXPECT_EQ(two[1], all[1]);
}

TEST(TraceReader, BrokenInput) {
  EXPECT_THROW(Trace(shared("ping-pong/traces.def")), cubescale::FormatError);
  EXPECT_THROW(Trace(shared("ping-pong/missing.otf2")), cubescale::FormatError);
  const auto dir = copy_trace("ping-pong", "missing");
  fs::remove(dir / "traces" / "1.evt");
  Trace t((dir / "traces.otf2").string());
  try {
    count_events(t, t.all_locations());
    ADD_FAILURE() << "no error for a missing event file";
  } catch (const cubescale::FormatError& e) {
    EXPECT_EQ(e.member(), "traces/1.evt");
  }
  const auto cut = copy_trace("ping-pong", "cut");
  fs::resize_file(cut / "traces" / "0.evt", fs::file_size(cut / "traces" / "0.evt") / 2);
  Trace u((cut / "traces.otf2").string());
  EXPECT_THROW(count_events(u, u.all_locations()), cubescale::FormatError);
  const auto defs = copy_trace("ping-pong", "defs");
  fs::resize_file(defs / "traces.def", 100);
  EXPECT_THROW(Trace((defs / "traces.otf2").string()), cubescale::FormatError);
  for (const auto& d : {dir, cut, defs}) fs::remove_all(d);
}
