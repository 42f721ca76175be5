#pragma once
// A stable sort of small keys by a few 32-bit fields, for the millions of records an analysis
// orders by communicator and instance, or by location and event: a least-significant-digit
// radix sort byte by byte that skips the bytes where all keys agree (most of them: few
// communicators, positions that share their high bytes). A comparison sort through an index
// into the 56-byte records took most of a step (cache misses at every comparison); this reads
// the keys once per byte that differs.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <vector>

namespace cubescale {

// Sorts `keys` stably by (field(k, 0), field(k, 1), ..., field(k, Fields - 1)), field 0 the most
// significant; `field(k, i)` gives a std::uint32_t. Keys equal in every field keep their order.
template <std::size_t Fields, typename Key, typename Field>
void radix_sort(std::vector<Key>& keys, Field field) {
  std::vector<Key> sorted;
  for (std::size_t pass = 0; pass < 4 * Fields; ++pass) {
    const std::size_t which = Fields - 1 - pass / 4;
    const unsigned shift = 8u * static_cast<unsigned>(pass % 4);
    auto digit = [&](const Key& k) -> std::size_t { return (std::uint32_t(field(k, which)) >> shift) & 0xffu; };
    std::size_t count[257] = {};
    for (const auto& k : keys) ++count[digit(k) + 1];
    if (std::any_of(std::begin(count) + 1, std::end(count), [&](std::size_t n) { return n == keys.size(); })) continue;
    for (std::size_t d = 0; d < 256; ++d) count[d + 1] += count[d];
    sorted.resize(keys.size());
    for (const auto& k : keys) sorted[count[digit(k)]++] = k;
    keys.swap(sorted);
  }
}

}  // namespace cubescale
