#include "cubescale/analysis/time_correct.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "cubescale/analysis/clock_condition.hpp"
#include "cubescale/common/format_error.hpp"

namespace cubescale::analysis {

namespace {

void put(std::vector<std::uint8_t>& out, std::uint64_t v) {
  for (; v >= 0x80; v >>= 7) out.push_back(static_cast<std::uint8_t>(v | 0x80));
  out.push_back(static_cast<std::uint8_t>(v));
}

std::uint64_t get(const std::vector<std::uint8_t>& in, std::size_t& pos) {
  std::uint64_t v = 0;
  for (unsigned shift = 0; pos < in.size() && shift < 64; shift += 7) {
    const auto b = in[pos++];
    v |= static_cast<std::uint64_t>(b & 0x7f) << shift;
    if (!(b & 0x80)) break;
  }
  return v;
}

// b - a as a zig-zag coded signed difference (two's complement wrap: decodes for any order).
std::uint64_t zigzag(std::uint64_t b, std::uint64_t a) {
  const auto d = static_cast<std::int64_t>(b - a);
  return (static_cast<std::uint64_t>(d) << 1) ^ static_cast<std::uint64_t>(d >> 63);
}

std::uint64_t unzigzag(std::uint64_t base, std::uint64_t z) { return base + ((z >> 1) ^ (0 - (z & 1))); }

}  // namespace

void OffsetRuns::add(std::uint64_t first, std::uint64_t last, std::uint64_t offset, std::uint32_t count) {
  if (has_open_ && open_.offset == offset) {
    open_.count += count, open_.last = last;
    return;
  }
  if (has_open_) code(open_);
  open_ = {first, last, offset, count}, has_open_ = true;
}

void OffsetRuns::code(const OffsetRun& run) {
  if (coded_ % kGroup == 0) {
    if (checkpoints_.size() == checkpoints_.capacity()) checkpoints_.reserve(checkpoints_.size() + checkpoints_.size() / 8 + 4);
    checkpoints_.push_back({bytes_.size(), last_, offset_});
  }
  // An eighth more at a time: copying the bytes again costs less than holding twice as many.
  if (bytes_.capacity() - bytes_.size() < 40) bytes_.reserve(bytes_.size() + bytes_.size() / 8 + 64);
  put(bytes_, zigzag(run.first, last_));
  put(bytes_, zigzag(run.last, run.first));
  put(bytes_, zigzag(run.offset, offset_));
  put(bytes_, run.count);
  last_ = run.last, offset_ = run.offset;
  ++coded_;
}

OffsetRuns::Reader::Reader(const OffsetRuns& runs, std::size_t group) : runs_(runs) {
  if (group < runs.checkpoints_.size()) {
    const auto& c = runs.checkpoints_[group];
    index_ = group * kGroup, pos_ = c.pos, last_ = c.last, offset_ = c.offset;
  } else {  // the open run's group, begun by it
    index_ = runs.coded_, pos_ = runs.bytes_.size(), last_ = runs.last_, offset_ = runs.offset_;
  }
}

bool OffsetRuns::Reader::next(OffsetRun& run) {
  if (index_ == runs_.coded_) {
    if (!runs_.has_open_) return false;
    run = runs_.open_;
  } else if (index_ > runs_.coded_) {
    return false;
  } else {
    const auto& in = runs_.bytes_;
    run.first = unzigzag(last_, get(in, pos_));
    run.last = unzigzag(run.first, get(in, pos_));
    run.offset = unzigzag(offset_, get(in, pos_));
    run.count = static_cast<std::uint32_t>(get(in, pos_));
  }
  last_ = run.last, offset_ = run.offset;
  ++index_;
  return true;
}

OffsetRun OffsetRuns::at(std::size_t i) const {
  if (i >= size()) throw std::out_of_range("offset run " + std::to_string(i) + " of " + std::to_string(size()));
  Reader r(*this, i / kGroup);
  OffsetRun run;
  for (std::size_t k = i / kGroup * kGroup; k <= i; ++k) r.next(run);
  return run;
}

OffsetFunction OffsetFunction::over_runs(std::uint64_t first, const OffsetRuns& runs) {
  OffsetFunction f;
  f.runs_ = &runs, f.first_ = first;
  return f;
}

std::uint64_t OffsetFunction::between(std::uint64_t t, Point a, Point b) {
  if (b.offset == a.offset) return t + a.offset;
  const unsigned __int128 rise = b.offset - a.offset;  // offsets never shrink
  return t + a.offset + static_cast<std::uint64_t>(rise * (t - a.t) / (b.t - a.t));
}

std::uint64_t OffsetFunction::operator()(std::uint64_t t) const {
  if (runs_) return over_runs_at(t);
  // The first point after t (upper bound), then the one before it.
  std::size_t lo = 0, hi = points_.size();
  while (lo < hi) {
    const auto mid = lo + (hi - lo) / 2;
    if (t < points_[mid].t) hi = mid;
    else lo = mid + 1;
  }
  if (lo == 0) return t;
  if (lo == points_.size()) return t + points_[lo - 1].offset;
  return between(t, points_[lo - 1], points_[lo]);
}

std::uint64_t OffsetFunction::over_runs_at(std::uint64_t t) const {
  // The points: (first, 0), then each run's first and last time. The first point after t lies
  // in the last group whose run before it ended at or before t (group 0: none such).
  if (t < first_) return t;
  std::size_t lo = 1, hi = runs_->groups();
  while (lo < hi) {
    const auto mid = lo + (hi - lo) / 2;
    if (runs_->group_base(mid) <= t) lo = mid + 1;
    else hi = mid;
  }
  const auto group = lo - 1;
  OffsetRuns::Reader r(*runs_, group);
  Point a = group == 0 ? Point{first_, 0} : Point{r.base_last(), r.base_offset()};
  OffsetRun run;
  while (r.next(run)) {
    if (t < run.first) return between(t, a, {run.first, run.offset});
    if (t < run.last) return t + run.offset;  // inside a run
    a = {run.last, run.offset};
  }
  return t + a.offset;
}

namespace {

// Calls f(record, entry) for each record of `list` with an entry in `times` (the k-th
// Beside::Extra record has entry k, PointToPointExtras).
template <typename List, typename F>
void for_extras(List& list, const NearTimes& times, F f) {
  std::size_t k = 0;
  for (auto& r : list)
    if (r.beside() == Beside::Extra && k < times.size()) f(r, k++);
}

}  // namespace

std::uint64_t first_time(const LocationRecords& l, const PointToPointExtras* x, const NonBlockingLocation* nb,
                         const OmpMoves& omp) {
  std::uint64_t t = kNoTime;
  if (omp.location && omp.observer) {
    for (const auto& s : omp.location->syncs) t = std::min(t, s.time);
    for (auto b : omp.location->barriers) t = std::min(t, omp.observer->barriers()[b].enter);
    for (auto k : omp.location->locks) t = std::min(t, omp.observer->locks()[k].enter);
    for (const auto& r : omp.location->parallels) t = std::min(t, r.enter);
  }
  if (nb)
    for (const auto& r : nb->records) t = std::min({t, r.start, r.enter});
  for (const auto& r : l.sends) t = std::min(t, r.enter);
  for (const auto& r : l.receives) t = std::min(t, r.enter);
  for (const auto& r : l.collectives) t = std::min(t, r.enter);
  if (x) {
    for_extras(l.sends, x->completion_enter, [&](const MessageRecord& r, std::size_t k) {
      t = std::min(t, x->completion_enter.at(k, r.enter));  // kNoTime: no completing call
    });
    for_extras(l.receives, x->receive_posted,
               [&](const MessageRecord& r, std::size_t k) { t = std::min(t, x->receive_posted.at(k, r.enter)); });
  }
  return t == kNoTime ? 0 : t;
}

void move_between(LocationRecords& l, PointToPointExtras* x, const OffsetFunction& f, NonBlockingLocation* nb,
                  const OmpMoves& omp) {
  if (nb)
    for (auto& r : nb->records) r.enter = f(r.enter);
  if (omp.location && omp.observer) {
    for (auto b : omp.location->barriers) {
      auto& r = omp.observer->barriers()[b];
      r.enter = f(r.enter), r.leave = f(r.leave);
    }
    for (auto k : omp.location->locks) {
      auto& r = omp.observer->locks()[k];
      r.enter = f(r.enter), r.acquire = f(r.acquire), r.release = f(r.release);
    }
    for (auto& r : omp.location->parallels) r.enter = f(r.enter), r.leave = f(r.leave);
  }
  // The extras are distances from their records' enters: each read from the enter before its
  // move and written from the moved one, in place (an MPI_Isend's completing call's enter, an
  // MPI_Irecv's posting; the completing call's leave moves with its record's).
  std::size_t k = 0;
  for (auto& r : l.sends) {
    const auto enter = r.enter;
    r.enter = f(r.enter), r.leave = f(r.leave);
    if (!x || r.beside() != Beside::Extra || k >= x->completion_enter.size()) continue;
    const auto t = x->completion_enter.at(k, enter);
    if (t != kNoTime) x->completion_enter.reset(k, r.enter, f(t));
    ++k;
  }
  k = 0;
  for (auto& r : l.receives) {
    const auto enter = r.enter;
    r.enter = f(r.enter), r.leave = f(r.leave);
    if (!x || r.beside() != Beside::Extra || k >= x->receive_posted.size()) continue;
    x->receive_posted.reset(k, r.enter, f(x->receive_posted.at(k, enter)));
    ++k;
  }
  for (auto& r : l.collectives) r.time = f(r.time);
}

void move_sync(LocationRecords& l, const Sync& e, std::uint64_t v, NonBlockingLocation* nb, const OmpMoves& omp,
               const std::vector<std::uint32_t>& barrier_of) {
  switch (e.kind) {
    case SyncKind::Send: l.sends[e.index].time = v; break;
    case SyncKind::Receive: l.receives[e.index].time = v; break;
    case SyncKind::CollectiveEnter: l.collectives[e.index].enter = v; break;
    case SyncKind::CollectiveLeave: l.collectives[e.index].leave = v; break;
    case SyncKind::NonBlockingStart: nb->records[e.index].start = v; break;
    case SyncKind::NonBlockingLeave: nb->records[e.index].leave = v; break;
    case SyncKind::OmpProducer:
    case SyncKind::OmpConsumer: {
      auto& sync = omp.location->syncs[e.index];
      sync.time = v;  // the clock check after the correction reads them
      if (!omp.observer || barrier_of[e.index] == ~0u) break;
      auto& r = omp.observer->barriers()[barrier_of[e.index]];
      (sync.role == OmpSyncRole::BarrierEnter ? r.enter : r.leave) = v;
      break;
    }
  }
}

void keep_calls_around(LocationRecords& l, PointToPointExtras* x, NonBlockingLocation* nb, const OmpMoves& omp) {
  if (omp.location && omp.observer)
    for (auto b : omp.location->barriers) {
      auto& r = omp.observer->barriers()[b];
      r.enter = std::min(r.enter, r.leave);
    }
  // The completion call holds its enter before its leave.
  if (nb)
    for (auto& r : nb->records) r.enter = std::min(r.enter, r.leave);
  // An MPI call holds its events: keep enter <= event <= leave after the moves (an MPI_Isend's
  // record holds the leave of the later call completing it, moved as that call's). An extra
  // whose record's enter moves here is written from the new enter.
  auto enter_at_most = [](MessageRecord& r, NearTimes* times, std::size_t k) {
    const auto enter = std::min(r.enter, r.time);
    if (times && enter != r.enter) times->reset(k, enter, times->at(k, r.enter));
    r.enter = enter;
  };
  std::size_t k = 0;
  for (auto& r : l.sends) {
    const bool extra = x && r.beside() == Beside::Extra && k < x->completion_enter.size();
    enter_at_most(r, extra ? &x->completion_enter : nullptr, k);
    k += extra;
    if (r.beside() != Beside::Extra) r.leave = std::max(r.leave, r.time);
  }
  k = 0;
  for (auto& r : l.receives) {
    const bool extra = x && r.beside() == Beside::Extra && k < x->receive_posted.size();
    enter_at_most(r, extra ? &x->receive_posted : nullptr, k);
    k += extra;
    r.leave = std::max(r.leave, r.time);
  }
  for (auto& r : l.collectives) r.time = std::clamp(r.time, r.enter, std::max(r.enter, r.leave));
}

constexpr std::size_t kNoIndex = ~std::size_t(0);

std::vector<Sync> sync_events(const LocationRecords& l, const NonBlockingLocation* nb, const OmpSyncLocation* omp) {
  std::vector<Sync> out;
  for (std::uint32_t i = 0; i < l.sends.size(); ++i) out.push_back({l.sends[i].time, 2 * l.sends[i].position, i, SyncKind::Send});
  for (std::uint32_t i = 0; i < l.receives.size(); ++i)
    out.push_back({l.receives[i].time, 2 * l.receives[i].position, i, SyncKind::Receive});
  for (std::uint32_t i = 0; i < l.collectives.size(); ++i) {
    const auto& c = l.collectives[i];
    // The call's enter comes just before its end record; its leave at the end record.
    out.push_back({c.enter, 2 * c.position - 1, i, SyncKind::CollectiveEnter});
    out.push_back({c.leave, 2 * c.position, i, SyncKind::CollectiveLeave});
  }
  if (nb)
    for (std::uint32_t i = 0; i < nb->records.size(); ++i) {
      const auto& r = nb->records[i];
      // The start (the MPI_I<op> call's enter) just before its request event; the completion
      // call's leave after its completion event.
      out.push_back({r.start, 2 * nb->start_positions[i] - 1, i, SyncKind::NonBlockingStart});
      out.push_back({r.leave, 2 * r.position + 1, i, SyncKind::NonBlockingLeave});
    }
  if (omp)
    for (std::uint32_t i = 0; i < omp->syncs.size(); ++i) {
      const auto& o = omp->syncs[i];
      out.push_back({o.time, 2 * o.position, i, o.producer() ? SyncKind::OmpProducer : SyncKind::OmpConsumer});
    }
  std::sort(out.begin(), out.end(), [](const Sync& a, const Sync& b) {
    return a.time != b.time ? a.time < b.time : a.order < b.order;
  });
  return out;
}

SyncWalk::SyncWalk(const LocationRecords& l, const NonBlockingLocation* nb, const OmpSyncLocation* omp)
    : l_(&l), nb_(nb && !nb->records.empty() ? nb : nullptr), omp_(omp && !omp->syncs.empty() ? omp : nullptr) {
  auto before = [](const Sync& a, const Sync& b) { return a.time != b.time ? a.time < b.time : a.order < b.order; };
  for (std::uint32_t stream = 0; stream < kStreams; ++stream)
    for (std::uint32_t k = 1; k < size(stream); ++k)
      if (before(event(stream, k), event(stream, k - 1))) {  // out of time order: held, as sorted
        held_ = sync_events(l, nb_, omp_);
        held_mode_ = true;
        if (!held_.empty()) head_ = held_[0];
        return;
      }
  find_head();
}

std::uint32_t SyncWalk::size(std::uint32_t stream) const {
  switch (stream) {
    case 0: return static_cast<std::uint32_t>(l_->sends.size());
    case 1: return static_cast<std::uint32_t>(l_->receives.size());
    case 2:
    case 3: return static_cast<std::uint32_t>(l_->collectives.size());
    case 4:
    case 5: return nb_ ? static_cast<std::uint32_t>(nb_->records.size()) : 0;
    default: return omp_ ? static_cast<std::uint32_t>(omp_->syncs.size()) : 0;
  }
}

Sync SyncWalk::event(std::uint32_t stream, std::uint32_t k) const {
  // As sync_events makes them.
  switch (stream) {
    case 0: return {l_->sends[k].time, 2 * l_->sends[k].position, k, SyncKind::Send};
    case 1: return {l_->receives[k].time, 2 * l_->receives[k].position, k, SyncKind::Receive};
    case 2: return {l_->collectives[k].enter, 2 * l_->collectives[k].position - 1, k, SyncKind::CollectiveEnter};
    case 3: return {l_->collectives[k].leave, 2 * l_->collectives[k].position, k, SyncKind::CollectiveLeave};
    case 4: return {nb_->records[k].start, 2 * nb_->start_positions[k] - 1, k, SyncKind::NonBlockingStart};
    case 5: return {nb_->records[k].leave, 2 * nb_->records[k].position + 1, k, SyncKind::NonBlockingLeave};
    default: {
      const auto& o = omp_->syncs[k];
      return {o.time, 2 * o.position, k, o.producer() ? SyncKind::OmpProducer : SyncKind::OmpConsumer};
    }
  }
}

void SyncWalk::find_head() {
  next_ = kStreams;
  for (std::uint32_t stream = 0; stream < kStreams; ++stream) {
    if (at_[stream] == size(stream)) continue;
    const auto e = event(stream, at_[stream]);
    if (next_ == kStreams || e.time < head_.time || (e.time == head_.time && e.order < head_.order))
      head_ = e, next_ = stream;
  }
}

SyncWalk::Position SyncWalk::where() const {
  Position p;
  std::copy(std::begin(at_), std::end(at_), p.at);
  p.next = next_, p.head = head_;
  return p;
}

void SyncWalk::go(const Position& p) {
  std::copy(std::begin(p.at), std::end(p.at), at_);
  next_ = p.next, head_ = p.head;
}

void SyncWalk::rewind() {
  std::fill(std::begin(at_), std::end(at_), 0u);
  if (!held_mode_) return find_head();
  if (!held_.empty()) head_ = held_[0];
}

void SyncWalk::advance() {
  if (held_mode_) {
    if (++at_[0] < held_.size()) head_ = held_[at_[0]];
    return;
  }
  ++at_[next_];
  find_head();
}

void amortize(LocationRecords& l, PointToPointExtras* x, const std::vector<Sync>& s,
              std::vector<std::uint64_t>& c, NonBlockingLocation* nb, OmpMoves omp, OffsetFunction* keep) {
  // The start of a ramp: the last producer or jump (index), or the location's first time.
  std::size_t start = kNoIndex;
  const auto first = first_time(l, x, nb, omp);
  for (std::size_t k = 0; k < s.size(); ++k) {
    const auto before = (k == 0 ? 0 : c[k - 1] - s[k - 1].time);  // offset carried in
    const auto jump = c[k] - s[k].time - before;
    if (jump > 0) {
      const auto t0 = start == kNoIndex ? first : s[start].time;
      for (std::size_t m = start == kNoIndex ? 0 : start + 1; m < k; ++m)
        if (s[k].time > t0 && s[m].time > t0)
          c[m] += static_cast<std::uint64_t>(static_cast<unsigned __int128>(jump) * (s[m].time - t0) / (s[k].time - t0));
      start = k;
    } else if (s[k].producer()) {
      start = k;
    }
  }
  OffsetFunction f;
  f.reserve(s.size() + 1);
  f.add(first, 0);
  for (std::size_t k = 0; k < s.size(); ++k) f.add(s[k].time, c[k] - s[k].time);
  move_between(l, x, f, nb, omp);
  const auto barrier_of = omp.location ? sync_barriers(*omp.location) : std::vector<std::uint32_t>();
  for (std::size_t k = 0; k < s.size(); ++k) move_sync(l, s[k], c[k], nb, omp, barrier_of);
  keep_calls_around(l, x, nb, omp);
  if (keep) *keep = std::move(f);
}

namespace {

// Per records index the element of `all` (lists per location) for the same location, if not empty.
template <typename List>
std::vector<List*> align(const std::vector<LocationRecords>& records, std::vector<List>& all, bool (*empty)(const List&)) {
  std::vector<List*> out(records.size(), nullptr);
  std::vector<std::size_t> index_of;
  for (std::size_t l = 0; l < records.size(); ++l) {
    if (records[l].location >= index_of.size()) index_of.resize(records[l].location + 1, kNoIndex);
    index_of[records[l].location] = l;
  }
  for (auto& x : all)
    if (x.location < index_of.size() && index_of[x.location] != kNoIndex && !empty(x)) out[index_of[x.location]] = &x;
  return out;
}

}  // namespace

std::vector<NonBlockingLocation*> align_nonblocking(const std::vector<LocationRecords>& records,
                                                    std::vector<NonBlockingLocation>& all) {
  return align<NonBlockingLocation>(records, all, [](const NonBlockingLocation& n) { return n.records.empty(); });
}

std::vector<OmpSyncLocation*> align_omp(const std::vector<LocationRecords>& records, OmpObserver* omp) {
  if (!omp) return std::vector<OmpSyncLocation*>(records.size(), nullptr);
  return align<OmpSyncLocation>(records, omp->syncs(), [](const OmpSyncLocation& o) { return o.syncs.empty(); });
}

void count_omp_violations(const OmpObserver& omp, const std::vector<std::uint32_t>& column, std::uint64_t latency,
                          ClockViolations& v) {
  std::vector<std::uint64_t> latest(omp.sync_groups(), kNoTime);
  for (const auto& l : omp.syncs()) {
    v.checked = v.checked || !l.syncs.empty();
    for (const auto& s : l.syncs)
      if (s.producer()) latest[s.group] = latest[s.group] == kNoTime ? s.time : std::max(latest[s.group], s.time);
  }
  for (const auto& l : omp.syncs())
    for (const auto& s : l.syncs) {
      if (s.producer() || latest[s.group] == kNoTime || s.time >= latest[s.group] + latency) continue;
      ++v.omp;
      if (s.cnode < v.cnodes && l.location < column.size() && column[l.location] != kNone)
        ++v.counts[std::size_t(s.cnode) * v.locations + column[l.location]];
    }
}

void uncorrectable(const trace::Trace& trace, const LocationRecords& rec, const Sync& e, const NonBlockingLocation* nb,
                   const OmpSyncLocation* omp) {
  const bool receive = e.kind == SyncKind::Receive;
  const bool nonblocking = e.kind == SyncKind::NonBlockingLeave && nb;
  const bool openmp = e.kind == SyncKind::OmpConsumer && omp;
  const auto position = receive       ? rec.receives[e.index].position
                        : nonblocking ? nb->records[e.index].position
                        : openmp      ? omp->syncs[e.index].position
                                      : rec.collectives[e.index].position;
  const auto& defs = trace.definitions();
  const double seconds = static_cast<double>(e.time - std::min(e.time, defs.clock.offset)) /
                         static_cast<double>(defs.clock.resolution);
  throw FormatError(trace.path(), trace.event_member(rec.location), position,
                    std::string(receive       ? "MPI receive"
                                : nonblocking ? "MPI non-blocking collective's completion"
                                : openmp      ? "OpenMP event"
                                              : "MPI collective") +
                        " at " + std::to_string(seconds) +
                        " s waits, through messages and collectives, on an event that waits on it: the clocks "
                        "cannot be corrected");
}

namespace {

class Replay {
 public:
  Replay(const trace::Trace& trace, std::vector<LocationRecords>& records, const MessagePairs& pairs,
         const std::vector<std::vector<RecordRef>>& instances, std::uint64_t latency, std::uint64_t thread_latency,
         const std::vector<NonBlockingLocation*>& nb, const std::vector<NonBlockingInstance>& nb_instances,
         OmpObserver* omp)
      : trace_(trace), records_(records), pairs_(pairs), instances_(instances), latency_(latency),
        thread_latency_(thread_latency), nb_(nb),
        nb_instances_(nb_instances), omp_(omp), omp_of_(align_omp(records, omp)) {
    const auto n = records.size();
    syncs_.resize(n);
    corrected_.resize(n);
    next_.assign(n, 0);
    offset_.assign(n, 0);
    send_done_.resize(n);
    enter_done_.resize(n);
    member_of_.resize(n);
    nb_.resize(n, nullptr);
    start_done_.resize(n);
    nb_member_of_.resize(n);
    for (std::size_t l = 0; l < n; ++l) {
      syncs_[l] = sync_events(records[l], nb_[l], omp_of_[l]);
      const auto count = nb_[l] ? nb_[l]->records.size() : 0;
      start_done_[l].assign(count, kNoTime);
      nb_member_of_[l].assign(count, {kNone, kNone});
      corrected_[l].assign(syncs_[l].size(), 0);
      send_done_[l].assign(records[l].sends.size(), kNoTime);
      enter_done_[l].assign(records[l].collectives.size(), kNoTime);
      member_of_[l].assign(records[l].collectives.size(), {kNone, kNone});
    }
    for (std::uint32_t k = 0; k < instances.size(); ++k)
      for (std::uint32_t m = 0; m < instances[k].size(); ++m) member_of_[instances[k][m].list][instances[k][m].index] = {k, m};
    references_.resize(instances.size());
    for (std::uint32_t k = 0; k < nb_instances.size(); ++k)
      for (std::uint32_t m = 0; m < nb_instances[k].members.size(); ++m) {
        const auto& x = nb_instances[k].members[m];
        nb_member_of_[x.list][x.index] = {k, m};
      }
    nb_references_.resize(nb_instances.size());
    // OpenMP groups: their producers, done once every one is corrected.
    omp_done_.resize(n);
    if (omp) {
      group_producers_.resize(omp->sync_groups());
      group_reference_.assign(omp->sync_groups(), kNoTime);
      group_known_.assign(omp->sync_groups(), 0);
    }
    for (std::uint32_t l = 0; l < n; ++l) {
      if (!omp_of_[l]) continue;
      const auto& syncs = omp_of_[l]->syncs;
      omp_done_[l].assign(syncs.size(), kNoTime);
      for (std::uint32_t i = 0; i < syncs.size(); ++i)
        if (syncs[i].producer()) group_producers_[syncs[i].group].push_back({l, i});
    }
  }

