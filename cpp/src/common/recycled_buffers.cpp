#include "cubescale/common/recycled_buffers.hpp"

#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>

namespace cubescale {

struct RecycledBuffers::Impl {
  mutable std::mutex mutex;
  std::multimap<std::size_t, std::uint8_t*> held;  // capacity -> buffer
  std::size_t held_bytes = 0;
};

RecycledBuffers& RecycledBuffers::shared() {
  // Never destroyed: buffers may be given back by static destructors that run after ours.
  static auto* store = new RecycledBuffers();
  return *store;
}

RecycledBuffers::Impl& RecycledBuffers::impl() const {
  static auto* state = new Impl();  // reachable from here, so LeakSanitizer counts nothing held
  return *state;
}

std::uint8_t* RecycledBuffers::take(std::size_t bytes, bool zeroed) {
  const auto size = capacity(bytes);
  auto& s = impl();
  std::uint8_t* p = nullptr;
  {
    std::lock_guard lock(s.mutex);
    const auto it = s.held.find(size);
    if (it != s.held.end()) {
      p = it->second;
      s.held.erase(it);
      s.held_bytes -= size;
    }
  }
  // Page-aligned: then a read from a file (whose pages start at offset 0) lands at the same
  // page offset. A destination a few bytes past its source's page offset makes the string
  // copy of AMD Zen cores ~10x slower, in the kernel's copy for pread as in memcpy.
  if (!p) p = static_cast<std::uint8_t*>(std::aligned_alloc(kPage, size));
  if (p && zeroed) std::memset(p, 0, size);
  return p;
}

void RecycledBuffers::give_back(std::uint8_t* p, std::size_t bytes) noexcept {
  if (!p) return;
  const auto size = capacity(bytes);
  auto& s = impl();
  {
    std::lock_guard lock(s.mutex);
    if (s.held_bytes + size <= kMaxHeldBytes) {
      try {
        s.held.emplace(size, p);
        s.held_bytes += size;
        return;
      } catch (...) {  // no memory for the map node: free the buffer instead
      }
    }
  }
  std::free(p);
}

std::size_t RecycledBuffers::held_bytes() const {
  auto& s = impl();
  std::lock_guard lock(s.mutex);
  return s.held_bytes;
}

}  // namespace cubescale
