#include "cubescale/analysis/nonblocking_collectives.hpp"

#include <algorithm>
#include <cstring>
#include <map>

#include "cubescale/analysis/clock_condition.hpp"
#include "cubescale/common/format_error.hpp"

namespace cubescale::analysis {

std::uint32_t nonblocking_root(const trace::Definitions& defs, const std::vector<std::uint32_t>& world,
                               const NonBlockingRecord& r) {
  if (r.root_rank == kNone || r.communicator >= defs.communicators.size()) return kNone;
  const auto group = defs.communicators[r.communicator].group;
  if (group >= defs.groups.size()) return kNone;
  const auto& g = defs.groups[group];
  if (g.type == "comm_self") return r.location;
  if (r.root_rank >= g.members.size() || g.members[r.root_rank] >= world.size()) return kNone;
  return world[g.members[r.root_rank]];
}

std::pair<Pattern, std::uint64_t> nonblocking_wait(SyncRule rule, std::uint32_t op, bool root, std::uint64_t latest,
                                                   std::uint64_t root_start, std::uint64_t so_far) {
  switch (rule) {
    case SyncRule::AllEnter: return {op == 0 ? Pattern::BarrierWait : Pattern::WaitNxN, latest};
    case SyncRule::RootEnter: return {Pattern::LateBroadcast, root ? kNoTime : root_start};
    case SyncRule::AllEnterAtRoot: return {Pattern::EarlyReduce, root ? latest : kNoTime};
    case SyncRule::EnterUpToMine: return {Pattern::EarlyScan, so_far};
    case SyncRule::None: break;
  }
  return {Pattern::Count, kNoTime};
}

std::vector<std::uint64_t> nonblocking_references(std::uint32_t op, std::uint32_t root,
                                                  const std::vector<std::uint32_t>& locations,
                                                  const std::vector<std::uint64_t>& starts) {
  // An instance of one member (a communicator of one process, as a self communicator's) waits
  // for nobody: no clock condition, as a blocking collective's (collective_sync; clc takes a
  // size-1 communicator's collective for an internal event).
  if (starts.size() < 2) return std::vector<std::uint64_t>(starts.size(), kNoTime);
  const auto rule = sync_rule(op);
  std::uint64_t latest = 0, root_start = kNoTime, so_far = 0;
  for (std::size_t i = 0; i < starts.size(); ++i) {
    latest = std::max(latest, starts[i]);
    if (locations[i] == root) root_start = starts[i];
  }
  std::vector<std::uint64_t> out(starts.size(), kNoTime);
  for (std::size_t i = 0; i < starts.size(); ++i) {
    so_far = std::max(so_far, starts[i]);
    const auto [p, until] = nonblocking_wait(rule, op, locations[i] == root, latest, root_start, so_far);
    if (p != Pattern::Count) out[i] = until;
  }
  return out;
}

std::vector<NonBlockingInstance> nonblocking_instances(const trace::Definitions& defs,
                                                       const std::vector<NonBlockingLocation*>& lists) {
  // communicator -> per location (ascending) its records in start order. A self communicator's
  // operation waits for nobody (each process has its own): no instance, as a blocking one.
  std::map<std::uint32_t, std::map<std::uint32_t, std::vector<RecordRef>>> per;
  for (std::uint32_t l = 0; l < lists.size(); ++l)
    if (lists[l])
      for (std::uint32_t i = 0; i < lists[l]->records.size(); ++i) {
        const auto& r = lists[l]->records[i];
        if (!self_communicator(defs, r.communicator)) per[r.communicator][r.location].push_back({l, i});
      }
  auto rec = [&](const RecordRef& x) -> const NonBlockingRecord& { return lists[x.list]->records[x.index]; };
  const CommunicatorRanks ranks(defs);
  const auto world = world_locations(defs);
  std::vector<NonBlockingInstance> out;
  for (auto& [comm, locations] : per) {
    std::vector<std::vector<RecordRef>*> ranked;
    std::size_t most = 0;
    for (auto& [loc, v] : locations) {
      std::sort(v.begin(), v.end(), [&](const RecordRef& a, const RecordRef& b) { return rec(a).order < rec(b).order; });
      ranked.push_back(&v);
      most = std::max(most, v.size());
    }
    std::stable_sort(ranked.begin(), ranked.end(), [&, c = comm](const auto* a, const auto* b) {
      return ranks.before(c, rec(a->front()).location, rec(b->front()).location);
    });
    for (std::size_t k = 0; k < most; ++k) {
      NonBlockingInstance inst;
      for (const auto* v : ranked)
        if (k < v->size()) inst.members.push_back((*v)[k]);
      const auto& first = rec(inst.members.front());
      inst.op = first.op;
      inst.root = nonblocking_root(defs, world, first);
      out.push_back(std::move(inst));
    }
  }
  return out;
}

void count_nonblocking_violations(const std::vector<NonBlockingLocation*>& lists,
                                  const std::vector<NonBlockingInstance>& instances,
                                  const std::vector<std::uint32_t>& column, std::uint64_t latency, ClockViolations& v) {
  for (const auto* l : lists) v.checked = v.checked || (l && !l->records.empty());
  for (const auto& inst : instances) {
    std::vector<std::uint32_t> locations;
    std::vector<std::uint64_t> starts;
    for (const auto& m : inst.members) {
      locations.push_back(lists[m.list]->records[m.index].location);
      starts.push_back(lists[m.list]->records[m.index].start);
    }
    const auto refs = nonblocking_references(inst.op, inst.root, locations, starts);
    for (std::size_t i = 0; i < refs.size(); ++i) {
      const auto& r = lists[inst.members[i].list]->records[inst.members[i].index];
      if (refs[i] == kNoTime || r.leave >= refs[i] + latency) continue;
      ++v.collective;
      if (r.cnode < v.cnodes && r.location < column.size() && column[r.location] != kNone)
        ++v.counts[std::size_t(r.cnode) * v.locations + column[r.location]];
    }
  }
}

namespace {

struct Found {
  std::uint64_t ticks = 0;
  Pattern pattern = Pattern::Count;
  const NonBlockingRecord* record = nullptr;
};

class NonBlockingMatcher {
 public:
  NonBlockingMatcher(const trace::Trace& trace, const std::vector<std::uint32_t>& column)
      : trace_(trace), defs_(trace.definitions()), column_(column), world_(world_locations(defs_)), ranks_(defs_) {}

