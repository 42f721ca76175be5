#pragma once
// Hardware levels below a node, from hwloc (paper 004): packages, NUMA nodes, caches, cores,
// PUs and GPU / network OS devices. Runs of single-child levels become one element (e.g.
// L2 + L1d + L1i + core), PCI bridges and PCI devices are skipped so that OS devices hang
// under the nearest CPU-side object. A process hangs under the smallest hardware element
// whose CPUs cover its binding; its threads stay under it, as CUBE and OTF2 require.
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "cubescale/systree/single.hpp"

struct hwloc_topology;
struct hwloc_bitmap_s;

namespace cubescale::systree {

class Topology {
 public:
  // The machine this process runs on.
  static Topology local();
  // A synthetic machine in hwloc's syntax, e.g. "pack:2 l3:1 core:4 pu:2".
  static Topology synthetic(const std::string& description);
  // An XML topology exported by lstopo or hwloc_topology_export_xml.
  static Topology from_xml(const std::string& path);

  Topology(Topology&&) noexcept;
  Topology& operator=(Topology&&) noexcept;
  ~Topology();
  hwloc_topology* get() const { return topology_; }
  bool is_this_system() const;
  // The CPUs this process is bound to, in hwloc list syntax ("0-3,8"); the whole machine
  // when unbound.
  std::string current_binding() const;
  unsigned pu_count() const;

 private:
  explicit Topology(hwloc_topology* t) : topology_(t) {}
  hwloc_topology* topology_ = nullptr;
};

// The hardware elements added below one node, with their CPUs, to place processes.
class HardwareLevels {
 public:
  HardwareLevels() = default;
  HardwareLevels(HardwareLevels&&) noexcept = default;
  HardwareLevels& operator=(HardwareLevels&&) noexcept = default;
  ~HardwareLevels();
  std::uint32_t node() const { return node_; }
  const std::vector<std::uint32_t>& elements() const { return elements_; }
  // Element under which something bound to `cpus` (hwloc list syntax) hangs: the deepest
  // hardware element whose CPUs include them all; the node when unbound or spread wide.
  std::uint32_t attach_point(std::string_view cpus) const;

 private:
  friend HardwareLevels add_hardware_levels(SingleNodeTree&, std::uint32_t, const Topology&);
  std::uint32_t node_ = 0;
  std::vector<std::uint32_t> elements_;  // preorder
  std::vector<std::uint32_t> parent_;    // index into elements_, or kTop for the node
  std::vector<std::unique_ptr<hwloc_bitmap_s, void (*)(hwloc_bitmap_s*)>> cpus_;  // null: no CPUs (I/O)
  std::unique_ptr<hwloc_bitmap_s, void (*)(hwloc_bitmap_s*)> all_cpus_{nullptr, nullptr};
};

// Adds the hardware levels of `topology` as children of element `node` of `tree`.
HardwareLevels add_hardware_levels(SingleNodeTree& tree, std::uint32_t node, const Topology& topology);

// A process's own single-node view: machine > node (host) > hardware levels > process >
// threads, the process placed by its binding (`cpus`; empty: this process's binding).
SingleNodeTree local_view(const Topology& topology, std::string_view host, std::string_view process_name,
                      std::uint32_t threads, std::string_view cpus = {});

}  // namespace cubescale::systree
