#include "cubescale/analysis/replay.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "cubescale/common/format_error.hpp"

namespace cubescale::analysis {

namespace {

template <typename T>
void release(std::vector<T>& v) {
  std::vector<T>().swap(v);
}

// Stable grouping by destination rank: records per rank, and the records in rank order in
// `out`. Each location's list is released once copied, so that the records exist about once.
template <typename T, typename Rank>
std::vector<std::uint64_t> group_by_rank(std::vector<T>& out, std::size_t ranks, std::size_t total,
                                         std::vector<LocationRecords>& records, std::vector<T> LocationRecords::*list,
                                         Rank rank_of) {
  std::vector<std::uint64_t> counts(ranks, 0);
  for (const auto& l : records)
    for (const auto& r : l.*list) ++counts[rank_of(r)];
  std::vector<std::uint64_t> next(ranks, 0);
  for (std::size_t k = 1; k < ranks; ++k) next[k] = next[k - 1] + counts[k - 1];
  out.resize(total);
  for (auto& l : records) {
    for (const auto& r : l.*list) out[next[rank_of(r)]++] = r;
    release(l.*list);
  }
  return counts;
}

}  // namespace

Replay::Replay(const trace::Trace& trace, const std::vector<std::uint32_t>& analyzed,
               const std::vector<std::uint32_t>& mine)
    : trace_(trace) {
  const auto& defs = trace.definitions();
  analyzed_.assign(defs.locations.size(), false);
  for (auto l : analyzed)
    if (l < analyzed_.size()) analyzed_[l] = true;
  RecordExtractor extractor(trace);
  trace::ProfileStats profile_stats;
  profile_ = trace::trace_profile(trace, mine, &profile_stats, &extractor);
  records_ = std::move(extractor.records());
  severities_ = Severities(profile_.cnode_count(), mine, defs.locations.size());
  stats_.events = profile_stats.events;
  for (auto& l : records_) {
    stats_.messages += l.sends.size() + l.receives.size();
    stats_.collectives += l.collectives.size();
    // Growth by doubling leaves up to half of a list unused: give it back (one list at a time).
    l.receives.shrink_to_fit();
    l.collectives.shrink_to_fit();
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
  SendQueues queues(incoming_sends_);
  match_receives_of(queues);
  release(incoming_sends_);
}

void Replay::match_own_messages() {
  // One process: the sends stay in their locations' lists (no packing, no copy).
  SendQueues queues(records_);
  match_receives_of(queues);
  for (auto& l : records_) release(l.sends);
}

void Replay::match_receives_of(SendQueues& queues) {
  for (const auto& l : records_) {
    for (const auto& r : l.receives)
      if (r.peer >= analyzed_.size() || !analyzed_[r.peer])
        fail(trace_, r.location, r.position, r.time,
             "MPI receive from " + trace_.definitions().locations[r.peer].name + ", which is not analyzed");
    match_receives(trace_, l.receives, queues, severities_);
  }
  queues.check_all_received(trace_);
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
  for (std::size_t i = 0; i < reductions_.size(); ++i)
    analysis::collective_severities(outgoing_collectives_[i], reductions_[i], severities_);
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
  for (const auto& l : records_)
    n += (l.sends.capacity() + l.receives.capacity()) * sizeof(MessageRecord) +
         l.collectives.capacity() * sizeof(CollectiveRecord);
  return n + (outgoing_sends_.capacity() + incoming_sends_.capacity()) * sizeof(MessageRecord) +
         (outgoing_collectives_.capacity() + incoming_collectives_.capacity()) * sizeof(CollectiveRecord) +
         (home_reductions_.capacity() + reductions_.capacity()) * sizeof(CollectiveReduction);
}

// One process: every exchange is a move.
profile::LocalProfile analyze(const trace::Trace& trace, const std::vector<std::uint32_t>& locations,
                              AnalysisStats* stats) {
  Replay r(trace, locations, locations);
  r.match_own_messages();
  r.pack_collectives(1);
  r.reduce_own_collectives();
  r.reductions() = std::move(r.home_reductions());
  r.collective_severities();
  if (stats) *stats = r.stats();
  return r.finish(r.present());
}

}  // namespace cubescale::analysis
