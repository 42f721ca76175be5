// What the analysis writes beside the MPI patterns: the backward walk of the critical path on
// handmade sync points, and on synthetic traces the critical-path profile and the OpenMP
// barrier and lock patterns with their exact values.
#include "cubescale/analysis/critical_path.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <map>
#include <random>
#include <tuple>

#include "cubescale/analysis/clock_condition.hpp"
#include "cubescale/analysis/impact.hpp"
#include "cubescale/analysis/late_receiver.hpp"
#include "cubescale/analysis/replay.hpp"
#include "cubescale/analysis/waitstates.hpp"
#include "cubescale/cube/dtype.hpp"
#include "cubescale/trace/profile.hpp"
#include "cubescale/trace/synthetic.hpp"
#include "cubescale/trace/synthetic_mpi.hpp"
#include "../trace/one_location_trace.hpp"
#include "trace_files.hpp"
#include "cubescale/trace/synthetic_omp.hpp"

namespace fs = std::filesystem;
using namespace cubescale;
using analysis_tests::TempDir;

namespace {

// Nanoseconds of `metric` per (column, region of the call path), non-zero only.
std::map<std::pair<std::size_t, std::string>, double> by_call(const profile::LocalProfile& p, const std::string& metric) {
  std::size_t m = 0;
  while (m < p.metrics.size() && p.metrics[m].uniq_name != metric) ++m;
  EXPECT_LT(m, p.metrics.size()) << metric;
  std::map<std::pair<std::size_t, std::string>, double> out;
  if (m == p.metrics.size()) return out;
  for (std::size_t c = 0; c < p.cnode_count(); ++c)
    for (std::size_t l = 0; l < p.locations.size(); ++l) {
      double v;
      std::memcpy(&v, p.values[m].row(c) + l * 8, 8);
      if (v != 0) out[{l, p.regions[p.cnode_regions[c]].name}] = v * 1e9;
    }
  return out;
}

void expect(const std::map<std::pair<std::size_t, std::string>, double>& got,
            const std::map<std::pair<std::size_t, std::string>, double>& want, const char* what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (const auto& [key, ns] : want) {
    ASSERT_TRUE(got.count(key)) << what << ": " << key.first << " " << key.second;
    EXPECT_NEAR(got.at(key), ns, 1e-6) << what << ": " << key.first << " " << key.second;
  }
}

// Three locations inside one region from 0 to 90 (location 2: to 100).
analysis::SpanObserver three_spans() {
  analysis::SpanObserver spans(3);
  for (std::uint32_t l = 0; l < 3; ++l) {
    spans.begin_location(l);
    trace::Event e;
    e.type = trace::EventType::Enter;
    e.time = 0;
    spans.event(e, 0);
    e.type = trace::EventType::Leave;
    e.time = l == 2 ? 100 : 90;
    spans.event(e, 0);
  }
  return spans;
}

// A location's path is the one segment [from, to).
void expect_one_segment(const std::vector<analysis::Segment>& segments, std::uint64_t from, std::uint64_t to) {
  ASSERT_EQ(segments.size(), 1u);
  EXPECT_EQ(segments[0].from, from);
  EXPECT_EQ(segments[0].to, to);
}

}  // namespace

TEST(CriticalPath, WalkFollowsEachWaitToItsCause) {
  // Location 2 ends last (at 100); it waited 40 -> 60 for location 1, which waited 10 -> 30 for
  // location 0: the path is 0 [0, 30], 1 [30, 60], 2 [60, 100].
  std::vector<std::vector<analysis::SyncPoint>> points(3);
  points[1].push_back({10, 30, 30, 1, 0, 0, true, false});
  points[2].push_back({40, 60, 60, 2, 0, 1, true, false});
  const auto spans = three_spans();
  const auto segments = analysis::critical_path_segments(points, spans, {0, 1, 2}, {true, true, true},
                                                        analysis::PathWindow(3));  // no MPI_Init/Finalize
  expect_one_segment(segments[0], 0u, 30u);
  expect_one_segment(segments[1], 30u, 60u);
  expect_one_segment(segments[2], 60u, 100u);
}

