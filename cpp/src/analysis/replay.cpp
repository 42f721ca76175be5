#include "cubescale/analysis/replay.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <stdexcept>
#include <string>
#include <tuple>

#include "cubescale/analysis/beside_patterns.hpp"
#include "cubescale/analysis/extraction.hpp"
#include "cubescale/analysis/impact.hpp"
#include "cubescale/analysis/instance_order.hpp"
#include "cubescale/analysis/late_receiver.hpp"
#include "cubescale/analysis/nonblocking_collectives.hpp"
#include "cubescale/analysis/root_cause.hpp"
#include "cubescale/analysis/time_correct.hpp"
#include "cubescale/common/format_error.hpp"
#include "cubescale/common/radix_sort.hpp"
#include "cubescale/common/run_both.hpp"
#include "cubescale/common/run_chunks.hpp"

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
  extract(analyzed, {mine}, {beside}, beside != nullptr);
}

Replay::Replay(const trace::Trace& trace, const std::vector<std::uint32_t>& analyzed,
               const std::vector<std::vector<std::uint32_t>>& parts, const std::vector<trace::CallPathObserver*>& beside)
    : trace_(trace) {
  extract(analyzed, parts, beside, true);
}

Replay::Replay(const trace::Trace& trace, const std::vector<std::uint32_t>& analyzed,
               const std::vector<std::uint32_t>& mine, bool complete, double min_latency,
               std::optional<double> min_thread_latency, std::size_t threads, std::uint64_t chunk_records)
    : trace_(trace), chunking_{std::max<std::size_t>(threads, 1), chunk_records} {
  if (complete) {
    beside_ = std::make_unique<ReplayBeside>(trace);
    const auto resolution = trace.definitions().clock.resolution;
    beside_->latency = latency_ticks(min_latency, resolution);  // as clock_checks
    beside_->thread_latency = latency_ticks(min_thread_latency.value_or(min_latency), resolution);
  }
  const auto parts = trace::part_locations(trace, mine, threads);  // (one thread: one part)
  // A later part's observers beside the first's; the pass absorbs them into beside_'s.
  std::vector<std::unique_ptr<BesideObservers>> later;
  std::vector<trace::CallPathObserver*> beside{beside_ ? &beside_->fan : nullptr};
  for (std::size_t k = 1; k < parts.size(); ++k) {
    later.push_back(beside_ ? std::make_unique<BesideObservers>(trace) : nullptr);
    beside.push_back(later.back() ? &later.back()->fan : nullptr);
  }
  extract(analyzed, parts, beside, complete);
  if (beside_) severities_.instances = &beside_->instances;  // trace.stat, as analyze() keeps it
}

Replay::~Replay() = default;

