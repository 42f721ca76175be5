#include "cubescale/trace/profile.hpp"

#include <algorithm>
#include <array>
#include <cstdio>
#include <map>
#include <cstring>
#include <exception>
#include <limits>
#include <memory>
#include <stdexcept>
#include <tuple>
#include <string>
#include <thread>
#include <unordered_map>


namespace cubescale::trace {

namespace {

enum Fixed : std::size_t { kVisits, kTime, kMinTime, kMaxTime, kBytesSent, kBytesReceived, kBytesPut, kBytesGet, kHits, kFixed };
// The fixed columns a trace uses: the RMA bytes where it defines RMA windows, hits where it
// defines calling contexts; the others are never allocated (8 bytes per call path and location).
using FixedUsed = std::array<bool, kFixed>;

// Adds (or, `minus`, takes away) counter value `by` to `to`: doubles as doubles, integers
// wrapping as the counters do (int64 and uint64 alike).
void add_counter(std::uint64_t& to, std::uint64_t by, bool is_double, bool minus = false) {
  if (!is_double) {
    to = minus ? to - by : to + by;
    return;
  }
  double a, b;
  std::memcpy(&a, &to, 8);
  std::memcpy(&b, &by, 8);
  a = minus ? a - b : a + b;
  std::memcpy(&to, &a, 8);
}

// One location's values, indexed by call path (grown as call paths appear).
struct Column {
  std::vector<std::uint64_t> fixed[kFixed];  // ticks for the times, counts and bytes otherwise
  std::vector<std::uint64_t> counters;       // [cnode * slots + slot], raw bits of the value type

  void grow(std::size_t cnodes, std::size_t slots, const FixedUsed& used) {
    if (fixed[kVisits].size() >= cnodes) return;
    const auto n = std::max(cnodes, fixed[kVisits].size() * 2);
    for (std::size_t f = 0; f < kFixed; ++f)
      if (used[f]) fixed[f].resize(n, f == kMinTime ? ~std::uint64_t(0) : 0);
    counters.resize(n * slots, 0);
  }

  // Worker threads are grafted below their master's parallel region (root_cnode): a worker
  // never visits the call paths above it, yet their inclusive time and counters hold what it
  // did below them (exclusive zero), as Score-P's profiles have it. Without this, a worker's
  // `time` at `main` would be 0 under children with seconds, and a metric summed over call
  // paths below `time` (Scalasca's omp_time) could exceed `time`. `parent` by creation
  // order: a call path is created after its parent, so children come first going down.
  // The tasks' root (`tasks`, kNone: none) holds their time but adds none to its parent: a
  // task's time is in its pointers already (Score-P's profile has it so).
  void fill_unvisited_ancestors(const std::vector<std::uint32_t>& parent, const std::vector<std::uint32_t>& region,
                                std::uint32_t tasks, const std::vector<bool>& slot_double) {
    const std::size_t slots = slot_double.size();
    for (std::size_t c = std::min(fixed[kVisits].size(), parent.size()); c-- > 0;) {  // grow() rounds up
      const auto p = parent[c];
      if (p == kNone || fixed[kVisits][p] != 0 || (tasks != kNone && region[c] == tasks)) continue;
      // Its shortest and longest visit are its children's (Score-P merges them so: the workers
      // of bt-mz.B.8x4.cubex hold that at all 600 such cells; TASKS merges into no parent).
      if (fixed[kVisits][c] != 0 || fixed[kMinTime][c] != ~std::uint64_t(0)) {
        fixed[kMinTime][p] = std::min(fixed[kMinTime][p], fixed[kMinTime][c]);
        fixed[kMaxTime][p] = std::max(fixed[kMaxTime][p], fixed[kMaxTime][c]);
      }
      fixed[kTime][p] += fixed[kTime][c];
      for (std::size_t s = 0; s < slots; ++s)
        add_counter(counters[std::size_t(p) * slots + s], counters[c * slots + s], slot_double[s]);
    }
  }
};

// What an earlier thread of the process had open: a fork..join (workers' call paths are
// children of the call path that forked) or a visit of an OpenMP region (a worker entering
// the same region is on the same call path).
struct Interval {
  std::uint64_t enter, leave;
  std::uint32_t cnode;
  bool fork;
};

class ProfileSink final : public EventSink {
 public:
  ProfileSink(const Trace& trace, std::size_t locations, CallPathObserver* observer) : defs_(trace.definitions()) {
    if (observer) take_apart(observer);
    columns_.reserve(locations);
    member_slot_.assign(defs_.metric_members.size(), kNone);
    for (const auto& m : defs_.metrics) {
      if (m.instance || m.occurrence == "asynchronous") continue;
      for (auto member : m.members)
        if (member != kNone && defs_.metric_members[member].accumulated && member_slot_[member] == kNone) {
          member_slot_[member] = static_cast<std::uint32_t>(slot_members_.size());
          slot_members_.push_back(member);
        }
    }
    slots_ = slot_members_.size();
    used_.fill(true);
    used_[kBytesPut] = used_[kBytesGet] = defs_.rma_windows != 0;
    used_[kHits] = !defs_.calling_contexts.empty();
    tasks_region_ = static_cast<std::uint32_t>(defs_.regions.size());
    threads_region_ = tasks_region_ + 1;
    current_.assign(slots_, 0);
    // Regions whose visits may hold a worker thread's start: OpenMP parallel regions, and the
    // implicit tasks and unclassified regions OMPT-based measurements record for them.
    for (std::uint32_t r = 0; r < defs_.regions.size(); ++r) {
      const auto& region = defs_.regions[r];
      if (region.role == "parallel" ||
          (region.paradigm == "openmp" && (region.role == "unknown" || region.role == "task")))
        parallel_region_.insert(r);
    }
  }

  void begin_location(std::uint32_t location) override {
    const auto group = defs_.locations[location].group;
    if (group != group_ || group == kNone) intervals_.clear(), reach_.clear(), team_of_.clear(), program_ = kNone;
    group_ = group;
    location_ = location;
    cpu_thread_ = defs_.locations[location].type == "cpu_thread";
    columns_.emplace_back();
    column_ = &columns_.back();
    stack_.clear();
    team_frames_.clear();
    snapshots_.clear();
    tasks_.clear();
    current_task_ = 0;
    pointer_open_ = false;
    std::fill(current_.begin(), current_.end(), 0);
    last_time_ = 0;
    opened_.clear();
    forks_.clear();
    for (auto* o : observers_) o->begin_location(location);
  }

