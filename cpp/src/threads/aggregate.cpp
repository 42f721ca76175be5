#include "cubescale/threads/aggregate.hpp"

#include <algorithm>
#include <cctype>
#include <memory>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <utility>

#include "cubescale/cube/aggregate.hpp"
#include "cubescale/threads/combine.hpp"
#include "cubescale/threads/grouping.hpp"
#include "cubescale/threads/parallel_ranges.hpp"
#include "cubescale/threads/synchronization.hpp"

namespace cubescale::threads {

using cube::Metric;
using cube::MetricKind;
using cube::Severity;

namespace {

// What both drivers hand to the shared part: definitions and a way to get a metric's values.
struct Source {
  const std::vector<Metric>& metrics;
  const std::vector<cube::Region>& regions;
  const std::vector<std::uint32_t>& cnode_parents;
  std::vector<std::uint32_t> cnode_regions;
  std::size_t locations = 0;
  // Stored values of a metric (kind = its own) or converted along the call tree.
  std::function<std::shared_ptr<const Severity>(std::size_t, MetricKind)> values;
  std::size_t cnodes() const { return cnode_parents.size(); }
};

// One process: its CPU threads (master first) and the locations kept as they are.
struct Process {
  std::vector<std::uint32_t> threads, kept;
  std::vector<std::int64_t> thread_ranks;
};

struct OutputLocation {
  std::string name, type;
  std::int64_t rank = 0;
  std::vector<std::int64_t> member_ranks;  // ranks of the folded threads (for attributes)
};

struct Plan {
  ColumnGroups columns;                               // output column -> input columns
  std::vector<std::vector<OutputLocation>> processes;  // output locations per process
  std::vector<std::uint8_t> visited;                  // [cnode][input location]
};

bool stored(const Metric& m) { return !cube::is_derived(m); }

std::optional<std::size_t> find_metric(const std::vector<Metric>& metrics, const std::string& name) {
  for (std::size_t i = 0; i < metrics.size(); ++i)
    if (metrics[i].uniq_name == name && stored(metrics[i]) && is_scalar(metrics[i].dtype)) return i;
  return std::nullopt;
}

// "Visited" = visits > 0 where the profile counts visits; otherwise any non-zero value.
std::vector<std::uint8_t> visited_mask(const Source& s) {
  std::vector<std::uint8_t> mask(s.cnodes() * s.locations, 0);
  auto mark = [&](const Severity& v) {
    const std::size_t w = v.dtype().width();
    for (std::size_t c = 0; c < v.cnodes(); ++c) {
      const auto* row = v.row(c);
      if (!v.present(c) && cube::row_is_zero(row, v.row_bytes())) continue;  // unmarked rows: see combine.cpp
      auto* flags = mask.data() + c * s.locations;
      for (std::size_t l = 0; l < s.locations; ++l)
        if (!cube::row_is_zero(row + l * w, w)) flags[l] = 1;
    }
  };
  if (auto visits = find_metric(s.metrics, "visits")) {
    mark(*s.values(*visits, s.metrics[*visits].kind));
    return mask;
  }
  for (std::size_t m = 0; m < s.metrics.size(); ++m)
    if (stored(s.metrics[m])) mark(*s.values(m, s.metrics[m].kind));
  return mask;
}

std::size_t work_metric(const Source& s, const Options& o) {
  if (o.work_metric) {
    const auto m = *o.work_metric;
    if (m >= s.metrics.size() || !stored(s.metrics[m]) || !is_scalar(s.metrics[m].dtype))
      throw std::invalid_argument("the work metric must be a stored metric of numbers");
    return m;
  }
  if (auto time = find_metric(s.metrics, "time")) return *time;
  for (std::size_t m = 0; m < s.metrics.size(); ++m)
    if (stored(s.metrics[m]) && is_scalar(s.metrics[m].dtype) && s.metrics[m].uom == "sec") return m;
  throw std::invalid_argument("no time metric (\"time\", or one in \"sec\") to tell work from waiting; name one");
}

std::vector<std::uint8_t> work_flags(const Source& s, const Options& o) {
  const auto sync = o.synchronization.empty() ? synchronization_flags(s.regions) : o.synchronization;
  if (sync.size() != s.regions.size()) throw std::invalid_argument("one synchronization flag per region expected");
  std::vector<std::uint8_t> is_work(s.cnodes());
  for (std::size_t c = 0; c < s.cnodes(); ++c) is_work[c] = sync.at(s.cnode_regions[c]) ? 0 : 1;
  return is_work;
}

// Work per location: exclusive time summed over the work call paths, read straight from the
// stored matrix in one pass. For inclusive storage, exclusive(c) = inclusive(c) - inclusive
// of c's children, so the sum takes inclusive(c) x (work(c) - work(parent(c))).
std::vector<double> location_work(const Source& s, std::size_t metric, const std::vector<std::uint8_t>& is_work) {
  const auto values = s.values(metric, s.metrics[metric].kind);
  const bool inclusive = s.metrics[metric].kind == MetricKind::Inclusive;
  std::vector<double> work(s.locations, 0.0), row(s.locations);
  for (std::size_t c = 0; c < s.cnodes(); ++c) {
    const auto parent = s.cnode_parents[c];
    const double weight = double(is_work[c]) - (inclusive && parent != cube::kNoParent ? double(is_work[parent]) : 0.0);
    if (weight == 0) continue;
    cube::to_doubles(values->dtype(), values->row(c), s.locations, row.data());
    for (std::size_t l = 0; l < s.locations; ++l) work[l] += weight * row[l];
  }
  return work;
}

Plan make_plan(const Source& s, const std::vector<Process>& processes, const Options& o) {
  if (o.strategy == Strategy::Value && o.max_clusters == 0) throw std::invalid_argument("max_clusters must be at least 1");
  Plan plan;
  plan.visited = visited_mask(s);
  std::vector<double> time, work;  // [cnode][location] exclusive (VALUE); per location (KEY)
  std::vector<std::uint8_t> is_work(s.cnodes(), 1);
  if (o.strategy == Strategy::Key) {
    is_work = work_flags(s, o);
    work = location_work(s, work_metric(s, o), is_work);
  } else if (o.strategy == Strategy::Value) {
    const auto exclusive = s.values(work_metric(s, o), MetricKind::Exclusive);
    time.resize(s.cnodes() * s.locations);
    cube::to_doubles(*exclusive, time.data());
  }
  // Each process is grouped on its own (no shared state), so processes spread over the cores.
  std::vector<std::vector<ThreadGroup>> groups(processes.size());
  auto group_range = [&](std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i) {
      const auto& process = processes[i];
      ThreadProfiles p;
      p.threads = process.threads.size();
      p.cnodes = s.cnodes();
      p.visited.resize(p.threads * p.cnodes);
      if (!time.empty()) p.time.resize(p.threads * p.cnodes);
      for (std::size_t c = 0; c < p.cnodes; ++c)
        for (std::size_t t = 0; t < p.threads; ++t) {
          const auto l = process.threads[t];
          p.visited[t * p.cnodes + c] = plan.visited[c * s.locations + l];
          if (!time.empty()) p.time[t * p.cnodes + c] = time[c * s.locations + l];
        }
      for (auto l : process.threads)
        if (!work.empty()) p.work.push_back(work[l]);
      groups[i] = group_threads(p, o, is_work, process.thread_ranks);
    }
  };
  // Threads pay off from about a million values on.
  over_ranges(processes.size(), s.cnodes() * s.locations < (std::size_t(1) << 20), group_range);
  for (std::size_t i = 0; i < processes.size(); ++i) {
    const auto& process = processes[i];
    auto& out = plan.processes.emplace_back();
    for (const auto& g : groups[i]) {
      std::vector<std::uint32_t> columns;
      OutputLocation loc{g.name, "thread", g.rank, {}};
      for (auto t : g.members) columns.push_back(process.threads[t]), loc.member_ranks.push_back(process.thread_ranks[t]);
      plan.columns.add(columns);
      out.push_back(std::move(loc));
    }
    for (auto l : process.kept) plan.columns.add({l}), out.push_back({"", "", 0, {}});  // names filled by the driver
  }
  return plan;
}

// SUM and the clusterings say how many threads a location stands for; SET has N in every
// tuple, and KEY's single threads need no count (as Score-P's key_threads).
bool counts_threads(Strategy s) { return s == Strategy::Sum || s == Strategy::Calltree || s == Strategy::Value; }

// SUM's count is UINT64 as Score-P's; a cluster's count takes 4 bytes, as the paper's tuple
// count: every cluster location stores it next to the metrics it keeps.
cube::DataType out_count_type(const Options& o) {
  return *cube::parse_data_type(o.strategy == Strategy::Sum ? "UINT64" : "UINT32");
}

std::vector<Metric> output_metrics(const std::vector<Metric>& in, const Options& o) {
  std::vector<Metric> out = in;
  if (o.strategy == Strategy::Set) {
    for (auto& m : out)
      if (stored(m) && is_scalar(m.dtype)) m.dtype = *cube::parse_data_type("TAU_ATOMIC");
  }
  if (!counts_threads(o.strategy)) return out;
  Metric n;
  n.uniq_name = std::string(kThreadCountMetric);
  n.disp_name = "number of threads";
  n.uom = "threads";
  n.descr = "Threads that visited the call path, per aggregated location";
  n.dtype = out_count_type(o);
  n.kind = MetricKind::Exclusive;
  std::uint64_t id = 0;
  for (const auto& m : in) id = std::max(id, m.file_id + 1);
  n.file_id = id;
  out.push_back(std::move(n));
  return out;
}

// Calls set(metric, values) for every output metric with values (derived ones have none).
template <class Set>
void aggregate_values(const Source& s, const Plan& plan, const Options& o, const Progress& progress, Set&& set) {
  const std::size_t total = s.metrics.size() + (counts_threads(o.strategy) ? 1 : 0);
  for (std::size_t m = 0; m < s.metrics.size(); ++m) {
    if (stored(s.metrics[m])) {
      const auto in = s.values(m, s.metrics[m].kind);
      const bool tuple = o.strategy == Strategy::Set && is_scalar(in->dtype());
      set(m, tuple ? tuple_columns(*in, plan.columns, plan.visited) : fold_columns(*in, plan.columns, plan.visited));
    }
    if (progress) progress(m + 1, total);
  }
  if (counts_threads(o.strategy)) {
    set(s.metrics.size(), count_visits(plan.columns, plan.visited, s.cnodes(), s.locations, out_count_type(o)));
    if (progress) progress(total, total);
  }
}

// "0 2-5 9": runs of consecutive ranks as ranges, so that "all workers" stays short.
std::string join_ranks(std::vector<std::int64_t> ranks) {
  std::sort(ranks.begin(), ranks.end());
  std::string out;
  for (std::size_t i = 0; i < ranks.size();) {
    std::size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    out += (out.empty() ? "" : " ") + std::to_string(ranks[i]);
    if (j > i) out += "-" + std::to_string(ranks[j]);
    i = j + 1;
  }
  return out;
}

}  // namespace

