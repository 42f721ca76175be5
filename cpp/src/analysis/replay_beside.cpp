#include "cubescale/analysis/replay_beside.hpp"

#include <algorithm>
#include <cstring>
#include <limits>
#include <map>
#include <numeric>
#include <stdexcept>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>

#include "cubescale/analysis/beside_patterns.hpp"
#include "cubescale/analysis/instance_order.hpp"
#include "cubescale/analysis/replay.hpp"
#include "cubescale/common/format_error.hpp"

namespace cubescale::analysis {

namespace {

template <typename T>
void release(std::vector<T>& v) {
  std::vector<T>().swap(v);
}

[[noreturn]] void needs_complete() {
  throw std::logic_error("the replay's complete steps need Replay(..., complete=true)");
}

// One instance's members (records indices, in communicator rank order): per member its extra, with
// the synchronization-point decision of the patterns, the clock condition and the critical
// path's collective sync points (collective_sync).
void instance_extras(const std::vector<CollectiveRecord>& records, const std::vector<std::size_t>& members,
                     std::vector<CollectiveExtra>& out) {
  thread_local std::vector<const CollectiveRecord*> m;  // reused: one call per instance
  thread_local std::vector<MemberSync> sync;
  m.resize(members.size());
  for (std::size_t k = 0; k < members.size(); ++k) m[k] = &records[members[k]];
  collective_sync(m, sync);
  for (std::size_t k = 0; k < members.size(); ++k) {
    auto& x = out[members[k]];
    x.reference = sync[k].reference;
    if (!sync[k].sync || sync[k].causer == kNone) continue;
    x.causer = m[sync[k].causer]->location, x.causer_time = m[sync[k].causer]->enter;
  }
}

}  // namespace

std::vector<CollectiveExtra> collective_extras(const std::vector<CollectiveRecord>& records,
                                               const CommunicatorRanks& ranks, std::uint32_t stride,
                                               const Chunking& chunking) {
  std::vector<CollectiveExtra> out(records.size());
  // Instances; each instance's few members then in rank order (ties, on self communicators, by
  // location), their ranks looked up once per member. An instance writes only its members'
  // extras: chunks of whole instances run at once.
  const auto order = instance_order(records, stride);
  run_chunks(instance_chunks(records, order, chunking), [&](std::size_t, std::size_t begin, std::size_t end) {
    std::vector<std::pair<std::pair<std::uint32_t, std::uint32_t>, std::size_t>> ranked;  // ((rank, location), record)
    std::vector<std::size_t> members;
    for (std::size_t a = begin, b = begin; a < end; a = b) {
      const auto& head = records[order[a]];
      for (b = a + 1; b < end && same_instance(records[order[b]], head); ++b) {
      }
      ranked.clear();
      for (auto k = a; k < b; ++k) {
        const auto& c = records[order[k]];
        ranked.push_back({{ranks.rank(c.communicator, c.location), c.location}, order[k]});
      }
      std::sort(ranked.begin(), ranked.end());
      members.clear();
      for (const auto& [key, index] : ranked) members.push_back(index);
      if (!ranks.partial_init_exit(head.communicator, members.size())) instance_extras(records, members, out);
    }
  });
  return out;
}

BesideObservers::BesideObservers(const trace::Trace& trace)
    : omp(trace), spans(trace.definitions().locations.size()), fan({&omp, &counts, &spans}) {}


ReplayBeside& Replay::beside() {
  if (!beside_) needs_complete();
  return *beside_;
}

DistributedCorrection& Replay::correction() {
  if (!beside().correction) throw std::logic_error("time correction steps need begin_correction first");
  return *beside_->correction;
}

void Replay::begin_sends_beside() {
  auto& b = beside();
  const auto n = trace_.definitions().locations.size();
  b.has_records.assign(n, false);
  b.had_sends.assign(records_.size(), false);
  b.late_sends.clear();
  b.late_points.assign(records_.size(), {});  // not resized later: each late_sends entry points into it
  b.next_completion.assign(records_.size(), 0);
  b.completions_given_back.assign(records_.size(), 0);
  b.extras_of.assign(n, kNone);
  for (std::size_t e = 0; e < point_to_point_.size(); ++e)
    if (point_to_point_[e].location < n) b.extras_of[point_to_point_[e].location] = e;
  b.window = PathWindow(n);  // the critical path's MPI_Init / MPI_Finalize
  for (std::size_t i = 0; i < records_.size(); ++i) {
    const auto& l = records_[i];
    const auto column = l.location < severities_.column.size() ? severities_.column[l.location] : kNone;
    b.late_sends.emplace_back(l.location, column);
    b.late_sends.back().keep_points(&b.late_points[i]);
    if (l.location < n) b.has_records[l.location] = !l.sends.empty() || !l.receives.empty() || !l.collectives.empty();
    b.had_sends[i] = !l.sends.empty();
    b.window.note(l);
  }
}

void Replay::answer_round() {
  // Per send received this round (in the order they came) the posting time of its receive,
  // handed out as the send is paired with it (match_messages raises for one without).
  auto& b = beside();
  b.home_posted.assign(incoming_sends_.size(), kNoTime);
  for (std::size_t k = paired_; k < incoming_sends_.size(); ++k, ++paired_)
    b.home_posted[k] = pair_one(incoming_sends_[k]).posted;
}

void Replay::late_receiver_round() {
  // The round's own sends again in packing order: the j-th send to rank r is the j-th of r's
  // block of `posted` (no slot kept per send); then their records go.
  auto& b = beside();
  auto& extras = point_to_point_;
  const double tick = 1.0 / static_cast<double>(trace_.definitions().clock.resolution);
  if (b.posted.size() != std::accumulate(round_counts_.begin(), round_counts_.end(), std::uint64_t(0)))
    throw std::logic_error("late_receiver_round: " + std::to_string(b.posted.size()) + " posting times for the round");
  std::vector<std::uint64_t> at(ranks_, 0);
  for (std::size_t r = 1; r < ranks_; ++r) at[r] = at[r - 1] + round_counts_[r - 1];
  for (std::size_t l = round_list_, i = round_index_; l < records_.size() && packed_before(l, i); ++l, i = 0) {
    const auto& sends = records_[l].sends;
    const auto e = records_[l].location < b.extras_of.size() ? b.extras_of[records_[l].location] : kNone;
    auto* completions = e == kNone ? nullptr : &extras[e].completion_enter;
    for (; i < sends.size() && packed_before(l, i); ++i) {
      const auto& s = sends[i];
      const auto posted = b.posted[at[rank_of(s)]++];
      if (s.beside() == Beside::Own) {
        b.late_sends[l].send(own_completion(s), s.time, posted, s.peer, tick, severities_, &b.counts);
      } else if (s.beside() == Beside::Extra && completions && b.next_completion[l] < completions->size()) {
        const auto c = held_completion(s, completions->at(b.next_completion[l]++, s.enter));
        b.late_sends[l].send(c, s.time, posted, s.peer, tick, severities_, &b.counts);
      }
    }
    if (!completions) continue;
    // A location whose sends all went: its completions too; else the whole pages of those used.
    if (l < next_list_ || next_index_ >= sends.size()) {
      completions->clear();
      b.completions_given_back[l] = 0;
      continue;
    }
    constexpr std::uintptr_t kPage = 4096;
    const auto base = reinterpret_cast<std::uintptr_t>(completions->data());
    const auto begin = (base + kPage - 1) & ~(kPage - 1);
    const auto end = (base + b.next_completion[l] * NearTimes::kEntryBytes) & ~(kPage - 1);
    if (end > begin && end - begin > b.completions_given_back[l]) {
      give_back_pages(reinterpret_cast<const void*>(begin + b.completions_given_back[l]),
                      end - begin - b.completions_given_back[l]);
      b.completions_given_back[l] = end - begin;
    }
  }
  release(b.posted);
  release(b.home_posted);
  release_packed();
}

void Replay::messages_beside() {
  auto& b = beside();
  const auto& defs = trace_.definitions();
  SendBuffer().swap(outgoing_sends_);  // exchanged
  release_packed();                    // the last round's records
  // Every send was paired and answered in its round: the receivers' index and the buffer of
  // the sends received go (the MPI_Irecv postings went into their records when the rounds
  // began); the receives hold their sends' enter and time.
  pair_received();
  receive_index_.clear();
  SendBuffer().swap(incoming_sends_);
  // Late Sender and its wrong-order patterns first (match_messages' kernel, which raises on
  // unmatched messages here then), so that the receives can go as the sync points are made.
  match_paired_receives(true);
  // A view of the own receives as the one-process kernels take them (vectors moved, no
  // copies); they go with it at the end: the sync points give their pages back as they read
  // them, so that receives (56 bytes) and Late Sender points (24) never both exist in full.
  std::vector<LocationRecords> view(records_.size());
  for (std::size_t i = 0; i < records_.size(); ++i) {
    view[i].location = records_[i].location;
    view[i].receives = std::move(records_[i].receives);
  }
  const auto& column = severities_.column;
  auto& v = b.clock;
  v.cnodes = profile_.cnode_count();
  v.locations = mine_.size();
  v.counts.assign(v.cnodes * v.locations, 0);
  b.late_multi.assign(records_.size(), {});
  b.late_multi_enter.assign(records_.size(), {});
  for (std::size_t i = 0; i < records_.size(); ++i) {
    const auto& receives = view[i].receives;
    v.checked = v.checked || !receives.empty() || !records_[i].collectives.empty();
    for (std::size_t j = 0; j < receives.size(); ++j) {
      const auto& r = receives[j];
      if (!r.paired) continue;  // matching raises
      const auto send = paired_send(r, send_enters_);
      if (r.clock_violation) {  // decided as it was paired, as count_clock_violations
        ++v.point_to_point;
        if (r.cnode < v.cnodes && r.location < column.size() && column[r.location] != kNone)
          ++v.counts[std::size_t(r.cnode) * v.locations + column[r.location]];
      }
      // Late Receiver's exclusion needs of the receives only those of a Waitall/some that waited.
      if (r.call_kind == CallKind::WaitMulti && std::min(send.enter, r.leave) > r.enter) {
        b.late_multi[i].receives.push_back(r);
        b.late_multi_enter[i].push_back(send.enter);
      }
    }
  }
  b.points = sync_points_paired(view, send_enters_, CommunicatorRanks(defs), defs.locations.size());
  send_enters_ = {};
  count_omp_violations(b.omp, column, b.thread_latency, v);  // local: a process's threads are all here
}

void Replay::collectives_beside_home() {
  beside().home_extras =
      collective_extras(incoming_collectives_, CommunicatorRanks(trace_.definitions()), collective_stride_, chunking_);
}

void Replay::collectives_beside() {
  auto& b = beside();
  release(b.home_extras);
  if (b.extras.size() != outgoing_collectives_.size())
    throw std::logic_error("collective extras: " + std::to_string(b.extras.size()) + " for " +
                           std::to_string(outgoing_collectives_.size()) + " records");
  auto& v = b.clock;
  const auto& column = severities_.column;
  // Ordered as the one-process analysis finds them (by communicator, then instance; a
  // location's points in that order, which the stable sort by wait end below keeps for ties).
  for (const auto i : instance_order(outgoing_collectives_)) {
    const auto& c = outgoing_collectives_[i];
    const auto& x = b.extras[i];
    if (x.reference != kNoTime && c.leave < x.reference + b.latency) {
      ++v.collective;
      if (c.cnode < v.cnodes && c.location < column.size() && column[c.location] != kNone)
        ++v.counts[std::size_t(c.cnode) * v.locations + column[c.location]];
    }
    if (x.causer == kNone || x.causer == c.location || c.location >= b.points.size() || !moves_path(c)) continue;
    const auto idle = waited(c.enter, c.leave, x.causer_time);
    if (idle > 0)
      b.points[c.location].push_back({c.enter, c.enter + idle, x.causer_time, c.location, c.cnode, x.causer, false, false});
  }
  release(b.extras);
  add_omp_sync_points(b.omp, b.points);  // a process's threads are all on this rank
  // Each location's points sorted apart: chunks of locations at once.
  std::vector<std::uint64_t> weights(mine_.size());
  for (std::size_t l = 0; l < mine_.size(); ++l) weights[l] = mine_[l] < b.points.size() ? b.points[mine_[l]].size() : 0;
  run_chunks(chunk_bounds(weights, chunking_), [&](std::size_t, std::size_t begin, std::size_t end) {
    for (auto l = begin; l < end; ++l)
      if (mine_[l] < b.points.size()) sort_by_wait_end(b.points[mine_[l]]);
  });
  b.unused.assign(b.points.size(), 0);
  for (std::size_t l = 0; l < b.points.size(); ++l) b.unused[l] = b.points[l].size();
  b.segments.assign(b.points.size(), {});
  b.floor.assign(b.points.size(), kNoEnter);
}

void Replay::late_receiver() {
  // After matching: the sends an MPI_Waitall/some completes (their largest per call, unless the
  // call waited as a Late Sender) join what the rounds added. The values, in seconds, wait in
  // `late_receiver_values` until the other patterns are seconds too (late_receiver_after);
  // nothing else adds to Late Receiver, so the bytes are the same.
  auto& b = beside();
  const double tick = 1.0 / static_cast<double>(trace_.definitions().clock.resolution);
  auto& values = severities_.values[std::size_t(Pattern::LateReceiver)];
  if (b.seconds) throw std::logic_error("late_receiver: after late_receiver_after");
  for (std::size_t i = 0; i < records_.size() && i < b.late_sends.size(); ++i) {
    const auto loc = records_[i].location;
    if (loc >= severities_.column.size() || severities_.column[loc] == kNone) continue;
    if (b.had_sends[i]) severities_.mark(Pattern::LateReceiver);
    b.late_sends[i].finish(b.late_multi[i].receives, b.late_multi_enter[i], tick, severities_, &b.counts);
    // Its instances, of the rounds and of the Waitall/some calls, are the critical path's Late
    // Receiver sync points (collectives_beside sorts each location's points).
    auto& late = b.late_points[i];
    if (loc < b.points.size()) b.points[loc].insert(b.points[loc].end(), late.begin(), late.end());
    release(late);
  }
  b.late_receiver_values = std::move(values);
  values.assign(b.late_receiver_values.size(), 0.0);
  release(b.late_sends);
  release(b.late_points);
  release(b.next_completion);
  release(b.completions_given_back);
  release(b.late_multi);
  release(b.late_multi_enter);
  release(point_to_point_);
}

void Replay::late_receiver_after() {
  auto& b = beside();
  if (!b.seconds) severities_.to_seconds(trace_.definitions()), b.seconds = true;  // Late Receiver is in seconds
  severities_.values[std::size_t(Pattern::LateReceiver)] = std::move(b.late_receiver_values);
  release(b.late_receiver_values);
}

bool Replay::any_records() const {
  if (!beside_) needs_complete();
  return std::any_of(mine_.begin(), mine_.end(), [&](auto l) { return l < beside_->has_records.size() && beside_->has_records[l]; });
}

std::pair<std::size_t, std::size_t> Replay::path_window_members() const {
  if (!beside_) needs_complete();
  return beside_->window.members();
}

void Replay::set_path_window(std::size_t init_members, std::size_t finalize_members) {
  beside().window.decide(init_members, finalize_members, CommunicatorRanks(trace_.definitions()));
}

std::pair<std::uint64_t, std::uint32_t> Replay::path_start(bool any_records) const {
  if (!beside_) needs_complete();
  // As critical_path_segments (after set_path_window): the first of the own candidates.
  const auto& b = *beside_;
  const auto [t, at] = analysis::path_start(b.spans, mine_, b.has_records, any_records, b.window);
  if (at == kNone) return {0, kNone};
  return {t, position_[at]};
}

std::pair<std::uint32_t, std::uint64_t> Replay::walk(std::uint32_t at, std::uint64_t t) {
  // critical_path_segments' loop, while the path stays on this rank's locations.
  auto& b = beside();
  const auto& first = b.spans.first();
  const auto& column = severities_.column;
  auto own = [&](std::uint32_t l) { return l < column.size() && column[l] != kNone && l < b.points.size(); };
  if (own(at)) t = std::min(t, b.floor[at]);  // handed over: never after where the path left it
  while (own(at)) {
    const auto& mine = b.points[at];
    auto end = std::upper_bound(mine.begin(), mine.begin() + static_cast<std::ptrdiff_t>(b.unused[at]), t,
                                [](std::uint64_t time, const SyncPoint& p) { return time < p.wait_end; });
    if (end == mine.begin()) {
      const auto from = b.window.bottom(at, first[at], t);
      if (t > from) b.segments[at].push_back({from, t});
      return {kNone, 0};
    }
    const SyncPoint& p = *(end - 1);
    b.unused[at] = static_cast<std::size_t>(end - 1 - mine.begin());
    if (t > p.wait_end) b.segments[at].push_back({p.wait_end, t});
    b.floor[at] = std::min(b.floor[at], p.wait_end);
    t = p.resume;  // the causer's enter, at most its floor (critical_path_segments)
    at = p.causer;
    if (own(at)) t = std::min(t, b.floor[at]);
  }
  return {at, t};
}

std::vector<bool> Replay::present_complete() {
  auto& b = beside();
  auto out = severities_.present;
  b.omp_matched_cnodes = profile_.cnode_count();
  b.omp_matched = std::make_unique<OmpSeverities>(
      match_omp(b.omp, mine_, b.omp_matched_cnodes, trace_.definitions().clock.resolution));
  const auto& omp = *b.omp_matched;
  out.insert(out.end(), omp.present.begin(), omp.present.end());
  out.push_back(b.clock.checked);
  return out;
}

profile::LocalProfile Replay::finish_complete(const std::vector<bool>& present) {
  auto& b = beside();
  const auto& defs = trace_.definitions();
  const auto patterns = std::size_t(Pattern::Count), omps = std::size_t(OmpPattern::Count);
  if (present.size() != patterns + omps + 1)
    throw std::invalid_argument("present: " + std::to_string(present.size()) + " flags");
  if (!b.seconds) severities_.to_seconds(defs), b.seconds = true;
  // In the order analyze() adds them: the record patterns' tree, OpenMP, critical path, counts,
  // clock violations.
  auto tree = with_metric_tree(std::move(profile_), severities_,
                               std::vector<bool>(present.begin(), present.begin() + patterns));
  move_class_time(tree, b.moves);
  // The OpenMP matching present_complete did (the call tree has as many call paths still).
  auto omp = b.omp_matched && b.omp_matched_cnodes == tree.cnode_count()
                 ? std::move(*b.omp_matched)
                 : match_omp(b.omp, mine_, tree.cnode_count(), defs.clock.resolution);
  b.omp_matched.reset();
  omp.present.assign(present.begin() + patterns, present.begin() + patterns + omps);
  add_omp_tree(tree, omp);
  std::vector<std::uint32_t> on_path;
  for (auto l : mine_)
    if (l < b.segments.size() && !b.segments[l].empty()) on_path.push_back(l);
  for (auto& s : b.segments) std::reverse(s.begin(), s.end());
  // scout's fork and join time on the path (omp_path_time), while the segments are here.
  std::vector<double> omp_time;
  if (std::any_of(b.omp.syncs().begin(), b.omp.syncs().end(), [](const auto& l) { return !l.parallels.empty(); })) {
    omp_time.assign(std::size_t(tree.cnode_count()) * mine_.size(), 0.0);
    omp_path_time(b.omp, b.segments, severities_.column, mine_.size(), tree.cnode_parents, omp_time);
  }
  CriticalPathObserver path(std::move(b.segments), mine_);
  attribute_path(trace_, tree, mine_, on_path, path);  // the own locations on the path, read again
  auto path_ticks = path.values(tree.cnode_count());
  for (std::size_t i = 0; i < path_ticks.size() && i < omp_time.size(); ++i) path_ticks[i] += omp_time[i];
  add_critical_path(tree, path_ticks, defs.clock.resolution);
  add_counts(tree, b.counts, b.points, severities_.column);
  b.clock.checked = present.back();
  tree = with_clock_violations(std::move(tree), b.clock);
  if (!b.corrected)
    stats_.p2p_violations = b.clock.point_to_point, stats_.collective_violations = b.clock.collective,
    stats_.omp_violations = b.clock.omp;
  pattern_statistics_ = b.instances.finish();  // then the OpenMP patterns' (pattern_statistics())
  pattern_statistics_.insert(pattern_statistics_.end(), omp.statistics.begin(), omp.statistics.end());
  const double tick = 1.0 / static_cast<double>(defs.clock.resolution);
  program_spans_.clear();  // for the performance-impact metrics after finishing (impact.hpp)
  for (auto l : mine_) program_spans_.push_back(static_cast<double>(b.spans.program_span(l)) * tick);
  local_time_ = omp_local_time(b.omp, mine_, tree.cnode_parents, defs.clock.resolution);
  severities_ = Severities();
  beside_.reset();
  return tree;
}

std::uint64_t Replay::omp_sync_events() const { return beside_ ? beside_->omp.sync_events() : 0; }

std::uint64_t Replay::beside_bytes() {
  if (!beside_) return 0;
  auto& b = beside();
  std::uint64_t n = (b.home_posted.capacity() + b.posted.capacity()) * 8 +
                    (b.home_extras.capacity() + b.extras.capacity()) * sizeof(CollectiveExtra);
  n += b.omp.bytes();  // OpenMP synchronization records (their events count as communication events)
  if (b.correction) n += b.correction->bytes();  // --time-correct, until finish_correction
  for (const auto& s : b.late_sends) n += s.bytes();
  n += b.late_receiver_values.capacity() * 8;
  // Sync points grow by push_back: as the records (Replay::extract), the unused half of a
  // doubled list is never written and holds no memory, so count what they hold.
  for (const auto& p : b.points) n += p.size() * sizeof(SyncPoint);
  for (const auto& p : b.late_points) n += p.size() * sizeof(SyncPoint);  // Late Receiver's, until late_receiver()
  for (const auto& l : b.late_multi) n += l.receives.capacity() * sizeof(MessageRecord);
  // Late Receiver's extras: the postings, and the completions' enters but the pages the
  // rounds gave back.
  for (std::size_t e = 0; e < point_to_point_.size(); ++e) {
    const auto& x = point_to_point_[e];
    n += x.receive_posted.bytes() + x.completion_enter.bytes();
  }
  for (std::size_t i = 0; i < records_.size() && i < b.completions_given_back.size(); ++i) {
    const auto loc = records_[i].location;
    const auto e = loc < b.extras_of.size() ? b.extras_of[loc] : kNone;
    if (e != kNone) n -= std::min<std::uint64_t>(b.completions_given_back[i], point_to_point_[e].completion_enter.bytes());
  }
  for (const auto& l : nonblocking_)
    n += l.records.capacity() * sizeof(NonBlockingRecord) + l.start_positions.capacity() * 8;
  n += (b.outgoing_nonblocking.capacity() + b.incoming_nonblocking.capacity()) * sizeof(NonBlockingRecord) +
       (b.home_verdicts.capacity() + b.verdicts.capacity()) * sizeof(NonBlockingVerdict);
  return n;
}

}  // namespace cubescale::analysis

