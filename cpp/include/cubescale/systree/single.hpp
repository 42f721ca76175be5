#pragma once
// Single-node form of a system tree: one element per machine part, process and thread,
// each with its own name (e.g. a host name) and properties. This is what a process knows
// about itself at measurement start, and what Cube's anchor.xml spells out.
// Elements are numbered in creation order; a parent always exists before its children.
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cubescale/systree/kind.hpp"

namespace cubescale::systree {

using Properties = std::vector<std::pair<std::string, std::string>>;

class SingleNodeTree {
 public:
  static constexpr std::uint32_t kNoParent = 0xffffffffu;

  // Room for `elements` elements whose names take `name_bytes` in all: one allocation per
  // column instead of a growing series when the size is known (as when parsing a file).
  void reserve(std::size_t elements, std::size_t name_bytes);
  std::uint32_t add_root(Kind kind, std::string_view cls, std::string_view name);
  std::uint32_t add_child(std::uint32_t parent, Kind kind, std::string_view cls, std::string_view name);
  void set_property(std::uint32_t node, std::string_view key, std::string_view value);

  std::size_t size() const { return parent_.size(); }
  std::uint32_t parent(std::uint32_t n) const { return parent_.at(n); }
  Kind kind(std::uint32_t n) const { return kind_.at(n); }
  std::uint32_t depth(std::uint32_t n) const { return depth_.at(n); }
  const std::string& cls(std::uint32_t n) const { return classes_.at(class_.at(n)); }
  std::string_view name(std::uint32_t n) const;
  const Properties& properties(std::uint32_t n) const;
  const std::vector<std::uint32_t>& children(std::uint32_t n) const { return children_.at(n); }

  // Bytes of the compact single-node serialization (kind, class, child count, name and
  // properties per element): the baseline that sequence definitions are measured against.
  std::string serialize() const;
  // Elements in depth-first preorder.
  std::vector<std::uint32_t> preorder() const;

 private:
  std::uint32_t intern_class(std::string_view cls);
  std::uint32_t add(std::uint32_t parent, Kind kind, std::string_view cls, std::string_view name);

  std::vector<std::uint32_t> parent_;
  std::vector<Kind> kind_;
  std::vector<std::uint32_t> depth_;
  std::vector<std::uint32_t> class_;
  std::vector<std::uint64_t> name_end_;  // names concatenated: one allocation, not one per element
  std::string names_;
  std::vector<std::vector<std::uint32_t>> children_;
  std::vector<std::pair<std::uint32_t, Properties>> properties_;  // sparse, sorted by element
  std::vector<std::string> classes_;
};

}  // namespace cubescale::systree
