#include "cubescale/threads/combine.hpp"

#include <algorithm>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <type_traits>

#include "cubescale/common/unaligned.hpp"
#include "cubescale/cube/aggregate.hpp"

namespace cubescale::threads {

using cube::DataType;
using cube::Severity;
using cube::ValueKind;

void ColumnGroups::add(const std::vector<std::uint32_t>& columns) {
  member.insert(member.end(), columns.begin(), columns.end());
  first.push_back(member.size());
}

namespace {

// Calls f(T{}) with the C++ type of a scalar value kind; false for records.
template <class F>
bool visit_scalar(ValueKind kind, F&& f) {
  switch (kind) {
    case ValueKind::Int8: f(std::int8_t{}); return true;
    case ValueKind::Int16: f(std::int16_t{}); return true;
    case ValueKind::Int32: f(std::int32_t{}); return true;
    case ValueKind::Int64: f(std::int64_t{}); return true;
    case ValueKind::UInt8: f(std::uint8_t{}); return true;
    case ValueKind::UInt16: f(std::uint16_t{}); return true;
    case ValueKind::UInt32: f(std::uint32_t{}); return true;
    case ValueKind::UInt64: f(std::uint64_t{}); return true;
    case ValueKind::Double:
    case ValueKind::MinDouble:
    case ValueKind::MaxDouble: f(double{}); return true;
    default: return false;
  }
}

void check(const Severity& in, const ColumnGroups& groups, const std::vector<std::uint8_t>& visited) {
  if (visited.size() != in.cnodes() * in.locations())
    throw std::invalid_argument("one visited flag per (call path, location) expected");
  for (auto m : groups.member)
    if (m >= in.locations()) throw std::invalid_argument("group member out of range");
}

// Sums in the unsigned type for integers: wraps around like the counters, no overflow UB.
template <class T, bool = std::is_integral_v<T>>
struct Accumulator { using type = T; };
template <class T>
struct Accumulator<T, true> { using type = std::make_unsigned_t<T>; };

template <class T>
void sum_row(const T* src, T* dst, const ColumnGroups& g) {
  using Acc = typename Accumulator<T>::type;
  for (std::size_t o = 0; o < g.size(); ++o) {
    Acc acc = 0;
    for (std::size_t i = g.first[o]; i < g.first[o + 1]; ++i) acc = static_cast<Acc>(acc + static_cast<Acc>(src[g.member[i]]));
    dst[o] = static_cast<T>(acc);
  }
}

// Minimum (or maximum) over the members that visited; over all members when none did.
template <bool Max>
void extreme_row(const double* src, double* dst, const ColumnGroups& g, const std::uint8_t* visited) {
  for (std::size_t o = 0; o < g.size(); ++o) {
    bool any = false;
    double acc = Max ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
    for (std::size_t i = g.first[o]; i < g.first[o + 1]; ++i) {
      const auto m = g.member[i];
      if (!visited[m]) continue;
      acc = Max ? std::max(acc, src[m]) : std::min(acc, src[m]);
      any = true;
    }
    if (!any)
      for (std::size_t i = g.first[o]; i < g.first[o + 1]; ++i)
        acc = Max ? std::max(acc, src[g.member[i]]) : std::min(acc, src[g.member[i]]);
    dst[o] = g.first[o] == g.first[o + 1] ? 0.0 : acc;
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

}  // namespace

bool is_scalar(const DataType& t) {
  return visit_scalar(t.kind, [](auto) {});
}

Severity fold_columns(const Severity& in, const ColumnGroups& groups, const std::vector<std::uint8_t>& visited) {
  check(in, groups, visited);
  const auto& t = in.dtype();
  Severity out(t, in.cnodes(), groups.size());
  const std::size_t locations = in.locations();
  for (std::size_t c = 0; c < in.cnodes(); ++c) {
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
  return out;
}

Severity tuple_columns(const Severity& in, const ColumnGroups& groups, const std::vector<std::uint8_t>& visited) {
  check(in, groups, visited);
  if (!is_scalar(in.dtype())) throw std::invalid_argument("SET makes tuples of scalar values only");
  Severity out(*cube::parse_data_type("TAU_ATOMIC"), in.cnodes(), groups.size());
  const std::size_t locations = in.locations();
  std::vector<double> row(locations);
  // Every row, present or not: a call path the threads visited without a value (0 bytes
  // sent) still has its N, and zero minima and maxima.
  for (std::size_t c = 0; c < in.cnodes(); ++c) {
    bool nonzero = false;
    visit_scalar(in.dtype().kind, [&](auto tag) {
      using T = decltype(tag);
      const auto* src = reinterpret_cast<const T*>(in.row(c));
      for (std::size_t l = 0; l < locations; ++l) row[l] = static_cast<double>(src[l]);
    });
    const auto* flags = visited.data() + c * locations;
    for (std::size_t o = 0; o < groups.size(); ++o) {
      std::uint32_t n = 0;
      double lo = std::numeric_limits<double>::infinity(), hi = -lo, sum = 0, sum2 = 0;
      for (std::size_t i = groups.first[o]; i < groups.first[o + 1]; ++i) {
        const auto m = groups.member[i];
        const double x = row[m];
        sum += x, sum2 += x * x;
        if (flags[m]) ++n, lo = std::min(lo, x), hi = std::max(hi, x);
      }
      if (n == 0) {  // nobody visited: the extremes of what is there (zeros, as a rule)
        for (std::size_t i = groups.first[o]; i < groups.first[o + 1]; ++i)
          lo = std::min(lo, row[groups.member[i]]), hi = std::max(hi, row[groups.member[i]]);
        if (groups.first[o] == groups.first[o + 1]) lo = hi = 0;
      }
      nonzero |= n != 0 || sum != 0 || lo != 0 || hi != 0;
      auto* dst = out.row(c) + o * 36;
      store_unaligned(dst, n);
      store_unaligned(dst + 4, lo);
      store_unaligned(dst + 12, hi);
      store_unaligned(dst + 20, sum);
      store_unaligned(dst + 28, sum2);
    }
    out.set_present(c, nonzero);
  }
  return out;
}

Severity count_visits(const ColumnGroups& groups, const std::vector<std::uint8_t>& visited, std::size_t cnodes,
                      std::size_t locations) {
  if (visited.size() != cnodes * locations) throw std::invalid_argument("one visited flag per (call path, location) expected");
  Severity out(*cube::parse_data_type("UINT64"), cnodes, groups.size());
  for (std::size_t c = 0; c < cnodes; ++c) {
    const auto* flags = visited.data() + c * locations;
    auto* dst = reinterpret_cast<std::uint64_t*>(out.row(c));
    bool any = false;
    for (std::size_t o = 0; o < groups.size(); ++o) {
      std::uint64_t n = 0;
      for (std::size_t i = groups.first[o]; i < groups.first[o + 1]; ++i) n += flags[groups.member[i]] != 0;
      dst[o] = n;
      any |= n != 0;
    }
    out.set_present(c, any);
  }
  return out;
}

}  // namespace cubescale::threads