  void event(const Event& event) override {
    const Event& e = as_region_event(event, program_event_);
    ++stats_.events;
    last_time_ = e.time;
    // The observer sees an Enter after its frame is pushed, every other event before the
    // builder handles it (so a Leave still has its frame).
    const auto& wanting = by_type_[static_cast<std::size_t>(e.type)];
    if (e.type != EventType::Enter)
      for (auto* o : wanting) o->event(e, e.type == EventType::Leave ? region_cnode() : stack_.empty() ? kNone : stack_.back().cnode);
    switch (e.type) {
      case EventType::Enter:
        enter(e.region, e.time, e.parallel_region);
        // The process's program root (PROGRAM_BEGIN), below which its other threads' roots go.
        if (event.type == EventType::ProgramBegin && stack_.size() == 1 && program_ == kNone)
          program_ = stack_.back().cnode, program_location_ = location_;
        for (auto* o : wanting) o->event(e, stack_.back().cnode);
        break;
      case EventType::Leave: leave(e.time); break;
      case EventType::MpiSend:
      case EventType::MpiIsend:
        add(kBytesSent, e.bytes);
        break;
      case EventType::MpiRecv:
      case EventType::MpiIrecv:
        add(kBytesReceived, e.bytes);
        break;
      case EventType::MpiCollectiveEnd:
        add(kBytesSent, e.bytes);
        add(kBytesReceived, e.bytes_received);
        break;
      // One-sided transfers, as Score-P's profile counts them (its CUDA and OpenCL adapters
      // record memory copies so): puts and gets, and what RMA collectives and atomics moved.
      case EventType::RmaPut: add(kBytesPut, e.bytes); break;
      case EventType::RmaGet: add(kBytesGet, e.bytes); break;
      case EventType::RmaCollectiveEnd:
      case EventType::RmaAtomic:
        add(kBytesPut, e.bytes);
        add(kBytesGet, e.bytes_received);
        break;
      case EventType::Metric: metric(e); break;
      case EventType::ParameterInt:
      case EventType::ParameterUnsignedInt:
      case EventType::ParameterString: parameter(e); break;
      case EventType::CallingContextSample:  // on the sample's innermost frame
        if (e.region != kNone) add(kHits, 1);
        break;
      case EventType::ThreadTaskSwitch: switch_task(task_after(e, current_task_), e.time); break;
      case EventType::ThreadTaskComplete:
        switch_task(task_after(e, current_task_), e.time);
        if (const auto it = tasks_.find(task_key(e)); it != tasks_.end() && task_key(e) != 0) {
          // completed with regions open: dropped (parameters' frames are not regions)
          stats_.unclosed_frames += static_cast<std::uint64_t>(std::count_if(
              it->second.frames.begin(), it->second.frames.end(), [](const Frame& f) { return !f.parameter; }));
          tasks_.erase(it);
        }
        break;
      case EventType::ThreadFork:
      case EventType::OmpFork:
        forks_.push_back({e.time, 0, stack_.empty() ? kNone : stack_.back().cnode, true});
        break;
      case EventType::ThreadJoin:
      case EventType::OmpJoin:
        if (!forks_.empty()) {
          forks_.back().leave = e.time;
          opened_.push_back(forks_.back());
          forks_.pop_back();
        }
        break;
      default: break;
    }
  }

  void end_location(std::uint32_t location) override {
    for (auto* o : observers_) o->end_location(location);
    // A stream cut short (a crashed run) leaves frames open: Score-P closes them at the end;
    // a task's frames at the end of its last run (the tasks still suspended first, then the
    // implicit task).
    if (current_task_ != 0) switch_task(0, last_time_);
    std::vector<std::uint64_t> suspended;  // in a fixed order, as a run over the same events
    for (const auto& [key, task] : tasks_)
      if (key != 0 && !task.frames.empty()) suspended.push_back(key);
    std::sort(suspended.begin(), suspended.end());
    std::vector<Frame> implicit;
    std::vector<std::uint64_t> implicit_snapshots;
    implicit.swap(stack_), implicit_snapshots.swap(snapshots_);
    for (auto key : suspended) {
      auto& task = tasks_[key];
      stack_.swap(task.frames), snapshots_.swap(task.snapshots);
      suspended_ = task.suspended;
      while (!stack_.empty()) ++stats_.unclosed_frames, leave(task.switched_out);
    }
    suspended_ = 0;
    stack_.swap(implicit), snapshots_.swap(implicit_snapshots);
    tasks_.clear();
    while (!stack_.empty()) {
      ++stats_.unclosed_frames;
      leave(last_time_);
    }
    // This thread's parallel regions are where later threads of its process start.
    intervals_.insert(intervals_.end(), opened_.begin(), opened_.end());
    std::sort(intervals_.begin(), intervals_.end(), [](const Interval& a, const Interval& b) { return a.enter < b.enter; });
    reach_.resize(intervals_.size());
    std::uint64_t reach = 0;
    for (std::size_t i = 0; i < intervals_.size(); ++i) reach_[i] = reach = std::max(reach, intervals_[i].leave);
  }

  profile::LocalProfile finish(const std::vector<std::uint32_t>& locations);

  // Takes over the call paths and columns of `later`, which read the locations after this
  // one's; returns, per call path of later, ours. Later's call paths are added in its creation
  // order, so that ours are numbered as one builder reading both parts in order would have
  // (the rows, and first visits' ties, come out the same).
  std::vector<std::uint32_t> absorb(ProfileSink& later) {
    const auto n = later.cnode_parent_.size();
    std::vector<std::uint32_t> map(n);
    for (std::size_t c = 0; c < n; ++c) {  // a parent is created before its children
      const auto parent = later.cnode_parent_[c];
      auto region = later.cnode_region_[c];  // its parameters' regions are numbered its own way
      if (region > later.threads_region_) region = parameter_region(later.parameter_values_[region - later.threads_region_ - 1]);
      map[c] = child(parent == kNone ? kNone : map[parent], region);
      first_enter_[map[c]] = std::min(first_enter_[map[c]], later.first_enter_[c]);
    }
    const auto cnodes = cnode_parent_.size();
    for (auto& col : later.columns_) {
      Column out;
      const auto used = std::min(col.fixed[kVisits].size(), n);
      for (std::size_t f = 0; f < kFixed; ++f) {
        if (!used_[f]) continue;
        out.fixed[f].assign(cnodes, f == kMinTime ? ~std::uint64_t(0) : 0);
        for (std::size_t c = 0; c < used; ++c) out.fixed[f][map[c]] = col.fixed[f][c];
      }
      out.counters.assign(cnodes * slots_, 0);
      for (std::size_t c = 0; c < used; ++c)
        std::copy_n(col.counters.begin() + c * slots_, slots_, out.counters.begin() + std::size_t(map[c]) * slots_);
      columns_.push_back(std::move(out));
      col = Column();  // later's copy goes now: the two exist together one column at a time
    }
    stats_.events += later.stats_.events;
    stats_.unclosed_frames += later.stats_.unclosed_frames;
    return map;
  }

  const std::vector<CallPathObserver*>& observers() const { return observers_; }
  // After finish: per call path its row in the profile.
  const std::vector<std::uint32_t>& rows() const { return rows_; }
  ProfileStats stats_;