// --- non-blocking collectives ------------------------------------------------------------------

namespace cubescale::analysis {

namespace {

[[noreturn]] void fail_at(const trace::Trace& trace, const NonBlockingRecord& r, const std::string& what) {
  throw FormatError(trace.path(), trace.event_member(r.location), r.position, what);
}

// One instance, members in communicator rank order: the rules of nonblocking_collectives().
void instance_verdicts(const trace::Trace& trace, const std::vector<std::uint32_t>& world,
                       const std::vector<NonBlockingRecord>& records, const std::vector<std::size_t>& members,
                       std::vector<NonBlockingVerdict>& out) {
  const auto& defs = trace.definitions();
  const auto& first = records[members.front()];
  const auto op = first.op;
  const auto rule = sync_rule(op);
  const auto root = nonblocking_root(defs, world, first);
  std::uint64_t latest = 0, root_start = kNoTime, so_far = 0;
  for (auto i : members) {
    const auto& r = records[i];
    if (r.op != op)
      fail_at(trace, r, "MPI non-blocking " + trace::collective_op_name(r.op) + " meets " +
                            trace::collective_op_name(op) + " of location " + defs.locations[first.location].name);
    latest = std::max(latest, r.start);
    if (r.location == root) root_start = r.start;
  }
  for (auto i : members) {
    const auto& r = records[i];
    so_far = std::max(so_far, r.start);
    const auto [p, until] = nonblocking_wait(rule, op, r.location == root, latest, root_start, so_far);
    out[i] = {until, std::uint32_t(p), members.size() > 1 ? 1u : 0u};
  }
}

}  // namespace

std::vector<NonBlockingVerdict> nonblocking_verdicts(const trace::Trace& trace,
                                                     const std::vector<NonBlockingRecord>& records) {
  std::vector<NonBlockingVerdict> out(records.size());
  std::vector<std::size_t> order(records.size());
  std::vector<std::uint32_t> rank(records.size());  // in its communicator, looked up once per record
  const CommunicatorRanks ranks(trace.definitions());
  std::vector<std::uint32_t> self(records.size());  // the location on a self communicator (own instances)
  for (std::size_t i = 0; i < order.size(); ++i) {
    order[i] = i, rank[i] = ranks.rank(records[i].communicator, records[i].location);
    self[i] = self_communicator(trace.definitions(), records[i].communicator) ? records[i].location : kNone;
  }
  auto key = [&](std::size_t i) {
    return std::make_tuple(records[i].communicator, records[i].order, self[i], rank[i], records[i].location);
  };
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return key(a) < key(b); });
  const auto world = world_locations(trace.definitions());
  std::vector<std::size_t> members;
  for (std::size_t k = 0; k < order.size(); ++k) {
    members.push_back(order[k]);
    const auto& r = records[order[k]];
    if (k + 1 < order.size() && records[order[k + 1]].communicator == r.communicator &&
        records[order[k + 1]].order == r.order && self[order[k + 1]] == self[order[k]])
      continue;
    instance_verdicts(trace, world, records, members, out);
    members.clear();
  }
  return out;
}

