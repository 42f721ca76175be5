#include "register.hpp"

namespace cubescale::bindings {

// Distributed system tree kernels: filled in by the distributed concept (issue 4).
void register_distributed(pybind11::module_& m) { (void)m; }

}  // namespace cubescale::bindings
