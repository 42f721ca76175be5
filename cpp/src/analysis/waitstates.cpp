#include "cubescale/analysis/waitstates.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstring>
#include <deque>
#include <tuple>
#include <type_traits>
#include <unordered_map>

#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "cubescale/analysis/critical_path.hpp"
#include "cubescale/analysis/instance_order.hpp"
#include "cubescale/analysis/late_receiver.hpp"
#include "cubescale/analysis/receive_index.hpp"
#include "cubescale/common/format_error.hpp"
#include "cubescale/cube/dtype.hpp"

namespace cubescale::analysis {

namespace {

// OTF2_CollectiveOp values and the class Scalasca gives each.
enum class CollectiveClass { Barrier, OneToN, NToOne, NToN, Scan, Init, Finalize, Other };
CollectiveClass collective_class(std::uint32_t op) {
  switch (op) {
    case kInitOp: return CollectiveClass::Init;
    case kFinalizeOp: return CollectiveClass::Finalize;
    case 0: return CollectiveClass::Barrier;                                    // barrier
    case 1: case 4: case 5: return CollectiveClass::OneToN;                     // bcast, scatter(v)
    case 2: case 3: case 12: return CollectiveClass::NToOne;                    // gather(v), reduce
    case 6: case 7: case 8: case 9: case 10: case 11: case 13: case 16:        // all*, reduce_scatter*
      return CollectiveClass::NToN;
    case 14: case 15: return CollectiveClass::Scan;                             // scan, exscan
    default: return CollectiveClass::Other;  // handles, allocation
  }
}

std::string lower(std::string s) {
  for (auto& ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return s;
}

bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

// Seconds since the trace's start with as many decimals as the clock resolves (at least 6, at
// most 12): an event 20 ns into a nanosecond trace reads 0.000000020 s, not 0.000000 s.
std::string seconds(const trace::Definitions& defs, std::uint64_t ticks) {
  const double s = static_cast<double>(ticks - std::min(ticks, defs.clock.offset)) /
                   static_cast<double>(defs.clock.resolution);
  int digits = 6;
  for (std::uint64_t r = 1000000; r < defs.clock.resolution && digits < 12; r *= 10) ++digits;
  char text[64];
  std::snprintf(text, sizeof text, "%.*f s", digits, s);
  return text;
}

}  // namespace

const char* pattern_name(Pattern p) {
  switch (p) {
    case Pattern::BarrierWait: return "mpi_barrier_wait";
    case Pattern::LateSender: return "mpi_latesender";
    case Pattern::LateSenderWrongOrder: return "mpi_latesender_wo";
    case Pattern::WrongOrderDifferent: return "mpi_lswo_different";
    case Pattern::WrongOrderSame: return "mpi_lswo_same";
    case Pattern::LateReceiver: return "mpi_latereceiver";
    case Pattern::EarlyReduce: return "mpi_earlyreduce";
    case Pattern::EarlyScan: return "mpi_earlyscan";
    case Pattern::InitCompletion: return "mpi_init_completion";
    case Pattern::FinalizeWait: return "mpi_finalize_wait";
    case Pattern::LateBroadcast: return "mpi_latebroadcast";
    case Pattern::WaitNxN: return "mpi_wait_nxn";
    case Pattern::BarrierCompletion: return "mpi_barrier_completion";
    case Pattern::NxNCompletion: return "mpi_nxn_completion";
    case Pattern::Count: break;
  }
  return "?";
}

void give_back_pages(const void* data, std::size_t bytes) {
#if defined(__linux__) && defined(MADV_DONTNEED)
  constexpr std::uintptr_t kPage = 4096;
  const auto begin = (reinterpret_cast<std::uintptr_t>(data) + kPage - 1) & ~(kPage - 1);
  const auto end = (reinterpret_cast<std::uintptr_t>(data) + bytes) & ~(kPage - 1);
  if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED);
#else
  (void)data, (void)bytes;
#endif
}

// --- matching: the kernels ------------------------------------------------------------------

Severities::Severities(std::size_t cnodes_, const std::vector<std::uint32_t>& locations_, std::size_t all_locations)
    : cnodes(cnodes_), locations(locations_.size()) {
  column.assign(all_locations, kNone);
  for (std::size_t c = 0; c < locations_.size(); ++c) column[locations_[c]] = static_cast<std::uint32_t>(c);
  values.assign(std::size_t(Pattern::Count), std::vector<double>(cnodes * locations, 0.0));
  present.assign(std::size_t(Pattern::Count), false);
}

Severities Severities::view(InstanceStats* chunk_instances) {
  Severities v;
  v.cnodes = cnodes, v.locations = locations;
  v.present.assign(present.size(), false);
  v.instances = instances ? chunk_instances : nullptr;
  v.shared = this;
  return v;
}

void Severities::absorb_view(const Severities& view) {
  for (std::size_t p = 0; p < present.size() && p < view.present.size(); ++p)
    if (view.present[p]) present[p] = true;
}

std::vector<std::size_t> collective_offsets(const std::vector<LocationRecords>& records) {
  std::vector<std::size_t> offset(records.size() + 1, 0);
  for (std::size_t l = 0; l < records.size(); ++l) offset[l + 1] = offset[l] + records[l].collectives.size();
  return offset;
}

SeverityChunks::SeverityChunks(Severities& sev, std::size_t chunks)
    : sev_(sev), instances_(chunks, InstanceStats(sev.instances ? std::size_t(Pattern::Count) : 0)) {
  for (std::size_t k = 0; k < chunks; ++k) views_.push_back(sev.view(&instances_[k]));
}

void SeverityChunks::absorb() {
  for (std::size_t k = 0; k < views_.size(); ++k) {
    views_[k].flush_pending();
    sev_.absorb_view(views_[k]);
    if (sev_.instances) sev_.instances->absorb(instances_[k]);
  }
}

void Severities::to_seconds(const trace::Definitions& defs) {
  const double tick = 1.0 / static_cast<double>(defs.clock.resolution);
  for (auto& v : values)
    for (auto& x : v) x *= tick;
}

namespace {

std::string group_name(const trace::Definitions& defs, std::uint32_t location) {
  const auto g = defs.locations[location].group;
  return g < defs.location_groups.size() ? defs.location_groups[g].name : "no process";
}

// Unreceived sends: the earliest by (location, position) is the one the error names, whichever
// order the sends are found in; then the error, if there is one.
template <typename Send>
void keep_earliest(const Send*& first, const Send* s) {
  if (!first || std::make_tuple(s->location, std::uint64_t(s->position)) <
                    std::make_tuple(first->location, std::uint64_t(first->position)))
    first = s;
}

template <typename Send>
void fail_if_unreceived(const trace::Trace& trace, const Send* first) {
  if (first)
    fail(trace, first->location, first->position, first->time,
         "MPI send to " + group_name(trace.definitions(), first->peer) + " (tag " + std::to_string(first->tag) +
             ") never received");
}

}  // namespace

bool self_communicator(const trace::Definitions& defs, std::uint32_t communicator) {
  if (communicator >= defs.communicators.size()) return false;
  const auto group = defs.communicators[communicator].group;
  return group < defs.groups.size() && defs.groups[group].type == "comm_self";
}

std::vector<std::uint32_t> world_locations(const trace::Definitions& defs) {
  std::vector<std::uint32_t> world;
  for (const auto& w : defs.groups)
    if (w.type == "comm_locations" && w.paradigm == "mpi") {
      for (auto id : w.members) world.push_back(defs.location(id));
      break;
    }
  return world;
}

CommunicatorRanks::CommunicatorRanks(const trace::Definitions& defs) {
  const auto world = world_locations(defs);
  auto ranks = [&](auto&& world_rank_of, std::size_t n) {
    Ranks out;
    for (std::size_t r = 0; r < n; ++r) {
      const auto w = world_rank_of(r);
      if (w < world.size() && world[w] != kNone) out.push_back({world[w], static_cast<std::uint32_t>(r)});
    }
    std::sort(out.begin(), out.end());
    return out;
  };
  world_ = ranks([](std::size_t r) { return r; }, world.size());
  communicators_.resize(defs.communicators.size());
  for (std::size_t c = 0; c < defs.communicators.size(); ++c) {
    const auto g = defs.communicators[c].group;
    if (g >= defs.groups.size() || defs.groups[g].type == "comm_self") continue;
    const auto& members = defs.groups[g].members;
    communicators_[c] = ranks([&](std::size_t r) { return members[r]; }, members.size());
  }
}

std::uint32_t CommunicatorRanks::rank(std::uint32_t communicator, std::uint32_t location) const {
  const bool init_exit = communicator == kInitCommunicator || communicator == kFinalizeCommunicator;
  if (!init_exit && communicator >= communicators_.size()) return kNone;
  const auto& r = init_exit ? world_ : communicators_[communicator];
  const auto it = std::lower_bound(r.begin(), r.end(), std::make_pair(location, std::uint32_t(0)));
  return it != r.end() && it->first == location ? it->second : kNone;
}

void fail(const trace::Trace& trace, std::uint32_t location, std::uint64_t position, std::uint64_t time,
          const std::string& what) {
  const auto& defs = trace.definitions();
  throw FormatError(trace.path(), trace.event_member(location), position,
                    what + " (" + defs.locations[location].name + " of " + group_name(defs, location) + ", at " +
                        seconds(defs, time) + ")");
}

template <typename Send>
template <typename Allocator>
BasicSendQueues<Send>::BasicSendQueues(const std::vector<Send, Allocator>& sends) {
  for (const auto& s : sends) queues_[{s.location, s.peer, s.communicator, s.tag}].sends.push_back(&s);
}

template <typename Send>
BasicSendQueues<Send>::BasicSendQueues(const std::vector<LocationRecords>& records) {
  static_assert(std::is_same_v<Send, MessageRecord>, "a location's own sends are MessageRecords");
  for (const auto& l : records)
    for (const auto& s : l.sends) queues_[{s.location, s.peer, s.communicator, s.tag}].sends.push_back(&s);
}

template <typename Send>
const Send* BasicSendQueues<Send>::next(const MessageRecord& r) {
  auto it = queues_.find({r.peer, r.location, r.communicator, r.tag});
  if (it == queues_.end() || it->second.next == it->second.sends.size()) return nullptr;
  return it->second.sends[it->second.next++];
}

template <typename Send>
void BasicSendQueues<Send>::check_all_received(const trace::Trace& trace) const {
  const Send* first = nullptr;
  for (const auto& [key, queue] : queues_)
    if (queue.next < queue.sends.size()) keep_earliest(first, queue.sends[queue.next]);
  fail_if_unreceived(trace, first);
}

template BasicSendQueues<MessageRecord>::BasicSendQueues(const std::vector<MessageRecord>&);
template BasicSendQueues<MessageRecord>::BasicSendQueues(const std::vector<LocationRecords>&);
template const MessageRecord* BasicSendQueues<MessageRecord>::next(const MessageRecord&);
template void BasicSendQueues<MessageRecord>::check_all_received(const trace::Trace&) const;

namespace {

// Late Sender and its wrong-order sub-patterns along one location's receives.
class ReceiveKernel {
 public:
  ReceiveKernel(Severities& out, std::vector<SyncPoint>* points) : out_(out), points_(points) {}

