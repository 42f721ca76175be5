#include "cubescale/cube/aggregate.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <stdexcept>
#include <utility>
#include <vector>

#include "cubescale/common/unaligned.hpp"
#include "cubescale/cube/location_slices.hpp"
#include "cubescale/cube/scale_func.hpp"
#include "cubescale/cube/visit_value.hpp"

namespace cubescale::cube {

namespace {

// A double at any offset of a packed record.
double f64(const std::uint8_t* p) { return load_unaligned<double>(p); }

// Unsigned arithmetic wraps around; signed is done in unsigned to wrap without UB.
template <class T>
void add_array(std::uint8_t* dst, const std::uint8_t* src, std::size_t n) {
  auto* d = reinterpret_cast<T*>(dst);
  const auto* s = reinterpret_cast<const T*>(src);
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    for (std::size_t i = 0; i < n; ++i) d[i] = static_cast<T>(static_cast<U>(d[i]) + static_cast<U>(s[i]));
  } else {
    for (std::size_t i = 0; i < n; ++i) d[i] += s[i];
  }
}
template <class T>
void sub_array(std::uint8_t* dst, const std::uint8_t* src, std::size_t n) {
  auto* d = reinterpret_cast<T*>(dst);
  const auto* s = reinterpret_cast<const T*>(src);
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    for (std::size_t i = 0; i < n; ++i) d[i] = static_cast<T>(static_cast<U>(d[i]) - static_cast<U>(s[i]));
  } else {
    for (std::size_t i = 0; i < n; ++i) d[i] -= s[i];
  }
}
void min_array(std::uint8_t* dst, const std::uint8_t* src, std::size_t n) {
  auto* d = reinterpret_cast<double*>(dst);
  const auto* s = reinterpret_cast<const double*>(src);
  for (std::size_t i = 0; i < n; ++i) d[i] = std::min(d[i], s[i]);
}
void max_array(std::uint8_t* dst, const std::uint8_t* src, std::size_t n) {
  auto* d = reinterpret_cast<double*>(dst);
  const auto* s = reinterpret_cast<const double*>(src);
  for (std::size_t i = 0; i < n; ++i) d[i] = std::max(d[i], s[i]);
}

void tau_combine(std::uint8_t* dst, const std::uint8_t* src, std::size_t n, bool subtract) {
  for (std::size_t i = 0; i < n; ++i, dst += 36, src += 36) {
    const auto sign = subtract ? -1.0 : 1.0;
    const auto count = load_unaligned<std::uint32_t>(dst), other = load_unaligned<std::uint32_t>(src);
    store_unaligned<std::uint32_t>(dst, subtract ? count - other : count + other);
    if (!subtract) {
      store_unaligned(dst + 4, std::min(f64(dst + 4), f64(src + 4)));
      store_unaligned(dst + 12, std::max(f64(dst + 12), f64(src + 12)));
    }
    store_unaligned(dst + 20, f64(dst + 20) + sign * f64(src + 20));
    store_unaligned(dst + 28, f64(dst + 28) + sign * f64(src + 28));
  }
}

void histogram_combine(const DataType& t, std::uint8_t* dst, const std::uint8_t* src, std::size_t n, bool subtract) {
  const std::size_t w = t.width();
  for (std::size_t i = 0; i < n; ++i, dst += w, src += w) {
    if (!subtract) {
      store_unaligned(dst, std::min(f64(dst), f64(src)));
      store_unaligned(dst + 8, std::max(f64(dst + 8), f64(src + 8)));
      add_array<double>(dst + 16, src + 16, t.count);
    } else {
      sub_array<double>(dst + 16, src + 16, t.count);
    }
  }
}

void sum_like(const DataType& t, std::uint8_t* dst, const std::uint8_t* src, std::size_t n, bool subtract) {
  auto run = [&](auto tag) {
    using T = decltype(tag);
    const std::size_t count = n * (t.width() / sizeof(T));
    subtract ? sub_array<T>(dst, src, count) : add_array<T>(dst, src, count);
  };
  if (!visit_integer(t.kind, run)) run(double{});  // DOUBLE and the double vectors: field-wise sums
}

}  // namespace