  void run(const std::vector<NonBlockingLocation>& records, Severities& sev) {
    // (communicator, the location on a self one) -> per location its non-blocking collectives on
    // it, in start order: every process's MPI_COMM_SELF operations are instances of their own.
    std::map<std::pair<std::uint32_t, std::uint32_t>, std::map<std::uint32_t, std::vector<const NonBlockingRecord*>>> lists;
    for (const auto& l : records)
      for (const auto& r : l.records)
        lists[{r.communicator, self_communicator(defs_, r.communicator) ? r.location : kNone}][r.location].push_back(&r);
    for (auto& [key, per] : lists) {
      const auto comm = key.first;
      std::size_t most = 0;
      for (auto& [loc, v] : per) {
        std::sort(v.begin(), v.end(), [](const auto* a, const auto* b) { return a->order < b->order; });
        most = std::max(most, v.size());
      }
      for (auto& [loc, v] : per)
        if (v.size() < most) {
          const auto& other = std::find_if(per.begin(), per.end(), [&](const auto& x) { return x.second.size() == most; })->second;
          fail(*other[v.size()], "MPI non-blocking " + trace::collective_op_name(other[v.size()]->op) +
                                     " has no counterpart on location " + defs_.locations[loc].name);
        }
      // The locations in communicator rank order (scans: "the starts ranked up to mine").
      std::vector<const std::vector<const NonBlockingRecord*>*> ranked;
      for (auto& [loc, v] : per) ranked.push_back(&v);
      std::stable_sort(ranked.begin(), ranked.end(), [&](const auto* a, const auto* b) {
        return ranks_.before(comm, a->front()->location, b->front()->location);
      });
      for (std::size_t k = 0; k < most; ++k) {
        std::vector<const NonBlockingRecord*> instance;
        for (const auto* v : ranked) instance.push_back((*v)[k]);
        match(instance, sev);
      }
    }
  }

