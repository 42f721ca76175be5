#include "cubescale/collective/spanning_tree.hpp"

#include <stdexcept>

namespace cubescale::collective {

TreeLinks binary_tree_links(int rank, int size) {
  if (size <= 0 || rank < 0 || rank >= size) throw std::out_of_range("rank outside the spanning tree");
  TreeLinks links;
  int lo = 0, hi = size;
  for (;;) {
    const int rest = hi - lo - 1;
    const int mid = lo + 1 + (rest + 1) / 2;  // left range [lo+1, mid), right range [mid, hi)
    if (rank == lo) {
      if (rest > 0) links.children.push_back(lo + 1);
      if (mid < hi) links.children.push_back(mid);
      return links;
    }
    links.parent = lo;
    if (rank < mid) {
      lo = lo + 1;
      hi = mid;
    } else {
      lo = mid;
    }
  }
}

std::uint64_t fnv1a(std::string_view bytes) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : bytes) h = (h ^ c) * 0x100000001b3ull;
  return h;
}

}  // namespace cubescale::collective
