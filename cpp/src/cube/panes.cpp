#include "cubescale/cube/panes.hpp"

#include <algorithm>
#include <cstring>
#include <map>
#include <mutex>
#include <stdexcept>

#include "cubescale/cube/aggregate.hpp"
#include "cubescale/cube/scale_func.hpp"

namespace cubescale::cube {

namespace {

// Values converted to doubles this many at a time (4 KiB: stays in L1 between the two loops).
constexpr std::size_t kChunk = 512;
// Lanes of independent accumulators: the adds of one lane wait for each other, the lanes do
// not, and the compiler keeps them in vector registers (without reordering a single sum,
// which it may not do for doubles).
constexpr std::size_t kLanes = 8;

bool is_sum(Combine how) { return how != Combine::Min && how != Combine::Max; }

// Combines n doubles into `acc` (sum, min or max). Min/max start from x[0] in every lane, so
// that n >= 1 values never see a value that is not theirs.
double reduce(Combine how, const double* x, std::size_t n, double acc) {
  if (n == 0) return acc;
  double lane[kLanes];
  std::fill(lane, lane + kLanes, is_sum(how) ? 0.0 : x[0]);
  std::size_t i = 0;
  if (how == Combine::Min) {
    for (; i + kLanes <= n; i += kLanes)
      for (std::size_t k = 0; k < kLanes; ++k) lane[k] = x[i + k] < lane[k] ? x[i + k] : lane[k];
    for (; i < n; ++i) lane[0] = x[i] < lane[0] ? x[i] : lane[0];
    for (double v : lane) acc = std::min(acc, v);
  } else if (how == Combine::Max) {
    for (; i + kLanes <= n; i += kLanes)
      for (std::size_t k = 0; k < kLanes; ++k) lane[k] = x[i + k] > lane[k] ? x[i + k] : lane[k];
    for (; i < n; ++i) lane[0] = x[i] > lane[0] ? x[i] : lane[0];
    for (double v : lane) acc = std::max(acc, v);
  } else {
    for (; i + kLanes <= n; i += kLanes)
      for (std::size_t k = 0; k < kLanes; ++k) lane[k] += x[i + k];
    for (; i < n; ++i) lane[0] += x[i];
    // Pairwise: (0+1)+(2+3) ... keeps the lanes' rounding balanced.
    for (std::size_t width = 1; width < kLanes; width *= 2)
      for (std::size_t k = 0; k + width < kLanes; k += 2 * width) lane[k] += lane[k + width];
    acc += lane[0];
  }
  return acc;
}

// Whether a value is one plain double (no conversion needed to reduce it).
bool plain_double(const DataType& t) {
  return t.kind == ValueKind::Double || t.kind == ValueKind::MinDouble || t.kind == ValueKind::MaxDouble;
}

// The total of n values of type t (to_doubles of each, combined).
double slice_total(const DataType& t, Combine how, const std::uint8_t* p, std::size_t n) {
  if (plain_double(t)) {
    double first;
    std::memcpy(&first, p, sizeof first);
    return reduce(how, reinterpret_cast<const double*>(p), n, is_sum(how) ? 0.0 : first);
  }
  double chunk[kChunk];
  double acc = 0;
  for (std::size_t done = 0; done < n; done += kChunk) {
    const std::size_t m = std::min(kChunk, n - done);
    to_doubles(t, p + done * t.width(), m, chunk);
    acc = reduce(how, chunk, m, done == 0 && !is_sum(how) ? chunk[0] : acc);
  }
  return acc;
}

// SCALE_FUNC: the functions of a row are added, then CubeLib's number is taken.
std::vector<double> scale_func_rows(const Severity& values) {
  const auto w = values.dtype().width();
  std::vector<double> out(values.cnodes(), 0.0);
  for (std::size_t c = 0; c < values.cnodes(); ++c) {
    ScaleFunc sum;
    for (std::size_t l = 0; l < values.locations(); ++l) sum.add(ScaleFunc::decode(values.row(c) + l * w, w), +1);
    out[c] = sum.asymptotic();
  }
  return out;
}

// Whether totals over locations commute with the call-tree aggregation of the values (see
// panes.hpp): not for scaling functions (their sum is not a sum of numbers) and not for
// integers narrower than 64 bits, whose sums wrap around at values that doubles hold exactly.
bool totals_commute(const DataType& t) {
  return t.kind != ValueKind::ScaleFunc && !(t.is_integer() && t.width() < 8);
}

// The end of cnode c's subtree: preorder puts it at [c, end).
std::size_t subtree_end(const std::vector<std::uint32_t>& parents, std::size_t c) {
  std::size_t end = c + 1;
  while (end < parents.size() && parents[end] != kNoParent && parents[end] >= c) ++end;
  return end;
}

// Totals of the other kind from the stored kind's row totals (see panes.hpp).
std::vector<double> other_kind(const Severity& stored, MetricKind stored_kind, const std::vector<double>& rows,
                               const std::vector<std::uint32_t>& parents) {
  const auto how = stored.dtype().combine();
  const std::size_t n = rows.size();
  if (!is_sum(how)) {
    if (stored_kind == MetricKind::Inclusive) return rows;  // exclusive min/max rows are the inclusive ones
    // Minimum (maximum) over the present rows of each subtree; none: an all-zero row.
    std::vector<double> out(n, 0.0);
    std::vector<std::uint8_t> have(n, 0);
    for (std::size_t i = n; i-- > 0;) {
      if (stored.present(i)) {
        out[i] = have[i] ? (how == Combine::Min ? std::min(out[i], rows[i]) : std::max(out[i], rows[i])) : rows[i];
        have[i] = 1;
      }
      const auto p = parents[i];
      if (p == kNoParent || !have[i]) continue;
      out[p] = have[p] ? (how == Combine::Min ? std::min(out[p], out[i]) : std::max(out[p], out[i])) : out[i];
      have[p] = 1;
    }
    return out;
  }
  std::vector<double> out = rows;
  if (stored_kind == MetricKind::Exclusive) {
    for (std::size_t i = n; i-- > 0;)
      if (parents[i] != kNoParent) out[parents[i]] += out[i];
  } else {
    for (std::size_t i = 0; i < n; ++i)
      if (parents[i] != kNoParent) out[parents[i]] -= rows[i];
  }
  return out;
}

}  // namespace

std::vector<double> combine_rows(const Severity& values, unsigned threads) {
  const auto& t = values.dtype();
  if (t.kind == ValueKind::ScaleFunc) return scale_func_rows(values);
  const auto how = t.combine();
  const std::size_t cnodes = values.cnodes(), width = t.width();
  std::vector<double> out(cnodes, 0.0);
  if (values.locations() == 0 || width == 0) return out;
  // Each slice's partial totals, merged in slice order so that a result does not depend on
  // which thread finished first.
  std::map<std::size_t, std::vector<double>> partial;
  std::mutex mutex;
  over_location_slices(values.locations(), width, values.present_rows() * values.row_bytes(), threads,
                       [&](std::size_t first, std::size_t count) {
                         std::vector<double> mine(cnodes, 0.0);
                         for (std::size_t c = 0; c < cnodes; ++c)
                           if (values.present(c)) mine[c] = slice_total(t, how, values.row(c) + first * width, count);
                         std::lock_guard lock(mutex);
                         partial.emplace(first, std::move(mine));
                       });
  bool first_slice = true;
  for (const auto& [start, totals] : partial) {
    for (std::size_t c = 0; c < cnodes; ++c)
      out[c] = first_slice ? totals[c]
               : how == Combine::Min ? std::min(out[c], totals[c])
               : how == Combine::Max ? std::max(out[c], totals[c])
                                     : out[c] + totals[c];
    first_slice = false;
  }
  return out;
}

CnodeTotals cnode_totals(const Severity& stored, MetricKind stored_kind, const std::vector<std::uint32_t>& parents,
                         unsigned threads) {
  check_parents(stored, parents);
  auto rows = combine_rows(stored, threads);
  std::vector<double> other;
  if (!totals_commute(stored.dtype())) {
    const auto to = stored_kind == MetricKind::Inclusive ? MetricKind::Exclusive : MetricKind::Inclusive;
    other = combine_rows(convert(stored, stored_kind, to, parents, threads), threads);
  } else {
    other = other_kind(stored, stored_kind, rows, parents);
  }
  CnodeTotals out;
  (stored_kind == MetricKind::Inclusive ? out.inclusive : out.exclusive) = std::move(rows);
  (stored_kind == MetricKind::Inclusive ? out.exclusive : out.inclusive) = std::move(other);
  return out;
}

void cnode_row(const Severity& stored, MetricKind stored_kind, MetricKind kind, const std::vector<std::uint32_t>& parents,
               std::size_t cnode, double* out, unsigned threads) {
  check_parents(stored, parents);
  if (cnode >= stored.cnodes()) throw std::out_of_range("call path index out of range");
  const auto& t = stored.dtype();
  const std::size_t locations = stored.locations(), width = t.width();
  if (stored_kind == kind) return to_doubles(stored, cnode, 1, out);
  if (t.kind == ValueKind::ScaleFunc)  // sums of functions depend on the order: as the matrix does
    return to_doubles(convert(stored, stored_kind, kind, parents, threads), cnode, 1, out);
  // The present rows the value depends on: the subtree (inclusive) or the children (exclusive).
  const bool inclusive = kind == MetricKind::Inclusive;
  std::vector<std::size_t> rows;
  for (std::size_t r = cnode + 1, end = subtree_end(parents, cnode); r < end; ++r)
    if (stored.present(r) && (inclusive || parents[r] == cnode)) rows.push_back(r);
  const bool own = stored.present(cnode);
  const std::size_t per_block = std::max<std::size_t>(1, 16384 / std::max<std::size_t>(width, 1));
  over_location_slices(locations, width, (rows.size() + 1) * stored.row_bytes(), threads,
                       [&](std::size_t first, std::size_t count) {
                         std::vector<std::uint8_t> block(per_block * width);
                         for (std::size_t done = 0; done < count; done += per_block) {
                           const std::size_t n = std::min(per_block, count - done), at = (first + done) * width;
                           // An absent row has no values: it neither starts a minimum at zero nor subtracts.
                           bool have = own;
                           if (own) std::memcpy(block.data(), stored.row(cnode) + at, n * width);
                           else std::memset(block.data(), 0, n * width);
                           for (auto r : rows) {
                             if (!inclusive) subtract_values(t, block.data(), stored.row(r) + at, n);
                             else if (have) combine_values(t, block.data(), stored.row(r) + at, n);
                             else std::memcpy(block.data(), stored.row(r) + at, n * width);
                             have = true;
                           }
                           to_doubles(t, block.data(), n, out + first + done);
                         }
                       });
}

}  // namespace cubescale::cube