namespace {

// Per own location and communicator its records sorted by start order (the instance is the index).
std::map<std::pair<std::uint32_t, std::uint32_t>, std::vector<const NonBlockingRecord*>> by_communicator(
    const std::vector<NonBlockingLocation>& records) {
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::vector<const NonBlockingRecord*>> out;
  for (const auto& l : records)
    for (const auto& r : l.records) out[{r.communicator, r.location}].push_back(&r);
  for (auto& [key, v] : out)
    std::sort(v.begin(), v.end(), [](const auto* a, const auto* b) { return a->order < b->order; });
  return out;
}

}  // namespace

std::vector<std::uint32_t> Replay::nonblocking_counts() const {
  if (!beside_) needs_complete();
  std::vector<std::uint32_t> out;
  for (const auto& [key, v] : by_communicator(nonblocking_))
    out.insert(out.end(), {key.first, key.second, static_cast<std::uint32_t>(v.size())});
  return out;
}

void Replay::check_nonblocking_counts(const std::vector<std::uint32_t>& all) {
  // As nonblocking_collectives(): per communicator (ascending) the locations (ascending) with
  // fewer than the most; the error names the record of the first location with the most.
  std::map<std::uint32_t, std::map<std::uint32_t, std::uint32_t>> counts;
  for (std::size_t i = 0; i + 2 < all.size(); i += 3) counts[all[i]][all[i + 1]] = all[i + 2];
  const auto& defs = trace_.definitions();
  for (const auto& [comm, per] : counts) {
    if (self_communicator(defs, comm)) continue;  // every process its own instances
    std::uint32_t most = 0;
    for (const auto& [loc, n] : per) most = std::max(most, n);
    for (const auto& [loc, n] : per) {
      if (n == most) continue;
      const auto other = std::find_if(per.begin(), per.end(), [&](const auto& x) { return x.second == most; })->first;
      if (other >= severities_.column.size() || severities_.column[other] == kNone) return;  // its owner raises
      const auto lists = by_communicator(nonblocking_);
      const auto& r = *lists.at({comm, other})[n];
      fail_at(trace_, r, "MPI non-blocking " + trace::collective_op_name(r.op) + " has no counterpart on location " +
                             defs.locations[loc].name);
    }
  }
}

