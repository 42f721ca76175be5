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
// Bytes of a row combined at a time by the row kernels: the block stays in L2 (512 KiB per core
// here) while every row of the subtree is combined into it, and each row is read in runs of
// 32 pages, long enough for the hardware prefetchers. Measured on the 1M-location report
// (subtree of 100 rows, 0.84 GB; best of 7 on a busy machine): 16 KiB blocks 160 ms,
// 128 KiB 119 ms, 256 KiB 206 ms.
constexpr std::size_t kBlockBytes = 131072;

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

// The sum of n 64-bit integers as the sum of their doubles. Chunks whose values all lie in
// [0, 2^52) are added as integers (SSE2 has no 64-bit integer to double conversion, so
// converting first halved the speed: 245 -> 70 ms for a 0.84 GB UINT64 metric): no value
// rounds, and the chunk's sum is exact (and equal to the sum of the doubles) below 2^53.
// Other chunks are converted value by value.
double integer_total(const DataType& t, const std::uint8_t* p, std::size_t n) {
  double chunk[kChunk];
  double acc = 0;
  for (std::size_t done = 0; done < n; done += kChunk) {
    const std::size_t m = std::min(kChunk, n - done);
    std::uint64_t any = 0, sum = 0;
    for (std::size_t i = 0; i < m; ++i) {
      std::uint64_t v;
      std::memcpy(&v, p + 8 * (done + i), 8);
      any |= v;
      sum += v;
    }
    if (any >> 52 == 0) {
      acc += static_cast<double>(sum);
    } else {
      to_doubles(t, p + 8 * done, m, chunk);
      acc = reduce(Combine::Sum, chunk, m, acc);
    }
  }
  return acc;
}

