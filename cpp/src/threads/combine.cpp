#include "cubescale/threads/combine.hpp"

#include <algorithm>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <type_traits>

#include "cubescale/common/unaligned.hpp"
#include "cubescale/cube/aggregate.hpp"
#include "cubescale/cube/visit_value.hpp"
#include "cubescale/threads/parallel_ranges.hpp"

namespace cubescale::threads {

using cube::DataType;
using cube::Severity;
using cube::ValueKind;

void ColumnGroups::add(const std::vector<std::uint32_t>& columns) {
  bool run = true;
  for (std::size_t i = 1; i < columns.size(); ++i) run &= columns[i] == columns[i - 1] + 1;
  member.insert(member.end(), columns.begin(), columns.end());
  first.push_back(member.size());
  consecutive.push_back(run ? 1 : 0);
}

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

using cube::visit_scalar;

void check(const Severity& in, const ColumnGroups& groups, const std::vector<std::uint8_t>& visited) {
  if (visited.size() != in.cnodes() * in.locations())
    throw std::invalid_argument("one visited flag per (call path, location) expected");
  for (auto m : groups.member)
    if (m >= in.locations()) throw std::invalid_argument("group member out of range");
}

// Rows split over the cores for matrices of 8 MiB and more (each row is independent).
template <class Body>
void over_rows(std::size_t rows, std::size_t bytes, Body&& body) {
  over_ranges(rows, bytes < (std::size_t(8) << 20), body);
}

template <class T, bool = std::is_integral_v<T>>
struct Accumulator { using type = T; };
template <class T>
struct Accumulator<T, true> { using type = std::make_unsigned_t<T>; };

// Sums in the unsigned type for integers: wraps around like the counters, no overflow UB.
template <class T>
void sum_row(const T* src, T* dst, const ColumnGroups& g) {
  using Acc = typename Accumulator<T>::type;
  for (std::size_t o = 0; o < g.size(); ++o) {
    const std::size_t b = g.first[o], e = g.first[o + 1];
    Acc acc = 0;
    if (g.consecutive[o] && e > b) {
      const T* s = src + g.member[b];
      for (std::size_t i = 0; i < e - b; ++i) acc = static_cast<Acc>(acc + static_cast<Acc>(s[i]));
    } else {
      for (std::size_t i = b; i < e; ++i) acc = static_cast<Acc>(acc + static_cast<Acc>(src[g.member[i]]));
    }
    dst[o] = static_cast<T>(acc);
  }
}

// Minimum (or maximum) over the members that visited; over all members when none did.
template <bool Max>
void extreme_row(const double* src, double* dst, const ColumnGroups& g, const std::uint8_t* visited) {
  auto pick = [](double a, double b) { return Max ? std::max(a, b) : std::min(a, b); };
  const double none = Max ? -kInf : kInf;
  for (std::size_t o = 0; o < g.size(); ++o) {
    const std::size_t b = g.first[o], e = g.first[o + 1];
    double acc = none;
    unsigned any = 0;
    for (std::size_t i = b; i < e; ++i) {
      const auto m = g.member[i];
      acc = pick(acc, visited[m] ? src[m] : none);
      any |= visited[m];
    }
    if (!any)
      for (std::size_t i = b; i < e; ++i) acc = pick(acc, src[g.member[i]]);
    dst[o] = e == b ? 0.0 : acc;
  }
}

// Records (TAU_ATOMIC, histograms, vectors ...): copy one member, combine the others as the
// system tree does. Sum-like types take every member; min/max-like ones the visited ones.
void record_row(const DataType& t, const std::uint8_t* src, std::uint8_t* dst, const ColumnGroups& g,
                const std::uint8_t* visited) {
  const std::size_t w = t.width();
  const bool all = t.combine() == cube::Combine::Sum;
  for (std::size_t o = 0; o < g.size(); ++o) {
    bool any_visited = false;
    for (std::size_t i = g.first[o]; i < g.first[o + 1]; ++i) any_visited |= visited[g.member[i]] != 0;
    bool first = true;
    for (std::size_t i = g.first[o]; i < g.first[o + 1]; ++i) {
      const auto m = g.member[i];
      if (!all && any_visited && !visited[m]) continue;
      if (first) std::memcpy(dst + o * w, src + m * w, w), first = false;
      else cube::combine_values(t, dst + o * w, src + m * w, 1);
    }
  }
}

struct Tuple {
  std::uint32_t n = 0;
  double lo = kInf, hi = -kInf, sum = 0, sum2 = 0;
};

// One group's tuple: N, min and max over the visited members, sums over all.
template <class T>
Tuple tuple_of(const T* src, const std::uint8_t* visited, const ColumnGroups& g, std::size_t o) {
  const std::size_t b = g.first[o], e = g.first[o + 1];
  Tuple t;
  auto take = [&](std::size_t m) {
    const double x = static_cast<double>(src[m]);
    const bool v = visited[m] != 0;
    t.sum += x, t.sum2 += x * x, t.n += v;
    t.lo = std::min(t.lo, v ? x : kInf), t.hi = std::max(t.hi, v ? x : -kInf);
  };
  if (g.consecutive[o] && e > b) {
    // Separate simple loops over the run: each one vectorizes (the combined one did not).
    const T* x = src + g.member[b];
    const std::uint8_t* v = visited + g.member[b];
    const std::size_t n = e - b;
    double sum = 0, sum2 = 0, lo = kInf, hi = -kInf;
    std::uint32_t count = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const double y = static_cast<double>(x[i]);
      sum += y, sum2 += y * y;
    }
    for (std::size_t i = 0; i < n; ++i) count += v[i] != 0;
    for (std::size_t i = 0; i < n; ++i) {
      const double y = static_cast<double>(x[i]);
      lo = v[i] && y < lo ? y : lo;
      hi = v[i] && y > hi ? y : hi;
    }
    t.sum = sum, t.sum2 = sum2, t.lo = lo, t.hi = hi, t.n = count;
  } else {
    for (std::size_t i = b; i < e; ++i) take(g.member[i]);
  }
  if (t.n == 0) {  // nobody visited: the extremes of what is there (zeros, as a rule)
    for (std::size_t i = b; i < e; ++i) {
      const double x = static_cast<double>(src[g.member[i]]);
      t.lo = std::min(t.lo, x), t.hi = std::max(t.hi, x);
    }
    if (e == b) t.lo = t.hi = 0;
  }
  return t;
}

}  // namespace

