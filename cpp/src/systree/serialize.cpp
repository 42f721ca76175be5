#include "cubescale/systree/serialize.hpp"

#include "cubescale/common/bytes.hpp"

namespace cubescale::systree {
namespace {
constexpr std::string_view kMagic = "CSSEQTRE";
constexpr std::uint16_t kVersion = 1;
constexpr std::size_t kMaxString = 1u << 16;
}  // namespace

std::string serialize(const SystemTree& tree) {
  if (!tree.canonical()) throw std::logic_error("serialize takes a canonical tree");
  ByteWriter w;
  w.header(kMagic, kVersion);
  w.varint(tree.classes().size());
  for (const auto& c : tree.classes()) w.string(c);
  w.varint(tree.size());
  for (const auto& rec : tree.records()) {  // stored in preorder
    w.u8(static_cast<std::uint8_t>(rec.kind));
    w.varint(rec.cls);
    w.varint(rec.copies);
    w.varint(rec.properties.size());
    for (const auto& [k, v] : rec.properties) {
      w.string(k);
      w.string(v);
    }
    w.varint(rec.children.size());
  }
  return w.take();
}

SystemTree deserialize(std::string_view bytes, const std::string& source) {
  ByteReader r(bytes, source, "sequence tree");
  r.expect_header(kMagic, kVersion, "sequence tree");
  const auto class_count = r.varint_at_most(r.remaining(), "class count");
  std::vector<std::string> classes;
  classes.reserve(class_count);
  for (std::uint64_t i = 0; i < class_count; ++i) classes.emplace_back(r.string(kMaxString));
  // A record takes at least five bytes.
  const auto record_count = r.varint_at_most(r.remaining() / 5, "record count");
  if (record_count == 0) r.fail("a sequence tree needs a root record");

  SystemTree tree;
  struct Open {
    std::uint32_t record;
    std::uint64_t children_left;
  };
  std::vector<Open> stack;
  for (std::uint64_t i = 0; i < record_count; ++i) {
    const std::size_t at = r.offset();
    const auto kind_byte = r.u8();
    if (kind_byte >= kKindCount) r.fail_at(at, "bad record kind " + std::to_string(kind_byte));
    const auto kind = static_cast<Kind>(kind_byte);
    const auto cls = r.varint_at_most(class_count ? class_count - 1 : 0, "class index");
    if (class_count == 0) r.fail_at(at, "record refers to a class but there are none");
    const auto copies = r.varint();
    if (copies == 0) r.fail_at(at, "record with zero copies");
    const auto property_count = r.varint_at_most(r.remaining() / 2, "property count");
    Properties props;
    for (std::uint64_t p = 0; p < property_count; ++p) {
      std::string key(r.string(kMaxString));
      props.emplace_back(std::move(key), std::string(r.string(kMaxString)));
    }
    const auto child_count = r.varint_at_most(record_count - 1 - i, "child count");
    try {
      std::uint32_t id;
      if (i == 0) {
        if (copies != 1) r.fail_at(at, "the root record must have exactly one copy");
        id = tree.add_root(kind, classes[cls]);
        tree.set_root_properties(std::move(props));
      } else {
        if (stack.empty()) r.fail_at(at, "record outside the tree (child counts too small)");
        id = tree.add_record(stack.back().record, kind, classes[cls], copies, std::move(props));
        if (--stack.back().children_left == 0) stack.pop_back();
      }
      if (child_count > 0) stack.push_back({id, child_count});
    } catch (const FormatError&) {
      throw;
    } catch (const std::exception& e) {
      r.fail_at(at, e.what());
    }
  }
  if (!stack.empty()) r.fail("truncated: records missing for declared children");
  if (!r.at_end()) r.fail("trailing bytes after the last record");
  try {
    tree.canonicalize();
  } catch (const std::exception& e) {
    r.fail_at(0, e.what());
  }
  return tree;
}

namespace {
void json_string(std::string& out, std::string_view s) {
  out.push_back('"');
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out.push_back(static_cast<char>(c));
        }
    }
  }
  out.push_back('"');
}
}  // namespace

std::string to_json(const SystemTree& tree, int indent) {
  if (!tree.canonical()) throw std::logic_error("to_json takes a canonical tree");
  std::string out;
  auto newline = [&](int level) {
    if (indent < 0) return;
    out.push_back('\n');
    out.append(static_cast<std::size_t>(indent * level), ' ');
  };
  const char* sep = indent < 0 ? ", " : ",";
  out += "{";
  newline(1);
  out += "\"format\": \"cubescale-systree\"";
  out += sep;
  newline(1);
  out += "\"version\": 1";
  out += sep;
  newline(1);
  out += "\"root\": ";
  // Iterative preorder writer; each frame closes its record when its children are done.
  struct Frame {
    std::uint32_t record;
    std::size_t next_child;
  };
  auto open_record = [&](std::uint32_t r, int level) {
    const Record& rec = tree.record(r);
    out += "{";
    newline(level + 1);
    out += "\"kind\": ";
    json_string(out, kind_name(rec.kind));
    out += sep;
    newline(level + 1);
    out += "\"class\": ";
    json_string(out, tree.class_name(r));
    out += sep;
    newline(level + 1);
    out += "\"copies\": " + std::to_string(rec.copies);
    if (!rec.properties.empty()) {
      out += sep;
      newline(level + 1);
      out += "\"properties\": {";
      for (std::size_t i = 0; i < rec.properties.size(); ++i) {
        if (i) out += ", ";
        json_string(out, rec.properties[i].first);
        out += ": ";
        json_string(out, rec.properties[i].second);
      }
      out += "}";
    }
    if (!rec.children.empty()) {
      out += sep;
      newline(level + 1);
      out += "\"children\": [";
    }
  };
  std::vector<Frame> stack{{0, 0}};
  open_record(0, 1);
  while (!stack.empty()) {
    Frame& f = stack.back();
    const Record& rec = tree.record(f.record);
    const int level = 1 + 2 * static_cast<int>(stack.size() - 1);
    if (f.next_child < rec.children.size()) {
      if (f.next_child > 0) out += sep;
      newline(level + 2);
      const auto c = rec.children[f.next_child++];
      stack.push_back({c, 0});
      open_record(c, level + 2);
      continue;
    }
    if (!rec.children.empty()) {
      newline(level + 1);
      out += "]";
    }
    newline(level);
    out += "}";
    stack.pop_back();
  }
  newline(0);
  out += "}";
  if (indent >= 0) out.push_back('\n');
  return out;
}

}  // namespace cubescale::systree
