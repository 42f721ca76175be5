#pragma once
// The generic pieces every collective algorithm of cubescale shares (system tree build,
// definition unification, collation). No MPI here: a driver (mpi4py in
// python/cubescale/parallel/collective.py, or a simulation) moves the bytes along these links.
//
// A binary spanning tree over ranks [0, size) rooted at 0 in which every subtree is a
// contiguous range of ranks beginning with its root (root, then left range, then right
// range). A reduction that combines own, left, right in that order therefore sees the inputs
// in rank order, as a sequential fold would, and has ceil(log2(size + 1)) levels.
#include <cstdint>
#include <string_view>
#include <vector>

namespace cubescale::collective {

struct TreeLinks {
  int parent = -1;            // -1 at the root
  std::vector<int> children;  // at most two, in rank order
};
TreeLinks binary_tree_links(int rank, int size);

// FNV-1a over bytes: the same value on every machine (communicator splits by a key's hash).
std::uint64_t fnv1a(std::string_view bytes);

}  // namespace cubescale::collective
