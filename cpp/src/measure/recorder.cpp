#include "cubescale/measure/recorder.hpp"

#include <algorithm>
#include <chrono>
#include <map>
#include <stdexcept>

#include "cubescale/measure/trace_writer.hpp"

namespace cubescale::measure {

ThreadRecorder::ThreadRecorder(std::string name, std::size_t depth_limit, Recorder* owner)
    : name_(std::move(name)), depth_limit_(depth_limit), owner_(owner) {
  stack_.reserve(depth_limit + 1);  // the stack never allocates while measuring (+1: a COLLAPSE)
  nodes_.reserve(256);
}

void ThreadRecorder::enter_collapse(std::int64_t now) {
  if (!owner_ || stack_.empty()) {
    ++(stack_.empty() ? skipped_at_root_ : stack_.back().skipped);
    return;
  }
  const auto region = owner_->collapse_region();
  stack_.push_back({child(stack_.back().node, region), now, 0});
  if (trace_) trace_enter(trace_, region, now);
}

namespace {
// Regions are the same when name, file and line are (a NUL cannot occur in the first two).
std::string region_key(std::string_view name, std::string_view file, std::int64_t line) {
  std::string key;
  key.reserve(name.size() + file.size() + 24);
  key.append(name).push_back('\0');
  key.append(file).push_back('\0');
  key.append(std::to_string(line));
  return key;
}
}  // namespace

std::uint32_t ThreadRecorder::child(std::uint32_t parent, RegionId region) {
  auto& cached = parent == kNone ? last_root_entered_ : nodes_[parent].last_entered;
  if (cached != kNone && nodes_[cached].region == region) return cached;
  auto c = parent == kNone ? first_root_ : nodes_[parent].first_child;
  std::uint32_t last = kNone;
  for (; c != kNone; last = c, c = nodes_[c].next_sibling)
    if (nodes_[c].region == region) break;
  if (c == kNone) {  // a new call path (the only allocation, amortized)
    c = static_cast<std::uint32_t>(nodes_.size());
    Node n;
    n.region = region;
    n.parent = parent;
    nodes_.push_back(n);
    for (auto& values : counters_) values.push_back(0.0);
    if (last != kNone) nodes_[last].next_sibling = c;
    else if (parent == kNone) first_root_ = c;
    else nodes_[parent].first_child = c;
  }
  // `cached` may point into nodes_, which push_back can move: look it up again.
  (parent == kNone ? last_root_entered_ : nodes_[parent].last_entered) = c;
  return c;
}

void ThreadRecorder::add_bytes(std::uint64_t sent, std::uint64_t received) {
  if (stack_.empty()) return;
  auto& n = nodes_[stack_.back().node];
  n.bytes_sent += sent;
  n.bytes_received += received;
}

void ThreadRecorder::add_counter(std::uint32_t counter, double value) {
  if (stack_.empty()) return;
  if (counter >= counters_.size()) counters_.resize(counter + 1, std::vector<double>(nodes_.size(), 0.0));
  counters_[counter][stack_.back().node] += value;
}

std::size_t ThreadRecorder::memory_bytes() const {
  std::size_t bytes = sizeof(*this) + nodes_.capacity() * sizeof(Node) + stack_.capacity() * sizeof(Frame);
  for (const auto& c : counters_) bytes += c.capacity() * sizeof(double);
  return bytes;
}

void ThreadRecorder::close_all(std::int64_t now) {
  skipped_at_root_ = 0;
  for (auto& f : stack_) f.skipped = 0;
  while (!stack_.empty()) exit(now);
}

Recorder::Recorder(RegionFilter filter, std::size_t depth_limit)
    : filter_(std::move(filter)), depth_limit_(depth_limit), regions_recorded_(new std::uint8_t[kMaxRegions]()) {
  if (depth_limit == 0) throw std::invalid_argument("the depth limit must be at least 1");
}

Recorder::Recorder(RegionFilter filter, std::size_t depth_limit, const Recorder& previous)
    : Recorder(std::move(filter), depth_limit) {
  std::lock_guard lock(previous.mutex_);
  regions_ = previous.regions_;
  region_index_ = previous.region_index_;
  ignored_files_ = previous.ignored_files_;
  for (std::size_t r = 0; r < regions_.size(); ++r) {
    auto& info = regions_[r];
    info.recorded = !info.ignored && filter_.included(info.name, info.file);
    regions_recorded_[r] = info.recorded ? kRecorded : kFiltered;
  }
}

RegionId Recorder::region(std::string_view name, std::string_view file, std::int64_t line, std::string_view paradigm,
                          std::string_view role) {
  std::lock_guard lock(mutex_);
  auto key = region_key(name, file, line);
  if (auto it = region_index_.find(key); it != region_index_.end()) return it->second;
  if (regions_.size() >= kMaxRegions) throw std::length_error("more than 2^20 regions");
  region_index_.emplace(std::move(key), static_cast<RegionId>(regions_.size()));
  const bool ignored = !file.empty() && std::find(ignored_files_.begin(), ignored_files_.end(), file) !=
                                            ignored_files_.end();
  RegionInfo info{std::string(name), std::string(file), std::string(paradigm), std::string(role), line,
                  !ignored && filter_.included(name, file), ignored};
  regions_recorded_[regions_.size()] = info.recorded ? kRecorded : kFiltered;
  regions_.push_back(std::move(info));
  return static_cast<RegionId>(regions_.size() - 1);
}

void Recorder::ignore(RegionId r) {
  std::lock_guard lock(mutex_);
  if (r >= regions_.size()) throw std::out_of_range("no region " + std::to_string(r));
  regions_[r].recorded = false;
  regions_[r].ignored = true;
  regions_recorded_[r] = kFiltered;
}

void Recorder::ignore_file(std::string_view file) {
  std::lock_guard lock(mutex_);
  if (std::find(ignored_files_.begin(), ignored_files_.end(), file) == ignored_files_.end())
    ignored_files_.emplace_back(file);
  for (std::size_t r = 0; r < regions_.size(); ++r)
    if (regions_[r].file == file) regions_[r].recorded = false, regions_[r].ignored = true, regions_recorded_[r] = kFiltered;
}

RegionId Recorder::collapse_region() {
  if (const auto known = collapse_.load(std::memory_order_acquire); known != kNoCollapse) return known;
  const auto id = region("COLLAPSE", "", -1, "measurement", "artificial");
  {
    std::lock_guard lock(mutex_);
    regions_[id].recorded = true, regions_[id].ignored = false;
    regions_recorded_[id] = kRecorded;
  }
  collapse_.store(id, std::memory_order_release);
  return id;
}

void Recorder::close_all_threads(std::int64_t now) {
  std::lock_guard lock(mutex_);
  for (auto& t : threads_) t->close_all(now);
}

std::uint32_t Recorder::counter(std::string_view name, std::string_view unit) {
  std::lock_guard lock(mutex_);
  for (std::size_t i = 0; i < counters_.size(); ++i)
    if (counters_[i].first == name) return static_cast<std::uint32_t>(i);
  counters_.emplace_back(std::string(name), std::string(unit));
  return static_cast<std::uint32_t>(counters_.size() - 1);
}

ThreadRecorder* Recorder::add_thread(std::string name) {
  std::lock_guard lock(mutex_);
  threads_.push_back(std::make_unique<ThreadRecorder>(std::move(name), depth_limit_, this));
  auto* t = threads_.back().get();
  if (trace_) t->set_trace(trace_->add_location(t, static_cast<std::uint32_t>(threads_.size() - 1)));
  return t;
}

void Recorder::set_trace(std::shared_ptr<TraceWriter> trace) {
  const auto flush = region("TRACE BUFFER FLUSH", "", -1, "measurement", "artificial");
  std::lock_guard lock(mutex_);
  if (trace_) throw std::logic_error("the measurement traces already");
  trace_ = std::move(trace);
  if (!trace_) return;
  trace_->set_flush_region(flush);
  for (std::size_t t = 0; t < threads_.size(); ++t)
    threads_[t]->set_trace(trace_->add_location(threads_[t].get(), static_cast<std::uint32_t>(t)));
}

std::vector<RegionInfo> Recorder::regions() const {
  std::lock_guard lock(mutex_);
  return regions_;
}

std::size_t Recorder::memory_bytes() const {
  std::lock_guard lock(mutex_);
  std::size_t bytes = 0;
  for (const auto& t : threads_) bytes += t->memory_bytes();
  return bytes;
}

std::vector<const ThreadRecorder*> Recorder::threads() const {
  std::lock_guard lock(mutex_);
  std::vector<const ThreadRecorder*> out;
  for (const auto& t : threads_) out.push_back(t.get());
  return out;
}

std::size_t Recorder::thread_count() const {
  std::lock_guard lock(mutex_);
  return threads_.size();
}

namespace {

// The union of the threads' trees: a call path is (parent call path, region).
struct Union {
  std::vector<std::uint32_t> parents, regions;
  std::vector<std::vector<std::uint32_t>> children;  // in order of first appearance
  std::map<std::pair<std::uint32_t, RegionId>, std::uint32_t> index;
  std::vector<std::uint32_t> roots;