void Replay::extract(const std::vector<std::uint32_t>& analyzed, const std::vector<std::vector<std::uint32_t>>& parts,
                     const std::vector<trace::CallPathObserver*>& beside, bool extras) {
  const auto& defs = trace_.definitions();
  const auto& trace = trace_;
  if (parts.empty() || beside.size() != parts.size()) throw std::invalid_argument("Replay: one observer per part");
  mine_.clear();
  for (const auto& part : parts) mine_.insert(mine_.end(), part.begin(), part.end());
  parts_ = parts.size();
  // Each location once: the steps after the pass give each chunk whole locations to write.
  std::vector<bool> seen(defs.locations.size(), false);
  for (auto l : mine_) {
    if (l >= seen.size()) throw std::out_of_range("location index " + std::to_string(l) + " out of range");
    if (seen[l]) throw std::invalid_argument("Replay: location " + std::to_string(l) + " given twice");
    seen[l] = true;
  }
  const auto& mine = mine_;
  analyzed_.assign(defs.locations.size(), false);
  position_.assign(defs.locations.size(), kNone);
  for (std::size_t i = 0; i < analyzed.size(); ++i)
    if (analyzed[i] < analyzed_.size()) analyzed_[analyzed[i]] = true, position_[analyzed[i]] = std::uint32_t(i);
  // Per part: its record extractor first, then what sees the pass beside it.
  std::vector<std::unique_ptr<RecordExtractor>> extractors;
  std::vector<std::unique_ptr<ObserverFan>> fans;
  std::vector<trace::CallPathObserver*> observers;
  for (auto* b : beside) {
    extractors.push_back(std::make_unique<RecordExtractor>(trace, extras));
    if (b) fans.push_back(std::make_unique<ObserverFan>(std::vector<trace::CallPathObserver*>{extractors.back().get(), b}));
    observers.push_back(b ? static_cast<trace::CallPathObserver*>(fans.back().get()) : extractors.back().get());
  }
  trace::ProfileStats profile_stats;
  profile_ = parts.size() == 1 ? trace::trace_profile(trace, mine, &profile_stats, observers[0])
                               : trace::trace_profile(trace, parts, &profile_stats, observers);
  auto& extractor = *extractors[0];
  records_ = std::move(extractor.records());
  point_to_point_ = std::move(extractor.point_to_point());
  nonblocking_ = std::move(extractor.nonblocking());
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

std::vector<std::uint64_t> Replay::begin_sends(const std::vector<std::uint32_t>& owner, std::size_t ranks) {
  // Every check before any round, so that every rank fails (or not) before the first exchange.
  std::vector<std::uint64_t> totals(ranks, 0);
  for (const auto& l : records_)
    for (const auto& s : l.sends) {
      if (s.peer >= owner.size() || owner[s.peer] >= ranks || !analyzed_[s.peer])
        fail(trace_, s.location, s.position, s.time,
             "MPI send to " + trace_.definitions().locations[s.peer].name + ", which is not analyzed");
      ++totals[owner[s.peer]];
    }
  owner_ = owner;
  ranks_ = ranks;
  next_list_ = next_index_ = round_list_ = round_index_ = 0;
  round_counts_.assign(ranks, 0);
  given_back_.assign(records_.size(), 0);
  // The MPI_Irecvs' postings (complete replays) go into their records: 4 bytes per MPI_Irecv
  // fewer while the rounds' buffers come (receive_index.hpp).
  receive_index_.build(records_, trace_.definitions().locations.size(), &point_to_point_);
  any_unreceived_ = messages_matched_ = false;
  if (beside_) begin_sends_beside();
  return totals;
}

void Replay::expect_sends(std::uint64_t total) {
  SendBuffer().swap(incoming_sends_);  // one round's at a time from now on (incoming_round)
  expected_ = total, received_ = 0;
  paired_ = 0;
}

std::uint64_t Replay::send_rounds(std::uint64_t round_bytes) {
  std::uint64_t sends = 0;
  for (const auto& l : records_) sends += l.sends.size();
  const std::uint64_t cap = std::max<std::uint64_t>(1, round_bytes / sizeof(SendRecord));
  round_size_ = std::max<std::uint64_t>(1, std::min(cap, (sends + kMinRounds - 1) / kMinRounds));
  return (sends + round_size_ - 1) / round_size_;
}

std::vector<std::uint64_t> Replay::pack_round() {
  if (owner_.empty() && ranks_ == 0) throw std::logic_error("pack_round needs begin_sends first");
  release_packed();
  round_list_ = next_list_, round_index_ = next_index_;
  // The next round_size_ sends in location then recorded order, grouped by the receiver's owner
  // (stable: each sender's order survives the exchange, round after round).
  std::fill(round_counts_.begin(), round_counts_.end(), 0);
  std::size_t n = 0, list = next_list_, index = next_index_;
  for (; list < records_.size() && n < round_size_; ++list, index = 0) {
    const auto& sends = records_[list].sends;
    for (; index < sends.size() && n < round_size_; ++index, ++n) ++round_counts_[rank_of(sends[index])];
    if (index < sends.size()) break;
  }
  next_list_ = list, next_index_ = index;
  std::vector<std::uint64_t> at(ranks_, 0);
  for (std::size_t r = 1; r < ranks_; ++r) at[r] = at[r - 1] + round_counts_[r - 1];
  outgoing_sends_.resize(n);
  for (std::size_t l = round_list_, i = round_index_; l < records_.size() && packed_before(l, i); ++l, i = 0)
    for (const auto& sends = records_[l].sends; i < sends.size() && packed_before(l, i); ++i)
      outgoing_sends_[at[rank_of(sends[i])]++] = SendRecord(sends[i]);
  return round_counts_;
}

SendRecord* Replay::incoming_round(std::size_t n) {
  if (received_ + n > expected_) throw std::logic_error("incoming_round: more sends than expect_sends announced");
  // The round before is paired (answer_round did, else here): its buffer takes this round's
  // sends (cleared, so that a larger round allocates without copying the old ones).
  pair_received();
  incoming_sends_.clear();
  incoming_sends_.resize(n);
  received_ += n;
  paired_ = 0;
  return incoming_sends_.data();
}

ReceiveIndex::Place Replay::pair_one(const SendRecord& s) {
  const auto place = receive_index_.pair(s, beside_ ? beside_->latency : 0, send_enters_);
  // No receive left for it: the error names the earliest such send (by location, position).
  if (place.list == kNone &&
      (!any_unreceived_ || std::make_pair(s.location, s.position) < std::make_pair(unreceived_.location, unreceived_.position)))
    unreceived_ = s, any_unreceived_ = true;
  return place;
}

void Replay::pair_received() {
  if (paired_ < incoming_sends_.size() && !receive_index_.built())
    receive_index_.build(records_, trace_.definitions().locations.size());  // pack_sends: in one piece
  for (; paired_ < incoming_sends_.size(); ++paired_) pair_one(incoming_sends_[paired_]);
}

void Replay::release_packed() {
  // The sends before (next_list_, next_index_) went out: a list entirely, else its whole pages.
  if (given_back_.size() != records_.size()) return;  // no rounds begun (pack_sends moved every send)
  for (std::size_t l = round_list_; l <= next_list_ && l < records_.size(); ++l) {
    auto& sends = records_[l].sends;
    if (l < next_list_ || next_index_ >= sends.size()) {
      release(sends);
      given_back_[l] = 0;
      continue;
    }
    constexpr std::uintptr_t kPage = 4096;
    const auto base = reinterpret_cast<std::uintptr_t>(sends.data());
    const auto end = (base + next_index_ * sizeof(MessageRecord)) & ~(kPage - 1);
    const auto begin = (base + kPage - 1) & ~(kPage - 1);
    if (end <= begin || end - begin <= given_back_[l]) continue;
    give_back_pages(reinterpret_cast<const void*>(begin + given_back_[l]), end - begin - given_back_[l]);
    given_back_[l] = end - begin;
  }
  round_list_ = next_list_, round_index_ = next_index_;
}

void Replay::match_messages() {
  release(outgoing_sends_);
  release_packed();  // the last round's records (messages_beside did when complete)
  if (messages_matched_) return;  // messages_beside did, and released the receives
  pair_received();
  receive_index_.clear();
  release(incoming_sends_);
  match_paired_receives(false);
  send_enters_ = {};
}

void Replay::match_paired_receives(bool keep) {
  PairedReceives queues(send_enters_, any_unreceived_ ? &unreceived_ : nullptr);
  match_receives_of(queues, keep);
  messages_matched_ = true;
}

void Replay::match_own_messages(bool keep) {
  // One process: the sends stay in their locations' lists (no packing, no copy).
  SendQueues queues(records_);
  match_receives_of(queues, keep);
  if (!keep)
    for (auto& l : records_) release(l.sends);
}

void Replay::match_own_messages(const MessagePairs& pairs, std::vector<std::vector<SyncPoint>>* points,
                                const Chunking& chunking) {
  const auto bounds = chunk_bounds(list_weights(records_, [](const auto& l) { return l.receives.size(); }), chunking);
  SeverityChunks views(severities_, bounds.size() - 1);
  run_chunks(bounds, [&](std::size_t k, std::size_t begin, std::size_t end) {
    PairedSends queues(records_, pairs);  // its own: it remembers the last receive's list
    for (auto l = begin; l < end; ++l) {
      queues.at_list(l);
      match_location(records_[l], queues, views[k], points);
    }
  });
  views.absorb();
  PairedSends(records_, pairs).check_all_received(trace_);
}

template <typename Queues>
void Replay::match_location(const LocationRecords& l, Queues& queues, Severities& out,
                            std::vector<std::vector<SyncPoint>>* points) const {
  for (const auto& r : l.receives)
    if (r.peer >= analyzed_.size() || !analyzed_[r.peer])
      fail(trace_, r.location, r.position, r.time,
           "MPI receive from " + trace_.definitions().locations[r.peer].name + ", which is not analyzed");
  match_receives(trace_, l.receives, queues, out, points && l.location < points->size() ? &(*points)[l.location] : nullptr);
}

template <typename Queues>
void Replay::match_receives_of(Queues& queues, bool keep, std::vector<std::vector<SyncPoint>>* points) {
  for (const auto& l : records_) match_location(l, queues, severities_, points);
  queues.check_all_received(trace_);
  if (!keep)
    for (auto& l : records_) release(l.receives);
}

std::vector<std::uint64_t> Replay::pack_collectives(std::size_t ranks, const std::vector<std::uint32_t>& homes) {
  std::size_t total = 0;
  for (const auto& l : records_) total += l.collectives.size();
  for (auto h : homes)
    if (h >= ranks) throw std::invalid_argument("home rank " + std::to_string(h) + " of " + std::to_string(ranks));
  collective_stride_ = static_cast<std::uint32_t>(homes.empty() ? ranks : homes.size());
  auto counts = group_by_rank(outgoing_collectives_, ranks, total, records_, &LocationRecords::collectives,
                              [&](const CollectiveRecord& c) {
                                return homes.empty() ? collective_home(c, ranks) : homes[collective_home(c, homes.size())];
                              });
  return counts;
}

void Replay::reduce_collectives() {
  home_reductions_ =
      analysis::reduce_collectives(trace_, analyzed_, incoming_collectives_, collective_stride_, chunking_, &listings_);
  release(incoming_collectives_);
}

std::vector<std::uint64_t> Replay::pack_listings(const std::vector<std::uint32_t>& owner, std::size_t ranks) {
  std::vector<std::uint64_t> counts(ranks, 0);
  auto entries = listings_.entries();
  listings_ = {};
  for (const auto& e : entries) {
    const auto l = e.instance.location;
    if (l >= owner.size() || owner[l] >= ranks)
      throw std::invalid_argument("listing of location " + std::to_string(l) + ": no rank owns it");
    ++counts[owner[l]];
  }
  std::stable_sort(entries.begin(), entries.end(),
                   [&](const Listing& a, const Listing& b) { return owner[a.instance.location] < owner[b.instance.location]; });
  outgoing_listings_ = std::move(entries);
  return counts;
}

void Replay::add_idle_threads(profile::LocalProfile& p) const {
  analysis::add_idle_threads(p, trace_.definitions(), mine_);
}

void Replay::take_listings() {
  release(outgoing_listings_);
  InstanceListings mine;  // the homes' listings of one call path and location: the most severe
  for (const auto& e : incoming_listings_) mine.add(e.pattern, e.instance);
  release(incoming_listings_);
  if (severities_.instances) mine.list_into(*severities_.instances);
}

void Replay::collective_severities() {
  release(home_reductions_);
  if (reductions_.size() != outgoing_collectives_.size())
    throw std::logic_error("collective reductions: " + std::to_string(reductions_.size()) + " for " +
                           std::to_string(outgoing_collectives_.size()) + " records");
  // trace.stat keeps the first of equal instances: take them in the one-process order (location,
  // event); one rank's records are in it already, several ranks' come grouped by home.
  if (outgoing_collectives_.size() >= kNone) throw std::length_error("more than 2^32 - 2 collective records on one rank");
  struct Key {
    std::uint32_t location, high, low, index;  // the location's place, the event's position
  };
  std::vector<Key> order(reductions_.size());
  for (std::uint32_t i = 0; i < order.size(); ++i) {
    const auto& c = outgoing_collectives_[i];
    const std::uint64_t at = c.position;
    order[i] = {position_[c.location], std::uint32_t(at >> 32), std::uint32_t(at), i};
  }
  auto earlier = [](const Key& a, const Key& b) {
    return std::tie(a.location, a.high, a.low) < std::tie(b.location, b.high, b.low);
  };
  const bool sorted = std::is_sorted(order.begin(), order.end(), earlier);
  if (beside_ && !sorted)
    radix_sort<3>(order, [](const Key& k, std::size_t field) { return field == 0 ? k.location : field == 1 ? k.high : k.low; });
  // A member's values go to its own location's cells: chunks of whole locations write apart
  // (a location's records next to each other: sorted).
  const auto bounds = whole_chunks(
      order.size(), [&](std::size_t a, std::size_t b) { return order[a].location == order[b].location; },
      sorted || beside_ ? chunking_ : Chunking{});
  SeverityChunks views(severities_, bounds.size() - 1);
  run_chunks(bounds, [&](std::size_t k, std::size_t begin, std::size_t end) {
    for (auto i = begin; i < end; ++i)
      analysis::collective_severities(outgoing_collectives_[order[i].index], reductions_[order[i].index], views[k]);
  });
  views.absorb();
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
  // The lists' records (their unused capacity is never touched, see the constructor; the pages
  // given back of a list half packed are not counted); the other buffers are as large as their
  // contents.
  for (std::size_t i = 0; i < records_.size(); ++i) {
    const auto& l = records_[i];
    n += (l.sends.size() + l.receives.size()) * sizeof(MessageRecord) + l.collectives.size() * sizeof(CollectiveRecord);
    if (i < given_back_.size()) n -= std::min<std::uint64_t>(given_back_[i], l.sends.size() * sizeof(MessageRecord));
  }
  // The sends received: one round's at a time in a buffer reused round after round (its
  // capacity, the largest round's, is touched), or all of them (pack_sends); the receivers'
  // index while the sends are paired.
  // (an enter kept beside its receive: a node of the table each, one bucket pointer)
  n += send_enters_.size() * (2 * sizeof(void*) + 16) + (send_enters_.bucket_count() > 1 ? send_enters_.bucket_count() * sizeof(void*) : 0);
  return n + receive_index_.bytes() + (outgoing_sends_.capacity() + incoming_sends_.capacity()) * sizeof(SendRecord) +
         (outgoing_collectives_.capacity() + incoming_collectives_.capacity()) * sizeof(CollectiveRecord) +
         (home_reductions_.capacity() + reductions_.capacity()) * sizeof(CollectiveReduction) +
         (outgoing_listings_.capacity() + incoming_listings_.capacity()) * sizeof(Listing);
}

void Replay::own_collectives_keeping_records() {
  // One rank is home of every instance and reduces its records where they are (in location
  // order, the order pack_collectives(1) would have moved them in, so no sort for trace.stat).
  InstanceListings listings;
  own_collective_severities(analysis::reduce_collectives(trace_, analyzed_, records_, &listings));
  if (severities_.instances) listings.list_into(*severities_.instances);
}

void Replay::own_collectives_keeping_records(const std::vector<std::vector<RecordRef>>& instances,
                                             std::vector<std::uint32_t>* causers, CollectiveDecisions* decided,
                                             const Chunking& chunking) {
  InstanceListings listings;
  own_collective_severities(
      analysis::reduce_collectives(trace_, analyzed_, records_, instances, causers, decided, &listings), chunking);
  if (severities_.instances) listings.list_into(*severities_.instances);
}

void Replay::own_collective_severities(const std::vector<CollectiveReduction>& reductions, const Chunking& chunking) {
  const auto first = collective_offsets(records_);  // a list's first reduction
  const auto bounds = chunk_bounds(list_weights(records_, [](const auto& l) { return l.collectives.size(); }), chunking);
  SeverityChunks views(severities_, bounds.size() - 1);
  // A member's values go to its own location's cells: chunks of locations write apart.
  run_chunks(bounds, [&](std::size_t k, std::size_t begin, std::size_t end) {
    for (auto l = begin; l < end; ++l) {
      auto i = first[l];
      for (const auto& c : records_[l].collectives) analysis::collective_severities(c, reductions[i++], views[k]);
    }
  });
  views.absorb();
}

namespace {

// Wall seconds per step into AnalysisStats::seconds (when stats are asked for).
class StepSeconds {
 public:
  explicit StepSeconds(AnalysisStats* stats) : stats_(stats), last_(std::chrono::steady_clock::now()) {}
  void done(const char* step) {
    if (!stats_) return;
    const auto now = std::chrono::steady_clock::now();
    stats_->seconds.emplace_back(step, std::chrono::duration<double>(now - last_).count());
    last_ = now;
  }

 private:
  AnalysisStats* stats_;
  std::chrono::steady_clock::time_point last_;
};

}  // namespace

// One process: every exchange is a move, and the patterns that need every location's records
// at once (Late Receiver, non-blocking collectives, clock conditions, the OpenMP patterns,
// counts and the critical path) run beside the replay's MPI patterns.
profile::LocalProfile analyze(const trace::Trace& trace, const std::vector<std::uint32_t>& locations,
                              AnalysisStats* stats, const AnalysisOptions& options) {
  if (stats) *stats = {};
  StepSeconds step(stats);
  // Parts read at once on a thread each (options.threads), then one: what follows the pass
  // sees the same records, call tree and observers as after one pass over all locations.
  const auto parts = trace::part_locations(trace, locations, options.threads);  // (one thread: one part)
  std::vector<std::unique_ptr<BesidePatterns>> besides;
  std::vector<trace::CallPathObserver*> observers;
  for (std::size_t k = 0; k < parts.size(); ++k) {
    besides.push_back(std::make_unique<BesidePatterns>(trace, nullptr));
    observers.push_back(besides.back().get());
  }
  auto& beside = *besides[0];
  Replay r(trace, locations, parts, observers);
  step.done("read");
  besides.resize(1);  // the others' records are beside[0]'s now
  auto& records = r.records();
  auto& extras = r.point_to_point();
  // With threads, the messages' pairs and the collectives' instances are made at once; the
  // steps after them cut their locations (instances) into a chunk per thread.
  const bool at_once = parts.size() > 1;
  const Chunking chunking{options.threads, options.chunk_records};
  MessagePairs pairs;
  std::vector<std::vector<RecordRef>> instances;
  run_both(
      at_once, [&] { pairs = pair_messages(records); },
      [&] { instances = collective_instances(records, CommunicatorRanks(trace.definitions())); });
  step.done("pairs, instances");
  InstanceStats instance_stats(std::size_t(Pattern::Count));
  r.severities().instances = &instance_stats;
  // With options.time_correct, corrects the records first.
  auto clock = clock_checks(trace, locations, records, extras, pairs, instances, r.cnode_count(), options, stats,
                            &r.nonblocking(), &beside.omp());
  step.done("clock checks");
  // The critical path's Late Sender sync points come out of the matching (the same walk).
  auto points = sync_point_lists(records, trace.definitions().locations.size());
  r.match_own_messages(pairs, &points, chunking);
  step.done("matching");
  std::vector<std::uint32_t> causers;  // whom each collective waits for: the critical path's too
  r.own_collectives_keeping_records(instances, &causers, &clock.decisions, chunking);  // decided by the clock checks
  step.done("collectives");
  auto& sev = r.severities();
  sev.to_seconds(trace.definitions());
  const double tick = 1.0 / double(trace.definitions().clock.resolution);
  late_receiver(records, extras, pairs, clock.column, tick, sev, &beside.counts(), &beside.late_receiver_points(),
                chunking);
  step.done("late receiver");
  const auto moves = nonblocking_collectives(trace, r.nonblocking(), clock.column, tick, sev);
  step.done("non-blocking collectives");
  if (stats) {
    stats->patterns = instance_stats.finish();
    stats->events = r.stats().events;
    stats->messages = r.stats().messages;
    stats->collectives = r.stats().collectives;
  }
  auto tree = with_metric_tree(r.take_profile(), sev, sev.present);
  move_class_time(tree, moves);
  step.done("metric tree");
  beside.finish(locations, records, pairs, instances, tree, options.reread_path, &causers, &points, chunking);
  if (stats) {
    stats->path_bytes = beside.path_bytes(), stats->path_reread = beside.path_reread(),
    stats->omp_sync_events = beside.omp().sync_events();
    const auto& omp = beside.omp_statistics();  // after the record patterns' (AnalysisStats::patterns)
    stats->patterns.insert(stats->patterns.end(), omp.begin(), omp.end());
  }
  step.done("critical path, OpenMP, counts");
  auto out = with_clock_violations(std::move(tree), clock.violations);
  std::vector<double> spans;  // per column, seconds
  for (auto l : locations) spans.push_back(static_cast<double>(beside.spans().program_span(l)) * tick);
  // scout's performance-impact metrics, from critical_path, time (on OpenMP threads as scout
  // counts it) and the waits
  add_impact(out, spans, omp_local_time(beside.omp(), locations, out.cnode_parents, trace.definitions().clock.resolution));
  step.done("impact");
  if (options.root_cause) {  // scout's delay costs and wait-state propagation (root_cause.hpp)
    RootCauseStats rc;
    add_root_cause(trace, locations, records, extras, pairs, instances, out, &beside.omp(), &rc, chunking,
                   options.time_correct ? &clock.moves : nullptr);
    if (stats)
      stats->root_cause_points = rc.sync_points, stats->root_cause_bytes = rc.bytes,
      stats->root_cause_read_seconds = rc.read_seconds, stats->root_cause_seconds = rc.seconds;
    step.done("root causes");
  }
  add_idle_threads(out, trace.definitions(), locations);  // last: the steps above take the time before
  return out;
}

}  // namespace cubescale::analysis
