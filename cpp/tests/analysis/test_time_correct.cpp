// What the time correction over MPI ranks holds instead of per-event lists (time_correct.hpp,
// replay_beside.hpp): SyncWalk yields a location's sync events in sync_events' order without
// holding them (and holds them when a list is out of time order), NearTimes::reset moves an
// extra in place between near and far, the receivers' index finds a queue's receives, and
// OffsetRuns keeps a location's offset function in a few bytes per run.
#include "cubescale/analysis/time_correct.hpp"

#include <initializer_list>
#include <limits>
#include <stdexcept>

#include <gtest/gtest.h>

#include "cubescale/analysis/receive_index.hpp"

using namespace cubescale::analysis;

namespace {

MessageRecord message(std::uint64_t time, std::uint64_t position, std::uint32_t peer = 1, std::uint32_t tag = 0) {
  MessageRecord r;
  r.enter = time - 2, r.time = time, r.leave = time + 2, r.position = position;
  r.location = 0, r.peer = peer, r.communicator = 0, r.tag = tag;
  return r;
}

CollectiveRecord collective(std::uint64_t enter, std::uint64_t leave, std::uint64_t position) {
  CollectiveRecord c;
  c.enter = enter, c.leave = c.time = leave, c.position = position;
  return c;
}

std::vector<Sync> walked(SyncWalk& w) {
  std::vector<Sync> out;
  for (; !w.done(); w.advance()) out.push_back(w.peek());
  return out;
}

void expect_same(const std::vector<Sync>& a, const std::vector<Sync>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t k = 0; k < a.size(); ++k) {
    EXPECT_EQ(a[k].time, b[k].time) << k;
    EXPECT_EQ(a[k].order, b[k].order) << k;
    EXPECT_EQ(a[k].index, b[k].index) << k;
    EXPECT_EQ(a[k].kind, b[k].kind) << k;
  }
}

}  // namespace

TEST(SyncWalk, MergesTheListsInSyncEventsOrder) {
  // A send and a collective leave at equal times (ordered by position), a receive between a
  // collective's enter and leave.
  LocationRecords l;
  l.sends = {message(10, 1), message(40, 9), message(40, 11)};
  l.receives = {message(25, 5), message(60, 14)};
  l.collectives = {collective(20, 40, 7), collective(50, 70, 13)};
  SyncWalk w(l, nullptr, nullptr);
  EXPECT_FALSE(w.held());
  EXPECT_EQ(w.bytes(), 0u);
  const auto all = walked(w);
  expect_same(all, sync_events(l));
  // Back to a position, and to the first event.
  w.rewind();
  w.advance(), w.advance();
  const auto third = w.where();
  w.advance();
  w.go(third);
  EXPECT_EQ(w.peek().time, all[2].time);
  EXPECT_EQ(w.peek().kind, all[2].kind);
  w.rewind();
  expect_same(walked(w), all);
}

TEST(SyncWalk, HoldsTheEventsOfAListOutOfTimeOrder) {
  LocationRecords l;
  l.sends = {message(30, 1), message(10, 2)};  // a clock that went back
  l.receives = {message(20, 3)};
  SyncWalk w(l, nullptr, nullptr);
  EXPECT_TRUE(w.held());
  EXPECT_GT(w.bytes(), 0u);
  expect_same(walked(w), sync_events(l));
}

// The runs of the replay's correction give the offset function of the points they stand for
// (one per event, as the one-process correction adds them), also across groups and where a run
// lasts 2^32 ticks or more, and take a few bytes each, grown by an eighth, not by doubling.
TEST(OffsetRuns, GiveTheFunctionOfTheirEventsPointsInAFewBytesEach) {
  constexpr std::uint64_t far = 5000000000ull;
  struct Event {
    std::uint64_t t, offset;
  };
  // Times in order with far gaps; offsets rise at jumps and stay between (events of one run).
  const std::vector<Event> events = {{100, 0},         {150, 0},           {150, 7},          {400, 7},
                                     {400 + far, 7},   {500 + far, 30},    {501 + far, 31},   {502 + far, 31},
                                     {3 * far, 31},    {3 * far + 5, 40},  {4 * far, 40},     {4 * far + 1, 40}};
  OffsetRuns runs;
  OffsetFunction points;
  points.add(50, 0);
  for (const auto& e : events) runs.add(e.t, e.t, e.offset, 1), points.add(e.t, e.offset);
  ASSERT_EQ(runs.size(), 5u);  // offsets 0, 7, 30, 31, 40
  EXPECT_EQ(runs.at(1).count, 3u);
  EXPECT_EQ(runs.at(1).last, 400 + far);  // 2^32 ticks or more after its first
  EXPECT_EQ(runs.at(3).last, 3 * far);
  EXPECT_EQ(runs.at(4).last, 4 * far + 1);
  EXPECT_EQ(runs.at(2).last, 500 + far);
  const std::initializer_list<std::uint64_t> probes{0,        50,         99,         100,        120,    150,
                                                    151,      399,        400,        401,        1000,   far,
                                                    400 + far, 450 + far, 501 + far,  2 * far,    3 * far, 3 * far + 2,
                                                    3 * far + 5, 4 * far, 5 * far};
  {
    const auto f = OffsetFunction::over_runs(50, runs);
    for (auto t : probes) EXPECT_EQ(f(t), points(t)) << t;
  }
  // A run added as several events at once (a ramp's pending events), merged into the last.
  runs.add(5 * far, 6 * far, 40, 4);
  EXPECT_EQ(runs.size(), 5u);
  EXPECT_EQ(runs.at(4).count, 7u);
  EXPECT_EQ(runs.at(4).last, 6 * far);
  // Many runs over many groups (a ramp: offsets rising by varying steps, runs of 1 to 3 events),
  // against the points of their events; read back in order as the moves read them.
  OffsetRuns many;
  OffsetFunction many_points;
  many_points.add(5, 0);
  std::vector<OffsetRun> added;
  std::uint64_t t = 10, offset = 0;
  for (std::uint32_t k = 0; k < 1000; ++k) {
    const std::uint32_t count = 1 + k % 3;
    const auto first = t, last = t + 4 * (count - 1);
    for (std::uint32_t e = 0; e < count; ++e) many_points.add(first + 4 * e, offset);
    many.add(first, last, offset, count);
    added.push_back({first, last, offset, count});
    t = last + (k % 5 == 0 ? 0 : 7 + k % 11), offset += 1 + (k * 7919) % 300;
  }
  ASSERT_EQ(many.size(), added.size());
  OffsetRuns::Reader reader(many);
  OffsetRun run;
  for (const auto& a : added) {
    ASSERT_TRUE(reader.next(run));
    EXPECT_EQ(std::tie(run.first, run.last, run.offset, run.count), std::tie(a.first, a.last, a.offset, a.count));
  }
  EXPECT_FALSE(reader.next(run));
  EXPECT_EQ(many.at(517).offset, added[517].offset);
  EXPECT_THROW(many.at(added.size()), std::out_of_range);
  const auto g = OffsetFunction::over_runs(5, many);
  for (std::uint64_t x = 0; x < t + 100; x += 3) ASSERT_EQ(g(x), many_points(x)) << x;
  EXPECT_LE(many.bytes(), 1000u * 8);  // 32 bytes per run decoded
  OffsetRuns steady;
  for (std::uint64_t k = 0; k < 100000; ++k) steady.add(10 * k, 10 * k, k, 1);
  EXPECT_LE(steady.bytes(), (100000u + 100000u / 8 + 64) * 6);  // 4 bytes coded, 1.5 of checkpoints per run
}

