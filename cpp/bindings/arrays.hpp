#pragma once
// NumPy arrays from the core's vectors, shared by the register_<concept> files.
#include <pybind11/numpy.h>

#include <vector>

namespace cubescale::bindings {

// A 1-D array holding a copy of `v` (the vector is a temporary of the core's result).
template <typename T>
pybind11::array_t<T> to_array(const std::vector<T>& v) {
  return pybind11::array_t<T>(static_cast<pybind11::ssize_t>(v.size()), v.data());
}

}  // namespace cubescale::bindings
