#pragma once
// Loads and stores of values that may sit at any byte offset (packed records such as
// TAU_ATOMIC or SCALE_FUNC terms): memcpy, which compilers turn into plain moves.
#include <cstring>

namespace cubescale {

template <class T>
T load_unaligned(const void* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

template <class T>
void store_unaligned(void* p, T v) {
  std::memcpy(p, &v, sizeof v);
}

}  // namespace cubescale
