#include "cubescale/systree/hwloc_levels.hpp"
#include "cubescale/systree/cpu_list.hpp"

#include <hwloc.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <functional>
#include <utility>
#include <stdexcept>

namespace cubescale::systree {
namespace {

constexpr std::uint32_t kTop = 0xffffffffu;

void bitmap_free(hwloc_bitmap_s* b) { hwloc_bitmap_free(b); }
using Bitmap = std::unique_ptr<hwloc_bitmap_s, void (*)(hwloc_bitmap_s*)>;
Bitmap make_bitmap(hwloc_const_bitmap_t from = nullptr) {
  return Bitmap(from ? hwloc_bitmap_dup(from) : hwloc_bitmap_alloc(), bitmap_free);
}

hwloc_topology_t load(const std::function<int(hwloc_topology_t)>& configure) {
  hwloc_topology_t t = nullptr;
  if (hwloc_topology_init(&t) != 0) throw std::runtime_error("hwloc_topology_init failed");
  // Keep GPUs and NICs; bridges and PCI devices are dropped below, not by hwloc, so that
  // OS devices can still be found.
  hwloc_topology_set_io_types_filter(t, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
  if (configure(t) != 0 || hwloc_topology_load(t) != 0) {
    hwloc_topology_destroy(t);
    throw std::invalid_argument("hwloc could not load the topology");
  }
  return t;
}

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool is_cache(hwloc_obj_t o) { return hwloc_obj_type_is_cache(o->type); }

// Class name of a hardware object: "package", "numa", "l3cache", "core", "pu", "gpu", ...
std::string class_of(hwloc_obj_t o) {
  switch (o->type) {
    case HWLOC_OBJ_NUMANODE: return "numa";
    case HWLOC_OBJ_OS_DEVICE:
      switch (o->attr->osdev.type) {
        case HWLOC_OBJ_OSDEV_GPU: return "gpu";
        case HWLOC_OBJ_OSDEV_COPROC: return "accelerator_device";
        case HWLOC_OBJ_OSDEV_NETWORK: return "network";
        case HWLOC_OBJ_OSDEV_OPENFABRICS: return "openfabrics";
        default: return "osdev";
      }
    default: return lower(hwloc_obj_type_string(o->type));
  }
}

bool keep_os_device(hwloc_obj_t o) {
  if (o->type != HWLOC_OBJ_OS_DEVICE) return false;
  const auto t = o->attr->osdev.type;
  return t == HWLOC_OBJ_OSDEV_GPU || t == HWLOC_OBJ_OSDEV_COPROC || t == HWLOC_OBJ_OSDEV_NETWORK ||
         t == HWLOC_OBJ_OSDEV_OPENFABRICS;
}

// The hardware tree as we show it, before merging single-child runs.
struct HwNode {
  std::vector<hwloc_obj_t> objects;  // one, or a merged run from top to bottom
  std::vector<std::size_t> children;
};

void collect_io(hwloc_obj_t io, std::vector<hwloc_obj_t>& out) {
  // Depth-first through bridges and PCI devices down to the OS devices worth showing.
  for (hwloc_obj_t c = io; c; c = c->next_sibling) {
    if (keep_os_device(c)) out.push_back(c);
    collect_io(c->io_first_child, out);
  }
}

class Builder {
 public:
  std::vector<HwNode> nodes;

  // Children of `o` as shown: normal children, NUMA nodes (one NUMA node becomes a level
  // above the normal children; several hang beside them) and the OS devices below.
  std::size_t build(hwloc_obj_t o, bool is_root) {
    const std::size_t me = nodes.size();
    nodes.push_back({{o}, {}});
    std::vector<hwloc_obj_t> memory;
    for (hwloc_obj_t m = o->memory_first_child; m; m = m->next_sibling)
      if (m->type == HWLOC_OBJ_NUMANODE) memory.push_back(m);
    std::size_t holder = me;  // where the normal children go
    if (memory.size() == 1 && o->arity > 0) {
      holder = nodes.size();
      nodes.push_back({{memory[0]}, {}});
      nodes[me].children.push_back(holder);
    } else {
      for (auto m : memory) {
        const auto id = nodes.size();
        nodes.push_back({{m}, {}});
        nodes[me].children.push_back(id);
      }
    }
    for (unsigned i = 0; i < o->arity; ++i) {
      const auto c = build(o->children[i], false);
      nodes[holder].children.push_back(c);
    }
    std::vector<hwloc_obj_t> devices;
    collect_io(o->io_first_child, devices);
    for (auto d : devices) {
      const auto id = nodes.size();
      nodes.push_back({{d}, {}});
      nodes[me].children.push_back(id);
    }
    (void)is_root;
    return me;
  }

  // Runs of single-child levels become one element (paper 004). The root stays: it is the node.
  void merge_runs(std::size_t n) {
    for (auto c : nodes[n].children) {
      while (nodes[c].children.size() == 1 && nodes[nodes[c].children[0]].objects[0]->type != HWLOC_OBJ_OS_DEVICE) {
        const auto only = nodes[c].children[0];
        for (auto o : nodes[only].objects) nodes[c].objects.push_back(o);
        nodes[c].children = nodes[only].children;
      }
      merge_runs(c);
    }
  }
};

// A merged run is named after its first object that is not a cache (a core with its
// private caches is a "core"); a run of caches only is named after its top cache.
hwloc_obj_t representative(const std::vector<hwloc_obj_t>& run) {
  for (auto o : run)
    if (!is_cache(o)) return o;
  return run.front();
}

std::string name_of(hwloc_obj_t o) {
  if (o->type == HWLOC_OBJ_OS_DEVICE && o->name) return o->name;
  return class_of(o) + " " + std::to_string(o->logical_index);
}

}  // namespace

Topology Topology::local() {
  return Topology(load([](hwloc_topology_t) { return 0; }));
}

Topology Topology::synthetic(const std::string& description) {
  return Topology(load([&](hwloc_topology_t t) { return hwloc_topology_set_synthetic(t, description.c_str()); }));
}

Topology Topology::from_xml(const std::string& path) {
  return Topology(load([&](hwloc_topology_t t) { return hwloc_topology_set_xml(t, path.c_str()); }));
}

Topology::Topology(Topology&& o) noexcept : topology_(std::exchange(o.topology_, nullptr)) {}
Topology& Topology::operator=(Topology&& o) noexcept {
  std::swap(topology_, o.topology_);
  return *this;
}
Topology::~Topology() {
  if (topology_) hwloc_topology_destroy(topology_);
}

bool Topology::is_this_system() const { return hwloc_topology_is_thissystem(topology_) == 1; }

unsigned Topology::pu_count() const {
  return static_cast<unsigned>(hwloc_get_nbobjs_by_type(topology_, HWLOC_OBJ_PU));
}

std::string Topology::current_binding() const {
  auto set = make_bitmap();
  if (!is_this_system() || hwloc_get_cpubind(topology_, set.get(), HWLOC_CPUBIND_PROCESS) != 0)
    hwloc_bitmap_copy(set.get(), hwloc_topology_get_topology_cpuset(topology_));
  char* text = nullptr;
  hwloc_bitmap_list_asprintf(&text, set.get());
  std::string out = text ? text : "";
  std::free(text);
  return out;
}

HardwareLevels::~HardwareLevels() = default;

HardwareLevels add_hardware_levels(SingleNodeTree& tree, std::uint32_t node, const Topology& topology) {
  Builder b;
  const auto root = b.build(hwloc_get_root_obj(topology.get()), true);
  b.merge_runs(root);
  HardwareLevels levels;
  levels.node_ = node;
  levels.all_cpus_ = make_bitmap(hwloc_topology_get_topology_cpuset(topology.get()));
  struct Item {
    std::size_t hw;
    std::uint32_t parent_element;
    std::uint32_t parent_slot;
  };
  std::vector<Item> stack;
  for (auto it = b.nodes[root].children.rbegin(); it != b.nodes[root].children.rend(); ++it)
    stack.push_back({*it, node, kTop});
  while (!stack.empty()) {
    const Item item = stack.back();
    stack.pop_back();
    const auto& hw = b.nodes[item.hw];
    const auto rep = representative(hw.objects);
    const auto element = tree.add_child(item.parent_element, Kind::Node, class_of(rep), name_of(rep));
    if (hw.objects.size() > 1) {
      std::string run;
      for (auto o : hw.objects) run += (run.empty() ? "" : "+") + class_of(o);
      tree.set_property(element, "levels", run);
    }
    const auto slot = static_cast<std::uint32_t>(levels.elements_.size());
    levels.elements_.push_back(element);
    levels.parent_.push_back(item.parent_slot);
    const auto bottom = hw.objects.back();
    levels.cpus_.push_back(bottom->cpuset ? make_bitmap(bottom->cpuset) : Bitmap(nullptr, bitmap_free));
    for (auto it = hw.children.rbegin(); it != hw.children.rend(); ++it) stack.push_back({*it, element, slot});
  }
  return levels;
}

std::uint32_t HardwareLevels::attach_point(std::string_view cpus) const {
  auto want = make_bitmap();
  if (hwloc_bitmap_list_sscanf(want.get(), std::string(cpus).c_str()) != 0)
    throw std::invalid_argument("bad CPU list '" + std::string(cpus) + "'");
  // Unbound (or bound to everything): the process belongs to the node, not to whichever
  // single package happens to cover all CPUs.
  if (hwloc_bitmap_iszero(want.get()) || (all_cpus_ && hwloc_bitmap_isincluded(all_cpus_.get(), want.get())))
    return node_;
  // Elements are in preorder, so the last covering element is the deepest one on the path.
  std::uint32_t best = node_;
  std::uint32_t best_slot = kTop;
  for (std::uint32_t s = 0; s < elements_.size(); ++s) {
    if (!cpus_[s] || !hwloc_bitmap_isincluded(want.get(), cpus_[s].get())) continue;
    if (parent_[s] != best_slot) continue;  // must extend the current path
    best = elements_[s];
    best_slot = s;
  }
  return best;
}

SingleNodeTree local_view(const Topology& topology, std::string_view host, std::string_view process_name,
                      std::uint32_t threads, std::string_view cpus) {
  SingleNodeTree tree;
  const auto machine = tree.add_root(Kind::Node, "machine", "machine");
  const auto node = tree.add_child(machine, Kind::Node, "node", host);
  const auto levels = add_hardware_levels(tree, node, topology);
  // A binding given is checked (an unknown PU is an error); the process's own is as hwloc says.
  const std::string binding = cpus.empty() ? topology.current_binding() : checked_cpu_list(cpus, topology);
  const auto at = levels.attach_point(binding);
  const auto process = tree.add_child(at, Kind::LocationGroup, "process", process_name);
  for (std::uint32_t t = 0; t < threads; ++t)
    tree.add_child(process, Kind::Location, "thread", "thread " + std::to_string(t));
  return tree;
}

}  // namespace cubescale::systree
