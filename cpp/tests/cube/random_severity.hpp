#pragma once
// Test helpers: random call trees in preorder and random matrices of any value type whose
// every field holds a small whole number (so that sums are exact in any order) and whose
// rows are absent at random (all zero, as a file leaves them out).
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "cubescale/cube/definitions.hpp"
#include "cubescale/cube/severity.hpp"

// A random call tree in preorder: each cnode's parent is on the path to the previous one.
inline std::vector<std::uint32_t> random_parents(std::size_t n, std::mt19937& rng) {
  using cubescale::cube::kNoParent;
  std::vector<std::uint32_t> parents(n, kNoParent), path{0};
  for (std::size_t i = 1; i < n; ++i) {
    path.resize(1 + rng() % path.size());
    parents[i] = path.back();
    path.push_back(static_cast<std::uint32_t>(i));
  }
  return parents;
}

// Values field by field (DataType::fields(): a TAU_ATOMIC count is a uint32, integer kinds
// integers, every other 8-byte field a double), each in [0, 1000); a quarter of the rows absent.
inline cubescale::cube::Severity random_values(const cubescale::cube::DataType& t, std::size_t cnodes,
                                               std::size_t locations, std::mt19937& rng) {
  cubescale::cube::Severity s(t, cnodes, locations);
  const auto fields = t.fields();
  for (std::size_t c = 0; c < cnodes; ++c) {
    if (rng() % 4 == 0) continue;
    std::uint8_t* p = s.row(c);
    for (std::size_t l = 0; l < locations; ++l)
      for (auto size : fields) {
        const std::uint64_t u = rng() % 1000;
        if (size == 4) {
          const auto v = static_cast<std::uint32_t>(u);
          std::memcpy(p, &v, 4);
        } else if (t.is_integer()) {
          std::memcpy(p, &u, size);  // little-endian: the low bytes of u
        } else {
          const double v = static_cast<double>(u);
          std::memcpy(p, &v, 8);
        }
        p += size;
      }
    s.set_present(c, true);
  }
  return s;
}
