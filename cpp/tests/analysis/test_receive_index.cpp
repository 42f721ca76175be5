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

TEST(ReceiveIndex, CountsTheIrecvPostingsBefore) {
  std::vector<LocationRecords> lists(1);
  lists[0].location = 1;
  for (std::uint32_t j = 0; j < 100; ++j) {
    lists[0].receives.push_back(receive(0, j % 7, 100 + j));
    lists[0].receives.back().beside_bits = std::uint8_t(j % 3 == 0 ? Beside::Extra : Beside::Own);
  }
  ReceiveIndex index;
  index.build(lists, 2);
  std::uint32_t extra = 0;
  for (std::uint32_t j = 0; j < 100; ++j)
    if (j % 3 == 0) EXPECT_EQ(index.extra_entry(0, j), extra++) << j;
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
