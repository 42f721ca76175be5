#pragma once
// Collective records grouped by instance: their indices in the order a stable sort by
// (communicator, instance) gives, for the home ranks' reductions and the owners' sync points
// of the replay over MPI ranks (millions of records per rank on long runs).
//
// A location numbers its collectives on a communicator from 0 (CollectiveRecord::instance), so
// one communicator's instances are dense: a counting sort by (communicator, instance) takes a
// pass to count and one to place, where a radix sort of 12-byte keys took a pass per byte that
// differs (three for a million instances) plus one to count each byte. A home of every
// `stride`-th instance (collective_home: round robin over the homes) sees one instance in
// `stride`: its slots are (instance - lowest) / stride. Instances that are not dense (another
// producer's records) fall back to the radix sort: the same order.
#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <unordered_map>
#include <vector>

#include "cubescale/analysis/waitstates.hpp"
#include "cubescale/common/radix_sort.hpp"
#include "cubescale/common/run_chunks.hpp"

namespace cubescale::analysis {

namespace instance_order_detail {

template <class Records>
std::vector<std::uint32_t> radix_order(const Records& records) {
  struct Key {
    std::uint32_t communicator, instance, index;
  };
  std::vector<Key> keys(records.size());
  for (std::size_t i = 0; i < keys.size(); ++i)
    keys[i] = {records[i].communicator, records[i].instance, static_cast<std::uint32_t>(i)};
  radix_sort<2>(keys, [](const Key& k, std::size_t field) { return field == 0 ? k.communicator : k.instance; });
  std::vector<std::uint32_t> out(keys.size());
  for (std::size_t i = 0; i < keys.size(); ++i) out[i] = keys[i].index;
  return out;
}

}  // namespace instance_order_detail

// `records[i]` a CollectiveRecord for i < records.size() (a vector, or a view of lists).
template <class Records>
std::vector<std::uint32_t> instance_order(const Records& records, std::uint32_t stride = 1) {
  const std::size_t n = records.size();
  if (n >= kNone) throw std::length_error("more than 2^32 - 2 collective records on one rank");
  if (stride == 0) stride = 1;
  struct Range {
    std::uint32_t communicator, low = 0, high = 0;
    bool set = false;        // low and high hold an instance
    std::uint64_t base = 0;  // its first slot
  };
  std::vector<Range> ranges;
  std::unordered_map<std::uint32_t, std::uint32_t> range_of;  // communicator -> its range
  // Records come in runs of one communicator: one look-up per run.
  bool cached = false;
  std::uint32_t last = 0, at = 0;
  auto range = [&](std::uint32_t communicator) -> Range& {
    if (!cached || communicator != last) {
      const auto [it, fresh] = range_of.try_emplace(communicator, static_cast<std::uint32_t>(ranges.size()));
      if (fresh) ranges.push_back({communicator});
      cached = true, last = communicator, at = it->second;
    }
    return ranges[at];
  };
  for (std::size_t i = 0; i < n; ++i) {
    const auto& c = records[i];
    auto& r = range(c.communicator);
    if (!r.set) r.low = r.high = c.instance, r.set = true;
    // Every instance of a communicator at a multiple of the stride from its first.
    const auto apart = c.instance >= r.low ? c.instance - r.low : r.low - c.instance;
    if (apart % stride != 0) return instance_order_detail::radix_order(records);
    r.low = std::min(r.low, c.instance), r.high = std::max(r.high, c.instance);
  }
  std::sort(ranges.begin(), ranges.end(), [](const Range& a, const Range& b) { return a.communicator < b.communicator; });
  std::uint64_t slots = 0;  // (64 bits: one communicator's span alone may be 2^32)
  for (auto& r : ranges) r.base = slots, slots += std::uint64_t(r.high - r.low) / stride + 1;
  if (slots > std::min<std::uint64_t>(2 * std::uint64_t(n) + 1024, kNone))  // sparse
    return instance_order_detail::radix_order(records);
  for (std::uint32_t k = 0; k < ranges.size(); ++k) range_of[ranges[k].communicator] = k;
  cached = false;
  // Each record's slot, then the slots' first places (counting sort: stable).
  std::vector<std::uint32_t> slot(n), first(slots + 1, 0);
  for (std::size_t i = 0; i < n; ++i) {
    const auto& c = records[i];
    const auto& r = range(c.communicator);
    const auto s = r.base + (stride == 1 ? c.instance - r.low : (c.instance - r.low) / stride);
    slot[i] = static_cast<std::uint32_t>(s);
    ++first[s + 1];
  }
  for (std::uint64_t s = 0; s < slots; ++s) first[s + 1] += first[s];
  std::vector<std::uint32_t> out(n);
  for (std::size_t i = 0; i < n; ++i) out[first[slot[i]]++] = static_cast<std::uint32_t>(i);
  return out;
}

// [0, n) cut into ranges for run_chunks that never part two neighbours `same(i - 1, i)` holds
// for (an instance's records): at most `how.threads` ranges of about equal size, each of
// `how.least` at least. No list of instance starts beside the records (the replay's memory bound).
template <class Same>
std::vector<std::size_t> whole_chunks(std::size_t n, Same&& same, const Chunking& how) {
  const std::size_t chunks = std::max<std::size_t>(
      1, std::min<std::uint64_t>({how.threads, kMostChunks, n / std::max<std::uint64_t>(how.least, 1)}));
  std::vector<std::size_t> bounds{0};
  for (std::size_t k = 1; k < chunks; ++k) {
    auto at = std::max(n / chunks * k, bounds.back() + 1);
    while (at < n && same(at - 1, at)) ++at;
    if (at >= n) break;
    bounds.push_back(at);
  }
  bounds.push_back(n);
  return bounds;
}

// Whether two collective records belong to one instance (its communicator's number).
inline bool same_instance(const CollectiveRecord& a, const CollectiveRecord& b) {
  return a.communicator == b.communicator && a.instance == b.instance;
}

// `order` (instance_order's) cut into ranges of whole instances (whole_chunks).
template <class Records>
std::vector<std::size_t> instance_chunks(const Records& records, const std::vector<std::uint32_t>& order,
                                         const Chunking& how) {
  return whole_chunks(
      order.size(), [&](std::size_t a, std::size_t b) { return same_instance(records[order[a]], records[order[b]]); }, how);
}

}  // namespace cubescale::analysis
