#include "cubescale/analysis/root_cause.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#include "cubescale/analysis/beside_patterns.hpp"
#include "cubescale/analysis/time_correct.hpp"
#include "cubescale/trace/profile.hpp"

namespace cubescale::analysis {

namespace {

// Long-term cost types (scout's delay types): the MPI ones, whose short-term metric of type X is
// metric 2X and long-term one 2X + 1, then OpenMP's (barrier waits, the idleness of a master's
// serial time), whose metrics follow the MPI ones (long_term()).
enum Type : std::uint8_t { kLs, kLr, kBarrier, kN2n, k12n, kN21, kOmpBarrierType, kOmpIdleType, kTypes };
constexpr std::size_t kMpiTypes = kOmpBarrierType;
constexpr std::size_t kIndirectLs = 12, kIndirectLr = 13, kPropagatingLs = 14, kPropagatingLr = 15, kMetrics = 16;
// The OpenMP metrics (written where the trace has parallel regions, after delay_n21_longterm; the
// long-term ones where it has MPI too, as scout's hybrid build).
constexpr std::size_t kOmpBarrier = 16, kOmpIdle = 17, kOmpBarrierLongTerm = 18, kOmpIdleLongTerm = 19, kAllMetrics = 20;
constexpr std::size_t long_term(std::size_t type) {
  return type < kMpiTypes ? 2 * type + 1 : type == kOmpBarrierType ? kOmpBarrierLongTerm : kOmpIdleLongTerm;
}
constexpr std::uint64_t kLast = ~std::uint64_t(0);
constexpr std::uint64_t kLastPosition = (std::uint64_t(1) << 48) - 1;  // an unknown event position: last in its call
// A backward search or an interval sum walks at most this far (points, time-map entries) before
// it builds its location's index (Location) and asks that.
constexpr std::uint32_t kWalk = 64;
constexpr std::uint32_t kShortList = 32;  // partner lists up to this long are indexed per partner,
constexpr std::uint32_t kFewUses = 4;     // and longer ones held by at most this many points here,
constexpr std::size_t kMostLists = 64;    // and all but the this many most held ones (a query asks each)
constexpr std::uint32_t kEverybody = ~std::uint32_t(0);

struct MetricText {
  const char *uniq, *display, *description;
};
constexpr std::array<MetricText, kAllMetrics> kMetricText{{
    {"delay_latesender", "Short-term",
     "Time of the sender that made a receiver wait directly (Late Sender)"},
    {"delay_latesender_longterm", "Long-term",
     "Time that caused Late Sender waits indirectly, through the waits it caused"},
    {"delay_latereceiver", "Short-term",
     "Time of the receiver that made a sender wait directly (Late Receiver)"},
    {"delay_latereceiver_longterm", "Long-term",
     "Time that caused Late Receiver waits indirectly, through the waits it caused"},
    {"delay_barrier", "Short-term", "Time of the last process that made others wait at a barrier"},
    {"delay_barrier_longterm", "Long-term",
     "Time that caused barrier waits indirectly, through the waits it caused"},
    {"delay_n2n", "Short-term", "Time of the process that made others wait at an N x N collective"},
    {"delay_n2n_longterm", "Long-term",
     "Time that caused N x N waits indirectly, through the waits it caused"},
    {"delay_12n", "Short-term", "Time of the root that made others wait at a 1-to-N collective"},
    {"delay_12n_longterm", "Long-term",
     "Time that caused 1-to-N waits indirectly, through the waits it caused"},
    {"delay_n21", "Short-term", "Time of the last sender that made the root wait at an N-to-1 collective"},
    {"delay_n21_longterm", "Long-term",
     "Time that caused N-to-1 waits indirectly, through the waits it caused"},
    {"mpi_wait_indirect_latesender", "Late Sender",
     "The part of a Late Sender wait that waits of the sender caused"},
    {"mpi_wait_indirect_latereceiver", "Late Receiver",
     "The part of a Late Receiver wait that waits of the receiver caused"},
    {"mpi_wait_propagating_ls", "Late Sender",
     "Late Sender waits that caused point-to-point waits of other processes later"},
    {"mpi_wait_propagating_lr", "Late Receiver",
     "Late Receiver waits that caused point-to-point waits of other processes later"},
    {"delay_ompbarrier", "Short-term",
     "Time of the thread entering an OpenMP barrier last that made the others wait"},
    {"delay_ompidle", "Short-term",
     "Serial time of the master thread, while the other threads of its process were idle"},
    {"delay_ompbarrier_longterm", "Long-term",
     "Time that caused OpenMP barrier waits indirectly, through the waits it caused"},
    {"delay_ompidle_longterm", "Long-term",
     "Time that caused the idleness of OpenMP threads indirectly, through the waits it caused"},
}};

// scout's classes of the collectives with delay costs (OTF2_CollectiveOp), else kTypes.
Type collective_type(std::uint32_t op) {
  switch (op) {
    case 0: return kBarrier;
    case 1: case 4: case 5: return k12n;                         // bcast, scatter(v)
    case 2: case 3: case 12: return kN21;                        // gather(v), reduce
    case 6: case 7: case 8: case 11: case 13: case 16: return kN2n;  // all*, reduce_scatter* (not alltoallv/w)
    default: return kTypes;                                      // scans, alltoallv/w, handles
  }
}

// An MPI call the records no longer hold (an MPI_Isend's own, an MPI_Irecv's posting one),
// found by the second read.
struct FoundCall {
  std::uint64_t enter = 0, leave = 0;
  std::uint32_t cnode = kNone;
  // An MPI_Irecv's: the position of its request event, which orders its Late Receiver point
  // among points of the same time (scout keeps them in event order).
  std::uint64_t request = kLastPosition;
};

// Who takes part in a synchronization point: everybody, one location, or a list (the pool's).
enum class Partners : std::uint8_t { All, One, List, None };  // None: OpenMP (threads, no MPI rank)
enum class Kind : std::uint8_t { Start, LsRecv, LsSend, LrSend, LrRecv, Collective, OmpFork, OmpBarrier };

// 56 bytes; a point that waited has its costs beside (Location::cost, at `slot`).
struct Sp {
  std::uint64_t cut = 0;         // the enter of its MPI call: its time map is cut there
  std::uint64_t order : 48 = 0;  // its event's position among equal cuts (kLastPosition: unknown, last)
  Partners partners : 8 = Partners::All;
  Kind kind : 8 = Kind::Start;
  double omega = 0, tau = 0, kappa = 0;  // its wait, its call's duration, its completion (ticks)
  std::uint32_t cnode = kNone;
  std::uint32_t segment = 0;   // the first time-map segment after its cut
  std::uint32_t partner = 0;   // the location (One) or pool entry (List)
  std::uint32_t slot = kNone;  // where it waited: its costs' index
  bool contains(std::uint32_t location, const std::vector<std::vector<std::uint32_t>>& pool) const {
    if (partners == Partners::All) return true;
    if (partners == Partners::One) return partner == location;
    if (partners == Partners::None) return false;
    const auto& list = pool[partner];
    return std::binary_search(list.begin(), list.end(), location);
  }
};

static_assert(sizeof(Sp) == 56);

struct __attribute__((packed)) Entry {  // 12 bytes: one per call path with time in a segment
  std::uint64_t ticks;
  std::uint32_t cnode;
};

struct __attribute__((packed)) PathSum {  // 12 bytes: a call path's time up to and including a segment
  std::uint32_t segment;
  std::uint64_t ticks;
};
struct WaitSum {  // a call path's waits up to and including a point (integer ticks: exact in a double)
  std::uint32_t cnode, sp;
  double omega;
};

// One location's synchronization points (in event order, the trace start first), their costs
// and its time maps between them.
//
// Costs (docs/root-cause-design.md 3.1) are added to a range of the delayer's points that always
// ends at the point its backward cursor stands at, and each point's costs are read only once
// the cursor has passed it. So a range addition is one addition at the range's first waiting
// point, and a point's cost factor is the sum of the additions at or before it made while the
// cursor was behind it: a Fenwick tree over the waiting points (`cost`, `propagating`, a
// maximum) whose node k turns into point k's own costs (factor × wait) when the cursor reaches
// it (`live`: the nodes below are the tree's; updates stop there).
struct Location {
  std::vector<Sp> sps;
  std::vector<double> cost;  // per point that waited (Sp::slot) its cost per type (RootCause::types_ of them)
  std::vector<double> propagating;               // the same
  std::vector<std::uint32_t> waited;             // per slot its point
  std::uint32_t live = 0;                        // slots [0, live): tree nodes; the rest: settled
  // Built where an interval first reaches far back (kWalk), so that traces whose intervals stay
  // short hold nothing more: per partner (kEverybody: the points with everybody) its points,
  // the partner lists longer than kShortList that recur (a communicator's members: few distinct
  // ones) with their points, the OpenMP points; per call path its time summed over the
  // segments; the waits summed over the points, per call path too. A list held by few points
  // of the location (a 1-to-N root's waiting members) is indexed per partner (at most kFewUses
  // times its length), and so are all but the kMostLists lists held by the most points: a
  // query asks each listed one in turn, so many distinct recurring sets (a root's waiting
  // members in a repeating pattern) must not all be listed.
  bool partners_indexed = false, paths_indexed = false, waits_indexed = false;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> by_partner;  // (partner, point), sorted
  std::vector<std::pair<std::uint32_t, std::vector<std::uint32_t>>> by_list;  // (pool entry, its points)
  std::vector<std::uint32_t> omp_points;
  std::vector<std::uint32_t> paths, path_offsets;  // call path k: path_sums[path_offsets[k], path_offsets[k + 1])
  std::vector<PathSum> path_sums;
  std::vector<double> wait_sums;    // per slot boundary: the waits of the slots before
  std::vector<WaitSum> wait_paths;  // by (call path, point)
  std::vector<std::uint64_t> cuts;     // distinct cut times, increasing
  std::vector<std::uint32_t> offsets;  // segment k: entries[offsets[k], offsets[k + 1])
  std::vector<Entry> entries;
  std::vector<std::uint64_t> isend_positions, irecv_positions;  // calls to find (increasing)
  std::vector<FoundCall> isend_calls, irecv_calls;
  std::uint32_t column = kNone;
  const OffsetFunction* moved = nullptr;  // the time correction's, which moved the records
};

// The second read: per location its exclusive time per call path between consecutive cuts
// (the Enter/Leave accounting of scout's time maps: time between two events goes to the call
// path on top of the stack, none outside every region) and the calls it is asked for.
class SegmentObserver final : public trace::CallPathObserver {
 public:
  explicit SegmentObserver(std::vector<Location>& locations) : locations_(locations) {}
  trace::EventTypeSet interest() const override {
    using T = trace::EventType;
    return trace::event_types({T::Enter, T::Leave, T::MpiIsend, T::MpiIrecv, T::MpiIrecvRequest});
  }
  void begin_location(std::uint32_t location) override {
    finish();
    if (location >= locations_.size()) return;
    at_ = &locations_[location];
    at_->offsets.assign(1, 0);
    at_->isend_calls.assign(at_->isend_positions.size(), {});
    at_->irecv_calls.assign(at_->irecv_positions.size(), {});
    next_cut_ = next_isend_ = next_irecv_ = 0;
    started_ = false;
    stack_.clear(), pending_.clear(), requests_.clear(), found_.clear();
  }
  void end_location(std::uint32_t) override { finish(); }
  void rows(const std::vector<std::uint32_t>& rows) override { rows_ = rows; }
  void event(const trace::Event& e, std::uint32_t cnode) override {
    if (!at_) return;
    using T = trace::EventType;
    const auto t = at_->moved ? (*at_->moved)(e.time) : e.time;  // where the corrected records see it
    switch (e.type) {
      case T::Enter:
        account(t);
        stack_.push_back({t, cnode});
        break;
      case T::Leave:
        account(t);
        close(t);
        if (!stack_.empty()) stack_.pop_back();
        break;
      case T::MpiIsend: isend(e, t); break;
      case T::MpiIrecvRequest:
        if (!stack_.empty()) {
          requests_[e.request] = found_.size();
          found_.push_back({stack_.back().enter, t, stack_.back().cnode, e.position});
          pending_.push_back({stack_.size(), &found_, found_.size() - 1});
        }
        break;
      case T::MpiIrecv: irecv(e, t); break;
      default: break;
    }
  }
  // After the read: the call paths as the report's rows (the profile builder numbers its own).
  void to_rows() {
    if (rows_.empty()) return;
    auto row = [&](std::uint32_t c) { return c < rows_.size() ? rows_[c] : kNone; };
    auto map = [&](std::uint32_t& c) { c = row(c); };
    for (auto& l : locations_) {
      for (auto& e : l.entries) e.cnode = row(e.cnode);
      for (auto& c : l.isend_calls) map(c.cnode);
      for (auto& c : l.irecv_calls) map(c.cnode);
    }
  }