  // A Late Sender instance of the receive `r` (or of the MPI_Wait* call it completes in),
  // remembered for the wrong-order check of the location's later receives; with its sync point
  // `point` (the critical path's, as message_points makes it) where points are kept.
  template <typename Send>
  void late_sender(const MessageRecord& r, const Send& s, std::uint64_t idle, const SyncPoint& point) {
    if (idle == 0) return;
    out_.add(Pattern::LateSender, r.cnode, r.location, idle, r.enter, r.leave);
    if (recent_.size() == kRecentLateSenders) recent_.pop_front();
    recent_.push_back({s.time, s.location, r.cnode, r.location, idle, r.enter, r.leave, points_ ? points_->size() : 0});
    latest_ = std::max(latest_, std::uint64_t(s.time));
    if (points_) points_->push_back(point);
  }
  // A message sent before the message of an earlier Late Sender but received after it: that
  // Late Sender was caused by receiving in the wrong order.
  template <typename Send>
  void wrong_order(const Send& s) {
    // Messages mostly arrive in order: no remembered send later than this one, nothing to scan.
    if (latest_ <= s.time) return;
    latest_ = 0;
    for (auto it = recent_.begin(); it != recent_.end();) {
      if (it->send_time <= s.time) {
        latest_ = std::max(latest_, it->send_time);
        ++it;
        continue;
      }
      out_.add(Pattern::LateSenderWrongOrder, it->cnode, it->location, it->idle, it->enter, it->leave);
      out_.add(it->sender == s.location ? Pattern::WrongOrderSame : Pattern::WrongOrderDifferent, it->cnode,
               it->location, it->idle, it->enter, it->leave);
      if (points_) (*points_)[it->point].wrong_order = true;
      it = recent_.erase(it);
    }
  }

