#include "cubescale/analysis/receive_index.hpp"

#include <algorithm>
#include <bit>
#include <cstddef>
#include <numeric>
#include <tuple>

namespace cubescale::analysis {

namespace {

// An MPI_Irecv's record whose `location` holds no distance: its posting is beside
// (far_postings_), or unknown.
constexpr std::uint32_t kUnknown = ~std::uint32_t(0), kFar = kUnknown - 1;

// A receive's queue as its send names it: (sender, communicator, tag) on the receiver's list.
auto queue_of(const MessageRecord& r) { return std::make_tuple(r.peer, r.communicator, r.tag); }

void release(auto& v) {
  std::remove_reference_t<decltype(v)>().swap(v);
}

}  // namespace

constexpr std::uint64_t kBeside = (std::uint64_t(1) << 48) - 1;  // the position's largest: the enter is beside

void pair_in_place(MessageRecord& r, const SendRecord& s, std::uint64_t latency, SendEnters& enters) {
  r.clock_violation = r.time < s.time + latency;  // as count_clock_violations
  r.time = s.time;
  const bool fits = s.enter <= s.time && s.time - s.enter < kBeside;
  r.position = fits ? s.time - s.enter : kBeside;
  if (!fits) enters[&r] = s.enter;
  r.paired = 1;
}

PairedSend paired_send(const MessageRecord& r, const SendEnters& enters) {
  PairedSend s;
  s.time = r.time;
  s.enter = r.position == kBeside ? enters.at(&r) : r.time - r.position;
  s.location = r.peer;  // the queue's sender
  return s;
}

void ReceiveIndex::build(std::vector<LocationRecords>& lists, std::size_t location_count,
                         std::vector<PointToPointExtras>* postings) {
  clear();
  lists_ = &lists;
  std::size_t receives = 0;
  for (const auto& l : lists) receives += l.receives.size();
  if (receives == 0) return;  // nothing to find (a rank without locations holds nothing)
  list_of_.assign(location_count, kNone);
  order_.resize(lists.size());
  folded_.assign(lists.size(), false);
  for (std::uint32_t l = 0; l < lists.size(); ++l)
    if (lists[l].location < location_count) list_of_[lists[l].location] = l;
  if (postings)
    for (auto& x : *postings) {
      const auto l = x.location < location_count ? list_of_[x.location] : kNone;
      if (l != kNone) fold_postings(l, x);
      x.receive_posted.clear();
    }
  for (std::uint32_t l = 0; l < lists.size(); ++l) {
    const auto& v = lists[l].receives;
    auto earlier = [&](std::uint32_t a, std::uint32_t b) {  // by queue, then recorded order
      return std::make_tuple(queue_of(v[a]), a) < std::make_tuple(queue_of(v[b]), b);
    };
    bool sorted = true;
    for (std::size_t j = 1; j < v.size() && sorted; ++j) sorted = !(queue_of(v[j]) < queue_of(v[j - 1]));
    if (!sorted) {  // sorted in place (a stable sort would hold a second index for a moment)
      order_[l].resize(v.size());
      std::iota(order_[l].begin(), order_[l].end(), 0u);
      std::sort(order_[l].begin(), order_[l].end(), earlier);
    }
  }
  // About one cursor per 64 receives, at most 64: a queue used over and over stays found.
  cursors_.assign(std::min<std::size_t>(64, std::bit_ceil(std::max<std::size_t>(1, receives / 64))), Cursor{});
}

void ReceiveIndex::fold_postings(std::uint32_t list, const PointToPointExtras& x) {
  // The k-th MPI_Irecv of the list has the k-th posting (PointToPointExtras).
  std::size_t k = 0;
  for (auto& r : (*lists_)[list].receives) {
    if (r.beside() != Beside::Extra) continue;
    const auto posted = k < x.receive_posted.size() ? x.receive_posted.at(k++, r.enter) : kNoTime;
    if (posted == kNoTime) {
      r.location = kUnknown;
    } else if (posted <= r.enter && r.enter - posted < kFar) {
      r.location = static_cast<std::uint32_t>(r.enter - posted);
    } else {
      r.location = kFar;
      far_postings_[&r] = posted;
    }
  }
  folded_[list] = true;
}

std::uint64_t ReceiveIndex::posting(std::uint32_t list, MessageRecord& r) {
  if (r.beside() != Beside::Extra) return r.enter;  // an MPI_Recv: posted when its call was entered
  if (!folded_[list]) return kNoTime;
  const auto d = r.location;
  r.location = (*lists_)[list].location;
  if (d == kUnknown) return kNoTime;
  if (d != kFar) return r.enter - d;
  const auto it = far_postings_.find(&r);
  const auto posted = it->second;
  far_postings_.erase(it);
  return posted;
}

ReceiveIndex::Cursor ReceiveIndex::find(std::uint32_t list, const MessageKey& key) const {
  // The queue's range in the list's queue order, then the first receive of it not yet paired.
  const auto& v = (*lists_)[list].receives;
  const auto wanted = std::make_tuple(key.from, key.communicator, key.tag);
  auto first = [&](auto before) {  // the first position p with !before(p)
    std::uint32_t lo = 0, hi = static_cast<std::uint32_t>(v.size());
    while (lo < hi) {
      const auto mid = lo + (hi - lo) / 2;
      if (before(mid)) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
  const auto begin = first([&](std::uint32_t p) { return queue_of(v[at(list, p)]) < wanted; });
  const auto end = first([&](std::uint32_t p) { return !(wanted < queue_of(v[at(list, p)])); });
  const auto next = begin + [&] {
    std::uint32_t lo = begin, hi = end;
    while (lo < hi) {
      const auto mid = lo + (hi - lo) / 2;
      if (v[at(list, mid)].paired) lo = mid + 1;
      else hi = mid;
    }
    return lo - begin;
  }();
  return {key, next, end};
}

ReceiveIndex::Place ReceiveIndex::pair(const SendRecord& s, std::uint64_t latency, SendEnters& enters) {
  if (!lists_ || s.peer >= list_of_.size() || list_of_[s.peer] == kNone) return {};
  const auto list = list_of_[s.peer];
  const MessageKey key{s.location, s.peer, s.communicator, s.tag};
  auto& c = cursors_[MessageKeyHash()(key) & (cursors_.size() - 1)];
  if (!(c.key == key)) c = find(list, key);
  if (c.next == c.end) return {};
  const auto index = at(list, c.next++);
  auto& r = (*lists_)[list].receives[index];
  const auto posted = posting(list, r);
  pair_in_place(r, s, latency, enters);
  return {list, index, posted};
}

ReceiveIndex::Range ReceiveIndex::range(const MessageKey& key) const {
  if (!lists_ || key.to >= list_of_.size() || list_of_[key.to] == kNone) return {};
  const auto list = list_of_[key.to];
  const auto c = find(list, key);
  // find()'s next is the first unpaired one; its range begins where its queue does.
  const auto& v = (*lists_)[list].receives;
  const auto wanted = std::make_tuple(key.from, key.communicator, key.tag);
  std::uint32_t lo = 0, hi = c.end;
  while (lo < hi) {
    const auto mid = lo + (hi - lo) / 2;
    if (queue_of(v[at(list, mid)]) < wanted) lo = mid + 1;
    else hi = mid;
  }
  return {list, lo, c.end};
}

RecordRef ReceiveIndex::next(const MessageKey& key) {
  if (!lists_ || key.to >= list_of_.size() || list_of_[key.to] == kNone) return {};
  const auto list = list_of_[key.to];
  auto& c = cursors_[MessageKeyHash()(key) & (cursors_.size() - 1)];
  if (!(c.key == key)) c = find(list, key);
  if (c.next == c.end) return {};
  return {list, at(list, c.next++)};
}

std::uint64_t ReceiveIndex::bytes() const {
  std::uint64_t n = list_of_.capacity() * 4 + cursors_.capacity() * sizeof(Cursor) + folded_.capacity() / 8;
  for (const auto& o : order_) n += o.capacity() * 4;
  // (a posting kept beside its receive: a node of the table each, one bucket pointer)
  n += far_postings_.size() * (2 * sizeof(void*) + 16) +
       (far_postings_.bucket_count() > 1 ? far_postings_.bucket_count() * sizeof(void*) : 0);
  return n;
}

void ReceiveIndex::clear() {
  // The receives left unpaired get their locations back (the matching's errors name them).
  if (lists_)
    for (std::size_t l = 0; l < folded_.size() && l < lists_->size(); ++l) {
      if (!folded_[l]) continue;
      for (auto& r : (*lists_)[l].receives)
        if (!r.paired && r.beside() == Beside::Extra) r.location = (*lists_)[l].location;
    }
  lists_ = nullptr;
  release(list_of_);
  release(order_);
  release(folded_);
  release(far_postings_);
  release(cursors_);
}

}  // namespace cubescale::analysis
