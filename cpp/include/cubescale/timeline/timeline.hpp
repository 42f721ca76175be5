#pragma once
// Metric timelines (paper 004): the samples of one metric on one system-tree element (a
// location's PAPI counter, a package's energy counter, a GPU's power sensor) and their values
// on a common time grid. Expressions combine timelines of many elements, so every timeline is
// first resampled onto one grid with a bounded number of points: that is what makes the
// staged evaluation's messages independent of the number of events.
//
// Samples follow OTF2's metric modes: ACCUMULATED (a counter since a start: energy, FLOPs),
// ABSOLUTE (a gauge: power, temperature) and RELATIVE (the change since the previous sample),
// which is summed up into an accumulated timeline. Their timing says when a value holds:
// POINT / START at the sample, LAST over the interval ending at it, NEXT over the interval
// starting at it. Interpolation between samples is a stair step or linear.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace cubescale::timeline {

enum class Mode : std::uint8_t { Accumulated, Absolute, Relative };
enum class Timing : std::uint8_t { Point, Last, Next };
enum class Interpolation : std::uint8_t { Stairstep, Linear };

std::optional<Mode> parse_mode(std::string_view s);            // "accumulated", "absolute", "relative"
std::optional<Timing> parse_timing(std::string_view s);        // "point", "start", "last", "next"
std::optional<Interpolation> parse_interpolation(std::string_view s);  // "stairstep", "linear"

// Samples sorted by time (ties keep their order). Relative samples are summed on construction.
class Timeline {
 public:
  Timeline() = default;
  // Throws std::invalid_argument for different lengths, times not ascending or not finite.
  Timeline(std::vector<double> times, std::vector<double> values, Mode mode = Mode::Accumulated,
           Timing timing = Timing::Point);
  const std::vector<double>& times() const { return t_; }
  const std::vector<double>& values() const { return v_; }
  Mode mode() const { return mode_; }
  Timing timing() const { return timing_; }
  bool empty() const { return t_.empty(); }

 private:
  std::vector<double> t_, v_;
  Mode mode_ = Mode::Accumulated;  // Relative samples are stored accumulated
  Timing timing_ = Timing::Point;
};

// `points` equally spaced times from `start` to `stop` (both included; one point: start).
struct Grid {
  double start = 0, stop = 0;
  std::size_t points = 0;
  double at(std::size_t i) const {
    return points <= 1 ? start : start + (stop - start) * static_cast<double>(i) / static_cast<double>(points - 1);
  }
  // Throws std::invalid_argument unless 1 <= points <= kMaxGridPoints and start <= stop.
  void check() const;
};
// A grid is for a picture or a summary: a plot has a few thousand pixels across, and 100,000
// points leave room for zooming into a vector picture while every timeline on it stays under
// 1 MB (16 MB per timeline at 2^24 before; `timeline --points 10^9` allocated gigabytes).
inline constexpr std::size_t kMaxGridPoints = 100000;

// The timeline's value at every grid point. Before the first sample and after the last, the
// nearest sample's value holds (a counter neither starts nor stops counting there). One pass
// over samples and grid together: O(samples + points).
void resample(const Timeline& timeline, Interpolation interpolation, const Grid& grid, double* out);

}  // namespace cubescale::timeline