 private:
  struct Frame {
    std::uint32_t cnode;
    std::uint64_t enter;
    std::uint64_t suspended = 0;  // the task's suspended ticks at the enter (suspended_ then)
    bool parameter = false;       // a parameter's call path, closed with its region's frame
  };
  static constexpr std::size_t kScorePMostDepth = 100;
  // A parameter and its value, as a parameter call path holds it (parameter_region).
  struct ParameterValue {
    std::string name, value, text;
    bool numeric = false, instance = false;
  };
  // An explicit OpenMP task's call stack while another task runs (events.hpp task_key).
  struct Task {
    std::vector<Frame> frames;
    std::vector<std::uint64_t> snapshots;
    std::uint64_t suspended = 0;     // ticks switched out so far
    std::uint64_t switched_out = 0;  // when it was last switched out
  };

  std::uint32_t child(std::uint32_t parent, std::uint32_t region) {
    const std::uint64_t key = (std::uint64_t(parent) << 32) | region;  // parent kNone: roots
    if (auto it = child_.find(key); it != child_.end()) return it->second;
    const auto c = static_cast<std::uint32_t>(cnode_parent_.size());
    cnode_parent_.push_back(parent);
    cnode_root_.push_back(parent == kNone ? c : cnode_root_[parent]);
    cnode_region_.push_back(region);
    first_enter_.push_back(profile::kNeverVisited);
    child_.emplace(key, c);
    return c;
  }

  // Where a thread that starts with an empty stack at `time` in `region` goes (Score-P
  // grafts worker threads into their process's call tree): below the innermost fork..join or
  // OpenMP region an earlier thread of the process had open then. Entering the same region
  // is the same call path (a worker entering the team's parallel region, OPARI2 style, even
  // before the master does); another region becomes a child (an OMPT implicit task below
  // the parallel region, a worker's parallel region below the forking call path). When
  // nothing was open (POSIX threads, which Score-P's profile does not graft, or a worker whose
  // fork it cannot place): below <program>/THREADS where an earlier thread of the process
  // entered the program's region (Score-P 7 and later move such roots there), else a root.
  // An OMPT-based trace names the team a worker's implicit task belongs to (`team`, the
  // parallel region id; 0: none): below the call path where a thread of the process opened it,
  // whichever teams were open then (nested regions of several threads overlap in time).
  std::uint32_t root_cnode(std::uint32_t region, std::uint64_t time, std::uint64_t team = 0) {
    if (team != 0)  // (a team used outside its fork's visit, or reused: the rule below)
      if (const auto at = team_of_.find(team); at != team_of_.end() && at->second.enter <= time && time <= at->second.leave)
        return cnode_region_[at->second.cnode] == region ? at->second.cnode : child(at->second.cnode, region);
    auto it = std::upper_bound(intervals_.begin(), intervals_.end(), time,
                               [](std::uint64_t t, const Interval& i) { return t < i.enter; });
    while (it != intervals_.begin()) {
      --it;
      // No interval at or before this one reaches `time`: stop (keeps the walk short).
      if (reach_[static_cast<std::size_t>(it - intervals_.begin())] < time) break;
      if (it->leave < time) continue;
      if (!it->fork && cnode_region_[it->cnode] == region) return it->cnode;
      return child(it->cnode, region);
    }
    if (program_ == kNone || program_location_ == location_ || cnode_region_[program_] == region)
      return child(kNone, region);
    const auto threads = child(program_, threads_region_);
    first_enter_[threads] = std::min(first_enter_[threads], time);
    return child(threads, region);
  }

  // Enter and Leave arrive nested (a region, Leaves closing the last Enter, not before it):
  // Trace::read refuses every reader a stream where they do not (EvtContext::nests).
  void enter(std::uint32_t region, std::uint64_t time, std::uint64_t team = 0) {
    std::uint32_t c;
    if (stack_.empty() && current_task_ != 0) {
      c = task_root(region, time);
    } else if (stack_.empty()) {
      c = cpu_thread_ ? root_cnode(region, time, team) : child(kNone, region);  // GPU streams keep their own roots
    } else {
      const auto parent = stack_.back().cnode;
      c = cached_child(parent, region);
      // The first Enter of an OpenMP region naming a team inside a thread's call tree opens it
      // (the fork), until that visit ends.
      if (team != 0 && cpu_thread_ && parallel_region_.count(region) &&
          team_of_.try_emplace(team, Team{c, time, ~std::uint64_t(0)}).second)
        team_frames_.push_back({stack_.size(), team});
    }
    column_->grow(cnode_parent_.size(), slots_, used_);
    first_enter_[c] = std::min(first_enter_[c], time);  // locations are read one after another
    stack_.push_back({c, time, suspended_});
    snapshots_.insert(snapshots_.end(), current_.begin(), current_.end());
  }

  // Closes the innermost frame at `time` (a Leave of its region, see enter()): its time is
  // what its task ran of it.
  void leave(std::uint64_t time) {
    while (stack_.back().parameter) close_top(time), stack_.pop_back();  // the region's parameters
    const auto frame = stack_.back();
    const auto c = frame.cnode;
    close_top(time);
    // (Not an explicit task's frames: a worker starting then is not inside them, Score-P
    // grafts threads below the implicit task's call paths.)
    if (current_task_ == 0 && parallel_region_.count(cnode_region_[c])) opened_.push_back({frame.enter, time, c, false});
    if (!team_frames_.empty() && team_frames_.back().first == stack_.size() - 1) {  // the team's fork ends
      team_of_[team_frames_.back().second].leave = time;
      team_frames_.pop_back();
    }
    stack_.pop_back();
  }

  // Ends the visit of the innermost frame at `time` (its snapshot dropped, the frame kept).
  void close_top(std::uint64_t time) {
    const auto& frame = stack_.back();
    // (Clamped: times are not checked to grow along a stream, and a hostile one must not wrap.)
    const auto ran = time > frame.enter ? time - frame.enter : 0, away = suspended_ - frame.suspended;
    close(frame.cnode, ran > away ? ran - away : 0, snapshots_.data() + snapshots_.size() - slots_);
    if (slots_) snapshots_.resize(snapshots_.size() - slots_);
  }

  // The call path of the innermost open region (parameters' call paths skipped), kNone outside.
  std::uint32_t region_cnode() const {
    for (auto it = stack_.rbegin(); it != stack_.rend(); ++it)
      if (!it->parameter) return it->cnode;
    return kNone;
  }

  // A parameter as Score-P's profile takes it: a call path `name=value` below the current one,
  // which holds the following Enters until the enclosing region is left. Its visit is the
  // region's (from the region's Enter, with its counters' start values; parameters in a row
  // nest, each from the same Enter). Outside every region there is nothing to hang it below.
  void parameter(const Event& e) {
    // Score-P's profile ignores a parameter at its call-tree depth limit (regions and parameters
    // open; SCOREP_PROFILING_MAX_CALLPATH_DEPTH, 100 unless set): parameters set in a loop
    // without a region around them nest one below the other until then.
    if (stack_.empty() || e.region == kNone || stack_.size() >= kScorePMostDepth) return;
    const Frame outer = stack_.back();
    const auto c = child(outer.cnode, parameter_region(e));
    column_->grow(cnode_parent_.size(), slots_, used_);
    first_enter_[c] = std::min(first_enter_[c], outer.enter);  // Score-P's first visit of it: the region's
    stack_.push_back({c, outer.enter, outer.suspended, true});
    const auto from = snapshots_.size() - slots_;
    for (std::size_t s = 0; s < slots_; ++s) snapshots_.push_back(snapshots_[from + s]);
  }

