#pragma once
// The call tree's tags, read without the tokenizer where they are laid out as CubeW and
// Score-P write them: `<cnode id="N" calleeId="M">` and `</cnode>`, white space between.
//
// Why: a call path is two tags and no fields, so its cost is the tokenizer's per tag (~15 ns
// a token, plus building the token and dispatching on its name). This reads one such tag at a
// time; the parser applies each as it would the tokens, and hands anything else (parameters,
// attributes, comments, other attribute orders, self-closing cnodes, malformed numbers) back
// to the tokenizer at that tag.
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace cubescale::cube {

struct PlainCnodeTag {
  enum Kind { None, Open, Close } kind = None;
  std::uint64_t id = 0, callee = 0;  // of an Open tag
  std::size_t offset = 0;            // of the tag's '<'
  std::size_t end = 0;               // one past its '>'
};

// The tag after the white space at `pos`, if it is one of the two plain cnode tags (kind None
// otherwise). Ids are read by plain_quoted_id() (xml.hpp); other forms go to the tokenizer.
PlainCnodeTag read_plain_cnode_tag(std::string_view xml, std::size_t pos);

}  // namespace cubescale::cube
