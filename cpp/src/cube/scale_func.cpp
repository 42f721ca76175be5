#include "cubescale/cube/scale_func.hpp"

#include <algorithm>
#include <compare>
#include <cstring>
#include <string>

#include "cubescale/common/unaligned.hpp"

namespace cubescale::cube {

namespace {

constexpr std::size_t kHeader = 8, kTermBytes = 20, kMeasurementBytes = 20;

void reverse(std::uint8_t* p, std::size_t n) { std::reverse(p, p + n); }

// CubeLib orders terms by growth: terms with a coefficient before those without, then by the
// exponent of x (b / c), of log(x) (d) and by a; the dominant term comes first. The keys use
// IEEE total order, so that hostile NaNs cannot break the sort.
bool dominates(const ScaleFuncTerm& l, const ScaleFuncTerm& r) {
  if ((l.a != 0) != (r.a != 0)) return l.a != 0;
  const double lx = static_cast<double>(l.b) / l.c, rx = static_cast<double>(r.b) / r.c;
  if (const auto o = std::strong_order(lx, rx); o != 0) return o > 0;
  if (l.d != r.d) return l.d > r.d;
  return std::strong_order(l.a, r.a) > 0;
}

}  // namespace

ScaleFunc ScaleFunc::decode(const std::uint8_t* slot, std::size_t width) {
  ScaleFunc f;
  if (width < kHeader) return f;
  const std::size_t room = (width - kHeader) / kTermBytes;  // terms and measurements share it
  const std::size_t terms = std::min<std::size_t>({load_unaligned<std::uint32_t>(slot), kScaleFuncMaxTerms, room});
  const std::size_t measurements =
      std::min<std::size_t>({load_unaligned<std::uint32_t>(slot + 4), kScaleFuncMaxMeasurements, room - terms});
  const std::uint8_t* p = slot + kHeader;
  for (std::size_t i = 0; i < terms; ++i, p += kTermBytes) {
    f.terms.push_back({load_unaligned<double>(p), load_unaligned<std::int32_t>(p + 8),
                       load_unaligned<std::uint32_t>(p + 12), load_unaligned<std::int32_t>(p + 16)});
  }
  for (std::size_t i = 0; i < measurements; ++i, p += kMeasurementBytes) {
    f.measurements.push_back(
        {load_unaligned<std::uint32_t>(p), load_unaligned<double>(p + 4), load_unaligned<double>(p + 12)});
  }
  return f;
}

void ScaleFunc::encode(std::uint8_t* slot, std::size_t width) const {
  const std::size_t needed = kHeader + kTermBytes * terms.size() + kMeasurementBytes * measurements.size();
  if (needed > width || terms.size() > kScaleFuncMaxTerms || measurements.size() > kScaleFuncMaxMeasurements)
    throw ScaleFuncOverflow("SCALE_FUNC value needs " + std::to_string(terms.size()) + " terms and " +
                            std::to_string(measurements.size()) + " measurements: more than CubeLib's " +
                            std::to_string(kScaleFuncMaxTerms) + " and " + std::to_string(kScaleFuncMaxMeasurements) +
                            " (or its " + std::to_string(width) + "-byte slot) hold");
  std::memset(slot, 0, width);
  store_unaligned<std::uint32_t>(slot, static_cast<std::uint32_t>(terms.size()));
  store_unaligned<std::uint32_t>(slot + 4, static_cast<std::uint32_t>(measurements.size()));
  std::uint8_t* p = slot + kHeader;
  for (const auto& t : terms) {
    store_unaligned(p, t.a), store_unaligned(p + 8, t.b), store_unaligned(p + 12, t.c), store_unaligned(p + 16, t.d);
    p += kTermBytes;
  }
  for (const auto& m : measurements) {
    store_unaligned(p, m.processes), store_unaligned(p + 4, m.mean), store_unaligned(p + 12, m.width);
    p += kMeasurementBytes;
  }
}

void ScaleFunc::add(const ScaleFunc& other, int sign) {
  for (auto t : other.terms) {
    if (t.a == 0) continue;  // as CubeLib: a zero term adds nothing
    t.a *= sign;
    const auto same = std::find_if(terms.begin(), terms.end(),
                                   [&](const ScaleFuncTerm& u) { return u.b == t.b && u.c == t.c && u.d == t.d; });
    if (same != terms.end()) same->a += t.a;
    else terms.push_back(t);
  }
  std::stable_sort(terms.begin(), terms.end(), dominates);
}

double ScaleFunc::asymptotic() const {
  if (terms.empty()) return 0;
  const auto& t = terms.front();
  return 1000.0 * t.b / t.c + t.d + t.a / 1000.0;
}

void scale_func_combine(std::uint8_t* dst, const std::uint8_t* src, std::size_t n, std::size_t width, int sign) {
  for (std::size_t i = 0; i < n; ++i, dst += width, src += width) {
    auto sum = ScaleFunc::decode(dst, width);
    sum.add(ScaleFunc::decode(src, width), sign);
    sum.encode(dst, width);
  }
}

void scale_func_swap(std::uint8_t* slot, std::size_t width) {
  if (width < kHeader) return;
  reverse(slot, 4);
  reverse(slot + 4, 4);
  const auto f = ScaleFunc::decode(slot, width);  // counts now native, cut to the slot
  std::uint8_t* p = slot + kHeader;
  for (std::size_t i = 0; i < f.terms.size(); ++i, p += kTermBytes)
    reverse(p, 8), reverse(p + 8, 4), reverse(p + 12, 4), reverse(p + 16, 4);
  for (std::size_t i = 0; i < f.measurements.size(); ++i, p += kMeasurementBytes)
    reverse(p, 4), reverse(p + 4, 8), reverse(p + 12, 8);
}

}  // namespace cubescale::cube