void combine_values(const DataType& t, std::uint8_t* dst, const std::uint8_t* src, std::size_t n) {
  switch (t.combine()) {
    case Combine::Min: return min_array(dst, src, n);
    case Combine::Max: return max_array(dst, src, n);
    case Combine::TauAtomic: return tau_combine(dst, src, n, false);
    case Combine::Histogram: return histogram_combine(t, dst, src, n, false);
    case Combine::ScaleFunc: return scale_func_combine(dst, src, n, t.width(), +1);
    case Combine::Sum: return sum_like(t, dst, src, n, false);
  }
}

void subtract_values(const DataType& t, std::uint8_t* dst, const std::uint8_t* src, std::size_t n) {
  switch (t.combine()) {
    case Combine::Min: case Combine::Max: return;
    case Combine::TauAtomic: return tau_combine(dst, src, n, true);
    case Combine::Histogram: return histogram_combine(t, dst, src, n, true);
    case Combine::ScaleFunc: return scale_func_combine(dst, src, n, t.width(), -1);
    case Combine::Sum: return sum_like(t, dst, src, n, true);
  }
}

bool zero_row_is_a_value(const DataType& t) {
  const auto c = t.combine();
  return c != Combine::Sum && c != Combine::ScaleFunc;
}

void check_parents(const Severity& values, const std::vector<std::uint32_t>& parents) {
  if (parents.size() != values.cnodes()) throw std::invalid_argument("parents and rows differ in size");
  for (std::size_t i = 0; i < parents.size(); ++i)
    if (parents[i] != kNoParent && parents[i] >= i) throw std::invalid_argument("parents must precede children");
}

// Conversions write a fresh or reused output matrix: the slices are decided by its size.
template <class Body>
void over_location_slices(const Severity& out, unsigned threads, Body&& body) {
  over_location_slices(out.locations(), out.dtype().width(), out.bytes(), threads, std::forward<Body>(body));
}

namespace {

void check_output(const Severity& in, const Severity& out) {
  if (out.cnodes() != in.cnodes() || out.locations() != in.locations() || out.dtype().kind != in.dtype().kind ||
      out.dtype().count != in.dtype().count)
    throw std::invalid_argument("the output matrix differs from the input in shape or data type");
  // Rows are read after others are written (children before or after their parent): the
  // result would depend on the order. std::less orders unrelated pointers too.
  const std::less<const std::uint8_t*> before;
  if (in.bytes() && out.bytes() && before(out.data(), in.data() + in.bytes()) && before(in.data(), out.data() + out.bytes()))
    throw std::invalid_argument("the output matrix overlaps the input");
}

// Where a slice's output rows are computed. Why: when the output sits a few bytes past the
// input modulo 4096 (a NumPy buffer starts 16 bytes past a page, our matrices on a page),
// every store looks like it may feed the next loads (4K aliasing), and the conversion ran
// 1.7-2.3x slower (measured). Such outputs are computed block by block in a buffer placed
// well away (mod 4096) from both the input row and the destination, then copied out: within
// 10-20% of an aligned output.
class RowStage {
 public:
  RowStage(const Severity& in, const Severity& out)
      : staged_((address(out.data()) - address(in.data())) % kLine != 0) {}

  // Computes the values [first, first + count) of an output row with op(dst, byte_offset, n).
  // `in_row` is the input row the op reads most (where the buffer must not alias).
  template <class Op>
  void write(const std::uint8_t* in_row, std::uint8_t* out_row, std::size_t first, std::size_t count,
             std::size_t width, Op&& op) {
    if (!staged_) return op(out_row + first * width, first * width, count);
    const std::size_t per_block = std::max<std::size_t>(1, kBlockBytes / width);
    buffer_.resize(per_block * width + kPage);
    for (std::size_t done = 0; done < count; done += per_block) {
      const std::size_t n = std::min(per_block, count - done), at = (first + done) * width;
      std::uint8_t* stage = place(address(in_row + at), address(out_row + at));
      op(stage, at, n);
      std::memcpy(out_row + at, stage, n * width);
    }
  }

 private:
  static constexpr std::uintptr_t kLine = 64, kPage = 4096, kBlockBytes = 8192, kApart = 256;
  static std::uintptr_t address(const void* p) { return reinterpret_cast<std::uintptr_t>(p); }
  static bool far(std::uintptr_t a, std::uintptr_t b) {
    const auto d = (a - b) % kPage;
    return d >= kApart && d <= kPage - kApart;
  }
  // Half a page past the input, or a quarter when that is near the destination. Offsets by
  // whole kilobytes keep the input's alignment, which the element-wise ops need.
  std::uint8_t* place(std::uintptr_t in, std::uintptr_t dst) {
    const auto base = address(buffer_.data());
    std::uintptr_t want = in + kPage / 2;
    if (!far(want, dst)) want = in + kPage / 4;
    return buffer_.data() + (want - base) % kPage;
  }