TEST(NearTimes, ResetMovesAnEntryInPlaceBetweenNearAndFar) {
  NearTimes t(true);  // times after their references
  t.push_back(100, 150);
  t.push_back(200, 100);       // before its reference: far
  t.push_back(300, kNoTime);   // none
  t.push_back(400, 5000000000ull + 400);  // too far: far
  t.finish();
  EXPECT_EQ(t.far_size(), 2u);
  t.reset(0, 110, 1000);              // near stays near
  t.reset(1, 90, 120);                // far becomes near
  t.reset(3, 410, 5000000000ull + 500);  // far stays far, its time moved
  t.reset(2, 290, 10);                // none becomes far (before its reference)
  EXPECT_EQ(t.at(0, 110), 1000u);
  EXPECT_EQ(t.at(1, 90), 120u);
  EXPECT_EQ(t.at(2, 290), 10u);
  EXPECT_EQ(t.at(3, 410), 5000000000ull + 500);
  EXPECT_EQ(t.far_size(), 2u);
  t.reset(3, 410, kNoTime);
  EXPECT_EQ(t.at(3, 410), kNoTime);
  EXPECT_EQ(t.at(2, 290), 10u);  // the far list stays in entry order
  EXPECT_EQ(t.far_size(), 1u);
}

TEST(ReceiveIndex, FindsAQueuesReceivesAndItsNextUnpairedOne) {
  std::vector<LocationRecords> lists(1);
  lists[0].location = 1;
  for (auto [from, tag, time] : {std::tuple{0u, 3u, 100u}, {0u, 1u, 200u}, {0u, 3u, 300u}, {2u, 3u, 400u}})
    lists[0].receives.push_back(message(time, time, from, tag)), lists[0].receives.back().location = 1;
  ReceiveIndex index;
  index.build(lists, 3);
  const auto q = index.range({0, 1, 0, 3});
  ASSERT_EQ(q.list, 0u);
  ASSERT_EQ(q.end - q.begin, 2u);
  EXPECT_EQ(index.record(0, q.begin), 0u);
  EXPECT_EQ(index.record(0, q.begin + 1), 2u);
  auto next = index.next({0, 1, 0, 3});
  EXPECT_EQ(next.index, 0u);
  lists[0].receives[next.index].paired = 1;
  next = index.next({0, 1, 0, 3});
  EXPECT_EQ(next.index, 2u);
  lists[0].receives[next.index].paired = 1;
  EXPECT_EQ(index.next({0, 1, 0, 3}).list, kNone);  // none left
  EXPECT_EQ(index.range({2, 1, 0, 9}).end - index.range({2, 1, 0, 9}).begin, 0u);  // no such queue
  EXPECT_EQ(index.range({0, 2, 0, 3}).list, kNone);  // the receiver has no list here
}

TEST(LatencyTicks, RoundsSecondsToTicksAndRefusesWhatIsNoLatency) {
  EXPECT_EQ(latency_ticks(1e-6, 1000000000), 1000u);
  EXPECT_EQ(latency_ticks(0.0, 1000000000), 0u);
  EXPECT_EQ(latency_ticks(-0.0, 1000000000), 0u);
  EXPECT_EQ(latency_ticks(2.4e-9, 1000000000), 2u);
  for (double bad : {-1e-9, std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity(), 1e300,
                     5e9})  // 5e9 s: 2^62 ticks and more at a nanosecond clock
    EXPECT_THROW(latency_ticks(bad, 1000000000), std::invalid_argument) << bad;
}