TEST(CriticalPath, WalkRunsFromTheLastFinalizeBackToInit) {
  // scout's window: every location has MPI_Init (entered at 5, 6, 7) and MPI_Finalize (80, 85,
  // 85: location 1 is the first of the latest); location 1 waited 40 -> 55 for location 0, which
  // entered its operation at 60 (a clock violation: the path resumes at 60 all the same, as
  // scout's) and waited for nobody: 1 [55, 85], 0 [5, 60]. Without the window: 2 [0, 100].
  std::vector<std::vector<analysis::SyncPoint>> points(3);
  points[1].push_back({40, 55, 60, 1, 0, 0, true, false});
  const auto spans = three_spans();
  analysis::PathWindow window(3);
  window.init = {5, 6, 7};
  window.finalize = {80, 85, 85};
  window.has_init = window.has_finalize = true;
  auto segments = analysis::critical_path_segments(points, spans, {0, 1, 2}, {true, true, true}, window);
  expect_one_segment(segments[1], 55u, 85u);
  expect_one_segment(segments[0], 5u, 60u);
  EXPECT_TRUE(segments[2].empty());
  window.has_init = window.has_finalize = false;  // a process lacks them: the whole trace
  segments = analysis::critical_path_segments(points, spans, {0, 1, 2}, {true, true, true}, window);
  expect_one_segment(segments[2], 0u, 100u);
}

TEST(CriticalPath, LateSenderChainOnASyntheticTrace) {
  TempDir dir("chain");
  trace::write_mpi_trace(dir.path.string(), "t",
                         {{{"MPI_Send", 300, 310, {1}}, {"MPI_Barrier", 400, 900, {}}},
                          {{"MPI_Recv", 100, 320, {0}}, {"MPI_Send", 500, 510, {2}}, {"MPI_Barrier", 600, 900, {}}},
                          {{"MPI_Recv", 150, 520, {1}}, {"MPI_Barrier", 800, 900, {}}}},
                         1000);
  trace::Trace t((dir.path / "t.otf2").string());
  const auto p = analysis::analyze(t, t.all_locations());
  expect(by_call(p, "critical_path"),
         {{{0, "main"}, 400}, {{0, "MPI_Barrier"}, 100}, {{1, "MPI_Recv"}, 20}, {{1, "main"}, 180},
          {{2, "MPI_Recv"}, 20}, {{2, "main"}, 280}},
         "critical_path");
}

