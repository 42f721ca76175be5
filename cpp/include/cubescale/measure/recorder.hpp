#pragma once
// Call-path summarization at run time (paper 002, section 5.1): each thread keeps its own
// call tree, created on the first visit of a call path, and per call path its visits,
// inclusive time, minimum and maximum time of one visit, bytes sent and received and user
// counters. After a call path exists, enter and exit neither lock nor allocate: a thread
// finds the child of its current node by the region (the last child entered is checked
// first), pushes or pops a frame of a stack reserved to the depth limit, and reads a
// monotonic clock (the invariant TSC where there is one, clock.hpp). Memory per thread grows with the call paths visited, never with the calls.
//
// Regions are registered once (under a lock) and filtered then: an excluded region costs a
// counter increment on enter and exit. Calls deeper than the depth limit go into one child
// "COLLAPSE" of the call path at the limit, as Score-P's profile keeps them
// (SCOREP_PROFILING_MAX_CALLPATH_DEPTH): the outermost such call is its visit and time, the
// calls inside it a counter increment each. Region ids stay
// valid for the life of the process: a new measurement (scope.hpp's reset) takes over the
// regions of the last one and decides their filtering again, so ids kept in static variables
// (CUBESCALE_REGION) or by other languages still name the same region. Finalization turns
// every thread's tree into one local profile (cubescale::profile::LocalProfile): the union of
// the threads' call trees, one location per thread, the pipeline's input for unification and
// collation.
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "cubescale/measure/clock.hpp"
#include "cubescale/measure/filter.hpp"
#include "cubescale/profile/local_profile.hpp"

namespace cubescale::measure {

using RegionId = std::uint32_t;
class ThreadTrace;
class TraceWriter;
class Recorder;
// A traced thread's Enter and Leave events (trace_writer.hpp); out of line, off the untraced path.
void trace_enter(ThreadTrace* trace, RegionId region, std::int64_t now);
void trace_leave(ThreadTrace* trace, RegionId region, std::int64_t now);

struct RegionInfo {
  std::string name, file, paradigm = "user", role = "function";
  std::int64_t line = -1;
  bool recorded = true;  // false: filtered out, or ignored
  bool ignored = false;  // the measurement's own code: never recorded, whatever the filter
};

// A thread's call tree and stack. Used only by its own thread while measuring.
class ThreadRecorder {
 public:
  static constexpr std::uint32_t kNone = 0xffffffffu;
  struct Node {
    RegionId region;
    std::uint32_t parent, first_child = kNone, next_sibling = kNone, last_entered = kNone;
    std::uint64_t visits = 0;
    std::int64_t inclusive = 0, min = INT64_MAX, max = 0;  // clock ticks (clock.hpp)
    std::uint64_t bytes_sent = 0, bytes_received = 0;
  };

  // `owner` registers the COLLAPSE region when a call first goes deeper than `depth_limit`
  // (without one, such calls are counted on the frame at the limit only).
  ThreadRecorder(std::string name, std::size_t depth_limit, Recorder* owner = nullptr);
  // `recorded` is the region's filter decision (RegionInfo::recorded).
  void enter(RegionId region, bool recorded, std::int64_t now) {
    if (!recorded || stack_.size() >= depth_limit_) {
      if (recorded && stack_.size() == depth_limit_) [[unlikely]] {
        enter_collapse(now);  // the outermost call below the limit
        return;
      }
      // Not recorded (or inside a COLLAPSE): counted on the frame it runs in, so that its
      // exit (LIFO) finds it.
      ++(stack_.empty() ? skipped_at_root_ : stack_.back().skipped);
      return;
    }
    const auto node = child(stack_.empty() ? kNone : stack_.back().node, region);
    stack_.push_back({node, now, 0});
    if (trace_) [[unlikely]] trace_enter(trace_, region, now);
  }
  void exit(std::int64_t now) {
    auto& skipped = stack_.empty() ? skipped_at_root_ : stack_.back().skipped;
    if (skipped > 0) {
      --skipped;
      return;
    }
    if (stack_.empty()) {
      ++unmatched_exits_;
      return;
    }
    const auto frame = stack_.back();
    stack_.pop_back();
    auto& n = nodes_[frame.node];
    const auto d = now - frame.start;
    ++n.visits;
    n.inclusive += d;
    if (d < n.min) n.min = d;
    if (d > n.max) n.max = d;
    // Last: a buffer flush inside may enter a new call path, and nodes_ may move (n dangles).
    if (trace_) [[unlikely]] trace_leave(trace_, n.region, now);
  }
  // An enter of an id no Recorder::region() returned: counted (mismatch_warning.hpp) and
  // skipped as a filtered region is, so that its exit matches it.
  void enter_unknown() {
    ++unknown_enters_;
    ++(stack_.empty() ? skipped_at_root_ : stack_.back().skipped);
  }
  // Bytes and counters go to the current call path (ignored outside any region).
  void add_bytes(std::uint64_t sent, std::uint64_t received);
  void add_counter(std::uint32_t counter, double value);
  // Closes the open frames at `now` (an application that ended inside regions).
  void close_all(std::int64_t now);

  const std::string& name() const { return name_; }
  void rename(std::string name) { name_ = std::move(name); }
  const std::vector<Node>& nodes() const { return nodes_; }
  const std::vector<std::vector<double>>& counters() const { return counters_; }  // [counter][node]
  std::size_t depth() const { return stack_.size(); }
  // Bytes this thread's recorder holds (call tree, stack, counters).
  std::size_t memory_bytes() const;
  std::uint64_t unmatched_exits() const { return unmatched_exits_; }
  std::uint64_t unknown_enters() const { return unknown_enters_; }
  // This thread's events when the measurement traces (null: profile only).
  ThreadTrace* trace() const { return trace_; }
  void set_trace(ThreadTrace* trace) { trace_ = trace; }