  // Forward amortization: each location goes as far as its inputs allow; a blocked one waits
  // for the location it needs and runs again once that one progressed (work: events + wakes).
  void forward(TimeCorrectionStats& stats) {
    const auto n = syncs_.size();
    std::vector<std::size_t> ready(n);
    for (std::size_t l = 0; l < n; ++l) ready[l] = n - 1 - l;
    std::vector<char> queued(n, 1);
    std::vector<std::vector<std::size_t>> waiters(n);
    while (!ready.empty()) {
      const auto l = ready.back();
      ready.pop_back();
      queued[l] = 0;
      bool progressed = false;
      while (next_[l] < syncs_[l].size()) {
        const auto blocked_on = step(l, stats);
        if (blocked_on != kNoIndex) {
          waiters[blocked_on].push_back(l);
          break;
        }
        progressed = true;
      }
      if (!progressed) continue;
      for (auto w : waiters[l])
        if (!queued[w]) queued[w] = 1, ready.push_back(w);
      waiters[l].clear();
    }
    for (std::size_t l = 0; l < n; ++l)
      if (next_[l] < syncs_[l].size()) cycle();
  }

  // Backward amortization and the new times of everything recorded.
  void apply(std::vector<PointToPointExtras>& extras, std::vector<OffsetFunction>* moves) {
    if (moves) moves->assign(syncs_.size(), {});
    for (std::size_t l = 0; l < syncs_.size(); ++l)
      amortize(records_[l], l < extras.size() ? &extras[l] : nullptr, syncs_[l], corrected_[l], nb_[l],
               {omp_of_[l], omp_}, moves ? &(*moves)[l] : nullptr);
  }