namespace {

// The one-process analysis takes its sync points, its message matching and its collective
// reductions from what it built once (the pairs, the instances, the records in their lists);
// each must give what the general steps (matching again, copying) give, field by field.
// Returns the sync points marked wrong-order.
std::size_t expect_one_process_steps_as_general(const trace::Trace& t) {
  const auto all = t.all_locations();
  const auto n = t.definitions().locations.size();
  analysis::Replay r(t, all, all);
  const auto& records = r.records();
  const analysis::CommunicatorRanks ranks(t.definitions());
  const auto pairs = analysis::pair_messages(records);
  const auto instances = analysis::collective_instances(records, ranks);
  const auto matched = analysis::sync_points(records, ranks, n);
  const auto paired = analysis::sync_points(records, pairs, instances, n);
  // analyze()'s way: the Late Sender points from the matching, the collectives' causers from
  // the reduction.
  auto made = analysis::sync_point_lists(records, n);
  analysis::Severities matching(r.cnode_count(), all, n);
  analysis::PairedSends sends(records, pairs);
  for (const auto& l : records) analysis::match_receives(t, l.receives, sends, matching, &made[l.location]);
  std::vector<std::uint32_t> causers;
  analysis::reduce_collectives(t, std::vector<bool>(n, true), records, instances, &causers);
  std::size_t collectives = 0;
  for (const auto& l : records) collectives += l.collectives.size();
  EXPECT_EQ(causers.size(), collectives) << t.path();  // the reduction from the instances gave them
  const auto shared = analysis::sync_points(records, pairs, instances, n, &causers, &made);
  std::size_t wrong_order = 0;
  auto same = [&](const std::vector<std::vector<analysis::SyncPoint>>& other, const char* how) {
    EXPECT_EQ(matched.size(), other.size()) << how;
    for (std::size_t l = 0; l < matched.size() && l < other.size(); ++l) {
      EXPECT_EQ(matched[l].size(), other[l].size()) << t.path() << " location " << l << " " << how;
      for (std::size_t i = 0; i < matched[l].size() && i < other[l].size(); ++i) {
        const auto &a = matched[l][i], &b = other[l][i];
        EXPECT_EQ(a.wait_end, b.wait_end) << how;
        EXPECT_EQ(a.resume, b.resume) << how;
        EXPECT_EQ(a.causer, b.causer) << how;
        EXPECT_EQ(std::uint32_t(a.cnode), std::uint32_t(b.cnode)) << how;
        EXPECT_EQ(a.late_sender, b.late_sender) << how;
        EXPECT_EQ(a.empty, b.empty) << how;
        EXPECT_EQ(a.wrong_order, b.wrong_order) << t.path() << " location " << l << " point " << i << " " << how;
      }
    }
  };
  same(paired, "from the pairs and instances");
  same(shared, "from the matching and the reduction");
  for (const auto& l : matched)
    for (const auto& p : l) wrong_order += p.wrong_order;
  analysis::Severities queued(r.cnode_count(), all, n), by_pairs(r.cnode_count(), all, n);
  analysis::SendQueues queues(records);
  analysis::PairedSends paired_sends(records, pairs);
  for (const auto& l : records) {
    analysis::match_receives(t, l.receives, queues, queued);
    analysis::match_receives(t, l.receives, paired_sends, by_pairs);
  }
  EXPECT_EQ(queued.values, by_pairs.values) << t.path();
  EXPECT_EQ(queued.present, by_pairs.present) << t.path();
  std::vector<analysis::CollectiveRecord> copy;
  for (const auto& l : records) copy.insert(copy.end(), l.collectives.begin(), l.collectives.end());
  const std::vector<bool> analyzed(n, true);
  const auto copied = analysis::reduce_collectives(t, analyzed, copy);
  // analyze()'s way: the clock checks' count decides the instances, the reduction takes that over.
  analysis::CollectiveDecisions decisions;
  analysis::count_clock_violations(records, pairs, instances, std::vector<std::uint32_t>(n, 0), r.cnode_count(), 1, 0,
                                   &decisions);
  std::vector<std::uint32_t> decided_causers;
  auto decided = analysis::reduce_collectives(t, analyzed, records, instances, &decided_causers, &decisions);
  EXPECT_TRUE(decisions.reductions.empty()) << "taken over";
  EXPECT_EQ(decided_causers, causers) << t.path();
  for (const auto& listed : {analysis::reduce_collectives(t, analyzed, records),
                              analysis::reduce_collectives(t, analyzed, records, instances), decided}) {
    EXPECT_EQ(copied.size(), listed.size());
    for (std::size_t i = 0; i < copied.size() && i < listed.size(); ++i) {
      EXPECT_EQ(copied[i].until, listed[i].until) << t.path() << " record " << i;
      EXPECT_EQ(copied[i].earliest_leave, listed[i].earliest_leave);
      EXPECT_EQ(copied[i].skip, listed[i].skip);
    }
  }
  return wrong_order;
}

}  // namespace

TEST(SyncPoints, OneProcessStepsGiveWhatTheGeneralStepsGive) {
  // Rank 1 waits for rank 0's late message, then receives rank 2's, sent earlier (wrong order);
  // collectives of every kind of synchronization, one on a reversed communicator and a self one.
  TempDir dir("paired");
  trace::write_mpi_trace(
      dir.path.string(), "t",
      {{{"MPI_Init", 0, 50, {}}, {"MPI_Send", 500, 510, {1}}, {"MPI_Barrier", 600, 700, {}}, {"MPI_Bcast", 720, 760, {0}},
        {"MPI_Scan", 800, 900, {}, 2}, {"MPI_Barrier", 910, 920, {}, 1}, {"MPI_Finalize", 950, 990, {}}},
       {{"MPI_Init", 0, 60, {}}, {"MPI_Recv", 100, 520, {0}}, {"MPI_Recv", 530, 540, {2}}, {"MPI_Barrier", 650, 700, {}},
        {"MPI_Bcast", 700, 760, {0}}, {"MPI_Scan", 850, 900, {}, 2}, {"MPI_Barrier", 905, 915, {}, 1},
        {"MPI_Finalize", 960, 990, {}}},
       {{"MPI_Init", 0, 40, {}}, {"MPI_Send", 200, 210, {1}}, {"MPI_Barrier", 680, 700, {}}, {"MPI_Bcast", 710, 760, {0}},
        {"MPI_Scan", 820, 900, {}, 2}, {"MPI_Barrier", 930, 940, {}, 1}, {"MPI_Finalize", 970, 990, {}}}},
      1000);
  EXPECT_EQ(expect_one_process_steps_as_general(trace::Trace((dir.path / "t.otf2").string())), 1u);
  for (const char* name : {"late-sender-barrier", "ping-pong", "bcast-scorep8", "jacobi-hybrid"})
    expect_one_process_steps_as_general(
        trace::Trace(std::string(CUBESCALE_SHARED_DATA) + "/otf2/" + name + "/traces.otf2"));
}

