// The OTF2 reader on the shared traces: definitions, per-location streaming, event counts
// that add up to what the definitions announce, and FormatError on broken archives.
#include <gtest/gtest.h>

#include <filesystem>
#include <cstring>
#include <fstream>
#include <numeric>

#include "cubescale/common/format_error.hpp"
#include "cubescale/trace/profile.hpp"
#include "cubescale/trace/reader.hpp"
#include "cubescale/trace/synthetic_mpi.hpp"
#include "one_location_trace.hpp"
#include "cubescale/trace/synthetic.hpp"

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

// Enter/Leave nesting is the reader's check, so a count of events (no profile involved)
// refuses a Leave of another region, and regions left open at the end are read.
TEST(TraceReader, EveryReaderChecksRegionNesting) {
  const auto dir = fs::temp_directory_path() / ("cubescale_trace_nesting_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  SyntheticTrace bad;
  bad.processes = 2;
  bad.iterations = 3;
  bad.defect = "mismatched_leave";
  write_synthetic_trace(dir.string(), "bad", bad);
  Trace t((dir / "bad.otf2").string());
  try {
    count_events(t, t.all_locations());
    ADD_FAILURE() << "no error for a Leave of another region";
  } catch (const cubescale::FormatError& e) {
    EXPECT_EQ(e.member(), "bad/0.evt");
    EXPECT_NE(std::string(e.what()).find("Leave of \"solve\" inside \"compute\""), std::string::npos) << e.what();
  }
  SyntheticTrace open = bad;
  open.defect = "unclosed";
  const auto written = write_synthetic_trace(dir.string(), "open", open);
  Trace u((dir / "open.otf2").string());
  std::uint64_t read = 0;
  for (const auto& row : count_events(u, u.all_locations())) read += total(row);
  EXPECT_EQ(read, written);
  fs::remove_all(dir);
}

namespace {
struct ProgramEvents final : EventSink {
  std::vector<Event> seen;
  void event(const Event& e) override {
    if (e.type == EventType::ProgramBegin || e.type == EventType::ProgramEnd) seen.push_back(e);
  }
};
// "root/child/..." of every call path of a profile.
std::vector<std::string> call_paths(const cubescale::profile::LocalProfile& p) {
  std::vector<std::string> out;
  for (std::size_t c = 0; c < p.cnode_parents.size(); ++c) {
    const auto parent = p.cnode_parents[c];
    const auto& name = p.regions[p.cnode_regions[c]].name;
    out.push_back(parent == cubescale::cube::kNoParent ? name : out[parent] + "/" + name);
  }
  return out;
}
}  // namespace

// Score-P 7 and later: PROGRAM_BEGIN/END open and close the program's region (artificial,
// measurement system, named after the executable), the profile's root call path above main.
TEST(TraceReader, ProgramBeginOpensTheProgramRegion) {
  Trace t(shared("ping-pong/traces.otf2"));
  const auto& regions = t.definitions().regions;
  ProgramEvents sink;
  t.read(t.all_locations(), sink);
  ASSERT_EQ(sink.seen.size(), 4u);  // a begin and an end on each of the two processes
  for (const auto& e : sink.seen) {
    ASSERT_NE(e.region, kNone);
    EXPECT_EQ(regions[e.region].name, "ping-pong.otf2");
    EXPECT_EQ(regions[e.region].role, "artificial");
  }
  const auto p = trace_profile(t, t.all_locations());
  const auto paths = call_paths(p);
  ASSERT_FALSE(paths.empty());
  EXPECT_EQ(paths[0], "ping-pong.otf2");
  EXPECT_NE(std::find(paths.begin(), paths.end(), "ping-pong.otf2/int main(int, char**)/MPI_Send"), paths.end());
  EXPECT_EQ(std::count(p.cnode_parents.begin(), p.cnode_parents.end(), cubescale::cube::kNoParent), 1);

  // A synthetic trace where only rank 0 records its program: its root is the program, rank 1's main.
  const auto dir = fs::temp_directory_path() / ("cubescale_trace_program_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  write_mpi_trace(dir.string(), "prog", {{{"main", 10, 90, {}, 0}, {"MPI_Send", 20, 30, {1}, 0}},
                                         {{"MPI_Recv", 20, 40, {0}, 0}}}, 100);
  Trace s((dir / "prog.otf2").string());
  const auto q = trace_profile(s, s.all_locations());
  const auto synthetic = call_paths(q);
  EXPECT_EQ(synthetic, (std::vector<std::string>{"prog", "prog/main", "prog/main/MPI_Send", "main", "main/MPI_Recv"}));
  // The program's own time on rank 0: before main (10 ns) and after it (10 ns).
  std::size_t time = 0;
  while (q.metrics[time].uniq_name != "time") ++time;
  // (The profile's time is inclusive: the program's 100 ns less main's 80 ns.)
  double program = 0, main = 0;
  std::memcpy(&program, q.values[time].row(0), sizeof program);
  std::memcpy(&main, q.values[time].row(1), sizeof main);
  EXPECT_NEAR(program, 100e-9, 1e-15);
  EXPECT_NEAR(program - main, 20e-9, 1e-15);
  EXPECT_THROW(write_mpi_trace(dir.string(), "late", {{{"MPI_Barrier", 1, 2, {}, 0}, {"main", 10, 90, {}, 0}}}, 100),
               std::invalid_argument);
  EXPECT_THROW(write_mpi_trace(dir.string(), "outside", {{{"main", 10, 90, {}, 0}, {"MPI_Barrier", 91, 92, {}, 0}}}, 100),
               std::invalid_argument);
  EXPECT_FALSE(fs::exists(dir / "late.otf2"));
  fs::remove_all(dir);
}

