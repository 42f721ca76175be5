#pragma once
// A small pull tokenizer for the XML subset that CUBE writers produce: declarations,
// comments, start/end/empty tags with quoted attributes, text with the predefined and numeric
// entities, CDATA. No DTDs, no namespaces. Errors are FormatErrors with the byte offset.
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cubescale::cube {

struct XmlToken {
  enum Type { Start, End, Text, Eof } type = Eof;
  std::string_view name;  // tag name for Start / End
  std::vector<std::pair<std::string_view, std::string>> attributes;
  std::string text;          // decoded, for Text
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
  const std::string* attribute(std::string_view key) const;

 private:
  void read_tag();
  void read_text();
  std::size_t skip_special();  // <?...?>, <!--...-->, <!DOCTYPE>: returns the new position
  std::string decode(std::string_view raw, std::size_t at) const;

  std::string_view xml_;
  std::string file_, member_;
  std::size_t pos_ = 0;
  XmlToken token_;
  bool pending_end_ = false;
};

// Escapes &, <, >, " and ' for text and attribute values.
std::string xml_escape(std::string_view s);

}  // namespace cubescale::cube
