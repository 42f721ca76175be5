#include "cubescale/timeline/timeline.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

namespace cubescale::timeline {

std::optional<Mode> parse_mode(std::string_view s) {
  if (s == "accumulated") return Mode::Accumulated;
  if (s == "absolute") return Mode::Absolute;
  if (s == "relative") return Mode::Relative;
  return std::nullopt;
}

std::optional<Timing> parse_timing(std::string_view s) {
  if (s == "point" || s == "start") return Timing::Point;
  if (s == "last") return Timing::Last;
  if (s == "next") return Timing::Next;
  return std::nullopt;
}

std::optional<Interpolation> parse_interpolation(std::string_view s) {
  if (s == "stairstep") return Interpolation::Stairstep;
  if (s == "linear") return Interpolation::Linear;
  return std::nullopt;
}

Timeline::Timeline(std::vector<double> times, std::vector<double> values, Mode mode, Timing timing)
    : t_(std::move(times)), v_(std::move(values)), mode_(mode), timing_(timing) {
  if (t_.size() != v_.size())
    throw std::invalid_argument("a timeline needs one value per time (" + std::to_string(t_.size()) + " times, " +
                                std::to_string(v_.size()) + " values)");
  for (std::size_t i = 0; i < t_.size(); ++i) {
    if (!std::isfinite(t_[i])) throw std::invalid_argument("sample " + std::to_string(i) + ": time is not finite");
    if (i > 0 && t_[i] < t_[i - 1])
      throw std::invalid_argument("sample " + std::to_string(i) + ": times must not decrease");
  }
  if (mode_ == Mode::Relative) {  // changes since the previous sample -> a running total
    double total = 0;
    for (auto& x : v_) total += x, x = total;
    mode_ = Mode::Accumulated;
  }
}

void Grid::check() const {
  if (points < 1 || points > kMaxGridPoints)
    throw std::invalid_argument("a grid needs 1 to " + std::to_string(kMaxGridPoints) + " points, not " +
                                std::to_string(points));
  if (!(start <= stop) || !std::isfinite(start) || !std::isfinite(stop))
    throw std::invalid_argument("a grid needs finite start <= stop");
}

void resample(const Timeline& tl, Interpolation interpolation, const Grid& grid, double* out) {
  grid.check();
  const auto& t = tl.times();
  const auto& v = tl.values();
  const std::size_t n = t.size();
  if (n == 0) {
    for (std::size_t i = 0; i < grid.points; ++i) out[i] = 0.0;
    return;
  }
  // `next` = first sample with time > x (grid points ascend, so it only moves forward).
  std::size_t next = 0;
  for (std::size_t i = 0; i < grid.points; ++i) {
    const double x = grid.at(i);
    while (next < n && t[next] <= x) ++next;
    if (next == 0) {
      out[i] = v[0];
    } else if (next == n) {
      out[i] = v[n - 1];
    } else if (interpolation == Interpolation::Linear) {
      const double t0 = t[next - 1], t1 = t[next];
      out[i] = t1 > t0 ? v[next - 1] + (v[next] - v[next - 1]) * (x - t0) / (t1 - t0) : v[next];
    } else if (tl.timing() == Timing::Last) {
      // A value holds over the interval that ends at its sample: x lies in (t[next-1], t[next]]
      // unless it sits exactly on t[next-1].
      out[i] = t[next - 1] == x ? v[next - 1] : v[next];
    } else {
      out[i] = v[next - 1];
    }
  }
}

}  // namespace cubescale::timeline
