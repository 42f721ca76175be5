#pragma once
// A CUBE4 report: definitions plus, per metric, the matrix of values in the metric's own kind
// (INCLUSIVE or EXCLUSIVE, as stored). Reports opened from a file load a metric's values on
// first use; opening reads only the tar headers and anchor.xml (or our system tree member).
// The regions of a report opened from a file are parsed when its definitions are first asked
// for: values need only the call tree, which knows each call path's region index.
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "cubescale/cube/definitions.hpp"
#include "cubescale/cube/derived.hpp"
#include "cubescale/cube/panes.hpp"
#include "cubescale/cube/region_xml.hpp"
#include "cubescale/cube/severity.hpp"
#include "cubescale/cube/source_file.hpp"

namespace cubescale::cube {

class Report {
 public:
  using Loader = std::function<Severity(std::size_t metric)>;
  // Reads one call path's stored row into a 1 x locations Severity; false when it cannot
  // (compressed rows): the metric is then loaded whole.
  using RowLoader = std::function<bool(std::size_t metric, std::size_t cnode, Severity& row)>;

  // A report whose values are all zero until set_values() (for building reports in memory).
  explicit Report(Definitions defs);
  Report(Definitions defs, Loader loader);
  // `defs` without regions; `regions` says where to parse them (one per region index).
  Report(Definitions defs, Loader loader, DeferredRegions regions);

  // All definitions; parses deferred regions first (FormatError if they are malformed).
  const Definitions& definitions() const;
  // Metrics, call tree and system tree without forcing the regions: `regions` may still be
  // empty (a call path's `region` index is valid either way).
  const Definitions& structure() const { return defs_; }
  std::size_t region_count() const;
  std::size_t metric_count() const { return defs_.metrics.size(); }
  std::size_t cnode_count() const { return defs_.cnodes.size(); }
  std::size_t location_count() const { return defs_.locations.size(); }

  // Values as stored (in the metric's kind); loaded on first use, then shared. Derived
  // metrics are computed instead (POSTDERIVED: from inclusive operands); their errors are
  // DerivedMetricError and leave the other metrics usable.
  std::shared_ptr<const Severity> values(std::size_t metric) const;
  // Values as inclusive or exclusive along the call tree (converted when needed).
  std::shared_ptr<const Severity> values(std::size_t metric, MetricKind kind) const;
  // The same written into `out` (see convert(): any contents, every row is written), e.g. a
  // buffer the caller reuses across metrics instead of a fresh matrix per call.
  void values_into(std::size_t metric, MetricKind kind, Severity& out) const;
  // Per cnode, the metric over all locations in both kinds (Cube's call-tree pane; the
  // metric pane takes the roots'): one pass over the stored matrix on first use (panes.hpp),
  // then kept with the values (O(cnodes) per metric) until set_values() replaces them.
  std::shared_ptr<const CnodeTotals> cnode_totals(std::size_t metric) const;
  // One call path's row in `kind` as doubles (Cube's system pane) into out[0 .. locations),
  // from the stored matrix without converting it; for a metric not loaded yet, in the kind it
  // is stored in, only that row is read from the file (a first look at a huge report).
  void cnode_row(std::size_t metric, MetricKind kind, std::size_t cnode, double* out) const;
  void set_values(std::size_t metric, Severity values);
  bool loaded(std::size_t metric) const;
  // false: values that the loader brings are handed out without being kept, so each use loads
  // them again (a report computed from others, streamed to a file one metric at a time, needs
  // memory for one metric, not all). Values given to set_values() are always kept.
  void set_keep_loaded(bool keep) { keep_loaded_.store(keep); }
  void set_row_loader(RowLoader row_loader) { row_loader_ = std::move(row_loader); }
  const std::vector<std::uint32_t>& cnode_parents() const { return cnode_parents_; }

  // The file the report was read from (extra members, ignored bytes); null for reports built
  // in memory. Set once by the reader.
  const SourceFile* source() const { return source_.get(); }
  void set_source(std::shared_ptr<const SourceFile> source) { source_ = std::move(source); }

 private:
  std::shared_ptr<const SourceFile> source_;
  // mutable: deferred regions are filled in by definitions(), once, under regions_mutex_.
  mutable Definitions defs_;
  Loader loader_;
  RowLoader row_loader_;
  mutable DeferredRegions deferred_;
  mutable std::atomic<bool> regions_ready_{true};
  std::atomic<bool> keep_loaded_{true};
  mutable std::mutex regions_mutex_;
  std::shared_ptr<const Severity> compute(std::size_t metric, MetricKind kind) const;
  // POSTDERIVED metrics computed from exclusive operands (not a conversion of the stored ones).
  std::shared_ptr<const Severity> post_exclusive(std::size_t metric) const;

  std::vector<std::uint32_t> cnode_parents_;
  mutable std::unique_ptr<DerivedMetrics> derived_;  // created on first use, under mutex_
  mutable std::vector<std::shared_ptr<const Severity>> cache_, post_exclusive_cache_;
  mutable std::vector<std::shared_ptr<const CnodeTotals>> totals_;  // per metric, of cache_'s values
  mutable std::mutex mutex_;
};

}  // namespace cubescale::cube
