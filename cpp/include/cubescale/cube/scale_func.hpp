#pragma once
// SCALE_FUNC values: scaling functions f(x) = sum of a * x^(b/c) * log2(x)^d (Extra-P models),
// as CubeLib stores them in a fixed-width slot of 848 bytes (room for its 30 terms and 10
// measurements as structs: 30 x 20 + 8 + 10 x 24):
//   u32 term count, u32 measurement count,
//   terms        (f64 a, i32 b, u32 c, i32 d; 20 bytes each, packed),
//   measurements (u32 processes, f64 mean, f64 width; 20 bytes each, packed), zero padding.
// They do not add field by field: like CubeLib, a sum adds the coefficient a of terms with
// equal exponents (b, c, d) and appends the others, keeping the left operand's measurements.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <vector>

namespace cubescale::cube {

inline constexpr std::size_t kScaleFuncWidth = 848;
inline constexpr std::size_t kScaleFuncMaxTerms = 30, kScaleFuncMaxMeasurements = 10;  // CubeLib's limits

struct ScaleFuncTerm {
  double a = 0;
  std::int32_t b = 0;
  std::uint32_t c = 1;
  std::int32_t d = 0;
};

struct ScaleFuncMeasurement {
  std::uint32_t processes = 0;
  double mean = 0, width = 0;
};

struct ScaleFunc {
  std::vector<ScaleFuncTerm> terms;  // dominant term first (CubeLib's order)
  std::vector<ScaleFuncMeasurement> measurements;

  // Reads one slot of `width` bytes (native byte order). Counts beyond CubeLib's limits or the
  // slot are cut, so that no input reads outside it.
  static ScaleFunc decode(const std::uint8_t* slot, std::size_t width);
  // Writes one slot; throws ScaleFuncOverflow beyond CubeLib's limits (or the slot).
  void encode(std::uint8_t* slot, std::size_t width) const;
  // this += sign * other (sign +1 or -1), then terms sorted dominant first.
  void add(const ScaleFunc& other, int sign);
  // CubeLib's number for a scaling function (its "asymptotic" value): for the dominant term,
  // 1000 * b / c + d + a / 1000; 0 without terms.
  double asymptotic() const;
};

// A sum needs more terms than a slot holds (CubeLib raises here too).
class ScaleFuncOverflow : public std::overflow_error {
 public:
  using std::overflow_error::overflow_error;
};

// dst[i] = dst[i] +/- src[i] for n slots of `width` bytes.
void scale_func_combine(std::uint8_t* dst, const std::uint8_t* src, std::size_t n, std::size_t width, int sign);
// Big-endian slot to native order: the counts first, which say where the fields are.
void scale_func_swap(std::uint8_t* slot, std::size_t width);

}  // namespace cubescale::cube
