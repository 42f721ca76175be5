#pragma once
// What MPI matches a message by: sender, receiver, communicator and tag (the k-th send from
// A to B on (communicator, tag) is the k-th such receive of B; MPI's non-overtaking rule).
// One key and hash for every matcher (wait states, Late Receiver's pairs, sync points).
#include <cstddef>
#include <cstdint>
#include <functional>

namespace cubescale::analysis {

struct MessageKey {
  std::uint32_t from, to, communicator, tag;
  bool operator==(const MessageKey&) const = default;
};

struct MessageKeyHash {
  std::size_t operator()(const MessageKey& k) const {
    const std::uint64_t a = (std::uint64_t(k.from) << 32) | k.to, b = (std::uint64_t(k.communicator) << 32) | k.tag;
    return std::hash<std::uint64_t>()(a * 0x9e3779b97f4a7c15ull ^ b);
  }
};

}  // namespace cubescale::analysis
