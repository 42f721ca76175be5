#include "cubescale/cube/derived.hpp"

#include <cmath>
#include <cstring>
#include <unordered_map>

#include "cubescale/cubepl/parser.hpp"
#include "cubescale/cubepl/variables.hpp"

namespace cubescale::cube {

namespace {

// The metrics being evaluated on this thread: a metric that reaches itself through its
// operands is an error, not an endless recursion.
thread_local std::vector<std::size_t> evaluating;

struct Evaluating {
  explicit Evaluating(std::size_t m) { evaluating.push_back(m); }
  ~Evaluating() { evaluating.pop_back(); }
};

void store(const std::vector<double>& v, Severity& out) {
  const auto kind = out.dtype().kind;
  if (kind == ValueKind::Double || kind == ValueKind::MinDouble || kind == ValueKind::MaxDouble) {
    // An empty report (no call paths or no locations) has nothing to copy, and an empty
    // vector's data() may be null, which memcpy does not allow even for zero bytes.
    if (!v.empty()) std::memcpy(out.data(), v.data(), v.size() * sizeof(double));
  } else if (kind == ValueKind::Int64) {
    auto* o = reinterpret_cast<std::int64_t*>(out.data());
    for (std::size_t i = 0; i < v.size(); ++i) o[i] = std::isfinite(v[i]) ? static_cast<std::int64_t>(std::llround(v[i])) : 0;
  } else {
    auto* o = reinterpret_cast<std::uint64_t*>(out.data());
    for (std::size_t i = 0; i < v.size(); ++i) o[i] = std::isfinite(v[i]) && v[i] > 0 ? static_cast<std::uint64_t>(std::llround(v[i])) : 0;
  }
}

}  // namespace

DerivedMetrics::DerivedMetrics(const Definitions& defs)
    : defs_(defs), programs_(defs.metrics.size()) {}

std::string DerivedMetrics::message(std::size_t metric, const char* part, const cubepl::Error& e) const {
  return "derived metric '" + defs_.metrics[metric].uniq_name + "', " + part + " at offset " + std::to_string(e.offset()) +
         ": " + e.message();
}

void DerivedMetrics::initialize() {
  auto& c = context_;
  c.dims = {defs_.cnodes.size(), defs_.locations.size()};
  for (const auto& n : defs_.cnodes) c.cnode_region.push_back(n.region), c.cnode_parent.push_back(n.parent);
  for (const auto& r : defs_.regions) c.regions.push_back({r.name, r.mangled_name, r.mod, r.paradigm, r.role, r.url, r.descr});
  c.metric_count = defs_.metrics.size();
  c.location_group_count = defs_.location_groups.size();
  // Every <cubeplinit> runs once, in metric order, before any metric is evaluated; Score-P's
  // newer specs fill all masks in one of them.
  for (std::size_t m = 0; m < defs_.metrics.size(); ++m) {
    const auto& text = defs_.metrics[m].cubepl_init;
    if (text.empty()) continue;
    std::optional<cubepl::Program> init;
    try {
      init = cubepl::parse(text);
      cubepl::run_init(*init, c, globals_);
    } catch (const cubepl::Error& e) {
      // Its globals are unreliable: the metrics reading them fail (evaluate()).
      FailedInit failed{message(m, "<cubeplinit>", e), m, !init, {}};
      if (init) failed.globals = cubepl::declared_globals(*init);
      failed_inits_.push_back(std::move(failed));
    }
  }
  initialized_ = true;
}

const cubepl::Program& DerivedMetrics::program(std::size_t metric) {
  std::lock_guard lock(mutex_);
  if (!initialized_) initialize();
  if (!programs_[metric]) {
    try {
      programs_[metric] = std::make_shared<const cubepl::Program>(cubepl::parse(defs_.metrics[metric].cubepl));
    } catch (const cubepl::Error& e) {
      throw DerivedMetricError(message(metric, "<cubepl>", e));
    }
  }
  const auto read = cubepl::variables_read(*programs_[metric]);
  for (const auto& f : failed_inits_) {
    bool affected = f.metric == metric || (f.unparsed && !read.empty());
    for (const auto& g : f.globals) affected |= read.count(g) > 0;
    if (affected) throw DerivedMetricError(f.message);
  }
  return *programs_[metric];
}

Severity DerivedMetrics::evaluate(std::size_t metric, MetricKind kind, const Operand& operand) {
  const auto& m = defs_.metrics.at(metric);
  for (const auto e : evaluating)
    if (e == metric) throw DerivedMetricError("derived metric '" + m.uniq_name + "' refers to itself through its operands");
  const auto t = m.dtype.kind;
  if (m.dtype.count != 1 || !(t == ValueKind::Double || t == ValueKind::MinDouble || t == ValueKind::MaxDouble ||
                              t == ValueKind::Int64 || t == ValueKind::UInt64))
    throw DerivedMetricError("derived metric '" + m.uniq_name + "' has data type " + m.dtype.name +
                             ": only DOUBLE, MINDOUBLE, MAXDOUBLE, INT64 and UINT64 are computed");
  const auto& prog = program(metric);
  Evaluating guard(metric);
  std::unordered_map<std::string, std::size_t> index;
  for (std::size_t i = 0; i < defs_.metrics.size(); ++i) index.emplace(defs_.metrics[i].uniq_name, i);
  cubepl::Context c = context_;  // shares nothing mutable: a copy per evaluation (small but for names)
  c.metric_index = metric;
  c.metric = [&](const std::string& name, cubepl::Flavour f) -> std::shared_ptr<const std::vector<double>> {
    const auto it = index.find(name);
    if (it == index.end()) return nullptr;
    return operand(it->second, f == cubepl::Flavour::Inclusive ? MetricKind::Inclusive : MetricKind::Exclusive);
  };
  std::vector<double> v;
  try {
    v = cubepl::evaluate(prog, c, globals_, kind == MetricKind::Inclusive ? cubepl::Flavour::Inclusive : cubepl::Flavour::Exclusive);
  } catch (const cubepl::Error& e) {
    throw DerivedMetricError(message(metric, "<cubepl>", e));
  }
  Severity out(m.dtype, c.dims.cnodes, c.dims.locations);
  store(v, out);
  out.mark_nonzero_rows();
  return out;
}

}  // namespace cubescale::cube