std::vector<std::uint64_t> Replay::pack_nonblocking(std::size_t ranks, const std::vector<std::uint32_t>& homes) {
  auto& b = beside();
  std::vector<NonBlockingRecord> mine;
  std::vector<std::uint32_t> rank;
  // Own records in the order the one-process matcher meets them per location: communicator, instance.
  for (const auto& [key, v] : by_communicator(nonblocking_))
    for (std::uint32_t k = 0; k < v.size(); ++k) {
      mine.push_back(*v[k]);
      mine.back().order = k;
      const auto h = (std::uint64_t(key.first) * 1000003u + k) % (homes.empty() ? ranks : homes.size());
      rank.push_back(homes.empty() ? std::uint32_t(h) : homes[h]);
    }
  release(nonblocking_);
  std::vector<std::uint64_t> counts(ranks, 0), next(ranks, 0);
  for (auto r : rank) ++counts[r];
  for (std::size_t k = 1; k < ranks; ++k) next[k] = next[k - 1] + counts[k - 1];
  b.outgoing_nonblocking.resize(mine.size());
  for (std::size_t i = 0; i < mine.size(); ++i) b.outgoing_nonblocking[next[rank[i]]++] = mine[i];
  return counts;
}

void Replay::reduce_nonblocking() {
  auto& b = beside();
  b.home_verdicts = nonblocking_verdicts(trace_, b.incoming_nonblocking);
  release(b.incoming_nonblocking);
}

void Replay::nonblocking_after() {
  auto& b = beside();
  release(b.home_verdicts);
  const auto& recs = b.outgoing_nonblocking;
  if (b.verdicts.size() != recs.size())
    throw std::logic_error("non-blocking verdicts: " + std::to_string(b.verdicts.size()) + " for " +
                           std::to_string(recs.size()) + " records");
  if (!b.seconds) severities_.to_seconds(trace_.definitions()), b.seconds = true;
  const double tick = 1.0 / static_cast<double>(trace_.definitions().clock.resolution);
  // The largest per completion call (location, call); the first of equals, in the matcher's order.
  std::vector<std::size_t> order(recs.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) {
    return std::make_tuple(recs[x].communicator, recs[x].order, recs[x].location) <
           std::make_tuple(recs[y].communicator, recs[y].order, recs[y].location);
  });
  struct Found {
    std::uint64_t ticks = 0;
    Pattern pattern = Pattern::Count;
    const NonBlockingRecord* record = nullptr;
  };
  std::map<std::pair<std::uint32_t, std::uint32_t>, Found> best;
  auto& v = b.clock;
  v.checked = v.checked || !recs.empty();
  for (auto i : order) {
    const auto& r = recs[i];
    // The clock condition (count_nonblocking_violations): the completion left before what it
    // waits for. Not in an instance of one member (a self communicator's operation, or on a
    // communicator of one process): it synchronizes nobody (nonblocking_references; clc takes a
    // size-1 communicator's collective for an internal event), though its verdict names the
    // pattern (of 0 ticks: it waits for its own start).
    if (b.verdicts[i].synchronizes && b.verdicts[i].until != kNoTime && r.leave < b.verdicts[i].until + b.latency) {
      ++v.collective;
      const auto col = r.location < severities_.column.size() ? severities_.column[r.location] : kNone;
      if (r.cnode < v.cnodes && col != kNone) ++v.counts[std::size_t(r.cnode) * v.locations + col];
    }
    const auto p = Pattern(b.verdicts[i].pattern);
    if (p == Pattern::Count) continue;
    severities_.mark(p);
    const auto until = b.verdicts[i].until;
    const auto end = std::min(until == kNoTime ? 0 : until, r.leave);
    const std::uint64_t ticks = r.test || until == kNoTime || end <= r.enter ? 0 : end - r.enter;
    auto& f = best[{r.location, r.call}];
    if (!f.record || ticks > f.ticks) f = {ticks, p, &r};
  }
  const auto& column = severities_.column;
  for (const auto& [key, f] : best) {
    const auto& r = *f.record;
    const auto col = r.location < column.size() ? column[r.location] : kNone;
    if (col == kNone || r.cnode == kNone || r.cnode >= severities_.cnodes) continue;
    if (f.ticks > 0) {
      severities_.values[std::size_t(f.pattern)][std::size_t(r.cnode) * severities_.locations + col] +=
          static_cast<double>(f.ticks) * tick;
      if (severities_.instances)
        severities_.instances->add(std::size_t(f.pattern), {f.ticks, r.enter, r.leave, r.cnode, r.location});
    }
    const auto moved = r.only_collectives ? r.leave - r.enter : f.ticks;
    if (moved > 0) b.moves.push_back({r.cnode, col, static_cast<double>(moved) * tick, f.pattern == Pattern::BarrierWait});
  }
  release(b.outgoing_nonblocking);
  release(b.verdicts);
}

}  // namespace cubescale::analysis

