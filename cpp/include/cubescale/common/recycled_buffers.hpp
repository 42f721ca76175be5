#pragma once
// A process-wide store of freed mid-sized buffers, handed out again zeroed.
//
// Why: a fresh page from the kernel (fault, zeroing, memory-cgroup charge, and the unmap when it
// is returned) costs microseconds, more than decoding the values it holds. glibc returns the
// heap top to the kernel as soon as a report is freed, so a notebook or the CLI opening report
// after report paid that for every page of every metric again: 2.8 of 3.8 ms for a report of
// 80 metrics of 45 KB. Recycled pages only need a memset.
//
// Buffers are page-aligned (see copy_bytes.hpp for why that matters to copies into them).
//
// Bounded: it holds at most kMaxHeldBytes; buffers outside [kMinBytes, kMaxBytes] are never
// held (small ones come from malloc's own free lists, huge ones are mapped with huge pages).
#include <cstddef>
#include <cstdint>

namespace cubescale {

class RecycledBuffers {
 public:
  static constexpr std::size_t kMinBytes = std::size_t(16) << 10;
  static constexpr std::size_t kMaxBytes = std::size_t(4) << 20;
  static constexpr std::size_t kMaxHeldBytes = std::size_t(64) << 20;

  // The store shared by the whole process (thread-safe).
  static RecycledBuffers& shared();

  // A zeroed buffer of exactly `capacity(bytes)` bytes (recycled or newly allocated), or nullptr
  // when allocation fails. Release it with give_back(p, bytes).
  std::uint8_t* take_zeroed(std::size_t bytes) { return take(bytes, true); }
  // The same with unspecified contents, for callers that overwrite it anyway.
  std::uint8_t* take_for_overwrite(std::size_t bytes) { return take(bytes, false); }
  // Keeps `p` for reuse when there is room, frees it otherwise.
  void give_back(std::uint8_t* p, std::size_t bytes) noexcept;
  // Bytes held for reuse now (tests).
  std::size_t held_bytes() const;
  // Whether take_zeroed/give_back serve this size (else the caller uses malloc or mmap).
  static bool serves(std::size_t bytes) { return bytes >= kMinBytes && bytes < kMaxBytes; }
  // Sizes are rounded up to whole pages, so that reports of slightly different shapes share.
  static std::size_t capacity(std::size_t bytes) { return (bytes + kPage - 1) / kPage * kPage; }

 private:
  static constexpr std::size_t kPage = 4096;
  RecycledBuffers() = default;
  std::uint8_t* take(std::size_t bytes, bool zeroed);
  struct Impl;
  Impl& impl() const;
};

}  // namespace cubescale