  // The parameter call path's region of a parameter event, one per distinct (name, type,
  // value), numbered after TASKS and THREADS. `text` is Score-P's region name for it where it
  // keeps one (`instance=5`): int64 values as signed, uint64 as unsigned decimals, strings as
  // they are. `value` is what Score-P's Cube writer puts into a numeric <parameter>: the value
  // as a signed 64-bit integer (a uint64 above 2^63 - 1 wraps, as Score-P stores it so) printed
  // as a double with C's %g (six significant digits: 1234567 is 1.23457e+06).
  std::uint32_t parameter_region(const Event& e) {
    ParameterValue v;
    v.name = defs_.parameters[e.region].name;
    if (e.type == EventType::ParameterString) {
      if (const auto s = defs_.string_index.find(e.request); s != kNone) v.value = defs_.strings[s];  // (the reader checked it)
      v.text = v.name + "=" + v.value;
    } else {
      const auto signed_value = static_cast<std::int64_t>(e.request);
      v.numeric = true;
      v.text = v.name + "=" + (e.type == EventType::ParameterInt ? std::to_string(signed_value) : std::to_string(e.request));
      char printed[32];
      std::snprintf(printed, sizeof printed, "%g", static_cast<double>(signed_value));
      v.value = printed;
      // Score-P's profile keeps its dynamic regions' `instance` (an int64 parameter) as a region.
      v.instance = e.type == EventType::ParameterInt && v.name == "instance";
    }
    return parameter_region(v);
  }
  std::uint32_t parameter_region(const ParameterValue& v) {
    std::string key = (v.numeric ? "n" : "s") + v.text;  // (a string `size` "0" is not int64 size 0)
    const auto [it, added] = parameter_region_.try_emplace(std::move(key), threads_region_ + 1 + std::uint32_t(parameter_values_.size()));
    if (added) parameter_values_.push_back(v);
    return it->second;
  }

  // Score-P 8.4's form of the parameters' call paths (its profile post-processing; docs/trace.md,
  // "Parameters"), on the finished tree before anything is numbered for the profile. A call
  // path R with parameter call paths below it becomes, per parameter call path P (parameters in
  // a row nest: P's chain of parameters from R down), a call path of R's region under R's parent
  // with P's parameters, holding P's values and subtree. R keeps its values less those of its
  // parameter call paths (visits, time, counters; not its shortest and longest visit, nor
  // bytes and hits, which are its own events'), and on a location where no visit of its own is
  // left, R and the call paths below it that are not parameters' are gone. An int64 parameter
  // `instance` (Score-P's dynamic regions) stays a region `instance=value` and takes its
  // visits from its parent's. Afterwards `cnode_lists_` names each call path's parameters and
  // `row_of_` maps the call paths the observers saw to the new ones.
  void apply_parameters() {
    const auto n = static_cast<std::uint32_t>(cnode_parent_.size());
    row_of_.resize(n);
    for (std::uint32_t c = 0; c < n; ++c) row_of_[c] = c;
    cnode_lists_.assign(n, 0);
    if (parameter_values_.empty()) return;
    const auto value_of = [&](std::uint32_t c) -> const ParameterValue* {
      const auto r = cnode_region_[c];
      return r > threads_region_ ? &parameter_values_[r - threads_region_ - 1] : nullptr;
    };
    // Per call path: a parameter's (not an instance), with parameters below it, the region
    // call path R heading its chain of parameters, the chain, where it goes (its new parent).
    std::vector<bool> param(n), split(n), instance(n);
    std::vector<std::uint32_t> owner(n), up(n);
    std::vector<std::vector<std::uint32_t>> chain(n);
    for (std::uint32_t c = 0; c < n; ++c) {
      const auto v = value_of(c);
      const auto parent = cnode_parent_[c];
      instance[c] = v && v->instance && parent != kNone;
      param[c] = v && !instance[c] && parent != kNone;  // (a parameter always has its region above it)
      if (param[c]) {
        split[c] = split[parent] = true;
        owner[c] = param[parent] ? owner[parent] : parent;
        if (param[parent]) chain[c] = chain[parent];
        chain[c].push_back(cnode_region_[c]);
        up[c] = cnode_parent_[owner[c]];
      } else {
        owner[c] = c;
        up[c] = parent;
      }
    }
    // Per location: subtract, then drop what Score-P's tree of that location no longer has.
    std::vector<bool> alive(n), touched(n), gone(n);
    std::vector<std::uint64_t> visited;
    for (auto& col : columns_) {
      const auto m = static_cast<std::uint32_t>(std::min<std::size_t>(col.fixed[kVisits].size(), n));
      auto& visits = col.fixed[kVisits];
      visited.assign(visits.begin(), visits.begin() + m);
      for (std::uint32_t c = 0; c < m; ++c) {
        const auto parent = cnode_parent_[c];
        if (instance[c]) visits[parent] -= std::min(visits[parent], visits[c]);
        if (param[c]) subtract(col, parent, c);  // (c's own parameters later: its values whole here)
      }
      for (std::uint32_t c = 0; c < m; ++c) {
        const bool left = split[c] ? visits[c] > 0 : visited[c] > 0;
        gone[c] = (split[c] && visited[c] > 0 && visits[c] == 0) || (up[c] != kNone && up[c] < m && gone[up[c]]);
        if (gone[c]) clear(col, c), touched[c] = true;
        if (left && !gone[c]) alive[c] = true;
      }
    }
    // A call path stays where some location has it, or something below it stays; call paths
    // neither split nor dropped anywhere stay as they were. With observers (the trace analyses)
    // every call path stays, those Score-P drops with zeros in the profile's metrics: the
    // observers' values at a call path stay there, whichever ranks read which locations (which
    // call paths some location keeps is known only once all ranks' profiles are unified).
    std::vector<bool> kept(n, !observers_.empty());
    for (std::uint32_t c = n; c-- > 0;) {
      if (alive[c] || !(split[c] || touched[c])) kept[c] = true;
      if (kept[c] && up[c] != kNone) kept[up[c]] = true;
    }
    for (std::uint32_t c = 0; c < n; ++c)
      if (up[c] != kNone && !kept[up[c]]) kept[c] = false;
    // The new tree: siblings of one region and the same written parameters are one call path.
    std::vector<std::uint32_t> parent, region, lists;
    std::vector<std::uint64_t> first;
    std::map<std::tuple<std::uint32_t, std::uint32_t, std::uint32_t>, std::uint32_t> made;
    std::map<std::vector<cube::Attributes>, std::uint32_t> list_id;
    parameter_lists_.assign(1, {});
    for (std::uint32_t c = 0; c < n; ++c) {
      if (!kept[c]) {
        row_of_[c] = kNone;  // (only without observers, who would need it)
        continue;
      }
      std::uint32_t list = 0;
      if (param[c]) {
        auto written = written_parameters(chain[c]);
        const auto [it, added] = list_id.try_emplace(written, static_cast<std::uint32_t>(parameter_lists_.size()));
        if (added) parameter_lists_.push_back(std::move(written));
        list = it->second;
      }
      const auto p = up[c] == kNone ? kNone : row_of_[up[c]];
      const auto r = cnode_region_[owner[c]];
      const auto [it, added] = made.try_emplace(std::make_tuple(p, r, list), static_cast<std::uint32_t>(parent.size()));
      if (added) parent.push_back(p), region.push_back(r), lists.push_back(list), first.push_back(profile::kNeverVisited);
      row_of_[c] = it->second;
      first[it->second] = std::min(first[it->second], first_enter_[c]);
    }
    for (auto& col : columns_) col = moved(col, kept, static_cast<std::uint32_t>(parent.size()));
    cnode_parent_ = std::move(parent), cnode_region_ = std::move(region), cnode_lists_ = std::move(lists);
    first_enter_ = std::move(first);
    child_.clear();  // (the builder takes no more events)
  }