// --- --time-correct over ranks -------------------------------------------------------------------

namespace cubescale::analysis {

namespace {

using Key = DistributedCorrection::Key;
Key send_key(std::uint32_t from, std::uint32_t to, std::uint32_t communicator, std::uint32_t tag, std::uint32_t k) {
  return {(std::uint64_t(from) << 32) | to, (std::uint64_t(communicator) << 32) | tag, k};
}
Key instance_key(std::uint32_t communicator, std::uint32_t instance, std::uint32_t location) {
  return {(std::uint64_t(communicator) << 32) | instance, location, 0};
}

// Ordinals of messages per (peer, communicator, tag) in recorded order: the k-th send of A to B
// on (communicator, tag) is the k-th receive of B from A on it (pair_messages).
std::vector<std::uint32_t> ordinals(const std::vector<MessageRecord>& messages) {
  std::unordered_map<Key, std::uint32_t, DistributedCorrection::KeyHash> seen;
  std::vector<std::uint32_t> out;
  out.reserve(messages.size());
  for (const auto& m : messages) out.push_back(seen[send_key(m.peer, 0, m.communicator, m.tag, 0)]++);
  return out;
}

std::uint32_t home_of(const CollectiveRecord& c, std::size_t ranks, const std::vector<std::uint32_t>& homes) {
  return homes.empty() ? collective_home(c, ranks) : homes[collective_home(c, homes.size())];
}

// The references of a non-blocking instance's members (communicator rank order) from their enters (starts).
std::vector<std::uint64_t> nonblocking_member_references(const std::vector<CollectiveRecord>& members) {
  std::vector<std::uint32_t> locations;
  std::vector<std::uint64_t> starts;
  for (const auto& m : members) locations.push_back(m.location), starts.push_back(m.enter);
  return nonblocking_references(members.front().op, members.front().root, locations, starts);
}

// A receive's slot for its send's corrected time (DistributedCorrection::receives): unpaired,
// whether a send will come.
constexpr std::uint32_t kNoSend = kNone, kWaitingForSend = kNone - 1, kFarSend = kNone;

// Location c's event e (just walked) got `value`; `base`: its recorded time plus the offset
// carried in. As time_correct.cpp's amortize: a jump raises the ramp since the last producer or
// jump (walked again from its first event), a producer or a jump closes it.
void settle(LocationCorrection& c, const Sync& e, std::uint64_t base, std::uint64_t value) {
  const auto before = c.offset, jump = value - base;
  if (jump > 0) {
    const auto t0 = c.started ? c.start : c.first;
    const auto here = c.walk.where();
    c.walk.go(c.window);
    for (std::uint32_t m = 0; m < c.pending; ++m, c.walk.advance()) {
      const auto t = c.walk.peek().time;
      const auto rise = e.time > t0 && t > t0 ? static_cast<std::uint64_t>(
                                                    static_cast<unsigned __int128>(jump) * (t - t0) / (e.time - t0))
                                              : 0;
      c.runs.add(t, t, before + rise, 1);
    }
    c.walk.go(here);
    c.offset += jump;
  } else if (e.producer()) {
    if (c.pending) c.runs.add(c.pending_first, c.pending_last, before, c.pending);
  } else {
    if (!c.pending) c.pending_first = e.time;
    c.pending_last = e.time, ++c.pending;
    c.walk.advance();
    return;
  }
  c.runs.add(e.time, e.time, c.offset, 1);
  c.started = true, c.start = e.time, c.pending = 0;
  c.walk.advance();
  c.window = c.walk.where();
}

template <typename T>
std::vector<std::uint64_t> group(std::vector<std::pair<std::uint32_t, T>>& queued, std::vector<T>& out,
                                 std::size_t ranks) {
  std::vector<std::uint64_t> counts(ranks, 0), next(ranks, 0);
  for (const auto& [r, v] : queued) ++counts[r];
  for (std::size_t k = 1; k < ranks; ++k) next[k] = next[k - 1] + counts[k - 1];
  out.resize(queued.size());
  for (const auto& [r, v] : queued) out[next[r]++] = v;
  queued.clear();
  return counts;
}

}  // namespace

std::vector<std::uint64_t> Replay::begin_correction(const std::vector<std::uint32_t>& owner, std::size_t ranks,
                                                    std::uint32_t rank, const std::vector<std::uint32_t>& homes) {
  auto& b = beside();
  b.correction = std::make_unique<DistributedCorrection>();
  auto& d = correction();
  d.owner = owner, d.ranks = ranks, d.rank = rank, d.homes = homes;
  // Fixed in size and place until finish_correction: the driver keeps views of them.
  d.row = DistributedCorrection::row_words(ranks);
  d.rows.assign(ranks * d.row, 0), d.received.assign(d.rows.size(), 0);
  d.layout.assign(3 * 4 * ranks, 0);
  for (auto h : homes)
    if (h >= ranks) throw std::invalid_argument("home rank " + std::to_string(h) + " of " + std::to_string(ranks));
  std::vector<std::pair<std::uint32_t, CollectiveRecord>> members;
  d.nonblocking = align_nonblocking(records_, nonblocking_);
  d.omp = align_omp(records_, &b.omp);
  d.group_waiting.assign(b.omp.sync_groups(), 0);
  d.group_reference.assign(b.omp.sync_groups(), kNoTime);
  {
    ClockViolations recorded;  // the OpenMP violations as recorded (no cells: cnodes 0)
    count_omp_violations(b.omp, severities_.column, b.thread_latency, recorded);
    d.recorded_omp = recorded.omp;
  }
  d.world = world_locations(trace_.definitions());
  if (homes.empty())
    for (std::uint32_t r = 0; r < ranks; ++r) d.home_ranks.push_back(r);
  else
    d.home_ranks = homes, std::sort(d.home_ranks.begin(), d.home_ranks.end()),
    d.home_ranks.erase(std::unique(d.home_ranks.begin(), d.home_ranks.end()), d.home_ranks.end());
  if (!records_.empty()) d.extras_of.assign(trace_.definitions().locations.size(), kNone);
  for (std::size_t e = 0; e < point_to_point_.size(); ++e)
    if (point_to_point_[e].location < d.extras_of.size()) d.extras_of[point_to_point_[e].location] = e;
  d.locations.resize(records_.size());
  for (std::size_t i = 0; i < records_.size(); ++i) {
    auto& l = records_[i];
    auto& c = d.locations[i];
    if (d.omp[i])
      for (const auto& sync : d.omp[i]->syncs) d.group_waiting[sync.group] += sync.producer();
    c.walk = SyncWalk(l, d.nonblocking[i], d.omp[i]);
    c.window = c.walk.where();
    const auto e = l.location < d.extras_of.size() ? d.extras_of[l.location] : kNone;
    c.first = first_time(l, e == kNone ? nullptr : &point_to_point_[e], d.nonblocking[i], {d.omp[i], &b.omp});
    if (c.walk.held()) c.send_k = ordinals(l.sends);  // its sends may go out of queue order
    // Every receive waits for a send until the rounds stall (take_send_counts): a consistent
    // trace never stalls, so no rank counts its sends per queue.
    for (auto& r : l.receives) r.paired = 0, r.location = kWaitingForSend;
    // How many instances each communicator has here: the homes learn how many members each
    // instance has (its members come with their corrected enters, collective_member).
    std::map<std::pair<std::uint32_t, std::uint32_t>, std::uint32_t> instances;  // (communicator, kind)
    for (const auto& c : l.collectives)
      if (!c.self) ++instances[{c.communicator, 0}];
    if (d.nonblocking[i])
      for (const auto& r : d.nonblocking[i]->records)
        if (!self_communicator(trace_.definitions(), r.communicator)) ++instances[{r.communicator, 1}];
    for (const auto& [key, n] : instances) {
      CollectiveRecord count;
      count.communicator = key.first, count.op = key.second, count.location = l.location, count.instance = n;
      for (auto h : d.home_ranks) members.push_back({h, count});
    }
    d.nonblocking_k.emplace_back();
    if (!d.nonblocking[i]) continue;
    // Each record's instance: its place in start order among the location's on its communicator.
    const auto& nb = d.nonblocking[i]->records;
    auto& k = d.nonblocking_k.back();
    std::vector<std::uint32_t> by(nb.size());
    for (std::uint32_t j = 0; j < by.size(); ++j) by[j] = j;
    std::sort(by.begin(), by.end(), [&](std::uint32_t x, std::uint32_t y) {
      return std::tie(nb[x].communicator, nb[x].order) < std::tie(nb[y].communicator, nb[y].order);
    });
    k.assign(nb.size(), 0);
    for (std::size_t j = 1; j < by.size(); ++j)
      if (nb[by[j]].communicator == nb[by[j - 1]].communicator) k[by[j]] = k[by[j - 1]] + 1;
    for (auto& x : k) x |= kNonBlockingInstance;
  }
  d.receives.build(records_, trace_.definitions().locations.size());
  std::size_t producers = 0;
  for (const auto& l : records_) producers += l.sends.size() + l.collectives.size();
  for (const auto* nb : d.nonblocking) producers += nb ? nb->records.size() : 0;
  d.round_values = std::max<std::size_t>(256, producers / kMinRounds);
  return group(members, d.outgoing_members, ranks);
}

std::vector<std::uint64_t> Replay::pack_send_counts() {
  auto& d = correction();
  std::map<std::tuple<std::uint32_t, std::uint32_t, std::uint32_t, std::uint32_t>, std::uint32_t> counts;
  for (const auto& l : records_)
    for (const auto& s : l.sends) ++counts[{s.location, s.peer, s.communicator, s.tag}];
  std::vector<std::pair<std::uint32_t, SendCount>> queued;
  for (const auto& [key, n] : counts) {
    const auto [from, to, communicator, tag] = key;
    const auto r = to < d.owner.size() ? d.owner[to] : kNone;
    if (r < d.ranks) queued.push_back({r, {from, to, communicator, tag, n, 0}});
  }
  return group(queued, d.outgoing_counts, d.ranks);
}

void Replay::take_send_counts() {
  // After a stall: the first `count` receives of each queue get a send (those paired already
  // among them); the others wait for none, as in one process (the matching reports them).
  auto& d = correction();
  for (auto& l : records_)
    for (auto& r : l.receives)
      if (!r.paired) r.location = kNoSend;
  for (const auto& c : d.incoming_counts) {
    const auto q = d.receives.range({c.from, c.to, c.communicator, c.tag});
    if (q.list == kNone) continue;
    for (auto p = q.begin; p < q.end && p - q.begin < c.count; ++p)
      if (auto& r = records_[q.list].receives[d.receives.record(q.list, p)]; !r.paired) r.location = kWaitingForSend;
  }
  release(d.incoming_counts), release(d.outgoing_counts);
}

bool Replay::correction_pending() {
  const auto& d = correction();
  return std::any_of(d.locations.begin(), d.locations.end(), [](const LocationCorrection& c) { return !c.walk.done(); });
}

void Replay::take_members() {
  auto& d = correction();
  // Home: per communicator (and kind) how many instances each member location has.
  for (const auto& c : d.incoming_members) d.member_counts[{c.communicator, c.op}].push_back(c.instance);
  for (auto& [key, counts] : d.member_counts) std::sort(counts.begin(), counts.end());
  release(d.incoming_members), release(d.outgoing_members);
}

std::size_t DistributedCorrection::members(std::uint32_t communicator, std::uint32_t instance) const {
  // The locations with more than k instances on the communicator have instance k.
  const bool nb = (instance & kNonBlockingInstance) != 0;
  const auto it = member_counts.find({communicator, nb ? 1u : 0u});
  if (it == member_counts.end()) return 0;
  const auto k = instance & ~kNonBlockingInstance;
  return static_cast<std::size_t>(it->second.end() - std::upper_bound(it->second.begin(), it->second.end(), k));
}

CollectiveRecord Replay::collective_member(const CollectiveRecord& c, std::uint64_t corrected) const {
  auto m = c;
  m.time = c.enter;  // the recorded enter (the home reads no other time but the leave)
  m.enter = corrected;
  return m;
}

void Replay::arrive(const CollectiveRecord& m) {
  // Home: a member with its corrected enter (`time`: its recorded one). Once every member of
  // its instance came: the time each member's leave must follow, from the corrected enters and
  // (the violations as recorded) from the recorded ones, in communicator rank order.
  auto& d = correction();
  auto reply = [&](const CollectiveRecord& member, std::uint64_t reference, std::uint64_t recorded) {
    const InstanceValue ref{member.communicator, member.instance, member.location, 0, reference, recorded};
    const auto r = member.location < d.owner.size() ? d.owner[member.location] : kNone;
    if (r == d.rank) d.references_known[instance_key(ref.communicator, ref.instance, ref.location)] = {reference, recorded};
    else if (r < d.ranks) d.queued_references.push_back({r, ref});
  };
  if (m.self) return reply(m, kNoTime, kNoTime);  // a self communicator's collective depends on nobody
  const auto key = std::make_pair(m.communicator, m.instance);
  auto& members = d.instances[key].members;
  members.push_back(m);
  if (members.size() < d.members(m.communicator, m.instance)) return;
  const CommunicatorRanks ranks(trace_.definitions());
  std::sort(members.begin(), members.end(), [&](const CollectiveRecord& x, const CollectiveRecord& y) {
    return ranks.before(x.communicator, x.location, y.location);
  });
  const auto n = members.size();
  std::vector<std::uint64_t> references(n, kNoTime), recorded(n, kNoTime);
  auto recorded_members = members;
  for (auto& x : recorded_members) x.enter = x.time;
  if ((m.instance & kNonBlockingInstance) != 0) {
    references = nonblocking_member_references(members);
    recorded = nonblocking_member_references(recorded_members);
  } else if (!ranks.partial_init_exit(m.communicator, n)) {  // else depends on nobody, as in one process
    std::vector<std::size_t> all(n);
    for (std::size_t i = 0; i < n; ++i) all[i] = i;
    std::vector<CollectiveExtra> extras(n), extras_recorded(n);
    instance_extras(members, all, extras);
    instance_extras(recorded_members, all, extras_recorded);
    for (std::size_t i = 0; i < n; ++i) references[i] = extras[i].reference, recorded[i] = extras_recorded[i].reference;
  }
  for (std::size_t i = 0; i < n; ++i) reply(members[i], references[i], recorded[i]);
  d.instances.erase(key);
}

void Replay::send_arrived(const SendValue& v) {
  // The send's receive: its queue's next (a sender in time order) or its k-th.
  auto& d = correction();
  const MessageKey key{v.from, v.to, v.communicator, v.tag};
  RecordRef at;
  if (v.k == kNone) {
    at = d.receives.next(key);
  } else if (const auto q = d.receives.range(key); q.list != kNone && v.k < q.end - q.begin) {
    at = {q.list, d.receives.record(q.list, q.begin + v.k)};
  }
  if (at.list == kNone) return;  // never received (the matching reports it)
  auto& r = records_[at.list].receives[at.index];
  if (r.time < v.recorded + beside_->latency) ++d.recorded_p2p;  // as count_clock_violations
  r.paired = 1;
  if (v.value <= r.time && r.time - v.value < kFarSend) {
    r.location = static_cast<std::uint32_t>(r.time - v.value);
  } else {
    r.location = kFarSend;
    d.far_sends[&r] = v.value;
  }
}

void Replay::correct_round() {
  // As time_correct.cpp's step(): each own location as far as the known producers allow.
  auto& d = correction();
  const auto latency = beside_->latency, thread_latency = beside_->thread_latency;
  bool moved = false;
  // Values queued for other ranks this round: at most round_values (then the next round goes on).
  const auto full = [&d] { return d.queued_sends.size() + d.queued_enters.size() >= d.round_values; };
  for (bool again = true; again && !full();) {
    again = false;
    for (std::size_t i = 0; i < records_.size() && !full(); ++i) {
      auto& l = records_[i];
      auto& c = d.locations[i];
      while (!c.walk.done() && !full()) {
        const auto e = c.walk.peek();
        const auto base = e.time + c.offset;
        std::uint64_t need = 0;
        if (e.kind == SyncKind::Receive) {
          auto& r = l.receives[e.index];
          if (r.paired) {
            auto sent = r.time - r.location;
            if (r.location == kFarSend) {
              const auto it = d.far_sends.find(&r);
              sent = it->second;
              d.far_sends.erase(it);
            }
            need = sent + latency;
          } else if (r.location == kWaitingForSend) {
            break;
          }  // else no send to wait for (the matching raises)
        } else if (e.kind == SyncKind::CollectiveLeave) {
          const auto& r = l.collectives[e.index];
          const auto it = d.references_known.find(instance_key(r.communicator, r.instance, r.location));
          if (it == d.references_known.end()) break;
          if (it->second.first != kNoTime) need = it->second.first + latency;
          if (it->second.second != kNoTime && e.time < it->second.second + latency) ++d.recorded_collective;
          d.references_known.erase(it);
        } else if (e.kind == SyncKind::OmpConsumer) {
          const auto g = d.omp[i]->syncs[e.index].group;
          if (d.group_waiting[g]) break;  // a producer of its group is not stepped yet
          if (d.group_reference[g] != kNoTime) need = d.group_reference[g] + thread_latency;
        } else if (e.kind == SyncKind::NonBlockingLeave) {
          const auto& r = d.nonblocking[i]->records[e.index];
          const auto it = d.references_known.find(instance_key(r.communicator, d.nonblocking_k[i][e.index], r.location));
          if (it == d.references_known.end()) break;
          if (it->second.first != kNoTime) need = it->second.first + latency;
          if (it->second.second != kNoTime && e.time < it->second.second + latency) ++d.recorded_collective;
          d.references_known.erase(it);
        }
        const auto value = std::max(base, need);
        if (value > base) {
          ++d.stats.jumps;
          d.stats.largest = std::max(d.stats.largest, value - base);
        }
        if (e.kind == SyncKind::Send) {
          const auto& s = l.sends[e.index];
          const SendValue v{s.location, s.peer,       s.communicator, s.tag, c.send_k.empty() ? kNone : c.send_k[e.index],
                            0,          value,        e.time};
          const auto r = s.peer < d.owner.size() ? d.owner[s.peer] : kNone;
          if (r == d.rank) send_arrived(v);
          else if (r < d.ranks) d.queued_sends.push_back({r, v});
        } else if (e.kind == SyncKind::CollectiveEnter) {
          const auto& r = l.collectives[e.index];
          const auto m = collective_member(r, value);
          const auto h = home_of(r, d.ranks, d.homes);
          if (h == d.rank) arrive(m);
          else d.queued_enters.push_back({h, m});
        } else if (e.kind == SyncKind::OmpProducer) {
          auto& latest = d.group_reference[d.omp[i]->syncs[e.index].group];  // its consumers are on own locations
          latest = latest == kNoTime ? value : std::max(latest, value);
          --d.group_waiting[d.omp[i]->syncs[e.index].group];
        } else if (e.kind == SyncKind::NonBlockingStart) {
          // A non-blocking collective's member as a collective's (enter: the start, leave: the
          // completion call's leave, root: the root's location).
          const auto& r = d.nonblocking[i]->records[e.index];
          CollectiveRecord c;
          c.enter = r.start, c.leave = c.time = r.leave, c.position = r.position;
          c.location = r.location, c.communicator = r.communicator, c.op = r.op, c.cnode = r.cnode;
          c.root = nonblocking_root(trace_.definitions(), d.world, r);
          c.self = self_communicator(trace_.definitions(), r.communicator);  // depends on nobody
          c.instance = d.nonblocking_k[i][e.index];
          const auto m = collective_member(c, value);
          const auto h = home_of(m, d.ranks, d.homes);
          if (h == d.rank) arrive(m);
          else d.queued_enters.push_back({h, m});
        }
        settle(c, e, base, value);  // walks on
        moved = again = true;
      }
    }
  }
  const auto sends = group(d.queued_sends, d.outgoing_sends, d.ranks);
  const auto enters = group(d.queued_enters, d.outgoing_enters, d.ranks);
  const auto references = group(d.queued_references, d.outgoing_references, d.ranks);
  // The rows for the plan (DistributedCorrection::rows).
  const auto n = d.ranks, row = d.row;
  const std::int64_t queued = static_cast<std::int64_t>(d.outgoing_sends.size() + d.outgoing_enters.size() +
                                                        d.outgoing_references.size());
  const std::int64_t pending = correction_pending() ? 1 : 0;
  const auto bytes_for = [&](std::size_t r) {
    return sends[r] * sizeof(SendValue) + enters[r] * sizeof(CollectiveRecord) + references[r] * sizeof(InstanceValue);
  };
  bool fits = true;
  for (std::size_t r = 0; r < n && fits; ++r) fits = bytes_for(r) <= (row - 8) * 8;
  std::size_t at_send = 0, at_enter = 0, at_reference = 0;
  for (std::size_t r = 0; r < n; ++r) {
    auto* x = &d.rows[r * row];
    x[0] = static_cast<std::int64_t>(sends[r]), x[1] = static_cast<std::int64_t>(enters[r]);
    x[2] = static_cast<std::int64_t>(references[r]);
    x[3] = moved || queued ? 1 : 0, x[4] = pending | (fits ? 0 : 2);
    x[5] = static_cast<std::int64_t>(d.outgoing_sends.size()), x[6] = static_cast<std::int64_t>(d.outgoing_enters.size());
    x[7] = static_cast<std::int64_t>(d.outgoing_references.size());
    if (!fits) continue;
    auto* into = reinterpret_cast<unsigned char*>(x + 8);  // the values as bytes, as an Alltoallv moves them
    const auto put = [&into](const auto* from, std::size_t count) {
      if (!count) return;
      std::memcpy(into, from, count * sizeof(*from));
      into += count * sizeof(*from);
    };
    put(d.outgoing_sends.data() + at_send, sends[r]), put(d.outgoing_enters.data() + at_enter, enters[r]);
    put(d.outgoing_references.data() + at_reference, references[r]);
    at_send += sends[r], at_enter += enters[r], at_reference += references[r];
  }
}

std::uint32_t Replay::plan_round() {
  auto& d = correction();
  const auto n = d.ranks, row = d.row;
  // A rank that failed before the rows' Alltoall (Python's _time_correct) marks its rows with
  // a negative "moved": every rank sees it and raises that rank's error instead of waiting.
  for (std::size_t r = 0; r < n; ++r)
    if (d.received[r * row + 3] < 0) return kRoundFailed;
  std::uint32_t state = 0;
  std::int64_t totals[3] = {0, 0, 0};
  bool fits = true;  // every rank's values are in its rows (each rank marks all its rows alike)
  for (std::size_t r = 0; r < n; ++r) {
    const auto* x = &d.received[r * row];
    if (x[3]) state |= 1u;
    if (x[4] & 1) state |= 2u;
    if (x[4] & 2) fits = false;
    for (int k = 0; k < 3; ++k) totals[k] += x[5 + k];
  }
  // Decided from every rank's rows, so that every rank throws alike (none waits in a collective
  // for one that threw): each count and displacement is at most its kind's total.
  for (int k = 0; k < 3; ++k)
    if (totals[k] < 0 || totals[k] > std::numeric_limits<std::int32_t>::max())
      throw std::length_error("a round of the time correction moves more than 2^31 - 1 values of one kind");
  std::fill(d.layout.begin(), d.layout.end(), 0);
  d.inline_round = fits;
  if (fits) return state;  // take_values reads the values from the rows
  for (int k = 0; k < 3; ++k) {
    if (!totals[k]) continue;
    state |= 4u << k;
    auto* sent = &d.layout[(k * 4 + 0) * n];
    auto* sent_at = &d.layout[(k * 4 + 1) * n];
    auto* got = &d.layout[(k * 4 + 2) * n];
    auto* got_at = &d.layout[(k * 4 + 3) * n];
    std::int64_t s = 0, g = 0;
    for (std::size_t r = 0; r < n; ++r) {
      sent[r] = static_cast<std::int32_t>(d.rows[r * row + k]), got[r] = static_cast<std::int32_t>(d.received[r * row + k]);
      sent_at[r] = static_cast<std::int32_t>(s), got_at[r] = static_cast<std::int32_t>(g);
      s += sent[r], g += got[r];
    }
  }
  return state;
}

void Replay::size_round() {
  auto& d = correction();
  const auto n = d.ranks;
  const auto received = [&](int k) {
    const auto* got = &d.layout[(k * 4 + 2) * n];
    return static_cast<std::size_t>(std::accumulate(got, got + n, std::int64_t{0}));
  };
  d.incoming_sends.resize(received(0)), d.incoming_enters.resize(received(1)), d.incoming_references.resize(received(2));
}

void Replay::take_values() {
  auto& d = correction();
  if (d.inline_round) unpack_inline_values();
  for (const auto& v : d.incoming_sends) send_arrived(v);
  for (const auto& v : d.incoming_references)
    d.references_known[instance_key(v.communicator, v.instance, v.location)] = {v.value, v.recorded};
  for (const auto& v : d.incoming_enters) arrive(v);
  release(d.incoming_sends), release(d.incoming_enters), release(d.incoming_references);
  release(d.outgoing_sends), release(d.outgoing_enters), release(d.outgoing_references);
}

// A round carried in the rows (plan_round): its values into the incoming buffers, in the
// order an Alltoallv puts them there (by sending rank), so that take_values applies them as it
// applies those of any round.
void Replay::unpack_inline_values() {
  auto& d = correction();
  d.inline_round = false;
  const auto n = d.ranks, row = d.row;
  const auto room = static_cast<std::int64_t>((row - 8) * 8);
  for (std::size_t r = 0; r < n; ++r) {  // the rows say what they hold: never read past one
    const auto* x = &d.received[r * row];
    if (std::any_of(x, x + 3, [room](std::int64_t c) { return c < 0 || c > room; }) ||
        x[0] * std::int64_t(sizeof(SendValue)) + x[1] * std::int64_t(sizeof(CollectiveRecord)) +
                x[2] * std::int64_t(sizeof(InstanceValue)) >
            room)
      throw std::length_error("a round's row holds more values than it has room for");
  }
  d.incoming_sends.clear(), d.incoming_enters.clear(), d.incoming_references.clear();
  for (std::size_t r = 0; r < n; ++r) {
    const auto* x = &d.received[r * row];
    const auto* from = reinterpret_cast<const unsigned char*>(x + 8);  // sends, enters, references
    const auto take = [&from](auto& into, std::int64_t count) {
      const auto at = into.size();
      into.resize(at + static_cast<std::size_t>(count));
      if (count) std::memcpy(into.data() + at, from, static_cast<std::size_t>(count) * sizeof(into[0]));
      from += static_cast<std::size_t>(count) * sizeof(into[0]);
    };
    take(d.incoming_sends, x[0]), take(d.incoming_enters, x[1]), take(d.incoming_references, x[2]);
  }
}

namespace {

template <typename Map>
std::uint64_t table_bytes(const Map& m) {  // a node (next pointer, cached hash, entry) each and the buckets
  return m.size() * (2 * sizeof(void*) + sizeof(typename Map::value_type)) +
         (m.bucket_count() > 1 ? m.bucket_count() * sizeof(void*) : 0);
}

template <typename T>
std::uint64_t nested_bytes(const std::vector<std::vector<T>>& v) {
  std::uint64_t n = v.capacity() * sizeof(std::vector<T>);
  for (const auto& x : v) n += x.capacity() * sizeof(T);
  return n;
}

}  // namespace

std::uint64_t Replay::correction_peak_bytes() const { return beside_ ? beside_->correction_peak : 0; }

std::uint64_t DistributedCorrection::bytes() const {
  std::uint64_t n = locations.capacity() * sizeof(LocationCorrection) + nested_bytes(nonblocking_k) +
                    extras_of.capacity() * 8;
  for (const auto& c : locations) n += c.walk.bytes() + c.runs.bytes() + c.send_k.capacity() * 4;
  n += group_reference.capacity() * 8 + group_waiting.capacity() * 4;
  n += table_bytes(references_known) + table_bytes(far_sends) + receives.bytes();
  n += (outgoing_counts.capacity() + incoming_counts.capacity()) * sizeof(SendCount);
  for (const auto& [key, i] : instances)  // a map node (four words) each
    n += 32 + sizeof(key) + sizeof(Instance) + i.members.capacity() * sizeof(CollectiveRecord);
  for (const auto& [key, counts] : member_counts) n += 32 + sizeof(key) + sizeof(counts) + counts.capacity() * 4;
  n += (world.capacity() + home_ranks.capacity()) * 4;
  n += (rows.capacity() + received.capacity()) * 8 + layout.capacity() * 4;  // the rounds' plan: 16 * row + 48 bytes per rank
  n += (outgoing_members.capacity() + incoming_members.capacity()) * sizeof(CollectiveRecord);
  n += queued_sends.capacity() * sizeof(queued_sends[0]) + queued_enters.capacity() * sizeof(queued_enters[0]) +
       queued_references.capacity() * sizeof(queued_references[0]);
  n += (outgoing_sends.capacity() + incoming_sends.capacity()) * sizeof(SendValue) +
       (outgoing_enters.capacity() + incoming_enters.capacity()) * sizeof(CollectiveRecord) +
       (outgoing_references.capacity() + incoming_references.capacity()) * sizeof(InstanceValue);
  return n;
}

TimeCorrectionStats Replay::finish_correction() {
  auto& b = beside();
  auto& d = correction();
  for (std::size_t i = 0; i < records_.size(); ++i)
    if (!d.locations[i].walk.done())
      uncorrectable(trace_, records_[i], d.locations[i].walk.peek(), d.nonblocking[i], d.omp[i]);
  // The receives' slots are done with: their locations back.
  for (auto& l : records_)
    for (auto& r : l.receives) r.paired = 0, r.location = l.location;
  d.receives.clear();
  std::unordered_map<const MessageRecord*, std::uint64_t>().swap(d.far_sends);
  const auto held = record_bytes() + beside_bytes();
  b.correction_peak = held;
  for (std::size_t i = 0; i < records_.size(); ++i) {
    auto& l = records_[i];
    auto& c = d.locations[i];
    if (c.pending) c.runs.add(c.pending_first, c.pending_last, c.offset, c.pending);  // the last ramp: no jump
    // The offset function through the runs' ends (time_correct.cpp's amortize has a point per
    // event; inside a run of one offset they add nothing), then the moves.
    const auto f = OffsetFunction::over_runs(c.first, c.runs);
    const auto e = l.location < d.extras_of.size() ? d.extras_of[l.location] : kNone;
    PointToPointExtras* x = e == kNone ? nullptr : &point_to_point_[e];
    const OmpMoves omp{d.omp[i], &b.omp};
    move_between(l, x, f, d.nonblocking[i], omp);
    const auto barrier_of = d.omp[i] ? sync_barriers(*d.omp[i]) : std::vector<std::uint32_t>();
    c.walk.rewind();  // the sync times behind the walk move as it goes
    OffsetRuns::Reader runs(c.runs);
    for (OffsetRun run; runs.next(run);)
      for (std::uint32_t k = 0; k < run.count; ++k, c.walk.advance()) {
        const auto& s = c.walk.peek();
        move_sync(l, s, s.time + run.offset, d.nonblocking[i], omp, barrier_of);
      }
    keep_calls_around(l, x, d.nonblocking[i], omp);
    c = LocationCorrection();  // its memory back
  }
  const auto stats = d.stats;
  stats_.p2p_violations = d.recorded_p2p, stats_.collective_violations = d.recorded_collective;
  stats_.omp_violations = d.recorded_omp;
  stats_.corrected_jumps = stats.jumps;
  b.corrected = true;
  b.correction.reset();
  return stats;
}

}  // namespace cubescale::analysis