TEST(CriticalPath, WindowLateReceiverAndImpactOnASyntheticTrace) {
  // tests/test_analysis_critical_path.py has the hand computation: rank 0 enters MPI_Finalize
  // last; its MPI_Ssend waits 200 -> 400 as a Late Receiver, the path moves to rank 1's MPI_Recv
  // and ends at its MPI_Init.
  TempDir dir("window");
  trace::write_mpi_trace(dir.path.string(), "t",
                         {{{"MPI_Init", 10, 50, {}}, {"MPI_Ssend", 200, 500, {1}}, {"MPI_Finalize", 850, 900, {}}},
                          {{"MPI_Init", 20, 50, {}}, {"MPI_Recv", 400, 510, {0}}, {"MPI_Finalize", 800, 900, {}}}},
                         1000);
  trace::Trace t((dir.path / "t.otf2").string());
  const auto p = analysis::analyze(t, t.all_locations());
  expect(by_call(p, "critical_path"),
         {{{0, "main"}, 350}, {{0, "MPI_Ssend"}, 100}, {{1, "MPI_Init"}, 30}, {{1, "main"}, 350}}, "critical_path");
  auto impact = by_call(p, "critical_imbalance_impact");
  expect(impact, {{{0, "main"}, 15}, {{1, "main"}, 15}}, "critical_imbalance_impact");
  auto activities = by_call(p, "critical_path_activities");
  EXPECT_NEAR((activities[{0, "main"}]), 610, 1e-6);
  EXPECT_NEAR((activities[{1, "main"}]), 700, 1e-6);
}

TEST(CriticalPath, ImpactSumsAreExactInAnyOrder) {
  // Blobs merged in any grouping give the same bytes (the replay's ranks split the locations).
  profile::LocalProfile p;
  p.regions.resize(1);
  p.regions[0].name = "main";
  p.cnode_parents = {cube::kNoParent};
  p.cnode_regions = {0};
  p.locations.resize(3);
  cube::Metric m;
  m.uniq_name = "critical_path";
  m.dtype = *cube::parse_data_type("DOUBLE");
  p.metrics.push_back(m);
  cube::Severity s(m.dtype, 1, 3);
  const double v[3] = {0.1, 0.2, 0.3};
  std::memcpy(s.row(0), v, sizeof v);
  p.values.push_back(std::move(s));
  const auto all = analysis::impact_path_sums(p);
  const auto twice = analysis::merge_impact({all, all});
  EXPECT_EQ(analysis::merge_impact({twice}), analysis::merge_impact({all, analysis::merge_impact({all})}));
  EXPECT_NE(twice, analysis::merge_impact({all}));
}