 private:
  struct Frame {
    std::uint64_t enter;
    std::uint32_t cnode;
  };
  struct Pending {  // a found call whose leave is the leave of the frame at this depth
    std::size_t depth;
    std::vector<FoundCall>* list;
    std::size_t index;
  };
  void add(std::uint64_t from, std::uint64_t to) {
    if (stack_.empty() || to <= from) return;
    const auto c = stack_.back().cnode;
    if (c == kNone) return;  // a call path the profile lacks: none to charge
    if (c >= open_.size()) open_.resize(std::size_t(c) + 1, 0);
    if (open_[c] == 0) touched_.push_back(c);
    open_[c] += to - from;
  }
  void flush() {  // closes the open segment
    std::sort(touched_.begin(), touched_.end());
    for (auto c : touched_) at_->entries.push_back({open_[c], c}), open_[c] = 0;
    touched_.clear();
    at_->offsets.push_back(static_cast<std::uint32_t>(at_->entries.size()));
  }
  void account(std::uint64_t t) {
    if (!started_) last_ = t, started_ = true;
    auto x = last_;
    const auto& cuts = at_->cuts;
    while (next_cut_ < cuts.size() && cuts[next_cut_] < t) {  // a cut at t closes only after [last, t)
      const auto c = std::max(cuts[next_cut_], x);
      add(x, c);
      x = c;
      flush();
      ++next_cut_;
    }
    add(x, t);
    last_ = t;
  }
  void close(std::uint64_t leave) {
    while (!pending_.empty() && pending_.back().depth == stack_.size()) {
      auto& p = pending_.back();
      (*p.list)[p.index].leave = leave;
      pending_.pop_back();
    }
  }
  void isend(const trace::Event& e, std::uint64_t t) {
    auto& want = at_->isend_positions;
    while (next_isend_ < want.size() && want[next_isend_] < e.position) ++next_isend_;
    if (next_isend_ == want.size() || want[next_isend_] != e.position || stack_.empty()) return;
    at_->isend_calls[next_isend_] = {stack_.back().enter, t, stack_.back().cnode};
    pending_.push_back({stack_.size(), &at_->isend_calls, next_isend_});
  }
  void irecv(const trace::Event& e, std::uint64_t t) {
    auto& want = at_->irecv_positions;
    while (next_irecv_ < want.size() && want[next_irecv_] < e.position) ++next_irecv_;
    const auto it = requests_.find(e.request);
    const bool wanted = next_irecv_ < want.size() && want[next_irecv_] == e.position;
    if (it == requests_.end()) {
      // No request event (older measurements): posted by the call completing it, as the records say.
      if (wanted && !stack_.empty()) {
        at_->irecv_calls[next_irecv_] = {stack_.back().enter, t, stack_.back().cnode};
        pending_.push_back({stack_.size(), &at_->irecv_calls, next_irecv_});
      }
      return;
    }
    if (wanted) at_->irecv_calls[next_irecv_] = found_[it->second];
    requests_.erase(it);
  }
  void finish() {
    if (!at_) return;
    while (at_->offsets.size() < at_->cuts.size() + 2) flush();  // the cuts after the last event
    at_ = nullptr;
  }

  std::vector<Location>& locations_;
  Location* at_ = nullptr;
  std::vector<std::uint32_t> rows_;
  std::vector<Frame> stack_;
  std::vector<Pending> pending_;
  std::vector<FoundCall> found_;  // the posting calls of the open MPI_Irecv requests
  std::unordered_map<std::uint64_t, std::size_t> requests_;
  std::vector<std::uint64_t> open_;  // the open segment's ticks per call path
  std::vector<std::uint32_t> touched_;
  std::size_t next_cut_ = 0, next_isend_ = 0, next_irecv_ = 0;
  std::uint64_t last_ = 0;
  bool started_ = false;
};

using Map = std::vector<std::pair<std::uint32_t, double>>;  // call path -> ticks, by call path

// A wait and whom it waited for: a Late Sender (waiter: the receive, delayer: the send) or a
// Late Receiver (waiter: the send's completion, delayer: the receive's request).
struct PointToPoint {
  std::uint32_t waiter, waiter_sp, delayer, delayer_sp;  // dense locations, sp indices
  Type type;
};
struct Collective {
  std::vector<std::uint32_t> members;  // dense locations, rank order
  std::vector<std::uint32_t> sp;       // per member its sp index, kNone where it is none
  std::uint32_t rho = 0;               // the member that delayed the others
  Type type = kBarrier;
  bool omp = false;                    // an OpenMP barrier (members: the team's threads)
};

class RootCause {
 public:
  RootCause(const trace::Trace& trace, const std::vector<std::uint32_t>& locations,
            const std::vector<LocationRecords>& records, const std::vector<PointToPointExtras>& extras,
            const MessagePairs& pairs, const std::vector<std::vector<RecordRef>>& instances, std::size_t cnodes,
            const OmpObserver* omp);
  void read(const profile::LocalProfile& p, const std::vector<std::uint32_t>& analyzed, const Chunking& chunking,
            const std::vector<OffsetFunction>* moves);
  void move_times();
  void build(const Chunking& chunking);
  void replay();
  void idleness();
  void add_to(profile::LocalProfile& p, RootCauseStats* stats);
  void add_tree(profile::LocalProfile& p);  // the metrics, in Scalasca 2.6's tree

 private:
  // fn(location, its index) for every location, the locations cut into chunks of about equal
  // weight(location) that run at once (each touches only its own locations).
  template <typename Weight, typename Fn>
  void for_locations(const Chunking& chunking, Weight&& weight, Fn&& fn) {
    std::vector<std::uint64_t> weights;
    weights.reserve(at_.size());
    for (const auto& x : at_) weights.push_back(weight(x));
    run_chunks(chunk_bounds(weights, chunking), [&](std::size_t, std::size_t begin, std::size_t end) {
      for (auto l = begin; l < end; ++l) fn(at_[l], static_cast<std::uint32_t>(l));
    });
  }
  // What the first step decides, before the second read tells the calls the records lack.
  struct LsWait {
    RecordRef receive, send;
    std::uint64_t omega;
  };
  struct LrWait {
    RecordRef send, receive;
    SendCompletion completion;
    std::uint64_t posted, omega;
  };
  struct CollectiveSp {
    const CollectiveRecord* record;
    std::uint32_t instance, member;
    std::uint64_t omega;
    double kappa;
    Partners partners;
    std::uint32_t partner;
  };
  void decide_messages();
  void decide_collectives();
  void decide_omp(const OmpObserver& omp);
  void join_time_move(std::uint32_t location, const OmpSync& join, std::uint32_t team,
                      const std::unordered_map<std::uint32_t, const ParallelRecord*>& region, const OmpTeams& teams);
  std::uint32_t push(std::uint32_t location, const Sp& sp);
  const FoundCall* found(const std::vector<std::uint64_t>& positions, const std::vector<FoundCall>& calls,
                         std::uint64_t position) const;
  FoundCall isend_call(const RecordRef& s) const;
  FoundCall request_call(const RecordRef& r, std::uint64_t posted) const;
  // Interval maps (docs/root-cause-design.md, 2.3).
  std::uint32_t prev(std::uint32_t l, std::uint32_t e, std::uint32_t r);
  std::uint32_t indexed_prev(std::uint32_t l, std::uint32_t e, std::uint32_t r);
  void group_start(const Collective& c, std::vector<std::uint32_t>& h, std::uint32_t& g);
  void index_partners(Location& x) const;
  void index_paths(Location& x) const;
  static void index_waits(Location& x);
  void times(Location& x, std::uint32_t from, std::uint32_t to);
  double waits(Location& x, std::uint32_t a, std::uint32_t b, Map& out) const;
  double pruned(std::uint32_t l, std::uint32_t a, std::uint32_t b, Map& out);
  // Costs (Location): added over (from, the cursor's point), read when final.
  void charge(std::uint32_t l, std::uint32_t from, const std::array<double, kTypes>& factor, double sigma);
  void settle(std::uint32_t l, std::uint32_t k);
  std::array<double, kTypes> cost_of(std::uint32_t l, std::uint32_t k) const;
  static double excess(const Map& s, const Map& r, Map& d);  // d = [s - r]+ over s's call paths; its sum
  void add(std::size_t metric, std::uint32_t l, const Map& d, double scale);
  void point_to_point(const PointToPoint& w);
  void collective(const Collective& c);
  void omp_barrier(const Collective& c);
  std::uint32_t prev_omp(std::uint32_t l, std::uint32_t e);
  bool ready(std::uint32_t task, std::uint32_t& blocker) const;
  void run(std::uint32_t task);

