#include "cubescale/cube/cnode_xml.hpp"

#include "cubescale/cube/xml.hpp"

namespace cubescale::cube {

PlainCnodeTag read_plain_cnode_tag(std::string_view xml, std::size_t pos) {
  static constexpr char kOpen[] = "<cnode id=\"", kCallee[] = " calleeId=\"", kClose[] = "</cnode>";
  PlainCnodeTag tag;
  while (pos < xml.size() && is_xml_space(xml[pos])) ++pos;
  tag.offset = pos;
  if (starts_with_at(xml, pos, kClose)) {
    tag.kind = PlainCnodeTag::Close;
    tag.end = pos + (sizeof kClose - 1);
    return tag;
  }
  if (!starts_with_at(xml, pos, kOpen)) return tag;
  pos += (sizeof kOpen - 1);
  if (!plain_quoted_id(xml, pos, tag.id) || !starts_with_at(xml, pos, kCallee)) return tag;
  pos += (sizeof kCallee - 1);
  if (!plain_quoted_id(xml, pos, tag.callee) || pos >= xml.size() || xml[pos] != '>') return tag;
  tag.kind = PlainCnodeTag::Open;
  tag.end = pos + 1;
  return tag;
}

}  // namespace cubescale::cube
