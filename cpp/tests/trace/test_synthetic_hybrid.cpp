// The synthetic hybrid (MPI + OpenMP) trace writer (trace/synthetic_hybrid.hpp), read back with
// the project's OTF2 reader: locations, groups and communicators as Score-P defines them in a
// hybrid trace, the events of each thread, and the checks made before the archive exists.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "cubescale/trace/profile.hpp"
#include "cubescale/trace/reader.hpp"
#include "cubescale/trace/synthetic_hybrid.hpp"
#include "../analysis/trace_files.hpp"
#include "profile_by_path.hpp"

using namespace cubescale::trace;

namespace {

// 2 ranks x 2 threads. Rank 0: MPI_Init, a parallel region (fork 20, join 110) whose worker
// enters the implicit barrier late (90), MPI_Send to rank 1 at 120, MPI_Finalize. Rank 1:
// MPI_Init, MPI_Recv from rank 0 (20 to 140), a parallel region (fork 150, join 180) with an
// explicit barrier, MPI_Finalize.
std::vector<HybridRank> two_by_two() {
  OmpParallel first{20, 110, {{{"ibarrier", 30, 100}}, {{"ibarrier", 90, 100}}}};
  OmpParallel second{150, 180, {{{"barrier", 155, 170}}, {{"barrier", 160, 170}}}};
  return {{{{"MPI_Init", 0, 10, {}, 0}, {"MPI_Send", 120, 130, {1}, 0}, {"MPI_Finalize", 190, 195, {}, 0}}, {first}},
          {{{"MPI_Init", 0, 10, {}, 0}, {"MPI_Recv", 20, 140, {0}, 0}, {"MPI_Finalize", 190, 195, {}, 0}}, {second}}};
}

std::uint64_t count(const std::vector<std::uint64_t>& counts, EventType type) {
  return counts[static_cast<std::size_t>(type)];
}

}  // namespace

TEST(SyntheticHybrid, LocationsGroupsAndEventsAsScorePWritesThem) {
  cubescale::analysis_tests::TempDir dir("hybrid");
  const auto written = write_hybrid_trace(dir.path.string(), "h", two_by_two(), 2, 200);
  const Trace trace((dir.path / "h.otf2").string());
  const auto& defs = trace.definitions();

  ASSERT_EQ(defs.location_groups.size(), 2u);
  for (std::uint32_t p = 0; p < 2; ++p) {
    EXPECT_EQ(defs.location_groups[p].name, "MPI Rank " + std::to_string(p));
    EXPECT_EQ(defs.location_groups[p].type, "process");
  }
  ASSERT_EQ(defs.locations.size(), 4u);
  const std::vector<std::string> names = {"Master thread", "OMP thread 1", "Master thread", "OMP thread 1"};
  for (std::uint32_t l = 0; l < 4; ++l) {
    EXPECT_EQ(defs.locations[l].id, l);  // rank p's thread t is p * threads + t
    EXPECT_EQ(defs.locations[l].name, names[l]);
    EXPECT_EQ(defs.locations[l].type, "cpu_thread");
    EXPECT_EQ(defs.locations[l].group, l / 2);
  }

  // Groups: MPI's locations (the masters), MPI_COMM_WORLD's ranks, MPI_COMM_SELF; OpenMP's
  // locations (every thread) and one team per process (its threads' indices in that group).
  std::map<std::string, std::vector<std::vector<std::uint64_t>>> groups;  // "type paradigm" -> members
  for (const auto& g : defs.groups) groups[g.type + " " + g.paradigm].push_back(g.members);
  using Members = std::vector<std::vector<std::uint64_t>>;
  EXPECT_EQ(groups["comm_locations mpi"], (Members{{0, 2}}));
  EXPECT_EQ(groups["comm_group mpi"], (Members{{0, 1}}));
  EXPECT_EQ(groups["comm_self mpi"], (Members{{}}));
  EXPECT_EQ(groups["comm_locations openmp"], (Members{{0, 1, 2, 3}}));
  EXPECT_EQ(groups["comm_group openmp"], (Members{{0, 1}, {2, 3}}));
  EXPECT_EQ(groups.size(), 5u);
  std::vector<std::string> communicators;
  for (const auto& c : defs.communicators) communicators.push_back(c.name);
  EXPECT_EQ(communicators, (std::vector<std::string>{"MPI_COMM_WORLD", "MPI_COMM_SELF", "OpenMP team", "OpenMP team"}));
  ASSERT_EQ(defs.communicators.size(), 4u);
  EXPECT_EQ(defs.groups[defs.communicators[2].group].members, (std::vector<std::uint64_t>{0, 1}));
  EXPECT_EQ(defs.groups[defs.communicators[3].group].members, (std::vector<std::uint64_t>{2, 3}));

  // MPI regions carry Score-P's source file "MPI"; the OpenMP regions are there beside them.
  std::map<std::string, const Region*> regions;
  for (const auto& r : defs.regions) regions[r.name] = &r;
  ASSERT_TRUE(regions.count("MPI_Send"));
  EXPECT_EQ(regions["MPI_Send"]->file, "MPI");
  EXPECT_EQ(regions["MPI_Send"]->paradigm, "mpi");
  ASSERT_TRUE(regions.count("!$omp parallel @synthetic.c:1"));
  EXPECT_EQ(regions["!$omp parallel @synthetic.c:1"]->paradigm, "openmp");
  EXPECT_EQ(regions["main"]->id, 0u);

  const auto counts = count_events(trace, trace.all_locations());
  std::uint64_t total = 0;
  for (std::size_t l = 0; l < counts.size(); ++l) {
    std::uint64_t n = 0;
    for (auto c : counts[l]) n += c;
    EXPECT_EQ(n, defs.locations[l].events) << "location " << l;
    total += n;
  }
  EXPECT_EQ(total, written);
  // Rank 0's master: main, MPI_Init, parallel, implicit barrier, MPI_Send, MPI_Finalize.
  EXPECT_EQ(count(counts[0], EventType::Enter), 6u);
  EXPECT_EQ(count(counts[0], EventType::Leave), 6u);
  EXPECT_EQ(count(counts[0], EventType::ThreadFork), 1u);
  EXPECT_EQ(count(counts[0], EventType::ThreadJoin), 1u);
  EXPECT_EQ(count(counts[0], EventType::ThreadTeamBegin), 1u);
  EXPECT_EQ(count(counts[0], EventType::MpiSend), 1u);
  EXPECT_EQ(written, 17u * 2 + 6 * 2);  // masters 17 events each, workers 6
  // Workers: their team's events only (team begin/end, parallel, barrier).
  for (std::size_t l : {1u, 3u}) {
    EXPECT_EQ(count(counts[l], EventType::Enter), 2u);
    EXPECT_EQ(count(counts[l], EventType::ThreadTeamBegin), 1u);
    EXPECT_EQ(count(counts[l], EventType::ThreadTeamEnd), 1u);
    EXPECT_EQ(count(counts[l], EventType::ThreadFork), 0u);
  }
  EXPECT_EQ(count(counts[2], EventType::MpiRecv), 1u);
  EXPECT_EQ(count(counts[2], EventType::ThreadFork), 1u);

  // The master's call paths interleave the MPI calls and the parallel regions.
  const auto p = trace_profile(trace, trace.all_locations());
  const auto master = cubescale::trace_tests::visits_and_time(p, 0);
  EXPECT_EQ(master.at("main/MPI_Send"), (std::pair<std::uint64_t, double>{1, 10}));
  EXPECT_EQ(master.at("main/!$omp parallel @synthetic.c:1/!$omp implicit barrier @synthetic.c:2"),
            (std::pair<std::uint64_t, double>{1, 70}));
  const auto worker = cubescale::trace_tests::visits_and_time(p, 3);
  EXPECT_EQ(worker.at("main/!$omp parallel @synthetic.c:1/!$omp barrier @synthetic.c:3"),
            (std::pair<std::uint64_t, double>{1, 10}));
}