  const trace::Trace& trace_;
  const std::vector<LocationRecords>& records_;
  const std::vector<PointToPointExtras>& extras_;
  const MessagePairs& pairs_;
  const std::vector<std::vector<RecordRef>>& instances_;
  std::size_t cnodes_, columns_;
  std::vector<Location> at_;  // per dense location
  std::vector<std::vector<std::uint32_t>> pool_;
  std::vector<LsWait> ls_;
  std::vector<LrWait> lr_;
  std::vector<CollectiveSp> collective_sps_;
  // OpenMP: per thread its fork and barrier points before the sort ((location, sp) in at_),
  // per barrier instance its members' points; per master its forks and joins (idleness).
  struct OmpSp {
    std::uint32_t location, index, collective, member;
  };
  std::vector<OmpSp> omp_sps_;
  struct Stretch {
    std::uint32_t master, threads;
    std::uint64_t from, to;  // the master's serial time [from, to) (kLast: to its end)
    std::uint32_t end = kNone;  // the master's fork point at `to` (kNone: the trace's end, or none found)
    double scale = 0;           // the idle threads it delayed (threads - 1), 0 where it had no time nor waits
    bool last = false;          // the master's last stretch (to the trace's end)
  };
  std::vector<Stretch> stretches_;
  struct TimeMove {  // ticks added to (taken off) a call path in the segment ending at `cut` (after: the next one)
    std::uint32_t location;
    std::uint64_t cut;
    bool after;
    std::uint32_t cnode;
    std::int64_t ticks;
  };
  std::vector<TimeMove> time_moves_;
  std::uint32_t stretch_end(const Stretch& st) const;
  void idle_costs(const Stretch& st);
  bool parallel_ = false, mpi_ = false;  // the trace has OpenMP parallel regions, MPI records
  std::size_t types_ = kMpiTypes;        // the cost types a point carries (the OpenMP ones where there are regions)
  std::vector<Collective> collectives_;
  std::vector<PointToPoint> p2p_;
  // Per location its tasks (as delayer) by sp: (sp, task); a task < p2p_.size() is a message,
  // else collectives_[task - p2p_.size()].
  std::vector<std::vector<std::pair<std::uint32_t, std::uint32_t>>> tasks_;
  std::vector<std::vector<double>> values_;  // [metric][cnode * columns + column], ticks
  std::vector<double> scratch_;
  std::vector<std::uint32_t> touched_;
  std::vector<std::int64_t> cursor_;
  std::uint64_t forced_ = 0;
};

RootCause::RootCause(const trace::Trace& trace, const std::vector<std::uint32_t>& locations,
                     const std::vector<LocationRecords>& records, const std::vector<PointToPointExtras>& extras,
                     const MessagePairs& pairs, const std::vector<std::vector<RecordRef>>& instances, std::size_t cnodes,
                     const OmpObserver* omp)
    : trace_(trace), records_(records), extras_(extras), pairs_(pairs), instances_(instances), cnodes_(cnodes),
      columns_(locations.size()), at_(trace.definitions().locations.size()),
      values_(kAllMetrics, std::vector<double>(cnodes * locations.size(), 0.0)), scratch_(cnodes, 0.0) {
  for (std::size_t c = 0; c < locations.size(); ++c)
    if (locations[c] < at_.size()) at_[locations[c]].column = static_cast<std::uint32_t>(c);
  for (auto& l : at_) l.sps.push_back(Sp{});  // the trace start: every location's first interval begins there
  for (const auto& l : records)
    mpi_ = mpi_ || !l.sends.empty() || !l.receives.empty() || !l.collectives.empty();
  decide_messages();
  decide_collectives();
  if (omp) decide_omp(*omp);
  types_ = parallel_ ? std::size_t{kTypes} : kMpiTypes;
}

// Late Sender receives (a Waitall/any/some: its largest, the first of equal ones; MPI_Test*:
// none) and Late Receiver send completions (a Waitall/some: its largest, the last of equal ones,
// none where the call waited as a Late Sender), as the wait-state patterns find them.
void RootCause::decide_messages() {
  // Per receive the enter of the call that posted it (its own, or its MPI_Irecv's: the k-th
  // Extra receive of a location has entry k beside).
  std::vector<std::vector<std::uint64_t>> posting(records_.size());
  for (std::uint32_t l = 0; l < records_.size(); ++l) {
    std::size_t k = 0;
    for (const auto& r : records_[l].receives) {
      if (r.beside() != Beside::Extra) posting[l].push_back(r.enter);
      else if (l < extras_.size() && k < extras_[l].receive_posted.size()) posting[l].push_back(extras_[l].receive_posted.at(k++, r.enter));
      else posting[l].push_back(kNoTime);
    }
  }
  for (std::uint32_t l = 0; l < records_.size(); ++l) {
    const auto& receives = records_[l].receives;
    std::unordered_set<std::uint32_t> late_sender_calls;
    std::vector<LsWait> multi;  // the receives of the current Waitall/any/some
    std::uint32_t multi_call = kNone;
    auto end_multi = [&] {
      const LsWait* b = nullptr;
      for (const auto& w : multi)
        if (w.omega > 0 && (!b || w.omega > b->omega)) b = &w;
      if (b) ls_.push_back(*b), late_sender_calls.insert(multi_call & SendCompletion::kCallMask);
      multi.clear();
    };
    for (std::uint32_t j = 0; j < receives.size(); ++j) {
      const auto& r = receives[j];
      const auto s = pairs_.send_of_receive[l][j];
      if (!multi.empty() && multi_call != r.call) end_multi();
      if (s.list == kNone || r.call_kind == CallKind::Test) continue;
      const auto& send = records_[s.list].sends[s.index];
      const auto until = std::min(send.enter, r.leave);
      const LsWait w{{l, j}, s, until > r.enter ? until - r.enter : 0};
      if (r.call_kind == CallKind::WaitMulti) multi.push_back(w), multi_call = r.call;
      else if (w.omega > 0) ls_.push_back(w);
    }
    if (!multi.empty()) end_multi();
    // Late Receiver.
    const auto& sends = records_[l].sends;
    std::unordered_map<std::uint32_t, LrWait> largest;  // per Waitall/some call
    std::vector<std::uint32_t> call_order;
    std::size_t extra = 0;
    for (std::uint32_t i = 0; i < sends.size(); ++i) {
      const auto& s = sends[i];
      SendCompletion c;
      if (s.beside() == Beside::Own) c = own_completion(s);
      else if (s.beside() == Beside::Extra && l < extras_.size() && extra < extras_[l].completion_enter.size())
        c = held_completion(s, extras_[l].completion_enter.at(extra++, s.enter));
      else continue;
      const auto r = pairs_.receive_of_send[l][i];
      if (c.kind() == SendCompletionKind::None || r.list == kNone) continue;
      const auto posted = posting[r.list][r.index];
      if (posted == kNoTime) continue;
      const std::uint64_t idle = c.leave > posted && posted > c.enter ? posted - c.enter : 0;
      const LrWait w{{l, i}, r, c, posted, idle};
      if (c.kind() != SendCompletionKind::WaitMulti) {
        if (idle > 0) lr_.push_back(w);
        continue;
      }
      if (idle == 0) continue;
      auto [it, fresh] = largest.try_emplace(c.call, w);
      if (fresh) call_order.push_back(c.call);
      else if (idle >= it->second.omega) it->second = w;  // the last of equal ones
    }
    for (auto call : call_order)
      if (!late_sender_calls.count(call)) lr_.push_back(largest.at(call));
  }
}

// The collective synchronization points of scout's classes (collective_sync decides who
// synchronizes; scans, MPI_Alltoallv/w and one-member communicators are none).
void RootCause::decide_collectives() {
  const CommunicatorRanks ranks(trace_.definitions());
  std::vector<const CollectiveRecord*> m;
  std::vector<MemberSync> sync;
  // Equal partner lists are one pool entry (the same communicator's members in every instance:
  // one index entry per location, Location::by_list).
  std::map<std::vector<std::uint32_t>, std::uint32_t> known;
  for (std::uint32_t k = 0; k < instances_.size(); ++k) {
    const auto& refs = instances_[k];
    if (refs.empty()) continue;
    m.clear();
    for (const auto& r : refs) m.push_back(&records_[r.list].collectives[r.index]);
    const auto op = m[0]->op;
    const bool init_exit = op == kInitOp || op == kFinalizeOp;
    if (ranks.partial_init_exit(m[0]->communicator, m.size())) continue;
    const auto type = collective_type(op);
    if (!init_exit && type == kTypes) continue;
    collective_sync(m, sync);
    std::uint32_t rho = kNone;
    for (std::size_t i = 0; i < m.size(); ++i)
      if (sync[i].sync && sync[i].causer != kNone) rho = sync[i].causer;
    if (!init_exit && rho == kNone) continue;
    Collective c;
    c.type = type;
    c.rho = rho;
    for (const auto* r : m) c.members.push_back(r->location);
    c.sp.assign(m.size(), kNone);
    const std::uint32_t index = static_cast<std::uint32_t>(collectives_.size());
    // Partner lists: the synchronizing members (1-to-N, N-to-1: see below).
    std::vector<std::uint32_t> syncing, waiting;
    std::uint64_t waiting_leave = kLast;
    for (std::size_t i = 0; i < m.size(); ++i) {
      if (!sync[i].sync && !init_exit) continue;
      syncing.push_back(m[i]->location);
      if (i != rho && sync[i].sync) waiting.push_back(m[i]->location), waiting_leave = std::min(waiting_leave, m[i]->leave);
    }
    auto list = [&](std::vector<std::uint32_t> v) {
      std::sort(v.begin(), v.end());
      const auto [it, fresh] = known.try_emplace(v, static_cast<std::uint32_t>(pool_.size()));
      if (fresh) pool_.push_back(std::move(v));
      return it->second;
    };
    const std::uint32_t all = type == k12n || type == kN21 ? 0 : list(syncing);
    const std::uint32_t waiters = type == k12n ? list(waiting) : 0;
    for (std::uint32_t i = 0; i < m.size(); ++i) {
      const auto& r = *m[i];
      const auto& s = sync[i];
      if (!init_exit && !s.sync) continue;
      const auto end = std::min(s.until, r.leave);
      const std::uint64_t omega = op == kInitOp ? 0 : (end > r.enter ? end - r.enter : 0);  // scout: none at MPI_Init
      const auto earliest = type == k12n ? waiting_leave : s.earliest_leave;
      const auto from = std::max(earliest, end);
      CollectiveSp sp{&r, index, i, omega, r.leave > from ? double(r.leave - from) : 0.0, Partners::List, all};
      // 1-to-N: a waiting member's partner is the root, the root's the waiting members; N-to-1:
      // the root and the last sender are each other's.
      if (type == k12n) sp.partners = i == rho ? Partners::List : Partners::One, sp.partner = i == rho ? waiters : m[rho]->location;
      if (type == kN21) sp.partners = Partners::One, sp.partner = i == rho ? m[0]->root : m[rho]->location;
      collective_sps_.push_back(sp);
    }
    if (init_exit) c.rho = kNone;  // no delay analysis at MPI_Init / MPI_Finalize
    collectives_.push_back(std::move(c));
  }
}

// OpenMP (docs/root-cause-design.md, section 5): per thread a point where it began each team
// instance (its fork: no wait; the time from the fork to its begin counts for the parallel
// region, its call's duration is begin - fork, its completion begin - the team's earliest begin)
// and one at each barrier (its wait for the thread entering last); partners: no MPI rank. Per
// master its serial stretches (the trace's start to the first fork, each join to the next fork,
// the last join to the end) for the idleness costs.
void RootCause::decide_omp(const OmpObserver& omp) {
  const auto& syncs = omp.syncs();
  parallel_ = std::any_of(syncs.begin(), syncs.end(), [](const auto& l) { return !l.parallels.empty(); });
  if (!parallel_) return;
  const OmpTeams teams(omp, true);
  const auto groups = omp.sync_groups();
  std::vector<std::uint64_t> earliest(groups, kLast);
  for (const auto& l : syncs)
    for (const auto& x : l.syncs)
      if (x.role == OmpSyncRole::TeamBegin && x.group < groups) earliest[x.group] = std::min(earliest[x.group], x.time);
  std::vector<std::uint64_t> enter_position(omp.barriers().size(), kLastPosition);
  std::vector<std::uint32_t> master_fork(groups, kNone);  // per team instance its master's fork point
  std::vector<std::uint32_t> began(groups, kNone);        // per group of team ends and joins: its team instance
  const auto ends = omp.end_groups();
  for (std::uint32_t g = 0; g < ends.size(); ++g)
    if (ends[g] < groups) began[ends[g]] = g;
  for (const auto& l : syncs) {
    if (l.location >= at_.size()) continue;
    std::unordered_map<std::uint32_t, const ParallelRecord*> region;  // team instance -> the thread's parallel region
    for (const auto& v : l.parallels) region.emplace(v.team, &v);
    std::unordered_map<std::uint32_t, std::uint32_t> forked_in;  // team instance -> the master's call path at its fork
    for (const auto& x : l.syncs) {
      if (x.role == OmpSyncRole::Fork) forked_in[x.group] = x.cnode;
      if (x.role == OmpSyncRole::Join && x.group < groups && began[x.group] != kNone)
        join_time_move(l.location, x, began[x.group], region, teams);
      if (x.role != OmpSyncRole::TeamBegin || x.group >= groups || teams.fork[x.group] == OmpTeams::kNoFork) continue;
      const auto fork = teams.fork[x.group];
      Sp sp;
      sp.cut = x.time, sp.order = x.position, sp.partners = Partners::None, sp.kind = Kind::OmpFork;
      sp.tau = x.time > fork ? double(x.time - fork) : 0.0, sp.kappa = double(x.time - earliest[x.group]);
      const auto it = region.find(x.group);
      sp.cnode = it == region.end() ? kNone : it->second->cnode;
      const auto index = push(l.location, sp);
      const bool master = teams.master[x.group] == l.location;
      if (master) master_fork[x.group] = index;
      // scout's time maps: a thread's time from the fork to its team begin counts for the
      // parallel region, after the fork point (the master's is taken off the call path it forked in).
      if (x.time > fork && sp.cnode != kNone) {
        const auto ticks = x.time - fork;
        time_moves_.push_back({l.location, x.time, true, sp.cnode, std::int64_t(ticks)});
        if (const auto f = forked_in.find(x.group); master && f != forked_in.end() && f->second != kNone)
          time_moves_.push_back({l.location, x.time, false, f->second, -std::int64_t(ticks)});
      }
    }
  }
  for_each_barrier_enter(omp, [&](const OmpSync& s, std::uint32_t barrier) { enter_position[barrier] = s.position; });
  // Barrier instances: the k-th barrier of each thread in one team instance.
  std::map<std::tuple<std::uint32_t, std::uint32_t, std::uint32_t, std::uint32_t>, std::vector<std::uint32_t>> instances;
  const auto& bars = omp.barriers();
  for (std::uint32_t b = 0; b < bars.size(); ++b) instances[{bars[b].process, bars[b].team, bars[b].instance, bars[b].index}].push_back(b);
  for (auto& entry : instances) {
    auto& members = entry.second;
    if (members.size() < 2) continue;
    std::sort(members.begin(), members.end(), [&](auto a, auto b) { return bars[a].location < bars[b].location; });
    std::uint32_t rho = 0;  // the last to enter (the lowest location among equals)
    for (std::uint32_t i = 1; i < members.size(); ++i)
      if (bars[members[i]].enter > bars[members[rho]].enter) rho = i;
    Collective c;
    c.omp = true, c.type = kTypes, c.rho = rho;
    const auto index = static_cast<std::uint32_t>(collectives_.size());
    const auto last = bars[members[rho]].enter;
    for (std::uint32_t i = 0; i < members.size(); ++i) {
      const auto& r = bars[members[i]];
      if (r.location >= at_.size()) continue;
      Sp sp;
      // Its wait (the tasks it ran meanwhile are work, as in omp_ibarrier_wait); what it waited
      // for, the delay's input, is the last enter (omp_barrier).
      sp.cut = r.enter, sp.order = enter_position[members[i]], sp.partners = Partners::None, sp.kind = Kind::OmpBarrier;
      sp.omega = double(barrier_wait(omp, r, std::min(last, r.leave))), sp.tau = double(r.leave - r.enter), sp.cnode = r.cnode;
      omp_sps_.push_back({r.location, push(r.location, sp), index, i});
      c.members.push_back(r.location);
    }
    c.sp.assign(c.members.size(), kNone);
    if (c.members.size() == members.size()) collectives_.push_back(std::move(c));
    else omp_sps_.resize(omp_sps_.size() - c.members.size());
  }
  // The masters' serial stretches; every other CPU thread of the master's process idles there
  // (scout's scale: its analysis threads, one per CPU location of the process), whatever the
  // size of the teams around.
  const auto& defs = trace_.definitions();
  const auto none = defs.location_groups.size();  // the process of a location without one
  auto process_of = [&](const trace::Location& l) { return std::min<std::size_t>(l.group, none); };
  std::vector<std::uint32_t> cpu_threads(none + 1, 0);  // per process
  for (const auto& l : defs.locations)
    if (l.type == "cpu_thread") ++cpu_threads[process_of(l)];
  std::map<std::uint32_t, std::vector<std::uint32_t>> regions;  // master -> its team instances
  for (std::uint32_t g = 0; g < groups; ++g)
    if (teams.master[g] != trace::kNone && teams.fork[g] != OmpTeams::kNoFork && teams.join[g] != OmpTeams::kNoFork)
      regions[teams.master[g]].push_back(g);
  for (auto& [master, gs] : regions) {
    std::sort(gs.begin(), gs.end(), [&](auto a, auto b) { return teams.fork[a] < teams.fork[b]; });
    const auto threads = cpu_threads[process_of(defs.locations[master])];
    std::uint64_t from = 0;
    for (auto g : gs) {
      stretches_.push_back({master, threads, from, teams.fork[g], master_fork[g]});
      from = teams.join[g];
    }
    stretches_.push_back({master, threads, from, kLast, kNone, 0, true});
  }
  // A process whose master never forks: its other threads idle the whole run (scout's stretch
  // from the start to the end); its master is its first CPU thread, as Score-P numbers them.
  std::vector<bool> forks(cpu_threads.size(), false);
  for (const auto& [master, gs] : regions) forks[process_of(defs.locations[master])] = true;
  for (std::uint32_t l = 0; l < defs.locations.size() && l < at_.size(); ++l) {
    const auto g = process_of(defs.locations[l]);
    if (g == none || forks[g] || cpu_threads[g] < 2 || defs.locations[l].type != "cpu_thread") continue;
    forks[g] = true;
    stretches_.push_back({l, cpu_threads[g], 0, kLast, kNone, 0, true});
  }
}

// scout's time maps: the master's time from leaving a parallel region to its THREAD_JOIN counts
// for the parallel region, not for the call path it joins in (moved within the segment before
// the join's cut, which the serial stretch after it begins at).
void RootCause::join_time_move(std::uint32_t location, const OmpSync& join, std::uint32_t team,
                               const std::unordered_map<std::uint32_t, const ParallelRecord*>& region,
                               const OmpTeams& teams) {
  const auto it = region.find(team);
  if (it == region.end() || teams.join[team] == OmpTeams::kNoFork || teams.fork[team] == OmpTeams::kNoFork ||
      join.time <= it->second->leave || join.cnode == kNone)
    return;
  const auto ticks = std::int64_t(join.time - it->second->leave);
  time_moves_.push_back({location, join.time, false, join.cnode, -ticks});
  time_moves_.push_back({location, join.time, false, it->second->cnode, ticks});
}

// The moves of time between call paths that scout's time maps make at forks and joins, into the
// segments the second read cut (one pass over the entries of each location with moves).
void RootCause::move_times() {
  std::sort(time_moves_.begin(), time_moves_.end(), [](const TimeMove& a, const TimeMove& b) {
    return std::tie(a.location, a.cut, a.after) < std::tie(b.location, b.cut, b.after);
  });
  for (std::size_t i = 0; i < time_moves_.size();) {
    const auto location = time_moves_[i].location;
    auto end = i;
    while (end < time_moves_.size() && time_moves_[end].location == location) ++end;
    auto& x = at_[location];
    std::vector<Entry> entries;
    std::vector<std::uint32_t> offsets{0};
    entries.reserve(x.entries.size() + (end - i));
    offsets.reserve(x.offsets.size());
    for (std::size_t s = 0; s + 1 < x.offsets.size(); ++s) {
      const auto first = entries.size();
      entries.insert(entries.end(), x.entries.begin() + x.offsets[s], x.entries.begin() + x.offsets[s + 1]);
      // the moves into segment s: at the cut ending it, or after the cut before it (in cut order)
      for (; i < end; ++i) {
        const auto& m = time_moves_[i];
        const auto k = std::size_t(std::lower_bound(x.cuts.begin(), x.cuts.end(), m.cut) - x.cuts.begin()) + m.after;
        if (k > s) break;
        auto e = std::find_if(entries.begin() + first, entries.end(), [&](const Entry& en) { return en.cnode == m.cnode; });
        if (m.ticks < 0) {
          if (e != entries.end()) e->ticks -= std::min<std::uint64_t>(e->ticks, std::uint64_t(-m.ticks));
        } else if (e != entries.end()) {
          e->ticks += std::uint64_t(m.ticks);
        } else {
          entries.push_back({std::uint64_t(m.ticks), m.cnode});
        }
      }
      offsets.push_back(static_cast<std::uint32_t>(entries.size()));
    }
    i = end;  // (moves beyond the last segment: none to make)
    x.entries.swap(entries);
    x.offsets.swap(offsets);
  }
  std::vector<TimeMove>().swap(time_moves_);
}

std::uint32_t RootCause::push(std::uint32_t location, const Sp& sp) {
  auto& sps = at_[location].sps;
  sps.push_back(sp);
  return static_cast<std::uint32_t>(sps.size() - 1);
}

void RootCause::read(const profile::LocalProfile& p, const std::vector<std::uint32_t>& analyzed, const Chunking& chunking,
                     const std::vector<OffsetFunction>* moves) {
  if (moves)
    for (std::size_t l = 0; l < moves->size() && l < records_.size(); ++l)
      if (records_[l].location < at_.size()) at_[records_[l].location].moved = &(*moves)[l];
  // What to cut and what to find, per location.
  auto cut = [&](std::uint32_t l, std::uint64_t t) { at_[l].cuts.push_back(t); };
  for (const auto& w : ls_) {
    const auto& r = records_[w.receive.list].receives[w.receive.index];
    const auto& s = records_[w.send.list].sends[w.send.index];
    cut(r.location, r.enter), cut(s.location, s.enter);
    if (s.beside() == Beside::Extra) at_[s.location].isend_positions.push_back(s.position);
  }
  for (const auto& w : lr_) {
    const auto& r = records_[w.receive.list].receives[w.receive.index];
    const auto& s = records_[w.send.list].sends[w.send.index];
    cut(s.location, w.completion.enter), cut(r.location, w.posted);
    if (r.beside() == Beside::Extra) at_[r.location].irecv_positions.push_back(r.position);
  }
  for (const auto& c : collective_sps_) cut(c.record->location, c.record->enter);
  for (std::uint32_t l = 0; l < at_.size(); ++l)  // the OpenMP points, pushed already
    for (std::size_t k = 1; k < at_[l].sps.size(); ++k) cut(l, at_[l].sps[k].cut);
  for (const auto& st : stretches_) {
    if (st.from != 0 || st.to == kLast) cut(st.master, st.from);  // (a cut makes the read cut its time map)
    if (st.to != kLast) cut(st.master, st.to);
  }
  for_locations(chunking, [](const Location& x) { return x.cuts.size(); }, [](Location& x, std::uint32_t) {
    for (auto* v : {&x.cuts, &x.isend_positions, &x.irecv_positions}) {
      std::sort(v->begin(), v->end());
      v->erase(std::unique(v->begin(), v->end()), v->end());
    }
  });
  std::vector<std::uint32_t> on;
  for (auto l : analyzed)
    if (!at_[l].cuts.empty()) on.push_back(l);
  // A reader per thread, each writing only its own locations' segments and calls.
  std::vector<std::unique_ptr<SegmentObserver>> observers;
  std::vector<trace::CallPathObserver*> parts;
  for (std::size_t k = 0; k < std::clamp<std::size_t>(chunking.threads, 1, kMostChunks); ++k)
    observers.push_back(std::make_unique<SegmentObserver>(at_)), parts.push_back(observers.back().get());
  attribute_path(trace_, p, analyzed, on, parts, chunking);
  for (auto& o : observers) o->to_rows();  // rows only where the profile builder read (one observer)
}


const FoundCall* RootCause::found(const std::vector<std::uint64_t>& positions, const std::vector<FoundCall>& calls,
                                  std::uint64_t position) const {
  const auto it = std::lower_bound(positions.begin(), positions.end(), position);
  if (it == positions.end() || *it != position) return nullptr;
  const auto k = std::size_t(it - positions.begin());
  return k < calls.size() && calls[k].cnode != kNone ? &calls[k] : nullptr;
}

// A send's own MPI call (an MPI_Isend's record holds its completing call instead).
FoundCall RootCause::isend_call(const RecordRef& ref) const {
  const auto& s = records_[ref.list].sends[ref.index];
  if (s.beside() != Beside::Extra) return {s.enter, s.leave, s.cnode};
  const auto& l = at_[s.location];
  if (const auto* c = found(l.isend_positions, l.isend_calls, s.position)) return *c;
  return {s.enter, s.enter, kNone};  // not found (a stream the second read saw differently): no call path
}

// The call that posted a receive (its own, or its MPI_Irecv's).
FoundCall RootCause::request_call(const RecordRef& ref, std::uint64_t posted) const {
  const auto& r = records_[ref.list].receives[ref.index];
  if (r.beside() != Beside::Extra) return {r.enter, r.leave, r.cnode};
  const auto& l = at_[r.location];
  if (const auto* c = found(l.irecv_positions, l.irecv_calls, r.position)) return *c;
  return {posted, posted, kNone};
}

// The synchronization points with their values, in event order per location, and the tasks of
// the backward pass at their delayers.
void RootCause::build(const Chunking& chunking) {
  const auto one = [](std::uint32_t location) {
    Sp sp;
    sp.partners = Partners::One, sp.partner = location;
    return sp;
  };
  struct Link {
    std::uint32_t waiter, waiter_sp, delayer, delayer_sp;
    Type type;
  };
  std::vector<Link> links;
  // Late Sender receives, Late Receiver completions, then the sends of Late Senders (a blocking
  // send that is both keeps the latter: scout's order) and the requests of Late Receivers.
  for (const auto& w : ls_) {
    const auto& r = records_[w.receive.list].receives[w.receive.index];
    const auto& s = records_[w.send.list].sends[w.send.index];
    const auto own = isend_call(w.send);
    Sp sp = one(s.location);
    sp.cut = r.enter, sp.order = r.position, sp.omega = double(w.omega), sp.tau = double(r.leave - r.enter);
    sp.kappa = r.leave > own.leave ? double(r.leave - own.leave) : 0.0, sp.cnode = r.cnode, sp.kind = Kind::LsRecv;
    links.push_back({r.location, push(r.location, sp), s.location, 0, kLs});
  }
  for (const auto& w : lr_) {
    const auto& s = records_[w.send.list].sends[w.send.index];
    const auto& r = records_[w.receive.list].receives[w.receive.index];
    const auto req = request_call(w.receive, w.posted);
    const auto& c = w.completion;
    Sp sp = one(r.location);
    const bool blocking = s.beside() == Beside::Own;
    sp.cut = c.enter, sp.order = blocking ? s.position : kLastPosition, sp.omega = double(w.omega), sp.tau = double(c.leave - c.enter);
    sp.kappa = c.leave <= req.leave ? -double(req.leave - c.leave) : 0.0;  // <= 0 (scout's sign)
    sp.cnode = c.cnode, sp.kind = Kind::LrSend;
    links.push_back({s.location, push(s.location, sp), r.location, 0, kLr});
  }
  std::size_t k = 0;
  for (const auto& w : ls_) {
    const auto& r = records_[w.receive.list].receives[w.receive.index];
    const auto& s = records_[w.send.list].sends[w.send.index];
    const auto own = isend_call(w.send);
    Sp sp = one(r.location);
    sp.cut = s.enter, sp.order = s.position, sp.tau = double(own.leave - own.enter);
    sp.kappa = own.leave > r.leave ? double(own.leave - r.leave) : 0.0, sp.cnode = own.cnode, sp.kind = Kind::LsSend;
    links[k++].delayer_sp = push(s.location, sp);
  }
  for (const auto& w : lr_) {
    const auto& s = records_[w.send.list].sends[w.send.index];
    const auto& r = records_[w.receive.list].receives[w.receive.index];
    const auto req = request_call(w.receive, w.posted);
    Sp sp = one(s.location);
    const bool blocking = r.beside() != Beside::Extra;
    sp.cut = w.posted, sp.order = blocking ? r.position : req.request, sp.tau = double(req.leave - req.enter);
    sp.kappa = req.leave > w.completion.leave ? double(req.leave - w.completion.leave) : 0.0;
    sp.cnode = req.cnode, sp.kind = Kind::LrRecv;
    links[k++].delayer_sp = push(r.location, sp);
  }
  std::vector<std::uint32_t> collective_index;
  for (const auto& c : collective_sps_) {
    const auto& r = *c.record;
    Sp sp;
    sp.cut = r.enter, sp.order = r.position, sp.omega = double(c.omega), sp.tau = double(r.leave - r.enter);
    sp.kappa = c.kappa, sp.cnode = r.cnode, sp.partners = c.partners, sp.partner = c.partner, sp.kind = Kind::Collective;
    collective_index.push_back(push(r.location, sp));
  }
  // Event order per location (the trace start stays first); indices renumbered.
  std::vector<std::vector<std::uint32_t>> renumber(at_.size());
  for_locations(chunking, [](const Location& x) { return x.sps.size(); }, [&](Location& x, std::uint32_t l) {
    auto& sps = x.sps;
    std::vector<std::uint32_t> order(sps.size());
    for (std::uint32_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin() + 1, order.end(), [&](std::uint32_t a, std::uint32_t b) {
      return std::make_pair(sps[a].cut, std::uint64_t(sps[a].order)) < std::make_pair(sps[b].cut, std::uint64_t(sps[b].order));
    });
    // One event met twice (a blocking send a Late Receiver completion and a Late Sender's send,
    // a blocking receive a Late Sender receive and a Late Receiver's request) is one point: the
    // send keeps its Late Sender part, the receive its Late Sender part (scout's order).
    renumber[l].resize(sps.size());
    std::vector<Sp> sorted;
    sorted.reserve(sps.size());
    for (std::uint32_t i = 0; i < order.size(); ++i) {
      const auto& sp = sps[order[i]];
      const bool same = !sorted.empty() && i > 0 && sp.order != kLastPosition && sorted.back().cut == sp.cut &&
                        sorted.back().order == sp.order;
      if (same && sp.kind == Kind::LsSend) sorted.back() = sp;
      if (!same) sorted.push_back(sp);
      renumber[l][order[i]] = static_cast<std::uint32_t>(sorted.size() - 1);
    }
    sps.swap(sorted);
    std::vector<Sp>().swap(sorted);
    // Each point's first segment: after its cut (the trace start: from the beginning).
    const auto& cuts = x.cuts;
    for (std::size_t i = 1; i < sps.size(); ++i)
      sps[i].segment = static_cast<std::uint32_t>(std::lower_bound(cuts.begin(), cuts.end(), sps[i].cut) - cuts.begin() + 1);
    auto& waited = x.waited;
    for (std::uint32_t k = 0; k < sps.size(); ++k)
      if (sps[k].omega > 0) sps[k].slot = static_cast<std::uint32_t>(waited.size()), waited.push_back(k);
    x.cost.assign(waited.size() * types_, 0.0);
    x.propagating.assign(waited.size(), 0.0);
    x.live = static_cast<std::uint32_t>(waited.size());
  });
  tasks_.assign(at_.size(), {});
  for (const auto& x : links) {
    p2p_.push_back({x.waiter, renumber[x.waiter][x.waiter_sp], x.delayer, renumber[x.delayer][x.delayer_sp], x.type});
  }
  for (std::size_t i = 0; i < collective_sps_.size(); ++i) {
    const auto& c = collective_sps_[i];
    collectives_[c.instance].sp[c.member] = renumber[c.record->location][collective_index[i]];
  }
  for (const auto& o : omp_sps_) collectives_[o.collective].sp[o.member] = renumber[o.location][o.index];
  std::vector<OmpSp>().swap(omp_sps_);
  for (auto& st : stretches_)
    if (st.end != kNone) st.end = renumber[st.master][st.end];
  for (std::uint32_t t = 0; t < p2p_.size(); ++t) tasks_[p2p_[t].delayer].push_back({p2p_[t].delayer_sp, t});
  for (std::uint32_t c = 0; c < collectives_.size(); ++c) {
    const auto& x = collectives_[c];
    if (x.rho == kNone || x.sp[x.rho] == kNone) continue;
    tasks_[x.members[x.rho]].push_back({x.sp[x.rho], static_cast<std::uint32_t>(p2p_.size() + c)});
  }
  for (std::uint32_t s = 0; s < stretches_.size(); ++s)  // those ending at a fork; the last ones before the pass
    if (!stretches_[s].last && stretches_[s].end != kNone)
      tasks_[stretches_[s].master].push_back({stretches_[s].end, static_cast<std::uint32_t>(p2p_.size() + collectives_.size() + s)});
  for_locations(chunking, [](const Location& x) { return x.sps.size(); }, [&](Location&, std::uint32_t l) {
    auto& t = tasks_[l];
    std::stable_sort(t.begin(), t.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  });
  std::vector<LsWait>().swap(ls_);
  std::vector<LrWait>().swap(lr_);
  std::vector<CollectiveSp>().swap(collective_sps_);
}

// The latest point of l before e that synchronized with r (the trace start does with everybody):
// a short walk back, else the location's index.
std::uint32_t RootCause::prev(std::uint32_t l, std::uint32_t e, std::uint32_t r) {
  auto& x = at_[l];
  const auto& sps = x.sps;
  const std::uint32_t stop = e > kWalk + 1 ? e - kWalk : 1;
  for (std::uint32_t k = e; k-- > stop;)
    if (sps[k].contains(r, pool_)) return k;
  return stop == 1 ? 0 : indexed_prev(l, e, r);
}

// prev from the location's index (built on first need).
std::uint32_t RootCause::indexed_prev(std::uint32_t l, std::uint32_t e, std::uint32_t r) {
  auto& x = at_[l];
  if (!x.partners_indexed) index_partners(x);
  auto latest = [&](std::uint32_t key) -> std::uint32_t {  // the last of key's points before e
    const auto it = std::lower_bound(x.by_partner.begin(), x.by_partner.end(), std::make_pair(key, e));
    return it != x.by_partner.begin() && std::prev(it)->first == key ? std::prev(it)->second : 0;
  };
  auto best = std::max(latest(kEverybody), latest(r));
  for (const auto& [entry, points] : x.by_list) {
    if (!std::binary_search(pool_[entry].begin(), pool_[entry].end(), r)) continue;
    const auto it = std::lower_bound(points.begin(), points.end(), e);
    if (it != points.begin()) best = std::max(best, *std::prev(it));
  }
  return best;
}

void RootCause::index_partners(Location& x) const {
  x.partners_indexed = true;
  std::map<std::uint32_t, std::vector<std::uint32_t>> lists;  // long lists: their points here
  for (std::uint32_t k = 0; k < x.sps.size(); ++k) {
    const auto& sp = x.sps[k];
    if (sp.partners == Partners::All) x.by_partner.push_back({kEverybody, k});
    if (sp.partners == Partners::One && sp.partner != kNone)  // (kNone, nobody, is kEverybody's key)
      x.by_partner.push_back({sp.partner, k});
    if (sp.partners == Partners::None) x.omp_points.push_back(k);
    if (sp.partners != Partners::List) continue;
    if (pool_[sp.partner].size() > kShortList) lists[sp.partner].push_back(k);
    else
      for (auto r : pool_[sp.partner]) x.by_partner.push_back({r, k});
  }
  // The lists held by the most points here are listed (up to kMostLists, each by more than
  // kFewUses points); the others' points go per partner.
  std::vector<std::pair<std::uint32_t, std::vector<std::uint32_t>>> held(std::make_move_iterator(lists.begin()),
                                                                        std::make_move_iterator(lists.end()));
  std::stable_sort(held.begin(), held.end(), [](const auto& a, const auto& b) { return a.second.size() > b.second.size(); });
  for (std::size_t i = 0; i < held.size(); ++i) {
    if (i < kMostLists && held[i].second.size() > kFewUses) {
      x.by_list.push_back(std::move(held[i]));
      continue;
    }
    for (auto k : held[i].second)
      for (auto r : pool_[held[i].first]) x.by_partner.push_back({r, k});
  }
  std::sort(x.by_partner.begin(), x.by_partner.end());
}

// Per call path of the location its time summed over the segments where it has some.
void RootCause::index_paths(Location& x) const {
  x.paths_indexed = true;
  struct Item {
    std::uint32_t cnode, segment;
    std::uint64_t ticks;
  };
  std::vector<Item> items;
  for (std::uint32_t s = 0; s + 1 < x.offsets.size(); ++s)
    for (auto i = x.offsets[s]; i < x.offsets[s + 1]; ++i)
      if (x.entries[i].cnode < cnodes_ && x.entries[i].ticks > 0) items.push_back({x.entries[i].cnode, s, x.entries[i].ticks});
  std::sort(items.begin(), items.end(), [](const Item& a, const Item& b) {
    return std::make_pair(a.cnode, a.segment) < std::make_pair(b.cnode, b.segment);
  });
  std::uint64_t sum = 0;
  for (const auto& it : items) {
    if (x.paths.empty() || x.paths.back() != it.cnode) {
      x.paths.push_back(it.cnode), x.path_offsets.push_back(static_cast<std::uint32_t>(x.path_sums.size())), sum = 0;
    }
    sum += it.ticks;
    if (x.path_sums.size() > x.path_offsets.back() && x.path_sums.back().segment == it.segment) x.path_sums.back().ticks = sum;
    else x.path_sums.push_back({it.segment, sum});
  }
  x.path_offsets.push_back(static_cast<std::uint32_t>(x.path_sums.size()));
}

// Per slot boundary the waits before it; per call path its waits up to each waiting point.
void RootCause::index_waits(Location& x) {
  x.waits_indexed = true;
  x.wait_sums.assign(1, 0.0);
  for (auto k : x.waited) x.wait_sums.push_back(x.wait_sums.back() + x.sps[k].omega);
  for (auto k : x.waited) x.wait_paths.push_back({x.sps[k].cnode, k, x.sps[k].omega});
  std::sort(x.wait_paths.begin(), x.wait_paths.end(),
            [](const WaitSum& a, const WaitSum& b) { return std::make_pair(a.cnode, a.sp) < std::make_pair(b.cnode, b.sp); });
  for (std::size_t i = 1; i < x.wait_paths.size(); ++i)
    if (x.wait_paths[i].cnode == x.wait_paths[i - 1].cnode) x.wait_paths[i].omega += x.wait_paths[i - 1].omega;
}

// The time per call path of segments [from, to) into scratch_ / touched_: the segments' entries
// where they are few, else the differences of the call paths' sums (the ticks are integers: the
// same doubles either way).
void RootCause::times(Location& x, std::uint32_t from, std::uint32_t to) {
  to = std::min<std::uint32_t>(to, x.offsets.empty() ? 0 : static_cast<std::uint32_t>(x.offsets.size() - 1));
  if (from >= to) return;
  const auto span = x.offsets[to] - x.offsets[from];
  if (span > kWalk * 4 && !x.paths_indexed) index_paths(x);
  if (span <= kWalk * 4 || span <= 4 * x.paths.size()) {
    for (auto i = x.offsets[from]; i < x.offsets[to]; ++i) {
      const auto c = x.entries[i].cnode;
      if (c >= cnodes_ || x.entries[i].ticks == 0) continue;
      if (scratch_[c] == 0) touched_.push_back(c);
      scratch_[c] += double(x.entries[i].ticks);
    }
    return;
  }
  for (std::size_t k = 0; k < x.paths.size(); ++k) {
    const auto first = x.path_sums.begin() + x.path_offsets[k], last = x.path_sums.begin() + x.path_offsets[k + 1];
    auto before = [&](std::uint32_t segment) -> std::uint64_t {  // the sum over the segments before `segment`
      const auto it = std::lower_bound(first, last, segment, [](const PathSum& p, std::uint32_t s) { return p.segment < s; });
      return it == first ? 0 : std::prev(it)->ticks;
    };
    const auto ticks = before(to) - before(from);
    if (ticks == 0) continue;
    const auto c = x.paths[k];
    if (scratch_[c] == 0) touched_.push_back(c);
    scratch_[c] += double(ticks);
  }
}

// W_l(a, b) taken off `out` (only its call paths); returns w_l(a, b). The waits are integer
// ticks: walked or as differences of sums, the same doubles.
double RootCause::waits(Location& x, std::uint32_t a, std::uint32_t b, Map& out) const {
  auto take = [&](std::uint32_t cnode, double omega) {
    const auto it = std::lower_bound(out.begin(), out.end(), std::make_pair(cnode, -1e300));
    if (it != out.end() && it->first == cnode) it->second -= omega;
  };
  double w = 0;
  if (b - a <= kWalk) {
    for (auto k = a + 1; k < b; ++k) {
      const auto& t = x.sps[k];
      if (t.omega <= 0) continue;
      w += t.omega;
      take(t.cnode, t.omega);
    }
    return w;
  }
  if (!x.waits_indexed) index_waits(x);
  const auto lo = std::upper_bound(x.waited.begin(), x.waited.end(), a) - x.waited.begin();
  const auto hi = std::lower_bound(x.waited.begin(), x.waited.end(), b) - x.waited.begin();
  w = x.wait_sums[hi] - x.wait_sums[lo];
  if (lo == hi) return w;
  auto before = [&](std::uint32_t cnode, std::uint32_t k) -> double {  // cnode's waits at points before k
    const auto it = std::lower_bound(x.wait_paths.begin(), x.wait_paths.end(), std::make_pair(cnode, k),
                                     [](const WaitSum& p, const auto& key) { return std::make_pair(p.cnode, p.sp) < key; });
    return it != x.wait_paths.begin() && std::prev(it)->cnode == cnode ? std::prev(it)->omega : 0.0;
  };
  for (auto& [c, v] : out) v -= before(c, b) - before(c, a + 1);
  return w;
}

// M_l(a, b) (exclusive time per call path after a's cut up to b's, minus the waits of the points
// between, a's call only with its completion time) into `out`; returns the waits' sum w_l(a, b).
double RootCause::pruned(std::uint32_t l, std::uint32_t a, std::uint32_t b, Map& out) {
  auto& x = at_[l];
  times(x, a == 0 ? 0u : x.sps[a].segment, x.sps[b].segment);
  std::sort(touched_.begin(), touched_.end());
  out.clear();
  for (auto c : touched_) out.push_back({c, scratch_[c]}), scratch_[c] = 0;
  touched_.clear();
  const double w = waits(x, a, b, out);
  std::erase_if(out, [](const auto& e) { return !(e.second > 0); });
  const auto& first = x.sps[a];
  if (a != 0 && first.cnode < cnodes_) {
    auto it = std::lower_bound(out.begin(), out.end(), std::make_pair(first.cnode, -1e300));
    if (it == out.end() || it->first != first.cnode) it = out.insert(it, {first.cnode, 0.0});
    it->second = std::max(it->second - (first.tau - first.kappa), 0.0);
  }
  return w;
}

// Adds `factor` (per type; `sigma`: the propagating share) to the costs of l's waiting points
// from `from` up to the point l's cursor stands at: one Fenwick update (Location).
void RootCause::charge(std::uint32_t l, std::uint32_t from, const std::array<double, kTypes>& factor, double sigma) {
  auto& x = at_[l];
  auto i = static_cast<std::uint32_t>(std::lower_bound(x.waited.begin(), x.waited.end(), from) - x.waited.begin());
  for (; i < x.live; i |= i + 1) {
    for (std::size_t k = 0; k < types_; ++k) x.cost[i * types_ + k] += factor[k];
    x.propagating[i] = std::max(x.propagating[i], sigma);
  }
}

// The cursor reached l's point k: nothing will be added to its costs any more.
void RootCause::settle(std::uint32_t l, std::uint32_t k) {
  auto& x = at_[l];
  const auto slot = x.sps[k].slot;
  if (slot == kNone || slot >= x.live) return;
  const auto cost = cost_of(l, k);
  double sigma = 0;
  for (std::int64_t i = slot; i >= 0; i = std::int64_t(i & (i + 1)) - 1) sigma = std::max(sigma, x.propagating[i]);
  std::copy_n(cost.begin(), types_, x.cost.begin() + std::size_t(slot) * types_);
  x.propagating[slot] = sigma * x.sps[k].omega;
  x.live = slot;
}

// Point k's costs: settled, or (a task run out of order) what has been added so far.
std::array<double, kTypes> RootCause::cost_of(std::uint32_t l, std::uint32_t k) const {
  const auto& x = at_[l];
  const auto slot = x.sps[k].slot;
  std::array<double, kTypes> f{};
  if (slot >= x.live) {
    std::copy_n(x.cost.begin() + std::size_t(slot) * types_, types_, f.begin());
    return f;
  }
  for (std::int64_t i = slot; i >= 0; i = std::int64_t(i & (i + 1)) - 1)
    for (std::size_t t = 0; t < types_; ++t) f[t] += x.cost[std::size_t(i) * types_ + t];
  for (auto& v : f) v *= x.sps[k].omega;
  return f;
}

double RootCause::excess(const Map& s, const Map& r, Map& d) {
  d.clear();
  double sum = 0;
  auto j = r.begin();
  for (const auto& [c, v] : s) {
    while (j != r.end() && j->first < c) ++j;
    const double e = v - (j != r.end() && j->first == c ? j->second : 0.0);
    if (e > 0) d.push_back({c, e}), sum += e;
  }
  return sum;
}

void RootCause::add(std::size_t metric, std::uint32_t l, const Map& d, double scale) {
  const auto col = at_[l].column;
  if (col == kNone || !(scale > 0)) return;
  auto& v = values_[metric];
  for (const auto& [c, ticks] : d) v[std::size_t(c) * columns_ + col] += scale * ticks;
}

// docs/root-cause-design.md 3.2 / 3.3.
void RootCause::point_to_point(const PointToPoint& p) {
  auto& waiter = at_[p.waiter].sps[p.waiter_sp];
  const double omega = waiter.omega;
  if (!(omega > 0)) return;
  Map r, s, d;
  pruned(p.waiter, prev(p.waiter, p.waiter_sp, p.delayer), p.waiter_sp, r);
  const auto from = prev(p.delayer, p.delayer_sp, p.waiter);
  const double w = pruned(p.delayer, from, p.delayer_sp, s);
  const double total = excess(s, r, d) + w;
  if (!(total > 0)) return;
  const double sigma = std::min(omega / total, 1.0);
  add(2 * std::size_t(p.type), p.delayer, d, sigma);
  std::array<double, kTypes> lambda{};
  const auto cost = cost_of(p.waiter, p.waiter_sp);  // it waited: it has a slot
  for (std::size_t x = 0; x < kTypes; ++x) {
    lambda[x] = cost[x] / total;
    add(long_term(x), p.delayer, d, lambda[x]);
  }
  // The delayer's waits in the interval: the direct part as costs of the own type, the rest as they came.
  std::array<double, kTypes> factor{};
  for (std::size_t x = 0; x < kTypes; ++x) factor[x] = std::max(lambda[x] + (x == p.type ? sigma : 0.0), 0.0);
  charge(p.delayer, from + 1, factor, sigma);
  if (w > 0 && waiter.cnode < cnodes_ && at_[p.waiter].column != kNone)
    values_[p.type == kLs ? kIndirectLs : kIndirectLr][std::size_t(waiter.cnode) * columns_ + at_[p.waiter].column] +=
        sigma * w;
}

// The group start g and the members' intermediate starts h (kNone: g) of a collective. Scout
// walks back from rho's point e, takes each member off at its latest point with rho (p_i) and
// stops at a point that holds all remaining members: the earliest p_i. So g = min p_i (the trace
// start where a member never synchronized with rho) and h_i = p_i where p_i > g. The walk as
// scout's for kWalk points (usually all it takes: each member's p_i found in one pass), then the
// partner index for the members left.
void RootCause::group_start(const Collective& c, std::vector<std::uint32_t>& h, std::uint32_t& g) {
  const auto rho = c.members[c.rho];
  const auto e = c.sp[c.rho];
  const auto& x = at_[rho];
  h.assign(c.members.size(), kNone);
  std::unordered_map<std::uint32_t, std::uint32_t> position;  // location -> member
  for (std::uint32_t i = 0; i < c.members.size(); ++i)
    if (i != c.rho) position.emplace(c.members[i], i);
  std::size_t left = position.size();
  auto found = [&](std::uint32_t location, std::uint32_t t) {
    const auto it = position.find(location);
    if (it != position.end() && h[it->second] == kNone) h[it->second] = t, --left;
  };
  const std::uint32_t stop = e > kWalk + 1 ? e - kWalk : 1;
  for (std::uint32_t t = e; t-- > stop && left > 0;) {
    const auto& sp = x.sps[t];
    if (sp.partners == Partners::All)
      for (const auto& [location, i] : position) found(location, t);
    if (sp.partners == Partners::One) found(sp.partner, t);
    if (sp.partners == Partners::List)
      for (auto location : pool_[sp.partner]) found(location, t);
  }
  for (const auto& [location, i] : position)
    if (h[i] == kNone) h[i] = stop == 1 ? 0 : indexed_prev(rho, e, location);
  g = kNone;
  for (std::uint32_t i = 0; i < c.members.size(); ++i)
    if (i != c.rho) g = std::min(g, h[i]);
  if (g == kNone) g = e > 1 ? e - 1 : 0;  // no other member: scout's walk stops at the first point
  for (auto& t : h)
    if (t == g) t = kNone;
}

// docs/root-cause-design.md 3.4, with scout's scale over the delayer's interval.
void RootCause::collective(const Collective& c) {
  const auto rho = c.members[c.rho];
  const auto e = c.sp[c.rho];
  std::vector<std::uint32_t> h;
  std::uint32_t g = 0;
  group_start(c, h, g);
  Map group, si, ri, di;
  const double wg = pruned(rho, g, e, group);
  constexpr std::size_t kKeys = kTypes + 1;  // the wait, then the cost types
  std::vector<std::array<double, kKeys>> gamma(c.members.size(), std::array<double, kKeys>{});
  for (std::uint32_t i = 0; i < c.members.size(); ++i) {
    if (i == c.rho || c.sp[i] == kNone) continue;
    const auto l = c.members[i];
    double psi = wg;
    if (h[i] != kNone) {  // the delayer's map from the intermediate start, on the group map's call paths
      Map from_h;
      psi = pruned(rho, h[i], e, from_h);
      si.clear();
      auto j = from_h.begin();
      for (const auto& entry : group) {
        const auto cn = entry.first;
        while (j != from_h.end() && j->first < cn) ++j;
        si.push_back({cn, j != from_h.end() && j->first == cn ? j->second : 0.0});
      }
    } else {
      si = group;
    }
    pruned(l, prev(l, c.sp[i], rho), c.sp[i], ri);
    const double d = excess(si, ri, di);
    const auto& member = at_[l].sps[c.sp[i]];
    if (!(member.omega > 0) || !(d + psi > 0)) continue;  // (no wait: no costs either)
    const auto cost = cost_of(l, c.sp[i]);
    gamma[i][0] = member.omega / (d + psi);
    for (std::size_t k = 0; k < kTypes; ++k) gamma[i][k + 1] = cost[k] / (d + psi);
    add(2 * std::size_t(c.type), rho, di, gamma[i][0]);
    for (std::size_t k = 0; k < kTypes; ++k) add(long_term(k), rho, di, gamma[i][k + 1]);
  }
  // The scale over rho's interval: the members without an intermediate start throughout; those
  // of each intermediate start from the *next* intermediate start on (scout's order).
  std::array<double, kKeys> base{};
  std::vector<std::uint32_t> later;  // the members with an intermediate start, by it (then in member order)
  for (std::uint32_t i = 0; i < c.members.size(); ++i) {
    if (i == c.rho) continue;
    if (h[i] == kNone)
      for (std::size_t k = 0; k < kKeys; ++k) base[k] += gamma[i][k];
    else
      later.push_back(i);
  }
  std::stable_sort(later.begin(), later.end(), [&](auto a, auto b) { return h[a] < h[b]; });
  std::vector<std::pair<std::uint32_t, std::array<double, kKeys>>> at;  // (intermediate start, its members' sum)
  for (auto i : later) {
    if (at.empty() || at.back().first != h[i]) at.push_back({h[i], {}});
    for (std::size_t k = 0; k < kKeys; ++k) at.back().second[k] += gamma[i][k];
  }
  // As increments over suffixes of the interval: the base from g on, each intermediate start's
  // sum from the next one on.
  auto increment = [&](std::uint32_t from, const std::array<double, kKeys>& scale) {
    std::array<double, kTypes> factor{};
    for (std::size_t k = 0; k < kTypes; ++k) factor[k] = scale[k + 1] + (k == c.type ? scale[0] : 0.0);
    charge(rho, from, factor, 0.0);
  };
  increment(g + 1, base);
  for (std::size_t j = 0; j + 1 < at.size(); ++j) increment(at[j + 1].first, at[j].second);
}

// The thread's latest OpenMP point before e (the trace start if none).
std::uint32_t RootCause::prev_omp(std::uint32_t l, std::uint32_t e) {
  auto& x = at_[l];
  const std::uint32_t stop = e > kWalk + 1 ? e - kWalk : 1;
  for (std::uint32_t k = e; k-- > stop;)
    if (x.sps[k].kind == Kind::OmpFork || x.sps[k].kind == Kind::OmpBarrier) return k;
  if (stop == 1) return 0;
  if (!x.partners_indexed) index_partners(x);
  const auto it = std::lower_bound(x.omp_points.begin(), x.omp_points.end(), e);
  return it == x.omp_points.begin() ? 0 : *std::prev(it);
}

// docs/root-cause-design.md section 5: the thread entering an OpenMP barrier last delays the
// others; each interval since the thread's previous OpenMP point. The waits become OpenMP barrier
// costs of the last thread's own waits in its interval (a master's MPI waits), which the backward
// pass carries to whoever caused those; the costs a waiting thread carries go on to the last
// thread's long-term metrics and waits, but for OpenMP barrier costs (scout's hybrid build reads
// no such input at a barrier: they end there).
void RootCause::omp_barrier(const Collective& c) {
  const auto rho = c.members[c.rho];
  const auto e = c.sp[c.rho];
  const auto from = prev_omp(rho, e);
  Map mine, theirs, d;
  const double w = pruned(rho, from, e, mine);
  std::array<double, kTypes> total{};
  const auto last = at_[rho].sps[e].cut;  // rho's enter
  for (std::uint32_t i = 0; i < c.members.size(); ++i) {
    if (i == c.rho || c.sp[i] == kNone) continue;
    const auto l = c.members[i];
    const auto& member = at_[l].sps[c.sp[i]];
    // The wait's input is the time to rho's enter (scout's, without the tasks run meanwhile).
    const double input = std::max(0.0, std::min(double(last), double(member.cut) + member.tau) - double(member.cut));
    if (!(input > 0)) continue;
    pruned(l, prev_omp(l, c.sp[i]), c.sp[i], theirs);
    const double sum = excess(mine, theirs, d) + w;
    if (!(sum > 0)) continue;
    add(kOmpBarrier, rho, d, input / sum);
    total[kOmpBarrierType] += input / sum;
    if (member.slot == kNone) continue;  // a wait spent running tasks: no costs to pass on
    const auto cost = cost_of(l, c.sp[i]);
    for (std::size_t k = 0; k < kTypes; ++k) {
      if (k == kOmpBarrierType) continue;
      add(long_term(k), rho, d, cost[k] / sum);
      total[k] += cost[k] / sum;
    }
  }
  charge(rho, from + 1, total, 0.0);
}

// The master's point a stretch ends before: its fork point, past its last point for the last
// stretch, kNone for a stretch whose fork point was not found.
std::uint32_t RootCause::stretch_end(const Stretch& st) const {
  return st.last ? static_cast<std::uint32_t>(at_[st.master].sps.size()) : st.end;
}

// A serial stretch's idle threads, as costs of the master's waits since its latest OpenMP point
// (scout's idleness interval): they reach whoever made the master wait there (the backward pass).
void RootCause::idle_costs(const Stretch& st) {
  const auto e = stretch_end(st);
  if (!(st.scale > 0) || e == kNone) return;
  std::array<double, kTypes> factor{};
  factor[kOmpIdleType] = st.scale;
  charge(st.master, prev_omp(st.master, e) + 1, factor, 0.0);
}

// The master's serial stretches: (threads - 1) times its time there, less its waits, delayed the
// process's other threads (scout's idleness delay costs).
void RootCause::idleness() {
  for (auto& st : stretches_) {
    const auto& x = at_[st.master];
    if (x.offsets.size() < 2 || st.threads < 2) continue;
    auto segment = [&](std::uint64_t t) {
      return static_cast<std::uint32_t>(std::lower_bound(x.cuts.begin(), x.cuts.end(), t) - x.cuts.begin() + 1);
    };
    const auto from = st.from == 0 ? 0u : segment(st.from);
    const auto to = st.to == kLast ? static_cast<std::uint32_t>(x.offsets.size() - 1) : segment(st.to);
    for (auto s = from; s < to && s + 1 < x.offsets.size(); ++s)
      for (auto i = x.offsets[s]; i < x.offsets[s + 1]; ++i) {
        const auto& en = x.entries[i];
        if (en.cnode >= cnodes_) continue;
        if (scratch_[en.cnode] == 0) touched_.push_back(en.cnode);
        scratch_[en.cnode] += double(en.ticks);
      }
    // The waits are those of the points since the master's latest OpenMP point before the
    // stretch's end (scout's interval, which its costs go to: idle_costs); a stretch without its
    // fork point: those inside it.
    auto first = x.sps.begin(), last = x.sps.end();
    if (const auto e = stretch_end(st); e != kNone) {
      first = x.sps.begin() + prev_omp(st.master, e) + 1, last = x.sps.begin() + e;
    } else {
      first = std::lower_bound(x.sps.begin() + 1, x.sps.end(), st.from, [](const Sp& sp, std::uint64_t t) { return sp.cut < t; });
      last = std::lower_bound(first, x.sps.end(), st.to, [](const Sp& sp, std::uint64_t t) { return sp.cut < t; });
    }
    double w = 0;
    for (auto it = first; it < last; ++it)
      if (const auto& sp = *it; sp.omega > 0 && sp.cnode < cnodes_) {
        w += sp.omega;
        if (scratch_[sp.cnode] == 0) touched_.push_back(sp.cnode);
        scratch_[sp.cnode] -= sp.omega;
      }
    std::sort(touched_.begin(), touched_.end());
    touched_.erase(std::unique(touched_.begin(), touched_.end()), touched_.end());
    Map out;
    double d = 0;
    for (auto c : touched_) {
      if (scratch_[c] > 0) out.push_back({c, scratch_[c]}), d += scratch_[c];
      scratch_[c] = 0;
    }
    touched_.clear();
    if (d + w > 0) st.scale = double(st.threads - 1), add(kOmpIdle, st.master, out, st.scale);
  }
}

// Whether a task's waiters have been passed by the backward walk (their costs are final); else
// `blocker` is a location to wait for.
bool RootCause::ready(std::uint32_t task, std::uint32_t& blocker) const {
  if (task < p2p_.size()) {
    const auto& p = p2p_[task];
    blocker = p.waiter;
    return cursor_[p.waiter] <= std::int64_t(p.waiter_sp);
  }
  if (task >= p2p_.size() + collectives_.size()) return true;  // a serial stretch: the master's own points
  const auto& c = collectives_[task - p2p_.size()];
  for (std::size_t i = 0; i < c.members.size(); ++i)
    if (i != c.rho && c.sp[i] != kNone && cursor_[c.members[i]] > std::int64_t(c.sp[i])) {
      blocker = c.members[i];
      return false;
    }
  return true;
}

void RootCause::run(std::uint32_t task) {
  if (task < p2p_.size()) point_to_point(p2p_[task]);
  else if (task >= p2p_.size() + collectives_.size()) idle_costs(stretches_[task - p2p_.size() - collectives_.size()]);
  else if (collectives_[task - p2p_.size()].omp) omp_barrier(collectives_[task - p2p_.size()]);
  else collective(collectives_[task - p2p_.size()]);
}

// The backward pass: per location a cursor from its last point to its first; a point's tasks
// (as delayer) run once every waiter's cursor has passed the waiting point. A cycle (times that
// contradict the messages) is broken by running the blocked task anyway (counted).
void RootCause::replay() {
  const auto n = at_.size();
  cursor_.assign(n, 0);
  std::vector<std::size_t> next(n);
  for (std::size_t l = 0; l < n; ++l) cursor_[l] = std::int64_t(at_[l].sps.size()) - 1, next[l] = tasks_[l].size();
  std::vector<std::vector<std::uint32_t>> waiting(n);
  std::deque<std::uint32_t> queue;
  std::vector<bool> queued(n, true);
  for (std::uint32_t l = 0; l < n; ++l) queue.push_back(l);
  for (const auto& st : stretches_)  // the masters' last serial stretches: their costs reach to the end
    if (st.last) idle_costs(st);
  std::size_t unfinished = n;
  auto advance = [&](std::uint32_t l, bool force) {
    while (cursor_[l] >= 0) {
      const auto k = std::uint32_t(cursor_[l]);
      settle(l, k);
      auto& t = tasks_[l];
      std::size_t first = next[l];
      while (first > 0 && t[first - 1].first == k) --first;
      for (auto i = first; i < next[l] && !force; ++i) {
        std::uint32_t blocker = kNone;
        if (!ready(t[i].second, blocker)) {
          waiting[blocker].push_back(l);
          return false;
        }
      }
      for (auto i = first; i < next[l]; ++i) run(t[i].second);
      force = false;
      next[l] = first;
      --cursor_[l];
    }
    --unfinished;
    return true;
  };
  auto wake = [&](std::uint32_t l) {
    for (auto w : waiting[l])
      if (!queued[w]) queued[w] = true, queue.push_back(w);
    waiting[l].clear();
  };
  while (unfinished > 0) {
    bool force = false;
    std::uint32_t l = 0;
    if (queue.empty()) {  // every location waits: break the cycle at the first one
      while (cursor_[l] < 0) ++l;
      force = true, ++forced_;
    } else {
      l = queue.front();
      queue.pop_front();
      queued[l] = false;
      if (cursor_[l] < 0) continue;
    }
    const auto before = cursor_[l];
    advance(l, force);
    if (cursor_[l] != before) wake(l);
  }
}

void RootCause::add_to(profile::LocalProfile& p, RootCauseStats* stats) {
  // Propagating waits: on the waiting point's own call path.
  for (auto& x : at_) {
    if (x.column == kNone) continue;
    for (const auto& sp : x.sps) {
      if (sp.slot == kNone || !(x.propagating[sp.slot] > 0) || sp.cnode >= cnodes_) continue;
      const double v = x.propagating[sp.slot];
      if (sp.kind == Kind::LsRecv) values_[kPropagatingLs][std::size_t(sp.cnode) * columns_ + x.column] += v;
      if (sp.kind == Kind::LrSend) values_[kPropagatingLr][std::size_t(sp.cnode) * columns_ + x.column] += v;
    }
  }
  if (stats) {
    *stats = {};
    for (const auto& x : at_) {
      stats->sync_points += x.sps.size() - 1;
      stats->segment_entries += x.entries.size();
      stats->bytes += x.sps.size() * sizeof(Sp) + x.cost.size() * sizeof(double) + x.propagating.size() * (8 + 4) +
                      x.entries.size() * sizeof(Entry) + x.offsets.size() * 4 + x.cuts.size() * 8 +
                      x.by_partner.size() * 8 + x.omp_points.size() * 4 + x.paths.size() * 8 +
                      x.path_sums.size() * sizeof(PathSum) + x.wait_sums.size() * 8 + x.wait_paths.size() * sizeof(WaitSum);
      for (const auto& b : x.by_list) stats->bytes += 4 + b.second.size() * 4;
    }
    for (const auto& list : pool_) stats->bytes += sizeof(list) + list.size() * 4;  // the partner lists
    stats->bytes += at_.size() * sizeof(Location);  // one per location of the trace, indexed or not
    stats->forced = forced_;
  }
  const double tick = 1.0 / static_cast<double>(trace_.definitions().clock.resolution);
  for (auto& values : values_)
    for (auto& v : values) v *= tick;
  add_tree(p);
}

// Scalasca 2.6's tree of the root-cause metrics (scout.spec): groups that scout.spec derives as
// sums store the sums of their children here; the terminal and direct waits, which it derives
// from the Late Sender and Late Receiver times, are those times less the propagating and the
// indirect ones. As scout's builds write them: the MPI metrics where the trace has MPI, the
// OpenMP ones where it has parallel regions (their long-term ones where it has both).
void RootCause::add_tree(profile::LocalProfile& p) {
  const auto cells = p.cnode_count() * p.locations.size();
  const bool hybrid = mpi_ && parallel_;
  auto pattern = [&](const char* name) {
    for (std::size_t m = 0; m < p.metrics.size(); ++m)
      if (p.metrics[m].uniq_name == name) {
        std::vector<double> out(cells);
        for (std::size_t c = 0; c < p.cnode_count(); ++c)
          std::memcpy(out.data() + c * p.locations.size(), p.values[m].row(c), p.locations.size() * 8);
        return out;
      }
    return std::vector<double>(cells, 0.0);
  };
  std::vector<double> late_sender, late_receiver;
  if (mpi_) late_sender = pattern("mpi_latesender"), late_receiver = pattern("mpi_latereceiver");
  auto minus = [&](const std::vector<double>& total, std::size_t m) {
    std::vector<double> out(cells);
    for (std::size_t i = 0; i < cells; ++i) out[i] = total[i] - values_[m][i];
    return out;
  };
  std::vector<double> terminal_ls, terminal_lr, direct_ls, direct_lr;
  if (mpi_) {
    terminal_ls = minus(late_sender, kPropagatingLs), terminal_lr = minus(late_receiver, kPropagatingLr);
    direct_ls = minus(late_sender, kIndirectLs), direct_lr = minus(late_receiver, kIndirectLr);
  }
  struct Node {
    const char *uniq, *display, *parent, *description;
    std::vector<const std::vector<double>*> parts;
    bool shown;
  };
  auto v = [&](std::size_t m) { return &values_[m]; };
  auto pair = [&](std::size_t type) { return std::vector<const std::vector<double>*>{v(2 * type), v(2 * type + 1)}; };
  // A root-cause metric of its own (kMetricText[m]: names and description) below `parent`.
  auto leaf = [&](std::size_t m, const char* parent, bool shown) {
    return Node{kMetricText[m].uniq, kMetricText[m].display, parent, kMetricText[m].description, {v(m)}, shown};
  };
  std::vector<const std::vector<double>*> mpi_delays, p2p, collective, omp, omp_barrier{v(kOmpBarrier)},
      omp_idle{v(kOmpIdle)};
  if (hybrid) omp_barrier.push_back(v(kOmpBarrierLongTerm)), omp_idle.push_back(v(kOmpIdleLongTerm));
  for (std::size_t type = 0; type < kMpiTypes; ++type)
    for (auto* x : pair(type)) mpi_delays.push_back(x), (type < kBarrier ? p2p : collective).push_back(x);
  omp = omp_barrier, omp.insert(omp.end(), omp_idle.begin(), omp_idle.end());
  std::vector<const std::vector<double>*> delays;
  if (mpi_) delays = mpi_delays;
  if (parallel_) delays.insert(delays.end(), omp.begin(), omp.end());
  const std::vector<Node> tree = {
      {"delay", "Delay costs", "", "Time that made others wait, where it was spent (the sum of the metrics below)",
       delays, mpi_ || parallel_},
      {"delay_mpi", "MPI", "delay", "Time that made MPI operations wait", mpi_delays, mpi_},
      {"delay_p2p", "Point-to-point", "delay_mpi", "Time that made point-to-point operations wait", p2p, mpi_},
      {"delay_latesender_aggregate", "Late Sender", "delay_p2p", "Time that made receives wait (Late Sender)",
       pair(kLs), mpi_},
      leaf(0, "delay_latesender_aggregate", mpi_),
      leaf(1, "delay_latesender_aggregate", mpi_),
      {"delay_latereceiver_aggregate", "Late Receiver", "delay_p2p", "Time that made sends wait (Late Receiver)",
       pair(kLr), mpi_},
      leaf(2, "delay_latereceiver_aggregate", mpi_),
      leaf(3, "delay_latereceiver_aggregate", mpi_),
      {"delay_collective", "Collective", "delay_mpi", "Time that made MPI collectives wait", collective, mpi_},
      {"delay_barrier_aggregate", "Wait at Barrier", "delay_collective", "Time that made others wait at barriers",
       pair(kBarrier), mpi_},
      leaf(4, "delay_barrier_aggregate", mpi_),
      leaf(5, "delay_barrier_aggregate", mpi_),
      {"delay_n21_aggregate", "Early Reduce", "delay_collective", "Time that made roots of N-to-1 collectives wait",
       pair(kN21), mpi_},
      leaf(10, "delay_n21_aggregate", mpi_),
      leaf(11, "delay_n21_aggregate", mpi_),
      {"delay_12n_aggregate", "Late Broadcast", "delay_collective", "Time that made others wait at 1-to-N collectives",
       pair(k12n), mpi_},
      leaf(8, "delay_12n_aggregate", mpi_),
      leaf(9, "delay_12n_aggregate", mpi_),
      {"delay_n2n_aggregate", "Wait at N x N", "delay_collective", "Time that made others wait at N x N collectives",
       pair(kN2n), mpi_},
      leaf(6, "delay_n2n_aggregate", mpi_),
      leaf(7, "delay_n2n_aggregate", mpi_),
      {"delay_omp", "OpenMP", "delay", "Time that made OpenMP threads wait or idle", omp, parallel_},
      {"delay_ompbarrier_aggregate", "Wait at Barrier", "delay_omp", "Time that made threads wait at OpenMP barriers",
       omp_barrier, parallel_},
      leaf(kOmpBarrier, "delay_ompbarrier_aggregate", parallel_),
      leaf(kOmpBarrierLongTerm, "delay_ompbarrier_aggregate", hybrid),
      {"delay_ompidle_aggregate", "Idleness delay costs", "delay_omp",
       "Time that left the worker threads of a process idle", omp_idle, parallel_},
      leaf(kOmpIdle, "delay_ompidle_aggregate", parallel_),
      leaf(kOmpIdleLongTerm, "delay_ompidle_aggregate", hybrid),
      {"waitstates_propagating_vs_terminal", "MPI point-to-point wait states (propagating vs. terminal)", "",
       "Late Sender and Late Receiver time, split by whether it made others wait later", {v(kPropagatingLs),
       v(kPropagatingLr), &terminal_ls, &terminal_lr}, mpi_},
      {"mpi_wait_propagating", "Propagating wait states", "waitstates_propagating_vs_terminal",
       "Point-to-point waits that made other processes wait later", {v(kPropagatingLs), v(kPropagatingLr)}, mpi_},
      leaf(kPropagatingLs, "mpi_wait_propagating", mpi_),
      leaf(kPropagatingLr, "mpi_wait_propagating", mpi_),
      {"mpi_wait_terminal", "Terminal wait states", "waitstates_propagating_vs_terminal",
       "Point-to-point waits that made nobody wait later", {&terminal_ls, &terminal_lr}, mpi_},
      {"mpi_wait_terminal_ls", "Late Sender", "mpi_wait_terminal", "Late Sender time less its propagating part",
       {&terminal_ls}, mpi_},
      {"mpi_wait_terminal_lr", "Late Receiver", "mpi_wait_terminal", "Late Receiver time less its propagating part",
       {&terminal_lr}, mpi_},
      {"waitstates_direct_vs_indirect", "MPI point-to-point wait states (direct vs. indirect)", "",
       "Late Sender and Late Receiver time, split by whether waits of the partner caused it",
       {&direct_ls, &direct_lr, v(kIndirectLs), v(kIndirectLr)}, mpi_},
      {"mpi_wait_direct", "Direct wait states", "waitstates_direct_vs_indirect",
       "Point-to-point waits caused by the partner's own time", {&direct_ls, &direct_lr}, mpi_},
      {"mpi_wait_direct_latesender", "Late Sender", "mpi_wait_direct", "Late Sender time less its indirect part",
       {&direct_ls}, mpi_},
      {"mpi_wait_direct_latereceiver", "Late Receiver", "mpi_wait_direct", "Late Receiver time less its indirect part",
       {&direct_lr}, mpi_},
      {"mpi_wait_indirect", "Indirect wait states", "waitstates_direct_vs_indirect",
       "Point-to-point waits caused by the partner's own waiting", {v(kIndirectLs), v(kIndirectLr)}, mpi_},
      leaf(kIndirectLs, "mpi_wait_indirect", mpi_),
      leaf(kIndirectLr, "mpi_wait_indirect", mpi_),
  };
  std::vector<std::pair<std::string, std::uint32_t>> index;
  for (const auto& node : tree) {
    if (!node.shown) continue;
    std::vector<double> sum(cells, 0.0);
    for (const auto* part : node.parts)
      if (!part->empty())
        for (std::size_t i = 0; i < cells; ++i) sum[i] += (*part)[i];
    auto metric = seconds_metric(node.uniq, node.display, node.description);
    for (const auto& [name, at] : index)
      if (name == node.parent) metric.parent = at;
    index.emplace_back(node.uniq, static_cast<std::uint32_t>(p.metrics.size()));
    p.metrics.push_back(std::move(metric));
    p.values.push_back(exclusive_matrix(p.cnode_count(), p.locations.size(), sum));
  }
  for (auto& values : values_) std::vector<double>().swap(values);
}
}  // namespace

std::vector<const char*> root_cause_metric_names(bool openmp) {
  std::vector<const char*> out;
  for (std::size_t m = 0; m < kMetrics; ++m) {
    if (openmp && m == kIndirectLs)
      for (auto k : {kOmpBarrier, kOmpBarrierLongTerm, kOmpIdle, kOmpIdleLongTerm}) out.push_back(kMetricText[k].uniq);
    out.push_back(kMetricText[m].uniq);
  }
  return out;
}

void add_root_cause(const trace::Trace& trace, const std::vector<std::uint32_t>& locations,
                    const std::vector<LocationRecords>& records, const std::vector<PointToPointExtras>& extras,
                    const MessagePairs& pairs, const std::vector<std::vector<RecordRef>>& instances,
                    profile::LocalProfile& p, const OmpObserver* omp, RootCauseStats* stats, const Chunking& chunking,
                    const std::vector<OffsetFunction>* moves) {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  RootCause rc(trace, locations, records, extras, pairs, instances, p.cnode_count(), omp);
  const auto before_read = Clock::now();
  rc.read(p, locations, chunking, moves);
  rc.move_times();
  const auto after_read = Clock::now();
  rc.build(chunking);
  rc.idleness();  // before the pass: which stretches delayed idle threads
  rc.replay();
  rc.add_to(p, stats);
  if (stats) {
    stats->read_seconds = std::chrono::duration<double>(after_read - before_read).count();
    stats->seconds = std::chrono::duration<double>(Clock::now() - start).count();
  }
}

}  // namespace cubescale::analysis
