// cubescale._core: one submodule per concept of the C++ core, as cpp/include/cubescale/<concept>/.
// Types are registered before the functions whose signatures name them, so that docstrings and
// the stubs in python/cubescale/_core/ show Python names.
#include "register.hpp"

namespace py = pybind11;

PYBIND11_MODULE(_core, m) {
  m.doc() = "cubescale C++ core: one submodule per concept (systree, cube, distributed, collective, profile, trace).";
  cubescale::bindings::register_errors(m);
  auto systree = m.def_submodule(
      "systree", "System trees: single-node and sequence form, names, shapes, hwloc hardware levels (the Score-P system-description and Vampir hardware-levels papers).");
  cubescale::bindings::register_systree(systree);
  auto cube = m.def_submodule(
      "cube", "CUBE4 reports: data types, definitions, lazily loaded values, aggregation, reader and writer.");
  cubescale::bindings::register_cube_definitions(cube);
  cubescale::bindings::register_cube(cube);
  cubescale::bindings::register_cube_builder(cube);
  cubescale::bindings::register_panes(cube);
  auto distributed = m.def_submodule(
      "distributed", "Kernels of the distributed system tree build and its simulation (the Score-P system-description paper, section 4).");
  cubescale::bindings::register_distributed(distributed);
  auto collective = m.def_submodule(
      "collective", "Generic pieces of the collective algorithms: spanning-tree links and hashing.");
  cubescale::bindings::register_collective(collective);
  auto profile = m.def_submodule(
      "profile", "Local call-path profiles, their unification and collation (the CUBE collation paper and the Scalasca architecture paper).");
  cubescale::bindings::register_profile(profile);
  auto trace = m.def_submodule(
      "trace", "OTF2 traces: definitions, streaming event reader, events as columns, trace -> profile (the Scalasca architecture paper).");
  cubescale::bindings::register_trace(trace);
  auto threads = m.def_submodule(
      "threads", "Thread aggregation of reports and local profiles: sum, set, key, calltree, value (the Score-P thread-aggregation paper).");
  cubescale::bindings::register_threads(threads);
  auto timeline = m.def_submodule(
      "timeline", "Metric timelines and aggregate expressions over the system tree, evaluated in stages (the Vampir hardware-levels paper).");
  cubescale::bindings::register_timeline(timeline);
  auto measure = m.def_submodule(
      "measure", "The measurement runtime: per-thread call-path recording, manual regions, the profiling hook.");
  cubescale::bindings::register_measure(measure);
  cubescale::bindings::register_analysis(m.def_submodule("analysis", "Wait-state analysis of MPI traces: Scalasca's patterns (the Scalasca architecture paper, 5.2)."));
  cubescale::bindings::register_algebra(m.def_submodule("algebra", "Report algebra: unification, diff, merge, mean, min, max, cut (the Scalasca architecture paper, section 6)."));
  cubescale::bindings::register_stat(m.def_submodule("stat", "Flat profiles, statistics across locations and trace-size scoring (CubeLib's cube_stat, Score-P's scorep-score)."));
}
