#pragma once
// One register_<concept> function per concept (the boost-histogram way); module.cpp calls them.
#include <pybind11/pybind11.h>

namespace cubescale::bindings {
void register_errors(pybind11::module_& m);
void register_systree(pybind11::module_& m);
void register_cube(pybind11::module_& m);
void register_assemble(pybind11::module_& m);
void register_distributed(pybind11::module_& m);
}  // namespace cubescale::bindings