  // A parameter chain (regions of parameter call paths, outermost first) as Score-P's Cube
  // writer writes it: the numeric parameters in order, then the strings in order.
  std::vector<cube::Attributes> written_parameters(const std::vector<std::uint32_t>& chain) const {
    std::vector<cube::Attributes> out;
    for (const bool numeric : {true, false})
      for (const auto r : chain) {
        const auto& v = parameter_values_[r - threads_region_ - 1];
        if (v.numeric == numeric)
          out.push_back({{"partype", numeric ? "numeric" : "string"}, {"parkey", v.name}, {"parvalue", v.value}});
      }
    return out;
  }

  // Call path `from`'s visits, time and counters taken from `c`'s (one location).
  void subtract(Column& col, std::uint32_t c, std::uint32_t from) const {
    for (const auto f : {kVisits, kTime}) col.fixed[f][c] -= std::min(col.fixed[f][c], col.fixed[f][from]);
    for (std::size_t s = 0; s < slots_; ++s)
      add_counter(col.counters[std::size_t(c) * slots_ + s], col.counters[std::size_t(from) * slots_ + s], slot_double_(s),
                  true);
  }

  // Call path `c` never visited on this location.
  void clear(Column& col, std::uint32_t c) const {
    for (std::size_t f = 0; f < kFixed; ++f)
      if (used_[f]) col.fixed[f][c] = f == kMinTime ? ~std::uint64_t(0) : 0;
    std::fill_n(col.counters.begin() + std::size_t(c) * slots_, slots_, 0);
  }

  // A location's values on the new call paths (row_of_), those of call paths made one merged.
  Column moved(const Column& col, const std::vector<bool>& kept, std::uint32_t cnodes) const {
    Column out;
    for (std::size_t f = 0; f < kFixed; ++f)
      if (used_[f]) out.fixed[f].assign(cnodes, f == kMinTime ? ~std::uint64_t(0) : 0);
    out.counters.assign(std::size_t(cnodes) * slots_, 0);
    const auto m = std::min(col.fixed[kVisits].size(), kept.size());
    for (std::size_t c = 0; c < m; ++c) {
      if (!kept[c]) continue;
      const auto to = row_of_[c];
      for (std::size_t f = 0; f < kFixed; ++f) {
        if (!used_[f]) continue;
        auto& cell = out.fixed[f][to];
        const auto v = col.fixed[f][c];
        cell = f == kMinTime ? std::min(cell, v) : f == kMaxTime ? std::max(cell, v) : cell + v;
      }
      for (std::size_t s = 0; s < slots_; ++s)
        add_counter(out.counters[std::size_t(to) * slots_ + s], col.counters[c * slots_ + s], slot_double_(s));
    }
    return out;
  }

  // One visit of call path `c` lasting `d` ticks, its counters' start values at `start`.
  void close(std::uint32_t c, std::uint64_t d, const std::uint64_t* start) {
    auto& col = *column_;
    col.fixed[kVisits][c] += 1;
    col.fixed[kTime][c] += d;
    col.fixed[kMinTime][c] = std::min(col.fixed[kMinTime][c], d);
    col.fixed[kMaxTime][c] = std::max(col.fixed[kMaxTime][c], d);
    if (slots_) {
      auto* out = col.counters.data() + std::size_t(c) * slots_;
      for (std::size_t s = 0; s < slots_; ++s) {
        if (slot_double_(s)) {
          double a, b, sum;
          std::memcpy(&a, &current_[s], 8);
          std::memcpy(&b, start + s, 8);
          std::memcpy(&sum, out + s, 8);
          sum += a - b;
          std::memcpy(out + s, &sum, 8);
        } else {
          out[s] += current_[s] - start[s];  // wraps as the counters do (int64 and uint64 alike)
        }
      }
    }
  }

  // OpenMP tasks as Score-P's profile places them (docs/traces.md, "OpenMP tasks"): a task's
  // call paths below <root>/TASKS/<task region>, the root being the one of the call tree its
  // thread's implicit task is in, merged over instances; and at every run of a task a visit of
  // <task region> below where the implicit task was (the barrier or taskwait that ran it),
  // lasting that run (the pointer). A suspended task's frames do not count the time it was
  // suspended; the implicit task is never suspended.
  std::uint32_t task_root(std::uint32_t region, std::uint64_t time) {
    const auto& implicit = tasks_[0].frames;
    const auto tasks = child(implicit.empty() ? kNone : cnode_root_[implicit.front().cnode], tasks_region_);
    first_enter_[tasks] = std::min(first_enter_[tasks], time);
    open_pointer(region, time);
    return child(tasks, region);
  }

  // At the start of a task's run (its first Enter, or its resumption).
  void open_pointer(std::uint32_t region, std::uint64_t time) {
    const auto& implicit = tasks_[0].frames;
    pointer_cnode_ = child(implicit.empty() ? kNone : implicit.back().cnode, region);
    column_->grow(cnode_parent_.size(), slots_, used_);
    first_enter_[pointer_cnode_] = std::min(first_enter_[pointer_cnode_], time);
    pointer_enter_ = time;
    pointer_snapshot_ = current_;
    pointer_open_ = true;
  }

  // ThreadTaskSwitch to `key` (0: the implicit task) at `time`, or a ThreadTaskComplete's
  // return to the implicit task.
  void switch_task(std::uint64_t key, std::uint64_t time) {
    if (key == current_task_) return;
    if (pointer_open_) {
      close(pointer_cnode_, time > pointer_enter_ ? time - pointer_enter_ : 0, pointer_snapshot_.data());
      pointer_open_ = false;
    }
    if (current_task_ != 0 && stack_.empty()) {
      tasks_.erase(current_task_);  // nothing open to resume: one entry per task with frames at most
    } else {
      auto& out = tasks_[current_task_];
      out.frames.swap(stack_);
      out.snapshots.swap(snapshots_);
      out.suspended = suspended_;
      out.switched_out = time;
    }
    auto& in = tasks_[key];
    stack_.clear(), snapshots_.clear();
    stack_.swap(in.frames);
    snapshots_.swap(in.snapshots);
    const auto away = time > in.switched_out ? time - in.switched_out : 0;
    suspended_ = key == 0 ? 0 : in.suspended + (stack_.empty() ? 0 : away);
    current_task_ = key;
    if (key != 0 && !stack_.empty()) open_pointer(cnode_region_[stack_.front().cnode], time);
  }

