#pragma once
// Aggregation over the enumerated trees (paper 001, section 5): every tree is in preorder, so
// inclusive values are one backward loop (each row added to its parent's row) and exclusive
// values one loop subtracting each row from its parent's row. The inner loops run along the
// location axis and vectorize. Sums wrap around for integers (as the measurement counters do);
// MIN/MAXDOUBLE take min/max; TAU_ATOMIC combines field-wise (N, sum, sum2 add; min, max).
#include <cstdint>
#include <vector>

#include "cubescale/cube/definitions.hpp"
#include "cubescale/cube/location_slices.hpp"
#include "cubescale/cube/severity.hpp"

namespace cubescale::cube {

// dst[i] = dst[i] (+) src[i] for n values of type t.
void combine_values(const DataType& t, std::uint8_t* dst, const std::uint8_t* src, std::size_t n);
// dst[i] = dst[i] (-) src[i]: the inverse of combine for sum-like fields; min/max are kept
// (they have no inverse, so an "exclusive" minimum is the stored one).
void subtract_values(const DataType& t, std::uint8_t* dst, const std::uint8_t* src, std::size_t n);

// Whether a row of zeros differs from an absent row when rows are combined: for MIN/MAXDOUBLE
// and the min/max fields of TAU_ATOMIC and HISTOGRAM a zero is a value that min/max take, while
// an absent row has no values (inclusive minima skip it). Sums (scaling functions too) gain
// nothing from either. Writers keep such rows when present, and producers mark them present.
bool zero_row_is_a_value(const DataType& t);

// Children of every cnode as one flat array (CSR): children of i are
// child[first[i] .. first[i + 1]), in index order. Built in two loops.
struct ChildLists {
  std::vector<std::size_t> first;
  std::vector<std::uint32_t> child;
  explicit ChildLists(const std::vector<std::uint32_t>& parents) : first(parents.size() + 1, 0), child() {
    for (auto p : parents)
      if (p != kNoParent) ++first[p + 1];
    for (std::size_t i = 0; i < parents.size(); ++i) first[i + 1] += first[i];
    child.resize(first.back());
    std::vector<std::size_t> next(first.begin(), first.end() - 1);
    for (std::size_t i = 0; i < parents.size(); ++i)
      if (parents[i] != kNoParent) child[next[parents[i]]++] = static_cast<std::uint32_t>(i);
  }
};

// Throws std::invalid_argument unless `parents` has one entry per row of `values` and every
// parent precedes its child (preorder), as the loops over index ranges below assume.
void check_parents(const Severity& values, const std::vector<std::uint32_t>& parents);

// Converts a metric's matrix between inclusive and exclusive along the call tree given by
// `parents` (preorder: parents[i] < i, kNoParent for roots). Slices of the location axis run on
// `threads` threads; kAutomaticThreads: one per core (up to 8) from 64 MiB on, else one
// (location_slices.hpp).
Severity to_inclusive(const Severity& exclusive, const std::vector<std::uint32_t>& parents,
                      unsigned threads = kAutomaticThreads);
Severity to_exclusive(const Severity& inclusive, const std::vector<std::uint32_t>& parents,
                      unsigned threads = kAutomaticThreads);
Severity convert(const Severity& values, MetricKind from, MetricKind to, const std::vector<std::uint32_t>& parents,
                 unsigned threads = kAutomaticThreads);
// The same into `out` (same data type and shape; any contents, e.g. Severity::borrowing a
// buffer that the caller reuses): every row and present flag of `out` is written. With
// from == to the values are copied.
void to_inclusive(const Severity& exclusive, const std::vector<std::uint32_t>& parents, Severity& out,
                  unsigned threads = kAutomaticThreads);
void to_exclusive(const Severity& inclusive, const std::vector<std::uint32_t>& parents, Severity& out,
                  unsigned threads = kAutomaticThreads);
void convert(const Severity& values, MetricKind from, MetricKind to, const std::vector<std::uint32_t>& parents,
             Severity& out, unsigned threads = kAutomaticThreads);

// Combines the location columns into groups: out[c][g] = (+) of values[c][l] with group[l] == g
// (e.g. all threads of a process, all processes of a node).
Severity combine_locations(const Severity& values, const std::vector<std::uint32_t>& group, std::size_t groups);

// One number per value for the panes of a viewer: the value itself for scalars, the sum field
// of TAU_ATOMIC, the sum of histogram bins, CubeLib's number for SCALE_FUNC, the first component
// of other vectors. `out` has cnodes x locations doubles.
void to_doubles(const Severity& values, double* out);
// The same for `rows` rows from `first_row` (out has rows x locations doubles).
void to_doubles(const Severity& values, std::size_t first_row, std::size_t rows, double* out);
// The same for n values of type t at `values` (a slice of a row, or a row computed elsewhere).
void to_doubles(const DataType& t, const std::uint8_t* values, std::size_t n, double* out);
// Per-cnode combination over all locations (Cube's call-tree pane): see panes.hpp.
// Along the metric tree nothing is aggregated: stored values already include the child
// metrics (CubeLib's definition); python/cubescale/panes.py subtracts them for an expanded one.

}  // namespace cubescale::cube