 private:
  struct RecentLateSender {
    std::uint64_t send_time;
    std::uint32_t sender, cnode, location;
    std::uint64_t idle, enter, leave;  // enter, leave: the receive's MPI call
    std::size_t point;                 // its sync point's index in points_
  };
  static constexpr std::size_t kRecentLateSenders = 100;  // scout's buffer of candidates
  // (a deque: once full, every Late Sender drops the oldest, which a vector would pay for by
  // moving the other 99)
  std::deque<RecentLateSender> recent_;
  std::uint64_t latest_ = 0;  // no send time in recent_ is later (an upper bound: erasing keeps it)
  Severities& out_;
  std::vector<SyncPoint>* points_;
};

}  // namespace

const MessageRecord* PairedSends::next(const MessageRecord& receive) {
  auto inside = [&](std::size_t l) {
    const auto& v = records_[l].receives;
    return !v.empty() && &receive >= v.data() && &receive < v.data() + v.size();
  };
  if (list_ >= records_.size() || !inside(list_))  // once per location: receives come list by list
    for (list_ = 0; list_ < records_.size() && !inside(list_); ++list_) {
    }
  if (list_ == records_.size()) return nullptr;
  const auto s = pairs_.send_of_receive[list_][std::size_t(&receive - records_[list_].receives.data())];
  return s.list == kNone ? nullptr : &records_[s.list].sends[s.index];
}

void PairedSends::check_all_received(const trace::Trace& trace) const {
  const MessageRecord* first = nullptr;
  for (std::size_t l = 0; l < records_.size(); ++l)
    for (std::size_t i = 0; i < records_[l].sends.size(); ++i)
      if (pairs_.receive_of_send[l][i].list == kNone) keep_earliest(first, &records_[l].sends[i]);
  fail_if_unreceived(trace, first);
}

template <typename Queues>
void match_receives(const trace::Trace& trace, const std::vector<MessageRecord>& receives, Queues& sends,
                    Severities& out, std::vector<SyncPoint>* points) {
  if (receives.empty()) return;
  for (auto p : {Pattern::LateSender, Pattern::LateSenderWrongOrder, Pattern::WrongOrderDifferent, Pattern::WrongOrderSame})
    out.mark(p);
  ReceiveKernel kernel(out, points);
  // A Waitall/any/some waits for its latest sender only: the largest of its receives counts.
  std::uint64_t multi_max = 0;
  const MessageRecord* multi = nullptr;
  PairedSend multi_send;  // a copy: PairedReceives' answer lives until its next call
  SyncPoint multi_point;  // the sync point of the largest so far (message_points')
  auto point = [](const MessageRecord& r, const auto& s, std::uint64_t idle) {
    return SyncPoint{r.enter, r.enter + idle, s.enter, r.location, r.cnode, s.location, true, r.empty != 0};
  };
  for (const auto& r : receives) {
    const auto* s = sends.next(r);
    if (!s)
      fail(trace, r.location, r.position, r.time,
           "MPI receive from " + group_name(trace.definitions(), r.peer) + " (tag " + std::to_string(r.tag) +
               ") without a matching send");
    if (multi && multi->call != r.call) {
      kernel.late_sender(*multi, multi_send, multi_max, multi_point);
      multi = nullptr, multi_max = 0;
    }
    if (r.call_kind != CallKind::Test) {
      const auto until = std::min(s->enter, r.leave);
      const std::uint64_t idle = until > r.enter ? until - r.enter : 0;
      if (r.call_kind == CallKind::WaitMulti) {
        if (!multi || idle > multi_max) multi_send = {s->enter, s->time, s->location}, multi_point = point(r, *s, idle);
        multi_max = std::max(multi_max, idle);
        multi = &r;
      } else {
        kernel.late_sender(r, *s, idle, point(r, *s, idle));
      }
    }
    kernel.wrong_order(*s);
  }
  if (multi) kernel.late_sender(*multi, multi_send, multi_max, multi_point);
}

template void match_receives(const trace::Trace&, const std::vector<MessageRecord>&, SendQueues&, Severities&,
                             std::vector<SyncPoint>*);
template void match_receives(const trace::Trace&, const std::vector<MessageRecord>&, PairedSends&, Severities&,
                             std::vector<SyncPoint>*);
template void match_receives(const trace::Trace&, const std::vector<MessageRecord>&, PairedReceives&, Severities&,
                             std::vector<SyncPoint>*);

void PairedReceives::check_all_received(const trace::Trace& trace) const {
  fail_if_unreceived(trace, unreceived_);
}

std::uint32_t collective_home(const CollectiveRecord& c, std::size_t ranks) {
  // Round robin over a communicator's instances: each rank reduces about its share of them.
  // (Self communicators share one number across locations; their home tells them apart.)
  const std::uint64_t key = std::uint64_t(c.communicator) * 1000003ull + c.instance;
  return static_cast<std::uint32_t>(key % ranks);
}

namespace {

// The analyzed members of a communicator in rank order ({recorder} for a self communicator).
std::vector<std::uint32_t> members(const trace::Definitions& defs, const std::vector<std::uint32_t>& world,
                                   const std::vector<bool>& analyzed, std::uint32_t communicator,
                                   std::uint32_t recorder) {
  std::vector<std::uint32_t> out;
  auto take = [&](std::uint32_t l) {
    if (l != kNone && l < analyzed.size() && analyzed[l]) out.push_back(l);
  };
  if (communicator == kInitCommunicator || communicator == kFinalizeCommunicator) {
    for (auto l : world) take(l);
    return out;
  }
  const auto& g = defs.groups[defs.communicators[communicator].group];  // checked by the extraction
  if (g.type == "comm_self") return {recorder};
  for (auto rank : g.members) take(rank < world.size() ? world[rank] : kNone);
  return out;
}

}  // namespace

namespace {

// `records`: indexable by the records' number (a vector of them, or pointers into lists).
template <class Records>
std::vector<CollectiveReduction> reduce(const trace::Trace& trace, const std::vector<bool>& analyzed,
                                        const Records& records, std::uint32_t stride = 1, const Chunking& chunking = {},
                                        InstanceListings* listings = nullptr) {
  const auto& defs = trace.definitions();
  const auto world = world_locations(defs);
  std::vector<CollectiveReduction> out(records.size());
  // What an instance needs of its communicator, looked up once per communicator.
  struct Communicator {
    bool self = false, init_exit = false;
    std::vector<std::uint32_t> members;  // analyzed members in rank order (non-self)
    std::vector<std::uint32_t> rank;     // [location] -> position in `members`
  };
  std::unordered_map<std::uint32_t, Communicator> communicators;
  auto communicator = [&](std::uint32_t comm, std::uint32_t recorder) -> Communicator& {
    auto [it, fresh] = communicators.try_emplace(comm);
    if (fresh) {
      auto& c = it->second;
      c.self = self_communicator(defs, comm);
      c.init_exit = comm == kInitCommunicator || comm == kFinalizeCommunicator;
      if (!c.self) {
        c.members = members(defs, world, analyzed, comm, recorder);
        c.rank.assign(defs.locations.size(), kNone);
        for (std::size_t i = 0; i < c.members.size(); ++i) c.rank[c.members[i]] = static_cast<std::uint32_t>(i);
      }
    }
    return it->second;
  };
  auto name = [&](std::uint32_t comm) {
    return comm == kInitCommunicator || comm == kFinalizeCommunicator ? std::string("MPI_COMM_WORLD")
                                                                      : defs.communicators[comm].name;
  };
  // Instances: records with equal (communicator, instance; location on self communicators).
  struct Key {
    std::uint32_t communicator, instance, self;
    std::uint32_t index;
  };
  std::vector<Key> keys;
  keys.reserve(records.size());
  std::uint32_t last_comm = kNone;
  bool last_self = false;  // records of a communicator come in runs: one lookup per run
  for (const auto i : instance_order(records, stride)) {
    const CollectiveRecord& c = records[i];
    if (keys.empty() || c.communicator != last_comm) last_comm = c.communicator, last_self = communicator(last_comm, c.location).self;
    keys.push_back({c.communicator, c.instance, last_self ? c.location : kNone, i});
  }
  auto same = [](const Key& a, const Key& b) {
    return a.communicator == b.communicator && a.instance == b.instance && a.self == b.self;
  };
  // On a self communicator one number is every location's own instance: by location, ties in
  // record order (as a stable sort by (communicator, instance, location)).
  for (std::size_t a = 0, b = 0; a < keys.size(); a = b) {
    for (b = a + 1; b < keys.size() && keys[b].communicator == keys[a].communicator && keys[b].instance == keys[a].instance; ++b) {
    }
    if (keys[a].self != kNone && b - a > 1)
      std::stable_sort(keys.begin() + std::ptrdiff_t(a), keys.begin() + std::ptrdiff_t(b),
                       [](const Key& x, const Key& y) { return x.self < y.self; });
  }
  // Chunks of whole instances at once (each writes only its members' reductions); every
  // communicator is looked up above, so that the chunks only read the map.
  const auto bounds =
      whole_chunks(keys.size(), [&](std::size_t a, std::size_t b) { return same(keys[a], keys[b]); }, chunking);
  std::vector<InstanceListings> listed(listings ? bounds.size() - 1 : 0);  // per chunk
  run_chunks(bounds, [&](std::size_t chunk, std::size_t begin, std::size_t end) {
    std::vector<const CollectiveRecord*> instance;  // the members' records in rank order
    std::vector<std::size_t> number;                // and their numbers in `records`
    std::vector<MemberSync> sync;
    std::vector<CollectiveReduction*> mine;  // the members' reductions
    for (std::size_t a = begin, b = begin; a < end; a = b) {
      for (b = a + 1; b < end && same(keys[a], keys[b]); ++b) {
      }
      const CollectiveRecord& first = records[keys[a].index];
      const auto comm = first.communicator;
      const auto& info = communicators.find(comm)->second;
      instance.assign(info.self ? 1 : info.members.size(), nullptr);
      number.resize(instance.size());
      for (std::size_t k = a; k < b; ++k) {
        const CollectiveRecord& c = records[keys[k].index];
        const auto rank = info.self ? 0u : info.rank[c.location];
        if (rank == kNone || instance[rank])
          fail(trace, c.location, c.position, c.time,
               "MPI " + trace::collective_op_name(c.op) + " on " + name(comm) +
                   " by a location that is no member of it");
        instance[rank] = &c;
        number[rank] = keys[k].index;
      }
      const auto lacking = std::find(instance.begin(), instance.end(), nullptr);
      if (lacking != instance.end()) {
        if (info.init_exit) {  // MPI_Init/Finalize of a process may lie outside its measurement: no pattern, no error
          for (std::size_t k = a; k < b; ++k) out[keys[k].index].skip = 1;
          continue;
        }
        const auto* c = *std::find_if(instance.begin(), instance.end(), [](const auto* r) { return r != nullptr; });
        fail(trace, c->location, c->position, c->time,
             "MPI " + trace::collective_op_name(c->op) + " on " + name(comm) + " has no counterpart on " +
                 group_name(defs, info.members[std::size_t(lacking - instance.begin())]) +
                 ", which lacks its collective number " + std::to_string(c->instance + 1) + " on it");
      }
      for (const auto* c : instance)
        if (c->op != instance[0]->op)
          fail(trace, c->location, c->position, c->time,
               "MPI " + trace::collective_op_name(c->op) + " on " + name(comm) + " meets MPI " +
                   trace::collective_op_name(instance[0]->op) + " of " + group_name(defs, instance[0]->location));
      collective_sync(instance, sync);
      mine.resize(instance.size());
      for (std::size_t i = 0; i < instance.size(); ++i) mine[i] = &out[number[i]];
      decide_reductions(instance, sync, mine.data(), listings ? &listed[chunk] : nullptr);
    }
  });
  for (const auto& part : listed) listings->absorb(part);
  return out;
}

// The records of lists in list order, by number (no copy of them).
class ListedCollectives {
 public:
  explicit ListedCollectives(const std::vector<LocationRecords>& lists) {
    std::size_t n = 0;
    for (const auto& l : lists) n += l.collectives.size();
    at_.reserve(n);
    for (const auto& l : lists)
      for (const auto& c : l.collectives) at_.push_back(&c);
  }
  std::size_t size() const { return at_.size(); }
  const CollectiveRecord& operator[](std::size_t i) const { return *at_[i]; }

