// The receivers' side of the replay's rounds (receive_index.hpp): each send finds the k-th
// receive of its queue, receives out of queue order and queues interleaved included, and the
// send's enter and time come back from the receive's record, also an enter that does not fit
// beside its time (kept beside the record).
#include "cubescale/analysis/receive_index.hpp"

#include <gtest/gtest.h>

using namespace cubescale::analysis;

namespace {

MessageRecord receive(std::uint32_t from, std::uint32_t tag, std::uint64_t time) {
  MessageRecord r;
  r.enter = time - 5, r.leave = r.time = time;
  r.location = 1, r.peer = from, r.communicator = 0, r.tag = tag;
  return r;
}

SendRecord send(std::uint32_t from, std::uint32_t tag, std::uint64_t enter, std::uint64_t time) {
  SendRecord s{};
  s.enter = enter, s.time = time, s.location = from, s.peer = 1, s.communicator = 0, s.tag = tag;
  return s;
}

}  // namespace

TEST(ReceiveIndex, PairsTheKthSendOfAQueueWithItsKthReceive) {
  // Location 1 receives from 0 with tags 3, 1, 3, 1, then one from 2: out of queue order.
  std::vector<LocationRecords> lists(1);
  lists[0].location = 1;
  lists[0].receives = {receive(0, 3, 100), receive(0, 1, 200), receive(0, 3, 300), receive(0, 1, 400), receive(2, 3, 500)};
  ReceiveIndex index;
  index.build(lists, 3);
  SendEnters enters;
  // The sends in their senders' order, one sender's interleaved with the other's.
  EXPECT_EQ(index.pair(send(0, 1, 10, 12), 0, enters).index, 1u);
  EXPECT_EQ(index.pair(send(2, 3, 20, 25), 0, enters).index, 4u);
  EXPECT_EQ(index.pair(send(0, 3, 30, 31), 0, enters).index, 0u);
  EXPECT_EQ(index.pair(send(0, 1, 40, 41), 0, enters).index, 3u);
  EXPECT_EQ(index.pair(send(0, 3, 50, 350), 0, enters).index, 2u);  // sent after its receive completed
  EXPECT_EQ(index.pair(send(0, 3, 60, 61), 0, enters).list, kNone);  // no receive left in its queue
  EXPECT_EQ(index.pair(send(2, 9, 60, 61), 0, enters).list, kNone);  // no such queue
  const auto& r = lists[0].receives;
  EXPECT_TRUE(r[2].paired && r[2].clock_violation);  // 300 < 350
  EXPECT_FALSE(r[0].clock_violation);
  const auto s = paired_send(r[1], enters);
  EXPECT_EQ(s.enter, 10u);
  EXPECT_EQ(s.time, 12u);
  EXPECT_EQ(s.location, 0u);
  // The queue's key stays: the records still search (tag and communicator untouched).
  EXPECT_EQ(r[2].tag, 3u);
  EXPECT_TRUE(enters.empty());
}

TEST(ReceiveIndex, AnEnterThatDoesNotFitStaysBeside) {
  std::vector<LocationRecords> lists(1);
  lists[0].location = 1;
  lists[0].receives = {receive(0, 0, 100), receive(0, 0, 200)};
  ReceiveIndex index;
  index.build(lists, 2);
  SendEnters enters;
  index.pair(send(0, 0, 90, 80), 0, enters);  // entered after its own time (a corrected trace)
  index.pair(send(0, 0, 0, std::uint64_t(1) << 50), 0, enters);  // 2^50 ticks inside its call
  EXPECT_EQ(enters.size(), 2u);
  EXPECT_EQ(paired_send(lists[0].receives[0], enters).enter, 90u);
  EXPECT_EQ(paired_send(lists[0].receives[1], enters).enter, 0u);
  EXPECT_EQ(paired_send(lists[0].receives[1], enters).time, std::uint64_t(1) << 50);
}

// An MPI_Irecv's posting moves into its record's location while the rounds run: pairing hands it
// out and writes the location back, clear() does for receives left unpaired; a posting after
// its receive's enter or 2^32 - 2 ticks or more before it stays beside; MPI_Recvs are posted at
// their enter.
TEST(ReceiveIndex, HoldsTheIrecvPostingsInTheRecords) {
  constexpr std::uint64_t far = std::uint64_t(1) << 32, base = 6'000'000'000'000;
  std::vector<LocationRecords> lists(1);
  lists[0].location = 1;
  std::vector<PointToPointExtras> extras(1);
  extras[0].location = 1;
  std::vector<std::uint64_t> posted;
  for (std::uint32_t j = 0; j < 100; ++j) {
    lists[0].receives.push_back(receive(0, j % 7, base + 1000 * j));
    auto& r = lists[0].receives.back();
    r.beside_bits = std::uint8_t(j % 3 == 0 ? Beside::Extra : Beside::Own);
    if (j % 3 != 0) continue;
    // near, just far enough to stay beside, after its enter (a corrected trace), far
    const std::uint64_t p[] = {r.enter - 40, r.enter - (far - 2), r.enter + 1, r.enter - 3 * far};
    posted.push_back(p[posted.size() % 4]);
    extras[0].receive_posted.push_back(r.enter, posted.back());
  }
  ReceiveIndex index;
  index.build(lists, 2, &extras);
  EXPECT_TRUE(extras[0].receive_posted.empty());  // gone into the records
  EXPECT_NE(lists[0].receives[0].location, 1u);
  SendEnters enters;
  std::size_t extra = 0;
  for (std::uint32_t j = 0; j < 90; ++j) {  // the last ten stay unpaired
    const auto& r = lists[0].receives[j];
    const auto place = index.pair(send(0, j % 7, r.enter - 10, r.enter - 5), 0, enters);
    EXPECT_EQ(place.index, j);
    EXPECT_EQ(place.posted, j % 3 == 0 ? posted[extra++] : r.enter) << j;
    EXPECT_EQ(r.location, 1u) << j;
  }
  EXPECT_NE(lists[0].receives[90].location, 1u);
  EXPECT_GT(index.bytes(), 0u);
  index.clear();
  for (const auto& r : lists[0].receives) EXPECT_EQ(r.location, 1u);
  // without postings (a records-only replay) an MPI_Irecv's is unknown and its location stays
  index.build(lists, 2);
  EXPECT_EQ(index.pair(send(0, 6, 0, 1), 0, enters).posted, kNoTime);  // receive 90: an MPI_Irecv
}

TEST(ReceiveIndex, HoldsNothingWithoutReceives) {
  // A rank without locations (or whose locations only send) keeps no index at all.
  std::vector<LocationRecords> none, senders(2);
  ReceiveIndex index;
  index.build(none, 1000);
  EXPECT_EQ(index.bytes(), 0u);
  index.build(senders, 1000);
  EXPECT_EQ(index.bytes(), 0u);
  SendEnters enters;
  EXPECT_EQ(index.pair(send(0, 0, 1, 2), 0, enters).list, kNone);
}
