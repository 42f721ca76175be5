// Late Receiver, clock-condition checks and time correction on synthetic MPI traces with
// stated timings; the per-location Late Receiver given what its receives tell.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <map>

#include "cubescale/analysis/clock_condition.hpp"
#include "cubescale/analysis/critical_path.hpp"
#include "cubescale/analysis/late_receiver.hpp"
#include "cubescale/analysis/time_correct.hpp"
#include "cubescale/analysis/waitstates.hpp"
#include "cubescale/common/format_error.hpp"
#include "cubescale/trace/synthetic_mpi.hpp"
#include "cubescale/trace/synthetic_omp.hpp"
#include "trace_files.hpp"

namespace fs = std::filesystem;
using namespace cubescale;
using namespace cubescale::analysis_tests;

TEST(LateReceiver, SynchronousSendWaitAndWaitall) {
  TempDir dir("lr");
  const auto path = write(dir,
                          {{{"MPI_Ssend", 100, 500, {1}}, {"MPI_Isend", 1000, 1010, {1}, 1}, {"MPI_Wait", 1100, 1500, {}},
                            {"MPI_Isend", 2000, 2010, {1}, 2}, {"MPI_Isend", 2020, 2030, {2}, 2},
                            {"MPI_Waitall", 2100, 2600, {}}},
                           {{"MPI_Recv", 400, 510, {0}}, {"MPI_Irecv", 1300, 1310, {0}, 1}, {"MPI_Wait", 1400, 1450, {0}, 1},
                            {"MPI_Recv", 2300, 2610, {0}, 2}},
                           {{"MPI_Recv", 2400, 2620, {0}, 2}}},
                          3000);
  trace::Trace t(path);
  analysis::AnalysisStats stats;
  const auto p = analysis::analyze(t, t.all_locations(), &stats);
  const auto lr = by_call(p, "mpi_latereceiver");
  ASSERT_EQ(lr.size(), 3u);
  EXPECT_NEAR(lr.at({0, "MPI_Ssend"}), 300e-9, 1e-18);
  EXPECT_NEAR(lr.at({0, "MPI_Wait"}), 200e-9, 1e-18);
  EXPECT_NEAR(lr.at({0, "MPI_Waitall"}), 300e-9, 1e-18);
  const auto& s = stats.patterns[std::size_t(analysis::Pattern::LateReceiver)];
  EXPECT_EQ(s.count, 3u);
  EXPECT_EQ(s.sum, 800u);
  ASSERT_EQ(s.top.size(), 3u);
  EXPECT_EQ(s.top[0].ticks, 300u);
  EXPECT_EQ(s.top[2].enter, 1100u);
}

// The per-location computation needs nothing but its own records and, per send, its receive's
// posting time: what a distributed replay passes.
TEST(LateReceiver, PerLocationFromPostingTimes) {
  analysis::LocationRecords own;
  own.location = 0;
  own.sends.resize(3);
  // an MPI_Ssend is its own completing call; the MPI_Isends have their completions beside
  own.sends[0].enter = 100, own.sends[0].leave = 500, own.sends[0].cnode = 1, own.sends[0].call = 1;
  own.sends[0].beside_bits = std::uint8_t(analysis::Beside::Own);
  own.sends[1].beside_bits = own.sends[2].beside_bits = std::uint8_t(analysis::Beside::Extra);
  for (auto i : {1, 2})
    analysis::hold_completion(own.sends[i], {600, 900, 2, 2, analysis::SendCompletionKind::WaitMulti});
  analysis::PointToPointExtras x;
  x.location = 0;
  for (auto i : {1, 2}) x.completion_enter.push_back(own.sends[i].enter, 600);  // as distances from the enters
  analysis::Severities sev;
  sev.cnodes = 3;
  sev.locations = 1;
  sev.values.assign(std::size_t(analysis::Pattern::Count), std::vector<double>(3, 0.0));
  sev.present.assign(std::size_t(analysis::Pattern::Count), false);
  // posted inside the Ssend (+150), inside the Waitall (+100, +250: the largest counts)
  analysis::late_receiver(own, x, {250, 700, 850}, {}, 0, 1.0, sev);
  const auto& v = sev.values[std::size_t(analysis::Pattern::LateReceiver)];
  EXPECT_EQ(v[1], 150.0);
  EXPECT_EQ(v[2], 250.0);
  // a receive posted before the send or after it completed: no wait
  std::fill(sev.values[std::size_t(analysis::Pattern::LateReceiver)].begin(),
            sev.values[std::size_t(analysis::Pattern::LateReceiver)].end(), 0.0);
  analysis::late_receiver(own, x, {50, 900, analysis::kNoTime}, {}, 0, 1.0, sev);
  EXPECT_EQ(v[1] + v[2], 0.0);
}

