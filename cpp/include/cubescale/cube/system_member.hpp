#pragma once
// Our extra tar member "cubescale.systree": the system tree as sequence definitions (paper
// 000) plus the real names and, when they are not the default ones, the ranks. CUBE has no
// sequence construct, so anchor.xml still spells out every element for other tools; our reader
// takes this member instead and skips the <system> part of anchor.xml.
//
// Layout (little-endian): "CUBESCALE.SYSTREE" u16 version=1,
//   u64 n + n bytes systree::serialize(fold(tree)), u64 n + n bytes NameMap (all kinds),
//   u8 ranks_stored, [varint group count, group ranks, varint location count, location ranks]
// Bytes after that are padding (a tar member must not be a multiple of 512 bytes).
#include <optional>
#include <string>
#include <string_view>

#include "cubescale/cube/definitions.hpp"

namespace cubescale::cube {

inline constexpr const char* kSystemMember = "cubescale.systree";

// The member bytes, or nullopt when folding would not reproduce the tree in the same order
// (then only anchor.xml describes the system tree).
std::optional<std::string> encode_system_member(const Definitions& defs);
struct SystemCounts;
// Fills system, location_groups, locations, ranks and location_file_id (identity) of `defs`.
// The tree must expand to the elements anchor.xml spells out (`spelled`, see SystemCounts):
// checked before anything is expanded, a FormatError otherwise.
void decode_system_member(std::string_view bytes, Definitions& defs, const std::string& file,
                          const SystemCounts& spelled);

}  // namespace cubescale::cube
