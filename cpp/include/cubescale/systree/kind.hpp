#pragma once
// The three kinds of system tree elements, as in CUBE and OTF2: system tree nodes
// (machine, rack, node, package, core, ...), location groups (process, accelerator) and
// locations (CPU thread, GPU stream, metric location).
#include <cstdint>
#include <optional>
#include <string_view>

namespace cubescale::systree {

enum class Kind : std::uint8_t { Node = 0, LocationGroup = 1, Location = 2 };
inline constexpr int kKindCount = 3;

// A set of kinds: enumerations count only the elements whose kind is in the mask.
using KindMask = std::uint8_t;
inline constexpr KindMask kNodes = 1, kLocationGroups = 2, kLocations = 4, kAllKinds = 7;
inline constexpr KindMask mask_of(Kind k) { return KindMask(1u << static_cast<unsigned>(k)); }
inline constexpr bool in_mask(Kind k, KindMask m) { return (mask_of(k) & m) != 0; }

// Trees deeper than this are rejected: real machines are < 20 levels deep, and the bound
// keeps recursion in comparisons and the explicit stacks of parsers small.
inline constexpr std::uint32_t kMaxDepth = 256;

std::string_view kind_name(Kind k);
std::optional<Kind> kind_from_name(std::string_view name);
// The kind a class name implies in shape specs: process/accelerator are location groups,
// thread/gpu_stream/metric are locations, everything else is a system tree node.
Kind kind_of_class(std::string_view cls);

}  // namespace cubescale::systree
