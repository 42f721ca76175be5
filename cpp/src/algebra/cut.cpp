#include "cubescale/algebra/cut.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

#include "cubescale/algebra/unify.hpp"
#include "cubescale/cube/aggregate.hpp"

namespace cubescale::algebra {

using cube::kNoParent;
using cube::Severity;

namespace {

struct CutPlan {
  std::shared_ptr<const cube::Report> input;
  std::vector<std::uint32_t> target;   // input cnode -> result cnode its exclusive values go to, kAbsent: dropped
  std::vector<std::uint32_t> parents;  // of the result's call tree
  std::vector<std::uint32_t> kept;     // input cnode -> result cnode if it stays, else kAbsent
};

// Rows are present when something was written to them, zero or not: for MIN/MAXDOUBLE (and the
// min/max fields of TAU_ATOMIC, HISTOGRAM) a row of zeros is a value (a minimum of 0 that the
// call path's ancestors take) and an absent row none (aggregate.hpp). Marking only the non-zero
// rows lost MODEL_1's folded minimum of 0 in time.p4, which raised its ancestors' inclusive
// min_time.

// Inclusive values of the call paths that stay do not change (a pruned one includes what was
// below it already): their rows are copied, exactly, present as in the input.
Severity kept_rows(const CutPlan& plan, std::size_t metric) {
  const auto inclusive = plan.input->values(metric, cube::MetricKind::Inclusive);
  Severity out(inclusive->dtype(), plan.parents.size(), inclusive->locations());
  for (std::uint32_t c = 0; c < plan.kept.size(); ++c) {
    const auto t = plan.kept[c];
    if (t == kAbsent || !inclusive->present(c)) continue;
    std::memcpy(out.row(t), inclusive->row(c), out.row_bytes());
    out.set_present(t, true);
  }
  return out;
}

// Exclusive values: those of the call paths below a pruned one are folded into it.
Severity cut_values(const CutPlan& plan, std::size_t metric, const cube::Definitions& defs) {
  const auto kind = defs.metrics[metric].kind;
  if (kind == cube::MetricKind::Inclusive) return kept_rows(plan, metric);
  const auto exclusive = plan.input->values(metric, cube::MetricKind::Exclusive);
  Severity out(exclusive->dtype(), plan.parents.size(), exclusive->locations());
  std::vector<bool> written(plan.parents.size(), false);
  for (std::uint32_t c = 0; c < plan.target.size(); ++c) {
    const auto t = plan.target[c];
    if (t == kAbsent || !exclusive->present(c)) continue;
    // combine, not add: MIN/MAXDOUBLE fold by min / max, TAU_ATOMIC field-wise.
    if (written[t]) cube::combine_values(out.dtype(), out.row(t), exclusive->row(c), out.locations());
    else std::memcpy(out.row(t), exclusive->row(c), out.row_bytes());
    written[t] = true;
    out.set_present(t, true);
  }
  return out;
}

}  // namespace

std::shared_ptr<cube::Report> keep_call_paths(const std::shared_ptr<const cube::Report>& report, const std::vector<bool>& keep) {
  if (!report) throw std::invalid_argument("cut: the report is missing");
  const auto& in = report->definitions();
  const auto n = in.cnodes.size();
  if (keep.size() != n) throw std::invalid_argument("cut: one flag per call path expected");
  auto plan = std::make_shared<CutPlan>();
  plan->input = report;
  plan->target.assign(n, kAbsent);
  plan->kept.assign(n, kAbsent);
  cube::Definitions out = in;
  out.cnodes.clear();
  for (std::uint32_t c = 0; c < n; ++c) {  // preorder: parents first
    const auto p = in.cnodes[c].parent;
    if (!keep[c]) {  // into the nearest kept ancestor, if any
      if (p != kNoParent) plan->target[c] = plan->target[p];
      continue;
    }
    const auto index = static_cast<std::uint32_t>(out.cnodes.size());
    plan->target[c] = plan->kept[c] = index;
    cube::Cnode cnode = in.cnodes[c];
    cnode.parent = p != kNoParent && keep[p] ? plan->kept[p] : kNoParent;
    cnode.file_id = index;
    plan->parents.push_back(cnode.parent);
    out.cnodes.push_back(std::move(cnode));
  }
  if (out.cnodes.empty()) throw std::invalid_argument("cut: nothing of the call tree is left");
  const auto defs = std::make_shared<const cube::Definitions>(out);
  return std::make_shared<cube::Report>(std::move(out), [plan, defs](std::size_t m) { return cut_values(*plan, m, *defs); });
}

std::shared_ptr<cube::Report> cut(const std::shared_ptr<const cube::Report>& report, const std::vector<std::uint32_t>& roots,
                                  const std::vector<std::uint32_t>& prunes) {
  if (!report) throw std::invalid_argument("cut: the report is missing");
  const auto& in = report->definitions();
  const auto n = in.cnodes.size();
  std::vector<bool> is_root(n, false), is_pruned(n, false);
  if (roots.empty())
    for (std::size_t c = 0; c < n; ++c) is_root[c] = in.cnodes[c].parent == kNoParent;
  for (auto r : roots) {
    if (r >= n) throw std::invalid_argument("cut: root call path " + std::to_string(r) + " out of range");
    is_root[r] = true;
  }
  for (auto p : prunes) {
    if (p >= n) throw std::invalid_argument("cut: pruned call path " + std::to_string(p) + " out of range");
    is_pruned[p] = true;
  }
  // A call path stays when it is a root, or it lies inside a root below a kept parent and is not
  // pruned. A pruned call path goes with its subtree, whose values keep_call_paths() attributes
  // to the caller (CubeLib's cube_cut inlines it so: a pruned child maps to its parent). Like
  // cube_cut we refuse a call path that is both root and pruned, and pruned call paths inside
  // other pruned ones (a recursive region among the pruned ones too).
  std::vector<bool> in_root(n, false), keep(n, false), under_prune(n, false);
  for (std::uint32_t c = 0; c < n; ++c) {
    const auto p = in.cnodes[c].parent;
    const bool inside_root = p != kNoParent && in_root[p];
    if (is_root[c] && inside_root && !roots.empty())
      throw std::invalid_argument("cut: root call path " + std::to_string(c) + " lies inside another root");
    if (is_pruned[c] && is_root[c])
      throw std::invalid_argument("cut: call path " + std::to_string(c) +
                                  (roots.empty() ? " is a root of the call tree: pruning it leaves no caller to take its values"
                                                 : " is both a root and pruned"));
    if (is_pruned[c] && p != kNoParent && under_prune[p])
      throw std::invalid_argument("cut: pruned call path " + std::to_string(c) + " lies inside another pruned call path");
    under_prune[c] = is_pruned[c] || (p != kNoParent && under_prune[p]);
    in_root[c] = is_root[c] || inside_root;
    keep[c] = is_root[c] || (inside_root && keep[p] && !is_pruned[c]);
  }
  return keep_call_paths(report, keep);
}

std::vector<std::shared_ptr<cube::Report>> common(const std::vector<std::shared_ptr<const cube::Report>>& inputs) {
  if (inputs.empty()) throw std::invalid_argument("common: no reports");
  std::vector<const cube::Definitions*> defs;
  for (const auto& r : inputs) {
    if (!r) throw std::invalid_argument("common: a report is missing");
    defs.push_back(&r->definitions());
  }
  const auto calls = unify_call_paths(defs);
  // How many inputs have each unified call path (an input's siblings that unify count once).
  std::vector<std::uint32_t> having(calls.size, 0), last(calls.size, kAbsent);
  for (std::uint32_t i = 0; i < inputs.size(); ++i)
    for (const auto u : calls.cnodes[i])
      if (last[u] != i) last[u] = i, ++having[u];
  std::vector<std::shared_ptr<cube::Report>> out;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    std::vector<bool> keep(calls.cnodes[i].size());
    for (std::size_t c = 0; c < keep.size(); ++c) keep[c] = having[calls.cnodes[i][c]] == inputs.size();
    if (std::find(keep.begin(), keep.end(), true) == keep.end())
      throw std::invalid_argument("common: the reports have no call path in common (their root call paths differ)");
    out.push_back(keep_call_paths(inputs[i], keep));
  }
  return out;
}

}  // namespace cubescale::algebra
