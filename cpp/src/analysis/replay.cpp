#include "cubescale/analysis/replay.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "cubescale/analysis/beside_patterns.hpp"
#include "cubescale/analysis/impact.hpp"
#include "cubescale/analysis/late_receiver.hpp"
#include "cubescale/analysis/nonblocking_collectives.hpp"
#include "cubescale/analysis/time_correct.hpp"
#include "cubescale/common/format_error.hpp"

namespace cubescale::analysis {

namespace {

template <typename Vector>
void release(Vector& v) {
  Vector().swap(v);
}

// Stable grouping by destination rank: records per rank, and the records in rank order in
// `out` (as Out, what the exchange moves of them). Each location's list is released once
// copied, and the pages of its part copied so far every 64 Ki records (a rank with one
// location would hold all of it twice otherwise), so that the records exist about once.
template <typename OutVector, typename T, typename Rank>
std::vector<std::uint64_t> group_by_rank(OutVector& out, std::size_t ranks, std::size_t total,
                                         std::vector<LocationRecords>& records, std::vector<T> LocationRecords::*list,
                                         Rank rank_of) {
  std::vector<std::uint64_t> counts(ranks, 0);
  for (const auto& l : records)
    for (const auto& r : l.*list) ++counts[rank_of(r)];
  std::vector<std::uint64_t> next(ranks, 0);
  for (std::size_t k = 1; k < ranks; ++k) next[k] = next[k - 1] + counts[k - 1];
  out.resize(total);
  for (auto& l : records) {
    const auto& in = l.*list;
    for (std::size_t i = 0; i < in.size(); ++i) {
      out[next[rank_of(in[i])]++] = typename OutVector::value_type(in[i]);
      if ((i + 1) % 65536 == 0) give_back_pages(in.data(), (i + 1) * sizeof(T));
    }
    release(l.*list);
  }
  return counts;
}

}  // namespace

Replay::Replay(const trace::Trace& trace, const std::vector<std::uint32_t>& analyzed,
               const std::vector<std::uint32_t>& mine, trace::CallPathObserver* beside)
    : trace_(trace) {
  extract(analyzed, mine, beside);
}

Replay::Replay(const trace::Trace& trace, const std::vector<std::uint32_t>& analyzed,
               const std::vector<std::uint32_t>& mine, bool complete, double min_latency)
    : trace_(trace) {
  if (complete) {
    beside_ = std::make_unique<ReplayBeside>(trace);
    const auto ticks = min_latency * static_cast<double>(trace.definitions().clock.resolution);
    beside_->latency = ticks > 0 ? static_cast<std::uint64_t>(std::llround(ticks)) : 0;  // as clock_checks
  }
  extract(analyzed, mine, beside_ ? &beside_->fan : nullptr);
  if (beside_) severities_.instances = &beside_->instances;  // trace.stat, as analyze() keeps it
}

Replay::~Replay() = default;

void Replay::extract(const std::vector<std::uint32_t>& analyzed, const std::vector<std::uint32_t>& mine,
                     trace::CallPathObserver* beside) {
  const auto& defs = trace_.definitions();
  const auto& trace = trace_;
  mine_ = mine;
  analyzed_.assign(defs.locations.size(), false);
  position_.assign(defs.locations.size(), kNone);
  for (std::size_t i = 0; i < analyzed.size(); ++i)
    if (analyzed[i] < analyzed_.size()) analyzed_[analyzed[i]] = true, position_[analyzed[i]] = std::uint32_t(i);
  RecordExtractor extractor(trace);
  ObserverFan observers({&extractor, beside});
  trace::ProfileStats profile_stats;
  profile_ = trace::trace_profile(trace, mine, &profile_stats, beside ? static_cast<trace::CallPathObserver*>(&observers) : &extractor);
  records_ = std::move(extractor.records());
  severities_ = Severities(profile_.cnode_count(), mine, defs.locations.size());
  stats_.events = profile_stats.events;
  for (auto& l : records_) {
    stats_.messages += l.sends.size() + l.receives.size();
    stats_.collectives += l.collectives.size();
    // Growth by doubling leaves up to half of a list's capacity unused, but never touched (the
    // records were copied into the new buffer, nothing written beyond them): it holds no
    // memory, and shrinking would copy the list (a moment with it twice).
  }
}

std::vector<std::uint64_t> Replay::pack_sends(const std::vector<std::uint32_t>& owner, std::size_t ranks) {
  std::size_t total = 0;
  for (const auto& l : records_) {
    total += l.sends.size();
    for (const auto& s : l.sends)
      if (s.peer >= owner.size() || owner[s.peer] >= ranks || !analyzed_[s.peer])
        fail(trace_, s.location, s.position, s.time,
             "MPI send to " + trace_.definitions().locations[s.peer].name + ", which is not analyzed");
  }
  auto counts = group_by_rank(outgoing_sends_, ranks, total, records_, &LocationRecords::sends,
                              [&](const MessageRecord& s) { return owner[s.peer]; });
  return counts;  // the receivers' owners match them
}

void Replay::match_messages() {
  release(outgoing_sends_);
  ExchangedSendQueues queues(incoming_sends_);
  match_receives_of(queues, false);
  release(incoming_sends_);
}

void Replay::match_own_messages(bool keep) {
  // One process: the sends stay in their locations' lists (no packing, no copy).
  SendQueues queues(records_);
  match_receives_of(queues, keep);
  if (!keep)
    for (auto& l : records_) release(l.sends);
}

template <typename Queues>
void Replay::match_receives_of(Queues& queues, bool keep) {
  for (const auto& l : records_) {
    for (const auto& r : l.receives)
      if (r.peer >= analyzed_.size() || !analyzed_[r.peer])
        fail(trace_, r.location, r.position, r.time,
             "MPI receive from " + trace_.definitions().locations[r.peer].name + ", which is not analyzed");
    match_receives(trace_, l.receives, queues, severities_);
  }
  queues.check_all_received(trace_);
  if (!keep)
    for (auto& l : records_) release(l.receives);
}

std::vector<std::uint64_t> Replay::pack_collectives(std::size_t ranks, const std::vector<std::uint32_t>& homes) {
  std::size_t total = 0;
  for (const auto& l : records_) total += l.collectives.size();
  for (auto h : homes)
    if (h >= ranks) throw std::invalid_argument("home rank " + std::to_string(h) + " of " + std::to_string(ranks));
  auto counts = group_by_rank(outgoing_collectives_, ranks, total, records_, &LocationRecords::collectives,
                              [&](const CollectiveRecord& c) {
                                return homes.empty() ? collective_home(c, ranks) : homes[collective_home(c, homes.size())];
                              });
  return counts;
}

void Replay::reduce_collectives() {
  home_reductions_ = analysis::reduce_collectives(trace_, analyzed_, incoming_collectives_);
  release(incoming_collectives_);
}

void Replay::reduce_own_collectives() {
  // One rank is home of every instance: its own packed records are what it would receive.
  home_reductions_ = analysis::reduce_collectives(trace_, analyzed_, outgoing_collectives_);
}

void Replay::collective_severities() {
  release(home_reductions_);
  if (reductions_.size() != outgoing_collectives_.size())
    throw std::logic_error("collective reductions: " + std::to_string(reductions_.size()) + " for " +
                           std::to_string(outgoing_collectives_.size()) + " records");
  std::vector<std::size_t> order(reductions_.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  // trace.stat keeps the first of equal instances: take them in the one-process order (location,
  // event); one rank's records are in it already, several ranks' come grouped by home.
  auto earlier = [&](std::size_t a, std::size_t b) {
    const auto &x = outgoing_collectives_[a], &y = outgoing_collectives_[b];
    return std::make_pair(position_[x.location], std::uint64_t(x.position)) <
           std::make_pair(position_[y.location], std::uint64_t(y.position));
  };
  if (beside_ && !std::is_sorted(order.begin(), order.end(), earlier)) std::stable_sort(order.begin(), order.end(), earlier);
  for (auto i : order) analysis::collective_severities(outgoing_collectives_[i], reductions_[i], severities_);
  release(outgoing_collectives_);
  release(reductions_);
}

profile::LocalProfile Replay::finish(const std::vector<bool>& present) {
  severities_.to_seconds(trace_.definitions());
  auto p = with_metric_tree(std::move(profile_), severities_, present);
  severities_ = Severities();
  return p;
}

std::uint64_t Replay::record_bytes() const {
  std::uint64_t n = 0;
  // The lists' records (their unused capacity is never touched, see the constructor); the
  // exchange buffers are as large as their contents.
  for (const auto& l : records_)
    n += (l.sends.size() + l.receives.size()) * sizeof(MessageRecord) + l.collectives.size() * sizeof(CollectiveRecord);
  return n + (outgoing_sends_.capacity() + incoming_sends_.capacity()) * sizeof(SendRecord) +
         (outgoing_collectives_.capacity() + incoming_collectives_.capacity()) * sizeof(CollectiveRecord) +
         (home_reductions_.capacity() + reductions_.capacity()) * sizeof(CollectiveReduction);
}

void Replay::own_collectives_keeping_records() {
  // One rank is home of every instance: a copy of its records in location order is what
  // pack_collectives(1) would have moved out of the lists.
  for (const auto& l : records_) outgoing_collectives_.insert(outgoing_collectives_.end(), l.collectives.begin(), l.collectives.end());
  reductions_ = analysis::reduce_collectives(trace_, analyzed_, outgoing_collectives_);
  collective_severities();
}

// One process: every exchange is a move, and the patterns that need every location's records
// at once (Late Receiver, non-blocking collectives, clock conditions, the OpenMP patterns,
// counts and the critical path) run beside the replay's MPI patterns.
profile::LocalProfile analyze(const trace::Trace& trace, const std::vector<std::uint32_t>& locations,
                              AnalysisStats* stats, const AnalysisOptions& options) {
  if (stats) *stats = {};
  BesidePatterns beside(trace, nullptr);
  CompletionExtractor completions(trace);
  NonBlockingExtractor nonblocking(trace);
  ObserverFan others({&beside, &completions, &nonblocking});
  Replay r(trace, locations, locations, &others);
  auto& records = r.records();
  const auto pairs = pair_messages(records);
  const auto instances = collective_instances(records, CommunicatorRanks(trace.definitions()));
  const auto clock = clock_checks(trace, locations, records, completions.extras(), pairs, instances, r.cnode_count(),
                                  options, stats);  // with options.time_correct, corrects the records first
  InstanceStats instance_stats(std::size_t(Pattern::Count));
  r.severities().instances = &instance_stats;
  r.match_own_messages(true);
  r.own_collectives_keeping_records();
  auto& sev = r.severities();
  sev.to_seconds(trace.definitions());
  const double tick = 1.0 / double(trace.definitions().clock.resolution);
  late_receiver(records, completions.extras(), pairs, clock.column, tick, sev, &beside.counts(),
                &beside.late_receiver_points());
  const auto moves = nonblocking_collectives(trace, nonblocking.records(), clock.column, tick, sev);
  if (stats) {
    stats->patterns = instance_stats.finish();
    stats->events = r.stats().events;
    stats->messages = r.stats().messages;
    stats->collectives = r.stats().collectives;
  }
  auto tree = with_metric_tree(r.take_profile(), sev, sev.present);
  move_class_time(tree, moves);
  beside.finish(locations, records, tree);
  auto out = with_clock_violations(std::move(tree), clock.violations);
  std::vector<double> spans;  // per column, seconds
  for (auto l : locations) spans.push_back(static_cast<double>(beside.spans().program_span(l)) * tick);
  add_impact(out, spans);  // scout's performance-impact metrics, from critical_path, time and the waits
  return out;
}

}  // namespace cubescale::analysis
