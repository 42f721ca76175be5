#include "cubescale/timeline/from_trace.hpp"

#include <map>
#include <string>
#include <utility>

namespace cubescale::timeline {

std::vector<std::uint32_t> element_parents(const systree::SingleTree& tree) {
  std::vector<std::uint32_t> parents(tree.size());
  for (std::uint32_t e = 0; e < tree.size(); ++e) {
    const auto p = tree.parent(e);
    parents[e] = p == systree::SingleTree::kNoParent ? kNoElement : p;
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
  Collector(const trace::Definitions& defs, const trace::TraceSystem& system) : defs_(defs), system_(system) {}

  void event(const trace::Event& e) override {
    if (e.type != trace::EventType::Metric || e.metric == trace::kNone) return;
    ++events_;
    const auto& metric = defs_.metrics[e.metric];
    const auto element = element_of(metric, e.location);
    const double t = double(e.time - defs_.clock.offset) / double(defs_.clock.resolution);
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

  const trace::Definitions& defs_;
  const trace::TraceSystem& system_;
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::pair<std::vector<double>, std::vector<double>>> samples_;
  std::uint64_t events_ = 0, values_ = 0;
};

}  // namespace

TraceTimelines trace_timelines(const trace::Trace& trace, const trace::TraceSystem& system,
                               const std::vector<std::uint32_t>& locations) {
  Collector sink(trace.definitions(), system);
  trace.read(locations, sink);
  return sink.finish();
}

}  // namespace cubescale::timeline