 private:
  static constexpr std::size_t kNoIndex = ~std::size_t(0);

  // One event of location l, if what it depends on is known (kNoIndex); else the location it
  // waits for.
  std::size_t step(std::size_t l, TimeCorrectionStats& stats) {
    const auto& e = syncs_[l][next_[l]];
    const auto base = e.time + offset_[l];
    std::uint64_t need = 0;
    if (e.kind == SyncKind::Receive) {
      const auto s = pairs_.send_of_receive[l][e.index];
      if (s.list != kNone) {
        if (send_done_[s.list][s.index] == kNoTime) return s.list;
        need = send_done_[s.list][s.index] + latency_;
      }
    } else if (e.kind == SyncKind::CollectiveLeave) {
      const auto [k, m] = member_of_[l][e.index];
      if (k != kNone) {
        if (references_[k].empty()) {
          std::vector<std::uint64_t> enters;
          for (const auto& r : instances_[k]) {
            if (enter_done_[r.list][r.index] == kNoTime) return r.list;
            enters.push_back(enter_done_[r.list][r.index]);
          }
          references_[k] = collective_references(records_, instances_[k], &enters);
        }
        if (references_[k][m] != kNoTime) need = references_[k][m] + latency_;
      }
    } else if (e.kind == SyncKind::NonBlockingLeave) {
      const auto [k, m] = nb_member_of_[l][e.index];
      if (k != kNone) {
        if (nb_references_[k].empty()) {
          const auto& inst = nb_instances_[k];
          std::vector<std::uint32_t> locations;
          std::vector<std::uint64_t> starts;
          for (const auto& r : inst.members) {
            if (start_done_[r.list][r.index] == kNoTime) return r.list;
            locations.push_back(nb_[r.list]->records[r.index].location);
            starts.push_back(start_done_[r.list][r.index]);
          }
          nb_references_[k] = nonblocking_references(inst.op, inst.root, locations, starts);
        }
        if (nb_references_[k][m] != kNoTime) need = nb_references_[k][m] + latency_;
      }
    } else if (e.kind == SyncKind::OmpConsumer) {
      const auto g = omp_of_[l]->syncs[e.index].group;
      if (!group_known_[g]) {
        for (const auto& p : group_producers_[g]) {
          const auto v = omp_done_[p.list][p.index];
          if (v == kNoTime) return p.list;
          group_reference_[g] = group_reference_[g] == kNoTime ? v : std::max(group_reference_[g], v);
        }
        group_known_[g] = 1;
      }
      if (group_reference_[g] != kNoTime) need = group_reference_[g] + thread_latency_;
    }
    const auto value = std::max(base, need);
    if (value > base) {
      ++stats.jumps;
      stats.largest = std::max(stats.largest, value - base);
      offset_[l] += value - base;
    }
    corrected_[l][next_[l]] = value;
    if (e.kind == SyncKind::Send) send_done_[l][e.index] = value;
    if (e.kind == SyncKind::CollectiveEnter) enter_done_[l][e.index] = value;
    if (e.kind == SyncKind::NonBlockingStart) start_done_[l][e.index] = value;
    if (e.kind == SyncKind::OmpProducer) omp_done_[l][e.index] = value;
    ++next_[l];
    return kNoIndex;
  }