bool is_scalar(const DataType& t) {
  return visit_scalar(t.kind, [](auto) {});
}

Severity fold_columns(const Severity& in, const ColumnGroups& groups, const std::vector<std::uint8_t>& visited) {
  check(in, groups, visited);
  const auto& t = in.dtype();
  Severity out(t, in.cnodes(), groups.size());
  const std::size_t locations = in.locations();
  over_rows(in.cnodes(), in.bytes(), [&](std::size_t begin, std::size_t end) {
    for (std::size_t c = begin; c < end; ++c) {
      // Matrices built from bytes (local profiles) may not mark their present rows.
      if (!in.present(c) && cube::row_is_zero(in.row(c), in.row_bytes())) continue;
      out.set_present(c, true);
      const auto* flags = visited.data() + c * locations;
      if (t.kind == ValueKind::MinDouble || t.kind == ValueKind::MaxDouble) {
        const auto* src = reinterpret_cast<const double*>(in.row(c));
        auto* dst = reinterpret_cast<double*>(out.row(c));
        if (t.kind == ValueKind::MaxDouble) extreme_row<true>(src, dst, groups, flags);
        else extreme_row<false>(src, dst, groups, flags);
        continue;
      }
      const bool scalar = visit_scalar(t.kind, [&](auto tag) {
        using T = decltype(tag);
        sum_row(reinterpret_cast<const T*>(in.row(c)), reinterpret_cast<T*>(out.row(c)), groups);
      });
      if (!scalar) record_row(t, in.row(c), out.row(c), groups, flags);
    }
  });
  return out;
}

Severity tuple_columns(const Severity& in, const ColumnGroups& groups, const std::vector<std::uint8_t>& visited) {
  check(in, groups, visited);
  if (!is_scalar(in.dtype())) throw std::invalid_argument("SET makes tuples of scalar values only");
  Severity out(*cube::parse_data_type("TAU_ATOMIC"), in.cnodes(), groups.size());
  const std::size_t locations = in.locations();
  // Every row, present or not: a call path the threads visited without a value (0 bytes
  // sent) still has its N, and zero minima and maxima.
  over_rows(in.cnodes(), in.bytes(), [&](std::size_t begin, std::size_t end) {
    for (std::size_t c = begin; c < end; ++c) {
      bool nonzero = false;
      const auto* flags = visited.data() + c * locations;
      visit_scalar(in.dtype().kind, [&](auto tag) {
        using T = decltype(tag);
        const auto* src = reinterpret_cast<const T*>(in.row(c));
        for (std::size_t o = 0; o < groups.size(); ++o) {
          const auto t = tuple_of(src, flags, groups, o);
          nonzero |= t.n != 0 || t.sum != 0 || t.lo != 0 || t.hi != 0;
          auto* dst = out.row(c) + o * 36;
          store_unaligned(dst, t.n);
          store_unaligned(dst + 4, t.lo);
          store_unaligned(dst + 12, t.hi);
          store_unaligned(dst + 20, t.sum);
          store_unaligned(dst + 28, t.sum2);
        }
      });
      out.set_present(c, nonzero);
    }
  });
  return out;
}

Severity count_visits(const ColumnGroups& groups, const std::vector<std::uint8_t>& visited, std::size_t cnodes,
                      std::size_t locations, const cube::DataType& dtype) {
  if (visited.size() != cnodes * locations) throw std::invalid_argument("one visited flag per (call path, location) expected");
  if (dtype.kind != ValueKind::UInt64 && dtype.kind != ValueKind::UInt32)
    throw std::invalid_argument("thread counts are UINT64 or UINT32");
  Severity out(dtype, cnodes, groups.size());
  for (std::size_t c = 0; c < cnodes; ++c) {
    const auto* flags = visited.data() + c * locations;
    bool any = false;
    for (std::size_t o = 0; o < groups.size(); ++o) {
      std::uint64_t n = 0;
      for (std::size_t i = groups.first[o]; i < groups.first[o + 1]; ++i) n += flags[groups.member[i]] != 0;
      if (dtype.kind == ValueKind::UInt64) reinterpret_cast<std::uint64_t*>(out.row(c))[o] = n;
      else reinterpret_cast<std::uint32_t*>(out.row(c))[o] = static_cast<std::uint32_t>(n);
      any |= n != 0;
    }
    out.set_present(c, any);
  }
  return out;
}

}  // namespace cubescale::threads
