#include "cubescale/analysis/impact.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <map>
#include <stdexcept>

#include "cubescale/analysis/waitstates.hpp"
#include "cubescale/cube/dtype.hpp"

namespace cubescale::analysis {

namespace {

using Fixed = __int128;  // seconds * 2^60
constexpr int kFraction = 60;

Fixed to_fixed(double v) { return static_cast<Fixed>(std::ldexp(v, kFraction)); }
double to_double(Fixed v) { return std::ldexp(static_cast<double>(v), -kFraction); }

// An exact, order-free sum of doubles (IEEE's NaN and infinities included).
struct Sum {
  Fixed fixed = 0;
  std::int64_t nan = 0, positive_infinity = 0, negative_infinity = 0;
  void add(double v) {
    if (std::isnan(v)) ++nan;
    else if (std::isinf(v)) ++(v > 0 ? positive_infinity : negative_infinity);
    else fixed += to_fixed(v);
  }
  void add(const Sum& o) {
    fixed += o.fixed, nan += o.nan, positive_infinity += o.positive_infinity, negative_infinity += o.negative_infinity;
  }
  double value() const {
    if (nan || (positive_infinity && negative_infinity)) return std::numeric_limits<double>::quiet_NaN();
    if (positive_infinity) return std::numeric_limits<double>::infinity();
    if (negative_infinity) return -std::numeric_limits<double>::infinity();
    return to_double(fixed);
  }
};

using Table = std::map<std::string, std::vector<Sum>>;  // call path key -> sums

template <typename T>
void put(std::string& out, const T& v) {
  out.append(reinterpret_cast<const char*>(&v), sizeof v);
}
template <typename T>
T take(const std::string& in, std::size_t& at) {
  if (at + sizeof(T) > in.size()) throw std::invalid_argument("impact blob: truncated");
  T v;
  std::memcpy(&v, in.data() + at, sizeof v);
  at += sizeof v;
  return v;
}

std::string serialize(const Table& table, std::uint32_t width) {
  std::string out;
  put(out, width);
  for (const auto& [key, sums] : table) {
    put(out, static_cast<std::uint32_t>(key.size()));
    out += key;
    for (const auto& s : sums) put(out, s.fixed), put(out, s.nan), put(out, s.positive_infinity), put(out, s.negative_infinity);
  }
  return out;
}

Table parse(const std::string& in) {
  Table out;
  std::size_t at = 0;
  if (in.empty()) return out;
  const auto width = take<std::uint32_t>(in, at);
  while (at < in.size()) {
    const auto n = take<std::uint32_t>(in, at);
    if (at + n > in.size()) throw std::invalid_argument("impact blob: truncated key");
    std::string key = in.substr(at, n);
    at += n;
    auto& sums = out[key];
    sums.resize(width);
    for (auto& s : sums) {
      s.fixed = take<Fixed>(in, at);
      s.nan = take<std::int64_t>(in, at);
      s.positive_infinity = take<std::int64_t>(in, at);
      s.negative_infinity = take<std::int64_t>(in, at);
    }
  }
  return out;
}

// Each call path's key: its regions' names from the root (the same on every rank).
std::vector<std::string> path_keys(const profile::LocalProfile& p) {
  std::vector<std::string> keys(p.cnode_count());
  for (std::size_t c = 0; c < keys.size(); ++c) {
    const auto parent = p.cnode_parents[c];
    auto name = p.regions[p.cnode_regions[c]].name;
    // Call paths split by parameters (Score-P's foo[size=0] and foo[size=1]) are apart only by them.
    if (c < p.cnode_parameters.size())
      for (const auto& parameter : p.cnode_parameters[c])
        for (const auto& [key, value] : parameter) name += '\x1e' + key + '=' + value;
    keys[c] = parent < c ? keys[parent] + '\x1f' + name : name;  // preorder: the parent's key is ready
  }
  return keys;
}

int metric(const profile::LocalProfile& p, const char* name) {
  for (std::size_t m = 0; m < p.metrics.size(); ++m)
    if (p.metrics[m].uniq_name == name && p.metrics[m].dtype.kind == cube::ValueKind::Double) return static_cast<int>(m);
  return -1;
}

double value(const profile::LocalProfile& p, int m, std::size_t c, std::size_t l) {
  if (m < 0) return 0.0;
  double v;
  std::memcpy(&v, p.values[std::size_t(m)].row(c) + l * 8, 8);
  return v;
}

// The per-location inputs over the keys of `index` (global order): own time and critical path.
struct Location {
  std::vector<Fixed> own, path;
  Fixed outside = 0;  // own time outside every top-level region (scout's artificial root)
};

// What the per-location pass reads of the profile.
struct Inputs {
  int time = -1, path = -1;
  std::vector<int> waits;
  bool inclusive = false;
  explicit Inputs(const profile::LocalProfile& p) : time(metric(p, "time")), path(metric(p, "critical_path")) {
    for (const char* name : {"mpi_latesender", "mpi_latereceiver", "mpi_latebroadcast", "mpi_earlyreduce",
                             "mpi_wait_nxn", "mpi_barrier_wait", "mpi_finalize_wait", "omp_ibarrier_wait",
                             "omp_ebarrier_wait"})
      if (const int m = metric(p, name); m >= 0) waits.push_back(m);
    inclusive = time >= 0 && p.metrics[std::size_t(time)].kind == cube::MetricKind::Inclusive;
  }
};

// One location (column l) over the keys of `index` (global order), one at a time so that
// memory stays per call path, not per call path and location.
Location location(const profile::LocalProfile& p, const Inputs& in, const std::vector<std::size_t>& index,
                  std::size_t keys, std::size_t l, const std::vector<double>& program_spans,
                  const std::vector<double>& local_time) {
  const auto cnodes = p.cnode_count();
  Location out{std::vector<Fixed>(keys, 0), std::vector<Fixed>(keys, 0)};
  std::vector<Fixed> exclusive(cnodes);
  for (std::size_t c = 0; c < cnodes; ++c) exclusive[c] = to_fixed(value(p, in.time, c, l));
  if (!local_time.empty() && local_time.size() != (cnodes + 1) * p.locations.size())
    throw std::invalid_argument("impact: local_time of " + std::to_string(local_time.size()) + " values for " +
                                std::to_string(cnodes) + " call paths and " + std::to_string(p.locations.size()) +
                                " locations");
  // scout clears a worker thread's time outside its barrier-ended parts (omp_local_time).
  const bool worker = !local_time.empty() && local_time[cnodes * p.locations.size() + l] > 0;
  if (l < program_spans.size() && !worker) {
    out.outside = to_fixed(program_spans[l]);
    for (std::size_t c = 0; c < cnodes; ++c)
      if (!in.inclusive || p.cnode_parents[c] >= c) out.outside -= exclusive[c];
  }
  if (in.inclusive)  // children have higher indices: exact in fixed point, in any order
    for (std::size_t c = 0; c < cnodes; ++c)
      if (p.cnode_parents[c] < c) exclusive[p.cnode_parents[c]] -= to_fixed(value(p, in.time, c, l));
  // scout's local time profile of OpenMP threads (omp_local_time in critical_path.hpp), where it
  // differs from the profile's; the time outside the top-level regions stays the profile's.
  if (!local_time.empty())
    for (std::size_t c = 0; c < cnodes; ++c) exclusive[c] += to_fixed(local_time[c * p.locations.size() + l]);
  for (std::size_t c = 0; c < cnodes; ++c) {
    Fixed wait = 0;
    for (const int m : in.waits) wait += to_fixed(value(p, m, c, l));
    out.own[index[c]] += exclusive[c] - std::min(exclusive[c], wait);
    out.path[index[c]] += to_fixed(value(p, in.path, c, l));
  }
  return out;
}

std::vector<std::size_t> key_index(const std::vector<std::string>& keys, const Table& global) {
  std::vector<std::size_t> out(keys.size());
  for (std::size_t c = 0; c < keys.size(); ++c) {
    const auto it = global.find(keys[c]);
    if (it == global.end()) throw std::invalid_argument("impact: call path missing from the merged sums");
    out[c] = static_cast<std::size_t>(std::distance(global.begin(), it));
  }
  return out;
}

void append(profile::LocalProfile& p, const char* uniq, const char* display, const char* descr,
            const std::vector<double>& values, std::uint32_t parent = cube::kNoParent) {
  auto m = seconds_metric(uniq, display, descr);
  m.parent = parent;
  p.metrics.push_back(std::move(m));
  p.values.push_back(exclusive_matrix(p.cnode_count(), p.locations.size(), values));
}

}  // namespace

std::string impact_path_sums(const profile::LocalProfile& p) {
  const int path = metric(p, "critical_path");
  const auto keys = path_keys(p);
  Table table;
  for (std::size_t c = 0; c < keys.size(); ++c) {
    auto& sums = table[keys[c]];
    sums.resize(1);
    for (std::size_t l = 0; l < p.locations.size(); ++l) sums[0].add(value(p, path, c, l));
  }
  return serialize(table, 1);
}

std::string merge_impact(const std::vector<std::string>& blobs) {
  Table out;
  std::uint32_t width = 0;
  for (const auto& blob : blobs) {
    if (blob.empty()) continue;
    std::size_t at = 0;
    width = std::max(width, take<std::uint32_t>(blob, at));
    for (auto& [key, sums] : parse(blob)) {
      auto& mine = out[key];
      mine.resize(sums.size());
      for (std::size_t k = 0; k < sums.size(); ++k) mine[k].add(sums[k]);
    }
  }
  return serialize(out, width);
}

std::string impact_costs(const profile::LocalProfile& p, const std::string& paths,
                         const std::vector<double>& program_spans, const std::vector<double>& local_time) {
  const auto global = parse(paths);
  const auto n = global.size();
  std::vector<Fixed> gcp;
  for (const auto& [key, sums] : global) gcp.push_back(sums.empty() ? 0 : sums[0].fixed);
  Fixed gcplen = 0;
  for (auto g : gcp) gcplen += g;
  std::vector<Sum> imbalance(n), headroom(n);
  const Inputs in(p);
  const auto index = key_index(path_keys(p), global);
  for (std::size_t column = 0; column < p.locations.size(); ++column) {
    const auto l = location(p, in, index, n, column, program_spans, local_time);
    // scout's aggregate wait (sum(gcp) - sum(own)) spread over the excess times; the time
    // outside the top-level regions is own time of a call path never on the path.
    Fixed lplen = std::max<Fixed>(l.outside, 0), excess_sum = 0;
    std::vector<Fixed> excess(n);
    for (std::size_t k = 0; k < n; ++k) {
      lplen += l.own[k];
      excess[k] = std::max<Fixed>(gcp[k] - l.own[k], 0);
      excess_sum += excess[k];
    }
    const double scale = to_double(gcplen - lplen) / to_double(excess_sum);
    for (std::size_t k = 0; k < n; ++k) imbalance[k].add(to_double(excess[k]) * scale);
    // Headroom: the path's time of call paths this location spends no own time in.
    Fixed busy = std::max<Fixed>(l.outside, 0), room = 0;
    std::vector<Fixed> hr(gcp);
    for (std::size_t k = 0; k < n; ++k)
      if (l.own[k] > 0) busy += l.own[k] + (hr[k] - std::min(l.own[k], hr[k])), hr[k] = 0;
    for (auto h : hr) room += h;
    const double factor = to_double(gcplen - busy) / to_double(room);
    for (std::size_t k = 0; k < n; ++k) headroom[k].add(to_double(hr[k]) * factor);
  }
  Table table;
  std::size_t k = 0;
  for (const auto& [key, sums] : global) table[key] = {imbalance[k], headroom[k]}, ++k;
  return serialize(table, 2);
}

void add_impact(profile::LocalProfile& p, const std::string& paths, const std::string& costs,
                const std::vector<double>& local_time) {
  const auto global = parse(paths), spread = parse(costs);
  const auto n = global.size();
  const auto keys = path_keys(p);
  const auto index = key_index(keys, global);
  const Inputs in(p);
  std::vector<double> gcp, imbalance, headroom;
  for (const auto& [key, sums] : global) {
    gcp.push_back(sums.empty() ? 0.0 : sums[0].value());
    const auto it = spread.find(key);
    imbalance.push_back(it == spread.end() || it->second.size() < 2 ? 0.0 : it->second[0].value());
    headroom.push_back(it == spread.end() || it->second.size() < 2 ? 0.0 : it->second[1].value());
  }
  const auto cols = p.locations.size(), cnodes = p.cnode_count();
  std::vector<double> activities(cnodes * cols, 0.0), impact(cnodes * cols, 0.0), inter(cnodes * cols, 0.0),
      elsewhere(cnodes * cols, 0.0);
  std::vector<bool> first(n, true);  // a key's values go to its first call path (parameters split some)
  std::vector<std::uint8_t> writes(cnodes, 0);
  for (std::size_t c = 0; c < cnodes; ++c)
    if (first[index[c]]) first[index[c]] = false, writes[c] = 1;
  for (std::size_t l = 0; l < cols; ++l) {
    const auto located = location(p, in, index, n, l, {}, local_time);
    for (std::size_t c = 0; c < cnodes; ++c) {
      if (!writes[c]) continue;
      const auto k = index[c];
      const double own = to_double(located.own[k]), path = to_double(located.path[k]);
      const auto at = c * cols + l;
      if (gcp[k] > 0) activities[at] = std::min(gcp[k], own);
      if (own - gcp[k] > 0) elsewhere[at] = own - gcp[k];
      if (path > 0) {
        if (const double v = path / gcp[k] * imbalance[k]; v > 0) impact[at] = v;
        if (const double v = path / gcp[k] * headroom[k]; v > 0) inter[at] = v;
      }
    }
  }
  // Scalasca 2.6's placement: performance_impact > performance_impact_criticalpath >
  // {critical_path_activities, critical_imbalance_impact > inter_partition_imbalance}, and
  // non_critical_path_activities below performance_impact. The two parents, which scout.spec
  // derives as sums, store their children's sum (every parent here stores its children too).
  std::vector<double> on_path(cnodes * cols), all(cnodes * cols);
  for (std::size_t i = 0; i < on_path.size(); ++i) {
    on_path[i] = activities[i] + impact[i];
    all[i] = on_path[i] + elsewhere[i];
  }
  const auto root = static_cast<std::uint32_t>(p.metrics.size());
  append(p, "performance_impact", "Performance impact",
         "Cost of each call path's time for the run, on and off the critical path (the sum of the metrics below)", all);
  append(p, "performance_impact_criticalpath", "Critical-path activities",
         "Cost of the call paths' time on the critical path: its activities and their imbalance", on_path, root);
  const auto criticalpath = root + 1;
  append(p, "critical_path_activities", "Activity impact",
         "A location's own time in a call path, up to the critical path's time in it (summed over the locations)",
         activities, criticalpath);
  append(p, "critical_imbalance_impact", "Imbalance impact",
         "How much longer a call path is on the critical path than on the locations, shared out by their part of the path",
         impact, criticalpath);
  append(p, "inter_partition_imbalance", "Inter-partition imbalance",
         "The part of the imbalance impact from locations that spend no time of their own in the call path",
         inter, criticalpath + 2);
  append(p, "non_critical_path_activities", "Non-critical-path activities",
         "A location's own time in a call path beyond the critical path's time in it", elsewhere, root);
}

void add_impact(profile::LocalProfile& p, const std::vector<double>& program_spans,
                const std::vector<double>& local_time) {
  const auto paths = merge_impact({impact_path_sums(p)});
  add_impact(p, paths, merge_impact({impact_costs(p, paths, program_spans, local_time)}), local_time);
}

}  // namespace cubescale::analysis
