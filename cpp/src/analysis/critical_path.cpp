#include "cubescale/analysis/critical_path.hpp"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <string>
#include <tuple>
#include <deque>
#include <unordered_map>

#include "cubescale/analysis/waitstates.hpp"
#include "cubescale/common/append_whole.hpp"
#include "cubescale/common/run_chunks.hpp"
#include "cubescale/cube/dtype.hpp"

namespace cubescale::analysis {

namespace {

constexpr std::size_t kRecentLateSenders = 100;  // as the wrong-order pattern (scout's buffer)

// Late Sender sync points: the k-th receive of B from A on (comm, tag) is A's k-th such send.
// The send: the sender's MessageRecord (one process) or the SendRecord a replay received; a
// receive's payload is its own (the same as its send's in a consistent trace).
// `send_of(list, j, r)`: the send of receive j of records[list] (r), nullptr when unmatched.
template <class SendOf>
void message_points(const std::vector<LocationRecords>& records, SendOf send_of,
                    std::vector<std::vector<SyncPoint>>& out) {
  for (std::size_t list = 0; list < records.size(); ++list) {
    const auto& l = records[list];
    SyncPoint multi;  // the latest sender of the MPI_Waitall/any/some being read
    std::uint64_t multi_send_time = 0, multi_idle = 0;
    std::uint32_t multi_call = kNone;
    // The location's last Late Senders (send time, index in out[location]), as the wrong-order
    // pattern keeps them: one whose message was sent after a later-received one is wrong-order.
    std::deque<std::pair<std::uint64_t, std::size_t>> recent;
    std::uint64_t latest = 0;  // no send time in `recent` is later (an upper bound)
    auto late = [&](const SyncPoint& p, std::uint64_t send_time) {
      if (recent.size() == kRecentLateSenders) recent.pop_front();
      recent.push_back({send_time, out[l.location].size()});
      latest = std::max(latest, send_time);
      out[l.location].push_back(p);
    };
    auto flush = [&] {
      if (multi_call != kNone && multi_idle > 0) late(multi, multi_send_time);
      multi_call = kNone;
    };
    for (std::size_t j = 0; j < l.receives.size(); ++j) {
      const auto& r = l.receives[j];
      const auto* found = send_of(list, j, r);
      if (!found) continue;  // matching has raised
      const auto& s = *found;
      if (multi_call != kNone && multi_call != r.call) flush();
      const auto idle = waited(r.enter, r.leave, s.enter);
      SyncPoint p{r.enter, r.enter + idle, s.enter, r.location, r.cnode, s.location, true, r.empty != 0};
      if (r.call_kind == CallKind::Single) {
        if (idle > 0) late(p, s.time);
      } else if (r.call_kind == CallKind::WaitMulti && (multi_call == kNone || idle > multi_idle)) {
        multi = p, multi_call = r.call, multi_send_time = s.time, multi_idle = idle;
      }
      if (latest <= s.time) continue;  // messages in order: nothing to scan
      latest = 0;
      for (auto it = recent.begin(); it != recent.end();) {
        if (it->first <= s.time) {
          latest = std::max(latest, it->first);
          ++it;
          continue;
        }
        out[r.location][it->second].wrong_order = true;
        it = recent.erase(it);
      }
    }
    flush();
  }
}

// The path leaves a member only where it waited: at a synchronization point (collective_sync).
void instance_points(const std::vector<const CollectiveRecord*>& members, std::vector<MemberSync>& sync,
                     std::vector<std::vector<SyncPoint>>& out) {
  collective_sync(members, sync);
  for (std::size_t i = 0; i < members.size(); ++i) {
    const auto* c = members[i];
    if (!sync[i].sync || sync[i].causer == kNone || !moves_path(*c)) continue;
    const auto* causer = members[sync[i].causer];
    const auto idle = waited(c->enter, c->leave, causer->enter);
    if (idle > 0)
      out[c->location].push_back({c->enter, c->enter + idle, causer->enter, c->location, c->cnode,
                                  causer->location, false, false});
  }
}

// Collective sync points: the k-th collective of each member on a communicator is one instance,
// its members in communicator rank order (collective_sync).
void collective_points(const std::vector<LocationRecords>& records, const CommunicatorRanks& ranks,
                       std::vector<std::vector<SyncPoint>>& out) {
  std::unordered_map<std::uint32_t, std::vector<std::vector<const CollectiveRecord*>>> instances;
  for (const auto& l : records) {
    std::unordered_map<std::uint32_t, std::size_t> seen;
    for (const auto& c : l.collectives) {
      auto& list = instances[c.communicator];
      const auto k = seen[c.communicator]++;
      if (list.size() <= k) list.resize(k + 1);
      list[k].push_back(&c);
    }
  }
  for (auto& [communicator, list] : instances) {
    // MPI_Finalize counts only when all its processes have it equally often (as the patterns).
    if (communicator == kFinalizeCommunicator &&
        std::any_of(list.begin(), list.end(), [&](const auto& i) { return i.size() != list.front().size(); }))
      continue;
    std::vector<MemberSync> sync;
    std::vector<std::pair<std::uint64_t, const CollectiveRecord*>> keyed;  // (rank, location) -> member
    for (auto& members : list) {
      if (ranks.partial_init_exit(communicator, members.size())) continue;
      // Each member's rank looked up once, then sorted by it (most instances are in order already).
      keyed.clear();
      for (const auto* c : members)
        keyed.push_back({(std::uint64_t(ranks.rank(communicator, c->location)) << 32) | c->location, c});
      if (!std::is_sorted(keyed.begin(), keyed.end())) {
        std::sort(keyed.begin(), keyed.end());
        for (std::size_t i = 0; i < keyed.size(); ++i) members[i] = keyed[i].second;
      }
      instance_points(members, sync, out);
    }
  }
}

// One process with reduce_collectives' causers (per record, list order): instance_points
// without collective_sync. Chunks of the records' lists at once: each walks every instance and
// keeps the points of its own lists' members (in instance order, as one walk appends them),
// writing only its own locations' lists.
void collective_points(const std::vector<LocationRecords>& records, const std::vector<std::vector<RecordRef>>& instances,
                       const std::vector<std::uint32_t>& causers, std::vector<std::vector<SyncPoint>>& out,
                       const Chunking& chunking) {
  const auto offset = collective_offsets(records);
  const auto bounds = chunk_bounds(list_weights(records, [](const auto& l) { return l.collectives.size(); }), chunking);
  run_chunks(bounds, [&](std::size_t, std::size_t first, std::size_t last) {
    for (const auto& instance : instances)
      for (const auto& ref : instance) {
        if (ref.list < first || ref.list >= last) continue;
        const auto causer = causers[offset[ref.list] + ref.index];
        if (causer == kNone || causer >= instance.size()) continue;
        const auto& c = records[ref.list].collectives[ref.index];
        if (!moves_path(c)) continue;
        const auto& by = records[instance[causer].list].collectives[instance[causer].index];
        const auto idle = waited(c.enter, c.leave, by.enter);
        if (idle > 0) out[c.location].push_back({c.enter, c.enter + idle, by.enter, c.location, c.cnode, by.location, false, false});
      }
  });
}

// One process: the instances collective_instances built (complete ones, members in rank order).
void collective_points(const std::vector<LocationRecords>& records, const std::vector<std::vector<RecordRef>>& instances,
                       std::vector<std::vector<SyncPoint>>& out) {
  std::vector<const CollectiveRecord*> members;
  std::vector<MemberSync> sync;
  for (const auto& instance : instances) {
    if (instance.size() < 2) continue;  // synchronizes nothing (collective_sync)
    members.clear();
    for (const auto& ref : instance) members.push_back(&records[ref.list].collectives[ref.index]);
    instance_points(members, sync, out);
  }
}

// `messages[l]`: how many of out[l]'s points come from messages (before the collectives'). Each
// part is in time order nearly always (a location's calls follow each other), so merging the
// two is the stable sort of the whole at linear cost; else the stable sort itself.
void sort_points(std::vector<std::vector<SyncPoint>>& out, const std::vector<std::size_t>& messages,
                 const Chunking& chunking = {}) {
  auto earlier = [](const SyncPoint& a, const SyncPoint& b) { return a.wait_end < b.wait_end; };
  std::vector<std::uint64_t> weight(out.size());
  for (std::size_t l = 0; l < out.size(); ++l) weight[l] = out[l].size();
  run_chunks(chunk_bounds(weight, chunking), [&](std::size_t, std::size_t begin, std::size_t end) {
    for (auto l = begin; l < end; ++l) {
      auto& points = out[l];
      const auto middle = points.begin() + static_cast<std::ptrdiff_t>(messages[l]);
      if (std::is_sorted(points.begin(), middle, earlier) && std::is_sorted(middle, points.end(), earlier))
        std::inplace_merge(points.begin(), middle, points.end(), earlier);
      else
        std::stable_sort(points.begin(), points.end(), earlier);
    }
  });
}

std::vector<std::size_t> sizes(const std::vector<std::vector<SyncPoint>>& out) {
  std::vector<std::size_t> n(out.size());
  for (std::size_t l = 0; l < out.size(); ++l) n[l] = out[l].size();
  return n;
}

}  // namespace

std::vector<std::vector<SyncPoint>> sync_points(const std::vector<LocationRecords>& records,
                                                const CommunicatorRanks& ranks, std::size_t location_count) {
  std::vector<std::vector<SyncPoint>> out(location_count);
  SendQueues sends(records);
  message_points(records, [&](std::size_t, std::size_t, const MessageRecord& r) { return sends.next(r); }, out);
  const auto messages = sizes(out);
  collective_points(records, ranks, out);
  sort_points(out, messages);
  return out;
}

std::vector<std::vector<SyncPoint>> sync_points(const std::vector<LocationRecords>& records, const MessagePairs& pairs,
                                                const std::vector<std::vector<RecordRef>>& instances,
                                                std::size_t location_count, const std::vector<std::uint32_t>* causers,
                                                std::vector<std::vector<SyncPoint>>* message_points_made,
                                                const Chunking& chunking) {
  std::vector<std::vector<SyncPoint>> out;
  if (message_points_made && message_points_made->size() == location_count) {
    out.swap(*message_points_made);
  } else {
    out = sync_point_lists(records, location_count);
    // The pairs follow the matcher's rule (the k-th receive of B from A on (comm, tag) is A's
    // k-th such send): the same sends as SendQueues finds, without a second hash of every send.
    message_points(records, [&](std::size_t list, std::size_t j, const MessageRecord&) -> const MessageRecord* {
      const auto s = pairs.send_of_receive[list][j];
      return s.list == kNone ? nullptr : &records[s.list].sends[s.index];
    }, out);
  }
  const auto messages = sizes(out);
  std::size_t collectives = 0;
  for (const auto& l : records) collectives += l.collectives.size();
  if (causers && causers->size() == collectives && collectives > 0)
    collective_points(records, instances, *causers, out, chunking);
  else
    collective_points(records, instances, out);
  sort_points(out, messages, chunking);
  return out;
}

std::vector<std::vector<SyncPoint>> sync_point_lists(const std::vector<LocationRecords>& records,
                                                     std::size_t location_count) {
  std::vector<std::vector<SyncPoint>> out(location_count);
  // At most one point per receive and per collective: room for them once instead of regrowing copies.
  for (const auto& l : records)
    if (l.location < out.size()) out[l.location].reserve(l.receives.size() + l.collectives.size());
  return out;
}

std::vector<std::vector<SyncPoint>> sync_points_paired(std::vector<LocationRecords>& receivers,
                                                       const SendEnters& enters, const CommunicatorRanks& ranks,
                                                       std::size_t location_count) {
  std::vector<std::vector<SyncPoint>> out(location_count);
  PairedReceives queues(enters, nullptr);  // its answer lives until the next receive (message_points copies it)
  std::size_t given_back = 0;  // receives of the current list whose pages went
  message_points(receivers, [&](std::size_t list, std::size_t j, const MessageRecord& r) {
    // message_points reads receive j now and none before it again (it keeps copies).
    constexpr std::size_t kEvery = 1024;
    if (j == 0) given_back = 0;
    if (j >= given_back + kEvery) {
      give_back_pages(receivers[list].receives.data() + given_back, (j - given_back) * sizeof(MessageRecord));
      given_back = j;
    }
    return queues.next(r);
  }, out);
  const auto messages = sizes(out);
  collective_points(receivers, ranks, out);
  sort_points(out, messages);
  return out;
}

void add_sync_points(std::vector<std::vector<SyncPoint>>& points, std::vector<std::vector<SyncPoint>>& more,
                     const Chunking& chunking) {
  std::vector<std::uint64_t> weight(std::min(points.size(), more.size()));
  for (std::size_t l = 0; l < weight.size(); ++l) weight[l] = more[l].empty() ? 0 : points[l].size() + more[l].size();
  run_chunks(chunk_bounds(weight, chunking), [&](std::size_t, std::size_t begin, std::size_t end) {
    for (auto l = begin; l < end; ++l) add_sync_points_at(points[l], more[l]);
  });
}

void sort_by_wait_end(std::vector<SyncPoint>& points) {
  constexpr std::size_t kMergedRuns = 16;  // more runs than this: a stable sort of the whole
  auto earlier = [](const SyncPoint& a, const SyncPoint& b) { return a.wait_end < b.wait_end; };
  std::vector<std::size_t> ends;  // where each sorted run ends
  for (std::size_t i = 1; i < points.size() && ends.size() <= kMergedRuns; ++i)
    if (earlier(points[i], points[i - 1])) ends.push_back(i);
  if (ends.size() > kMergedRuns) {
    std::stable_sort(points.begin(), points.end(), earlier);
    return;
  }
  ends.push_back(points.size());
  // [0, ends[k]) sorted, merged with the next run: the earlier run's points first among equals.
  for (std::size_t k = 0; k + 1 < ends.size(); ++k)
    std::inplace_merge(points.begin(), points.begin() + static_cast<std::ptrdiff_t>(ends[k]),
                       points.begin() + static_cast<std::ptrdiff_t>(ends[k + 1]), earlier);
}

void add_sync_points_at(std::vector<SyncPoint>& points, std::vector<SyncPoint>& more) {
  if (more.empty()) return;
  auto earlier = [](const SyncPoint& a, const SyncPoint& b) { return a.wait_end < b.wait_end; };
  if (!std::is_sorted(points.begin(), points.end(), earlier)) {  // rare: the stable sort of the whole
    points.insert(points.end(), more.begin(), more.end());
    std::vector<SyncPoint>().swap(more);
    std::stable_sort(points.begin(), points.end(), earlier);
    return;
  }
  // Both in time order: merged from the back in place (no buffer of the whole list; the points
  // before the earliest of `more` stay where they are), `points` first among equal ends.
  std::stable_sort(more.begin(), more.end(), earlier);
  auto i = points.size(), j = more.size();
  points.resize(i + j);
  for (auto k = points.size(); j > 0;) {
    if (i > 0 && earlier(more[j - 1], points[i - 1])) points[--k] = points[--i];
    else points[--k] = more[--j];
  }
  std::vector<SyncPoint>().swap(more);
}

// --- OpenMP -----------------------------------------------------------------------------------

namespace {


// Ticks of [a, b) inside `segments` (increasing, disjoint).
std::uint64_t overlap(const std::vector<Segment>& segments, std::uint64_t a, std::uint64_t b) {
  if (b <= a) return 0;
  auto it = std::upper_bound(segments.begin(), segments.end(), a, [](std::uint64_t t, const Segment& s) { return t < s.to; });
  std::uint64_t n = 0;
  for (; it != segments.end() && it->from < b; ++it) n += std::min(it->to, b) - std::max(it->from, a);
  return n;
}

}  // namespace

void add_omp_sync_points(const OmpObserver& omp, std::vector<std::vector<SyncPoint>>& points) {
  // A barrier's enters share a sync group (dense): per group the latest enter and its first location.
  std::vector<std::pair<std::uint64_t, std::uint32_t>> last(omp.sync_groups(), {0, kNone});
  const auto& barriers = omp.barriers();
  for_each_barrier_enter(omp, [&](const OmpSync& s, std::uint32_t barrier) {
    const auto& b = barriers[barrier];
    auto& [enter, location] = last[s.group];
    if (location == kNone || b.enter > enter || (b.enter == enter && b.location < location))
      enter = b.enter, location = b.location;
  });
  std::vector<bool> touched(points.size(), false);
  const OmpTeams teams(omp, false);
  // A team without a fork event (begun before the measurement): a worker the path went to at
  // its barrier could not hand it back to the master at the fork, so its barriers move no path.
  const auto team_of = omp.team_groups();
  auto forked = [&](const OmpSync& s) {
    const auto g = s.group < team_of.size() ? team_of[s.group] : ~0u;
    return g < teams.master.size() && teams.master[g] != kNone;
  };
  for_each_barrier_enter(omp, [&](const OmpSync& s, std::uint32_t barrier) {
    const auto& b = barriers[barrier];
    if (!forked(s)) return;
    const auto& [enter, causer] = last[s.group];
    const auto idle = waited(b.enter, b.leave, enter);
    if (idle == 0 || causer == b.location || b.location >= points.size()) return;
    points[b.location].push_back({b.enter, b.enter + idle, enter, b.location, b.cnode, causer, false, false});
    touched[b.location] = true;
  });
  for (const auto& l : omp.syncs())
    for (const auto& r : l.parallels) {
      if (r.team >= teams.master.size()) continue;  // a visit without a team begin
      const auto master = teams.master[r.team];
      if (master == kNone || master == l.location || l.location >= points.size()) continue;
      const auto fork = teams.fork[r.team];
      points[l.location].push_back({fork, fork, fork, l.location, r.cnode, master, false, false});
      touched[l.location] = true;
    }
  for (std::size_t l = 0; l < points.size(); ++l)
    if (touched[l]) sort_by_wait_end(points[l]);
}

void omp_path_time(const OmpObserver& omp, const std::vector<std::vector<Segment>>& segments,
                   const std::vector<std::uint32_t>& column, std::size_t columns,
                   const std::vector<std::uint32_t>& parents, std::vector<double>& ticks) {
  const OmpTeams teams(omp, true);
  const auto cnodes = columns ? ticks.size() / columns : 0;
  for (const auto& l : omp.syncs()) {
    if (l.location >= segments.size() || segments[l.location].empty() || l.location >= column.size() ||
        column[l.location] == kNone)
      continue;
    const auto& mine = segments[l.location];
    const auto col = column[l.location];
    for (const auto& r : l.parallels) {
      if (r.team >= teams.fork.size()) continue;  // a visit without a team begin
      const auto fork = teams.fork[r.team];
      if (fork == kNoTime || r.cnode >= cnodes) continue;
      const bool master = teams.master[r.team] == l.location;
      const auto join = teams.join[r.team];
      auto moved = overlap(mine, fork, r.enter);
      if (master && join != kNoTime) moved += overlap(mine, r.leave, join);  // a worker's: scout drops it
      if (moved == 0) continue;
      ticks[std::size_t(r.cnode) * columns + col] += double(moved);
      const auto parent = parents[r.cnode];
      if (master && parent < cnodes) ticks[std::size_t(parent) * columns + col] -= double(moved);
    }
  }
}

std::vector<double> omp_local_time(const OmpObserver& omp, const std::vector<std::uint32_t>& locations,
                                   const std::vector<std::uint32_t>& parents, std::uint64_t resolution) {
  const auto cols = locations.size(), cnodes = parents.size();
  std::vector<std::uint32_t> column;
  for (std::size_t c = 0; c < cols; ++c) {
    if (locations[c] >= column.size()) column.resize(std::size_t(locations[c]) + 1, kNone);
    column[locations[c]] = static_cast<std::uint32_t>(c);
  }
  std::vector<double> out;
  const double tick = 1.0 / static_cast<double>(resolution);
  auto add = [&](std::uint32_t location, std::uint32_t cnode, double ticks) {
    if (cnode > cnodes || location >= column.size() || column[location] == kNone || ticks == 0) return;
    if (out.empty()) out.assign((cnodes + 1) * cols, 0.0);
    out[std::size_t(cnode) * cols + column[location]] += cnode == cnodes ? ticks : ticks * tick;
  };
  const OmpTeams teams(omp, true);
  for (const auto& l : omp.syncs()) {
    std::size_t next = 0;  // the location's barriers, in recorded order as its visits
    bool marked = false;   // a worker's location: no time outside its visits
    for (const auto& r : l.parallels) {
      if (r.team >= teams.fork.size()) continue;  // a visit without a team begin
      const auto fork = teams.fork[r.team];
      if (fork == kNoTime) continue;
      const auto before = r.enter > fork ? double(r.enter - fork) : 0.0;
      if (teams.master[r.team] == l.location) {
        const auto join = teams.join[r.team];
        const auto after = join != kNoTime && join > r.leave ? double(join - r.leave) : 0.0;
        add(l.location, r.cnode, before + after);
        if (r.cnode < cnodes) add(l.location, parents[r.cnode], -(before + after));
        continue;
      }
      if (!marked) add(l.location, std::uint32_t(cnodes), 1.0), marked = true;
      bool barrier = false;
      while (next < l.barriers.size() && omp.barriers()[l.barriers[next]].enter < r.enter) ++next;
      while (next < l.barriers.size() && omp.barriers()[l.barriers[next]].enter <= r.leave) barrier = true, ++next;
      if (barrier) add(l.location, r.cnode, before);
    }
  }
  for (const auto& t : omp.tails()) add(t.location, t.cnode, -double(t.ticks));
  return out;
}

void PathWindow::note(const LocationRecords& l) {
  if (l.location >= init.size()) return;
  for (const auto& c : l.collectives) {  // in recorded order: the first one stays
    auto* at = c.communicator == kInitCommunicator ? &init : c.communicator == kFinalizeCommunicator ? &finalize : nullptr;
    if (at && (*at)[l.location] == kNoEnter) (*at)[l.location] = c.enter;
  }
}

std::pair<std::size_t, std::size_t> PathWindow::members() const {
  auto count = [](const std::vector<std::uint64_t>& v) {
    return static_cast<std::size_t>(std::count_if(v.begin(), v.end(), [](auto t) { return t != kNoEnter; }));
  };
  return {count(init), count(finalize)};
}

void PathWindow::decide(std::size_t init_members, std::size_t finalize_members, const CommunicatorRanks& ranks) {
  // As the patterns: an MPI_Init/Finalize some process lacks synchronizes nothing.
  has_init = init_members > 0 && !ranks.partial_init_exit(kInitCommunicator, init_members);
  has_finalize = finalize_members > 0 && !ranks.partial_init_exit(kFinalizeCommunicator, finalize_members);
}

std::pair<std::uint64_t, std::uint32_t> path_start(const SpanObserver& spans, const std::vector<std::uint32_t>& candidates,
                                                   const std::vector<bool>& has_records, bool any_records,
                                                   const PathWindow& window) {
  const auto& first = spans.first();
  const auto& last = spans.last();
  std::uint32_t at = kNone;
  std::uint64_t t = 0;
  for (auto l : candidates) {
    if (first[l] > last[l] || (any_records && !has_records[l])) continue;  // no events
    // scout: the MPI_Finalize entered last (its MPI_MAXLOC: the lowest rank among equals).
    const auto end = window.has_finalize ? window.finalize[l] : last[l];
    if (end == kNoEnter) continue;
    if (at == kNone || end > t) at = l, t = end;
  }
  return {t, at};
}

std::vector<std::vector<Segment>> critical_path_segments(const std::vector<std::vector<SyncPoint>>& points,
                                                         const SpanObserver& spans,
                                                         const std::vector<std::uint32_t>& candidates,
                                                         const std::vector<bool>& has_records,
                                                         const PathWindow& window) {
  std::vector<std::vector<Segment>> out(points.size());
  const auto& first = spans.first();
  // The path ends where the run ends: scout's last MPI_Finalize, else the location (with MPI
  // records, if any) whose trace ends last.
  const bool any_records = std::any_of(candidates.begin(), candidates.end(), [&](auto l) { return has_records[l]; });
  auto [t, at] = path_start(spans, candidates, has_records, any_records, window);
  if (at == kNone) return out;
  std::vector<std::size_t> unused(points.size());  // sync points below this index not yet used
  std::vector<std::uint64_t> floor(points.size(), kNoEnter);  // where the path left each location last
  for (std::size_t l = 0; l < points.size(); ++l) unused[l] = points[l].size();
  auto add = [&](std::uint32_t l, std::uint64_t from, std::uint64_t to) {
    if (to > from) out[l].push_back({from, to});
  };
  for (;;) {
    const auto& mine = points[at];
    // The latest unused sync point whose waiting ended by t.
    auto end = std::upper_bound(mine.begin(), mine.begin() + static_cast<std::ptrdiff_t>(unused[at]), t,
                                [](std::uint64_t time, const SyncPoint& p) { return time < p.wait_end; });
    if (end == mine.begin()) {
      add(at, window.bottom(at, first[at], t), t);
      break;
    }
    const SyncPoint& p = *(end - 1);
    unused[at] = static_cast<std::size_t>(end - 1 - mine.begin());
    add(at, p.wait_end, t);
    // Continue where the causer entered the operation, as scout does also where a clock
    // violation puts that after the end of the wait; but never after where the path already
    // left the causer (scout's backward replay meets each location's events once, backward).
    floor[at] = std::min(floor[at], p.wait_end);
    at = p.causer;
    t = std::min(p.resume, floor[at]);
  }
  for (auto& s : out) std::reverse(s.begin(), s.end());
  return out;
}

// --- attribution -----------------------------------------------------------------------------

CriticalPathObserver::CriticalPathObserver(std::vector<std::vector<Segment>> segments,
                                           const std::vector<std::uint32_t>& locations)
    : segments_(std::move(segments)), column_(segments_.size(), kNone) {
  for (std::size_t c = 0; c < locations.size(); ++c)
    if (locations[c] < column_.size()) column_[locations[c]] = static_cast<std::uint32_t>(c);
}

void CriticalPathObserver::begin_location(std::uint32_t location) {
  flush();
  location_ = location;
  mine_ = location < segments_.size() ? &segments_[location] : nullptr;
  next_ = 0;
  stack_.clear();
  started_ = false;
}

// The time since the last event belongs to the innermost open call path; its part inside the
// location's segments is on the critical path.
void CriticalPathObserver::attribute(std::uint64_t until) {
  if (!mine_ || stack_.empty() || until <= last_) return;
  const auto& segs = *mine_;
  while (next_ < segs.size() && segs[next_].to <= last_) ++next_;
  std::uint64_t ticks = 0;
  for (auto i = next_; i < segs.size() && segs[i].from < until; ++i) {
    const auto from = std::max(segs[i].from, last_), to = std::min(segs[i].to, until);
    if (to > from) ticks += to - from;
  }
  const auto cnode = stack_.back();
  if (ticks == 0 || cnode == kNone) return;  // kNone: a call path the report lacks
  if (cnode >= current_.size()) current_.resize(std::size_t(cnode) + 1, 0);
  if (current_[cnode] == 0) touched_.push_back(cnode);
  current_[cnode] += ticks;
}

void CriticalPathObserver::flush() {
  for (auto cnode : touched_) {
    shares_.push_back({cnode, column_[location_], current_[cnode]});
    current_[cnode] = 0;
  }
  touched_.clear();
}

void CriticalPathObserver::event(const trace::Event& e, std::uint32_t cnode) {
  if (started_ && mine_ && !mine_->empty()) attribute(e.time);
  started_ = true;
  last_ = e.time;
  if (e.type == trace::EventType::Enter) stack_.push_back(cnode);
  else if (e.type == trace::EventType::Leave && !stack_.empty()) stack_.pop_back();
}

void CriticalPathObserver::rows(const std::vector<std::uint32_t>& rows) {
  flush();
  for (auto& s : shares_)
    if (s.cnode < rows.size()) s.cnode = rows[s.cnode];
}

std::vector<double> CriticalPathObserver::values(std::size_t cnodes) const {
  std::size_t columns = 0;
  for (auto c : column_)
    if (c != kNone) columns = std::max<std::size_t>(columns, c + 1);
  std::vector<double> out(cnodes * columns, 0.0);
  for (const auto& s : shares_)
    if (s.cnode < cnodes && s.column < columns) out[std::size_t(s.cnode) * columns + s.column] += double(s.ticks);
  return out;
}

// --- attribution from the pass (one process) -------------------------------------------------

namespace {
constexpr std::uint32_t kNoCall = (1u << 24) - 1;  // a call piece without time (or a gap's Call value)
constexpr std::uint64_t kMaxTicks = (std::uint64_t(1) << 40) - 1;

bool mpi_call(const trace::Region& r) {
  if (r.paradigm == "mpi") return true;
  if (r.name.size() < 4) return false;
  std::string head = r.name.substr(0, 4);
  std::transform(head.begin(), head.end(), head.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  return head == "mpi_";
}
}  // namespace

PathTimeline::PathTimeline(const trace::Definitions& defs, SpanObserver* spans)
    : spans_(spans), lines_(defs.locations.size()) {
  // The path's OpenMP ends (add_omp_sync_points) lie at barriers as its MPI ends at MPI calls, and
  // at forks: barriers are cut as calls, forks and parallel regions' enters and leaves are cuts,
  // so that those ends fall on cuts or inside one-call-path pieces.
  mpi_region_.reserve(defs.regions.size());
  for (const auto& r : defs.regions)
    mpi_region_.push_back(mpi_call(r) || omp_barrier_region(r.name) ? kCall : omp_parallel_region(r.name) ? kCut : 0);
}

inline bool PathTimeline::cut(std::uint64_t at) {
  if (!close_piece(at, false)) return false;
  append_whole_fourfold(line_->calls, Call{at, 0, 0, gap_, kNoCall});  // a call without time that closes the gap
  gap_ = 0;
  return true;
}

void PathTimeline::absorb(trace::CallPathObserver& other) {
  auto& later = dynamic_cast<PathTimeline&>(other);
  if (spans_ && later.spans_) spans_->absorb(*later.spans_);
  if (rows_.size() + later.rows_.size() > 255) throw std::length_error("PathTimeline: more than 255 parts");
  const auto offset = static_cast<std::uint8_t>(rows_.size());
  for (auto& r : later.rows_) rows_.push_back(std::move(r));
  for (auto l : later.read_) {
    if (l >= lines_.size() || l >= later.lines_.size()) continue;
    lines_[l] = std::move(later.lines_[l]);
    lines_[l].rows = static_cast<std::uint8_t>(lines_[l].rows + offset);
    read_.push_back(l);
  }
  later.release();
}

void PathTimeline::begin_location(std::uint32_t location) {
  if (spans_) spans_->begin_location(location);
  read_.push_back(location);
  // Locations of a run tend to be alike: room for what the previous one kept (fewer regrowth copies).
  std::size_t calls = 0, entries = 0;
  if (line_) calls = line_->calls.size(), entries = line_->entries.size();
  line_ = location < lines_.size() ? &lines_[location] : nullptr;
  if (line_) line_->calls.reserve(calls), line_->entries.reserve(entries);
  stack_.clear();
  piece_.clear();
  last_ = piece_begin_ = own_ = 0;
  call_depth_ = 0;
  gap_ = 0;
}

void PathTimeline::drop() {
  line_->exact = false;
  std::vector<Call>().swap(line_->calls);
  std::vector<Entry>().swap(line_->entries);
  line_ = nullptr;
}

// The time since the last event is the innermost open call path's (as CriticalPathObserver
// counts it); a piece has few call paths, most recent last.
inline void PathTimeline::add(std::uint32_t cnode, std::uint64_t ticks) {
  for (auto it = piece_.rbegin(); it != piece_.rend(); ++it)
    if (it->first == cnode) {
      it->second += ticks;
      return;
    }
  piece_.push_back({cnode, ticks});
}

inline bool PathTimeline::keep(std::uint32_t cnode, std::uint64_t ticks) {
  if (cnode >= kNoCall || ticks > kMaxTicks) return false;
  append_whole_fourfold(line_->entries, Entry{ticks, cnode});
  return true;
}

// Ends the open gap (call false) or MPI call at `at`; false when the location was dropped.
bool PathTimeline::close_piece(std::uint64_t at, bool call) {
  auto& line = *line_;
  const auto duration = at > piece_begin_ ? at - piece_begin_ : 0;
  if (!call) {
    if (piece_.size() > kMaxGapEntries) return drop(), false;
    for (const auto& [cnode, ticks] : piece_)
      if (!keep(cnode, ticks)) return drop(), false;
    gap_ = static_cast<std::uint32_t>(piece_.size());
  } else if (piece_.empty()) {
    // No time in nested regions: the call's own call path throughout (the stack's top, before the
    // Leave's pop). Split where the duration outgrows 32 bits; a call longer than kMaxSplits
    // such pieces (hours at a nanosecond clock; a corrupt time can make it 2^60 ticks, and as
    // many 4 GiB pieces as that) is left to the second read.
    const auto cnode = duration == 0 ? kNoCall : stack_.back();
    if (duration > 0 && cnode >= kNoCall) return drop(), false;
    if (duration / (std::uint64_t(1) << 32) >= kMaxSplits) return drop(), false;
    auto enter = piece_begin_;
    auto left = duration;
    do {
      const auto part = std::min<std::uint64_t>(left, ~std::uint32_t(0));
      append_whole_fourfold(line.calls, Call{enter, static_cast<std::uint32_t>(part), 0, gap_, cnode});
      gap_ = 0;
      enter += part;
      left -= part;
    } while (left > 0);
  } else {  // nested regions: the call's exclusive time per call path
    if (own_ > 0) add(stack_.back(), own_);
    if (duration > ~std::uint32_t(0) || piece_.size() >= kNoCall) return drop(), false;
    for (const auto& [cnode, ticks] : piece_)
      if (!keep(cnode, ticks)) return drop(), false;
    append_whole_fourfold(line.calls, Call{piece_begin_, static_cast<std::uint32_t>(duration), 1, gap_,
                          static_cast<std::uint32_t>(piece_.size())});
    gap_ = 0;
  }
  piece_.clear();
  own_ = 0;
  piece_begin_ = at;
  if (line.entries.size() > kEntriesPerCall * line.calls.size() + kEntriesSlack) return drop(), false;
  return true;
}

void PathTimeline::event(const trace::Event& e, std::uint32_t cnode) {
  if (spans_) {
    spans_->event(e, cnode);  // SpanObserver is final: a direct call
    if (e.type == trace::EventType::ProgramBegin || e.type == trace::EventType::ProgramEnd) return;
  }
  if (!line_) return;
  if (e.type == trace::EventType::ThreadFork || e.type == trace::EventType::OmpFork) {
    // Where the path leaves a parallel region's workers for the master (add_omp_sync_points).
    if (line_->entered && call_depth_ == 0) {
      if (!stack_.empty() && e.time > last_) add(stack_.back(), e.time - last_);
      last_ = std::max(last_, e.time);
      cut(e.time);
    }
    return;
  }
  if (!stack_.empty() && e.time > last_) {
    if (call_depth_ == stack_.size()) own_ += e.time - last_;  // the open MPI call's own time: no search
    else add(stack_.back(), e.time - last_);
  }
  last_ = e.time;
  if (e.type == trace::EventType::Enter) {
    if (!line_->entered) line_->entered = true, line_->begin = piece_begin_ = e.time;
    const auto kind = call_depth_ == 0 && e.region < mpi_region_.size() ? mpi_region_[e.region] : 0;
    if (kind == kCall) {
      if (!close_piece(e.time, false)) return;
      call_depth_ = stack_.size() + 1;
    } else if (kind == kCut && !cut(e.time)) {
      return;
    }
    stack_.push_back(cnode);
  } else if (e.type == trace::EventType::Leave && !stack_.empty()) {
    if (call_depth_ == stack_.size()) {
      call_depth_ = 0;
      if (!close_piece(e.time, true)) return;
    } else if (call_depth_ == 0 && e.region < mpi_region_.size() && mpi_region_[e.region] == kCut && !cut(e.time)) {
      return;
    }
    stack_.pop_back();
  }
}

void PathTimeline::end_location(std::uint32_t location) {
  if (spans_) spans_->end_location(location);
  if (!line_ || !line_->entered) return;
  // Frames still open: the second read gives their time up to the last event of any type,
  // which this observer (Enter and Leave only) does not see.
  if (!stack_.empty()) return drop();
  if (!close_piece(last_, false)) return;
  append_whole_fourfold(line_->calls, Call{last_, 0, 0, gap_, kNoCall});  // closes the last gap
  gap_ = 0;
}

// One location: false when a segment's end lies inside a piece of several call paths.
bool PathTimeline::attribute(const Line& line, const std::vector<Segment>& segments, std::vector<std::uint64_t>& current,
                             std::vector<std::uint32_t>& touched) const {
  if (!line.exact) return false;
  std::size_t s = 0;
  auto credit = [&](std::uint32_t cnode, std::uint64_t ticks) {
    if (cnode >= current.size()) current.resize(std::size_t(cnode) + 1, 0);
    if (current[cnode] == 0) touched.push_back(cnode);
    current[cnode] += ticks;
  };
  // Piece [a, b): its entries, or one call path `single` throughout.
  auto piece = [&](std::uint64_t a, std::uint64_t b, const Entry* entries, std::size_t n, std::uint32_t single) {
    if (b <= a) return true;
    while (s < segments.size() && segments[s].to <= a) ++s;
    std::uint64_t on = 0;
    for (auto i = s; i < segments.size() && segments[i].from < b; ++i) {
      const auto from = std::max(segments[i].from, a), to = std::min(segments[i].to, b);
      if (to > from) on += to - from;
    }
    if (on == 0) return true;
    if (single != kNoCall) return credit(single, on), true;
    if (on == b - a || n == 0) {  // whole (or nothing to give)
      for (std::size_t i = 0; i < n; ++i) credit(static_cast<std::uint32_t>(entries[i].cnode), entries[i].ticks);
      return true;
    }
    if (n == 1 && entries[0].ticks == b - a) return credit(static_cast<std::uint32_t>(entries[0].cnode), on), true;
    return false;  // a part of a piece with several call paths: which part is whose is not kept
  };
  const Entry* entry = line.entries.data();
  auto at = line.begin;
  for (const auto& c : line.calls) {
    if (s == segments.size()) break;
    if (!piece(at, c.enter, entry, c.gap, kNoCall)) return false;
    entry += c.gap;
    const auto end = c.enter + c.duration;
    if (c.nested) {
      if (!piece(c.enter, end, entry, c.value, kNoCall)) return false;
      entry += c.value;
    } else if (c.value != kNoCall && !piece(c.enter, end, nullptr, 0, c.value)) {
      return false;
    }
    at = end;
  }
  return true;
}

std::vector<std::uint32_t> PathTimeline::attribute(const std::vector<std::vector<Segment>>& segments,
                                                   const std::vector<std::uint32_t>& column, std::size_t columns,
                                                   std::vector<std::uint64_t>& ticks) const {
  std::vector<std::uint32_t> reread;
  std::vector<std::uint64_t> current;
  std::vector<std::uint32_t> touched;
  const auto cnodes = columns ? ticks.size() / columns : 0;
  for (std::uint32_t l = 0; l < segments.size(); ++l) {
    if (segments[l].empty() || l >= column.size() || column[l] == kNone) continue;
    const bool exact = l < lines_.size() && attribute(lines_[l], segments[l], current, touched);
    static const std::vector<std::uint32_t> kNoRows;
    const auto& rows = l < lines_.size() && lines_[l].rows < rows_.size() ? rows_[lines_[l].rows] : kNoRows;
    for (auto c : touched) {
      const auto row = c < rows.size() ? rows[c] : kNone;
      if (exact && row < cnodes) ticks[std::size_t(row) * columns + column[l]] += current[c];
      current[c] = 0;
    }
    touched.clear();
    if (!exact) reread.push_back(l);
  }
  return reread;
}

std::uint64_t PathTimeline::bytes() const {
  std::uint64_t n = 0;
  for (const auto& l : lines_) n += l.calls.size() * sizeof(Call) + l.entries.size() * sizeof(Entry);
  return n;
}

void PathTimeline::release() {
  std::vector<Line>().swap(lines_);
  line_ = nullptr;
}

void add_critical_path(profile::LocalProfile& p, const std::vector<double>& ticks, std::uint64_t resolution) {
  auto m = seconds_metric("critical_path", "Critical path",
                          "Time on the critical path of the run: the activities that determine its wall-clock time");
  const auto cnodes = p.cnode_count(), cols = p.locations.size();
  cube::Severity s(m.dtype, cnodes, cols);
  const double tick = 1.0 / static_cast<double>(resolution);
  for (std::size_t c = 0; c < cnodes; ++c)
    for (std::size_t l = 0; l < cols; ++l) {
      const double v = c * cols + l < ticks.size() ? ticks[c * cols + l] * tick : 0.0;
      std::memcpy(s.row(c) + l * 8, &v, 8);
    }
  s.mark_nonzero_rows();
  p.metrics.push_back(std::move(m));
  p.values.push_back(std::move(s));
}

}  // namespace cubescale::analysis