// The extras' times as 32-bit distances from their records' enters: those on the unusual side
// or 2^32 - 2 ticks or more away are kept whole beside, found by entry also when they were set
// out of entry order (an MPI_Isend completed after a later one); kNoTime has a mark of its own.
TEST(LateReceiver, NearTimesKeepEveryTime) {
  constexpr std::uint64_t far = std::uint64_t(1) << 32, base = 7'000'000'000'000;
  analysis::NearTimes after(true), before(false);
  const std::vector<std::pair<std::uint64_t, std::uint64_t>> cases = {
      {base, base},                    // no distance
      {base, base + far - 3},          // the farthest kept as a distance
      {base, base + far - 2},          // whole beside
      {base, base + 5 * far},          // whole beside
      {base, base - 1},                // on the unusual side: whole beside
      {base, analysis::kNoTime},       // never completed inside a call
      {0, 12},
  };
  for (const auto& [reference, time] : cases) after.push_back(reference, analysis::kNoTime);
  for (std::size_t k = cases.size(); k-- > 0;) after.set(k, cases[k].first, cases[k].second);  // out of order
  after.finish();
  for (const auto& [reference, time] : cases)
    before.push_back(reference, time == analysis::kNoTime ? time : 2 * reference - std::min(time, 2 * reference));
  before.finish();
  EXPECT_EQ(after.far_size(), 3u);
  EXPECT_EQ(before.far_size(), 3u);
  for (std::size_t k = 0; k < cases.size(); ++k) {
    const auto [reference, time] = cases[k];
    EXPECT_EQ(after.at(k, reference), time) << k;
    const auto mirrored = time == analysis::kNoTime ? time : 2 * reference - std::min(time, 2 * reference);
    EXPECT_EQ(before.at(k, reference), mirrored) << k;
  }
  EXPECT_EQ(after.bytes(), cases.size() * 4 + 3 * 16);
  // set anew: an entry far before and near now leaves the list beside
  after.set(3, base, base + 1);
  EXPECT_EQ(after.far_size(), 2u);
  EXPECT_EQ(after.at(3, base), base + 1);
  EXPECT_EQ(after.at(4, base), base - 1);
  after.clear();
  EXPECT_EQ(after.bytes(), 0u);
}

TEST(ClockCondition, CountsAndTimeCorrection) {
  TempDir dir("clc");
  const auto path = write(dir,
                          {{{"MPI_Send", 100, 110, {1}}, {"MPI_Barrier", 300, 400, {}}},
                           {{"MPI_Recv", 50, 90, {0}}, {"MPI_Barrier", 420, 430, {}}}},
                          500);
  trace::Trace t(path);
  analysis::AnalysisStats stats;
  auto p = analysis::analyze(t, t.all_locations(), &stats);
  EXPECT_EQ(stats.p2p_violations, 1u);
  EXPECT_EQ(stats.collective_violations, 1u);
  const auto counted = by_call(p, "clock_violations");
  ASSERT_EQ(counted.size(), 2u);
  EXPECT_EQ(counted.at({1, "MPI_Recv"}), 1.0);
  EXPECT_EQ(counted.at({0, "MPI_Barrier"}), 1.0);
  p = analysis::analyze(t, t.all_locations(), &stats, {true, 0.0});
  EXPECT_EQ(stats.corrected_jumps, 2u);
  EXPECT_TRUE(by_call(p, "clock_violations").empty());
  EXPECT_NEAR(by_call(p, "mpi_latesender").at({1, "MPI_Recv"}), 50e-9, 1e-18);
  EXPECT_NEAR(by_call(p, "mpi_barrier_wait").at({0, "MPI_Barrier"}), 130e-9, 1e-18);
}

