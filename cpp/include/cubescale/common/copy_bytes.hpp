#pragma once
// memcpy without the slow case of AMD Zen's string copy.
//
// Why: glibc copies blocks of some KiB with `rep movsb`, which on AMD Zen cores runs ~13x
// slower when the destination lies 1-63 bytes past the source's offset within a 4 KiB page
// (286 KB: 7 us -> 94 us, measured on this project's machine). Rows of values are copied from
// archive bytes at arbitrary offsets, so some rows of a report hit that window; a plain vector
// loop has no such case and is as fast as memcpy on data in cache.
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace cubescale {

// Copies n bytes from src to dst (non-overlapping), as memcpy does.
void copy_bytes(void* dst, const void* src, std::size_t n);

// Whether memcpy(dst, src, n) would risk the slow case (exposed for tests).
inline bool near_alias(const void* dst, const void* src, std::size_t n) {
  const auto distance = (reinterpret_cast<std::uintptr_t>(dst) - reinterpret_cast<std::uintptr_t>(src)) & 4095;
  return n >= 2048 && distance != 0 && distance < 64;
}

}  // namespace cubescale
