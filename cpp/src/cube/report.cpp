#include "cubescale/cube/report.hpp"

#include <stdexcept>

#include "cubescale/cube/aggregate.hpp"

namespace cubescale::cube {

Report::Report(Definitions defs) : Report(std::move(defs), nullptr) {}

Report::Report(Definitions defs, Loader loader)
    : defs_(std::move(defs)), loader_(std::move(loader)), cnode_parents_(defs_.cnode_parents()), cache_(defs_.metrics.size()),
      totals_(defs_.metrics.size()) {
  validate(defs_);
}

Report::Report(Definitions defs, Loader loader, DeferredRegions regions)
    : defs_(std::move(defs)),
      loader_(std::move(loader)),
      deferred_(std::move(regions)),
      regions_ready_(false),
      cnode_parents_(defs_.cnode_parents()),
      cache_(defs_.metrics.size()),
      totals_(defs_.metrics.size()) {
  if (!defs_.regions.empty()) throw std::invalid_argument("deferred regions replace the definitions' regions");
  validate(defs_, deferred_.offsets.size());
}

const Definitions& Report::definitions() const {
  if (!regions_ready_.load(std::memory_order_acquire)) {
    std::lock_guard lock(regions_mutex_);
    if (!regions_ready_.load(std::memory_order_relaxed)) {
      defs_.regions = deferred_.parse();  // on FormatError nothing changes: the next call throws again
      deferred_ = {};                     // releases the bytes it kept alive
      regions_ready_.store(true, std::memory_order_release);
    }
  }
  return defs_;
}

std::size_t Report::region_count() const {
  std::lock_guard lock(regions_mutex_);
  return regions_ready_.load(std::memory_order_relaxed) ? defs_.regions.size() : deferred_.offsets.size();
}

std::shared_ptr<const Severity> Report::values(std::size_t metric) const {
  if (metric >= defs_.metrics.size()) throw std::out_of_range("metric index out of range");
  {
    std::lock_guard lock(mutex_);
    if (cache_[metric]) return cache_[metric];
  }
  // Loading happens outside the lock so that several metrics can be read in parallel.
  std::shared_ptr<const Severity> loaded;
  if (is_derived(defs_.metrics[metric])) loaded = compute(metric, defs_.metrics[metric].kind);
  else if (loader_) loaded = std::make_shared<const Severity>(loader_(metric));
  else loaded = std::make_shared<const Severity>(defs_.metrics[metric].dtype, cnode_count(), location_count());
  if (loader_ && !keep_loaded_.load() && !is_derived(defs_.metrics[metric])) return loaded;
  std::lock_guard lock(mutex_);
  if (!cache_[metric]) cache_[metric] = std::move(loaded);
  return cache_[metric];
}

std::shared_ptr<const Severity> Report::compute(std::size_t metric, MetricKind kind) const {
  const auto& defs = definitions();  // region names: parsed before taking mutex_
  DerivedMetrics* derived;
  {
    std::lock_guard lock(mutex_);
    if (!derived_) derived_ = std::make_unique<DerivedMetrics>(defs);
    derived = derived_.get();
  }
  const DerivedMetrics::Operand operand = [this](std::size_t m, MetricKind k) {
    auto v = values(m, k);
    auto doubles = std::make_shared<std::vector<double>>(v->cnodes() * v->locations());
    to_doubles(*v, doubles->data());
    return std::shared_ptr<const std::vector<double>>(std::move(doubles));
  };
  return std::make_shared<const Severity>(derived->evaluate(metric, kind, operand));
}

std::shared_ptr<const Severity> Report::post_exclusive(std::size_t metric) const {
  {
    std::lock_guard lock(mutex_);
    if (post_exclusive_cache_.empty()) post_exclusive_cache_.resize(defs_.metrics.size());
    if (post_exclusive_cache_[metric]) return post_exclusive_cache_[metric];
  }
  auto v = compute(metric, MetricKind::Exclusive);
  std::lock_guard lock(mutex_);
  if (!post_exclusive_cache_[metric]) post_exclusive_cache_[metric] = std::move(v);
  return post_exclusive_cache_[metric];
}

std::shared_ptr<const Severity> Report::values(std::size_t metric, MetricKind kind) const {
  if (metric >= defs_.metrics.size()) throw std::out_of_range("metric index out of range");
  if (defs_.metrics[metric].derivation == Derivation::PostDerived && kind == MetricKind::Exclusive) return post_exclusive(metric);
  auto stored = values(metric);
  const auto from = defs_.metrics[metric].kind;
  if (from == kind) return stored;
  return std::make_shared<const Severity>(convert(*stored, from, kind, cnode_parents_));
}

void Report::values_into(std::size_t metric, MetricKind kind, Severity& out) const {
  if (metric >= defs_.metrics.size()) throw std::out_of_range("metric index out of range");
  if (defs_.metrics[metric].derivation == Derivation::PostDerived) {  // already in `kind`: copied
    convert(*values(metric, kind), kind, kind, cnode_parents_, out);
    return;
  }
  auto stored = values(metric);
  convert(*stored, defs_.metrics[metric].kind, kind, cnode_parents_, out);
}

std::shared_ptr<const CnodeTotals> Report::cnode_totals(std::size_t metric) const {
  auto stored = values(metric);
  {
    std::lock_guard lock(mutex_);
    if (totals_[metric]) return totals_[metric];
  }
  // Computed outside the lock (other metrics' panes need not wait), kept only if the values
  // they were computed from are still the metric's.
  auto totals = std::make_shared<const CnodeTotals>(cube::cnode_totals(*stored, defs_.metrics[metric].kind, cnode_parents_));
  std::lock_guard lock(mutex_);
  if (cache_[metric] == stored && !totals_[metric]) totals_[metric] = totals;
  return cache_[metric] == stored ? totals_[metric] : totals;
}

void Report::cnode_row(std::size_t metric, MetricKind kind, std::size_t cnode, double* out) const {
  if (metric >= defs_.metrics.size()) throw std::out_of_range("metric index out of range");
  if (cnode >= cnode_count()) throw std::out_of_range("call path index out of range");
  const auto& m = defs_.metrics[metric];
  if (row_loader_ && kind == m.kind && !is_derived(m) && !loaded(metric)) {
    Severity row(m.dtype, 1, location_count());
    if (row_loader_(metric, cnode, row)) return to_doubles(row, 0, 1, out);
  }
  auto stored = values(metric);
  cube::cnode_row(*stored, defs_.metrics[metric].kind, kind, cnode_parents_, cnode, out);
}

void Report::set_values(std::size_t metric, Severity values) {
  if (metric >= defs_.metrics.size()) throw std::out_of_range("metric index out of range");
  if (values.cnodes() != cnode_count() || values.locations() != location_count())
    throw std::invalid_argument("values must have one row per cnode and one column per location");
  if (values.dtype().kind != defs_.metrics[metric].dtype.kind || values.dtype().count != defs_.metrics[metric].dtype.count)
    throw std::invalid_argument("values have a different data type than the metric");
  if (is_derived(defs_.metrics[metric]))
    throw std::invalid_argument("metric '" + defs_.metrics[metric].uniq_name + "' is derived: its values come from its CubePL expression");
  std::lock_guard lock(mutex_);
  // The report outlives any loan: a borrowed matrix is copied into memory of its own.
  cache_[metric] = std::make_shared<const Severity>(values.borrowed() ? Severity(values) : std::move(values));
  totals_[metric] = nullptr;  // of the replaced values
}

bool Report::loaded(std::size_t metric) const {
  std::lock_guard lock(mutex_);
  return metric < cache_.size() && cache_[metric] != nullptr;
}

}  // namespace cubescale::cube
