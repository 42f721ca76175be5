#pragma once
// Events as columns (for DataFrames): one vector per field, appended by a sink during one
// streaming pass, so that a notebook gets NumPy arrays without one Python object per event.
// Filters (event types, regions, a time window) apply while reading: what is filtered out is
// never stored.
#include <cstdint>
#include <limits>
#include <vector>

#include "cubescale/trace/reader.hpp"

namespace cubescale::trace {

struct EventFilter {
  std::vector<std::uint8_t> types;    // per EventType: keep (empty: all)
  std::vector<std::uint8_t> regions;  // per region: keep its Enter/Leave (empty: all); drops other Enter/Leave
  bool regions_only = false;          // with `regions`: keep nothing but their Enter/Leave
  std::uint64_t begin = 0, end = std::numeric_limits<std::uint64_t>::max();  // ticks, [begin, end)
};

struct EventColumns {
  std::vector<std::uint64_t> time;
  std::vector<std::uint32_t> location;
  std::vector<std::uint8_t> type;
  std::vector<std::int32_t> region, partner, communicator, tag;  // -1: none (ids fit 31 bits in real traces)
  std::vector<std::uint64_t> bytes, bytes_received, request;
  std::vector<std::int32_t> metric;  // metric class/instance index, -1: none
  // One column per metric member (NaN where an event holds no value of it).
  std::vector<std::vector<double>> member_values;

  std::size_t size() const { return time.size(); }
};

EventColumns event_columns(const Trace& trace, const std::vector<std::uint32_t>& locations, const EventFilter& filter);

}  // namespace cubescale::trace
