#pragma once
// Byte and JSON forms of sequence trees.
//
// Binary (version 1), little-endian, varints (LEB128):
//   "CSSEQTRE" u16 version
//   varint class_count, class_count x string (varint length + bytes)
//   varint record_count, then per record in depth-first preorder:
//     u8 kind, varint class, varint copies, varint property_count,
//     property_count x (string key, string value), varint child_count
// The reader bounds every count by the bytes left and every depth by kMaxDepth, so hostile
// bytes raise FormatError instead of allocating or recursing without end.
#include <string>
#include <string_view>

#include "cubescale/systree/sequence.hpp"

namespace cubescale::systree {

std::string serialize(const SystemTree& tree);
SystemTree deserialize(std::string_view bytes, const std::string& source = "");
// {"format": "cubescale-systree", "version": 1, "root": {"kind", "class", "copies",
//  "properties"?, "children"?}}; `indent` < 0 gives one line.
std::string to_json(const SystemTree& tree, int indent = 2);

}  // namespace cubescale::systree
