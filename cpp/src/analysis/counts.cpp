#include "cubescale/analysis/counts.hpp"

#include <cstring>
#include <string>

#include "cubescale/cube/dtype.hpp"

namespace cubescale::analysis {

void CountsObserver::begin_location(std::uint32_t) {
  if (started_) ++column_;
  started_ = true;
  first_ = entries_.size();
  index_.clear();
}

CountsObserver::Entry& CountsObserver::at(std::uint32_t cnode) {
  if (cnode >= index_.size()) index_.resize(cnode + 1, trace::kNone);
  if (index_[cnode] == trace::kNone || index_[cnode] < first_) {
    index_[cnode] = static_cast<std::uint32_t>(entries_.size());
    entries_.push_back({cnode, column_, {}});
  }
  return entries_[index_[cnode]];
}

void CountsObserver::event(const trace::Event& e, std::uint32_t cnode) {
  if (cnode == trace::kNone) return;
  auto& values = at(cnode).values;  // one look-up for the event's two counts
  auto add = [&](Count c, std::uint64_t v) { values[std::size_t(c)] += v; };
  switch (e.type) {
    case trace::EventType::MpiSend:
    case trace::EventType::MpiIsend:
      add(e.bytes == 0 ? Count::SyncsSend : Count::CommsSend, 1);
      add(Count::BytesSent, e.bytes);
      break;
    case trace::EventType::MpiRecv:
    case trace::EventType::MpiIrecv:
      add(e.bytes == 0 ? Count::SyncsRecv : Count::CommsRecv, 1);
      add(Count::BytesRcvd, e.bytes);
      break;
    case trace::EventType::MpiCollectiveEnd: {
      const bool out = e.bytes != 0, in = e.bytes_received != 0;
      add(out && in ? Count::CommsCxch : out ? Count::CommsCsrc : in ? Count::CommsCdst : Count::SyncsColl, 1);
      add(Count::BytesCout, e.bytes);
      add(Count::BytesCin, e.bytes_received);
      break;
    }
    default: break;
  }
}

void CountsObserver::late_receiver(std::uint32_t row, std::uint32_t column, bool empty) {
  const auto key = (std::uint64_t(row) << 32) | column;
  auto [it, fresh] = late_receiver_index_.try_emplace(key, static_cast<std::uint32_t>(late_receivers_.size()));
  if (fresh) late_receivers_.push_back({row, column});
  ++(empty ? late_receivers_[it->second].empty : late_receivers_[it->second].nonempty);
}

void CountsObserver::absorb_late_receivers(const CountsObserver& later) {
  for (const auto& l : later.late_receivers_) {
    const auto key = (std::uint64_t(l.row) << 32) | l.column;
    auto [it, fresh] = late_receiver_index_.try_emplace(key, static_cast<std::uint32_t>(late_receivers_.size()));
    if (fresh) late_receivers_.push_back({l.row, l.column});
    late_receivers_[it->second].empty += l.empty;
    late_receivers_[it->second].nonempty += l.nonempty;
  }
}

void CountsObserver::absorb(trace::CallPathObserver& other) {
  auto& later = dynamic_cast<CountsObserver&>(other);
  if (!later.started_) return;
  const std::uint32_t columns = started_ ? column_ + 1 : 0;
  for (auto entry : later.entries_) {
    entry.column += columns;
    entries_.push_back(entry);
  }
  column_ = columns + later.column_;
  started_ = true;
  index_.clear();  // a location's own; a later begin_location starts afresh
  first_ = entries_.size();
}

void CountsObserver::rows(const std::vector<std::uint32_t>& rows) {
  for (auto& entry : entries_)
    if (entry.cnode < rows.size()) entry.cnode = rows[entry.cnode];
}

namespace {

struct CountMetric {
  const char* name;
  const char* display;
  const char* parent;  // unique name, "" for a root
  const char* unit;
  std::vector<Count> leaves;  // the counts its stored value sums (its own and its children's)
  const char* description;
};

// Scalasca 2.6's trees (unique and display names and nesting as its scout.spec has them; the
// descriptions are ours), in preorder.
const std::vector<CountMetric>& count_tree() {
  using C = Count;
  static const std::vector<CountMetric> tree = {
      {"syncs", "MPI synchronizations", "", "occ", {C::SyncsSend, C::SyncsRecv, C::SyncsColl},
       "MPI operations that synchronize without moving data: empty messages, collectives without data"},
      {"syncs_p2p", "Point-to-point", "syncs", "occ", {C::SyncsSend, C::SyncsRecv},
       "Sends and receives of empty messages"},
      {"syncs_send", "Sends", "syncs_p2p", "occ", {C::SyncsSend}, "Number of sends of zero-sized messages"},
      {"mpi_slr_count", "Late Receivers", "syncs_send", "occ", {C::SlrCount},
       "Number of Late Receiver instances in sends of zero-sized messages"},
      {"syncs_recv", "Receives", "syncs_p2p", "occ", {C::SyncsRecv}, "Number of receives of zero-sized messages"},
      {"mpi_sls_count", "Late Senders", "syncs_recv", "occ", {C::SlsCount},
       "Number of Late Sender instances in receives of zero-sized messages"},
      {"mpi_slswo_count", "Messages in Wrong Order", "mpi_sls_count", "occ", {C::SlswoCount},
       "Those Late Sender instances whose messages came in another order than sent"},
      {"syncs_coll", "Collective", "syncs", "occ", {C::SyncsColl},
       "Number of MPI collectives neither sending nor receiving data"},
      {"comms", "MPI communications", "", "occ", {C::CommsSend, C::CommsRecv, C::CommsCxch, C::CommsCsrc, C::CommsCdst},
       "MPI operations that move data: messages with data, collectives sending or receiving some"},
      {"comms_p2p", "Point-to-point", "comms", "occ", {C::CommsSend, C::CommsRecv},
       "Sends and receives of messages with data"},
      {"comms_send", "Sends", "comms_p2p", "occ", {C::CommsSend}, "Number of sends of non-empty messages"},
      {"mpi_clr_count", "Late Receivers", "comms_send", "occ", {C::ClrCount},
       "Number of Late Receiver instances in sends of non-empty messages"},
      {"comms_recv", "Receives", "comms_p2p", "occ", {C::CommsRecv}, "Number of receives of non-empty messages"},
      {"mpi_cls_count", "Late Senders", "comms_recv", "occ", {C::ClsCount},
       "Number of Late Sender instances in receives of non-empty messages"},
      {"mpi_clswo_count", "Messages in Wrong Order", "mpi_cls_count", "occ", {C::ClswoCount},
       "Those Late Sender instances whose messages came in another order than sent"},
      {"comms_coll", "Collective", "comms", "occ", {C::CommsCxch, C::CommsCsrc, C::CommsCdst},
       "Number of MPI collectives sending or receiving data"},
      {"comms_cxch", "Exchange", "comms_coll", "occ", {C::CommsCxch}, "Collectives sending and receiving data"},
      {"comms_csrc", "As source", "comms_coll", "occ", {C::CommsCsrc}, "Collectives only sending data"},
      {"comms_cdst", "As destination", "comms_coll", "occ", {C::CommsCdst}, "Collectives only receiving data"},
      {"bytes", "MPI bytes transferred", "", "bytes", {C::BytesSent, C::BytesRcvd, C::BytesCout, C::BytesCin},
       "Number of bytes MPI operations transferred"},
      {"bytes_p2p", "Point-to-point", "bytes", "bytes", {C::BytesSent, C::BytesRcvd},
       "Bytes of MPI point-to-point messages"},
      {"bytes_sent", "Sent", "bytes_p2p", "bytes", {C::BytesSent}, "Bytes sent in MPI point-to-point messages"},
      {"bytes_rcvd", "Received", "bytes_p2p", "bytes", {C::BytesRcvd}, "Bytes received in MPI point-to-point messages"},
      {"bytes_coll", "Collective", "bytes", "bytes", {C::BytesCout, C::BytesCin}, "Bytes of MPI collectives"},
      {"bytes_cout", "Outgoing", "bytes_coll", "bytes", {C::BytesCout}, "Bytes MPI collectives sent"},
      {"bytes_cin", "Incoming", "bytes_coll", "bytes", {C::BytesCin}, "Bytes MPI collectives received"},
  };
  return tree;
}

}  // namespace

void add_counts(profile::LocalProfile& p, const CountsObserver& counts, const std::vector<std::vector<SyncPoint>>& points,
                const std::vector<std::uint32_t>& column) {
  const auto cnodes = p.cnode_count(), cols = p.locations.size();
  constexpr auto kCounts = std::size_t(Count::Size);
  // Dense [count][cnode * cols + column]; few call paths have counts, but the matrices are dense anyway.
  std::vector<std::vector<std::uint64_t>> dense(kCounts, std::vector<std::uint64_t>(cnodes * cols, 0));
  for (const auto& e : counts.entries())
    if (e.cnode < cnodes && e.column < cols)
      for (std::size_t k = 0; k < kCounts; ++k) dense[k][std::size_t(e.cnode) * cols + e.column] += e.values[k];
  for (std::size_t l = 0; l < points.size() && l < column.size(); ++l) {
    if (column[l] >= cols) continue;
    for (const auto& s : points[l]) {
      if (!s.late_sender || s.cnode >= cnodes) continue;
      const auto at = std::size_t(s.cnode) * cols + column[l];
      ++dense[std::size_t(s.empty ? Count::SlsCount : Count::ClsCount)][at];
      if (s.wrong_order) ++dense[std::size_t(s.empty ? Count::SlswoCount : Count::ClswoCount)][at];
    }
  }
  for (const auto& r : counts.late_receivers()) {
    if (r.row >= cnodes || r.column >= cols) continue;
    const auto at = std::size_t(r.row) * cols + r.column;
    dense[std::size_t(Count::SlrCount)][at] += r.empty;
    dense[std::size_t(Count::ClrCount)][at] += r.nonempty;
  }
  // Score-P's bytes_sent / bytes_received (all MPI bytes) give way to Scalasca's meaning;
  // its bytes_put / bytes_get (puts, gets, RMA collectives and atomics, on any window) are not
  // scout's (MPI puts and gets only, below a bytes_rma that cubescale does not compute yet).
  const auto scorep_bytes = [](const std::string& name) {
    return name == "bytes_sent" || name == "bytes_received" || name == "bytes_put" || name == "bytes_get";
  };
  std::vector<cube::Metric> metrics;
  std::vector<cube::Severity> values;
  std::vector<std::uint32_t> new_index(p.metrics.size(), cube::kNoParent);
  for (std::size_t m = 0; m < p.metrics.size(); ++m) {
    if (scorep_bytes(p.metrics[m].uniq_name)) continue;
    new_index[m] = static_cast<std::uint32_t>(metrics.size());
    metrics.push_back(std::move(p.metrics[m]));
    if (metrics.back().parent != cube::kNoParent) metrics.back().parent = new_index[metrics.back().parent];
    values.push_back(std::move(p.values[m]));
  }
  const auto dtype = *cube::parse_data_type("UINT64");
  for (const auto& t : count_tree()) {
    cube::Metric metric;
    metric.uniq_name = t.name;
    metric.url = scout_url(t.name);
    metric.disp_name = t.display;
    metric.dtype = dtype;
    metric.kind = cube::MetricKind::Exclusive;
    metric.uom = t.unit;
    metric.descr = t.description;
    for (std::size_t m = 0; m < metrics.size() && *t.parent; ++m)
      if (metrics[m].uniq_name == t.parent) metric.parent = static_cast<std::uint32_t>(m);
    cube::Severity s(dtype, cnodes, cols);
    for (std::size_t c = 0; c < cnodes; ++c)
      for (std::size_t l = 0; l < cols; ++l) {
        std::uint64_t v = 0;
        for (auto k : t.leaves) v += dense[std::size_t(k)][c * cols + l];
        std::memcpy(s.row(c) + l * 8, &v, 8);
      }
    s.mark_nonzero_rows();
    metrics.push_back(std::move(metric));
    values.push_back(std::move(s));
  }
  p.metrics = std::move(metrics);
  p.values = std::move(values);
}

}  // namespace cubescale::analysis
