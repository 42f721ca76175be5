#pragma once
// Cube's panes at scale: what a viewer shows for a selection, computed from a metric's stored
// matrix without converting the matrix (paper 001 promises interactive response on reports
// of millions of locations; Cube itself needs cube_server for it).
//
// Call-tree and metric panes need, per cnode, the metric combined over all locations, in
// both kinds. One streaming pass over the *stored* matrix computes each present row's total
// T[i] (the sum of its values as doubles, or the minimum / maximum), sliced along the
// location axis on all cores. The other kind follows from T and the call tree in O(cnodes),
// because combining over locations commutes with combining along the call tree:
//   inclusive[i] = T[i] + sum of inclusive[k] over the children k   (one backward loop)
//   exclusive[i] = T[i] - sum of T[k] over the children k
// For MINDOUBLE / MAXDOUBLE the minimum over the locations of a subtree's element-wise
// minimum is the minimum of its present rows' minima (an absent row has no values; a subtree
// without any is an all-zero row, total 0), and the exclusive row is the inclusive one
// (min/max have no inverse, as in to_exclusive). So the other kind costs nothing beyond the
// pass, and the converted matrix (gigabytes, whose fresh pages the kernel must also zero) is
// never built. Sums equal the totals of the converted matrix up to rounding (the additions
// are associated differently); 64-bit integer sums are exact while they stay below 2^53.
// Where values wrap around, totals do not commute: unsigned exclusive values below zero (a
// callee above its caller at one location, as in all_dtypes.cubex) and sums of integers
// narrower than 64 bits. Exclusive totals of such inclusive matrices are computed per row,
// block by block of the location axis (the row minus its children's rows, reduced at once:
// each row read twice, nothing written); inclusive totals of narrow integers and both kinds
// of SCALE_FUNC totals (CubeLib's number of a sum of functions, not a sum of numbers) come
// from the converted matrix, as before (no report we know has large matrices of either).
//
// The system pane is one cnode's row over all locations. Inclusive from exclusive combines
// the present rows of the cnode's subtree (a contiguous index range in preorder); exclusive
// from inclusive subtracts the present children's rows from the cnode's, exactly as
// to_exclusive does. Both run block by block of the location axis (a block stays in cache
// while the rows are combined into it), on all cores when the rows read are large.
#include <cstdint>
#include <vector>

#include "cubescale/cube/definitions.hpp"
#include "cubescale/cube/location_slices.hpp"
#include "cubescale/cube/severity.hpp"

namespace cubescale::cube {

// Per cnode, all locations combined into one double (the value as to_doubles gives it):
// summed, or min / max for MINDOUBLE / MAXDOUBLE; SCALE_FUNC values are added as functions
// first. Rows of the matrix as it is (no conversion). One pass over the present rows.
std::vector<double> combine_rows(const Severity& values, unsigned threads = kAutomaticThreads);

// combine_rows of a metric in both kinds, from its stored matrix (in `stored_kind`) and the
// call tree `parents` (preorder).
struct CnodeTotals {
  std::vector<double> inclusive, exclusive;
  const std::vector<double>& of(MetricKind kind) const { return kind == MetricKind::Inclusive ? inclusive : exclusive; }
};
CnodeTotals cnode_totals(const Severity& stored, MetricKind stored_kind, const std::vector<std::uint32_t>& parents,
                         unsigned threads = kAutomaticThreads);

// Row `cnode` of the metric in `kind`, as doubles (to_doubles), into out[0 .. locations):
// the same values as converting the whole matrix and taking that row, reading only the rows
// the cnode's value depends on.
void cnode_row(const Severity& stored, MetricKind stored_kind, MetricKind kind, const std::vector<std::uint32_t>& parents,
               std::size_t cnode, double* out, unsigned threads = kAutomaticThreads);

}  // namespace cubescale::cube