  void add(Fixed what, std::uint64_t bytes) {
    if (!stack_.empty() && used_[what]) column_->fixed[what][stack_.back().cnode] += bytes;
  }

  void metric(const Event& e) {
    if (e.metric == kNone) return;
    const auto& m = defs_.metrics[e.metric];
    const auto n = std::min<std::size_t>(m.members.size(), e.metric_count);
    for (std::size_t j = 0; j < n; ++j) {
      const auto member = m.members[j];
      if (member == kNone || member_slot_[member] == kNone) continue;
      const auto s = member_slot_[member];
      const auto v = e.metric_values[j];
      if (slot_double_(s)) {
        const double x = as_double(e.metric_types[j], v);
        std::memcpy(&current_[s], &x, 8);
      } else {
        current_[s] = value_type(e.metric_types[j]) == ValueType::Double
                          ? static_cast<std::uint64_t>(static_cast<std::int64_t>(v.floating_point))
                          : v.unsigned_int;
      }
    }
  }

  bool slot_double_(std::size_t s) const { return defs_.metric_members[slot_members_[s]].value_type == "double"; }

  // The observers that do work (fans taken apart), and per event type those that want it.
  void take_apart(CallPathObserver* o) {
    const auto parts = o->parts();
    if (!parts.empty()) {
      for (auto* p : parts)
        if (p) take_apart(p);
      return;
    }
    observers_.push_back(o);
    const auto wants = o->interest();
    for (std::size_t t = 0; t < by_type_.size(); ++t)
      if (wants.test(t)) by_type_[t].push_back(o);
  }

  const Definitions& defs_;
  std::vector<CallPathObserver*> observers_;
  std::vector<std::uint32_t> rows_;
  std::array<std::vector<CallPathObserver*>, kEventTypeCount> by_type_;
  std::vector<std::uint32_t> cnode_parent_, cnode_region_;
  std::vector<std::uint32_t> cnode_root_;  // per call path the root of its tree (TASKS hangs below it)
  std::vector<std::uint64_t> first_enter_;  // per call path, over the locations read so far
  std::unordered_map<std::uint64_t, std::uint32_t> child_;
  // The children entered lately, by (parent, region): a loop calling several regions in turn
  // finds them here, not in child_ (whose lookup was the builder's largest cost).
  struct CachedChild {
    std::uint32_t parent = kNone - 1, region = kNone, child = 0;  // (no call path is kNone - 1)
  };
  static constexpr unsigned kChildCacheBits = 10;
  std::vector<CachedChild> child_cache_ = std::vector<CachedChild>(std::size_t(1) << kChildCacheBits);