  bool staged_;
  std::vector<std::uint8_t> buffer_;
};

// Each output row is written once: its own row, then its children's rows combined into it
// (the same memory traffic as one element-wise NumPy sum). Backward, so that children are
// already inclusive when their parent is computed. Which rows end up present is decided first,
// so that the slices only move values. These write the present rows and every present flag;
// absent rows keep what `out` held (zero in a fresh matrix).
void inclusive_rows(const Severity& exclusive, const std::vector<std::uint32_t>& parents, Severity& out, unsigned threads) {
  check_parents(exclusive, parents);
  check_output(exclusive, out);
  const ChildLists tree(parents);
  for (std::size_t i = parents.size(); i-- > 0;) {
    bool have = exclusive.present(i);
    for (auto k = tree.first[i]; k < tree.first[i + 1] && !have; ++k) have = out.present(tree.child[k]);
    out.set_present(i, have);
  }
  const auto& t = exclusive.dtype();
  const auto width = t.width();
  over_location_slices(out, threads, [&](std::size_t first, std::size_t count) {
    RowStage stage(exclusive, out);
    for (std::size_t i = parents.size(); i-- > 0;) {
      if (!out.present(i)) continue;
      stage.write(exclusive.row(i), out.row(i), first, count, width, [&](std::uint8_t* dst, std::size_t at, std::size_t n) {
        bool have = exclusive.present(i);
        if (have) std::memcpy(dst, exclusive.row(i) + at, n * width);
        for (auto k = tree.first[i]; k < tree.first[i + 1]; ++k) {
          const auto c = tree.child[k];
          if (!out.present(c)) continue;
          // An absent row has no values: copying keeps MIN/MAX from starting at zero.
          if (have) combine_values(t, dst, out.row(c) + at, n);
          else std::memcpy(dst, out.row(c) + at, n * width);
          have = true;
        }
      });
    }
  });
}

void exclusive_rows(const Severity& inclusive, const std::vector<std::uint32_t>& parents, Severity& out, unsigned threads) {
  check_parents(inclusive, parents);
  check_output(inclusive, out);
  const ChildLists tree(parents);
  for (std::size_t i = 0; i < parents.size(); ++i) {
    bool have = inclusive.present(i);
    for (auto k = tree.first[i]; k < tree.first[i + 1] && !have; ++k) have = inclusive.present(tree.child[k]);
    out.set_present(i, have);
  }
  const auto& t = inclusive.dtype();
  const auto width = t.width();
  over_location_slices(out, threads, [&](std::size_t first, std::size_t count) {
    RowStage stage(inclusive, out);
    for (std::size_t i = 0; i < parents.size(); ++i) {
      if (!out.present(i)) continue;
      stage.write(inclusive.row(i), out.row(i), first, count, width, [&](std::uint8_t* dst, std::size_t at, std::size_t n) {
        // A row absent from the input is zero, whatever `out` held before.
        if (inclusive.present(i)) std::memcpy(dst, inclusive.row(i) + at, n * width);
        else std::memset(dst, 0, n * width);
        for (auto k = tree.first[i]; k < tree.first[i + 1]; ++k) {
          const auto c = tree.child[k];
          if (inclusive.present(c)) subtract_values(t, dst, inclusive.row(c) + at, n);
        }
      });
    }
  });
}

void copied_rows(const Severity& values, Severity& out, unsigned threads) {
  check_output(values, out);
  for (std::size_t c = 0; c < values.cnodes(); ++c) out.set_present(c, values.present(c));
  const auto width = values.dtype().width();
  over_location_slices(out, threads, [&](std::size_t first, std::size_t count) {
    RowStage stage(values, out);
    for (std::size_t c = 0; c < values.cnodes(); ++c)
      if (values.present(c))
        stage.write(values.row(c), out.row(c), first, count, width, [&](std::uint8_t* dst, std::size_t at, std::size_t n) {
          std::memcpy(dst, values.row(c) + at, n * width);
        });
  });
}

}  // namespace