namespace {

// Per location the [enter, leave] of its MPI calls (by region name) and its first and last
// Enter/Leave: where the critical path's segments start and end.
struct Calls final : trace::EventSink {
  const trace::Definitions& defs;
  std::vector<std::vector<std::pair<std::uint64_t, std::uint64_t>>> mpi;
  std::vector<std::uint64_t> first, last;
  std::vector<std::uint64_t> open;
  std::uint32_t at = 0;
  explicit Calls(const trace::Definitions& d)
      : defs(d), mpi(d.locations.size()), first(d.locations.size(), ~0ull), last(d.locations.size(), 0) {}
  void begin_location(std::uint32_t l) override { at = l, open.clear(); }
  void event(const trace::Event& e) override {
    if (e.type != trace::EventType::Enter && e.type != trace::EventType::Leave) return;
    first[at] = std::min(first[at], e.time);
    last[at] = std::max(last[at], e.time);
    if (e.type == trace::EventType::Enter) open.push_back(e.time);
    else if (!open.empty()) {
      if (defs.regions[e.region].name.rfind("MPI_", 0) == 0) mpi[at].push_back({open.back(), e.time});
      open.pop_back();
    }
  }
};

// Disjoint segments per location between points drawn by `draw` (sorted, paired).
template <class Draw>
std::vector<std::vector<analysis::Segment>> random_segments(const Calls& calls, std::mt19937_64& rng, Draw draw) {
  std::vector<std::vector<analysis::Segment>> out(calls.mpi.size());
  for (std::size_t l = 0; l < out.size(); ++l) {
    if (calls.first[l] > calls.last[l] || rng() % 4 == 0) continue;  // some locations off the path
    std::vector<std::uint64_t> points;
    for (int i = 0; i < 40; ++i) points.push_back(draw(l));
    std::sort(points.begin(), points.end());
    points.erase(std::unique(points.begin(), points.end()), points.end());
    for (std::size_t i = 0; i + 1 < points.size(); i += 2) out[l].push_back({points[i], points[i + 1]});
  }
  return out;
}

// The time lines of the pass attribute `segments` as the second read does, to the tick, on every
// location they do not hand back for reading again. Returns how many they hand back.
std::size_t expect_timeline_as_second_read(const trace::Trace& t, const std::vector<std::vector<analysis::Segment>>& segments) {
  const auto all = t.all_locations();
  analysis::PathTimeline timeline(t.definitions());
  const auto p = trace::trace_profile(t, all, nullptr, &timeline);
  analysis::CriticalPathObserver second(segments, all);
  trace::trace_profile(t, all, nullptr, &second);
  const auto want = second.values(p.cnode_count());
  std::vector<std::uint32_t> column(t.definitions().locations.size(), analysis::kNone);
  for (std::size_t c = 0; c < all.size(); ++c) column[all[c]] = static_cast<std::uint32_t>(c);
  std::vector<std::uint64_t> ticks(p.cnode_count() * all.size(), 0);
  const auto again = timeline.attribute(segments, column, all.size(), ticks);
  for (std::size_t c = 0; c < all.size(); ++c) {
    const bool reread = std::find(again.begin(), again.end(), all[c]) != again.end();
    for (std::size_t r = 0; r < p.cnode_count(); ++r) {
      const auto i = r * all.size() + c;
      if (reread) EXPECT_EQ(ticks[i], 0u) << t.path() << " location " << all[c];
      else EXPECT_EQ(static_cast<double>(ticks[i]), want[i]) << t.path() << " location " << all[c] << " row " << r;
    }
  }
  return again.size();
}

std::size_t on_path(const std::vector<std::vector<analysis::Segment>>& segments) {
  return static_cast<std::size_t>(std::count_if(segments.begin(), segments.end(), [](const auto& s) { return !s.empty(); }));
}

// Segments whose ends are MPI calls' enters and points inside MPI calls (where the critical
// path's start and end: exact without reading again where the calls have no nested regions), and
// segments with ends anywhere (mostly inside gaps: read again, but never wrong).
std::pair<std::size_t, std::size_t> expect_both_ways(const trace::Trace& t, std::uint64_t seed) {
  Calls calls(t.definitions());
  t.read(t.all_locations(), calls);
  std::mt19937_64 rng(seed);
  auto at_calls = random_segments(calls, rng, [&](std::size_t l) -> std::uint64_t {
    const auto& mine = calls.mpi[l];
    if (mine.empty()) return calls.first[l];
    const auto& [enter, leave] = mine[rng() % mine.size()];
    return rng() % 2 ? enter : enter + (leave - enter) * (rng() % 4) / 3;
  });
  auto anywhere = random_segments(calls, rng, [&](std::size_t l) -> std::uint64_t {
    return calls.first[l] + rng() % (calls.last[l] - calls.first[l] + 1);
  });
  EXPECT_GT(on_path(at_calls), 0u);
  return {expect_timeline_as_second_read(t, at_calls), expect_timeline_as_second_read(t, anywhere)};
}

// The whole one-process analysis with the time lines and with every location on the path read
// again: the same values of every metric, byte for byte; returns the locations read again.
std::uint64_t expect_same_analysis(const trace::Trace& t, analysis::AnalysisOptions options) {
  analysis::AnalysisStats stats, reread_stats;
  const auto p = analysis::analyze(t, t.all_locations(), &stats, options);
  options.reread_path = true;
  const auto q = analysis::analyze(t, t.all_locations(), &reread_stats, options);
  EXPECT_EQ(p.metrics.size(), q.metrics.size());
  for (std::size_t m = 0; m < p.metrics.size() && m < q.metrics.size(); ++m) {
    EXPECT_EQ(p.values[m].bytes(), q.values[m].bytes()) << p.metrics[m].uniq_name;
    if (p.values[m].bytes() != q.values[m].bytes()) continue;
    EXPECT_EQ(std::memcmp(p.values[m].data(), q.values[m].data(), p.values[m].bytes()), 0)
        << t.path() << " " << p.metrics[m].uniq_name;
  }
  EXPECT_GT(stats.path_bytes, 0u);
  EXPECT_GE(reread_stats.path_reread, stats.path_reread);
  EXPECT_GT(reread_stats.path_reread, 0u);
  return stats.path_reread;
}

}  // namespace

