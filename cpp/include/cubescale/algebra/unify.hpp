#pragma once
// Unification of several reports for report algebra (paper 002, section 6; the semantics of
// CubeLib's cube_diff, cube_merge and cube_mean): before values can be combined, every input's
// metrics, call paths and locations need a place in one set of definitions.
//
// * Metrics are matched by unique name wherever they sit in the metric tree: a metric the
//   first input that has it places below one parent keeps that place when a later input has
//   it below another (a Score-P profile against a Scalasca summary). A metric only some
//   inputs have is kept, under its (matched) parent.
// * Regions are matched by (name, module, begin line, end line), as CubeLib compares them.
// * Call paths are matched from the roots down: the same region, parameters and attributes
//   below the same (matched) parent. A call path only some inputs have keeps its subtree.
// * System trees are matched by structure (the same kinds, classes and nesting; names such as
//   host names may differ between runs): location i of every input is location i of the
//   result. Otherwise they are collapsed to processes, as Cube's `-C` does: one virtual
//   machine and node, processes matched by rank, threads by rank inside their process. Or, on
//   request, reduced as Cube's `-c` does: machine and node levels kept (the levels between them
//   dropped), nodes matched by name, processes by rank and name inside their node.
// * Cartesian topologies of every input are carried to the result's locations (the first
//   input's where two have one of the same name); those whose coordinates name no locations
//   (process or node coordinates) are dropped.
//
// The unified trees keep the first input's order; what later inputs add follows, each new
// element after its matched siblings. Every map is a vector indexed by the input's element,
// so a combination is one pass over the rows (combine.hpp).
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "cubescale/cube/definitions.hpp"

namespace cubescale::algebra {

inline constexpr std::uint32_t kAbsent = 0xffffffffu;

enum class SystemMatch : std::uint8_t {
  Auto,       // Same when every input has one layout, else Processes
  Same,       // the layouts must be equal (invalid_argument otherwise)
  Processes,  // collapsed to processes and threads, matched by rank (Cube's -C)
  Reduce,     // machine and node levels kept, nodes matched by name (Cube's -c)
};
// "auto", "same", "processes", "reduce"; nullopt for anything else.
std::optional<SystemMatch> parse_system_match(std::string_view name);

// Where one input's elements are in the unified definitions.
struct InputMap {
  std::vector<std::uint32_t> metrics;    // input metric -> unified metric
  std::vector<std::uint32_t> cnodes;     // input cnode -> unified cnode
  std::vector<std::uint32_t> locations;  // input location -> unified location
  std::vector<std::uint32_t> metric_of;  // unified metric -> input metric, kAbsent if none
  bool identity_locations = false;       // locations[l] == l for every l (same layout)
};

struct Unified {
  cube::Definitions defs;
  std::vector<InputMap> inputs;
  bool collapsed = false;  // system trees collapsed to processes
  bool reduced = false;    // system trees reduced to machines and nodes
};

// Throws std::invalid_argument naming what cannot be reconciled: different system layouts with
// SystemMatch::Same, and (collapsing) two processes of one rank in an input, two threads of one
// rank in a process, or one rank of different classes.
Unified unify(const std::vector<const cube::Definitions*>& inputs, SystemMatch system = SystemMatch::Auto);

// The call trees alone, unified as unify() does: per input, each call path's place in the
// union (numbered in order of discovery, not in preorder), and the union's size.
struct CallPathUnion {
  std::vector<std::vector<std::uint32_t>> cnodes;  // per input: input cnode -> union call path
  std::size_t size = 0;
};
CallPathUnion unify_call_paths(const std::vector<const cube::Definitions*>& inputs);

// Whether two system trees have the same layout: kinds, classes and nesting, element by element.
bool same_layout(const cube::Definitions& a, const cube::Definitions& b);

}  // namespace cubescale::algebra