bool is_thread_class(const std::string& cls) {
  std::string s(cls);
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s.find("thread") != std::string::npos;
}

std::shared_ptr<cube::Report> aggregate_report(const cube::Report& in, const Options& options, const Progress& progress) {
  const auto& defs = in.definitions();
  std::vector<std::uint32_t> cnode_regions;
  for (const auto& c : defs.cnodes) cnode_regions.push_back(c.region);
  Source source{defs.metrics, defs.regions, in.cnode_parents(), std::move(cnode_regions), defs.location_count(),
                [&](std::size_t m, MetricKind k) { return in.values(m, k); }};
  // Processes = location groups; their locations in column (preorder) order.
  std::unordered_map<std::uint32_t, std::size_t> group_of;
  for (std::size_t g = 0; g < defs.location_groups.size(); ++g) group_of[defs.location_groups[g]] = g;
  std::vector<Process> processes(defs.location_groups.size());
  for (std::uint32_t l = 0; l < defs.location_count(); ++l) {
    const auto e = defs.locations[l];
    auto& p = processes.at(group_of.at(defs.system.parent(e)));
    if (is_thread_class(defs.system.cls(e))) p.threads.push_back(l), p.thread_ranks.push_back(defs.location_rank[l]);
    else p.kept.push_back(l);
  }
  for (auto& p : processes) {  // the master thread first: the lowest rank (ties: first seen)
    const auto master = std::min_element(p.thread_ranks.begin(), p.thread_ranks.end()) - p.thread_ranks.begin();
    if (master > 0) {
      std::rotate(p.threads.begin(), p.threads.begin() + master, p.threads.begin() + master + 1);
      std::rotate(p.thread_ranks.begin(), p.thread_ranks.begin() + master, p.thread_ranks.begin() + master + 1);
    }
  }
  const auto plan = make_plan(source, processes, options);

  cube::Definitions out;
  out.version = defs.version;
  out.attrs = defs.attrs;
  out.mirrors = defs.mirrors;
  out.metrics = output_metrics(defs.metrics, options);
  out.regions = defs.regions;
  out.cnodes = defs.cnodes;
  // The system tree again, each location group followed by its new locations.
  std::vector<std::uint32_t> copy_of(defs.system.size());
  const auto order = defs.system.preorder();
  for (const auto e : order) {
    const auto kind = defs.system.kind(e);
    if (kind == systree::Kind::Location) continue;
    const auto parent = defs.system.parent(e);
    const auto c = parent == systree::SingleNodeTree::kNoParent
                       ? out.system.add_root(kind, defs.system.cls(e), defs.system.name(e))
                       : out.system.add_child(copy_of[parent], kind, defs.system.cls(e), defs.system.name(e));
    copy_of[e] = c;
    for (const auto& [k, v] : defs.system.properties(e)) out.system.set_property(c, k, v);
    if (kind != systree::Kind::LocationGroup) continue;
    const auto g = group_of.at(e);
    out.location_groups.push_back(c);
    out.group_rank.push_back(defs.group_rank[g]);
    std::size_t kept = 0;
    for (const auto& loc : plan.processes[g]) {
      std::string name = loc.name, type = loc.type;
      std::int64_t rank = loc.rank;
      if (name.empty()) {  // a kept location (GPU stream ...): as it was
        const auto l = processes[g].kept[kept++];
        name = defs.system.name(defs.locations[l]), type = defs.system.cls(defs.locations[l]), rank = defs.location_rank[l];
      } else if (options.strategy != Strategy::Sum && options.strategy != Strategy::Set) {
        out.attrs.emplace_back("cubescale::threads::" + std::to_string(defs.group_rank[g]) + "::" + name,
                               join_ranks(loc.member_ranks));
      }
      out.location_file_id.push_back(out.locations.size());
      out.locations.push_back(out.system.add_child(c, systree::Kind::Location, type, name));
      out.location_rank.push_back(rank);
    }
  }
  // Topologies name the old locations; they do not describe the aggregated ones.
  out.topologies_xml.clear();
  cube::validate(out);
  auto report = std::make_shared<cube::Report>(std::move(out));
  aggregate_values(source, plan, options, progress, [&](std::size_t m, Severity v) { report->set_values(m, std::move(v)); });
  return report;
}

