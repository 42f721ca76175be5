#pragma once
// Metric timelines of an OTF2 trace (paper 004): every Metric event of the selected locations
// becomes a sample (seconds since the trace's start, value as a double) of its metric member on
// the system-tree element the values are about: a metric class's values on the location that
// recorded them, a metric instance's on its scope (a package's energy on the package node, a
// GPU's power on the GPU), not on the recorder. Elements are those of the trace's machine
// (trace/system_tree.hpp), whose parent array the store gets. Mode and timing come from the
// member (ACCUMULATED_START -> accumulated, point; ABSOLUTE_LAST -> absolute, last ...).
#include <cstdint>
#include <vector>

#include "cubescale/timeline/evaluate.hpp"
#include "cubescale/trace/reader.hpp"
#include "cubescale/trace/system_tree.hpp"

namespace cubescale::timeline {

struct TraceTimelines {
  TimelineStore store;
  std::uint64_t metric_events = 0;  // Metric events read
  std::uint64_t samples = 0;        // values taken (a class event carries one per member)
};

// The tree's parent array (kNoElement for roots), for a TimelineStore.
std::vector<std::uint32_t> element_parents(const systree::SingleNodeTree& tree);

TraceTimelines trace_timelines(const trace::Trace& trace, const trace::TraceSystem& system,
                               const std::vector<std::uint32_t>& locations);

}  // namespace cubescale::timeline