TEST(CriticalPath, TimeLinesAttributeAsTheSecondRead) {
  TempDir dir("timeline");
  trace::write_synthetic_trace(dir.path.string(), "ring", {4, 300, false, ""});
  trace::write_synthetic_trace(dir.path.string(), "unclosed", {3, 100, false, "unclosed"});
  const trace::Trace ring((dir.path / "ring.otf2").string());
  // At the MPI calls: nothing to read again; anywhere: most ends fall inside gaps of several
  // call paths (solve and compute), which only a second read can split.
  const auto [ring_calls, ring_anywhere] = expect_both_ways(ring, 1);
  EXPECT_EQ(ring_calls, 0u);
  EXPECT_GT(ring_anywhere, 0u);
  // main never left: the frames open at the end make every location one to read again.
  const trace::Trace unclosed((dir.path / "unclosed.otf2").string());
  Calls calls(unclosed.definitions());
  unclosed.read(unclosed.all_locations(), calls);
  std::mt19937_64 rng(2);
  const auto segments = random_segments(calls, rng, [&](std::size_t l) { return calls.mpi[l].empty() ? calls.first[l] : calls.mpi[l][rng() % calls.mpi[l].size()].first; });
  EXPECT_EQ(expect_timeline_as_second_read(unclosed, segments), on_path(segments));
  // Real traces, among them OpenMP regions between the MPI calls (jacobi-hybrid).
  for (const char* name : {"late-sender-barrier", "ping-pong", "bcast-scorep8", "jacobi-hybrid"}) {
    const trace::Trace t(std::string(CUBESCALE_SHARED_DATA) + "/otf2/" + name + "/traces.otf2");
    EXPECT_EQ(expect_both_ways(t, 3).first, 0u) << name;
  }
}

TEST(CriticalPath, TimeLinesOfNestedAndLongCalls) {
  // A handmade stream (no writer nests regions inside MPI calls): main > compute, an MPI_Recv
  // with a nested region, an MPI_Recv longer than 2^32 ticks (split into parts of 32 bits).
  trace::Definitions defs;
  for (const char* name : {"main", "compute", "MPI_Recv", "PMPI_Recv"}) {
    trace::Region r;
    r.name = name;
    defs.regions.push_back(r);
  }
  defs.locations.resize(1);
  const std::uint64_t long_leave = 200 + (std::uint64_t(1) << 33) + 7;
  // (time, enter?, region); call paths: main 0, compute 1, MPI_Recv 2, PMPI_Recv 3
  const std::vector<std::tuple<std::uint64_t, bool, std::uint32_t>> stream = {
      {0, true, 0},    {10, true, 1},  {30, false, 1},  {40, true, 2},         {50, true, 3},
      {70, false, 3},  {90, false, 2}, {100, true, 1},  {120, false, 1},       {200, true, 2},
      {long_leave, false, 2},          {long_leave + 50, true, 1},             {long_leave + 60, false, 1},
      {long_leave + 100, false, 0}};
  auto feed = [&](trace::CallPathObserver& o) {
    o.begin_location(0);
    std::vector<std::uint32_t> stack;
    for (const auto& [time, enter, region] : stream) {
      trace::Event e;
      e.type = enter ? trace::EventType::Enter : trace::EventType::Leave;
      e.time = time;
      e.region = region;
      e.location = 0;
      o.event(e, region);  // the call path of each region is its index here
    }
    o.end_location(0);
    o.rows({0, 1, 2, 3});
  };
  auto both = [&](std::vector<analysis::Segment> segments) {
    analysis::PathTimeline timeline(defs);
    feed(timeline);
    analysis::CriticalPathObserver second({segments}, {0});
    feed(second);
    std::vector<std::uint64_t> ticks(4, 0);
    const auto again = timeline.attribute({segments}, {0}, 1, ticks);
    if (again.empty()) {
      const auto want = second.values(4);
      for (std::size_t r = 0; r < 4; ++r) EXPECT_EQ(static_cast<double>(ticks[r]), want[r]) << "row " << r;
    }
    return again.size();
  };
  EXPECT_EQ(both({{0, long_leave + 100}}), 0u);                   // everything: whole pieces
  EXPECT_EQ(both({{40, 90}, {200, long_leave}}), 0u);  // whole calls
  EXPECT_EQ(both({{300, 1000}, {(std::uint64_t(1) << 32) + 5, long_leave - 3}}), 0u);  // inside the long call
  EXPECT_EQ(both({{0, 60}}), 1u);    // an end inside the nested call: read again
  EXPECT_EQ(both({{15, 200}}), 1u);  // an end inside a gap of main and compute: read again
  // main alone runs from 30 to 40, but the gap since the location's start (0 to 40) holds
  // compute too, and which part of it is whose is not kept: read again
  EXPECT_EQ(both({{35, 40}}), 1u);
}

