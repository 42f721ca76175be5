#pragma once
// Evaluating metric expressions for a system-tree node, in stages (paper 004, Vampir's
// aggregate operation): each worker owns the timelines of some elements; for every
// `aggregate` it combines the values of its own elements below the target into a *partial*
// (one value and one count per grid point), partials merge pairwise up a reduction tree, and
// the root evaluates the rest of the expression with the merged aggregates. A partial has
// 16 bytes per grid point whatever the number of events or elements.
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "cubescale/timeline/expression.hpp"
#include "cubescale/timeline/timeline.hpp"

namespace cubescale::timeline {

// The timelines one worker owns, by (system-tree element, metric name), and the tree's
// parent array (kNoElement for roots) to tell which elements lie below a target.
inline constexpr std::uint32_t kNoElement = 0xffffffffu;

class TimelineStore {
 public:
  explicit TimelineStore(std::vector<std::uint32_t> parents);
  void add(std::uint32_t element, const std::string& metric, Timeline timeline);
  const Timeline* find(std::uint32_t element, const std::string& metric) const;
  // Whether `element` is `target` or lies below it.
  bool below(std::uint32_t element, std::uint32_t target) const;
  std::size_t element_count() const { return parents_.size(); }
  // Earliest and latest sample time over all timelines (nullopt-like: first > second if none).
  std::pair<double, double> time_range() const;
  const std::map<std::pair<std::uint32_t, std::string>, Timeline>& timelines() const { return timelines_; }

 private:
  std::vector<std::uint32_t> parents_;
  std::map<std::pair<std::uint32_t, std::string>, Timeline> timelines_;
};

struct Partial {
  Aggregation aggregation = Aggregation::Sum;
  std::vector<double> values;  // sum / min / max so far at each grid point
  std::vector<double> counts;  // elements combined at each grid point
  std::string serialize() const;
  // Throws std::invalid_argument for malformed bytes (from another worker).
  static Partial deserialize(std::string_view bytes);
};

// This worker's partial of one aggregate node for `target`.
Partial partial_aggregate(const Node& aggregate, const TimelineStore& store, std::uint32_t target, const Grid& grid);
// Merges b into a (same aggregation and grid).
void merge(Partial& a, const Partial& b);
// The expression's values on the grid, with the merged partial of each aggregate node (in
// Expression::aggregates() order). Sources outside aggregates read `store` at the target.
std::vector<double> evaluate(const Expression& e, const std::vector<Partial>& aggregates, const TimelineStore& store,
                             std::uint32_t target, const Grid& grid);
// All in one process: every aggregate over the whole store.
std::vector<double> evaluate(const Expression& e, const TimelineStore& store, std::uint32_t target, const Grid& grid);

}  // namespace cubescale::timeline
