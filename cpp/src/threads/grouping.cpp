#include "cubescale/threads/grouping.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <stdexcept>
#include <string>
#include <unordered_map>

namespace cubescale::threads {

namespace {

std::vector<std::uint32_t> all_threads(std::size_t n) {
  std::vector<std::uint32_t> out(n);
  std::iota(out.begin(), out.end(), 0u);
  return out;
}

// Clusters numbered by their lowest member, so cluster 0 holds thread 0 (the master).
std::vector<ThreadGroup> clusters_from_labels(const std::vector<std::uint32_t>& label, std::size_t count) {
  std::vector<std::vector<std::uint32_t>> members(count);
  for (std::uint32_t t = 0; t < label.size(); ++t) members[label[t]].push_back(t);
  std::erase_if(members, [](const auto& m) { return m.empty(); });
  std::sort(members.begin(), members.end(), [](const auto& a, const auto& b) { return a.front() < b.front(); });
  std::vector<ThreadGroup> out;
  for (auto& m : members)
    out.push_back({std::string(kClusterPrefix) + std::to_string(out.size()), static_cast<std::int64_t>(out.size()),
                   std::move(m)});
  return out;
}

double squared_distance(const double* a, const double* b, std::size_t n) {
  double s = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double d = a[i] - b[i];
    s += d * d;
  }
  return s;
}

// Nearest center of every thread (ties to the lower center); returns whether a label changed.
bool assign(const ThreadProfiles& p, const std::vector<double>& centers, std::size_t k, std::vector<std::uint32_t>& label) {
  bool changed = false;
  for (std::size_t t = 0; t < p.threads; ++t) {
    std::uint32_t best = 0;
    double best_d = squared_distance(p.time_row(t), centers.data(), p.cnodes);
    for (std::uint32_t c = 1; c < k; ++c) {
      const double d = squared_distance(p.time_row(t), centers.data() + c * p.cnodes, p.cnodes);
      if (d < best_d) best = c, best_d = d;
    }
    changed |= label[t] != best;
    label[t] = best;
  }
  return changed;
}

void recenter(const ThreadProfiles& p, const std::vector<std::uint32_t>& label, std::size_t k, std::vector<double>& centers) {
  std::vector<std::size_t> count(k, 0);
  std::vector<double> sum(k * p.cnodes, 0.0);
  for (std::size_t t = 0; t < p.threads; ++t) {
    ++count[label[t]];
    double* s = sum.data() + label[t] * p.cnodes;
    const double* x = p.time_row(t);
    for (std::size_t c = 0; c < p.cnodes; ++c) s[c] += x[c];
  }
  for (std::size_t j = 0; j < k; ++j)
    if (count[j] > 0)  // an emptied cluster keeps its center
      for (std::size_t c = 0; c < p.cnodes; ++c) centers[j * p.cnodes + c] = sum[j * p.cnodes + c] / double(count[j]);
}

}  // namespace

std::vector<double> thread_work(const ThreadProfiles& p, const std::vector<std::uint8_t>& is_work) {
  if (is_work.size() != p.cnodes) throw std::invalid_argument("one work flag per call path expected");
  std::vector<double> work(p.threads, 0.0);
  for (std::size_t t = 0; t < p.threads; ++t) {
    const double* x = p.time_row(t);
    double s = 0;
    for (std::size_t c = 0; c < p.cnodes; ++c)
      if (is_work[c]) s += x[c];
    work[t] = s;
  }
  return work;
}

std::vector<ThreadGroup> key_groups(const std::vector<double>& work, const std::vector<std::int64_t>& thread_ranks) {
  const std::size_t n = work.size();
  std::vector<ThreadGroup> out;
  if (n == 0) return out;
  out.push_back({std::string(kMasterThread), thread_ranks.at(0), {0}});
  if (n == 1) return out;
  // Both extremes among the workers, chosen independently: the slowest is the first maximum,
  // the fastest the first minimum among the others (so they differ whenever two workers exist).
  std::uint32_t slowest = 1;
  for (std::uint32_t t = 2; t < n; ++t)
    if (work[t] > work[slowest]) slowest = t;
  std::int64_t fastest = -1;
  for (std::uint32_t t = 1; t < n; ++t)
    if (t != slowest && (fastest < 0 || work[t] < work[static_cast<std::size_t>(fastest)])) fastest = t;
  if (fastest >= 0) out.push_back({std::string(kFastestThread), thread_ranks.at(fastest), {std::uint32_t(fastest)}});
  out.push_back({std::string(kSlowestThread), thread_ranks.at(slowest), {slowest}});
  std::vector<std::uint32_t> rest;
  for (std::uint32_t t = 1; t < n; ++t)
    if (t != slowest && static_cast<std::int64_t>(t) != fastest) rest.push_back(t);
  if (!rest.empty()) out.push_back({std::string(kAggregatedWorkers), static_cast<std::int64_t>(out.size()), std::move(rest)});
  return out;
}