profile::LocalProfile aggregate_profile(const profile::LocalProfile& in, const Options& options) {
  in.validate();
  Source source{in.metrics, in.regions, in.cnode_parents, in.cnode_regions, in.locations.size(),
                [&](std::size_t m, MetricKind k) {
                  const auto& v = in.values.at(m);
                  if (k == in.metrics[m].kind) return std::shared_ptr<const Severity>(std::shared_ptr<const Severity>{}, &v);
                  // The conversion skips rows not marked present; built matrices may not mark them.
                  Severity marked = v;
                  marked.mark_nonzero_rows();
                  return std::make_shared<const Severity>(cube::convert(marked, in.metrics[m].kind, k, in.cnode_parents));
                }};
  Process process;
  for (std::uint32_t l = 0; l < in.locations.size(); ++l) {
    if (is_thread_class(in.locations[l].type)) {
      process.thread_ranks.push_back(static_cast<std::int64_t>(process.threads.size()));
      process.threads.push_back(l);
    } else {
      process.kept.push_back(l);
    }
  }
  const auto plan = make_plan(source, {process}, options);
  profile::LocalProfile out;
  out.metrics = output_metrics(in.metrics, options);
  out.regions = in.regions;
  out.cnode_parents = in.cnode_parents;
  out.cnode_regions = in.cnode_regions;
  out.cnode_parameters = in.cnode_parameters;
  std::size_t kept = 0;
  for (const auto& loc : plan.processes[0])
    out.locations.push_back(loc.name.empty() ? in.locations[process.kept[kept++]] : profile::LocationInfo{loc.name, loc.type});
  out.values.resize(out.metrics.size());
  aggregate_values(source, plan, options, {}, [&](std::size_t m, Severity v) { out.values[m] = std::move(v); });
  out.validate();
  return out;
}

}  // namespace cubescale::threads