TEST(CriticalPath, OneProcessAnalysisWithoutSecondReadIsTheSame) {
  TempDir dir("reread");
  trace::write_synthetic_trace(dir.path.string(), "ring", {4, 300, false, ""});
  const trace::Trace ring((dir.path / "ring.otf2").string());
  EXPECT_EQ(expect_same_analysis(ring, {}), 0u);
  // The time correction moves the path's resume points into gaps (the ring's processes start
  // apart): those locations are read again.
  EXPECT_GT(expect_same_analysis(ring, {true, 0.0}), 0u);
  const trace::Trace jacobi(std::string(CUBESCALE_SHARED_DATA) + "/otf2/jacobi-hybrid/traces.otf2");
  EXPECT_EQ(expect_same_analysis(jacobi, {}), 0u);
  EXPECT_GT(expect_same_analysis(jacobi, {true, 1e-5}), 0u);
}

TEST(OmpPatterns, BarriersAndLocksOnASyntheticTrace) {
  TempDir dir("omp");
  trace::write_omp_trace(dir.path.string(), "t",
                         {{100, 500, {{{"ibarrier", 200, 400}}, {{"ibarrier", 300, 400}}, {{"ibarrier", 350, 400}}}},
                          {600, 900,
                           {{{"critical", 610, 640, 610, 1}, {"lock", 645, 680, 650, 7}, {"barrier", 700, 800}},
                            {{"critical", 620, 660, 640, 1}, {"barrier", 750, 800}},
                            {{"lock", 605, 650, 605, 7}, {"barrier", 720, 800}}}}},
                         3, 1000);
  trace::Trace t((dir.path / "t.otf2").string());
  const auto p = analysis::analyze(t, t.all_locations());
  const std::string ibarrier = "!$omp implicit barrier @synthetic.c:2", ebarrier = "!$omp barrier @synthetic.c:3";
  expect(by_call(p, "omp_ibarrier_wait"), {{{0, ibarrier}, 150}, {{1, ibarrier}, 50}}, "omp_ibarrier_wait");
  expect(by_call(p, "omp_ebarrier_wait"), {{{0, ebarrier}, 50}, {{2, ebarrier}, 30}}, "omp_ebarrier_wait");
  expect(by_call(p, "omp_lock_contention_critical"), {{{1, "!$omp critical @synthetic.c:4"}, 20}},
         "omp_lock_contention_critical");
  expect(by_call(p, "omp_lock_contention_api"), {{{0, "omp_set_lock"}, 5}}, "omp_lock_contention_api");
}

// tests/analysis_cases.py OMP_LAST (scout.omp gives the same, tests/test_analysis_scout.py): from
// the master's end (1100) back, its implicit barrier waited for thread 2 (940), thread 2's explicit
// barrier for thread 1 (780), thread 1's parallel region for the fork on the master (600), where
// the master, last at the first region's barrier, keeps the path to 0. Thread 1's 20 ns from the
// fork to entering its region and the master's 10 from leaving it to the join count for the region.
TEST(CriticalPath, ThroughOpenMPBarriersAndForks) {
  TempDir dir("omp-path");
  trace::OmpParallel first{100, 500, {{{"ibarrier", 350, 400}}, {{"ibarrier", 200, 400}}, {{"ibarrier", 300, 400}}}};
  trace::OmpParallel second{600, 1000,
                            {{{"barrier", 700, 800}, {"ibarrier", 900, 950}},
                             {{"barrier", 780, 800}, {"ibarrier", 850, 950}},
                             {{"barrier", 720, 800}, {"ibarrier", 940, 950}}},
                            {600, 620, 650}, {990, 1000, 960}};
  trace::write_omp_trace(dir.path.string(), "t", {first, second}, 3, 1100);
  const trace::Trace t((dir.path / "t.otf2").string());
  const auto p = analysis::analyze(t, t.all_locations());
  const std::string parallel = "!$omp parallel @synthetic.c:1", ibarrier = "!$omp implicit barrier @synthetic.c:2",
                    ebarrier = "!$omp barrier @synthetic.c:3";
  expect(by_call(p, "critical_path"),
         {{{0, "main"}, 300}, {{0, parallel}, 400}, {{0, ibarrier}, 60}, {{1, parallel}, 180}, {{2, parallel}, 140},
          {{2, ebarrier}, 20}},
         "critical_path");
  // The time lines cut at barriers, forks and parallel regions: nothing is read again.
  EXPECT_EQ(expect_same_analysis(t, {}), 0u);
}

