#include "cubescale/analysis/late_receiver.hpp"

#include <algorithm>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "cubescale/analysis/counts.hpp"
#include "cubescale/analysis/critical_path.hpp"
#include "cubescale/analysis/message_key.hpp"
#include "cubescale/common/run_chunks.hpp"

namespace cubescale::analysis {

MessagePairs pair_messages(const std::vector<LocationRecords>& records) {
  struct Queue {
    std::vector<RecordRef> sends;
    std::size_t next = 0;
  };
  MessagePairs out;
  out.receive_of_send.resize(records.size());
  out.send_of_receive.resize(records.size());
  std::unordered_map<MessageKey, Queue, MessageKeyHash> queues;
  // A location's messages mostly go to (come from) one peer on one tag after another: the last
  // key's queue is reused without hashing (the map's nodes stay where they are).
  MessageKey last{};
  Queue* queue = nullptr;
  for (std::uint32_t l = 0; l < records.size(); ++l) {
    out.receive_of_send[l].assign(records[l].sends.size(), {});
    for (std::uint32_t i = 0; i < records[l].sends.size(); ++i) {
      const auto& s = records[l].sends[i];
      const MessageKey key{s.location, s.peer, s.communicator, s.tag};
      if (!queue || !(key == last)) queue = &queues[key], last = key;
      queue->sends.push_back({l, i});
    }
  }
  // The k-th receive of B from A on (communicator, tag) is the k-th such send of A.
  queue = nullptr;
  for (std::uint32_t l = 0; l < records.size(); ++l) {
    out.send_of_receive[l].assign(records[l].receives.size(), {});
    for (std::uint32_t j = 0; j < records[l].receives.size(); ++j) {
      const auto& r = records[l].receives[j];
      const MessageKey key{r.peer, r.location, r.communicator, r.tag};
      if (!queue || !(key == last)) {
        const auto it = queues.find(key);
        queue = it == queues.end() ? nullptr : &it->second, last = key;
      }
      if (!queue || queue->next == queue->sends.size()) continue;
      const auto s = queue->sends[queue->next++];
      out.send_of_receive[l][j] = s;
      out.receive_of_send[s.list][s.index] = {l, j};
    }
  }
  return out;
}

void NearTimes::push_back(std::uint64_t reference, std::uint64_t time) {
  near_.push_back(kNoTimeMark);
  set(near_.size() - 1, reference, time);
}

void NearTimes::set(std::size_t k, std::uint64_t reference, std::uint64_t time) {
  if (near_[k] == kFarMark)  // set before and far: that entry goes (rare; never in the extraction)
    std::erase_if(far_, [&](const Far& f) { return f.entry == k; });
  if (time == kNoTime) {
    near_[k] = kNoTimeMark;
    return;
  }
  const bool on_its_side = after_ ? time >= reference : time <= reference;
  const auto distance = after_ ? time - reference : reference - time;
  if (on_its_side && distance < kFarMark) {
    near_[k] = static_cast<std::uint32_t>(distance);
    return;
  }
  near_[k] = kFarMark;
  if (!far_.empty() && far_.back().entry > k) sorted_ = false;  // completions out of order
  far_.push_back({k, time});
}

std::uint64_t NearTimes::at(std::size_t k, std::uint64_t reference) const {
  const auto d = near_[k];
  if (d == kNoTimeMark) return kNoTime;
  if (d != kFarMark) return after_ ? reference + d : reference - d;
  // finish() sorted them; before it (the extraction) nothing reads an entry.
  const auto it = std::lower_bound(far_.begin(), far_.end(), k, [](const Far& f, std::size_t e) { return f.entry < e; });
  return it != far_.end() && it->entry == k ? it->time : kNoTime;
}

void NearTimes::reset(std::size_t k, std::uint64_t reference, std::uint64_t time) {
  const auto far = [&] {
    return std::lower_bound(far_.begin(), far_.end(), k, [](const Far& f, std::size_t e) { return f.entry < e; });
  };
  const bool on_its_side = after_ ? time >= reference : time <= reference;
  const auto distance = after_ ? time - reference : reference - time;
  const bool near = time != kNoTime && on_its_side && distance < kFarMark;
  if (near_[k] == kFarMark) {
    const auto it = far();
    if (time != kNoTime && !near) {
      it->time = time;
      return;
    }
    far_.erase(it);
  }
  if (time == kNoTime) near_[k] = kNoTimeMark;
  else if (near) near_[k] = static_cast<std::uint32_t>(distance);
  else near_[k] = kFarMark, far_.insert(far(), {k, time});
}

void NearTimes::finish() {
  if (!sorted_) std::sort(far_.begin(), far_.end(), [](const Far& a, const Far& b) { return a.entry < b.entry; });
  sorted_ = true;
  near_.shrink_to_fit();
  far_.shrink_to_fit();
}

void NearTimes::clear() {
  std::vector<std::uint32_t>().swap(near_);
  std::vector<Far>().swap(far_);
  sorted_ = true;
}

SendCompletion own_completion(const MessageRecord& send) {
  SendCompletion c(send.enter, send.leave, send.cnode, send.call, SendCompletionKind::Blocking);
  c.empty = send.empty;
  return c;
}

void hold_completion(MessageRecord& send, const SendCompletion& c) {
  send.leave = c.leave, send.cnode = c.cnode;
  send.call = c.call | (std::uint32_t(c.kind_bits) << 29) | (std::uint32_t(c.empty) << 31);
}

SendCompletion held_completion(const MessageRecord& send, std::uint64_t enter) {
  SendCompletion c;
  c.enter = enter, c.leave = send.leave, c.cnode = send.cnode;
  c.call = send.call & SendCompletion::kCallMask, c.kind_bits = (send.call >> 29) & 3u, c.empty = send.call >> 31;
  return c;
}

void LateReceiverSends::add(const SendCompletion& c, std::uint64_t ticks, std::uint32_t receiver, double tick,
                            Severities& sev, CountsObserver* counts) const {
  if (ticks == 0 || c.cnode == kNone || c.cnode >= sev.cnodes) return;
  if (points_)  // waited until the receive was posted: the path goes on at the receiver from then
    points_->push_back({c.enter, c.enter + ticks, c.enter + ticks, location_, c.cnode, receiver, false, false});
  sev.matrix(Pattern::LateReceiver)[std::size_t(c.cnode) * sev.locations + column_] += static_cast<double>(ticks) * tick;
  if (counts) counts->late_receiver(c.cnode, static_cast<std::uint32_t>(column_), c.empty);
  if (sev.instances)
    sev.instances->add(std::size_t(Pattern::LateReceiver), {ticks, c.enter, c.leave, c.cnode, location_});
}

void LateReceiverSends::send(const SendCompletion& c, std::uint64_t sent, std::uint64_t post, std::uint32_t receiver,
                             double tick, Severities& sev, CountsObserver* counts) {
  if (c.kind() == SendCompletionKind::None || post == kNoTime) return;
  const std::uint64_t idle = c.leave > post && post > c.enter ? post - c.enter : 0;
  if (c.kind() != SendCompletionKind::WaitMulti) return add(c, idle, receiver, tick, sev, counts);
  constexpr auto kNothing = ~std::size_t(0);  // a call met with no wait so far: nothing kept
  if (open_.size() >= 64) {  // calls left before this send was made are done (kept in multi_ if they waited)
    pruned_ = std::max(pruned_, sent);
    std::erase_if(open_, [&](const auto& e) { return e.second.leave < pruned_; });
  }
  auto it = open_.find(c.call);
  std::size_t at = it == open_.end() ? kNothing : it->second.index;
  if (it == open_.end() && c.leave < pruned_)
    for (std::size_t k = multi_.size(); k-- > 0;)
      if (multi_[k].call.call == c.call) {
        at = k;
        break;
      }
  if (at == kNothing) {
    open_[c.call] = {kNothing, c.leave};
    if (idle == 0) return;  // a call's largest wait of 0 adds nothing: keep nothing until one waits
    at = multi_.size();
    multi_.push_back({idle, c, receiver});
    open_[c.call] = {at, c.leave};
  }
  // scout replays backwards and keeps the first strictly largest: the last of equal ones
  if (idle >= multi_[at].idle) multi_[at] = {idle, c, receiver};
}

void LateReceiverSends::finish(const std::vector<MessageRecord>& receives, const std::vector<std::uint64_t>& sender_enter,
                               double tick, Severities& sev, CountsObserver* counts) {
  // A Waitall/Waitsome that waited as a Late Sender is no Late Receiver (scout's exclusion).
  std::unordered_set<std::uint32_t> late_sender_calls;
  for (std::size_t j = 0; j < receives.size() && j < sender_enter.size(); ++j) {
    const auto& r = receives[j];
    if (r.call_kind != CallKind::WaitMulti || sender_enter[j] == kNoTime) continue;
    // the call's number as SendCompletion keeps it
    if (std::min(sender_enter[j], r.leave) > r.enter) late_sender_calls.insert(r.call & SendCompletion::kCallMask);
  }
  for (const auto& m : multi_)
    if (!late_sender_calls.count(m.call.call)) add(m.call, m.idle, m.receiver, tick, sev, counts);
  std::vector<Largest>().swap(multi_);
  open_.clear();
  pruned_ = 0;
}

void late_receiver(const LocationRecords& own, const PointToPointExtras& extras, const std::vector<std::uint64_t>& posted,
                   const std::vector<std::uint64_t>& sender_enter, std::size_t column, double tick,
                   Severities& sev, CountsObserver* counts, std::vector<SyncPoint>* points) {
  if (!own.sends.empty()) sev.present[std::size_t(Pattern::LateReceiver)] = true;
  LateReceiverSends sends(own.location, column);
  sends.keep_points(points);
  std::size_t extra = 0;  // the next Beside::Extra send's entry
  for (std::size_t i = 0; i < own.sends.size() && i < posted.size(); ++i) {
    const auto& s = own.sends[i];
    if (s.beside() == Beside::Own) sends.send(own_completion(s), s.time, posted[i], s.peer, tick, sev, counts);
    else if (s.beside() == Beside::Extra && extra < extras.completion_enter.size())
      sends.send(held_completion(s, extras.completion_enter.at(extra++, s.enter)), s.time, posted[i], s.peer, tick, sev,
                 counts);
  }
  sends.finish(own.receives, sender_enter, tick, sev, counts);
}

namespace {

// Per receive of `l` the enter of the call that posted it (its own call's, or its MPI_Irecv's).
std::vector<std::uint64_t> postings(const LocationRecords& l, const PointToPointExtras& extras) {
  std::vector<std::uint64_t> out;
  out.reserve(l.receives.size());
  std::size_t extra = 0;
  for (const auto& r : l.receives)
    out.push_back(r.beside() != Beside::Extra ? r.enter
                  : extra < extras.receive_posted.size() ? extras.receive_posted.at(extra++, r.enter)
                                                         : kNoTime);
  return out;
}

}  // namespace

void late_receiver(const std::vector<LocationRecords>& records, const std::vector<PointToPointExtras>& extras,
                   const MessagePairs& pairs, const std::vector<std::uint32_t>& column, double tick, Severities& sev,
                   CountsObserver* counts, std::vector<std::vector<SyncPoint>>* points, const Chunking& chunking) {
  std::vector<std::vector<std::uint64_t>> posting(records.size());
  auto weight = list_weights(records, [](const auto& l) { return l.sends.size() + l.receives.size(); });
  weight.resize(std::min(records.size(), extras.size()));  // (lists without extras: none)
  const auto bounds = chunk_bounds(weight, chunking);
  // The postings first (a chunk's sends read other chunks' receives'), then the locations.
  run_chunks(bounds, [&](std::size_t, std::size_t begin, std::size_t end) {
    for (auto l = begin; l < end; ++l) posting[l] = postings(records[l], extras[l]);
  });
  const auto chunks = bounds.size() - 1;
  SeverityChunks views(sev, chunks);
  std::vector<CountsObserver> chunk_counts(chunks);
  run_chunks(bounds, [&](std::size_t k, std::size_t begin, std::size_t end) {
    // One pair of buffers for the chunk: a buffer freed and mapped again per location would
    // cost fresh pages, and each unmapping an interrupt to every other thread's core.
    std::vector<std::uint64_t> posted, sender_enter;
    for (auto l = begin; l < end; ++l) {
      posted.assign(records[l].sends.size(), kNoTime), sender_enter.assign(records[l].receives.size(), kNoTime);
      for (std::size_t i = 0; i < posted.size(); ++i) {
        const auto r = pairs.receive_of_send[l][i];
        if (r.list != kNone && r.index < posting[r.list].size()) posted[i] = posting[r.list][r.index];
      }
      for (std::size_t j = 0; j < sender_enter.size(); ++j) {
        const auto s = pairs.send_of_receive[l][j];
        if (s.list != kNone) sender_enter[j] = records[s.list].sends[s.index].enter;
      }
      const auto loc = records[l].location;
      if (loc >= column.size() || column[loc] == kNone) continue;
      late_receiver(records[l], extras[l], posted, sender_enter, column[loc], tick, views[k],
                    counts ? &chunk_counts[k] : nullptr, points && loc < points->size() ? &(*points)[loc] : nullptr);
    }
  });
  views.absorb();  // in location order, as one pass would have added them
  if (counts)
    for (const auto& c : chunk_counts) counts->absorb_late_receivers(c);
}

}  // namespace cubescale::analysis
