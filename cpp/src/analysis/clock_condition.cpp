#include "cubescale/analysis/clock_condition.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <stdexcept>
#include <string>

#include "cubescale/common/column_sums.hpp"
#include "cubescale/common/run_chunks.hpp"
#include "cubescale/cube/dtype.hpp"

namespace cubescale::analysis {

// OTF2_CollectiveOp values as Scalasca classifies the MPI collectives.
SyncRule sync_rule(std::uint32_t op) {
  switch (op) {
    case kInitOp: case kFinalizeOp: return SyncRule::AllEnter;
    case 0: return SyncRule::AllEnter;                                            // barrier
    case 1: case 4: case 5: return SyncRule::RootEnter;                           // bcast, scatter(v)
    case 2: case 3: case 12: return SyncRule::AllEnterAtRoot;                     // gather(v), reduce
    case 6: case 7: case 8: case 9: case 10: case 11: case 13: case 16:          // all*, reduce_scatter*
      return SyncRule::AllEnter;
    case 14: case 15: return SyncRule::EnterUpToMine;                             // scan, exscan
    default: return SyncRule::None;
  }
}

std::vector<std::vector<RecordRef>> collective_instances(const std::vector<LocationRecords>& records,
                                                         const CommunicatorRanks& ranks) {
  // communicator -> per location (records order) its collectives on it
  std::map<std::uint32_t, std::vector<std::vector<RecordRef>>> lists;
  std::vector<std::vector<RecordRef>> singles;
  for (std::uint32_t l = 0; l < records.size(); ++l) {
    // Mostly one communicator after another: the last one's lists without a look-up (map nodes stay).
    std::vector<std::vector<RecordRef>>* per = nullptr;
    std::uint32_t communicator = 0;
    for (std::uint32_t i = 0; i < records[l].collectives.size(); ++i) {
      const auto& c = records[l].collectives[i];
      if (c.self) {  // its own instance: self communicators share one number
        singles.push_back({{l, i}});
        continue;
      }
      if (!per || c.communicator != communicator) {
        per = &lists[c.communicator], communicator = c.communicator;
        if (per->empty() || per->back().front().list != l) per->emplace_back();
      }
      per->back().push_back({l, i});
    }
  }
  std::vector<std::vector<RecordRef>> out = std::move(singles);
  std::size_t instances = out.size();
  for (const auto& [comm, per] : lists) instances += per.front().size();
  out.reserve(instances);  // at most: one regrowth copy of 250 k vectors fewer on the 14 M ring
  for (const auto& [comm, per] : lists) {
    const auto n = per.front().size();
    if (std::any_of(per.begin(), per.end(), [&](const auto& v) { return v.size() != n; })) continue;
    if (ranks.partial_init_exit(comm, per.size())) continue;
    // The locations' lists in communicator rank order: every instance's members in that order.
    std::vector<std::size_t> order(per.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    auto location = [&](std::size_t i) { return records[per[i].front().list].collectives[per[i].front().index].location; };
    std::sort(order.begin(), order.end(),
              [&](std::size_t a, std::size_t b) { return ranks.before(comm, location(a), location(b)); });
    for (std::size_t k = 0; k < n; ++k) {
      out.emplace_back();
      out.back().reserve(order.size());  // one allocation per instance, not one per doubling
      for (auto i : order) out.back().push_back(per[i][k]);
    }
  }
  return out;
}

std::vector<std::uint64_t> collective_references(const std::vector<LocationRecords>& records,
                                                 const std::vector<RecordRef>& instance,
                                                 const std::vector<std::uint64_t>* enters) {
  std::vector<std::uint64_t> out(instance.size(), kNoTime);
  if (instance.empty()) return out;
  // Checked only at synchronization points, as scout does (collective_sync).
  std::vector<const CollectiveRecord*> members(instance.size());
  for (std::size_t i = 0; i < instance.size(); ++i) members[i] = &records[instance[i].list].collectives[instance[i].index];
  std::vector<MemberSync> sync;
  collective_sync(members, sync, enters ? enters->data() : nullptr);
  for (std::size_t i = 0; i < instance.size(); ++i) out[i] = sync[i].reference;
  return out;
}

ClockViolations count_clock_violations(const std::vector<LocationRecords>& records, const MessagePairs& pairs,
                                       const std::vector<std::vector<RecordRef>>& instances,
                                       const std::vector<std::uint32_t>& column, std::size_t cnodes,
                                       std::size_t locations, std::uint64_t latency,
                                       CollectiveDecisions* decisions, const Chunking& chunking) {
  ClockViolations v;
  v.cnodes = cnodes;
  v.locations = locations;
  v.counts.assign(cnodes * locations, 0);
  for (const auto& l : records) v.checked = v.checked || !l.receives.empty() || !l.collectives.empty();
  // A record's cell is its own location's: chunks of locations count apart, each through its
  // ColumnSums (neighbouring columns' cells share cache lines).
  auto add = [&](ColumnSums<std::uint64_t>& cells, std::uint32_t cnode, std::uint32_t location) {
    if (cnode == kNone || cnode >= cnodes || location >= column.size() || column[location] == kNone) return;
    cells.add(cnode, column[location]);
  };
  const auto offset = collective_offsets(records);
  const auto by_receives = chunk_bounds(list_weights(records, [](const auto& l) { return l.receives.size(); }), chunking);
  std::vector<std::uint64_t> found(by_receives.size() - 1, 0);
  run_chunks(by_receives, [&](std::size_t k, std::size_t begin, std::size_t end) {
    ColumnSums<std::uint64_t> cells(v.counts, locations);
    for (auto l = begin; l < end; ++l)
      for (std::size_t j = 0; j < records[l].receives.size(); ++j) {
        const auto s = pairs.send_of_receive[l][j];
        if (s.list == kNone) continue;
        const auto& r = records[l].receives[j];
        if (r.time < records[s.list].sends[s.index].time + latency) {
          add(cells, r.cnode, r.location);
          ++found[k];
        }
      }
  });
  for (auto n : found) v.point_to_point += n;
  if (decisions) {
    decisions->reductions.assign(offset.back(), {});
    decisions->causers.assign(offset.back(), kNone);
  }
  // The instances decide apart (each member's decision and whether it left too early, per
  // record), then the members count by location.
  std::vector<std::uint8_t> early(offset.back(), 0);
  std::vector<std::uint64_t> members(instances.size());
  for (std::size_t i = 0; i < instances.size(); ++i) members[i] = instances[i].size();
  const auto bounds = chunk_bounds(members, chunking);
  std::vector<InstanceListings> listed(bounds.size() - 1);  // per chunk: the instances as trace.stat lists them
  run_chunks(bounds, [&](std::size_t chunk, std::size_t begin, std::size_t end) {
    // collective_references' answer, in buffers kept from instance to instance (no allocation each).
    std::vector<const CollectiveRecord*> member;
    std::vector<MemberSync> sync;
    std::vector<CollectiveReduction*> reductions;
    for (auto n = begin; n < end; ++n) {
      const auto& instance = instances[n];
      member.clear();
      for (const auto& ref : instance) member.push_back(&records[ref.list].collectives[ref.index]);
      collective_sync(member, sync);
      reductions.clear();
      for (std::size_t i = 0; i < instance.size(); ++i) {
        const auto k = offset[instance[i].list] + instance[i].index;
        if (decisions) {  // as reduce_collectives keeps them
          reductions.push_back(&decisions->reductions[k]);
          if (sync[i].sync) decisions->causers[k] = sync[i].causer;
        }
        early[k] = sync[i].reference != kNoTime && member[i]->leave < sync[i].reference + latency;
      }
      if (decisions) decide_reductions(member, sync, reductions.data(), &listed[chunk]);
    }
  });
  if (decisions) {
    decisions->listings = {};
    for (const auto& part : listed) decisions->listings.absorb(part);
  }
  const auto by_collectives =
      chunk_bounds(list_weights(records, [](const auto& l) { return l.collectives.size(); }), chunking);
  found.assign(by_collectives.size() - 1, 0);
  run_chunks(by_collectives, [&](std::size_t k, std::size_t begin, std::size_t end) {
    ColumnSums<std::uint64_t> cells(v.counts, locations);
    for (auto l = begin; l < end; ++l)
      for (std::size_t i = 0; i < records[l].collectives.size(); ++i)
        if (early[offset[l] + i]) {
          add(cells, records[l].collectives[i].cnode, records[l].collectives[i].location);
          ++found[k];
        }
  });
  for (auto n : found) v.collective += n;
  return v;
}

profile::LocalProfile with_clock_violations(profile::LocalProfile p, const ClockViolations& v) {
  if (!v.checked) return p;
  const auto n = p.cnode_count(), cols = p.locations.size();
  cube::Metric m;
  m.uniq_name = "clock_violations";
  m.disp_name = "Clock Condition Violations";
  m.dtype = *cube::parse_data_type("UINT64");
  m.kind = cube::MetricKind::Exclusive;
  m.uom = "occ";
  m.descr = "Receives recorded before their send, collectives left before the enters (non-blocking: the starts) "
            "they depend on, OpenMP team begins before their fork, joins before their team's ends and barriers "
            "left before their team's enters (after the trace's clock offsets)";
  cube::Severity s(m.dtype, n, cols);
  if (v.cnodes == n && v.locations == cols)
    for (std::size_t c = 0; c < n; ++c) std::memcpy(s.row(c), v.counts.data() + c * cols, cols * 8);
  s.mark_nonzero_rows();
  p.metrics.push_back(std::move(m));
  p.values.push_back(std::move(s));
  return p;
}

std::uint64_t latency_ticks(double seconds, std::uint64_t resolution) {
  const double ticks = seconds * static_cast<double>(resolution);
  if (!(seconds >= 0) || !(ticks < 0x1p62))
    throw std::invalid_argument("min_latency " + std::to_string(seconds) +
                                " s: the clock condition's latency must be at least 0 and below 2^62 clock ticks");
  return static_cast<std::uint64_t>(std::llround(ticks));
}

}  // namespace cubescale::analysis
