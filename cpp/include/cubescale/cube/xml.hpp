#pragma once
// A small pull tokenizer for the XML subset that CUBE writers produce: declarations,
// comments, start/end/empty tags with quoted attributes, text with the predefined and numeric
// entities, CDATA. No DTDs, no namespaces. Errors are FormatErrors with the byte offset.
//
// Tokens are views: names, attribute values and text point into the document when they are
// stored there as they read (the common case), otherwise into buffers of the tokenizer that
// hold the decoded form. So a token costs no allocation once the buffers have grown.
#include <cstdint>
#include <cstring>
#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cubescale::cube {

// XML's white space: space, tab, newline, carriage return.
inline bool is_xml_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// Whether `literal` stands in `xml` at `pos` (<= xml.size()). Its length is known here, so the
// comparison compiles to a few loads instead of a call: the fast readings of CubeW's layout
// make one for every tag.
template <std::size_t N>
bool starts_with_at(std::string_view xml, std::size_t pos, const char (&literal)[N]) {
  return xml.size() - pos >= N - 1 && std::memcmp(xml.data() + pos, literal, N - 1) == 0;
}

// A decimal id below 2^32 and its closing quote, read from `pos` (just past the opening
// quote) in the plain form the fast readings take: 1 to 10 digits. Moves `pos` past the quote;
// false otherwise, and the tag is left to the tokenizer, which judges every other form.
inline bool plain_quoted_id(std::string_view xml, std::size_t& pos, std::uint64_t& id) {
  std::uint64_t value = 0;
  auto end = pos;
  for (; end < xml.size() && xml[end] >= '0' && xml[end] <= '9' && end - pos < 10; ++end)
    value = value * 10 + static_cast<std::uint64_t>(xml[end] - '0');
  if (end == pos || end >= xml.size() || xml[end] != '"' || value > 0xffffffffull) return false;
  id = value;
  pos = end + 1;
  return true;
}

struct XmlToken {
  enum Type { Start, End, Text, Eof } type = Eof;
  std::string_view name;  // tag name for Start / End
  // Valid until the next Start token.
  std::vector<std::pair<std::string_view, std::string_view>> attributes;
  // Decoded, for Text; valid until the next Text token (it survives the tags in between).
  std::string_view text;
  bool self_closing = false;  // <tag/>: an End token with the same name follows
  std::size_t offset = 0;     // where the token starts
  std::size_t end = 0;        // one past its last byte
};

class XmlTokenizer {
 public:
  XmlTokenizer(std::string_view xml, std::string file, std::string member)
      : xml_(xml), file_(std::move(file)), member_(std::move(member)) {}
  // The next token; whitespace-only text between tags is skipped.
  const XmlToken& next();
  const XmlToken& token() const { return token_; }
  std::size_t offset() const { return pos_; }
  // Continues tokenizing at byte `pos` (to skip a part whose structure is not needed).
  void seek(std::size_t pos) { pos_ = pos; pending_end_ = false; }
  std::string_view source() const { return xml_; }
  [[noreturn]] void fail(std::size_t offset, const std::string& message) const;
  // Looks up an attribute of the current Start token.
  std::optional<std::string_view> attribute(std::string_view key) const;
  // A required attribute of the current Start token holding a number below 2^32 (an id).
  std::uint64_t id_attribute(std::string_view key) const;
  // `text` (found at `offset`) as a decimal integer; `what` names it in the error.
  std::int64_t integer(std::string_view text, std::size_t offset, std::string_view what) const;
  // Right after the Start token `name` (not self-closing): when the element is plain text
  // closed at once (`text</name>`, no entity, no CDATA, no child), consumes it through the end
  // tag and returns the text as next() would (surrounding whitespace dropped). Otherwise
  // consumes nothing. Most elements of an anchor.xml are such fields: one step instead of three.
  std::optional<std::string_view> leaf_text(std::string_view name);

 private:
  void skip_space();
  void skip_space_run();
  std::size_t name_end(std::size_t pos) const;  // first byte at or after `pos` not in a name
  void read_tag();
  void read_text();
  void read_text_with_markup();
  void begin_token(XmlToken::Type type);
  // The value that starts at `start` and ends at `quote` (decoded); moves past the quote.
  std::string_view attribute_value(std::size_t start, char quote);
  std::size_t skip_special();  // <?...?>, <!--...-->, <!DOCTYPE>: returns the new position
  void decode_into(std::string& out, std::string_view raw, std::size_t at) const;

  std::string_view xml_;
  std::string file_, member_;
  std::size_t pos_ = 0;
  XmlToken token_;
  bool pending_end_ = false;
  // Decoded text of the current Text token when it had entities or CDATA.
  std::string decoded_text_;
  // Decoded attribute values of the current tag: a deque, so that growing it keeps the
  // strings (and views of them) in place; strings are reused to keep their capacity.
  std::deque<std::string> decoded_values_;
  std::size_t decoded_values_used_ = 0;
};

// Escapes &, <, >, " and ' for text and attribute values (tab, LF, CR and other characters
// as they are). What XML 1.0 cannot hold at all, even as a character reference (controls
// other than tab, LF and CR, U+FFFE, U+FFFF), and each byte of invalid UTF-8 becomes U+FFFD,
// so that every name (e.g. one given through the C API) makes a well-formed document.
std::string xml_escape(std::string_view s);
// Whether xml_escape keeps every character of `s` (no U+FFFD put in).
bool xml_can_hold(std::string_view s);

}  // namespace cubescale::cube