std::vector<ThreadGroup> calltree_groups(const ThreadProfiles& p) {
  // Threads with byte-equal visited rows share a cluster: hash the rows, compare on collision.
  std::unordered_map<std::uint64_t, std::vector<std::uint32_t>> by_hash;  // hash -> cluster ids
  std::vector<std::uint32_t> representative, label(p.threads);
  for (std::uint32_t t = 0; t < p.threads; ++t) {
    const auto* row = p.visited_row(t);
    std::uint64_t h = 1469598103934665603ull;
    for (std::size_t c = 0; c < p.cnodes; ++c) h = (h ^ (row[c] != 0)) * 1099511628211ull;
    auto& candidates = by_hash[h];
    auto same = std::find_if(candidates.begin(), candidates.end(), [&](std::uint32_t k) {
      const auto* other = p.visited_row(representative[k]);
      for (std::size_t c = 0; c < p.cnodes; ++c)
        if ((row[c] != 0) != (other[c] != 0)) return false;
      return true;
    });
    if (same != candidates.end()) {
      label[t] = *same;
    } else {
      label[t] = static_cast<std::uint32_t>(representative.size());
      candidates.push_back(label[t]);
      representative.push_back(t);
    }
  }
  return clusters_from_labels(label, representative.size());
}

std::vector<ThreadGroup> value_groups(const ThreadProfiles& p, std::size_t max_clusters, double tolerance) {
  if (max_clusters == 0) throw std::invalid_argument("max_clusters must be at least 1");
  if (p.threads == 0) return {};
  if (p.time.size() != p.threads * p.cnodes) throw std::invalid_argument("value clustering needs the time profiles");
  double scale = 0;
  for (std::size_t t = 0; t < p.threads; ++t) {
    std::vector<double> zero(p.cnodes, 0.0);
    scale = std::max(scale, std::sqrt(squared_distance(p.time_row(t), zero.data(), p.cnodes)));
  }
  const double limit = tolerance * scale;
  // Farthest-first seeding from thread 0: each new center is the thread farthest from all
  // centers so far, until every thread is within `limit` of one (or max_clusters is reached).
  std::vector<double> centers(p.time_row(0), p.time_row(0) + p.cnodes);
  std::vector<double> nearest(p.threads);
  for (std::size_t t = 0; t < p.threads; ++t) nearest[t] = squared_distance(p.time_row(t), centers.data(), p.cnodes);
  std::size_t k = 1;
  while (k < max_clusters) {
    const auto far = static_cast<std::size_t>(std::max_element(nearest.begin(), nearest.end()) - nearest.begin());
    if (std::sqrt(nearest[far]) <= limit || nearest[far] == 0) break;
    centers.insert(centers.end(), p.time_row(far), p.time_row(far) + p.cnodes);
    for (std::size_t t = 0; t < p.threads; ++t)
      nearest[t] = std::min(nearest[t], squared_distance(p.time_row(t), p.time_row(far), p.cnodes));
    ++k;
  }
  std::vector<std::uint32_t> label(p.threads, 0);
  assign(p, centers, k, label);
  for (int iteration = 0; iteration < 20; ++iteration) {
    recenter(p, label, k, centers);
    if (!assign(p, centers, k, label)) break;
  }
  return clusters_from_labels(label, k);
}

std::vector<ThreadGroup> group_threads(const ThreadProfiles& p, const Options& options,
                                       const std::vector<std::uint8_t>& is_work,
                                       const std::vector<std::int64_t>& thread_ranks) {
  if (thread_ranks.size() != p.threads) throw std::invalid_argument("one rank per thread expected");
  if (p.threads == 0) return {};
  switch (options.strategy) {
    case Strategy::Sum:
    case Strategy::Set: return {{std::string(kAggregatedThreads), 0, all_threads(p.threads)}};
    case Strategy::Key: return key_groups(p.work.empty() ? thread_work(p, is_work) : p.work, thread_ranks);
    case Strategy::Calltree: return calltree_groups(p);
    case Strategy::Value: return value_groups(p, options.max_clusters, options.tolerance);
  }
  throw std::invalid_argument("unknown strategy");
}

}  // namespace cubescale::threads
