#include "cubescale/timeline/evaluate.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <set>
#include <stdexcept>

namespace cubescale::timeline {

TimelineStore::TimelineStore(std::vector<std::uint32_t> parents) : parents_(std::move(parents)) {
  for (std::size_t e = 0; e < parents_.size(); ++e)
    if (parents_[e] != kNoElement && parents_[e] >= e)
      throw std::invalid_argument("element " + std::to_string(e) + ": a parent must come before its children");
}

void TimelineStore::add(std::uint32_t element, const std::string& metric, Timeline timeline) {
  if (element >= parents_.size()) throw std::invalid_argument("element " + std::to_string(element) + " is not in the tree");
  timelines_[{element, metric}] = std::move(timeline);
}

const Timeline* TimelineStore::find(std::uint32_t element, const std::string& metric) const {
  const auto it = timelines_.find({element, metric});
  return it == timelines_.end() ? nullptr : &it->second;
}

bool TimelineStore::below(std::uint32_t element, std::uint32_t target) const {
  for (auto e = element; e != kNoElement; e = parents_.at(e))
    if (e == target) return true;
  return false;
}

std::pair<double, double> TimelineStore::time_range() const {
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  for (const auto& [key, tl] : timelines_)
    if (!tl.empty()) lo = std::min(lo, tl.times().front()), hi = std::max(hi, tl.times().back());
  return {lo, hi};
}

namespace {

constexpr char kMagic[4] = {'T', 'L', 'P', '1'};

void sources_of(const Node& n, std::set<std::string>& out) {
  if (n.kind == Node::Kind::Source) out.insert(n.metric);
  for (const auto& c : n.children) sources_of(*c, out);
}

std::vector<double> derivative(const std::vector<double>& x, const Grid& grid, std::size_t window) {
  const std::size_t n = x.size();
  std::vector<double> d(n, 0.0);
  if (n < 2) return d;
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t lo = i > window ? i - window - 1 : 0;
    const std::size_t hi = std::min(n - 1, i + window + 1);
    const double dt = grid.at(hi) - grid.at(lo);
    d[i] = dt > 0 ? (x[hi] - x[lo]) / dt : 0.0;
  }
  return d;
}

std::vector<double> finish(const Partial& p, const std::string& what) {
  std::vector<double> out(p.values.size());
  bool any = false;
  for (std::size_t i = 0; i < out.size(); ++i) {
    any |= p.counts[i] > 0;
    if (p.counts[i] == 0) out[i] = p.aggregation == Aggregation::Sum ? 0.0 : std::nan("");
    else out[i] = p.aggregation == Aggregation::Avg ? p.values[i] / p.counts[i] : p.values[i];
  }
  if (!any && !out.empty()) throw std::invalid_argument("no element below the target has " + what);
  return out;
}

// Evaluates `n` on `element`; aggregates are looked up in `done` (their finished values).
std::vector<double> eval(const Node& n, const TimelineStore& store, std::uint32_t element, const Grid& grid,
                         const std::vector<std::pair<const Node*, std::vector<double>>>& done) {
  using K = Node::Kind;
  switch (n.kind) {
    case K::Constant: return std::vector<double>(grid.points, n.constant);
    case K::Source: {
      const auto* tl = store.find(element, n.metric);
      if (!tl)
        throw std::invalid_argument("no timeline of metric '" + n.metric + "' on element " + std::to_string(element) +
                                    " (outside an aggregate, a source reads the target itself)");
      std::vector<double> out(grid.points);
      resample(*tl, n.interpolation, grid, out.data());
      return out;
    }
    case K::Aggregate:
      for (const auto& [node, values] : done)
        if (node == &n) return values;
      throw std::logic_error("aggregate evaluated before its partials were merged");
    case K::DiffQuot: return derivative(eval(*n.children[0], store, element, grid, done), grid, n.window);
    default: {
      auto a = eval(*n.children[0], store, element, grid, done);
      const auto b = eval(*n.children[1], store, element, grid, done);
      for (std::size_t i = 0; i < a.size(); ++i) {
        switch (n.kind) {
          case K::Add: a[i] += b[i]; break;
          case K::Subtract: a[i] -= b[i]; break;
          case K::Multiply: a[i] *= b[i]; break;
          default: a[i] = b[i] != 0 ? a[i] / b[i] : std::nan(""); break;
        }
      }
      return a;
    }
  }
}

}  // namespace

std::string Partial::serialize() const {
  std::string out(kMagic, 4);
  out += static_cast<char>(aggregation);
  const std::uint64_t n = values.size();
  out.append(reinterpret_cast<const char*>(&n), 8);
  if (n > 0) {  // an empty vector's data() may be null
    out.append(reinterpret_cast<const char*>(values.data()), n * 8);
    out.append(reinterpret_cast<const char*>(counts.data()), n * 8);
  }
  return out;
}

