#pragma once
// The global definitions of an OTF2 trace (strings resolved), as the trace reader hands them
// out: everything that names what events refer to. Events carry OTF2 ids; these tables map
// ids to dense indices (the position of a definition in its vector), so that per-event work
// is an array access, never a hash lookup.
#include <cstdint>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace cubescale::trace {

inline constexpr std::uint32_t kNone = 0xffffffffu;

struct Clock {
  std::uint64_t resolution = 1;  // ticks per second
  std::uint64_t offset = 0;      // global offset: timestamp of the trace's start
  std::uint64_t length = 0;      // ticks from offset to the last event
};

struct SystemTreeNode {
  std::uint32_t id = 0;
  std::string name, class_name;
  std::uint32_t parent = kNone;  // index into Definitions::system_tree_nodes
  std::vector<std::string> domains;  // "machine", "shared_memory", "numa", ...
  std::vector<std::pair<std::string, std::string>> properties;
};

struct LocationGroup {
  std::uint32_t id = 0;
  std::string name;
  std::string type;  // "process", "accelerator", "unknown"
  std::uint32_t system_tree_node = kNone;  // index
  std::uint32_t creator = kNone;           // index of the creating location group
};

struct Location {
  std::uint64_t id = 0;
  std::string name;
  std::string type;  // "cpu_thread", "accelerator_stream", "metric", "unknown"
  std::uint64_t events = 0;  // as the definitions announce
  std::uint32_t group = kNone;  // index
};

struct Region {
  std::uint32_t id = 0;
  std::string name, canonical_name, description, file;
  std::string role, paradigm;  // "function", "barrier", ... / "mpi", "openmp", "cuda", ...
  std::uint32_t begin_line = 0, end_line = 0;
};

struct Group {
  std::uint32_t id = 0;
  std::string name, type, paradigm;
  std::vector<std::uint64_t> members;  // ranks (comm groups) or location ids (location groups)
};

struct Communicator {
  std::uint32_t id = 0;
  std::string name;
  std::uint32_t group = kNone;   // index
  std::uint32_t parent = kNone;  // index (an inter-communicator: its common communicator)
  // An inter-communicator (OTF2 3's InterComm definition): `group` is its group A,
  // `remote_group` its group B (kNone: undefined); a rank's peers on it are ranks of the other
  // group.
  bool inter = false;
  std::uint32_t remote_group = kNone;
};

struct MetricMember {
  std::uint32_t id = 0;
  std::string name, description, unit;
  std::string metric_type;  // "papi", "rusage", "user", "other"
  std::string mode;         // "accumulated_start", "absolute_point", ...
  std::string value_type;   // "int64", "uint64", "double"
  bool accumulated = false;  // mode is ACCUMULATED_*: a profile sums deltas
  std::int64_t exponent = 0;
  std::uint8_t base = 10;
};

// A metric class (what a Metric event of synchronous counters refers to) or a metric
// instance (an asynchronous class recorded by one location about some scope).
struct Metric {
  std::uint32_t id = 0;
  bool instance = false;
  std::vector<std::uint32_t> members;  // indices into metric_members
  std::string occurrence;              // "synchronous_strict", "synchronous", "asynchronous"
  std::string recorder_kind;           // "abstract", "cpu", "gpu", "unknown"
  std::uint32_t metric_class = kNone;  // instances: index of their class
  std::uint64_t recorder = 0;          // instances: location id
  // Instances: what the values are about (paper 004: a package's energy is the package's, not
  // the recording thread's): "location", "location_group", "system_tree_node", "group".
  std::string scope;
  std::uint64_t scope_ref = 0;  // the OTF2 id of that definition
};

struct Attribute {
  std::uint32_t id = 0;
  std::string name, description, type;
};

struct Parameter {
  std::uint32_t id = 0;
  std::string name, type;  // "string", "int64", "uint64"
};

struct CallingContext {
  std::uint32_t id = 0;
  std::uint32_t region = kNone;  // index
  std::uint32_t parent = kNone;  // index
};

// OTF2 ids -> indices: a vector while ids are dense enough, a hash map otherwise.
class IdIndex {
 public:
  void add(std::uint64_t id, std::uint32_t index);
  std::uint32_t find(std::uint64_t id) const {
    if (id < dense_.size()) return dense_[id];
    if (sparse_.empty()) return kNone;
    auto it = sparse_.find(id);
    return it == sparse_.end() ? kNone : it->second;
  }

 private:
  std::vector<std::uint32_t> dense_;
  std::unordered_map<std::uint64_t, std::uint32_t> sparse_;
};

struct Definitions {
  Clock clock;
  std::vector<std::string> strings;
  std::vector<SystemTreeNode> system_tree_nodes;
  std::vector<LocationGroup> location_groups;
  std::vector<Location> locations;
  std::vector<Region> regions;
  std::vector<Group> groups;
  std::vector<Communicator> communicators;
  std::vector<MetricMember> metric_members;
  std::vector<Metric> metrics;
  std::vector<Attribute> attributes;
  std::vector<Parameter> parameters;
  std::vector<CallingContext> calling_contexts;
  std::size_t rma_windows = 0;  // RMA window definitions (one-sided MPI; Score-P's CUDA/OpenCL copies)
  std::vector<std::string> warnings;  // tolerated inconsistencies (undefined references)
  IdIndex string_index, node_index, location_group_index, location_index, region_index, group_index,
      communicator_index, member_index, metric_index, attribute_index, parameter_index, context_index;

  // Dense index of a location id, kNone if undefined.
  std::uint32_t location(std::uint64_t id) const { return location_index.find(id); }
};

// Lower-case names of OTF2 enumerations (numbers as text for values OTF2 may add later).
std::string region_role_name(unsigned role);
std::string paradigm_name(unsigned paradigm);
std::string collective_op_name(unsigned op);

// The region Score-P (7 and later) defines for the program itself, which its PROGRAM_BEGIN and
// PROGRAM_END open and close: role artificial, paradigm measurement system, named after the
// executable `program` without its path, canonically after the whole `command` (the executable
// with its arguments, separated by spaces). The first such region of that canonical name, else of
// that name (as Scalasca's trace reader finds it, without its failure where there is none); kNone.
std::uint32_t program_region(const Definitions& defs, const std::string& program, const std::string& command);

}  // namespace cubescale::trace