// Threads 1 and 2 tie as last at a barrier: scout's path runs on both, ours on the first
// (docs/analysis.md, "Critical path"), so that it covers the run once.
TEST(CriticalPath, OpenMPTieKeepsOnePath) {
  TempDir dir("omp-tie");
  trace::OmpParallel region{100, 400, {{{"barrier", 200, 300}}, {{"barrier", 250, 300}}, {{"barrier", 250, 300}}}};
  trace::write_omp_trace(dir.path.string(), "t", {region}, 3, 500);
  const trace::Trace t((dir.path / "t.otf2").string());
  const auto p = analysis::analyze(t, t.all_locations());
  const std::string parallel = "!$omp parallel @synthetic.c:1", ebarrier = "!$omp barrier @synthetic.c:3";
  // master: main 0-100 and 400-500, its region 300-400, its barrier 250-300 after waiting 50;
  // thread 1 from the fork at 100 to its barrier's enter at 250
  expect(by_call(p, "critical_path"),
         {{{0, "main"}, 200}, {{0, parallel}, 100}, {{0, ebarrier}, 50}, {{1, parallel}, 150}}, "critical_path");
}

// PROGRAM_BEGIN to PROGRAM_END is what the impact metrics count as a location's own time where
// the trace defines no program region (SpanObserver::program_span); where it defines one, the
// builder passes the events on as that region's Enter and Leave, the root call path holds the
// time, and the span is 0.
TEST(CriticalPath, ProgramSpanOnlyWithoutTheProgramRegion) {
  TempDir dir("program_span");
  using E = trace_tests::OneLocationEvent;
  const std::vector<E> events = {{E::ProgramBegin, 1}, {E::Enter, 3, 0}, {E::Leave, 8, 0}, {E::ProgramEnd, 10}};
  for (bool defined : {false, true}) {
    std::vector<trace_tests::OneLocationRegion> regions = {{"main", "main"}};
    if (defined) regions.push_back({"prog", "/bin/prog", OTF2_REGION_ROLE_ARTIFICIAL, OTF2_PARADIGM_MEASUREMENT_SYSTEM});
    const auto anchor =
        trace_tests::write_one_location(dir.path, defined ? "with" : "without", regions, events, "/bin/prog");
    trace::Trace t(anchor);
    analysis::SpanObserver spans(1);
    const auto p = trace::trace_profile(t, t.all_locations(), nullptr, &spans);
    EXPECT_EQ(spans.program_span(0), defined ? 0u : 9u) << defined;
    EXPECT_EQ(spans.first()[0], defined ? 1u : 3u) << defined;  // the program's Enter where defined
    EXPECT_EQ(p.cnode_count(), defined ? 2u : 1u) << defined;
  }
}

TEST(SyncPoints, SortByWaitEndEqualsAStableSortForAnyNumberOfRuns) {
  // Sorted runs (one per source of points) merged run by run, or a stable sort beyond 16
  // runs: the same order, equal ends in their first order (told apart by `causer`).
  std::mt19937 random(7);
  for (std::size_t runs : {1u, 2u, 3u, 16u, 17u, 200u}) {
    std::vector<analysis::SyncPoint> points;
    std::uint32_t n = 0;
    for (std::size_t r = 0; r < runs; ++r) {
      std::uint64_t end = random() % 50;
      for (int i = 0; i < 40; ++i, ++n) {
        end += random() % 3;  // equal ends within and across runs
        points.emplace_back(0, end, 0, 0, 0, n, false, false);
      }
    }
    auto expected = points;
    std::stable_sort(expected.begin(), expected.end(),
                     [](const auto& a, const auto& b) { return a.wait_end < b.wait_end; });
    analysis::sort_by_wait_end(points);
    ASSERT_EQ(points.size(), expected.size());
    for (std::size_t i = 0; i < points.size(); ++i) ASSERT_EQ(points[i].causer, expected[i].causer) << runs << " " << i;
  }
}
