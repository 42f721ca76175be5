#pragma once
// One register_<concept> function per concept (the boost-histogram way); module.cpp gives each
// its submodule of cubescale._core (register_errors works on the top module).
#include <pybind11/pybind11.h>

namespace cubescale::bindings {
void register_errors(pybind11::module_& m);
void register_systree(pybind11::module_& m);
void register_cube_definitions(pybind11::module_& m);
void register_cube(pybind11::module_& m);
void register_cube_builder(pybind11::module_& m);  // after register_cube: returns Report
void register_panes(pybind11::module_& m);
void register_distributed(pybind11::module_& m);
void register_collective(pybind11::module_& m);
void register_profile(pybind11::module_& m);  // after register_cube: returns Report
void register_trace(pybind11::module_& m);    // after register_profile: returns LocalProfile
void register_threads(pybind11::module_& m);  // after register_profile: takes LocalProfile
void register_timeline(pybind11::module_& m);
void register_measure(pybind11::module_& m);  // after register_profile: returns LocalProfile
void register_analysis(pybind11::module_ m);  // after register_trace (takes Trace); a module handle: one line in module.cpp
void register_algebra(pybind11::module_ m);  // after register_cube: returns Report; a handle, so by value
}  // namespace cubescale::bindings