  std::vector<ClassMove> finish(double tick, Severities& sev) {
    std::vector<ClassMove> moves;
    for (const auto& [key, f] : best_) {
      const auto& r = *f.record;
      const auto col = r.location < column_.size() ? column_[r.location] : kNone;
      if (col == kNone || r.cnode == kNone || r.cnode >= sev.cnodes) continue;
      if (f.ticks > 0) {
        sev.values[std::size_t(f.pattern)][std::size_t(r.cnode) * sev.locations + col] += static_cast<double>(f.ticks) * tick;
        if (sev.instances) sev.instances->add(std::size_t(f.pattern), {f.ticks, r.enter, r.leave, r.cnode, r.location});
      }
      const auto moved = r.only_collectives ? r.leave - r.enter : f.ticks;
      if (moved > 0)
        moves.push_back({r.cnode, col, static_cast<double>(moved) * tick, f.pattern == Pattern::BarrierWait});
    }
    return moves;
  }

 private:
  [[noreturn]] void fail(const NonBlockingRecord& r, const std::string& what) const {
    throw FormatError(trace_.path(), trace_.event_member(r.location), r.position, what);
  }

  std::uint32_t root_location(const NonBlockingRecord& r) const { return nonblocking_root(defs_, world_, r); }

  void match(const std::vector<const NonBlockingRecord*>& instance, Severities& sev) {
    const auto op = instance[0]->op;
    const auto rule = sync_rule(op);
    std::uint64_t latest = 0, root_start = kNoTime, so_far = 0;
    const auto root = root_location(*instance[0]);
    for (const auto* r : instance) {
      if (r->op != op)
        fail(*r, "MPI non-blocking " + trace::collective_op_name(r->op) + " meets " + trace::collective_op_name(op) +
                     " of location " + defs_.locations[instance[0]->location].name);
      latest = std::max(latest, r->start);
      if (r->location == root) root_start = r->start;
    }
    for (const auto* r : instance) {
      so_far = std::max(so_far, r->start);
      const auto [p, until] = nonblocking_wait(rule, op, r->location == root, latest, root_start, so_far);
      if (p == Pattern::Count) continue;
      sev.present[std::size_t(p)] = true;
      const auto end = std::min(until == kNoTime ? 0 : until, r->leave);
      const std::uint64_t ticks = r->test || until == kNoTime || end <= r->enter ? 0 : end - r->enter;
      // A call completing several: the largest counts.
      auto& f = best_[{r->location, r->call}];
      if (!f.record || ticks > f.ticks) f = {ticks, p, r};
    }
  }

  const trace::Trace& trace_;
  const trace::Definitions& defs_;
  const std::vector<std::uint32_t>& column_;
  std::vector<std::uint32_t> world_;
  CommunicatorRanks ranks_;  // instances' members in rank order
  std::map<std::pair<std::uint32_t, std::uint32_t>, Found> best_;  // (location, call) -> largest
};

void add_at(profile::LocalProfile& p, const char* metric, std::uint32_t cnode, std::uint32_t column, double delta) {
  for (std::size_t m = 0; m < p.metrics.size(); ++m) {
    if (p.metrics[m].uniq_name != metric) continue;
    auto* cell = p.values[m].row(cnode) + std::size_t(column) * 8;
    double v;
    std::memcpy(&v, cell, 8);
    v = std::max(0.0, v + delta);
    std::memcpy(cell, &v, 8);
    return;
  }
}

}  // namespace

std::vector<ClassMove> nonblocking_collectives(const trace::Trace& trace, const std::vector<NonBlockingLocation>& records,
                                               const std::vector<std::uint32_t>& column, double tick, Severities& sev) {
  NonBlockingMatcher m(trace, column);
  m.run(records, sev);
  return m.finish(tick, sev);
}

void move_class_time(profile::LocalProfile& p, const std::vector<ClassMove>& moves) {
  for (const auto& m : moves) {
    if (m.cnode >= p.cnode_count() || m.column >= p.locations.size()) continue;
    add_at(p, "mpi_point2point", m.cnode, m.column, -m.seconds);
    if (m.synchronization) {
      add_at(p, "mpi_communication", m.cnode, m.column, -m.seconds);
      add_at(p, "mpi_synchronization", m.cnode, m.column, m.seconds);
      add_at(p, "mpi_sync_collective", m.cnode, m.column, m.seconds);
    } else {
      add_at(p, "mpi_collective", m.cnode, m.column, m.seconds);
    }
  }
  if (moves.empty()) return;
  for (auto& s : p.values) s.mark_nonzero_rows();
}

}  // namespace cubescale::analysis
