#include "cubescale/analysis/omp_patterns.hpp"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <map>
#include <string>
#include <tuple>

#include <otf2/OTF2_GeneralDefinitions.h>

#include "cubescale/analysis/waitstates.hpp"
#include "cubescale/common/append_whole.hpp"
#include "cubescale/cube/dtype.hpp"

namespace cubescale::analysis {

namespace {

std::string lower(std::string s) {
  for (auto& ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return s;
}
bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }
bool ends_with(const std::string& s, const char* suffix) {
  const auto n = std::strlen(suffix);
  return s.size() >= n && s.compare(s.size() - n, n, suffix) == 0;
}
bool lock_api(const std::string& name) { return starts_with(name, "omp_") && ends_with(name, "_lock"); }
// A held lock's key: its paradigm (POSIX threads or OpenMP), id and acquisition order.
std::uint64_t held_key(const trace::Event& e, bool pthread) {
  return (std::uint64_t(pthread) << 63) | (std::uint64_t(static_cast<std::uint32_t>(e.request)) << 32) | e.tag;
}
OmpPattern lock_pattern(LockKind kind) {
  switch (kind) {
    case LockKind::Critical: return OmpPattern::LockContentionCritical;
    case LockKind::Api: return OmpPattern::LockContentionApi;
    case LockKind::PthreadMutex: return OmpPattern::PthreadMutexContention;
    case LockKind::PthreadCondition: return OmpPattern::PthreadConditionContention;
  }
  return OmpPattern::LockContentionCritical;
}
// POSIX threads regions as scout.spec classifies them (lower-case names, paradigm pthread):
// thread management, mutex and condition API calls.
bool pthread_management(const std::string& name) {
  return name == "pthread_cancel" || name == "pthread_create" || name == "pthread_detach" || name == "pthread_exit" ||
         name == "pthread_join";
}
bool pthread_mutex(const std::string& name) {
  return name == "pthread_mutex_destroy" || name == "pthread_mutex_init" || name == "pthread_mutex_lock" ||
         name == "pthread_mutex_trylock" || name == "pthread_mutex_unlock";
}
bool pthread_condition(const std::string& name) {
  return name == "pthread_cond_broadcast" || name == "pthread_cond_destroy" || name == "pthread_cond_init" ||
         name == "pthread_cond_signal" || name == "pthread_cond_timedwait" || name == "pthread_cond_wait";
}
// `!$omp parallel @file:line` (OPARI2's name); what precedes " @" decides, as in pearl's
// classification, so `!$omp parallel for` or OMPT's `!$omp parallel@0x...` are not.
bool parallel_region(const std::string& name) {
  const auto at = name.find('@');
  return (at == std::string::npos ? name : name.substr(0, at == 0 ? 0 : at - 1)) == "!$omp parallel";
}

}  // namespace

bool omp_barrier_region(const std::string& name) {
  const auto n = lower(name);
  return starts_with(n, "!$omp implicit barrier") || starts_with(n, "!$omp barrier");
}
bool omp_parallel_region(const std::string& name) { return parallel_region(lower(name)); }

const char* omp_pattern_name(OmpPattern p) {
  switch (p) {
    case OmpPattern::EbarrierWait: return "omp_ebarrier_wait";
    case OmpPattern::IbarrierWait: return "omp_ibarrier_wait";
    case OmpPattern::LockContentionCritical: return "omp_lock_contention_critical";
    case OmpPattern::LockContentionApi: return "omp_lock_contention_api";
    case OmpPattern::Management: return "omp_management";
    case OmpPattern::Fork: return "omp_fork";
    case OmpPattern::PthreadMutexContention: return "pthread_lock_contention_mutex_lock";
    case OmpPattern::PthreadConditionContention: return "pthread_lock_contention_conditional";
    case OmpPattern::Count: break;
  }
  return "?";
}

// --- extraction ------------------------------------------------------------------------------

OmpObserver::OmpObserver(const trace::Trace& trace) : defs_(trace.definitions()) {
  kind_.assign(defs_.regions.size(), Kind::Other);
  for (std::size_t r = 0; r < defs_.regions.size(); ++r) {
    const auto name = lower(defs_.regions[r].name);
    // By name, as scalasca.spec's CubePL classifies OpenMP regions (Score-P's names).
    if (starts_with(name, "!$omp implicit barrier")) kind_[r] = Kind::Ibarrier;
    else if (starts_with(name, "!$omp barrier")) kind_[r] = Kind::Ebarrier;
    else if (starts_with(name, "!$omp critical")) kind_[r] = Kind::Critical;
    else if (lock_api(name)) kind_[r] = Kind::LockApi;
    else if (parallel_region(name)) kind_[r] = Kind::Parallel;
    // Where scout's lock tracking finds POSIX threads contention (pearl's classification: file
    // PTHREAD, paradigm pthread): acquisitions in a mutex lock or a condition wait.
    else if (defs_.regions[r].paradigm == "pthread" && defs_.regions[r].file == "PTHREAD") {
      if (name == "pthread_mutex_lock" || name == "pthread_mutex_trylock") kind_[r] = Kind::PthreadMutex;
      else if (name == "pthread_cond_wait" || name == "pthread_cond_timedwait") kind_[r] = Kind::PthreadCondition;
    }
    any_ = any_ || kind_[r] != Kind::Other;
  }
}

std::optional<LockKind> OmpObserver::lock_region(Kind kind) {
  switch (kind) {
    case Kind::Critical: return LockKind::Critical;
    case Kind::LockApi: return LockKind::Api;
    case Kind::PthreadMutex: return LockKind::PthreadMutex;
    case Kind::PthreadCondition: return LockKind::PthreadCondition;
    default: return std::nullopt;
  }
}

void OmpObserver::begin_location(std::uint32_t location) {
  location_ = location;
  process_ = location < defs_.locations.size() ? defs_.locations[location].group : 0;
  stack_.clear();
  current_task_ = 0;
  teams_.clear();
  instances_.clear();
  held_.clear();
  open_visits_.clear();
  unvisited_team_ = ~0u;
  teamless_ = ~std::size_t(0);
  tail_.clear();
  syncs_.push_back({location, {}, {}, {}, {}});
  fork_ = {};
  ended_ = false;
  unplaced_ = ~std::size_t(0);
}

void OmpObserver::add_sync(std::uint64_t time, std::uint64_t position, std::uint32_t cnode, std::uint32_t team,
                           std::uint32_t instance, std::uint32_t slot, OmpSyncRole role) {
  OmpSync sync;
  sync.time = time;
  sync.position = position;
  sync.role = role;
  sync.group = group(process_, team, instance, slot);
  sync.cnode = cnode;
  append_whole(syncs_.back().syncs, sync);
}

std::uint64_t barrier_wait(const OmpObserver& omp, const BarrierRecord& b, std::uint64_t until) {
  auto wait = until > b.enter ? until - b.enter : 0;
  // Less the tasks it ran while it waited (scout's task correction; their time is their call
  // paths', below the barrier and below TASKS).
  for (std::uint32_t r = b.first_run; r < b.first_run + b.runs && r < omp.task_runs().size(); ++r) {
    const auto& run = omp.task_runs()[r];
    const auto from = std::max(run.begin, b.enter), to = std::min(run.end, until);
    if (to > from) wait -= std::min(wait, to - from);
  }
  return wait;
}

std::vector<std::uint32_t> sync_barriers(const OmpSyncLocation& l) {
  std::vector<std::uint32_t> out(l.syncs.size(), ~0u);
  std::size_t enters = 0, leaves = 0;
  for (std::size_t i = 0; i < l.syncs.size(); ++i) {
    const auto role = l.syncs[i].role;
    if (role == OmpSyncRole::BarrierEnter && enters < l.barriers.size()) out[i] = l.barriers[enters++];
    if (role == OmpSyncRole::BarrierLeave && leaves < l.barriers.size()) out[i] = l.barriers[leaves++];
  }
  return out;
}

// Inside a worker's visit of a parallel region: the time since the last event is the innermost
// open call path's (as the profile counts it), kept per call path until its next barrier enter.
void OmpObserver::tail_time(std::uint64_t time) {
  if (!open_visits_.empty() && open_visits_.back().worker && !stack_.empty() && time > tail_last_) {
    const auto cnode = stack_.back().cnode;
    auto it = std::find_if(tail_.begin(), tail_.end(), [&](const auto& t) { return t.first == cnode; });
    if (it == tail_.end()) tail_.push_back({cnode, time - tail_last_});
    else it->second += time - tail_last_;
  }
  tail_last_ = time;
}

// One entry per location and call path: only their sums are read (omp_local_time), and a
// worker's visits repeat few call paths (an entry per visit was 6.5 bytes per synchronization
// event on jacobi-hybrid). This location's entries are the last ones.
void OmpObserver::add_tail(std::uint32_t cnode, std::uint64_t ticks) {
  for (auto it = tails_.rbegin(); it != tails_.rend() && it->location == location_; ++it)
    if (it->cnode == cnode) {
      it->ticks += ticks;
      return;
    }
  tails_.push_back({location_, cnode, ticks});
}

void OmpObserver::event(const trace::Event& e, std::uint32_t cnode) {
  if (!any_) return;  // nothing to look at: MPI-only traces pay one test per event
  tail_time(e.time);
  switch (e.type) {
    case trace::EventType::Enter:
      stack_.push_back({e.time, e.position, e.region, cnode, false, static_cast<std::uint32_t>(task_runs_.size())});
      if (e.region < kind_.size() && kind_[e.region] == Kind::Parallel) enter_parallel(e.time, cnode);
      if (e.region < kind_.size() && (kind_[e.region] == Kind::Ibarrier || kind_[e.region] == Kind::Ebarrier))
        tail_.clear();  // scout keeps a worker's time up to its barrier's enter
      // A worker's team begin comes before any region: it counts on the call path its events
      // then hang from (the parallel region's), the next one entered.
      if (unplaced_ != ~std::size_t(0)) syncs_.back().syncs[unplaced_].cnode = cnode, unplaced_ = ~std::size_t(0);
      break;
    case trace::EventType::Leave: {
      if (stack_.empty()) break;
      const auto f = stack_.back();
      stack_.pop_back();
      const auto kind = f.region < kind_.size() ? kind_[f.region] : Kind::Other;
      if (f.parallel && !open_visits_.empty()) {
        auto& visit = open_visits_.back();
        syncs_.back().parallels[visit.record].leave = e.time;
        if (visit.record == teamless_) teamless_ = ~std::size_t(0);  // left without a team
        if (visit.worker)
          for (const auto& [c, ticks] : tail_) add_tail(c, ticks);
        tail_ = std::move(visit.outer_tail);  // an enclosing visit's, which goes on
        open_visits_.pop_back();
      }
      if ((kind == Kind::Ibarrier || kind == Kind::Ebarrier) && !teams_.empty()) {
        auto& t = teams_.back();
        const auto b = static_cast<std::uint32_t>(barriers_.size());
        add_sync(f.enter, f.position, f.cnode, t.team, t.instance, 2 + t.barriers, OmpSyncRole::BarrierEnter);
        add_sync(e.time, e.position, f.cnode, t.team, t.instance, 2 + t.barriers, OmpSyncRole::BarrierLeave);
        syncs_.back().barriers.push_back(b);
        barriers_.push_back({f.enter, e.time, location_, process_, f.cnode, t.team, t.instance, t.barriers++,
                             kind == Kind::Ebarrier, f.runs, static_cast<std::uint32_t>(task_runs_.size()) - f.runs});
      }
      break;
    }
    case trace::EventType::ThreadFork:
    case trace::EventType::OmpFork:
      fork_ = {e.time, e.position, cnode, true};
      break;
    case trace::EventType::ThreadTaskSwitch:
    case trace::EventType::ThreadTaskComplete: {
      // A run of explicit tasks lasts from leaving the implicit task to coming back to it.
      const auto next = trace::task_after(e, current_task_);
      if (current_task_ == 0 && next != 0) run_begin_ = e.time;
      if (current_task_ != 0 && next == 0 && e.time > run_begin_) task_runs_.push_back({run_begin_, e.time});
      current_task_ = next;
      break;
    }
    case trace::EventType::ThreadTeamBegin: {
      teams_.push_back({e.communicator, instances_[e.communicator]++, 0, fork_.valid});
      const auto& t = teams_.back();
      if (fork_.valid) add_sync(fork_.time, fork_.position, fork_.cnode, t.team, t.instance, 0, OmpSyncRole::Fork);
      fork_.valid = false;
      add_sync(e.time, e.position, cnode, t.team, t.instance, 0, OmpSyncRole::TeamBegin);
      if (cnode == trace::kNone) unplaced_ = syncs_.back().syncs.size() - 1;
      begin_team(syncs_.back().syncs.back().group);
      break;
    }
    case trace::EventType::ThreadTeamEnd:
      if (teams_.empty()) break;
      add_sync(e.time, e.position, cnode, teams_.back().team, teams_.back().instance, 1, OmpSyncRole::TeamEnd);
      ended_team_ = teams_.back().team, ended_instance_ = teams_.back().instance, ended_ = true;
      teams_.pop_back();
      unvisited_team_ = ~0u;  // a team ended without a visit of its parallel region takes none later
      break;
    case trace::EventType::ThreadJoin:
    case trace::EventType::OmpJoin:
      if (ended_) add_sync(e.time, e.position, cnode, ended_team_, ended_instance_, 1, OmpSyncRole::Join);
      ended_ = false;
      break;
    case trace::EventType::ThreadAcquireLock:
    case trace::EventType::OmpAcquireLock: {
      if (stack_.empty()) break;
      const auto& f = stack_.back();
      const auto kind = f.region < kind_.size() ? kind_[f.region] : Kind::Other;
      // scout tracks OpenMP and POSIX threads locks apart (by the event's paradigm) and finds
      // the pattern by the region around the acquisition.
      const auto lock_kind = lock_region(kind);
      if (!lock_kind || (e.partner != OTF2_PARADIGM_OPENMP && e.partner != OTF2_PARADIGM_PTHREAD)) break;
      const bool pthread = e.partner == OTF2_PARADIGM_PTHREAD;
      held_[held_key(e, pthread)] = locks_.size();
      syncs_.back().locks.push_back(static_cast<std::uint32_t>(locks_.size()));
      locks_.push_back({f.enter, e.time, e.time, location_, process_, f.cnode, static_cast<std::uint32_t>(e.request),
                        e.tag, *lock_kind, pthread});
      break;
    }
    case trace::EventType::ThreadReleaseLock:
    case trace::EventType::OmpReleaseLock: {
      const auto it = held_.find(held_key(e, e.partner == OTF2_PARADIGM_PTHREAD));
      if (it == held_.end()) break;
      locks_[it->second].release = e.time;
      held_.erase(it);
      break;
    }
    default: break;
  }
}

// A visit of a parallel region belongs to the team its thread begins next to it: Score-P
// writes the team begin first, then the enter; an enter before its team begin (as other
// writers may order them) waits for the begin. Each team begin takes one visit.
void OmpObserver::enter_parallel(std::uint64_t time, std::uint32_t cnode) {
  auto& parallels = syncs_.back().parallels;
  // A worker's visit: the team begun beside it was not forked here (Score-P's order: that
  // team's begin came first; an enter before its begin: this thread has no fork pending).
  const bool master = unvisited_team_ != ~0u ? !teams_.empty() && teams_.back().master : fork_.valid;
  parallels.push_back({time, time, unvisited_team_, cnode});
  if (unvisited_team_ == ~0u) teamless_ = parallels.size() - 1, teamless_depth_ = stack_.size();
  unvisited_team_ = ~0u;
  open_visits_.push_back({parallels.size() - 1, !master, std::move(tail_)});
  tail_.clear();
  tail_last_ = time;
  stack_.back().parallel = true;
}

void OmpObserver::begin_team(std::uint32_t group) {
  // Only while the visit is the innermost open frame: a parallel region nested without a team
  // of its own (no fork) must not take a later team's begin.
  if (teamless_ != ~std::size_t(0) && stack_.size() == teamless_depth_) {
    syncs_.back().parallels[teamless_].team = group;
    open_visits_.back().worker = !teams_.back().master;  // known now: whether this thread forked the team
    teamless_ = ~std::size_t(0);
  } else {
    unvisited_team_ = group;
  }
}

OmpTeams::OmpTeams(const OmpObserver& omp, bool joins)
    : fork(omp.sync_groups(), kNoFork), master(omp.sync_groups(), trace::kNone) {
  std::vector<std::uint64_t> joined(joins ? omp.sync_groups() : 0, kNoFork);
  for (const auto& l : omp.syncs())
    for (const auto& s : l.syncs) {
      if (s.role == OmpSyncRole::Fork) fork[s.group] = s.time, master[s.group] = l.location;
      if (joins && s.role == OmpSyncRole::Join) joined[s.group] = s.time;
    }
  if (!joins) return;
  join.assign(omp.sync_groups(), kNoFork);
  const auto ends = omp.end_groups();
  for (std::size_t g = 0; g < ends.size(); ++g)
    if (ends[g] != ~0u) join[g] = joined[ends[g]];
}

std::uint32_t OmpObserver::group(std::uint32_t process, std::uint32_t team, std::uint32_t instance, std::uint32_t slot) {
  const TeamInstance key{process, team, instance};
  if (!last_slots_ || key != last_instance_) last_slots_ = &groups_[key], last_instance_ = key;
  auto& slots = *last_slots_;
  if (slot >= slots.size()) {
    const auto before = slots.capacity();
    slots.resize(std::size_t(slot) + 1, ~0u);
    slot_bytes_ += (slots.capacity() - before) * sizeof(std::uint32_t);
  }
  if (slots[slot] == ~0u) slots[slot] = group_count_++;
  return slots[slot];
}

std::vector<std::uint32_t> OmpObserver::team_groups() const {
  std::vector<std::uint32_t> out(group_count_, ~0u);
  for (const auto& [key, slots] : groups_)
    for (auto g : slots)
      if (g != ~0u) out[g] = slots[0];
  return out;
}

std::vector<std::uint32_t> OmpObserver::end_groups() const {
  std::vector<std::uint32_t> out(group_count_, ~0u);
  for (const auto& [key, slots] : groups_)
    if (slots.size() > 1 && slots[0] != ~0u && slots[1] != ~0u) out[slots[0]] = slots[1];
  return out;
}

void OmpObserver::absorb(trace::CallPathObserver& other) {
  auto& later = dynamic_cast<OmpObserver&>(other);
  // Later's groups in its numbering (first met first), each ours or a new one after ours.
  std::vector<std::pair<const TeamInstance*, std::uint32_t>> key(later.group_count_, {nullptr, 0});
  for (const auto& [k, slots] : later.groups_)
    for (std::uint32_t s = 0; s < slots.size(); ++s)
      if (slots[s] != ~0u) key[slots[s]] = {&k, s};
  std::vector<std::uint32_t> ours(key.size());
  for (std::size_t g = 0; g < key.size(); ++g) {
    const auto& [p, t, i] = *key[g].first;
    ours[g] = group(p, t, i, key[g].second);
  }
  const auto barriers = static_cast<std::uint32_t>(barriers_.size()), locks = static_cast<std::uint32_t>(locks_.size());
  const auto runs = static_cast<std::uint32_t>(task_runs_.size());
  barriers_.insert(barriers_.end(), later.barriers_.begin(), later.barriers_.end());
  for (auto b = barriers_.begin() + barriers; b != barriers_.end(); ++b) b->first_run += runs;
  task_runs_.insert(task_runs_.end(), later.task_runs_.begin(), later.task_runs_.end());
  locks_.insert(locks_.end(), later.locks_.begin(), later.locks_.end());
  tails_.insert(tails_.end(), later.tails_.begin(), later.tails_.end());
  for (auto& l : later.syncs_) {
    for (auto& s : l.syncs) s.group = ours[s.group];
    for (auto& b : l.barriers) b += barriers;
    for (auto& k : l.locks) k += locks;
    for (auto& p : l.parallels)
      if (p.team < ours.size()) p.team = ours[p.team];
    syncs_.push_back(std::move(l));
  }
  later.syncs_.clear();
}

void OmpObserver::rows(const std::vector<std::uint32_t>& rows) {
  auto map = [&](std::uint32_t& c) {
    if (c < rows.size()) c = rows[c];
  };
  for (auto& b : barriers_) map(b.cnode);
  for (auto& l : locks_) map(l.cnode);
  for (auto& l : syncs_) {
    for (auto& s : l.syncs) map(s.cnode);
    for (auto& r : l.parallels) map(r.cnode);
  }
  for (auto& t : tails_) map(t.cnode);
}

// --- matching --------------------------------------------------------------------------------

namespace {

// omp_management and omp_fork (scout's OMP_MANAGEMENT, OMP_FORK): each thread's wait from its
// team's fork to entering the parallel region and from leaving it to the team's join.
template <typename Add>
void thread_management(const OmpObserver& omp, Add&& add) {
  constexpr auto kNoTime = OmpTeams::kNoFork;
  const OmpTeams teams(omp, true);
  for (const auto& l : omp.syncs())
    for (const auto& r : l.parallels) {
      if (r.team >= teams.fork.size()) continue;  // no team begun beside the visit
      const auto forked = teams.fork[r.team];
      if (forked == kNoTime) continue;  // no fork event (an OMPT trace, a team begun before the measurement)
      const auto joined = teams.join[r.team];
      const auto before = r.enter > forked ? r.enter - forked : 0;
      const auto after = joined != kNoTime && joined > r.leave ? joined - r.leave : 0;
      add(OmpPattern::Fork, r.cnode, l.location, before);
      add(OmpPattern::Management, r.cnode, l.location, before + after);
    }
}

}  // namespace

OmpSeverities match_omp(const OmpObserver& omp, const std::vector<std::uint32_t>& locations, std::size_t cnodes,
                        std::uint64_t resolution) {
  std::uint32_t most = 0;
  for (auto l : locations) most = std::max(most, l + 1);
  std::vector<std::uint32_t> column(most, trace::kNone);
  for (std::size_t c = 0; c < locations.size(); ++c) column[locations[c]] = static_cast<std::uint32_t>(c);
  OmpSeverities out;
  out.values.assign(std::size_t(OmpPattern::Count), std::vector<double>(cnodes * locations.size(), 0.0));
  out.present.assign(std::size_t(OmpPattern::Count), false);
  const double tick = 1.0 / static_cast<double>(resolution);
  InstanceStats instances(std::size_t(OmpPattern::Count));
  auto add = [&](OmpPattern p, std::uint32_t cnode, std::uint32_t location, std::uint64_t ticks) {
    out.present[std::size_t(p)] = true;
    if (ticks == 0 || cnode >= cnodes || location >= column.size() || column[location] == trace::kNone) return false;
    out.values[std::size_t(p)][std::size_t(cnode) * locations.size() + column[location]] += double(ticks) * tick;
    return true;
  };
  auto add_instance = [&](OmpPattern p, std::uint32_t cnode, std::uint32_t location, std::uint64_t ticks,
                          std::uint64_t enter, std::uint64_t leave) {
    if (add(p, cnode, location, ticks)) instances.add(std::size_t(p), {ticks, enter, leave, cnode, location});
  };
  // Barriers: the k-th barrier of one instance of a team on each of its threads, which is one
  // sync group (its records' BarrierEnter syncs': slot 2 + k of the team instance).
  const auto& barriers = omp.barriers();
  std::vector<std::uint32_t> group_of(barriers.size(), trace::kNone);
  for_each_barrier_enter(omp, [&](const OmpSync& s, std::uint32_t barrier) { group_of[barrier] = s.group; });
  std::vector<std::uint64_t> latest(omp.sync_groups(), 0);
  for (std::size_t j = 0; j < barriers.size(); ++j)
    if (group_of[j] < latest.size()) latest[group_of[j]] = std::max(latest[group_of[j]], barriers[j].enter);
  // trace.stat counts each thread's wait but lists a barrier whole, as scout reduces it over the
  // team: the sum of the threads' waits, the earliest enter, the latest leave, on the thread
  // that waited longest (the first in the barriers' order among equals).
  struct Whole {
    PatternInstance instance{0, ~std::uint64_t(0), 0, 0, 0};
    std::uint64_t most = 0;
    OmpPattern pattern = OmpPattern::Count;
    bool named = false;
  };
  std::vector<Whole> whole(latest.size());
  for (std::size_t j = 0; j < barriers.size(); ++j) {
    const auto& b = barriers[j];
    const auto until = std::min(group_of[j] < latest.size() ? latest[group_of[j]] : b.enter, b.leave);
    const auto pattern = b.explicit_barrier ? OmpPattern::EbarrierWait : OmpPattern::IbarrierWait;
    const auto wait = barrier_wait(omp, b, until);
    if (add(pattern, b.cnode, b.location, wait)) instances.count(std::size_t(pattern), wait);
    auto& w = group_of[j] < whole.size() ? whole[group_of[j]] : *whole.emplace(whole.end());
    w.instance.ticks += wait;
    w.instance.enter = std::min(w.instance.enter, b.enter), w.instance.leave = std::max(w.instance.leave, b.leave);
    if (!w.named || wait > w.most) {
      w.most = wait, w.named = true, w.pattern = pattern;
      w.instance.cnode = b.cnode, w.instance.location = b.location;
    }
  }
  for (const auto& w : whole)
    if (w.named && w.instance.cnode < cnodes && w.instance.location < column.size() &&
        column[w.instance.location] != trace::kNone)
      instances.list(std::size_t(w.pattern), w.instance);
  // Locks: each acquisition waits for the release of the lock's previous acquisition (lock ids
  // are per process and paradigm).
  std::map<std::tuple<std::uint32_t, bool, std::uint32_t>, std::vector<const LockRecord*>> by_lock;
  for (const auto& l : omp.locks()) by_lock[{l.process, l.pthread, l.lock}].push_back(&l);
  for (auto& [key, list] : by_lock) {
    std::stable_sort(list.begin(), list.end(), [](const LockRecord* a, const LockRecord* b) { return a->order < b->order; });
    for (std::size_t i = 0; i < list.size(); ++i) {
      const auto& l = *list[i];
      const auto until = i == 0 ? l.enter : std::min(list[i - 1]->release, l.acquire);
      add_instance(lock_pattern(l.kind), l.cnode, l.location, until > l.enter ? until - l.enter : 0, l.enter,
                   l.acquire);
    }
  }
  thread_management(omp, add);
  out.statistics = instances.finish();
  return out;
}

// --- the report's metric tree ------------------------------------------------------------------

namespace {

enum class Regions {
  All, Omp, Synchronization, Barrier, Ebarrier, Ibarrier, Critical, LockApi,
  Pthread, PthreadSynchronization, PthreadMutex, PthreadCondition, None
};

bool covers(Regions which, const cube::Region& region) {
  const auto name = lower(region.name);
  const bool ebarrier = starts_with(name, "!$omp barrier"), ibarrier = starts_with(name, "!$omp implicit barrier");
  const bool critical = starts_with(name, "!$omp critical"), api = lock_api(name);
  const bool pthread = region.paradigm == "pthread";
  switch (which) {
    case Regions::All: return true;
    case Regions::Omp: return region.paradigm == "openmp" || starts_with(name, "!$omp") || starts_with(name, "omp_");
    case Regions::Synchronization:
      return ebarrier || ibarrier || critical || api || starts_with(name, "!$omp atomic");
    case Regions::Barrier: return ebarrier || ibarrier;
    case Regions::Ebarrier: return ebarrier;
    case Regions::Ibarrier: return ibarrier;
    case Regions::Critical: return critical;
    case Regions::LockApi: return api;
    case Regions::Pthread: return pthread && (pthread_management(name) || pthread_mutex(name) || pthread_condition(name));
    case Regions::PthreadSynchronization: return pthread && (pthread_mutex(name) || pthread_condition(name));
    case Regions::PthreadMutex: return pthread && pthread_mutex(name);
    case Regions::PthreadCondition: return pthread && pthread_condition(name);
    case Regions::None: return false;
  }
  return false;
}

struct OmpMetric {
  const char* name;
  const char* display;
  const char* parent;
  Regions regions;  // Regions::None: a pattern
  OmpPattern pattern;
  const char* description;
};

// Scalasca 2.6's tree (unique and display names and nesting as its scout.spec has them; the
// descriptions are ours), in preorder.
const OmpMetric kOmpTree[] = {
    {"omp_time", "OpenMP", "execution", Regions::Omp, OmpPattern::Count,
     "Time inside OpenMP regions (constructs and runtime calls)"},
    {"omp_management", "Management", "omp_time", Regions::None, OmpPattern::Management,
     "Time a thread spends between its team's fork and entering the parallel region, and between leaving it and the "
     "join"},
    {"omp_fork", "Fork", "omp_management", Regions::None, OmpPattern::Fork,
     "Time a thread spends between its team's fork and entering the parallel region"},
    {"omp_synchronization", "Synchronization", "omp_time", Regions::Synchronization, OmpPattern::Count,
     "Time inside OpenMP barriers, critical sections, atomics and lock calls"},
    {"omp_barrier", "Barrier", "omp_synchronization", Regions::Barrier, OmpPattern::Count,
     "Time inside OpenMP barriers, explicit and implicit"},
    {"omp_ebarrier", "Explicit", "omp_barrier", Regions::Ebarrier, OmpPattern::Count,
     "Time inside barriers the program states (omp barrier)"},
    {"omp_ebarrier_wait", "Wait at Barrier", "omp_ebarrier", Regions::None, OmpPattern::EbarrierWait,
     "Time in an explicit OpenMP barrier until the team's last thread entered it"},
    {"omp_ibarrier", "Implicit", "omp_barrier", Regions::Ibarrier, OmpPattern::Count,
     "Time inside the barriers at the end of worksharing and parallel constructs"},
    {"omp_ibarrier_wait", "Wait at Barrier", "omp_ibarrier", Regions::None, OmpPattern::IbarrierWait,
     "Time in an implicit OpenMP barrier until the team's last thread entered it"},
    {"omp_critical", "Critical", "omp_synchronization", Regions::Critical, OmpPattern::Count,
     "Time inside OpenMP critical sections"},
    {"omp_lock_contention_critical", "Lock Contention", "omp_critical", Regions::None,
     OmpPattern::LockContentionCritical, "Time a thread waits to enter a critical section another thread is in"},
    {"omp_lock_api", "Lock API", "omp_synchronization", Regions::LockApi, OmpPattern::Count,
     "Time inside omp_*_lock calls"},
    {"omp_lock_contention_api", "Lock Contention", "omp_lock_api", Regions::None, OmpPattern::LockContentionApi,
     "Time a thread waits in omp_set_lock for a lock another thread holds"},
    // POSIX threads, as Scalasca's scout.spec places them (pthread_management, which has no
    // pattern below it, is left out as every region metric without one).
    {"pthread_time", "POSIX threads", "execution", Regions::Pthread, OmpPattern::Count,
     "Time inside pthread_* calls"},
    {"pthread_synchronization", "Synchronization", "pthread_time", Regions::PthreadSynchronization, OmpPattern::Count,
     "Time inside the mutex and condition calls of POSIX threads"},
    {"pthread_lock_api", "Mutex", "pthread_synchronization", Regions::PthreadMutex, OmpPattern::Count,
     "Time inside pthread_mutex_* calls"},
    {"pthread_lock_contention_mutex_lock", "Lock Contention", "pthread_lock_api", Regions::None,
     OmpPattern::PthreadMutexContention, "Time a thread waits in pthread_mutex_lock for a mutex another thread holds"},
    {"pthread_conditional", "Condition", "pthread_synchronization", Regions::PthreadCondition, OmpPattern::Count,
     "Time inside pthread_cond_* calls"},
    {"pthread_lock_contention_conditional", "Lock Contention", "pthread_conditional", Regions::None,
     OmpPattern::PthreadConditionContention,
     "Time a thread woken in pthread_cond_wait waits to take back a mutex another thread holds"},
};

double read_double(const std::uint8_t* p) {
  double v;
  std::memcpy(&v, p, 8);
  return v;
}

std::size_t find(const profile::LocalProfile& p, const std::string& name) {
  for (std::size_t m = 0; m < p.metrics.size(); ++m)
    if (p.metrics[m].uniq_name == name) return m;
  return p.metrics.size();
}

// Inserts `metric` at `at` (preorder), parents of later metrics shifted.
void insert(profile::LocalProfile& p, std::size_t at, cube::Metric metric, cube::Severity values) {
  for (auto& m : p.metrics)
    if (m.parent != cube::kNoParent && m.parent >= at) ++m.parent;
  p.metrics.insert(p.metrics.begin() + static_cast<std::ptrdiff_t>(at), std::move(metric));
  p.values.insert(p.values.begin() + static_cast<std::ptrdiff_t>(at), std::move(values));
}

// One past the last metric below `m` (preorder).
std::size_t subtree_end(const profile::LocalProfile& p, std::size_t m) {
  std::size_t end = m + 1;
  while (end < p.metrics.size()) {
    auto a = p.metrics[end].parent;
    while (a != cube::kNoParent && a != m) a = p.metrics[a].parent;
    if (a != m) break;
    ++end;
  }
  return end;
}

}  // namespace

void add_omp_tree(profile::LocalProfile& p, const OmpSeverities& sev) {
  constexpr std::size_t kCount = std::size(kOmpTree);
  bool used[kCount] = {};
  for (std::size_t t = kCount; t-- > 0;) {
    if (kOmpTree[t].regions == Regions::None) used[t] = sev.present[std::size_t(kOmpTree[t].pattern)];
    if (!used[t]) continue;
    for (std::size_t a = 0; a < t; ++a)
      if (std::strcmp(kOmpTree[a].name, kOmpTree[t].parent) == 0) used[a] = true;
  }
  const auto time = find(p, "time");
  if (std::none_of(std::begin(used), std::end(used), [](bool u) { return u; }) || time == p.metrics.size()) return;
  const auto n = p.cnode_count(), cols = p.locations.size();
  // Exclusive time per call path: its inclusive time less its children's.
  std::vector<double> own(n * cols);
  const auto& incl = p.values[time];
  for (std::size_t c = 0; c < n; ++c)
    for (std::size_t l = 0; l < cols; ++l) own[c * cols + l] = read_double(incl.row(c) + l * 8);
  for (std::size_t c = 0; c < n; ++c)
    if (p.cnode_parents[c] != cube::kNoParent)
      for (std::size_t l = 0; l < cols; ++l) own[std::size_t(p.cnode_parents[c]) * cols + l] -= read_double(incl.row(c) + l * 8);
  // A worker's call paths above the parallel region it is hung into hold exactly its children's
  // time (trace/profile.cpp): their difference is 0 up to rounding, which must not go negative.
  for (auto& v : own) v = std::max(v, 0.0);
  auto of_regions = [&](Regions which) {
    std::vector<double> v(n * cols, 0.0);
    for (std::size_t c = 0; c < n; ++c)
      if (covers(which, p.regions[p.cnode_regions[c]])) std::copy_n(own.begin() + c * cols, cols, v.begin() + c * cols);
    return v;
  };
  if (find(p, "execution") == p.metrics.size()) {  // no MPI tree: execution is all of time but the overhead
    std::vector<double> execution(n * cols, 0.0), overhead(n * cols, 0.0);
    for (std::size_t c = 0; c < n; ++c)
      std::copy_n(own.begin() + c * cols, cols,
                  (measurement_overhead(p.regions[p.cnode_regions[c]]) ? overhead : execution).begin() + c * cols);
    auto m = seconds_metric("execution", "Execution", kExecutionDescription);
    m.parent = static_cast<std::uint32_t>(time);
    insert(p, time + 1, std::move(m), exclusive_matrix(n, cols, execution));
    if (std::any_of(p.regions.begin(), p.regions.end(), measurement_overhead)) {
      auto o = seconds_metric("overhead", "Overhead", kOverheadDescription);
      o.parent = static_cast<std::uint32_t>(time);
      insert(p, time + 2, std::move(o), exclusive_matrix(n, cols, overhead));
    }
  }
  for (std::size_t t = 0; t < kCount; ++t) {
    if (!used[t]) continue;
    const auto parent = find(p, kOmpTree[t].parent);
    auto m = seconds_metric(kOmpTree[t].name, kOmpTree[t].display, kOmpTree[t].description);
    m.parent = static_cast<std::uint32_t>(parent);
    auto values = kOmpTree[t].regions == Regions::None ? sev.values[std::size_t(kOmpTree[t].pattern)]
                                                         : of_regions(kOmpTree[t].regions);
    insert(p, subtree_end(p, parent), std::move(m), exclusive_matrix(n, cols, values));
  }
}

namespace {

// A call path's region that starts a team of threads, as Cube's remapper tells OpenMP parallel
// regions apart (its is_omp predicate: an OpenMP description or module, else the name).
bool starts_team(const cube::Region& r) {
  if (r.descr == "OMP" || r.descr == "pomp" || r.mod == "OMP") return true;
  if (r.mod == "pomp" || r.mod == "MPI" || r.mod == "mpi" || r.mod == "EPIK") return false;
  return r.name.rfind("!$omp parallel @", 0) == 0;
}

}  // namespace

void add_idle_threads(profile::LocalProfile& p, const trace::Definitions& defs,
                      const std::vector<std::uint32_t>& locations) {
  const auto time = find(p, "time");
  // As Scalasca's `scalasca -examine` (cube_remap2 -s) adds them: only with OpenMP, and not
  // where the run has POSIX threads too (square leaves the option out then).
  if (time == p.metrics.size() || find(p, "omp_time") == p.metrics.size() || find(p, "pthread_time") != p.metrics.size())
    return;
  const auto n = p.cnode_count(), cols = p.locations.size();
  if (locations.size() != cols) throw std::invalid_argument("idle threads: a location per column needed");
  // Per column its process's master: the process's first CPU thread among the columns (a
  // process's threads are all here); none for other locations (accelerator streams).
  constexpr auto kNoMaster = ~std::size_t(0);
  std::vector<std::size_t> master(cols, kNoMaster);
  std::map<std::uint32_t, std::size_t> first;  // process -> column of its first thread
  for (std::size_t l = 0; l < cols; ++l) {
    const auto& loc = defs.locations[locations[l]];
    if (loc.type != "cpu_thread") continue;
    auto [it, fresh] = first.try_emplace(loc.group, l);
    if (!fresh && locations[l] < locations[it->second]) it->second = l;
  }
  for (std::size_t l = 0; l < cols; ++l) {
    const auto& loc = defs.locations[locations[l]];
    if (loc.type == "cpu_thread") master[l] = first[loc.group];
  }
  auto own = exclusive_values(p, time);
  std::vector<std::size_t> depth(n, 0);
  for (std::size_t c = 0; c < n; ++c)
    if (p.cnode_parents[c] != cube::kNoParent) depth[c] = depth[p.cnode_parents[c]] + 1;
  std::vector<double> idle(n * cols, 0.0), limited(n * cols, 0.0), total(cols, 0.0);
  constexpr auto kSerial = ~std::size_t(0);
  std::size_t team_depth = kSerial, team = kSerial;  // the parallel region being summed, its call path
  // The workers of a team that spent less time in it than their master idled for the rest.
  auto close_team = [&] {
    for (std::size_t l = 0; l < cols; ++l) {
      if (master[l] == kNoMaster || master[l] == l) continue;
      const double idled = total[master[l]] - total[l];
      if (idled < 1e-10) continue;  // below what a measurement resolves (the remapper's threshold)
      limited[team * cols + l] = idled;
      idle[team * cols + l] += idled;
    }
    team = kSerial;
  };
  for (std::size_t c = 0; c < n; ++c) {
    if (depth[c] <= team_depth) {  // outside the team's region: a new one, or serial code
      team_depth = starts_team(p.regions[p.cnode_regions[c]]) ? depth[c] : kSerial;
      if (team != kSerial) close_team();
    }
    if (team_depth != kSerial) {  // inside a parallel region: its time per thread
      if (team == kSerial) team = c, std::fill(total.begin(), total.end(), 0.0);
      for (std::size_t l = 0; l < cols; ++l) total[l] += own[c * cols + l];
      continue;
    }
    // serial code: the master's time there is idle time of each of its workers
    for (std::size_t l = 0; l < cols; ++l)
      if (master[l] != kNoMaster && master[l] != l) idle[c * cols + l] = std::max(own[c * cols + master[l]], 0.0);
  }
  if (team != kSerial) close_team();
  // The idle time is part of `time` (INCLUSIVE: on the call path and its ancestors), not of
  // `execution`, which keeps the time before.
  auto& incl = p.values[time];
  for (std::size_t c = 0; c < n; ++c)
    for (std::size_t l = 0; l < cols; ++l) {
      const double add = idle[c * cols + l];
      if (add == 0) continue;
      for (auto a = c; a != cube::kNoParent; a = p.cnode_parents[a]) {
        double v = read_double(incl.row(a) + l * 8) + add;
        std::memcpy(incl.row(a) + l * 8, &v, 8);
      }
    }
  incl.mark_nonzero_rows();
  // Scalasca 2.6's place: below time, after execution (and its tree) and overhead.
  auto before = time;
  for (const char* name : {"execution", "overhead"})
    if (find(p, name) != p.metrics.size()) before = find(p, name);
  const auto at = subtree_end(p, before);
  auto threads = seconds_metric("omp_idle_threads", "Idle threads",
                                "Time the worker threads of a process idle: while their master runs serial code, and "
                                "in a parallel region for what they spend less than their master");
  threads.parent = static_cast<std::uint32_t>(time);
  insert(p, at, std::move(threads), exclusive_matrix(n, cols, idle));
  auto lim = seconds_metric("omp_limited_parallelism", "Limited parallelism",
                            "The idle time of the workers inside parallel regions: less time there than the master");
  lim.parent = static_cast<std::uint32_t>(at);
  insert(p, at + 1, std::move(lim), exclusive_matrix(n, cols, limited));
}

std::uint64_t OmpObserver::bytes() const {
  std::uint64_t n = barriers_.capacity() * sizeof(BarrierRecord) + locks_.capacity() * sizeof(LockRecord) +
                    task_runs_.capacity() * sizeof(TaskRun);
  for (const auto& l : syncs_)
    n += l.syncs.capacity() * sizeof(OmpSync) + (l.barriers.capacity() + l.locks.capacity()) * 4 +
         l.parallels.capacity() * sizeof(ParallelRecord);
  n += tails_.capacity() * sizeof(OmpTail);
  // a hash node (a pointer and the hash beside its key and value) and its bucket
  if (!groups_.empty())
    n += groups_.size() * (2 * sizeof(void*) + sizeof(decltype(groups_)::value_type)) + groups_.bucket_count() * sizeof(void*);
  return n + slot_bytes_;
}

std::uint64_t OmpObserver::sync_events() const {
  std::uint64_t n = locks_.size();
  for (const auto& l : syncs_) n += l.syncs.size();
  return n;
}

}  // namespace cubescale::analysis