  std::uint32_t cached_child(std::uint32_t parent, std::uint32_t region) {
    const std::uint32_t mixed = parent * 0x9E3779B1u + region * 0x85EBCA77u;
    auto& entry = child_cache_[mixed >> (32 - kChildCacheBits)];
    if (entry.parent != parent || entry.region != region) entry = {parent, region, child(parent, region)};
    return entry.child;
  }
  std::vector<std::uint32_t> member_slot_, slot_members_;
  std::size_t slots_ = 0;
  FixedUsed used_{};
  struct RegionSet {
    std::vector<std::uint8_t> bits;
    void insert(std::uint32_t r) {
      if (r >= bits.size()) bits.resize(r + 1, 0);
      bits[r] = 1;
    }
    bool count(std::uint32_t r) const { return r < bits.size() && bits[r]; }
  } parallel_region_;
  std::vector<Column> columns_;
  Column* column_ = nullptr;
  std::vector<Frame> stack_;
  std::vector<std::uint64_t> snapshots_, current_;
  std::uint32_t location_ = kNone, group_ = kNone - 1;
  std::uint64_t last_time_ = 0;
  std::vector<Interval> intervals_, opened_, forks_;
  // OMPT parallel region id -> where and when it opened (this process), and per open fork on
  // this location its depth in stack_ and team.
  struct Team {
    std::uint32_t cnode;
    std::uint64_t enter, leave;
  };
  std::unordered_map<std::uint64_t, Team> team_of_;
  std::vector<std::pair<std::size_t, std::uint64_t>> team_frames_;
  std::vector<std::uint64_t> reach_;  // per sorted interval: the latest leave up to it
  bool cpu_thread_ = true;
  // OpenMP tasks: the stacks of the location's tasks not running (0 its implicit task's while
  // an explicit one runs), the running one's, its suspended ticks so far, the open pointer.
  std::unordered_map<std::uint64_t, Task> tasks_;
  std::uint64_t current_task_ = 0, suspended_ = 0;
  // TASKS and THREADS, after the trace's regions (in the profile where used).
  std::uint32_t tasks_region_ = kNone, threads_region_ = kNone;
  std::uint32_t program_ = kNone, program_location_ = kNone;  // the process's program root, who entered it
  // Parameters' call paths' regions by type and `name=value`, and their values (region
  // threads_region_ + 1 + i).
  std::unordered_map<std::string, std::uint32_t> parameter_region_;
  std::vector<ParameterValue> parameter_values_;
  // After apply_parameters: per call path its parameters (0: none; else parameter_lists_[i]),
  // and per call path before it the one after.
  std::vector<std::uint32_t> cnode_lists_, row_of_;
  std::vector<std::vector<cube::Attributes>> parameter_lists_;
  bool pointer_open_ = false;
  std::uint32_t pointer_cnode_ = kNone;
  std::uint64_t pointer_enter_ = 0;
  std::vector<std::uint64_t> pointer_snapshot_;
  Event program_event_;  // PROGRAM_BEGIN/END as the program region's Enter/Leave
};

cube::Metric make_metric(const std::string& name, const std::string& display, const char* dtype, bool inclusive,
                         const std::string& unit, const std::string& description) {
  cube::Metric m;
  m.uniq_name = name;
  m.disp_name = display;
  m.dtype = *cube::parse_data_type(dtype);
  m.kind = inclusive ? cube::MetricKind::Inclusive : cube::MetricKind::Exclusive;
  m.uom = unit;
  m.descr = description;
  return m;
}

profile::LocalProfile ProfileSink::finish(const std::vector<std::uint32_t>& locations) {
  apply_parameters();
  profile::LocalProfile p;
  // Metrics as Score-P names them, each with its column: a fixed one, or kFixed + counter slot.
  std::vector<std::size_t> source;
  const auto metric = [&](std::size_t column, const std::string& name, const std::string& display, const char* dtype,
                          bool inclusive, const std::string& unit, const std::string& description) {
    p.metrics.push_back(make_metric(name, display, dtype, inclusive, unit, description));
    source.push_back(column);
  };
  metric(kVisits, "visits", "Visits", "UINT64", false, "occ", "Number of visits");
  metric(kTime, "time", "Time", "DOUBLE", true, "sec", "Total CPU allocation time");
  metric(kMinTime, "min_time", "Minimum Inclusive Time", "MINDOUBLE", false, "sec",
         "Minimum inclusive CPU allocation time");
  metric(kMaxTime, "max_time", "Maximum Inclusive Time", "MAXDOUBLE", false, "sec",
         "Maximum inclusive CPU allocation time");
  if (used_[kBytesPut]) {  // only where the trace defines RMA windows (docs/trace.md)
    metric(kBytesPut, "bytes_put", "bytes_put", "UINT64", false, "bytes", "Bytes sent in one-sided communication");
    metric(kBytesGet, "bytes_get", "bytes_get", "UINT64", false, "bytes", "Bytes received in one-sided communication");
  }
  // The counters before the message bytes, as Score-P orders them (its 1.4, 7 and 9 reports).
  for (std::size_t slot = 0; slot < slots_; ++slot) {
    const auto& mm = defs_.metric_members[slot_members_[slot]];
    const char* dtype = mm.value_type == "double" ? "DOUBLE" : mm.value_type == "int64" ? "INT64" : "UINT64";
    metric(kFixed + slot, mm.name, mm.name, dtype, true, mm.unit.empty() ? "#" : mm.unit, mm.description);
  }
  metric(kBytesSent, "bytes_sent", "bytes_sent", "UINT64", false, "bytes", "Bytes sent");
  metric(kBytesReceived, "bytes_received", "bytes_received", "UINT64", false, "bytes", "Bytes received");
  // Score-P's sample count where the trace has calling contexts (unwinding), last.
  if (used_[kHits]) metric(kHits, "hits", "Hits", "UINT64", false, "occ", "Number of hits");
  for (const auto& r : defs_.regions) {
    cube::Region c;
    c.name = r.name;
    c.mangled_name = r.canonical_name.empty() ? r.name : r.canonical_name;
    c.mod = r.file;
    // Cube's paradigm names are Score-P's: OTF2's measurement system is "measurement" there
    // (the program's root region, TRACE BUFFER FLUSH; cubescale score counts it as SCOREP).
    c.paradigm = r.paradigm == "measurement_system" ? "measurement" : r.paradigm;
    c.role = r.role;
    c.descr = r.description;
    // OTF2's 0 is "no line"; Score-P's profiles say -1 there (every shared report, Score-P 1.3
    // to 9), and Cube matches regions by name, file and lines when it merges or compares two.
    c.begin = r.begin_line == 0 ? -1 : std::int64_t(r.begin_line);
    c.end = r.end_line == 0 ? -1 : std::int64_t(r.end_line);
    p.regions.push_back(std::move(c));
  }
  // Score-P's artificial roots of the tasks' and of the unplaced threads' call paths, where used
  // (numbered after the trace's regions in that order; `region_of` maps ours to the profile's).
  std::vector<std::uint32_t> region_of = {tasks_region_, threads_region_};
  struct Artificial {
    std::uint32_t ours;
    const char *name, *paradigm;
  };
  for (const auto& [ours, name, paradigm] :
       {Artificial{tasks_region_, "TASKS", "openmp"}, Artificial{threads_region_, "THREADS", "pthread"}}) {
    if (std::find(cnode_region_.begin(), cnode_region_.end(), ours) == cnode_region_.end()) continue;
    region_of[ours - tasks_region_] = static_cast<std::uint32_t>(p.regions.size());
    cube::Region c;
    c.name = c.mangled_name = name;
    c.paradigm = paradigm;
    c.role = "artificial";
    p.regions.push_back(std::move(c));
  }
  // Score-P's regions of the `instance` parameter's call paths, `instance=value` (user code,
  // without file or lines), those left after apply_parameters.
  region_of.resize(2 + parameter_values_.size(), kNone);
  std::vector<bool> used_region(parameter_values_.size());
  for (const auto r : cnode_region_)
    if (r > threads_region_) used_region[r - threads_region_ - 1] = true;
  for (std::size_t i = 0; i < parameter_values_.size(); ++i) {
    if (!used_region[i]) continue;
    region_of[2 + i] = static_cast<std::uint32_t>(p.regions.size());
    cube::Region c;
    c.name = c.mangled_name = parameter_values_[i].text;
    c.paradigm = "user";
    c.role = "unknown";
    c.begin = c.end = -1;
    p.regions.push_back(std::move(c));
  }
  const auto profile_region = [&](std::uint32_t r) { return r < tasks_region_ ? r : region_of[r - tasks_region_]; };
  // Call paths in preorder, children in order of first visit (as Score-P presents them);
  // unification keeps the earliest visit of every call path over all ranks' locations.
  const auto n = cnode_parent_.size();
  std::vector<std::vector<std::uint32_t>> children(n);
  std::vector<std::uint32_t> roots;
  for (std::uint32_t c = 0; c < n; ++c) (cnode_parent_[c] == kNone ? roots : children[cnode_parent_[c]]).push_back(c);
  const auto by_first_enter = [&](std::uint32_t a, std::uint32_t b) { return first_enter_[a] < first_enter_[b]; };
  std::stable_sort(roots.begin(), roots.end(), by_first_enter);
  for (auto& list : children) std::stable_sort(list.begin(), list.end(), by_first_enter);
  std::vector<std::uint32_t> order, new_index(n);
  order.reserve(n);
  std::vector<std::uint32_t> todo(roots.rbegin(), roots.rend());
  while (!todo.empty()) {
    const auto c = todo.back();
    todo.pop_back();
    new_index[c] = static_cast<std::uint32_t>(order.size());
    order.push_back(c);
    for (auto it = children[c].rbegin(); it != children[c].rend(); ++it) todo.push_back(*it);
  }
  rows_.resize(row_of_.size());  // the observers saw the call paths before apply_parameters
  for (std::size_t c = 0; c < row_of_.size(); ++c) rows_[c] = row_of_[c] < n ? new_index[row_of_[c]] : 0;
  for (auto* o : observers_) o->rows(rows_);
  const bool parameters = parameter_lists_.size() > 1;
  for (auto c : order) {
    p.cnode_parents.push_back(cnode_parent_[c] == kNone ? cube::kNoParent : new_index[cnode_parent_[c]]);
    p.cnode_regions.push_back(profile_region(cnode_region_[c]));
    p.cnode_first_visit.push_back(first_enter_[c]);
    if (parameters) p.cnode_parameters.push_back(parameter_lists_[cnode_lists_[c]]);
  }
  for (auto l : locations) p.locations.push_back({defs_.locations[l].name, location_class(defs_.locations[l])});
  const auto cols = columns_.size();
  std::vector<bool> slot_double(slots_);
  for (std::size_t s = 0; s < slots_; ++s) slot_double[s] = slot_double_(s);
  for (auto& col : columns_) col.fill_unvisited_ancestors(cnode_parent_, cnode_region_, tasks_region_, slot_double);
  const double tick = 1.0 / static_cast<double>(defs_.clock.resolution);
  for (std::size_t m = 0; m < p.metrics.size(); ++m) {
    cube::Severity s(p.metrics[m].dtype, n, cols);
    for (std::size_t row = 0; row < n; ++row) {
      const auto c = order[row];
      auto* out = s.row(row);
      for (std::size_t l = 0; l < cols; ++l) {
        const auto& col = columns_[l];
        if (c >= col.fixed[kVisits].size()) continue;  // the location never reached this call path
        const bool visited = col.fixed[kVisits][c] != 0;
        std::uint64_t bits = 0;
        if (const auto f = source[m]; f < kFixed) {
          const auto v = col.fixed[f][c];
          if (f == kTime || f == kMinTime || f == kMaxTime) {
            // An unvisited call path holds its children's time, shortest and longest visit
            // (fill_unvisited_ancestors), or none.
            const bool none = !visited && f == kMinTime && v == ~std::uint64_t(0);
            const double sec = none ? 0.0 : static_cast<double>(v) * tick;
            std::memcpy(&bits, &sec, 8);
          } else {
            bits = v;
          }
        } else {
          bits = col.counters[std::size_t(c) * slots_ + (f - kFixed)];
        }
        std::memcpy(out + l * 8, &bits, 8);
      }
    }
    s.mark_nonzero_rows();
    p.values.push_back(std::move(s));
  }
  return p;
}

}  // namespace

profile::LocalProfile trace_profile(const Trace& trace, const std::vector<std::uint32_t>& locations,
                                    ProfileStats* stats, CallPathObserver* observer) {
  ProfileSink sink(trace, locations.size(), observer);
  trace.read(locations, sink);
  auto p = sink.finish(locations);
  if (stats) *stats = sink.stats_;
  return p;
}

profile::LocalProfile trace_profile(const Trace& trace, const std::vector<std::vector<std::uint32_t>>& parts,
                                    ProfileStats* stats, const std::vector<CallPathObserver*>& observers) {
  if (parts.empty() || observers.size() != parts.size())
    throw std::invalid_argument("trace_profile: one observer per part, at least one part");
  std::vector<std::unique_ptr<ProfileSink>> sinks;
  for (std::size_t k = 0; k < parts.size(); ++k)
    sinks.push_back(std::make_unique<ProfileSink>(trace, parts[k].size(), observers[k]));
  std::vector<std::exception_ptr> failed(parts.size());
  auto read = [&](std::size_t k) {
    try {
      trace.read(parts[k], *sinks[k]);
    } catch (...) {
      failed[k] = std::current_exception();
    }
  };
  std::vector<std::thread> threads;
  try {
    for (std::size_t k = 1; k < parts.size(); ++k) threads.emplace_back(read, k);
  } catch (...) {  // no thread to be had: the rest in turn here
    for (std::size_t k = threads.size() + 1; k < parts.size(); ++k) read(k);
  }
  read(0);
  for (auto& t : threads) t.join();
  for (const auto& e : failed)  // the error one pass in order would have met first
    if (e) std::rethrow_exception(e);
  auto& first = *sinks[0];
  std::vector<std::vector<std::uint32_t>> maps(parts.size());
  for (std::size_t k = 1; k < parts.size(); ++k) maps[k] = first.absorb(*sinks[k]);
  std::vector<std::uint32_t> all;
  for (const auto& part : parts) all.insert(all.end(), part.begin(), part.end());
  auto p = first.finish(all);
  for (std::size_t k = 1; k < parts.size(); ++k) {
    std::vector<std::uint32_t> rows(maps[k].size());
    for (std::size_t c = 0; c < rows.size(); ++c) rows[c] = first.rows()[maps[k][c]];
    const auto& later = sinks[k]->observers();
    if (later.size() != first.observers().size()) throw std::logic_error("trace_profile: parts with unlike observers");
    for (std::size_t i = 0; i < later.size(); ++i) {
      later[i]->rows(rows);
      first.observers()[i]->absorb(*later[i]);
    }
  }
  if (stats) *stats = first.stats_;
  return p;
}

std::size_t most_parts(std::size_t trace_locations, std::uint64_t events) {
  // Each part beyond the first costs its observers' per-location tables (about 128 bytes per
  // location of the trace): all of them together at most 64 MiB or 16 bytes per event.
  const auto tables = std::uint64_t(128) * std::max<std::size_t>(trace_locations, 1);
  const auto room = std::max<std::uint64_t>(std::uint64_t(64) << 20, std::min<std::uint64_t>(events, std::uint64_t(1) << 50) * 16);
  return static_cast<std::size_t>(std::min<std::uint64_t>(1 + room / tables, ~std::uint32_t(0)));
}

std::vector<std::uint64_t> location_weights(const Trace& trace, const std::vector<std::uint32_t>& locations) {
  const auto& defs = trace.definitions();
  // Unchecked here: a hostile count only unbalances the parts (reading reports it); capped so
  // that their sum cannot overflow.
  constexpr std::uint64_t kMostWeight = std::uint64_t(1) << 40;
  std::vector<std::uint64_t> weight(locations.size(), 1);
  for (std::size_t i = 0; i < locations.size(); ++i) {
    const auto n = locations[i] < defs.locations.size() ? defs.locations[locations[i]].events : 0;
    if (n == 0) return std::vector<std::uint64_t>(locations.size(), 1);
    weight[i] = std::min(n, kMostWeight);
  }
  return weight;
}

std::vector<std::vector<std::uint32_t>> part_locations(const Trace& trace, const std::vector<std::uint32_t>& locations,
                                                       std::size_t count) {
  const auto& defs = trace.definitions();
  const auto weight = location_weights(trace, locations);
  const bool announced = std::all_of(locations.begin(), locations.end(), [&](std::uint32_t l) {
    return l < defs.locations.size() && defs.locations[l].events > 0;
  });
  std::uint64_t total = 0;
  for (auto w : weight) total += w;
  count = std::min({count, most_parts(defs.locations.size(), announced ? total : 0), kMostParts});
  std::vector<std::vector<std::uint32_t>> parts(1);
  std::uint64_t done = 0;
  for (std::size_t i = 0; i < locations.size(); ++i) {
    // Cut before location i where its process is not the one before's, once this part has its share.
    const auto group = locations[i] < defs.locations.size() ? defs.locations[locations[i]].group : kNone;
    const bool may_cut =
        i > 0 && (group == kNone || locations[i - 1] >= defs.locations.size() || group != defs.locations[locations[i - 1]].group);
    if (may_cut && parts.size() < count && !parts.back().empty() &&
        static_cast<long double>(done) * count >= static_cast<long double>(total) * parts.size())
      parts.emplace_back();
    parts.back().push_back(locations[i]);
    done += weight[i];
  }
  return parts;
}

void CallPathObserver::absorb(CallPathObserver&) {
  throw std::logic_error("this observer cannot take over another part's locations (one part only)");
}

}  // namespace cubescale::trace