TEST(SyntheticHybrid, RefusesMpiCallsInsideParallelRegionsBeforeWriting) {
  cubescale::analysis_tests::TempDir dir("hybrid_refused");
  auto ranks = two_by_two();
  ranks[0].mpi[1] = {"MPI_Send", 100, 130, {1}, 0};  // starts before the join at 110
  try {
    write_hybrid_trace(dir.path.string(), "bad", ranks, 2, 200);
    FAIL() << "no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("rank 0: MPI_Send [100, 130] overlaps the parallel region [20, 110]"),
              std::string::npos)
        << e.what();
  }
  EXPECT_FALSE(std::filesystem::exists(dir.path / "bad.otf2"));
  // Teams larger than the threads, calls out of order, an unknown peer: refused as well.
  EXPECT_THROW(write_hybrid_trace(dir.path.string(), "bad", two_by_two(), 1, 200), std::invalid_argument);
  ranks = two_by_two();
  ranks[1].mpi[1].peers = {2};
  EXPECT_THROW(write_hybrid_trace(dir.path.string(), "bad", ranks, 2, 200), std::invalid_argument);
  EXPECT_FALSE(std::filesystem::exists(dir.path / "bad.otf2"));
  // A call may end where a region forks and begin where it joins.
  ranks = two_by_two();
  ranks[0].mpi[0] = {"MPI_Init", 0, 20, {}, 0};
  ranks[0].mpi[1] = {"MPI_Send", 110, 130, {1}, 0};
  EXPECT_GT(write_hybrid_trace(dir.path.string(), "touching", ranks, 2, 200), 0u);
}

// "main" as a rank's first call: PROGRAM_BEGIN, main around the calls and regions.
TEST(SyntheticHybrid, ProgramBeginAsScoreP7) {
  cubescale::analysis_tests::TempDir dir("hybrid_program");
  auto ranks = two_by_two();
  ranks[0].mpi.insert(ranks[0].mpi.begin(), MpiCall{"main", 0, 198, {}, 0});
  write_hybrid_trace(dir.path.string(), "prog", ranks, 2, 200);
  const Trace trace((dir.path / "prog.otf2").string());
  const auto counts = count_events(trace, trace.all_locations());
  EXPECT_EQ(count(counts[0], EventType::ProgramBegin), 1u);
  EXPECT_EQ(count(counts[0], EventType::ProgramEnd), 1u);
  EXPECT_EQ(count(counts[2], EventType::ProgramBegin), 0u);
  const auto p = trace_profile(trace, trace.all_locations());
  const auto master = cubescale::trace_tests::visits_and_time(p, 0);
  EXPECT_EQ(master.at("prog/main/MPI_Send"), (std::pair<std::uint64_t, double>{1, 10}));
  // A region outside main is refused.
  ranks[0].mpi[0].leave = 100;
  ranks[0].mpi.resize(2);
  EXPECT_THROW(write_hybrid_trace(dir.path.string(), "prog2", ranks, 2, 200), std::invalid_argument);
}
