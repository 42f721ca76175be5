#include "cubescale/trace/columns.hpp"

#include <algorithm>
#include <cmath>

namespace cubescale::trace {

namespace {

std::int32_t opt(std::uint32_t v) { return v == kNone ? -1 : static_cast<std::int32_t>(v); }

class ColumnSink final : public EventSink {
 public:
  ColumnSink(const Trace& trace, const std::vector<std::uint32_t>& locations, const EventFilter& filter,
             EventColumns& out)
      : defs_(trace.definitions()), filter_(filter), out_(out) {
    out_.member_values.resize(defs_.metric_members.size());
    // A guess from the definitions saves regrowing. Up to kTrusted rows (60 MB of columns) are
    // reserved on their word; for more, each count is checked against what its event file can
    // hold first (a forged count of 1.5e8 events reserved 8.6 GB), which costs a stat() per
    // location. The sum is capped in case filters keep few of many events.
    static constexpr std::uint64_t kTrusted = std::uint64_t(1) << 20, kMostReserved = std::uint64_t(1) << 22;
    const auto add = [](std::uint64_t sum, std::uint64_t n) { return std::min(sum + std::min(n, kMostReserved), kMostReserved); };
    std::uint64_t announced = 0;
    for (auto l : locations) announced = add(announced, defs_.locations[l].events);
    if (announced > kTrusted) {
      announced = 0;
      for (auto l : locations) announced = add(announced, trace.announced_events(l));
    }
    reserve(announced);
  }
  // The event table is the stream as recorded: calling-context events stay themselves.
  bool replayed_frames() const override { return false; }


  void event(const Event& e) override {
    if (!filter_.types.empty() && !filter_.types[static_cast<std::size_t>(e.type)]) return;
    if (e.time < filter_.begin || e.time >= filter_.end) return;
    const bool region_event = e.type == EventType::Enter || e.type == EventType::Leave || opens_or_closes_program(e);
    if (!filter_.regions.empty()) {
      if (region_event ? !(e.region < filter_.regions.size() && filter_.regions[e.region]) : filter_.regions_only)
        return;
    }
    out_.time.push_back(e.time);
    out_.location.push_back(e.location);
    out_.type.push_back(static_cast<std::uint8_t>(e.type));
    out_.region.push_back(opt(e.region));
    out_.partner.push_back(opt(e.partner));
    out_.communicator.push_back(opt(e.communicator));
    out_.tag.push_back(opt(e.tag));
    out_.bytes.push_back(e.bytes);
    out_.bytes_received.push_back(e.bytes_received);
    out_.request.push_back(e.request);
    out_.metric.push_back(opt(e.metric));
    if (out_.member_values.empty()) return;
    const auto row = out_.time.size() - 1;
    if (e.type == EventType::Metric && e.metric != kNone) {
      const auto& m = defs_.metrics[e.metric];
      const auto n = std::min<std::size_t>(m.members.size(), e.metric_count);
      for (std::size_t j = 0; j < n; ++j) {
        if (m.members[j] == kNone) continue;
        auto& col = out_.member_values[m.members[j]];
        col.resize(row + 1, std::nan(""));
        col[row] = as_double(e.metric_types[j], e.metric_values[j]);
      }
    }
  }

  void finish() {
    for (auto& col : out_.member_values) col.resize(out_.time.size(), std::nan(""));
  }

 private:
  void reserve(std::size_t n) {
    out_.time.reserve(n);
    out_.location.reserve(n);
    out_.type.reserve(n);
    out_.region.reserve(n);
    out_.partner.reserve(n);
    out_.communicator.reserve(n);
    out_.tag.reserve(n);
    out_.bytes.reserve(n);
    out_.bytes_received.reserve(n);
    out_.request.reserve(n);
    out_.metric.reserve(n);  // not the metric members' columns: n times each would be a guess too far
  }
  const Definitions& defs_;
  const EventFilter& filter_;
  EventColumns& out_;
};

}  // namespace

EventColumns event_columns(const Trace& trace, const std::vector<std::uint32_t>& locations, const EventFilter& filter) {
  EventColumns out;
  ColumnSink sink(trace, locations, filter, out);
  trace.read(locations, sink);
  sink.finish();
  return out;
}

}  // namespace cubescale::trace