  std::uint32_t add(std::uint32_t parent, RegionId region) {
    const auto key = std::make_pair(parent, region);
    if (auto it = index.find(key); it != index.end()) return it->second;
    const auto id = static_cast<std::uint32_t>(parents.size());
    parents.push_back(parent), regions.push_back(region), children.emplace_back();
    index.emplace(key, id);
    (parent == ThreadRecorder::kNone ? roots : children[parent]).push_back(id);
    return id;
  }
};

}  // namespace

profile::LocalProfile Recorder::to_profile(std::optional<RegionId> program) const {
  std::lock_guard lock(mutex_);
  Union u;
  std::vector<std::vector<std::uint32_t>> node_path(threads_.size());  // per thread: node -> union id
  const auto top = program ? u.add(ThreadRecorder::kNone, *program) : ThreadRecorder::kNone;
  for (std::size_t t = 0; t < threads_.size(); ++t) {
    const auto& nodes = threads_[t]->nodes();
    auto& map = node_path[t];
    map.resize(nodes.size());
    for (std::size_t n = 0; n < nodes.size(); ++n) {  // parents come before children
      auto parent = nodes[n].parent == ThreadRecorder::kNone ? ThreadRecorder::kNone : map[nodes[n].parent];
      if (parent == ThreadRecorder::kNone && program && nodes[n].region != *program) parent = top;
      map[n] = u.add(parent, nodes[n].region);
    }
  }
  // Preorder of the union (children in order of first appearance).
  std::vector<std::uint32_t> order, position(u.parents.size());
  std::vector<std::uint32_t> stack(u.roots.rbegin(), u.roots.rend());
  while (!stack.empty()) {
    const auto c = stack.back();
    stack.pop_back();
    position[c] = static_cast<std::uint32_t>(order.size());
    order.push_back(c);
    for (auto it = u.children[c].rbegin(); it != u.children[c].rend(); ++it) stack.push_back(*it);
  }
  profile::LocalProfile p;
  // Only the regions some call path uses (filtered and ignored ones are registered too).
  std::vector<std::uint32_t> local(regions_.size(), ThreadRecorder::kNone);
  for (const auto c : order) {
    auto& l = local[u.regions[c]];
    if (l == ThreadRecorder::kNone) {
      const auto& r = regions_[u.regions[c]];
      cube::Region region;
      region.name = r.name, region.mod = r.file, region.paradigm = r.paradigm, region.role = r.role;
      region.begin = r.line, region.end = r.line;
      l = static_cast<std::uint32_t>(p.regions.size());
      p.regions.push_back(std::move(region));
    }
    p.cnode_parents.push_back(u.parents[c] == ThreadRecorder::kNone ? cube::kNoParent : position[u.parents[c]]);
    p.cnode_regions.push_back(l);
  }
  for (const auto& t : threads_) p.locations.push_back({t->name(), "thread"});
  auto metric = [&](const char* name, const char* display, const char* unit, const char* dtype, cube::MetricKind kind,
                    const char* description) {
    cube::Metric m;
    m.uniq_name = name, m.disp_name = display, m.uom = unit, m.descr = description;
    m.dtype = *cube::parse_data_type(dtype);
    m.kind = kind;
    p.metrics.push_back(m);
    p.values.emplace_back(m.dtype, order.size(), threads_.size());
    return &p.values.back();
  };
  using cube::MetricKind;
  auto* visits = metric("visits", "Visits", "occ", "UINT64", MetricKind::Exclusive, "Number of visits");
  auto* time = metric("time", "Time", "sec", "DOUBLE", MetricKind::Inclusive, "Time spent (inclusive)");
  auto* min_time = metric("min_time", "Minimum Inclusive Time", "sec", "MINDOUBLE", MetricKind::Exclusive,
                          "Shortest time of one visit");
  auto* max_time = metric("max_time", "Maximum Inclusive Time", "sec", "MAXDOUBLE", MetricKind::Exclusive,
                          "Longest time of one visit");
  auto* sent = metric("bytes_sent", "Bytes sent", "bytes", "UINT64", MetricKind::Exclusive, "Bytes sent");
  auto* received = metric("bytes_received", "Bytes received", "bytes", "UINT64", MetricKind::Exclusive,
                          "Bytes received");
  std::vector<cube::Severity*> counters;
  for (const auto& [name, unit] : counters_) {
    counters.push_back(metric(name.c_str(), name.c_str(), unit.c_str(), "DOUBLE", MetricKind::Exclusive, "user counter"));
  }
  // p.values may have reallocated while metrics were added: take the pointers again.
  visits = &p.values[0], time = &p.values[1], min_time = &p.values[2], max_time = &p.values[3];
  sent = &p.values[4], received = &p.values[5];
  for (std::size_t k = 0; k < counters.size(); ++k) counters[k] = &p.values[6 + k];
  auto put = [](cube::Severity* s, std::size_t c, std::size_t l, auto v) {
    reinterpret_cast<decltype(v)*>(s->row(c))[l] = v;
    s->set_present(c, true);
  };
  const double seconds = seconds_per_tick();
  for (std::size_t t = 0; t < threads_.size(); ++t) {
    const auto& nodes = threads_[t]->nodes();
    for (std::size_t n = 0; n < nodes.size(); ++n) {
      const auto c = position[node_path[t][n]];
      const auto& x = nodes[n];
      if (x.visits == 0 && x.inclusive == 0) continue;
      put(visits, c, t, std::uint64_t(x.visits));
      put(time, c, t, double(x.inclusive) * seconds);
      if (x.visits) put(min_time, c, t, double(x.min) * seconds), put(max_time, c, t, double(x.max) * seconds);
      if (x.bytes_sent) put(sent, c, t, std::uint64_t(x.bytes_sent));
      if (x.bytes_received) put(received, c, t, std::uint64_t(x.bytes_received));
      const auto& cs = threads_[t]->counters();
      for (std::size_t k = 0; k < cs.size() && k < counters.size(); ++k)
        if (n < cs[k].size() && cs[k][n] != 0) put(counters[k], c, t, cs[k][n]);
    }
  }
  if (program) {  // threads that never entered the program: its inclusive time is their calls'
    const auto root = position[top];
    auto* t = &p.values[1];
    for (std::size_t l = 0; l < threads_.size(); ++l) {
      if (reinterpret_cast<const std::uint64_t*>(p.values[0].row(root))[l] != 0) continue;
      double sum = 0;
      for (std::size_t c = 0; c < p.cnode_parents.size(); ++c)
        if (p.cnode_parents[c] == root) sum += reinterpret_cast<const double*>(t->row(c))[l];
      reinterpret_cast<double*>(t->row(root))[l] = sum;
      if (sum != 0) t->set_present(root, true);
    }
  }
  p.validate();
  return p;
}

}  // namespace cubescale::measure
