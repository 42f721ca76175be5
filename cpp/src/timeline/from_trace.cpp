#include "cubescale/timeline/from_trace.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <numeric>
#include <string>
#include <utility>

#include "cubescale/common/format_error.hpp"

namespace cubescale::timeline {

std::vector<std::uint32_t> element_parents(const systree::SingleNodeTree& tree) {
  std::vector<std::uint32_t> parents(tree.size());
  for (std::uint32_t e = 0; e < tree.size(); ++e) {
    const auto p = tree.parent(e);
    parents[e] = p == systree::SingleNodeTree::kNoParent ? kNoElement : p;
  }
  return parents;
}

namespace {

std::pair<Mode, Timing> mode_of(const std::string& mode) {
  const Mode m = mode.rfind("absolute", 0) == 0 ? Mode::Absolute
                 : mode.rfind("relative", 0) == 0 ? Mode::Relative
                                                  : Mode::Accumulated;
  const Timing t = mode.find("last") != std::string::npos ? Timing::Last
                   : mode.find("next") != std::string::npos ? Timing::Next
                                                            : Timing::Point;
  return {m, t};
}

class Collector : public trace::EventSink {
 public:
  Collector(const trace::Trace& trace, const trace::TraceSystem& system)
      : trace_(trace), defs_(trace.definitions()), system_(system),
        last_time_(defs_.locations.size(), -std::numeric_limits<double>::infinity()) {}

  bool replayed_frames() const override { return false; }  // metric events only
  void event(const trace::Event& e) override {
    if (e.type != trace::EventType::Metric || e.metric == trace::kNone) return;
    ++events_;
    const auto& metric = defs_.metrics[e.metric];
    const auto element = element_of(metric, e.location);
    const double t = double(e.time - defs_.clock.offset) / double(defs_.clock.resolution);
    // OTF2 keeps each location's events in time order; a sample earlier than the one before
    // is damage, and would make no timeline.
    if (t < last_time_[e.location])
      throw FormatError(trace_.path(), trace_.event_member(e.location), e.position,
                        "metric event " + std::to_string(e.position) + " is earlier than the one before (" +
                            std::to_string(t) + " s < " + std::to_string(last_time_[e.location]) +
                            " s): events of a location must be in time order");
    last_time_[e.location] = t;
    for (std::size_t k = 0; k < e.metric_count && k < metric.members.size(); ++k) {
      auto& series = samples_[{element, metric.members[k]}];
      series.first.push_back(t);
      series.second.push_back(trace::as_double(e.metric_types[k], e.metric_values[k]));
      ++values_;
    }
  }

  TraceTimelines finish() {
    TraceTimelines out{TimelineStore(element_parents(system_.tree)), events_, values_};
    for (auto& [key, series] : samples_) {
      // Samples of one element from several locations (a node's instance written by two
      // threads) arrive location by location: merged into one time order.
      if (!std::is_sorted(series.first.begin(), series.first.end())) sort_by_time(series);
      const auto& member = defs_.metric_members[key.second];
      const auto [mode, timing] = mode_of(member.mode);
      out.store.add(key.first, member.name, Timeline(std::move(series.first), std::move(series.second), mode, timing));
    }
    return out;
  }

 private:
  std::uint32_t element_of(const trace::Metric& metric, std::uint32_t location) const {
    if (metric.instance) {
      if (metric.scope == "system_tree_node") {
        const auto n = defs_.node_index.find(metric.scope_ref);
        if (n != trace::kNone) return system_.node_element[n];
      } else if (metric.scope == "location_group") {
        const auto g = defs_.location_group_index.find(metric.scope_ref);
        if (g != trace::kNone) return system_.group_element[g];
      } else if (metric.scope == "location") {
        const auto l = defs_.location_index.find(metric.scope_ref);
        if (l != trace::kNone) return system_.location_element[l];
      }
    }
    return system_.location_element[location];  // a class, or a scope we cannot place
  }

  static void sort_by_time(std::pair<std::vector<double>, std::vector<double>>& series) {
    auto& [times, values] = series;
    std::vector<std::size_t> order(times.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return times[a] < times[b]; });
    std::vector<double> t(times.size()), v(values.size());
    for (std::size_t i = 0; i < order.size(); ++i) t[i] = times[order[i]], v[i] = values[order[i]];
    times.swap(t), values.swap(v);
  }

  const trace::Trace& trace_;
  const trace::Definitions& defs_;
  const trace::TraceSystem& system_;
  std::vector<double> last_time_;  // per location: its latest metric sample
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::pair<std::vector<double>, std::vector<double>>> samples_;
  std::uint64_t events_ = 0, values_ = 0;
};

}  // namespace

TraceTimelines trace_timelines(const trace::Trace& trace, const trace::TraceSystem& system,
                               const std::vector<std::uint32_t>& locations) {
  Collector sink(trace, system);
  trace.read(locations, sink);
  return sink.finish();
}

}  // namespace cubescale::timeline
