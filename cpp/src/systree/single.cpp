#include "cubescale/systree/single.hpp"

#include <algorithm>
#include <stdexcept>

#include "cubescale/common/bytes.hpp"

namespace cubescale::systree {

std::uint32_t SingleNodeTree::intern_class(std::string_view cls) {
  // Few distinct classes: a linear scan beats a hash map here.
  for (std::uint32_t i = 0; i < classes_.size(); ++i)
    if (classes_[i] == cls) return i;
  classes_.emplace_back(cls);
  return static_cast<std::uint32_t>(classes_.size() - 1);
}

std::uint32_t SingleNodeTree::add(std::uint32_t parent, Kind kind, std::string_view cls, std::string_view name) {
  if (size() >= kNoParent) throw std::length_error("single-node system tree is full");
  const auto id = static_cast<std::uint32_t>(size());
  parent_.push_back(parent);
  kind_.push_back(kind);
  depth_.push_back(parent == kNoParent ? 0 : depth_[parent] + 1);
  class_.push_back(intern_class(cls));
  names_.append(name);
  name_end_.push_back(names_.size());
  children_.emplace_back();
  if (parent != kNoParent) children_[parent].push_back(id);
  return id;
}

void SingleNodeTree::reserve(std::size_t elements, std::size_t name_bytes) {
  parent_.reserve(elements);
  kind_.reserve(elements);
  depth_.reserve(elements);
  class_.reserve(elements);
  name_end_.reserve(elements);
  children_.reserve(elements);
  names_.reserve(name_bytes);
}

std::uint32_t SingleNodeTree::add_root(Kind kind, std::string_view cls, std::string_view name) {
  if (size() != 0) throw std::logic_error("the system tree already has a root");
  return add(kNoParent, kind, cls, name);
}

std::uint32_t SingleNodeTree::add_child(std::uint32_t parent, Kind kind, std::string_view cls,
                                    std::string_view name) {
  if (parent >= size()) throw std::out_of_range("no system tree element " + std::to_string(parent));
  if (kind_[parent] == Kind::Location) throw std::invalid_argument("a location cannot have children");
  if (kind == Kind::Node && kind_[parent] != Kind::Node)
    throw std::invalid_argument("a system tree node must be a child of a system tree node");
  if (depth_[parent] + 1 >= kMaxDepth) throw std::length_error("system tree deeper than 256 levels");
  return add(parent, kind, cls, name);
}

void SingleNodeTree::set_property(std::uint32_t node, std::string_view key, std::string_view value) {
  if (node >= size()) throw std::out_of_range("no system tree element " + std::to_string(node));
  auto it = std::lower_bound(properties_.begin(), properties_.end(), node,
                             [](const auto& p, std::uint32_t n) { return p.first < n; });
  if (it == properties_.end() || it->first != node) it = properties_.insert(it, {node, {}});
  for (auto& [k, v] : it->second)
    if (k == key) {
      v = value;
      return;
    }
  it->second.emplace_back(key, value);
}

std::string_view SingleNodeTree::name(std::uint32_t n) const {
  const std::uint64_t begin = n == 0 ? 0 : name_end_.at(n - 1);
  return std::string_view(names_).substr(begin, name_end_.at(n) - begin);
}

const Properties& SingleNodeTree::properties(std::uint32_t n) const {
  static const Properties none;
  auto it = std::lower_bound(properties_.begin(), properties_.end(), n,
                             [](const auto& p, std::uint32_t m) { return p.first < m; });
  return (it != properties_.end() && it->first == n) ? it->second : none;
}

std::vector<std::uint32_t> SingleNodeTree::preorder() const {
  std::vector<std::uint32_t> order;
  if (size() == 0) return order;
  order.reserve(size());
  std::vector<std::uint32_t> stack{0};
  while (!stack.empty()) {
    const auto n = stack.back();
    stack.pop_back();
    order.push_back(n);
    const auto& ch = children_[n];
    for (auto it = ch.rbegin(); it != ch.rend(); ++it) stack.push_back(*it);
  }
  return order;
}

std::string SingleNodeTree::serialize() const {
  ByteWriter w;
  w.bytes("CSSINGLE");
  w.u16(1);
  w.varint(classes_.size());
  for (const auto& c : classes_) w.string(c);
  w.varint(size());
  for (auto n : preorder()) {
    w.u8(static_cast<std::uint8_t>(kind_[n]));
    w.varint(class_[n]);
    w.varint(children_[n].size());
    w.string(name(n));
    const auto& props = properties(n);
    w.varint(props.size());
    for (const auto& [k, v] : props) {
      w.string(k);
      w.string(v);
    }
  }
  return w.take();
}

}  // namespace cubescale::systree