// The total of n values of type t (to_doubles of each, combined).
double slice_total(const DataType& t, Combine how, const std::uint8_t* p, std::size_t n) {
  if (t.kind == ValueKind::UInt64 || t.kind == ValueKind::Int64) return integer_total(t, p, n);
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

// Whether the other kind's totals follow from the stored kind's (see panes.hpp). Not for
// scaling functions (their sum is not a sum of numbers), not for integers narrower than 64
// bits (their sums wrap around at values that doubles hold exactly), and not for exclusive
// unsigned values from inclusive ones: a callee above its caller at one location wraps
// around below zero there (real files have such rows: all_dtypes.cubex).
bool totals_commute(const DataType& t, MetricKind stored_kind) {
  if (t.kind == ValueKind::ScaleFunc || (t.is_integer() && t.width() < 8)) return false;
  return !(t.is_integer() && !t.is_signed() && stored_kind == MetricKind::Inclusive);
}

// Per row, a total over slices of the location axis (threads: over_location_slices),
// combined over the slices in their order, so that a result does not depend on which thread
// finished first. row_total(c, first, count) gives row c's total over [first, first + count).
template <class RowTotal>
std::vector<double> sliced_totals(const Severity& values, Combine how, std::size_t work_bytes, unsigned threads,
                                  RowTotal&& row_total) {
  const std::size_t cnodes = values.cnodes(), width = values.dtype().width();
  std::vector<double> out(cnodes, 0.0);
  if (values.locations() == 0 || width == 0) return out;
  std::map<std::size_t, std::vector<double>> partial;
  std::mutex mutex;
  over_location_slices(values.locations(), width, work_bytes, threads, [&](std::size_t first, std::size_t count) {
    std::vector<double> mine(cnodes, 0.0);
    for (std::size_t c = 0; c < cnodes; ++c) mine[c] = row_total(c, first, count);
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

// Values of a row block: bytes [at, at + n * width) of row c's exclusive values from the
// inclusive `stored` matrix, as to_exclusive computes them (the row, or zero if absent, minus
// every present child row). `kids` lists c's children.
void exclusive_block(const Severity& stored, std::size_t c, const std::uint32_t* kids, std::size_t kid_count,
                     std::size_t at, std::size_t n, std::uint8_t* block) {
  const auto& t = stored.dtype();
  if (stored.present(c)) std::memcpy(block, stored.row(c) + at, n * t.width());
  else std::memset(block, 0, n * t.width());
  for (std::size_t k = 0; k < kid_count; ++k)
    if (stored.present(kids[k])) subtract_values(t, block, stored.row(kids[k]) + at, n);
}

// Values per block of the location axis (kBlockBytes).
std::size_t values_per_block(std::size_t width) { return std::max<std::size_t>(1, kBlockBytes / std::max<std::size_t>(width, 1)); }

// Exclusive totals of an inclusive matrix whose exclusive values cannot be derived from its
// row totals: each row's exclusive values block by block, never a whole matrix. Reads every
// row twice (as itself and as its parent's child) and writes nothing.
std::vector<double> exclusive_totals_by_blocks(const Severity& stored, const std::vector<std::uint32_t>& parents,
                                               unsigned threads) {
  const ChildLists tree(parents);
  const auto& t = stored.dtype();
  const std::size_t width = t.width(), per_block = values_per_block(width);
  return sliced_totals(stored, Combine::Sum, 2 * stored.present_rows() * stored.row_bytes(), threads,
                       [&](std::size_t c, std::size_t first, std::size_t count) {
                         std::vector<std::uint8_t> block(per_block * width);
                         double acc = 0;
                         for (std::size_t done = 0; done < count; done += per_block) {
                           const std::size_t n = std::min(per_block, count - done);
                           exclusive_block(stored, c, tree.child.data() + tree.first[c], tree.first[c + 1] - tree.first[c],
                                           (first + done) * width, n, block.data());
                           acc += slice_total(t, Combine::Sum, block.data(), n);
                         }
                         return acc;
                       });
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

// Bytes [at, at + n * width) of row c's inclusive values from the exclusive `stored` matrix:
// row c and the present rows `below` it in its subtree combined (an absent row has no values:
// it neither starts a minimum at zero nor adds); zero when none is present.
void subtree_block(const Severity& stored, std::size_t c, const std::vector<std::uint32_t>& below, std::size_t at,
                   std::size_t n, std::uint8_t* block) {
  const auto& t = stored.dtype();
  bool have = stored.present(c);
  if (have) std::memcpy(block, stored.row(c) + at, n * t.width());
  else std::memset(block, 0, n * t.width());
  for (auto r : below) {
    if (have) combine_values(t, block, stored.row(r) + at, n);
    else std::memcpy(block, stored.row(r) + at, n * t.width());
    have = true;
  }
}

}  // namespace

std::vector<double> combine_rows(const Severity& values, unsigned threads) {
  const auto& t = values.dtype();
  if (t.kind == ValueKind::ScaleFunc) return scale_func_rows(values);
  const auto how = t.combine();
  return sliced_totals(values, how, values.present_rows() * values.row_bytes(), threads,
                       [&](std::size_t c, std::size_t first, std::size_t count) {
                         return values.present(c) ? slice_total(t, how, values.row(c) + first * t.width(), count) : 0.0;
                       });
}

CnodeTotals cnode_totals(const Severity& stored, MetricKind stored_kind, const std::vector<std::uint32_t>& parents,
                         unsigned threads) {
  check_parents(stored, parents);
  auto rows = combine_rows(stored, threads);
  std::vector<double> other;
  if (totals_commute(stored.dtype(), stored_kind))
    other = other_kind(stored, stored_kind, rows, parents);
  else if (stored_kind == MetricKind::Inclusive && stored.dtype().kind != ValueKind::ScaleFunc)
    other = exclusive_totals_by_blocks(stored, parents, threads);
  else  // narrow integers stored exclusive, scaling functions: rare and small, as before
    other = combine_rows(convert(stored, stored_kind, MetricKind::Inclusive == stored_kind ? MetricKind::Exclusive
                                                                                            : MetricKind::Inclusive,
                                 parents, threads),
                         threads);
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
  std::vector<std::uint32_t> rows;
  for (std::size_t r = cnode + 1, end = subtree_end(parents, cnode); r < end; ++r)
    if (stored.present(r) && (inclusive || parents[r] == cnode)) rows.push_back(static_cast<std::uint32_t>(r));
  const std::size_t per_block = values_per_block(width);
  over_location_slices(locations, width, (rows.size() + 1) * stored.row_bytes(), threads,
                       [&](std::size_t first, std::size_t count) {
                         std::vector<std::uint8_t> block(per_block * width);
                         for (std::size_t done = 0; done < count; done += per_block) {
                           const std::size_t n = std::min(per_block, count - done), at = (first + done) * width;
                           if (inclusive) subtree_block(stored, cnode, rows, at, n, block.data());
                           else exclusive_block(stored, cnode, rows.data(), rows.size(), at, n, block.data());
                           to_doubles(t, block.data(), n, out + first + done);
                         }
                       });
}

}  // namespace cubescale::cube
