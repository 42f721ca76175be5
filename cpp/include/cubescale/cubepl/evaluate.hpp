#pragma once
// Evaluates CubePL programs over whole arrays (see value.hpp). Two kinds of program:
//  * <cubeplinit>: run once per report, statement by statement on scalars, with the report's
//    definitions as arrays (${cube::#callpaths}, ${cube::callpath::calleeid}[i],
//    ${cube::region::name}[r] ...); variables declared global(name) outlive it and are seen by
//    every metric's <cubepl> (Score-P's spec builds per-call-path masks this way);
//  * <cubepl>: the value at every (call path, location) at once. ${calculation::callpath::id}
//    and ${calculation::region::...} vary by call path, metric::m(...) by call path and
//    location. An `if` whose condition varies is if-converted: both branches run on copies of
//    the variables, which are then merged element-wise by the condition.
// The evaluator never loops forever: statements count against a budget that grows with the
// report, and array indices are bounded. What the subset cannot do (a `while` or `return`
// under a varying condition, assigning a global from <cubepl>, metric values in
// <cubeplinit>) is an Error naming the construct.
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "cubescale/cubepl/ast.hpp"
#include "cubescale/cubepl/value.hpp"

namespace cubescale::cubepl {

struct RegionText {
  std::string name, mangled_name, mod, paradigm, role, url, description;
};

// What programs can read about a report. Flavour passed to `metric` is never Same.
struct Context {
  Dims dims;
  std::vector<std::uint32_t> cnode_region;  // region index of each call path
  std::vector<std::uint32_t> cnode_parent;  // parent call path, 0xffffffff for roots
  std::vector<RegionText> regions;
  std::size_t metric_count = 0, location_group_count = 0;
  std::size_t metric_index = 0;  // ${calculation::metric::id}
  // Values of a metric as cnodes x locations doubles; nullptr for a metric the report does not
  // have (CubeLib reads such a metric as 0).
  std::function<std::shared_ptr<const std::vector<double>>(const std::string& name, Flavour flavour)> metric;
};

// Variables declared global(...) by <cubeplinit> programs, by name; element i of ${x} is [i].
using Globals = std::map<std::string, std::vector<Value>, std::less<>>;

// Runs a <cubeplinit> program; its global variables end up in `globals`.
void run_init(const Program& program, const Context& context, Globals& globals);

// The value of a <cubepl> program at every (call path, location), row-major; `same` is the
// flavour that metric::m() and metric::m(*) read (Inclusive or Exclusive).
std::vector<double> evaluate(const Program& program, const Context& context, const Globals& globals, Flavour same);

}  // namespace cubescale::cubepl