TEST(ClockCondition, CollectiveRules) {
  EXPECT_EQ(analysis::sync_rule(0), analysis::SyncRule::AllEnter);         // barrier
  EXPECT_EQ(analysis::sync_rule(1), analysis::SyncRule::RootEnter);        // bcast
  EXPECT_EQ(analysis::sync_rule(3), analysis::SyncRule::AllEnterAtRoot);   // gatherv
  EXPECT_EQ(analysis::sync_rule(14), analysis::SyncRule::EnterUpToMine);   // scan
  EXPECT_EQ(analysis::sync_rule(analysis::kInitOp), analysis::SyncRule::AllEnter);
  // A broadcast's non-root may leave before another non-root enters; not before the root.
  TempDir dir("bcast");
  const auto path = write(dir,
                          {{{"MPI_Bcast", 100, 110, {0}}}, {{"MPI_Bcast", 50, 90, {0}}}, {{"MPI_Bcast", 200, 210, {0}}}},
                          500);
  trace::Trace t(path);
  analysis::AnalysisStats stats;
  analysis::analyze(t, t.all_locations(), &stats);
  EXPECT_EQ(stats.collective_violations, 1u);  // rank 1 left at 90, the root entered at 100
}

TEST(ClockCondition, CycleRaisesFormatError) {
  TempDir dir("cycle");
  const auto path = write(dir, {{{"MPI_Recv", 0, 50, {1}}, {"MPI_Send", 60, 70, {1}}},
                                {{"MPI_Recv", 0, 50, {0}}, {"MPI_Send", 60, 70, {0}}}},
                          100);
  trace::Trace t(path);
  try {
    analysis::analyze(t, t.all_locations(), nullptr, {true, 0.0});
    FAIL() << "no error";
  } catch (const FormatError& e) {
    EXPECT_NE(std::string(e.what()).find("cannot be corrected"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(".evt"), std::string::npos) << e.what();
  }
}

// Non-blocking collectives: a completion call waits for (and must not be left before) the
// latest start, the root's start (non-roots), the latest start at the root, the latest ranked
// up to the member (scans).
TEST(ClockCondition, NonBlockingReferences) {
  using analysis::kNoTime;
  const std::vector<std::uint32_t> locations{0, 1, 2};
  const std::vector<std::uint64_t> starts{100, 300, 200};
  EXPECT_EQ(analysis::nonblocking_references(6, kNoTime, locations, starts),
            (std::vector<std::uint64_t>{300, 300, 300}));  // allreduce
  EXPECT_EQ(analysis::nonblocking_references(1, 2, locations, starts),
            (std::vector<std::uint64_t>{200, 200, kNoTime}));  // bcast from location 2
  EXPECT_EQ(analysis::nonblocking_references(2, 0, locations, starts),
            (std::vector<std::uint64_t>{300, kNoTime, kNoTime}));  // gather to location 0
  EXPECT_EQ(analysis::nonblocking_references(14, kNoTime, locations, starts),
            (std::vector<std::uint64_t>{100, 300, 300}));  // scan
}

TEST(ClockCondition, NonBlockingCountsAndTimeCorrection) {
  TempDir dir("nbclc");
  const auto path = write(dir,
                          {{{"MPI_Iallreduce", 100, 110, {}}, {"MPI_Wait", 150, 200, {}}},
                           {{"MPI_Iallreduce", 300, 310, {}}, {"MPI_Wait", 320, 400, {}}}},
                          500);
  trace::Trace t(path);
  analysis::AnalysisStats stats;
  auto p = analysis::analyze(t, t.all_locations(), &stats);
  EXPECT_EQ(stats.collective_violations, 1u);  // rank 0 left at 200, rank 1 started at 300
  EXPECT_EQ(by_call(p, "clock_violations").at({0, "MPI_Wait"}), 1.0);
  EXPECT_NEAR(by_call(p, "mpi_wait_nxn").at({0, "MPI_Wait"}), 50e-9, 1e-18);
  p = analysis::analyze(t, t.all_locations(), &stats, {true, 0.0});
  EXPECT_EQ(stats.corrected_jumps, 1u);
  EXPECT_TRUE(by_call(p, "clock_violations").empty());
  // the leave jumps to 300; the Wait's enter moves along the ramp from the start: 150 -> 200
  EXPECT_NEAR(by_call(p, "mpi_wait_nxn").at({0, "MPI_Wait"}), 100e-9, 1e-18);
}

// OpenMP (clc's third kind): a worker's team begin before the fork, its barrier left before
// the master entered, its team end after the join.
TEST(ClockCondition, OpenMpCountsAndTimeCorrection) {
  TempDir dir("ompclc");
  trace::OmpParallel region{100, 500, {{{"ibarrier", 200, 300}}, {{"ibarrier", 150, 160}}}, {100, 80}, {500, 520}};
  trace::write_omp_trace(dir.path.string(), "omp", {region}, 2, 1000);
  trace::Trace t((dir.path / "omp.otf2").string());
  analysis::AnalysisStats stats;
  auto p = analysis::analyze(t, t.all_locations(), &stats);
  EXPECT_EQ(stats.omp_violations, 3u);
  EXPECT_EQ(stats.p2p_violations + stats.collective_violations, 0u);
  EXPECT_EQ(by_call(p, "clock_violations").size(), 3u);
  EXPECT_NEAR(by_call(p, "omp_ibarrier_wait").at({1, "!$omp implicit barrier @synthetic.c:2"}), 10e-9, 1e-18);
  p = analysis::analyze(t, t.all_locations(), &stats, {true, 0.0});
  EXPECT_EQ(stats.corrected_jumps, 3u);
  EXPECT_TRUE(by_call(p, "clock_violations").empty());
  EXPECT_NEAR(by_call(p, "omp_ibarrier_wait").at({1, "!$omp implicit barrier @synthetic.c:2"}), 30e-9, 1e-18);
}

// scout's omp_management / omp_fork: threads entering the parallel region after the fork (fork
// part: enter - fork) and leaving it before the join (join - leave), on the region's call path.
TEST(OmpPatterns, ThreadManagement) {
  TempDir dir("ompteams");
  trace::OmpParallel region{100, 500, {{{"ibarrier", 200, 400}}, {{"ibarrier", 300, 400}}}, {100, 130}, {480, 450}};
  trace::write_omp_trace(dir.path.string(), "omp", {region}, 2, 1000);
  trace::Trace t((dir.path / "omp.otf2").string());
  const auto p = analysis::analyze(t, t.all_locations());
  const std::string parallel = "!$omp parallel @synthetic.c:1";
  const auto fork = by_call(p, "omp_fork"), management = by_call(p, "omp_management");
  EXPECT_EQ(fork.size(), 1u);
  EXPECT_NEAR(fork.at({1, parallel}), 30e-9, 1e-18);
  EXPECT_NEAR(management.at({0, parallel}), 20e-9, 1e-18);
  EXPECT_NEAR(management.at({1, parallel}), 80e-9, 1e-18);
}

// Hand-fed OpenMP streams on a synthetic trace's definitions (two threads of one process;
// region 0 main, 1 the parallel region, 2 its implicit barrier; team 0).
namespace {
struct OmpFeed {
  TempDir dir{"ompfeed"};
  std::unique_ptr<trace::Trace> t;
  std::unique_ptr<analysis::OmpObserver> omp;
  OmpFeed() {
    trace::OmpParallel region{100, 500, {{{"ibarrier", 200, 400}}, {{"ibarrier", 300, 400}}}, {}, {}};
    trace::write_omp_trace(dir.path.string(), "omp", {region}, 2, 1000);
    t = std::make_unique<trace::Trace>((dir.path / "omp.otf2").string());
    omp = std::make_unique<analysis::OmpObserver>(*t);
  }
  void operator()(trace::EventType type, std::uint32_t location, std::uint64_t time,
                  std::uint32_t region = trace::kNone, std::uint32_t cnode = 0) {
    trace::Event e;
    e.type = type, e.location = location, e.time = time, e.region = region, e.communicator = 0;
    omp->event(e, cnode);
  }
};
}  // namespace

// A parallel region entered before its thread's team begin (an order other writers may use;
// Score-P begins the team first) belongs to the team begun next: the worker's fork part is
// still enter - fork, its join part join - leave.
TEST(OmpPatterns, ThreadManagementWithTheEnterBeforeTheTeamBegin) {
  OmpFeed feed;
  auto& omp = *feed.omp;
  using T = trace::EventType;
  omp.begin_location(0);  // master: main (call path 0), the parallel region (1), its barrier (2)
  feed(T::Enter, 0, 0, 0, 0);
  feed(T::ThreadFork, 0, 100, trace::kNone, 0);
  feed(T::Enter, 0, 100, 1, 1);
  feed(T::ThreadTeamBegin, 0, 100, trace::kNone, 1);
  feed(T::Enter, 0, 200, 2, 2);
  feed(T::Leave, 0, 400, 2, 2);
  feed(T::ThreadTeamEnd, 0, 480, trace::kNone, 1);
  feed(T::Leave, 0, 480, 1, 1);
  feed(T::ThreadJoin, 0, 500, trace::kNone, 0);
  feed(T::Leave, 0, 1000, 0, 0);
  omp.begin_location(1);  // the worker enters at 130 and leaves at 450
  feed(T::Enter, 1, 130, 1, 1);
  feed(T::ThreadTeamBegin, 1, 130, trace::kNone, 1);
  feed(T::Enter, 1, 300, 2, 2);
  feed(T::Leave, 1, 400, 2, 2);
  feed(T::ThreadTeamEnd, 1, 450, trace::kNone, 1);
  feed(T::Leave, 1, 450, 1, 1);
  const auto sev = analysis::match_omp(omp, {0, 1}, 3, 1000000000);
  const auto& fork = sev.values[std::size_t(analysis::OmpPattern::Fork)];
  const auto& management = sev.values[std::size_t(analysis::OmpPattern::Management)];
  EXPECT_NEAR(fork[1 * 2 + 1], 30e-9, 1e-18);  // call path 1, column 1
  EXPECT_NEAR(fork[1 * 2 + 0], 0.0, 1e-18);
  EXPECT_NEAR(management[1 * 2 + 1], 80e-9, 1e-18);
  EXPECT_NEAR(management[1 * 2 + 0], 20e-9, 1e-18);
}

// Nested teams on one thread, each parallel region entered before its own team begin (outer:
// fork 100, join 900; inner: fork 400, join 500), and a nested parallel region without a team
// of its own: every visit is at its team's fork and join, so no management time (each visit
// bound to the enclosing team would give the inner one 700 ns).
TEST(OmpPatterns, ThreadManagementOfNestedTeams) {
  OmpFeed feed;
  auto& omp = *feed.omp;
  using T = trace::EventType;
  constexpr auto none = trace::kNone;
  omp.begin_location(0);  // call paths: 0 main, 1 outer parallel, 2 inner parallel, 3 a parallel region without a team
  feed(T::Enter, 0, 0, 0, 0);
  feed(T::ThreadFork, 0, 100, none, 0);
  feed(T::Enter, 0, 100, 1, 1);
  feed(T::ThreadTeamBegin, 0, 100, none, 1);
  feed(T::ThreadFork, 0, 400, none, 1);
  feed(T::Enter, 0, 400, 1, 2);
  feed(T::ThreadTeamBegin, 0, 400, none, 2);
  feed(T::ThreadTeamEnd, 0, 500, none, 2);
  feed(T::Leave, 0, 500, 1, 2);
  feed(T::ThreadJoin, 0, 500, none, 1);
  feed(T::Enter, 0, 600, 1, 3);  // no team begin of its own
  feed(T::Leave, 0, 700, 1, 3);
  feed(T::ThreadTeamEnd, 0, 900, none, 1);
  feed(T::Leave, 0, 900, 1, 1);
  feed(T::ThreadJoin, 0, 900, none, 0);
  feed(T::Leave, 0, 1000, 0, 0);
  ASSERT_EQ(omp.syncs().size(), 1u);
  ASSERT_EQ(omp.syncs()[0].parallels.size(), 3u);
  EXPECT_EQ(omp.syncs()[0].parallels[2].team, ~0u);  // the visit without a team begin has none
  const auto sev = analysis::match_omp(omp, {0}, 4, 1000000000);
  for (auto p : {analysis::OmpPattern::Fork, analysis::OmpPattern::Management})
    for (double v : sev.values[std::size_t(p)]) EXPECT_EQ(v, 0.0);
}

// A team begun and ended without a visit of its parallel region gives its team to no later
// visit: the next visit, entered before its own team begin, takes that one.
TEST(OmpPatterns, AVisitTakesNoFinishedTeam) {
  OmpFeed feed;
  using T = trace::EventType;
  feed.omp->begin_location(1);
  feed(T::ThreadTeamBegin, 1, 100);
  feed(T::ThreadTeamEnd, 1, 450);
  feed(T::Enter, 1, 600, 1, 1);
  feed(T::ThreadTeamBegin, 1, 600);
  feed(T::ThreadTeamEnd, 1, 700);
  feed(T::Leave, 1, 700, 1, 1);
  ASSERT_EQ(feed.omp->syncs()[0].parallels.size(), 1u);
  std::vector<std::uint32_t> begins;  // the groups of the location's team begins, in order
  for (const auto& s : feed.omp->syncs()[0].syncs)
    if (s.role == analysis::OmpSyncRole::TeamBegin) begins.push_back(s.group);
  ASSERT_EQ(begins.size(), 2u);
  EXPECT_NE(begins[0], begins[1]);
  EXPECT_EQ(feed.omp->syncs()[0].parallels[0].team, begins[1]);  // the second instance's
}

// A master whose parallel region is entered before its fork and team begin is no worker: no
// worker tail (scout's per-thread time after the last barrier) for it.
TEST(OmpPatterns, AMasterEnteringBeforeItsForkIsNoWorker) {
  OmpFeed feed;
  using T = trace::EventType;
  feed.omp->begin_location(0);
  feed(T::Enter, 0, 0, 0, 0);
  feed(T::Enter, 0, 100, 1, 1);
  feed(T::ThreadFork, 0, 100);
  feed(T::ThreadTeamBegin, 0, 100);
  feed(T::Enter, 0, 200, 2, 2);
  feed(T::Leave, 0, 400, 2, 2);
  feed(T::ThreadTeamEnd, 0, 480);
  feed(T::Leave, 0, 480, 1, 1);
  feed(T::ThreadJoin, 0, 500);
  feed(T::Leave, 0, 1000, 0, 0);
  EXPECT_TRUE(feed.omp->tails().empty());
}

// A team without a fork event (begun before the measurement): its barriers hand the critical
// path to no worker, which could not hand it back to the master at the fork.
TEST(OmpPatterns, BarriersOfATeamWithoutForkMoveNoPath) {
  OmpFeed feed;
  using T = trace::EventType;
  for (std::uint32_t l : {0u, 1u}) {
    feed.omp->begin_location(l);
    feed(T::ThreadTeamBegin, l, 100);
    feed(T::Enter, l, 100, 1, 1);
    feed(T::Enter, l, l == 0 ? 200 : 300, 2, 2);  // the master waits for the worker
    feed(T::Leave, l, 400, 2, 2);
    feed(T::Leave, l, 450, 1, 1);
    feed(T::ThreadTeamEnd, l, 450);
  }
  std::vector<std::vector<analysis::SyncPoint>> points(2);
  analysis::add_omp_sync_points(*feed.omp, points);
  EXPECT_TRUE(points[0].empty() && points[1].empty());
}

// Scalasca's synchronization points (collective_sync), on records made by hand: members in rank
// order, the times scout's cb_pre_coll_* would see.
namespace {
analysis::CollectiveRecord member(std::uint32_t location, std::uint32_t op, std::uint64_t enter, std::uint64_t leave,
                                  bool sends, bool receives, std::uint32_t root = trace::kNone) {
  analysis::CollectiveRecord c;
  c.location = location, c.op = op, c.enter = enter, c.leave = leave, c.root = root;
  c.sends = sends, c.receives = receives;
  return c;
}
std::vector<analysis::MemberSync> decide(const std::vector<analysis::CollectiveRecord>& records) {
  std::vector<const analysis::CollectiveRecord*> members;
  for (const auto& c : records) members.push_back(&c);
  std::vector<analysis::MemberSync> out;
  analysis::collective_sync(members, out);
  return out;
}
}  // namespace

TEST(SyncPoints, RecordsKeepTheirSizeAndPosition) {
  analysis::CollectiveRecord c;
  c.position = (std::uint64_t(1) << 48) - 1;
  c.sends = 1, c.receives = 1, c.self = 1;
  EXPECT_EQ(std::uint64_t(c.position), (std::uint64_t(1) << 48) - 1);
  EXPECT_EQ(sizeof(analysis::CollectiveRecord), 56u);
}

TEST(SyncPoints, NxNWithoutFullOverlapWaitsForTheLatestSender) {
  // allgather(v): rank 2 enters last (480) but sends nothing; rank 0 left at 460
  const auto s = decide({member(0, 6, 400, 460, true, true), member(1, 6, 420, 500, true, true),
                         member(2, 6, 480, 520, false, true)});
  EXPECT_TRUE(s[0].sync && s[1].sync);
  EXPECT_FALSE(s[2].sync);
  EXPECT_EQ(s[0].until, 420u);
  EXPECT_EQ(s[0].causer, 1u);
  EXPECT_EQ(s[1].causer, trace::kNone);  // the latest sender waits for nobody
  EXPECT_EQ(s[0].earliest_leave, 460u);
  EXPECT_EQ(s[0].reference, 420u);  // rank 0's leave at 460 follows it: no clock violation
  // with full overlap, everyone waits for the latest enter, sender or not
  const auto full = decide({member(0, 6, 400, 600, true, true), member(1, 6, 420, 600, true, true),
                            member(2, 6, 480, 600, false, true)});
  EXPECT_TRUE(full[0].sync && full[1].sync && full[2].sync);
  EXPECT_EQ(full[0].until, 480u);
}

TEST(SyncPoints, NoDataNoSynchronization) {
  // a broadcast whose root sends nothing, a gather whose root receives nothing, an alltoallv,
  // a barrier of one member
  for (const auto& records : {std::vector{member(0, 1, 100, 150, false, false, 0), member(1, 1, 10, 150, false, false, 0)},
                              std::vector{member(0, 2, 600, 750, false, false, 0), member(1, 2, 650, 750, true, false, 0)},
                              std::vector{member(0, 9, 1000, 1150, true, true), member(1, 9, 1050, 1150, true, true)},
                              std::vector{member(0, 0, 1200, 1210, false, false)}})
    for (const auto& s : decide(records)) {
      EXPECT_FALSE(s.sync);
      EXPECT_EQ(s.reference, ~std::uint64_t(0));
      EXPECT_EQ(s.causer, trace::kNone);
    }
}

TEST(SyncPoints, RootedOperationsAndScans) {
  // bcast of 8 bytes: rank 1 receives and waits for the root; rank 2 receives nothing
  const auto b = decide({member(0, 1, 260, 300, true, true, 0), member(1, 1, 200, 300, false, true, 0),
                         member(2, 1, 210, 300, false, false, 0)});
  EXPECT_TRUE(b[0].sync && b[1].sync);
  EXPECT_FALSE(b[2].sync);
  EXPECT_EQ(b[1].until, 260u);
  EXPECT_EQ(b[0].reference, ~std::uint64_t(0));  // the root depends on nobody
  // reduce: the latest member (2) sends nothing: the root waits for rank 1
  const auto r = decide({member(0, 12, 800, 950, true, true, 0), member(1, 12, 850, 950, true, false, 0),
                         member(2, 12, 900, 950, false, false, 0)});
  EXPECT_TRUE(r[0].sync && r[1].sync);
  EXPECT_FALSE(r[2].sync);
  EXPECT_EQ(r[0].until, 850u);
  EXPECT_EQ(r[0].causer, 1u);
  // scan: rank 1 sends nothing and is late; rank 2 waits for rank 0 only
  const auto sc = decide({member(0, 14, 300, 700, true, true), member(1, 14, 600, 700, false, true),
                          member(2, 14, 100, 700, true, true)});
  EXPECT_FALSE(sc[0].sync);
  EXPECT_FALSE(sc[1].sync);  // entered after the only sender before it
  EXPECT_TRUE(sc[2].sync);
  EXPECT_EQ(sc[2].until, 300u);
}