Severity to_inclusive(const Severity& exclusive, const std::vector<std::uint32_t>& parents, unsigned threads) {
  Severity out(exclusive.dtype(), exclusive.cnodes(), exclusive.locations());
  inclusive_rows(exclusive, parents, out, threads);
  return out;
}

Severity to_exclusive(const Severity& inclusive, const std::vector<std::uint32_t>& parents, unsigned threads) {
  Severity out(inclusive.dtype(), inclusive.cnodes(), inclusive.locations());
  exclusive_rows(inclusive, parents, out, threads);
  return out;
}

Severity convert(const Severity& values, MetricKind from, MetricKind to, const std::vector<std::uint32_t>& parents,
                 unsigned threads) {
  if (from == to) return values;
  return to == MetricKind::Inclusive ? to_inclusive(values, parents, threads) : to_exclusive(values, parents, threads);
}

// Into a caller's matrix, whatever it held: absent rows are cleared too.
void to_inclusive(const Severity& exclusive, const std::vector<std::uint32_t>& parents, Severity& out, unsigned threads) {
  inclusive_rows(exclusive, parents, out, threads);
  out.clear_absent_rows();
}

void to_exclusive(const Severity& inclusive, const std::vector<std::uint32_t>& parents, Severity& out, unsigned threads) {
  exclusive_rows(inclusive, parents, out, threads);
  out.clear_absent_rows();
}

void convert(const Severity& values, MetricKind from, MetricKind to, const std::vector<std::uint32_t>& parents,
             Severity& out, unsigned threads) {
  if (from != to)
    return to == MetricKind::Inclusive ? to_inclusive(values, parents, out, threads)
                                       : to_exclusive(values, parents, out, threads);
  copied_rows(values, out, threads);
  out.clear_absent_rows();
}

Severity combine_locations(const Severity& values, const std::vector<std::uint32_t>& group, std::size_t groups) {
  if (group.size() != values.locations()) throw std::invalid_argument("one group per location expected");
  for (auto g : group)
    if (g >= groups) throw std::invalid_argument("group index out of range");
  Severity out(values.dtype(), values.cnodes(), groups);
  const std::size_t w = values.dtype().width();
  std::vector<std::uint8_t> seen(groups);
  for (std::size_t c = 0; c < values.cnodes(); ++c) {
    if (!values.present(c)) continue;
    out.set_present(c, true);
    std::fill(seen.begin(), seen.end(), 0);
    const auto* src = values.row(c);
    auto* dst = out.row(c);
    for (std::size_t l = 0; l < group.size(); ++l) {
      // The first value of a group is copied, so that MIN/MAX do not start from zero.
      if (!seen[group[l]]) std::memcpy(dst + group[l] * w, src + l * w, w), seen[group[l]] = 1;
      else combine_values(values.dtype(), dst + group[l] * w, src + l * w, 1);
    }
  }
  return out;
}

void to_doubles(const Severity& values, double* out) { to_doubles(values, 0, values.cnodes(), out); }

void to_doubles(const Severity& values, std::size_t first_row, std::size_t rows, double* out) {
  if (first_row > values.cnodes() || rows > values.cnodes() - first_row) throw std::out_of_range("rows out of range");
  to_doubles(values.dtype(), values.data() + first_row * values.row_bytes(), rows * values.locations(), out);
}

void to_doubles(const DataType& t, const std::uint8_t* p, std::size_t n, double* out) {
  const std::size_t w = t.width();
  auto run = [&](auto tag) {
    using T = decltype(tag);
    for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<double>(load_unaligned<T>(p + i * w));
  };
  if (visit_integer(t.kind, run)) return;
  switch (t.kind) {
    case ValueKind::TauAtomic:
      for (std::size_t i = 0; i < n; ++i) out[i] = f64(p + i * w + 20);
      return;
    case ValueKind::ScaleFunc:  // CubeLib's number for a scaling function
      for (std::size_t i = 0; i < n; ++i) out[i] = ScaleFunc::decode(p + i * w, w).asymptotic();
      return;
    case ValueKind::Histogram:
      for (std::size_t i = 0; i < n; ++i) {
        double s = 0;
        for (std::size_t b = 0; b < t.count; ++b) s += f64(p + i * w + 16 + 8 * b);
        out[i] = s;
      }
      return;
    default: return run(double{});
  }
}

}  // namespace cubescale::cube