  [[noreturn]] void cycle() const {
    for (std::size_t l = 0; l < syncs_.size(); ++l)
      if (next_[l] < syncs_[l].size()) uncorrectable(trace_, records_[l], syncs_[l][next_[l]], nb_[l], omp_of_[l]);
    throw FormatError(trace_.path(), "", 0, "clock correction made no progress");
  }

  const trace::Trace& trace_;
  std::vector<LocationRecords>& records_;
  const MessagePairs& pairs_;
  const std::vector<std::vector<RecordRef>>& instances_;
  const std::uint64_t latency_, thread_latency_;  // ticks: messages and collectives; OpenMP
  std::vector<std::vector<Sync>> syncs_;
  std::vector<std::vector<std::uint64_t>> corrected_;
  std::vector<std::size_t> next_;
  std::vector<std::uint64_t> offset_;
  std::vector<std::vector<std::uint64_t>> send_done_, enter_done_;  // corrected producer times
  std::vector<std::vector<std::pair<std::uint32_t, std::uint32_t>>> member_of_;  // (instance, member)
  std::vector<std::vector<std::uint64_t>> references_;                           // per instance, once known
  std::vector<NonBlockingLocation*> nb_;                                          // per location (null: none)
  const std::vector<NonBlockingInstance>& nb_instances_;
  std::vector<std::vector<std::uint64_t>> start_done_;                            // corrected starts
  std::vector<std::vector<std::pair<std::uint32_t, std::uint32_t>>> nb_member_of_;
  std::vector<std::vector<std::uint64_t>> nb_references_;
  OmpObserver* omp_;
  std::vector<OmpSyncLocation*> omp_of_;                                          // per location (null: none)
  std::vector<std::vector<std::uint64_t>> omp_done_;                              // corrected producers
  std::vector<std::vector<RecordRef>> group_producers_;                           // (location, sync)
  std::vector<std::uint64_t> group_reference_;                                    // the latest producer
  std::vector<char> group_known_;
};

}  // namespace

TimeCorrectionStats correct_times(const trace::Trace& trace, std::vector<LocationRecords>& records,
                                  std::vector<PointToPointExtras>& extras, const MessagePairs& pairs,
                                  const std::vector<std::vector<RecordRef>>& instances, std::uint64_t latency,
                                  std::uint64_t thread_latency, const std::vector<NonBlockingLocation*>& nb,
                                  const std::vector<NonBlockingInstance>& nb_instances, OmpObserver* omp,
                                  std::vector<OffsetFunction>* moves) {
  TimeCorrectionStats stats;
  Replay replay(trace, records, pairs, instances, latency, thread_latency, nb, nb_instances, omp);
  replay.forward(stats);
  replay.apply(extras, moves);
  return stats;
}

ClockCheck clock_checks(const trace::Trace& trace, const std::vector<std::uint32_t>& locations,
                        std::vector<LocationRecords>& records, std::vector<PointToPointExtras>& extras,
                        const MessagePairs& pairs, const std::vector<std::vector<RecordRef>>& instances,
                        std::size_t cnodes, const AnalysisOptions& options, AnalysisStats* stats,
                        std::vector<NonBlockingLocation>* nonblocking, OmpObserver* omp) {
  ClockCheck out;
  out.column.assign(trace.definitions().locations.size(), kNone);
  for (std::size_t c = 0; c < locations.size(); ++c) out.column[locations[c]] = static_cast<std::uint32_t>(c);
  const std::uint64_t latency = latency_ticks(options.min_latency, trace.definitions().clock.resolution);
  const std::uint64_t thread_latency =
      latency_ticks(options.min_thread_latency.value_or(options.min_latency), trace.definitions().clock.resolution);
  std::vector<NonBlockingLocation*> nb;
  if (nonblocking) nb = align_nonblocking(records, *nonblocking);
  const auto nb_instances = nonblocking_instances(trace.definitions(), nb);
  auto count = [&] {
    auto v = count_clock_violations(records, pairs, instances, out.column, cnodes, locations.size(), latency,
                                    &out.decisions, {options.threads, options.chunk_records});  // the last count's: of the records as they stay
    count_nonblocking_violations(nb, nb_instances, out.column, latency, v);
    if (omp) count_omp_violations(*omp, out.column, thread_latency, v);
    return v;
  };
  out.violations = count();
  if (stats) {
    stats->p2p_violations = out.violations.point_to_point;
    stats->collective_violations = out.violations.collective;
    stats->omp_violations = out.violations.omp;
  }
  if (!options.time_correct) return out;
  const auto corrected = correct_times(trace, records, extras, pairs, instances, latency, thread_latency, nb,
                                       nb_instances, omp, options.root_cause ? &out.moves : nullptr);
  if (stats) stats->corrected_jumps = corrected.jumps;
  out.violations = count();
  return out;
}

}  // namespace cubescale::analysis