 private:
  std::vector<const CollectiveRecord*> at_;
};

}  // namespace

std::vector<CollectiveReduction> reduce_collectives(const trace::Trace& trace, const std::vector<bool>& analyzed,
                                                    const std::vector<CollectiveRecord>& records, std::uint32_t stride,
                                                    const Chunking& chunking, InstanceListings* listings) {
  return reduce(trace, analyzed, records, stride, chunking, listings);
}

std::vector<CollectiveReduction> reduce_collectives(const trace::Trace& trace, const std::vector<bool>& analyzed,
                                                    const std::vector<LocationRecords>& lists,
                                                    InstanceListings* listings) {
  return reduce(trace, analyzed, ListedCollectives(lists), 1, {}, listings);
}

std::vector<CollectiveReduction> reduce_collectives(const trace::Trace& trace, const std::vector<bool>& analyzed,
                                                    const std::vector<LocationRecords>& lists,
                                                    const std::vector<std::vector<RecordRef>>& instances,
                                                    std::vector<std::uint32_t>* causers, CollectiveDecisions* decided,
                                                    InstanceListings* listings) {
  if (causers) causers->clear();
  const auto offset = collective_offsets(lists);
  std::size_t covered = 0;
  for (const auto& i : instances) covered += i.size();
  if (covered != offset.back()) return reduce_collectives(trace, analyzed, lists, listings);  // left out: inconsistent or partial
  const auto& defs = trace.definitions();
  const auto world = world_locations(defs);
  std::unordered_map<std::uint32_t, std::vector<std::uint32_t>> expected;  // communicator -> analyzed members
  // Decided already (the same collective_sync on the same records): only the checks below.
  const bool given = decided && decided->reductions.size() == offset.back() && decided->causers.size() == offset.back();
  std::vector<CollectiveReduction> out(given ? 0 : offset.back());
  std::vector<std::uint32_t> causer(causers && !given ? offset.back() : 0, kNone);
  const std::vector<std::uint32_t>* members_of = nullptr;  // expected[communicator]
  std::uint32_t communicator = 0;
  std::vector<const CollectiveRecord*> instance;
  std::vector<MemberSync> sync;
  std::vector<CollectiveReduction*> mine;  // the members' reductions
  for (const auto& refs : instances) {
    instance.clear();
    for (const auto& r : refs) instance.push_back(&lists[r.list].collectives[r.index]);
    if (instance.empty()) continue;
    const auto& first = *instance.front();
    if (!first.self) {
      // Instances come communicator by communicator: the last one's members without a hash.
      if (!members_of || first.communicator != communicator) {
        auto [it, fresh] = expected.try_emplace(first.communicator);
        if (fresh) it->second = members(defs, world, analyzed, first.communicator, first.location);
        members_of = &it->second, communicator = first.communicator;
      }
      if (members_of->size() != instance.size()) return reduce_collectives(trace, analyzed, lists, listings);
      for (std::size_t i = 0; i < instance.size(); ++i)
        if (instance[i]->location != (*members_of)[i]) return reduce_collectives(trace, analyzed, lists, listings);
    }
    for (const auto* c : instance)
      if (c->op != first.op) return reduce_collectives(trace, analyzed, lists, listings);
    if (given) continue;
    collective_sync(instance, sync);
    mine.resize(instance.size());
    for (std::size_t i = 0; i < instance.size(); ++i) {
      mine[i] = &out[offset[refs[i].list] + refs[i].index];
      if (causers && sync[i].sync) causer[offset[refs[i].list] + refs[i].index] = sync[i].causer;
    }
    decide_reductions(instance, sync, mine.data(), listings);
  }
  if (given) {
    if (listings) listings->absorb(decided->listings);
    out.swap(decided->reductions), causer.swap(decided->causers);
    *decided = {};
  }
  if (causers) causers->swap(causer);
  return out;
}

void collective_sync(const std::vector<const CollectiveRecord*>& m, std::vector<MemberSync>& out,
                     const std::uint64_t* enters) {
  constexpr std::size_t kNobody = ~std::size_t(0);
  const auto n = m.size();
  out.assign(n, MemberSync{});
  // A size-1 communicator synchronizes nothing (self communicators: instances of different
  // locations grouped by their shared number are still one member each).
  if (n < 2 || m[0]->self) return;
  const auto op = m[0]->op;
  const auto cls = collective_class(op);
  auto enter = [&](std::size_t i) { return enters ? enters[i] : m[i]->enter; };
  // Whether member a entered later than b (b may be nobody). Ties: the lower rank in the
  // communicator, the members' order here (scout's MPI_MAXLOC over the communicator's ranks; on a
  // communicator ranked otherwise than its locations the lower location would be another member).
  auto later = [&](std::size_t a, std::size_t b) {
    return b == kNobody || enter(a) > enter(b) || (enter(a) == enter(b) && a < b);
  };
  auto active = [&](std::size_t i) {  // takes part (N x N, scans: sends or receives bytes)
    return cls == CollectiveClass::Barrier || cls == CollectiveClass::Init || cls == CollectiveClass::Finalize ||
           m[i]->sends || m[i]->receives;
  };
  std::size_t root = kNobody;
  for (std::size_t i = 0; i < n; ++i)
    if (m[i]->location == m[i]->root) root = i;
  // out[i].sync and .causer first hold the decision (no allocation per instance), then the times.
  auto sync = [&](std::size_t i) -> bool& { return out[i].sync; };
  auto set_causer = [&](std::size_t i, std::size_t who) {
    out[i].causer = who == kNobody ? kNone : static_cast<std::uint32_t>(who);
  };
  auto latest_of = [&](auto&& taking) {
    std::size_t l = kNobody;
    for (std::size_t i = 0; i < n; ++i)
      if (taking(i) && later(i, l)) l = i;
    return l;
  };
  auto earliest_leave_of = [&](auto&& taking) {
    std::uint64_t e = ~std::uint64_t(0);
    for (std::size_t i = 0; i < n; ++i)
      if (taking(i)) e = std::min(e, m[i]->leave);
    return e;
  };
  switch (cls) {
    case CollectiveClass::Other: return;
    case CollectiveClass::Barrier: case CollectiveClass::Init: case CollectiveClass::Finalize: {
      const auto l = latest_of([](std::size_t) { return true; });
      for (std::size_t i = 0; i < n; ++i) sync(i) = true, set_causer(i, l);
      break;
    }
    case CollectiveClass::OneToN: {
      if (root == kNobody || !m[root]->sends) return;  // no payload: no synchronization point
      bool any = false;
      for (std::size_t i = 0; i < n; ++i) {
        sync(i) = i != root && m[i]->receives && enter(i) < enter(root);  // waits for the root
        any = any || sync(i);
        set_causer(i, root);
      }
      if (any) sync(root) = true;  // (no completion pattern: scout's earliest leave of the waiting is not needed)
      break;
    }
    case CollectiveClass::NToN: {
      if (op == 9 || op == 10) return;  // MPI_Alltoallv/w: the trace does not say who exchanges with whom
      const auto all = latest_of(active);
      if (all == kNobody) return;
      if (earliest_leave_of(active) > enter(all)) {  // full overlap: every member synchronizes
        for (std::size_t i = 0; i < n; ++i) sync(i) = active(i), set_causer(i, all);
        break;
      }
      const auto l = latest_of([&](std::size_t i) { return bool(m[i]->sends); });
      if (l == kNobody) return;
      for (std::size_t i = 0; i < n; ++i)
        sync(i) = i == l || (m[i]->receives && enter(i) < enter(l)), set_causer(i, l);
      break;
    }
    case CollectiveClass::NToOne: {
      if (root == kNobody || !m[root]->receives) return;  // no payload: no synchronization point
      const auto l = latest_of([&](std::size_t i) { return bool(m[i]->sends); });
      if (l == kNobody || !(enter(root) < enter(l))) return;
      sync(root) = sync(l) = true;
      set_causer(root, l), set_causer(l, l);
      break;
    }
    case CollectiveClass::Scan: {
      std::size_t l = kNobody;  // the latest sender ranked up to this member
      for (std::size_t i = 0; i < n; ++i) {
        if (!active(i)) continue;
        if (m[i]->sends && later(i, l)) l = i;
        sync(i) = l != kNobody && enter(i) < enter(l);
        set_causer(i, l);
      }
      break;
    }
  }
  const auto earliest = earliest_leave_of([&](std::size_t k) { return out[k].sync; });
  for (std::size_t i = 0; i < n; ++i) {
    auto& x = out[i];
    const auto causer = x.causer;
    x.causer = kNone;
    if (!x.sync || causer == kNone) {
      x.sync = false;
      continue;
    }
    x.until = enter(causer);
    x.earliest_leave = earliest;
    const bool is_root = i == root;
    // The clock condition of the members that depend on another (as before: not the 1-to-N
    // root, only the N-to-1 root).
    if ((cls != CollectiveClass::OneToN || !is_root) && (cls != CollectiveClass::NToOne || is_root))
      x.reference = x.until;
    // MPI_Init has only a completion pattern: nobody waits for another there.
    if (cls != CollectiveClass::Init && causer != i) x.causer = causer;
  }
}

namespace {

// A member's waiting time: until the enter it waits for (or its leave).
std::uint64_t member_wait(const CollectiveRecord& c, std::uint64_t until) {
  const auto end = std::min(until, c.leave);
  return end > c.enter ? end - c.enter : 0;
}

// A member's time to finish after the first synchronizing member could leave (and after the one
// waited for entered).
std::uint64_t member_completion(const CollectiveRecord& c, std::uint64_t until, std::uint64_t earliest_leave) {
  const auto from = std::max(earliest_leave, std::min(until, c.leave));
  return c.leave > from ? c.leave - from : 0;
}

}  // namespace

void decide_reductions(const std::vector<const CollectiveRecord*>& m, const std::vector<MemberSync>& sync,
                       CollectiveReduction* const* out, InstanceListings* listings) {
  const auto n = m.size();
  for (std::size_t i = 0; i < n; ++i) {
    auto& r = *out[i];
    r.until = sync[i].until;
    r.earliest_leave = sync[i].earliest_leave;
    r.skip = sync[i].sync ? 0 : 2;
  }
  // trace.stat lists a collective instance whole (scout's stat_collective reduces it over the
  // communicator); Early Reduce has only the root's wait (scout lists it as it is, per member:
  // collective_severities), MPI_Init and MPI_Finalize are not listed.
  if (!listings || n == 0) return;
  const auto cls = collective_class(m[0]->op);
  const bool completes = cls == CollectiveClass::Barrier || cls == CollectiveClass::NToN;
  if (!completes && cls != CollectiveClass::OneToN && cls != CollectiveClass::Scan) return;
  PatternInstance wait{0, ~std::uint64_t(0), 0, 0, 0}, completion = wait;
  std::uint64_t most_wait = 0, most_completion = 0;
  bool any = false;
  for (std::size_t i = 0; i < n; ++i) {
    const auto& c = *m[i];
    // an N x N or scan member moving no data takes no part
    if ((cls == CollectiveClass::NToN || cls == CollectiveClass::Scan) && !c.sends && !c.receives) continue;
    wait.enter = std::min(wait.enter, c.enter), wait.leave = std::max(wait.leave, c.leave);
    if (!sync[i].sync) continue;
    const bool root = c.location == c.root;
    const auto w = cls == CollectiveClass::OneToN && root ? 0 : member_wait(c, sync[i].until);
    const auto k = completes ? member_completion(c, sync[i].until, sync[i].earliest_leave) : 0;
    wait.ticks += w, completion.ticks += k;
    // the member that waited longest names the instance (the first in rank order among equals)
    if (!any || w > most_wait) most_wait = w, wait.cnode = c.cnode, wait.location = c.location;
    if (!any || k > most_completion) most_completion = k, completion.cnode = c.cnode, completion.location = c.location;
    any = true;
  }
  if (!any) return;
  completion.enter = wait.enter, completion.leave = wait.leave;
  const auto pattern = [&](bool waiting) {
    switch (cls) {
      case CollectiveClass::Barrier: return waiting ? Pattern::BarrierWait : Pattern::BarrierCompletion;
      case CollectiveClass::NToN: return waiting ? Pattern::WaitNxN : Pattern::NxNCompletion;
      case CollectiveClass::OneToN: return Pattern::LateBroadcast;
      default: return Pattern::EarlyScan;
    }
  };
  listings->add(std::size_t(pattern(true)), wait);
  if (completes) listings->add(std::size_t(pattern(false)), completion);
}

void collective_severities(const CollectiveRecord& c, const CollectiveReduction& r, Severities& out) {
  const bool root = c.location == c.root;
  const auto wait = member_wait(c, r.until);
  const auto completion = member_completion(c, r.until, r.earliest_leave);
  const auto cls = collective_class(c.op);
  if (r.skip == 1) return;  // an instance left out (MPI_Init/Finalize some processes lack)
  // The operations occur (the pattern is present) even where no instance synchronizes.
  switch (cls) {
    case CollectiveClass::Barrier: out.mark(Pattern::BarrierWait), out.mark(Pattern::BarrierCompletion); break;
    case CollectiveClass::NToN: out.mark(Pattern::WaitNxN), out.mark(Pattern::NxNCompletion); break;
    case CollectiveClass::OneToN: out.mark(Pattern::LateBroadcast); break;
    case CollectiveClass::NToOne: out.mark(Pattern::EarlyReduce); break;
    case CollectiveClass::Scan: out.mark(Pattern::EarlyScan); break;
    case CollectiveClass::Init: out.mark(Pattern::InitCompletion); break;
    case CollectiveClass::Finalize: out.mark(Pattern::FinalizeWait); break;
    case CollectiveClass::Other: break;
  }
  if (r.skip) return;
  // A member's share counts in trace.stat; the instance is listed whole where it is reduced
  // (decide_reductions).
  constexpr auto kShare = Severities::Listing::Counted;
  switch (cls) {
    case CollectiveClass::Barrier:
      out.add(Pattern::BarrierWait, c.cnode, c.location, wait, c.enter, c.leave, kShare);
      out.add(Pattern::BarrierCompletion, c.cnode, c.location, completion, c.enter, c.leave, kShare);
      break;
    case CollectiveClass::NToN:
      out.add(Pattern::WaitNxN, c.cnode, c.location, wait, c.enter, c.leave, kShare);
      out.add(Pattern::NxNCompletion, c.cnode, c.location, completion, c.enter, c.leave, kShare);
      break;
    case CollectiveClass::OneToN:
      if (!root) out.add(Pattern::LateBroadcast, c.cnode, c.location, wait, c.enter, c.leave, kShare);
      break;
    case CollectiveClass::NToOne:
      if (root) out.add(Pattern::EarlyReduce, c.cnode, c.location, wait, c.enter, c.leave);
      break;
    case CollectiveClass::Scan:
      out.add(Pattern::EarlyScan, c.cnode, c.location, wait, c.enter, c.leave, kShare);
      break;
    case CollectiveClass::Init:
      out.add(Pattern::InitCompletion, c.cnode, c.location, completion, c.enter, c.leave, Severities::Listing::None);
      break;
    case CollectiveClass::Finalize:
      out.add(Pattern::FinalizeWait, c.cnode, c.location, wait, c.enter, c.leave, Severities::Listing::None);
      break;
    case CollectiveClass::Other: break;
  }
}

// --- the report's metric tree ------------------------------------------------------------------

namespace {
constexpr const char* kScoutPages = "@mirror@scalasca_patterns.html#";
}  // namespace

std::string scout_url(const std::string& unique_name) { return kScoutPages + unique_name; }

bool measurement_overhead(const cube::Region& r) {
  if (r.paradigm == "measurement") return r.name == "TRACE BUFFER FLUSH" || r.name == "TRACING";
  return (r.paradigm == "cuda" || r.paradigm == "opencl") && r.name == "BUFFER FLUSH";
}

std::vector<std::string> documentation_mirrors(const std::vector<cube::Metric>& metrics) {
  for (const auto& m : metrics)
    if (starts_with(m.url, kScoutPages))  // Scalasca 2.6's, in scout's order
      return {"http://apps.fz-juelich.de/scalasca/releases/scalasca/2.6/help/",
              "http://perftools.pages.jsc.fz-juelich.de/cicd/scalasca/tags/scalasca-2.6/patterns/",
              "http://perftools.pages.jsc.fz-juelich.de/cicd/scalasca/tags/latest/patterns/"};
  return {};
}

void link_profile_metrics(profile::LocalProfile& p) {
  for (auto& m : p.metrics)
    if ((m.uniq_name == "time" || m.uniq_name == "visits") && m.url.empty()) m.url = scout_url(m.uniq_name);
}

cube::Metric seconds_metric(const char* name, const char* display, const char* description) {
  cube::Metric m;
  m.uniq_name = name;
  m.url = scout_url(name);
  m.disp_name = display;
  m.dtype = *cube::parse_data_type("DOUBLE");
  m.kind = cube::MetricKind::Exclusive;  // as scout stores them: on the call path itself
  m.uom = "sec";
  m.descr = description;
  return m;
}

cube::Severity exclusive_matrix(std::size_t cnodes, std::size_t cols, const std::vector<double>& values) {
  cube::Severity s(*cube::parse_data_type("DOUBLE"), cnodes, cols);
  for (std::size_t c = 0; c < cnodes; ++c) std::memcpy(s.row(c), values.data() + c * cols, cols * 8);
  s.mark_nonzero_rows();
  return s;
}

namespace {

// Which MPI calls a time metric of Scalasca's tree covers, by region name (the classes of
// Scalasca 2.6's scout.spec; the management classes name the MPI functions themselves).
enum class Calls {
  All, Execution, Overhead, Mpi, Management, InitExit, MgmtComm, MgmtFile, MgmtWin, Synchronization, SyncCollective, Communication,
  PointToPoint, Collective
};

// MPI's management calls (lower case, without "mpi_"): starting and ending MPI, communicators
// and their topologies (and the dynamic-process calls that make communicators), files opened
// and their settings (not their reads and writes), RMA windows made, queried and freed.
const char* const kStartup[] = {"init", "init_thread", "initialized", "finalize", "finalized"};
const char* const kCommManagement[] = {
    "cart_coords", "cart_create", "cart_get", "cart_map", "cart_rank", "cart_shift", "cart_sub", "cartdim_get",
    "comm_accept", "comm_compare", "comm_connect", "comm_create", "comm_create_group", "comm_create_keyval",
    "comm_delete_attr", "comm_disconnect", "comm_dup", "comm_dup_with_info", "comm_free", "comm_free_keyval",
    "comm_get_attr", "comm_get_info", "comm_get_name", "comm_get_parent", "comm_group", "comm_idup", "comm_join",
    "comm_rank", "comm_remote_group", "comm_remote_size", "comm_set_attr", "comm_set_info", "comm_set_name",
    "comm_size", "comm_spawn", "comm_spawn_multiple", "comm_split", "comm_split_type", "comm_test_inter",
    "dims_create", "dist_graph_create", "dist_graph_create_adjacent", "dist_graph_neighbors",
    "dist_graph_neighbors_count", "graph_create", "graph_get", "graph_map", "graph_neighbors",
    "graph_neighbors_count", "graphdims_get", "intercomm_create", "intercomm_merge", "topo_test", "close_port",
    "open_port", "lookup_name", "publish_name", "unpublish_name"};
const char* const kFileManagement[] = {
    "file_close", "file_delete", "file_get_amode", "file_get_atomicity", "file_get_byte_offset", "file_get_group",
    "file_get_info", "file_get_position", "file_get_position_shared", "file_get_size", "file_get_type_extent",
    "file_get_view", "file_open", "file_preallocate", "file_seek", "file_seek_shared", "file_set_atomicity",
    "file_set_info", "file_set_size", "file_set_view", "file_sync"};
const char* const kWinManagement[] = {
    "win_allocate", "win_allocate_shared", "win_attach", "win_create", "win_create_dynamic", "win_create_keyval",
    "win_delete_attr", "win_detach", "win_free", "win_free_keyval", "win_get_attr", "win_get_group", "win_get_info",
    "win_get_name", "win_set_attr", "win_set_info", "win_set_name", "win_shared_query"};

bool covers(Calls calls, const cube::Region& region) {
  const auto name = lower(region.name);
  const bool mpi = region.paradigm == "mpi" || starts_with(name, "mpi_");
  if (calls == Calls::All) return true;
  if (calls == Calls::Execution) return !measurement_overhead(region);
  if (calls == Calls::Overhead) return measurement_overhead(region);
  if (!mpi) return false;
  static const char* const kCollectives[] = {
      "mpi_allgather", "mpi_allgatherv", "mpi_allreduce", "mpi_alltoall", "mpi_alltoallv", "mpi_alltoallw",
      "mpi_bcast", "mpi_exscan", "mpi_gather", "mpi_gatherv", "mpi_reduce", "mpi_reduce_scatter",
      "mpi_reduce_scatter_block", "mpi_scan", "mpi_scatter", "mpi_scatterv"};
  static const char* const kWinSync[] = {"mpi_win_post", "mpi_win_wait", "mpi_win_start", "mpi_win_complete",
                                         "mpi_win_fence", "mpi_win_lock", "mpi_win_unlock"};
  auto in = [&](const auto& list) { return std::find(std::begin(list), std::end(list), name) != std::end(list); };
  // the management lists name the calls without their "mpi_"
  auto managed = [&](const auto& list) {
    return starts_with(name, "mpi_") && std::find_if(std::begin(list), std::end(list), [&](const char* call) {
                                          return name.compare(4, std::string::npos, call) == 0;
                                        }) != std::end(list);
  };
  auto contains = [&](const char* part) { return name.find(part, 4) != std::string::npos; };
  const bool collective = in(kCollectives);
  const bool p2p = !starts_with(name, "mpi_win") &&
                   (contains("buffer") || contains("cancel") || contains("get_count") || contains("probe") ||
                    contains("recv") || contains("request") || contains("send") || starts_with(name, "mpi_test") ||
                    starts_with(name, "mpi_wait") || contains("start"));
  switch (calls) {
    case Calls::Mpi: return true;
    case Calls::Management:
      return managed(kStartup) || managed(kCommManagement) || managed(kFileManagement) || managed(kWinManagement);
    case Calls::InitExit: return managed(kStartup);
    case Calls::MgmtComm: return managed(kCommManagement);
    case Calls::MgmtFile: return managed(kFileManagement);
    case Calls::MgmtWin: return managed(kWinManagement);
    case Calls::Synchronization: return name == "mpi_barrier" || in(kWinSync);
    case Calls::SyncCollective: return name == "mpi_barrier";
    case Calls::Communication: return p2p || collective || name == "mpi_get" || name == "mpi_put" || name == "mpi_accumulate";
    case Calls::PointToPoint: return p2p;
    case Calls::Collective: return collective;
    default: return false;
  }
}

// The management classes have no pattern of their own (Init/Finalize's patterns may all be
// left out): they appear where the MPI tree does and the trace defines a call of their class;
// `overhead` where `execution` does and the trace defines a measurement region of its.
bool shown_by_region(Calls calls) {
  return calls == Calls::InitExit || calls == Calls::MgmtComm || calls == Calls::MgmtFile || calls == Calls::MgmtWin ||
         calls == Calls::Overhead;
}

struct TreeMetric {
  const char* name;
  const char* display;
  const char* parent;  // unique name
  bool is_pattern;
  Calls calls;
  Pattern pattern;
  const char* description;
};

// Scalasca 2.6's tree (unique and display names and nesting as its scout.spec has them; the
// descriptions are ours), in preorder.
const TreeMetric kTree[] = {
    {"execution", "Execution", "time", false, Calls::Execution, Pattern::Count, kExecutionDescription},
    {"mpi", "MPI", "execution", false, Calls::Mpi, Pattern::Count, "Time inside MPI functions"},
    {"mpi_management", "Management", "mpi", false, Calls::Management, Pattern::Count,
     "Time inside MPI's setup calls: start and end of MPI, communicators, files opened and windows made"},
    {"mpi_init_exit", "Init/Finalize", "mpi_management", false, Calls::InitExit, Pattern::Count,
     "Time inside MPI_Init, MPI_Init_thread, MPI_Finalize and their queries"},
    {"mpi_init_completion", "Initialization Completion", "mpi_init_exit", true, Calls::All, Pattern::InitCompletion,
     "Time in MPI initialization after the first process could leave it"},
    {"mpi_finalize_wait", "Wait at Finalize", "mpi_init_exit", true, Calls::All, Pattern::FinalizeWait,
     "Time in MPI_Finalize until the last process entered it"},
    {"mpi_mgmt_comm", "Communicator", "mpi_management", false, Calls::MgmtComm, Pattern::Count,
     "Time inside calls that make, query or free communicators and their topologies"},
    {"mpi_mgmt_file", "File", "mpi_management", false, Calls::MgmtFile, Pattern::Count,
     "Time inside calls that open, close, query or set MPI files (not their reads and writes)"},
    {"mpi_mgmt_win", "Window", "mpi_management", false, Calls::MgmtWin, Pattern::Count,
     "Time inside calls that make, query or free RMA windows"},
    {"mpi_synchronization", "Synchronization", "mpi", false, Calls::Synchronization, Pattern::Count,
     "Time inside MPI calls that only synchronize (barriers, RMA epochs)"},
    {"mpi_sync_collective", "Collective", "mpi_synchronization", false, Calls::SyncCollective, Pattern::Count,
     "Time inside MPI_Barrier"},
    {"mpi_barrier_wait", "Wait at Barrier", "mpi_sync_collective", true, Calls::All, Pattern::BarrierWait,
     "Time in an MPI barrier until the last process entered it"},
    {"mpi_barrier_completion", "Barrier Completion", "mpi_sync_collective", true, Calls::All,
     Pattern::BarrierCompletion, "Time in an MPI barrier after the first process could leave it"},
    {"mpi_communication", "Communication", "mpi", false, Calls::Communication, Pattern::Count,
     "Time inside MPI calls that move data"},
    {"mpi_point2point", "Point-to-point", "mpi_communication", false, Calls::PointToPoint, Pattern::Count,
     "Time inside sends, receives and the calls that complete or test them"},
    {"mpi_latesender", "Late Sender", "mpi_point2point", true, Calls::All, Pattern::LateSender,
     "Time a receive waits for its message's send to start"},
    {"mpi_latesender_wo", "Messages in Wrong Order", "mpi_latesender", true, Calls::All,
     Pattern::LateSenderWrongOrder, "Late Sender time caused by receiving messages in another order than sent"},
    {"mpi_lswo_different", "From different sources", "mpi_latesender_wo", true, Calls::All,
     Pattern::WrongOrderDifferent, "Wrong-order Late Sender time with messages from different senders"},
    {"mpi_lswo_same", "From same source", "mpi_latesender_wo", true, Calls::All, Pattern::WrongOrderSame,
     "Wrong-order Late Sender time with messages from the same sender"},
    {"mpi_latereceiver", "Late Receiver", "mpi_point2point", true, Calls::All, Pattern::LateReceiver,
     "Time a blocking send (or the wait completing a non-blocking one) waits for its receive to be posted"},
    {"mpi_collective", "Collective", "mpi_communication", false, Calls::Collective, Pattern::Count,
     "Time inside MPI collective operations that move data"},
    {"mpi_earlyreduce", "Early Reduce", "mpi_collective", true, Calls::All, Pattern::EarlyReduce,
     "Time the root of an N-to-1 operation waits for the last process to enter it"},
    {"mpi_earlyscan", "Early Scan", "mpi_collective", true, Calls::All, Pattern::EarlyScan,
     "Time a process of a prefix reduction waits for the last lower rank to enter it"},
    {"mpi_latebroadcast", "Late Broadcast", "mpi_collective", true, Calls::All, Pattern::LateBroadcast,
     "Time a process of a 1-to-N operation waits for the root to enter it"},
    {"mpi_wait_nxn", "Wait at N x N", "mpi_collective", true, Calls::All, Pattern::WaitNxN,
     "Time in an N-to-N operation until the last process entered it"},
    {"mpi_nxn_completion", "N x N Completion", "mpi_collective", true, Calls::All, Pattern::NxNCompletion,
     "Time in an N-to-N operation after the first process could leave it"},
    {"overhead", "Overhead", "time", false, Calls::Overhead, Pattern::Count, kOverheadDescription},
};

cube::Metric tree_metric(const TreeMetric& t) { return seconds_metric(t.name, t.display, t.description); }

double read_double(const std::uint8_t* p) {
  double v;
  std::memcpy(&v, p, 8);
  return v;
}


// Inserts the tree metrics whose patterns are present right after `time` (metrics stay in
// preorder), every parent storing its children's values too (the pattern's call path is an
// MPI call its parent's region class covers).
}  // namespace

std::vector<double> exclusive_values(const profile::LocalProfile& p, std::size_t metric) {
  const auto n = p.cnode_count(), cols = p.locations.size();
  // A call path's inclusive value less its children's. The children's sum is taken in
  // ascending order of value: a rank numbers call paths in its own order, and the report must
  // not depend on how the locations were split (the same bytes for any number of ranks).
  std::vector<double> own(n * cols);
  const auto& incl = p.values[metric];
  std::vector<std::vector<std::uint32_t>> children(n);
  for (std::size_t c = 0; c < n; ++c)
    if (p.cnode_parents[c] != cube::kNoParent) children[p.cnode_parents[c]].push_back(static_cast<std::uint32_t>(c));
  std::vector<double> parts;
  for (std::size_t c = 0; c < n; ++c)
    for (std::size_t l = 0; l < cols; ++l) {
      parts.clear();
      for (auto child : children[c]) parts.push_back(read_double(incl.row(child) + l * 8));
      std::sort(parts.begin(), parts.end());
      double sum = 0;
      for (double x : parts) sum += x;
      own[c * cols + l] = read_double(incl.row(c) + l * 8) - sum;
    }
  return own;
}

profile::LocalProfile with_metric_tree(profile::LocalProfile p, const Severities& sev,
                                       const std::vector<bool>& present) {
  std::size_t time = p.metrics.size();
  for (std::size_t m = 0; m < p.metrics.size(); ++m)
    if (p.metrics[m].uniq_name == "time") time = m;
  constexpr std::size_t kCount = std::size(kTree);
  bool used[kCount] = {};
  auto mark_parents = [&] {
    for (std::size_t t = kCount; t-- > 0;) {
      if (!used[t]) continue;
      for (std::size_t a = 0; a < t; ++a)
        if (std::strcmp(kTree[a].name, kTree[t].parent) == 0) used[a] = true;
    }
  };
  for (std::size_t t = 0; t < kCount; ++t)
    if (kTree[t].is_pattern) used[t] = present[std::size_t(kTree[t].pattern)];
  mark_parents();
  // By the trace's region definitions, which every rank of a replay has alike.
  for (std::size_t t = 0; t < kCount; ++t)
    if (shown_by_region(kTree[t].calls) && used[kTree[t].calls == Calls::Overhead ? 0 : 1])  // execution, mpi
      for (const auto& region : p.regions)
        if (covers(kTree[t].calls, region)) used[t] = true;
  mark_parents();
  link_profile_metrics(p);
  if (time == p.metrics.size() || !used[0]) return p;
  const auto n = p.cnode_count(), cols = p.locations.size();
  const auto own = exclusive_values(p, time);
  std::vector<cube::Metric> metrics;
  std::vector<cube::Severity> values;
  std::vector<std::uint32_t> new_index(p.metrics.size());
  auto index_of = [&](const std::string& name) {
    for (std::size_t m = 0; m < metrics.size(); ++m)
      if (metrics[m].uniq_name == name) return static_cast<std::uint32_t>(m);
    return cube::kNoParent;
  };
  for (std::size_t m = 0; m < p.metrics.size(); ++m) {
    new_index[m] = static_cast<std::uint32_t>(metrics.size());
    metrics.push_back(p.metrics[m]);
    if (metrics.back().parent != cube::kNoParent) metrics.back().parent = new_index[metrics.back().parent];
    values.push_back(std::move(p.values[m]));
    if (m != time) continue;
    for (std::size_t t = 0; t < kCount; ++t) {
      if (!used[t]) continue;
      auto metric = tree_metric(kTree[t]);
      metric.parent = index_of(kTree[t].parent);
      std::vector<double> exclusive(n * cols, 0.0);
      if (kTree[t].is_pattern) {
        exclusive = sev.values[std::size_t(kTree[t].pattern)];
      } else {
        for (std::size_t c = 0; c < n; ++c)
          if (covers(kTree[t].calls, p.regions[p.cnode_regions[c]]))
            std::copy_n(own.begin() + c * cols, cols, exclusive.begin() + c * cols);
      }
      metrics.push_back(std::move(metric));
      values.push_back(exclusive_matrix(n, cols, exclusive));
    }
  }
  p.metrics = std::move(metrics);
  p.values = std::move(values);
  return p;
}

}  // namespace cubescale::analysis