Partial Partial::deserialize(std::string_view bytes) {
  if (bytes.size() < 13 || std::memcmp(bytes.data(), kMagic, 4) != 0)
    throw std::invalid_argument("not a timeline partial (" + std::to_string(bytes.size()) + " bytes)");
  Partial p;
  const auto a = static_cast<std::uint8_t>(bytes[4]);
  if (a > static_cast<std::uint8_t>(Aggregation::Avg)) throw std::invalid_argument("timeline partial: unknown aggregation");
  p.aggregation = static_cast<Aggregation>(a);
  std::uint64_t n = 0;
  std::memcpy(&n, bytes.data() + 5, 8);
  if (n > kMaxGridPoints || bytes.size() != 13 + n * 16)
    throw std::invalid_argument("timeline partial: " + std::to_string(bytes.size()) + " bytes for " + std::to_string(n) +
                                " points");
  p.values.resize(n), p.counts.resize(n);
  if (n > 0) {  // memcpy from or to null is undefined even for 0 bytes
    std::memcpy(p.values.data(), bytes.data() + 13, n * 8);
    std::memcpy(p.counts.data(), bytes.data() + 13 + n * 8, n * 8);
  }
  return p;
}

Partial partial_aggregate(const Node& aggregate, const TimelineStore& store, std::uint32_t target, const Grid& grid) {
  if (aggregate.kind != Node::Kind::Aggregate) throw std::invalid_argument("not an aggregate node");
  grid.check();
  Partial p;
  p.aggregation = aggregate.aggregation;
  const double start = aggregate.aggregation == Aggregation::Min   ? std::numeric_limits<double>::infinity()
                       : aggregate.aggregation == Aggregation::Max ? -std::numeric_limits<double>::infinity()
                                                                    : 0.0;
  p.values.assign(grid.points, start);
  p.counts.assign(grid.points, 0.0);
  std::set<std::string> metrics;
  sources_of(*aggregate.children[0], metrics);
  // Every element below the target that has all the metrics the inner expression reads.
  std::set<std::uint32_t> elements;
  for (const auto& [key, tl] : store.timelines()) {
    const auto e = key.first;
    if (!store.below(e, target)) continue;
    if (std::all_of(metrics.begin(), metrics.end(), [&](const std::string& m) { return store.find(e, m) != nullptr; }))
      elements.insert(e);
  }
  for (const auto e : elements) {
    const auto x = eval(*aggregate.children[0], store, e, grid, {});
    for (std::size_t i = 0; i < grid.points; ++i) {
      switch (p.aggregation) {
        case Aggregation::Min: p.values[i] = std::min(p.values[i], x[i]); break;
        case Aggregation::Max: p.values[i] = std::max(p.values[i], x[i]); break;
        default: p.values[i] += x[i]; break;
      }
      p.counts[i] += 1;
    }
  }
  return p;
}

void merge(Partial& a, const Partial& b) {
  if (a.aggregation != b.aggregation || a.values.size() != b.values.size())
    throw std::invalid_argument("partials of different aggregates or grids");
  for (std::size_t i = 0; i < a.values.size(); ++i) {
    switch (a.aggregation) {
      case Aggregation::Min: a.values[i] = std::min(a.values[i], b.values[i]); break;
      case Aggregation::Max: a.values[i] = std::max(a.values[i], b.values[i]); break;
      default: a.values[i] += b.values[i]; break;
    }
    a.counts[i] += b.counts[i];
  }
}

std::vector<double> evaluate(const Expression& e, const std::vector<Partial>& aggregates, const TimelineStore& store,
                             std::uint32_t target, const Grid& grid) {
  grid.check();
  const auto nodes = e.aggregates();
  if (nodes.size() != aggregates.size())
    throw std::invalid_argument(std::to_string(aggregates.size()) + " partials for " + std::to_string(nodes.size()) +
                                " aggregates");
  std::vector<std::pair<const Node*, std::vector<double>>> done;
  for (std::size_t k = 0; k < nodes.size(); ++k) {
    if (aggregates[k].values.size() != grid.points) throw std::invalid_argument("partial on another grid");
    std::set<std::string> metrics;
    sources_of(*nodes[k], metrics);
    std::string what = "the metrics";
    for (const auto& m : metrics) what += " '" + m + "'";
    done.emplace_back(nodes[k], finish(aggregates[k], what));
  }
  return eval(*e.root, store, target, grid, done);
}

std::vector<double> evaluate(const Expression& e, const TimelineStore& store, std::uint32_t target, const Grid& grid) {
  std::vector<Partial> partials;
  for (const auto* node : e.aggregates()) partials.push_back(partial_aggregate(*node, store, target, grid));
  return evaluate(e, partials, store, target, grid);
}

}  // namespace cubescale::timeline
