// Tracing during a measurement: the recorder's Enter/Leave (filters and depth limit as the
// profile), MPI events, buffers of a fixed size flushed while recording (the flush a region of
// the profile), two ranks' parts merged into one archive that the reader reads back exactly.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <thread>

#include "cubescale/common/format_error.hpp"
#include "cubescale/measure/trace_writer.hpp"
#include "cubescale/trace/reader.hpp"

using namespace cubescale::measure;
namespace fs = std::filesystem;
using cubescale::trace::EventType;

namespace {

fs::path fresh_directory(const std::string& name) {
  auto d = fs::temp_directory_path() / ("cubescale_trace_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(d);
  return d;
}

std::uint64_t count(const std::vector<std::uint64_t>& counts, EventType t) { return counts[std::size_t(t)]; }

// Moves a rank's event files next to the archive's definitions (the MPI layer's job).
void move_events(const fs::path& part, const fs::path& archive) {
  fs::create_directories(archive / "traces");
  for (const auto& f : fs::directory_iterator(part / "traces"))
    fs::rename(f.path(), archive / "traces" / f.path().filename());
}

}  // namespace

TEST(TraceWriter, TwoRanksFiltersDepthMpiEventsAndFlushes) {
  const auto dir = fresh_directory("ranks");
  std::vector<std::string> parts;
  std::uint64_t flushes = 0;
  for (std::uint32_t rank = 0; rank < 2; ++rank) {
    RegionFilter filter;
    filter.exclude("hidden");
    Recorder r(filter, 3);
    // Rank 1 registers its regions in another order: unification maps them.
    const auto main_r = rank == 0 ? r.region("main") : r.region("work");
    const auto work = rank == 0 ? r.region("work") : r.region("main");
    const auto hidden = r.region("hidden");
    const auto send = r.region("MPI_Send", "", -1, "mpi", "point2point");
    auto writer = std::make_shared<TraceWriter>((dir / ("rank" + std::to_string(rank))).string(), rank, 512 * 1024);
    writer->set_world_size(2);
    writer->add_clock_offset({static_cast<std::uint64_t>(now()), rank == 0 ? 0 : 1000, 10.0});
    r.set_trace(writer);
    auto* t = r.add_thread("Master thread");
    const auto sub = writer->communicator(kWorldComm, {0, 1});  // a Dup of MPI_COMM_WORLD
    t->enter(rank == 0 ? main_r : work, true, now());  // "main" on both ranks
    const int n = rank == 0 ? 40000 : 10;  // rank 0 fills its 512 KiB buffer twice
    for (int i = 0; i < n; ++i) {
      t->enter(hidden, r.recorded(hidden), now());  // not recorded: no events
      t->enter(rank == 0 ? work : main_r, true, now());
      t->enter(work, true, now());
      t->enter(work, true, now());  // below the depth limit of 3: a COLLAPSE, as in the profile
      t->exit(now());
      t->exit(now());
      t->exit(now());
      t->exit(now());
    }
    t->enter(send, true, now());
    t->trace()->send(1 - rank, sub, 7, 64, now());
    t->trace()->collective_begin(now());
    t->trace()->collective_end("MPI_Allreduce", 0, ThreadTrace::kNoRoot, 8, 8, now());
    t->exit(now());
    std::thread([&] {  // a second thread: a location of its own
      auto* u = r.add_thread("thread 1");
      u->enter(send, true, now());
      u->exit(now());
    }).join();
    t->exit(now());
    if (rank == 0) flushes = writer->flushes();
    auto d = writer->close(r, "node0", "MPI Rank " + std::to_string(rank));
    EXPECT_EQ(d.locations.size(), 2u);
    parts.push_back(d.bytes());
    if (rank == 0) {  // the flushes are visits of "TRACE BUFFER FLUSH" in the profile
      const auto p = r.to_profile();
      bool found = false;
      for (const auto& region : p.regions) found |= region.name == "TRACE BUFFER FLUSH";
      EXPECT_TRUE(found);
    }
  }
  EXPECT_GE(flushes, 2u);  // 40000 x 4 events of ~12 bytes do not fit into 512 KiB twice
  const auto archive = dir / "archive";
  EXPECT_EQ(write_trace_archive(archive.string(), parts), 4u);
  move_events(dir / "rank0", archive);
  move_events(dir / "rank1", archive);

  cubescale::trace::Trace trace((archive / "traces.otf2").string());
  const auto& defs = trace.definitions();
  ASSERT_EQ(defs.locations.size(), 4u);
  const auto counts = cubescale::trace::count_events(trace, trace.all_locations());
  // Rank 0's master: main, 40000 x (work > work > COLLAPSE), MPI_Send: Enter = Leave = 1 + 120000 + 1.
  EXPECT_EQ(count(counts[0], EventType::Enter), 120002u);
  EXPECT_EQ(count(counts[0], EventType::Leave), 120002u);
  EXPECT_EQ(count(counts[0], EventType::BufferFlush), flushes);
  EXPECT_EQ(count(counts[0], EventType::MpiSend), 1u);
  EXPECT_EQ(count(counts[0], EventType::MpiCollectiveEnd), 1u);
  EXPECT_EQ(count(counts[2], EventType::Enter), 32u);
  EXPECT_EQ(count(counts[1], EventType::Enter), 1u);  // rank 0's second thread
  EXPECT_EQ(count(counts[3], EventType::Enter), 1u);
  fs::remove_all(dir);
}

TEST(TraceWriter, DefinitionBytesRoundTripAndRejectGarbage) {
  TraceDefinitions d;
  d.rank = 3, d.host = "n1", d.process = "MPI Rank 3", d.world_size = 4;
  d.regions.push_back({"main", "app.py", "python", "function", 1, true, false});
  d.locations.push_back({3u << 16, "Master thread", 42});
  d.communicators.push_back({0, 0, {1, 3}});
  d.offsets.push_back({100, -5, 1.5});
  d.chunk_size = 1 << 20;
  const auto e = TraceDefinitions::from_bytes(d.bytes());
  EXPECT_EQ(e.bytes(), d.bytes());
  EXPECT_EQ(e.regions[0].name, "main");
  EXPECT_EQ(e.communicators[0].members, (std::vector<std::uint32_t>{1, 3}));
  auto bytes = d.bytes();
  for (std::size_t n = 0; n < bytes.size(); ++n)  // every truncation, and one byte too many
    EXPECT_THROW(TraceDefinitions::from_bytes(bytes.substr(0, n)), cubescale::FormatError) << n;
  EXPECT_THROW(TraceDefinitions::from_bytes(bytes + "x"), cubescale::FormatError);
  EXPECT_THROW(TraceDefinitions::from_bytes("garbage"), cubescale::FormatError);
  bytes[4 + 4] = '\xff';  // the host's length: larger than the bytes
  EXPECT_THROW(TraceDefinitions::from_bytes(bytes), cubescale::FormatError);
}

TEST(TraceWriter, FlushesWhileNewCallPathsAppear) {
  // Flushes land on enters and on leaves while the call tree keeps growing (its node vector
  // moves): the flush's own call path must not be added under a stale reference (ASan run).
  const auto dir = fresh_directory("growing");
  Recorder r;
  std::vector<RegionId> regions;
  for (int i = 0; i < 500; ++i) regions.push_back(r.region("f" + std::to_string(i)));
  auto writer = std::make_shared<TraceWriter>((dir / "rank0").string(), 0, 256 * 1024);
  r.set_trace(writer);
  auto* t = r.add_thread("Master thread");
  const int n = 60000;
  for (int i = 0; i < n; ++i) {
    t->enter(regions[i % 500], true, now());
    t->enter(regions[(i * 7 + i / 500) % 500], true, now());  // ever new (parent, child) pairs
    t->exit(now());
    t->exit(now());
  }
  const auto flushes = writer->flushes();
  EXPECT_GE(flushes, 2u);
  const auto p = r.to_profile();
  std::uint64_t visits = 0, flush_visits = 0;
  const auto* v = reinterpret_cast<const std::uint64_t*>(p.values[0].data());
  for (std::size_t c = 0; c < p.cnode_count(); ++c)
    (p.regions[p.cnode_regions[c]].name == "TRACE BUFFER FLUSH" ? flush_visits : visits) += v[c];
  EXPECT_EQ(visits, 2u * n);
  EXPECT_EQ(flush_visits, flushes);
  auto d = writer->close(r, "node0", "Process 0");
  const auto archive = dir / "archive";
  write_trace_archive(archive.string(), {d.bytes()});
  move_events(dir / "rank0", archive);
  cubescale::trace::Trace trace((archive / "traces.otf2").string());
  const auto counts = cubescale::trace::count_events(trace, trace.all_locations());
  EXPECT_EQ(count(counts[0], EventType::Enter), 2u * n);
  EXPECT_EQ(count(counts[0], EventType::Leave), 2u * n);
  EXPECT_EQ(count(counts[0], EventType::BufferFlush), flushes);
  fs::remove_all(dir);
}

TEST(TraceWriter, FlushOnALeaveThatAddsTheCallPathWhichMovesTheTree) {
  // A thread with exactly as many call paths as its tree has room for (256), then enters and
  // leaves one of them until the buffer flushes: a flush on a leave adds "TRACE BUFFER FLUSH"
  // as a new root call path, and the tree's nodes move while the leave still updates its own
  // node (a use after free if the Leave event came first; the ASan run catches it). Padding
  // shifts where the flush lands; some flush must land on a leave.
  bool flush_on_a_leave = false;
  for (int pad = 0; pad < 8; ++pad) {
    const auto dir = fresh_directory("leave" + std::to_string(pad));
    Recorder r;
    std::vector<RegionId> regions;
    for (int i = 0; i < 256; ++i) regions.push_back(r.region("g" + std::to_string(i)));
    auto writer = std::make_shared<TraceWriter>((dir / "rank0").string(), 0, 256 * 1024);
    r.set_trace(writer);
    auto* t = r.add_thread("Master thread");
    for (auto g : regions) t->enter(g, true, now()), t->exit(now());  // 256 root call paths
    for (int p = 0; p < pad; ++p) t->trace()->collective_begin(now());
    while (writer->flushes() == 0) t->enter(regions[0], true, now()), t->exit(now());
    const auto p = r.to_profile();
    for (std::size_t c = 0; c < p.cnode_count(); ++c)
      if (p.cnode_parents[c] == cubescale::cube::kNoParent &&
          p.regions[p.cnode_regions[c]].name == "TRACE BUFFER FLUSH")
        flush_on_a_leave = true;
    writer->close(r, "node0", "Process 0");
    fs::remove_all(dir);
  }
  EXPECT_TRUE(flush_on_a_leave);
}

TEST(TraceWriter, DefinitionsReducedAlongATreeMapEveryRankToTheGlobalIds) {
  // Three ranks: rank 0 with children 1 and 2 (as the binary tree over 3 ranks). Each knows
  // "main" and "work", in different orders, one a region of its own and one the filter left
  // out; ranks 1 and 2 made the same communicator from MPI_COMM_WORLD, rank 2 a second one.
  auto local = [](std::uint32_t rank, std::vector<std::string> names, std::uint32_t made) {
    TraceDefinitions d;
    d.rank = rank;
    for (auto& n : names) d.regions.push_back({n, "app.py", "user", "function", 1, n != "hidden", false});
    for (std::uint32_t c = 0; c < made; ++c) d.communicators.push_back({kWorldComm, c, {1, 2}});
    return d;
  };
  TraceUnifyState r0(local(0, {"main", "work", "hidden"}, 0).bytes());
  TraceUnifyState r1(local(1, {"work", "main", "one"}, 1).bytes());
  TraceUnifyState r2(local(2, {"two", "main", "work"}, 2).bytes());
  r0.absorb(r1.end_up());
  r0.absorb(r2.end_up());
  const auto global = TraceDefinitions::from_bytes(r0.end_up());
  std::vector<std::string> names;
  for (const auto& g : global.regions) names.push_back(g.name);
  EXPECT_EQ(names, (std::vector<std::string>{"main", "work", "one", "two"}));
  ASSERT_EQ(global.communicators.size(), 2u);  // the shared one once, rank 2's second
  const auto down = r0.down("");
  ASSERT_EQ(down.size(), 2u);
  r1.down(down[0]);
  r2.down(down[1]);
  EXPECT_EQ(r0.region_map(), (std::vector<std::uint32_t>{0, 1, 0}));  // hidden: no events, any id
  EXPECT_EQ(r1.region_map(), (std::vector<std::uint32_t>{1, 0, 2}));
  EXPECT_EQ(r2.region_map(), (std::vector<std::uint32_t>{3, 0, 1}));
  // Communicators: world 0, self 1, the thread team 2 + made + rank, the made ones from 2.
  EXPECT_EQ(r1.comm_map(), (std::vector<std::uint32_t>{0, 1, 2 + 2 + 1, 2}));
  EXPECT_EQ(r2.comm_map(), (std::vector<std::uint32_t>{0, 1, 2 + 2 + 2, 2, 3}));
  EXPECT_GT(r0.bytes_received(), 0u);
  EXPECT_THROW(TraceUnifyState("not definitions"), cubescale::FormatError);
}
