#include "cubescale/timeline/synthetic_trace.hpp"

#include <otf2/otf2.h>

#include <stdexcept>
#include <vector>

namespace cubescale::timeline {

namespace {

void check(OTF2_ErrorCode code, const char* call) {
  if (code != OTF2_SUCCESS)
    throw std::runtime_error(std::string("OTF2: ") + call + ": " + OTF2_Error_GetName(code) + " (" +
                             OTF2_Error_GetDescription(code) + ")");
}

OTF2_FlushType pre_flush(void*, OTF2_FileType, OTF2_LocationRef, void*, bool) { return OTF2_FLUSH; }
OTF2_TimeStamp post_flush(void*, OTF2_FileType, OTF2_LocationRef) { return 0; }
const OTF2_FlushCallbacks kFlush = {pre_flush, post_flush};

// Strings are defined once, in order of first use.
struct Strings {
  std::vector<std::string> all;
  OTF2_StringRef operator()(const std::string& s) {
    for (std::size_t i = 0; i < all.size(); ++i)
      if (all[i] == s) return static_cast<OTF2_StringRef>(i);
    all.push_back(s);
    return static_cast<OTF2_StringRef>(all.size() - 1);
  }
};

struct Counter {
  OTF2_MetricRef metric;      // class (own FLOP counter) or instance (energy of a node)
  OTF2_LocationRef recorder;  // the location whose event stream carries the samples
  std::uint64_t rate;         // units per second
};

}  // namespace

std::string write_synthetic_trace(const std::string& directory, const std::string& name, const SyntheticMachine& m) {
  if (m.nodes == 0 || m.packages_per_node == 0 || m.cores_per_package == 0 || m.samples_per_second == 0 || m.seconds == 0)
    throw std::invalid_argument("a synthetic machine needs nodes, packages, cores, seconds and samples");
  if (1000 % m.samples_per_second != 0 || m.core_flops % m.samples_per_second != 0)
    throw std::invalid_argument("samples_per_second must divide 1000 and the FLOP rate (exact counter values)");
  OTF2_Archive* archive = OTF2_Archive_Open(directory.c_str(), name.c_str(), OTF2_FILEMODE_WRITE, 1024 * 1024,
                                            4 * 1024 * 1024, OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE);
  if (!archive) throw std::runtime_error("OTF2: cannot create the archive " + directory + "/" + name);
  struct Closer {
    OTF2_Archive* a;
    ~Closer() { OTF2_Archive_Close(a); }
  } closer{archive};
  check(OTF2_Archive_SetFlushCallbacks(archive, &kFlush, nullptr), "SetFlushCallbacks");
  check(OTF2_Archive_SetSerialCollectiveCallbacks(archive), "SetSerialCollectiveCallbacks");
  check(OTF2_Archive_SetCreator(archive, "cubescale synthetic trace"), "SetCreator");

  Strings str;
  // System tree: 0 machine; per node: node, its packages, its GPUs.
  struct Node { OTF2_SystemTreeNodeRef self, parent; std::string name, cls; OTF2_SystemTreeDomain domain; };
  std::vector<Node> tree{{0, OTF2_UNDEFINED_SYSTEM_TREE_NODE, "machine", "machine", OTF2_SYSTEM_TREE_DOMAIN_MACHINE}};
  std::vector<Counter> counters;
  std::vector<std::vector<OTF2_LocationRef>> locations_of_node(m.nodes);
  OTF2_LocationRef next_location = 0;
  std::uint32_t package_index = 0, gpu_index = 0, core_index = 0;
  const OTF2_MetricRef flops_class = 0, energy_class = 1;
  OTF2_MetricRef next_metric = 2;
  struct Instance { OTF2_MetricRef self; OTF2_LocationRef recorder; OTF2_SystemTreeNodeRef scope; };
  std::vector<Instance> instances;
  for (std::uint32_t n = 0; n < m.nodes; ++n) {
    const auto node = static_cast<OTF2_SystemTreeNodeRef>(tree.size());
    tree.push_back({node, 0, "node " + std::to_string(n), "node", OTF2_SYSTEM_TREE_DOMAIN_SHARED_MEMORY});
    std::vector<OTF2_SystemTreeNodeRef> packages;
    for (std::uint32_t p = 0; p < m.packages_per_node; ++p) {
      packages.push_back(static_cast<OTF2_SystemTreeNodeRef>(tree.size()));
      tree.push_back({packages.back(), node, "package " + std::to_string(p), "package", OTF2_SYSTEM_TREE_DOMAIN_SOCKET});
    }
    for (std::uint32_t p = 0; p < m.packages_per_node; ++p)
      for (std::uint32_t c = 0; c < m.cores_per_package; ++c) {
        const auto loc = next_location++;
        locations_of_node[n].push_back(loc);
        counters.push_back({flops_class, loc, (core_index++ + 1) * m.core_flops});
      }
    const auto recorder = locations_of_node[n].front();
    for (std::uint32_t p = 0; p < m.packages_per_node; ++p) {
      instances.push_back({next_metric, recorder, packages[p]});
      counters.push_back({next_metric++, recorder, (m.package_watts + package_index++ * m.package_watts_step) * 1000000});
    }
    for (std::uint32_t g = 0; g < m.gpus_per_node; ++g) {
      const auto gpu = static_cast<OTF2_SystemTreeNodeRef>(tree.size());
      tree.push_back({gpu, node, "gpu " + std::to_string(g), "gpu", OTF2_SYSTEM_TREE_DOMAIN_ACCELERATOR_DEVICE});
      instances.push_back({next_metric, recorder, gpu});
      counters.push_back({next_metric++, recorder, (m.gpu_watts + gpu_index++ * m.gpu_watts_step) * 1000000});
    }
  }

  // Events: every recorder writes its counters' samples in time order.
  check(OTF2_Archive_OpenEvtFiles(archive), "OpenEvtFiles");
  std::vector<std::uint64_t> events(next_location, 0);
  const std::uint64_t samples = std::uint64_t(m.seconds) * m.samples_per_second;
  for (OTF2_LocationRef loc = 0; loc < next_location; ++loc) {
    OTF2_EvtWriter* writer = OTF2_Archive_GetEvtWriter(archive, loc);
    if (!writer) throw std::runtime_error("OTF2: GetEvtWriter failed");
    for (std::uint64_t k = 0; k <= samples; ++k) {
      const std::uint64_t ticks = k * m.ticks_per_second / m.samples_per_second;
      for (const auto& c : counters) {
        if (c.recorder != loc) continue;
        OTF2_Type type = OTF2_TYPE_UINT64;
        OTF2_MetricValue value;
        value.unsigned_int = c.rate * k / m.samples_per_second;  // exact: see the header
        check(OTF2_EvtWriter_Metric(writer, nullptr, ticks, c.metric, 1, &type, &value), "EvtWriter_Metric");
        ++events[loc];
      }
    }
    check(OTF2_Archive_CloseEvtWriter(archive, writer), "CloseEvtWriter");
  }
  check(OTF2_Archive_CloseEvtFiles(archive), "CloseEvtFiles");

  check(OTF2_Archive_OpenDefFiles(archive), "OpenDefFiles");
  for (OTF2_LocationRef loc = 0; loc < next_location; ++loc) {
    OTF2_DefWriter* d = OTF2_Archive_GetDefWriter(archive, loc);
    check(OTF2_Archive_CloseDefWriter(archive, d), "CloseDefWriter");
  }
  check(OTF2_Archive_CloseDefFiles(archive), "CloseDefFiles");

  OTF2_GlobalDefWriter* g = OTF2_Archive_GetGlobalDefWriter(archive);
  if (!g) throw std::runtime_error("OTF2: GetGlobalDefWriter failed");
  // Names first (strings must be defined before use), then the records that use them.
  std::vector<OTF2_StringRef> node_name, node_class;
  for (const auto& n : tree) node_name.push_back(str(n.name)), node_class.push_back(str(n.cls));
  const auto flops_name = str("PAPI_FP_OPS"), flops_unit = str("#"), energy_name = str("energy"), joules = str("uJ");
  const auto flops_descr = str("floating point operations"), energy_descr = str("energy since the start");
  std::vector<OTF2_StringRef> process_name, thread_name;
  for (std::uint32_t n = 0; n < m.nodes; ++n) process_name.push_back(str("MPI Rank " + std::to_string(n)));
  for (std::uint32_t t = 0; t < m.packages_per_node * m.cores_per_package; ++t)
    thread_name.push_back(str(t == 0 ? "Master thread" : "OMP thread " + std::to_string(t)));
  for (std::size_t i = 0; i < str.all.size(); ++i)
    check(OTF2_GlobalDefWriter_WriteString(g, static_cast<OTF2_StringRef>(i), str.all[i].c_str()), "WriteString");
  check(OTF2_GlobalDefWriter_WriteClockProperties(g, m.ticks_per_second, 0, samples * m.ticks_per_second / m.samples_per_second + 1, 0),
        "WriteClockProperties");
  for (std::size_t i = 0; i < tree.size(); ++i) {
    check(OTF2_GlobalDefWriter_WriteSystemTreeNode(g, tree[i].self, node_name[i], node_class[i], tree[i].parent),
          "WriteSystemTreeNode");
    check(OTF2_GlobalDefWriter_WriteSystemTreeNodeDomain(g, tree[i].self, tree[i].domain), "WriteSystemTreeNodeDomain");
  }
  OTF2_SystemTreeNodeRef node_ref = 0;
  for (std::uint32_t n = 0; n < m.nodes; ++n) {
    // The n-th node's tree element: skip the machine and the previous nodes' subtrees.
    node_ref = 1 + n * (1 + m.packages_per_node + m.gpus_per_node);
    check(OTF2_GlobalDefWriter_WriteLocationGroup(g, n, process_name[n], OTF2_LOCATION_GROUP_TYPE_PROCESS, node_ref,
                                                  OTF2_UNDEFINED_LOCATION_GROUP),
          "WriteLocationGroup");
  }
  for (std::uint32_t n = 0; n < m.nodes; ++n)
    for (std::size_t t = 0; t < locations_of_node[n].size(); ++t) {
      const auto loc = locations_of_node[n][t];
      check(OTF2_GlobalDefWriter_WriteLocation(g, loc, thread_name[t], OTF2_LOCATION_TYPE_CPU_THREAD, events[loc], n),
            "WriteLocation");
    }
  check(OTF2_GlobalDefWriter_WriteMetricMember(g, 0, flops_name, flops_descr, OTF2_METRIC_TYPE_PAPI,
                                               OTF2_METRIC_ACCUMULATED_START, OTF2_TYPE_UINT64, OTF2_BASE_DECIMAL, 0,
                                               flops_unit),
        "WriteMetricMember");
  check(OTF2_GlobalDefWriter_WriteMetricMember(g, 1, energy_name, energy_descr, OTF2_METRIC_TYPE_OTHER,
                                               OTF2_METRIC_ACCUMULATED_START, OTF2_TYPE_UINT64, OTF2_BASE_DECIMAL, 0, joules),
        "WriteMetricMember");
  const OTF2_MetricMemberRef flops_member = 0, energy_member = 1;
  check(OTF2_GlobalDefWriter_WriteMetricClass(g, flops_class, 1, &flops_member, OTF2_METRIC_SYNCHRONOUS_STRICT,
                                              OTF2_RECORDER_KIND_CPU),
        "WriteMetricClass");
  check(OTF2_GlobalDefWriter_WriteMetricClass(g, energy_class, 1, &energy_member, OTF2_METRIC_ASYNCHRONOUS,
                                              OTF2_RECORDER_KIND_ABSTRACT),
        "WriteMetricClass");
  for (const auto& i : instances)
    check(OTF2_GlobalDefWriter_WriteMetricInstance(g, i.self, energy_class, i.recorder, OTF2_SCOPE_SYSTEM_TREE_NODE, i.scope),
          "WriteMetricInstance");
  check(OTF2_Archive_CloseGlobalDefWriter(archive, g), "CloseGlobalDefWriter");
  return directory + "/" + name + ".otf2";
}

}  // namespace cubescale::timeline
