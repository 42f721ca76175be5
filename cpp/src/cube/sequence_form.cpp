#include "cubescale/cube/sequence_form.hpp"

#include <algorithm>
#include <string_view>
#include <unordered_map>

namespace cubescale::cube {

namespace {

// Hash of a shape key (kind, class, sorted child shapes): FNV-1a over the ids.
struct KeyHash {
  std::size_t operator()(const std::vector<std::uint32_t>& key) const {
    std::uint64_t h = 14695981039346656037ull;
    for (auto x : key) h = (h ^ x) * 1099511628211ull;
    return static_cast<std::size_t>(h);
  }
};

constexpr std::uint32_t kNoShape = 0xffffffffu;

// Per element its shape id (equal ids: equal subtrees), kNoShape if no location is below it.
std::vector<std::uint32_t> shapes(const systree::SingleNodeTree& tree) {
  const std::size_t n = tree.size();
  std::vector<std::uint32_t> shape(n, kNoShape);
  std::unordered_map<std::string_view, std::uint32_t> classes;
  std::unordered_map<std::vector<std::uint32_t>, std::uint32_t, KeyHash> interned;
  std::vector<std::uint32_t> key, last;
  std::uint32_t last_shape = kNoShape;
  const std::string* last_cls = nullptr;  // the tree interns class names: one string per class
  std::uint32_t cls = 0;
  for (std::size_t i = n; i-- > 0;) {  // children have larger ids than their parents
    const auto e = static_cast<std::uint32_t>(i);
    const std::string& name = tree.cls(e);
    if (&name != last_cls) {
      cls = classes.try_emplace(name, static_cast<std::uint32_t>(classes.size())).first->second;
      last_cls = &name;
    }
    key.clear();
    key.push_back(static_cast<std::uint32_t>(tree.kind(e)));
    key.push_back(cls);
    for (auto c : tree.children(e))
      if (shape[c] != kNoShape) key.push_back(shape[c]);
    if (key.size() == 2 && tree.kind(e) != systree::Kind::Location) continue;  // nothing to show below
    std::sort(key.begin() + 2, key.end());  // a multiset: sibling order does not matter
    if (key != last) {  // siblings mostly repeat the previous shape: skip the lookup then
      last_shape = interned.try_emplace(key, static_cast<std::uint32_t>(interned.size())).first->second;
      last = key;
    }
    shape[e] = last_shape;
  }
  return shape;
}

}  // namespace

SequenceForm sequence_form(const systree::SingleNodeTree& tree) {
  SequenceForm out;
  const std::size_t n = tree.size();
  out.record_of.assign(n, SequenceForm::kNone);
  if (n == 0) return out;
  const auto shape = shapes(tree);
  if (shape[0] == kNoShape) return out;
  // Elements by depth (a counting sort keeps id order within a depth): records are numbered
  // depth by depth, each in the order of its first instance.
  std::uint32_t deepest = 0;
  for (std::uint32_t e = 0; e < n; ++e) deepest = std::max(deepest, tree.depth(e));
  std::vector<std::size_t> start(deepest + 2, 0);
  for (std::uint32_t e = 0; e < n; ++e) ++start[tree.depth(e) + 1];
  for (std::size_t d = 1; d < start.size(); ++d) start[d] += start[d - 1];
  std::vector<std::uint32_t> by_depth(n);
  {
    auto next = start;
    for (std::uint32_t e = 0; e < n; ++e) by_depth[next[tree.depth(e)]++] = e;
  }
  std::unordered_map<std::uint64_t, std::int64_t> record_of_key;  // (parent record, shape) -> record
  std::uint64_t last_key = ~0ull;
  std::int64_t record = SequenceForm::kNone;
  for (std::uint32_t e : by_depth) {
    if (shape[e] == kNoShape) continue;
    const std::uint32_t up = tree.parent(e);
    const std::int64_t parent = up == systree::SingleNodeTree::kNoParent ? SequenceForm::kNone : out.record_of[up];
    if (up != systree::SingleNodeTree::kNoParent && parent == SequenceForm::kNone) continue;  // unreachable
    const std::uint64_t key = (static_cast<std::uint64_t>(parent + 1) << 32) | shape[e];
    if (key != last_key) {  // as above: consecutive elements mostly share their record
      auto [at, fresh] = record_of_key.try_emplace(key, static_cast<std::int64_t>(out.parent.size()));
      if (fresh) {
        out.parent.push_back(parent);
        out.depth.push_back(tree.depth(e));
        out.instances.push_back(0);
        out.cls.push_back(tree.cls(e));
      }
      record = at->second;
      last_key = key;
    }
    out.record_of[e] = record;
    ++out.instances[static_cast<std::size_t>(record)];
    out.elements.push_back(e);
  }
  out.depth_start.assign(deepest + 2, 0);
  for (std::uint32_t e : out.elements) ++out.depth_start[tree.depth(e) + 1];
  for (std::size_t d = 1; d < out.depth_start.size(); ++d) out.depth_start[d] += out.depth_start[d - 1];
  out.copies.resize(out.parent.size());
  for (std::size_t r = 0; r < out.parent.size(); ++r)
    out.copies[r] = out.parent[r] < 0 ? 1 : out.instances[r] / out.instances[static_cast<std::size_t>(out.parent[r])];
  return out;
}

}  // namespace cubescale::cube
