#include "register.hpp"

PYBIND11_MODULE(_core, m) {
  m.doc() = "cubescale C++ core: system trees, CUBE4 reports, aggregation";
  cubescale::bindings::register_errors(m);
  cubescale::bindings::register_systree(m);
  cubescale::bindings::register_cube(m);
  cubescale::bindings::register_assemble(m);
  cubescale::bindings::register_distributed(m);
}
