// The generic pieces of cubescale's collective algorithms (collective/spanning_tree.hpp); the
// mpi4py driver python/cubescale/parallel/collective.py moves bytes along these links.
#include <pybind11/stl.h>

#include "cubescale/collective/spanning_tree.hpp"
#include "register.hpp"

namespace py = pybind11;

namespace cubescale::bindings {

void register_collective(py::module_& m) {
  m.def(
      "binary_tree_links",
      [](int rank, int size) {
        const auto l = collective::binary_tree_links(rank, size);
        return py::make_tuple(l.parent, l.children);
      },
      py::arg("rank"), py::arg("size"),
      "(parent, children) of `rank` in the binary spanning tree over [0, size) rooted at 0 whose subtrees are "
      "contiguous rank ranges (parent -1 at the root, children in rank order).");
  m.def(
      "fnv1a", [](py::bytes data) { return collective::fnv1a(std::string_view(data)); }, py::arg("data"),
      "FNV-1a hash of bytes: the same value on every machine (communicator splits by a key's hash).");
}

}  // namespace cubescale::bindings
