#include "cubescale/cube/system_xml.hpp"

#include <charconv>

#include "cubescale/cube/xml.hpp"

namespace cubescale::cube {

namespace {

// A cursor that only moves forward over what it recognizes; every step reports whether the
// input had the expected shape, so that a caller can give up and leave the bytes untouched.
class PlainCursor {
 public:
  PlainCursor(std::string_view xml, std::size_t pos) : xml_(xml), pos_(pos) {}
  std::size_t pos() const { return pos_; }

  template <std::size_t N>
  bool literal(const char (&s)[N]) {
    if (!starts_with_at(xml_, pos_, s)) return false;
    pos_ += N - 1;
    return true;
  }
  template <std::size_t N>
  bool peek(const char (&s)[N]) const { return starts_with_at(xml_, pos_, s); }
  void space() {
    while (pos_ < xml_.size() && is_xml_space(xml_[pos_])) ++pos_;
  }
  // Text up to the next '<', without entities, with surrounding white space dropped (as the
  // tokenizer gives a field's text).
  bool text(std::string_view& out) {
    auto end = pos_;
    while (end < xml_.size() && xml_[end] != '<') {
      if (xml_[end] == '&') return false;
      ++end;
    }
    if (end == xml_.size()) return false;
    auto t = xml_.substr(pos_, end - pos_);
    while (!t.empty() && is_xml_space(t.front())) t.remove_prefix(1);
    while (!t.empty() && is_xml_space(t.back())) t.remove_suffix(1);
    out = t;
    pos_ = end;
    return true;
  }
  // `<tag Id="N">`: the start tag of a group or location with its one attribute.
  template <std::size_t N>
  bool start_tag(const char (&open)[N], std::uint64_t& id) {
    return literal(open) && plain_quoted_id(xml_, pos_, id) && literal(">");
  }

 private:
  std::string_view xml_;
  std::size_t pos_;
};

// The fields of the element just opened, then white space; false on anything else but the
// start of a child or an end tag.
bool read_fields(PlainCursor& in, PlainSystemElement& e) {
  for (in.space();; in.space()) {
    std::string_view text;
    if (in.literal("<name>")) {
      if (!in.text(e.name) || !in.literal("</name>")) return false;
    } else if (in.literal("<type>")) {
      if (!in.text(e.type) || !in.literal("</type>")) return false;
    } else if (in.literal("<rank>")) {
      if (!in.text(text) || !in.literal("</rank>")) return false;
      auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), e.rank);
      if (ec != std::errc() || p != text.data() + text.size()) return false;
    } else {
      return in.peek("<location Id=\"") || in.peek("</");
    }
  }
}

// One whole group and its locations, appended to `out` only when all of it has the shape.
bool read_group(PlainCursor& in, std::vector<PlainSystemElement>& out) {
  const auto size_before = out.size();
  PlainSystemElement group;
  group.offset = in.pos();
  if (!in.start_tag("<locationgroup Id=\"", group.id) || !read_fields(in, group)) return false;
  out.push_back(group);
  while (true) {
    PlainSystemElement location;
    location.offset = in.pos();
    if (!in.start_tag("<location Id=\"", location.id)) break;
    if (!read_fields(in, location) || !in.literal("</location>")) {
      out.resize(size_before);
      return false;
    }
    out.push_back(location);
    ++out[size_before].locations;
    in.space();
  }
  if (!in.literal("</locationgroup>")) {
    out.resize(size_before);
    return false;
  }
  return true;
}

}  // namespace

std::size_t read_plain_groups(std::string_view xml, std::size_t pos, std::vector<PlainSystemElement>& out) {
  PlainCursor in(xml, pos);
  std::size_t done = pos;
  while (true) {
    PlainCursor group = in;
    if (!read_group(group, out)) return done;
    done = group.pos();
    in = group;
    in.space();
  }
}

}  // namespace cubescale::cube