// Another writer's order: PROGRAM_BEGIN inside main (and PROGRAM_END after it) stays a plain
// event, so main's Leave still nests; the profile's root is main.
TEST(TraceReader, ProgramBeginInsideARegionStaysPlain) {
  using E = cubescale::trace_tests::OneLocationEvent;
  const auto dir = fs::temp_directory_path() / ("cubescale_trace_inner_program_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const auto anchor = cubescale::trace_tests::write_one_location(
      dir, "t",
      {{"main", "main"}, {"prog", "/bin/prog", OTF2_REGION_ROLE_ARTIFICIAL, OTF2_PARADIGM_MEASUREMENT_SYSTEM}},
      {{E::Enter, 1, 0}, {E::ProgramBegin, 2}, {E::Leave, 3, 0}, {E::ProgramEnd, 4}}, "/bin/prog");
  Trace t(anchor);
  ProgramEvents sink;
  t.read(t.all_locations(), sink);
  ASSERT_EQ(sink.seen.size(), 2u);
  EXPECT_EQ(sink.seen[0].region, kNone);
  EXPECT_EQ(sink.seen[1].region, kNone);
  const auto p = trace_profile(t, t.all_locations());
  EXPECT_EQ(call_paths(p), std::vector<std::string>{"main"});
  fs::remove_all(dir);
}

// Clock properties of 0 ticks per second (a damaged definition) were read as 1 tick/s, silently:
// a trace of 361 ns lasted 361 s. Now its ticks are taken for nanoseconds, and a warning says so.
TEST(TraceReader, ZeroTicksPerSecondIsAWarnedGuess) {
  using E = cubescale::trace_tests::OneLocationEvent;
  const auto dir = fs::temp_directory_path() / ("cubescale_trace_zero_clock_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const auto write = [&](const std::string& name, std::uint64_t ticks_per_second) {
    return cubescale::trace_tests::write_one_location(dir, name, {{"main", "main"}}, {{E::Enter, 0, 0}, {E::Leave, 360, 0}},
                                                      name, {}, {}, ticks_per_second);
  };
  Trace t(write("zero", 0));
  EXPECT_EQ(t.definitions().clock.resolution, 1000000000u);
  EXPECT_EQ(t.definitions().clock.length, 361u);
  ASSERT_EQ(t.definitions().warnings.size(), 1u);
  EXPECT_NE(t.definitions().warnings[0].find("0 ticks per second"), std::string::npos);
  Trace ok(write("ns", 1000000000));
  EXPECT_TRUE(ok.definitions().warnings.empty());
  fs::remove_all(dir);
}

// A location whose definition announces more events than its file can hold is refused before
// anyone reserves memory for them (here 2^32 events of a 1 KB file).
TEST(TraceReader, AnnouncedEventsAreBoundedByTheFile) {
  const auto dir = copy_trace("ping-pong", "announced");
  std::string defs;
  {
    std::ifstream in(dir / "traces.def", std::ios::binary);
    defs.assign(std::istreambuf_iterator<char>(in), {});
  }
  // Location 0's record: type 0x0e, length 7, self 0, name (string 12), type 1 (CPU thread),
  // 60 events as a compressed integer (a byte count, then the bytes), group 0.
  const std::string record("\x0e\x07\x00\x01\x0c\x01\x01\x3c\x00", 9);
  Trace before((dir / "traces.otf2").string());
  ASSERT_EQ(before.definitions().locations[0].events, 60u);
  const auto at = defs.find(record);
  ASSERT_NE(at, std::string::npos);
  // The same record announcing 2^32 events: a 5-byte count, 4 bytes more in the record.
  defs.replace(at, record.size(), std::string("\x0e\x0b\x00\x01\x0c\x01\x05\x00\x00\x00\x00\x01\x00", 13));
  {
    std::ofstream out(dir / "traces.def", std::ios::binary | std::ios::trunc);
    out << defs;
  }
  Trace t((dir / "traces.otf2").string());
  ASSERT_EQ(t.definitions().locations[0].events, std::uint64_t(1) << 32);
  try {
    t.announced_events(0);
    ADD_FAILURE() << "no error for 2^32 announced events";
  } catch (const cubescale::FormatError& e) {
    EXPECT_EQ(e.member(), "traces/0.evt");
  }
  EXPECT_THROW(count_events(t, {0}), cubescale::FormatError);
  fs::remove_all(dir);
}