 private:
  struct Frame {
    std::uint32_t node;
    std::int64_t start;
    std::uint64_t skipped;  // open calls above it that are not recorded (filtered, too deep)
  };
  std::uint32_t child(std::uint32_t parent, RegionId region);
  [[gnu::noinline, gnu::cold]] void enter_collapse(std::int64_t now);
  std::string name_;
  std::size_t depth_limit_;
  Recorder* owner_;
  std::vector<Node> nodes_;
  std::vector<Frame> stack_;
  std::vector<std::vector<double>> counters_;
  std::uint64_t skipped_at_root_ = 0, unmatched_exits_ = 0, unknown_enters_ = 0;
  std::uint32_t first_root_ = kNone, last_root_entered_ = kNone;
  ThreadTrace* trace_ = nullptr;
};

// The regions, filter and thread recorders of one process.
class Recorder {
 public:
  explicit Recorder(RegionFilter filter = {}, std::size_t depth_limit = 128);
  // A new measurement with the regions (same ids), ignored regions and ignored files of
  // `previous`, filtered by this recorder's filter. Only while no thread measures.
  Recorder(RegionFilter filter, std::size_t depth_limit, const Recorder& previous);
  // Registers a region (or finds one with the same name, file and line); thread-safe.
  RegionId region(std::string_view name, std::string_view file = "", std::int64_t line = -1,
                  std::string_view paradigm = "user", std::string_view role = "function");
  // Both bounds-checked: ids come from callers in other languages (the C API, Python).
  bool recorded(RegionId r) const { return r < kMaxRegions && regions_recorded_[r] == kRecorded; }
  bool known(RegionId r) const { return r < kMaxRegions && regions_recorded_[r] != kUnknown; }
  // Leaves a region out whatever the filter says (e.g. the measurement's own wrappers).
  void ignore(RegionId r);
  // Leaves out every region of a source file, registered or to come (the measurement's own
  // modules, a launcher's frames).
  void ignore_file(std::string_view file);
  // Closes the open frames of every thread at `now` (finalization; no thread may measure).
  void close_all_threads(std::int64_t now);
  // The region "COLLAPSE" (artificial), registered on first use; recorded whatever the filter
  // says, as Score-P's collapse nodes are no region of the program. Thread-safe.
  RegionId collapse_region();
  std::uint32_t counter(std::string_view name, std::string_view unit = "");
  // A new thread's recorder (owned here; valid until the Recorder goes). Thread-safe.
  ThreadRecorder* add_thread(std::string name);
  std::vector<RegionInfo> regions() const;
  std::size_t thread_count() const;
  // The threads' recorders, in the order they came (read them only while no thread measures).
  std::vector<const ThreadRecorder*> threads() const;
  // Bytes every thread's recorder holds (call trees, stacks, counters), not the regions.
  std::size_t memory_bytes() const;
  // Traces this measurement too: every thread (those to come and those there) gets a location
  // of `trace`, and the region "TRACE BUFFER FLUSH" stands for its buffer flushes.
  void set_trace(std::shared_ptr<TraceWriter> trace);
  const std::shared_ptr<TraceWriter>& trace() const { return trace_; }

  // Every thread's tree as one local profile: call paths = the union of the threads' trees
  // in preorder (siblings by first appearance), one location per thread (type "thread"), and
  // metrics visits, time (INCLUSIVE, seconds), min_time, max_time, bytes_sent,
  // bytes_received and the user counters (EXCLUSIVE). With `program` (the region the whole
  // run is measured in), every other root of every thread goes below it, so the profile has
  // one root as Score-P's (and pycubexr's reader requires); a thread that never entered it
  // has visits 0 there and the inclusive time of its calls. Call only while no thread measures.
  profile::LocalProfile to_profile(std::optional<RegionId> program = std::nullopt) const;

 private:
  RegionFilter filter_;
  std::size_t depth_limit_;
  mutable std::mutex mutex_;
  std::vector<RegionInfo> regions_;
  std::unordered_map<std::string, RegionId> region_index_;  // (name, file, line) -> id
  // Read without the lock by the hot path: fixed capacity, entries written before published.
  std::unique_ptr<std::uint8_t[]> regions_recorded_;  // per id: kUnknown (never returned), kFiltered, kRecorded
  static constexpr std::uint8_t kUnknown = 0, kFiltered = 1, kRecorded = 2;
  static constexpr std::size_t kMaxRegions = 1 << 20;
  std::vector<std::string> ignored_files_;
  std::vector<std::pair<std::string, std::string>> counters_;
  std::vector<std::unique_ptr<ThreadRecorder>> threads_;
  std::shared_ptr<TraceWriter> trace_;
  static constexpr RegionId kNoCollapse = 0xffffffffu;
  std::atomic<RegionId> collapse_{kNoCollapse};
};

// The recorder's clock (ticks, see clock.hpp).
inline std::int64_t now() { return now_ticks(); }

// Enters `region` on `thread`: an id `recorder` never returned is counted, never recorded,
// never a crash (ThreadRecorder::enter_unknown).
inline void enter(ThreadRecorder& thread, const Recorder& recorder, RegionId region) {
  if (!recorder.known(region)) [[unlikely]] return thread.enter_unknown();
  thread.enter(region, recorder.recorded(region), now());
}

}  // namespace cubescale::measure
