#include "cubescale/systree/sequence.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>

#include "cubescale/systree/names.hpp"

namespace cubescale::systree {
namespace {

// Expanded trees are indexed with int64 in NumPy: keep every count below 2^62.
constexpr std::uint64_t kMaxElements = std::uint64_t(1) << 62;

std::uint64_t checked_mul_add(std::uint64_t acc, std::uint64_t a, std::uint64_t b) {
  std::uint64_t prod = 0;
  if (__builtin_mul_overflow(a, b, &prod) || prod > kMaxElements || acc + prod > kMaxElements)
    throw std::overflow_error("the expanded system tree has more than 2^62 elements");
  return acc + prod;
}

std::uint64_t mix(std::uint64_t h, std::uint64_t v) {
  // splitmix64 finalizer over the running state: order-sensitive and well spread.
  h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  h ^= h >> 30;
  h *= 0xbf58476d1ce4e5b9ull;
  h ^= h >> 27;
  h *= 0x94d049bb133111ebull;
  return h ^ (h >> 31);
}

std::uint64_t hash_string(std::string_view s) {
  std::uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a: the same on every machine
  for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ull;
  return h;
}

int compare_properties(const Properties& a, const Properties& b) {
  if (a.size() != b.size()) return a.size() < b.size() ? -1 : 1;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (int c = a[i].first.compare(b[i].first)) return c;
    if (int c = a[i].second.compare(b[i].second)) return c;
  }
  return 0;
}

// Three-way structural order of two subtrees (copies of the tops ignored). Both must have
// canonical children. Recursion depth is bounded by kMaxDepth.
int compare_structure(const SystemTree& ta, std::uint32_t a, const SystemTree& tb, std::uint32_t b) {
  const Record& A = ta.records()[a];
  const Record& B = tb.records()[b];
  if (A.kind != B.kind) return A.kind < B.kind ? -1 : 1;
  if (int c = ta.classes()[A.cls].compare(tb.classes()[B.cls])) return c;
  if (int c = compare_properties(A.properties, B.properties)) return c;
  if (A.children.size() != B.children.size()) return A.children.size() < B.children.size() ? -1 : 1;
  for (std::size_t i = 0; i < A.children.size(); ++i) {
    const auto ca = A.children[i], cb = B.children[i];
    const auto na = ta.records()[ca].copies, nb = tb.records()[cb].copies;
    if (na != nb) return na < nb ? -1 : 1;
    if (int c = compare_structure(ta, ca, tb, cb)) return c;
  }
  return 0;
}

}  // namespace

// ------------------------------------------------------------------------------------------
// building

std::uint32_t SystemTree::intern_class(std::string_view cls) {
  for (std::uint32_t i = 0; i < classes_.size(); ++i)
    if (classes_[i] == cls) return i;
  classes_.emplace_back(cls);
  return static_cast<std::uint32_t>(classes_.size() - 1);
}

std::uint32_t SystemTree::add(std::uint32_t parent, Kind kind, std::uint32_t cls, std::uint64_t copies,
                                Properties props) {
  if (records_.size() >= kNone - 1) throw std::length_error("too many sequence records");
  Record rec;
  rec.kind = kind;
  rec.cls = cls;
  rec.copies = copies;
  rec.parent = parent;
  rec.depth = parent == kNone ? 0 : records_[parent].depth + 1;
  rec.properties = std::move(props);
  const auto id = static_cast<std::uint32_t>(records_.size());
  records_.push_back(std::move(rec));
  if (parent != kNone) records_[parent].children.push_back(id);
  canonical_ = false;
  return id;
}

std::uint32_t SystemTree::add_root(Kind kind, std::string_view cls) {
  if (!records_.empty()) throw std::logic_error("the sequence tree already has a root");
  return add(kNone, kind, intern_class(cls), 1, {});
}

std::uint32_t SystemTree::add_record(std::uint32_t parent, Kind kind, std::string_view cls,
                                       std::uint64_t copies, Properties properties) {
  if (parent >= records_.size()) throw std::out_of_range("no sequence record " + std::to_string(parent));
  const Record& p = records_[parent];
  if (p.kind == Kind::Location) throw std::invalid_argument("a location cannot have children");
  if (kind == Kind::Node && p.kind != Kind::Node)
    throw std::invalid_argument("a system tree node must be a child of a system tree node");
  if (copies == 0) throw std::invalid_argument("a record needs at least one copy");
  if (copies > kMaxElements) throw std::overflow_error("too many copies");
  if (p.depth + 1 >= kMaxDepth) throw std::length_error("system tree deeper than 256 levels");
  return add(parent, kind, intern_class(cls), copies, std::move(properties));
}

std::uint32_t SystemTree::graft(std::uint32_t parent, const SystemTree& other, std::uint32_t record) {
  struct Item {
    std::uint32_t from, to_parent;
  };
  std::vector<Item> stack{{record, parent}};
  std::uint32_t top = kNone;
  while (!stack.empty()) {
    const Item it = stack.back();
    stack.pop_back();
    const Record& r = other.records_.at(it.from);
    const auto id = add_record(it.to_parent, r.kind, other.classes_[r.cls], r.copies, r.properties);
    if (top == kNone) top = id;
    for (auto c = r.children.rbegin(); c != r.children.rend(); ++c) stack.push_back({*c, id});
  }
  return top;
}

// ------------------------------------------------------------------------------------------
// canonical form

namespace detail {
// What canonicalize() learns about every record id before it renumbers them; fold() uses it
// to place the names of the single elements it folded.
struct CanonicalTrace {
  std::vector<std::uint32_t> survivor;      // the sibling it was folded into (itself if kept)
  std::vector<std::uint64_t> first_copy;    // its first copy within the survivor
  std::vector<std::uint64_t> count_all;     // elements in one copy of its subtree
  std::vector<std::uint64_t> prefix_all;    // elements of the survivor's earlier siblings
};
}  // namespace detail

std::vector<Placement> SystemTree::canonicalize() { return canonicalize_traced(nullptr); }

std::vector<Placement> SystemTree::canonicalize_traced(detail::CanonicalTrace* trace) {
  const std::size_t n = records_.size();
  if (n == 0) throw std::logic_error("empty sequence tree");
  std::vector<std::uint32_t> survivor(n);
  std::vector<std::uint64_t> first_copy(n, 0);
  for (std::uint32_t i = 0; i < n; ++i) survivor[i] = i;
  hash_.assign(n, 0);
  count_.assign(n, {0, 0, 0});
  prefix_.assign(n, {0, 0, 0});

  // Parents have lower ids than children: a backward loop visits children first.
  for (std::uint32_t r = static_cast<std::uint32_t>(n); r-- > 0;) {
    Record& rec = records_[r];
    auto& ch = rec.children;
    std::stable_sort(ch.begin(), ch.end(), [&](std::uint32_t a, std::uint32_t b) {
      const Record &A = records_[a], &B = records_[b];
      if (A.kind != B.kind) return A.kind < B.kind;
      if (A.cls != B.cls)
        if (int c = classes_[A.cls].compare(classes_[B.cls])) return c < 0;
      if (hash_[a] != hash_[b]) return hash_[a] < hash_[b];
      return compare_structure(*this, a, *this, b) < 0;
    });
    // Fold runs of equal structure: the first keeps the copies of all.
    std::vector<std::uint32_t> kept;
    kept.reserve(ch.size());
    for (auto c : ch) {
      if (!kept.empty()) {
        const auto k = kept.back();
        if (hash_[k] == hash_[c] && compare_structure(*this, k, *this, c) == 0) {
          survivor[c] = k;
          first_copy[c] = records_[k].copies;
          records_[k].copies = checked_mul_add(records_[k].copies, records_[c].copies, 1);
          continue;
        }
      }
      kept.push_back(c);
    }
    ch = std::move(kept);

    std::uint64_t h = mix(static_cast<std::uint64_t>(rec.kind) + 1, hash_string(classes_[rec.cls]));
    for (const auto& [k, v] : rec.properties) h = mix(mix(h, hash_string(k)), hash_string(v));
    h = mix(h, ch.size());
    std::array<std::uint64_t, kKindCount> cnt{0, 0, 0};
    cnt[static_cast<int>(rec.kind)] = 1;
    for (auto c : ch) {
      h = mix(mix(h, hash_[c]), records_[c].copies);
      prefix_[c] = cnt;
      prefix_[c][static_cast<int>(rec.kind)] -= 1;  // the parent itself is not an earlier sibling
      for (int k = 0; k < kKindCount; ++k) cnt[k] = checked_mul_add(cnt[k], records_[c].copies, count_[c][k]);
    }
    hash_[r] = h;
    count_[r] = cnt;
  }
  if (records_[0].copies != 1) throw std::invalid_argument("the root record must have exactly one copy");

  if (trace) {
    trace->survivor = survivor;
    trace->first_copy = first_copy;
    trace->count_all.resize(n);
    trace->prefix_all.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
      trace->count_all[i] = count_[i][0] + count_[i][1] + count_[i][2];
      trace->prefix_all[i] = prefix_[i][0] + prefix_[i][1] + prefix_[i][2];
    }
  }

  // Renumber the kept records in depth-first preorder.
  std::vector<std::uint32_t> new_id(n, kNone);
  std::vector<Record> out;
  std::vector<std::uint64_t> out_hash;
  std::vector<std::array<std::uint64_t, kKindCount>> out_count, out_prefix;
  std::vector<std::uint32_t> stack{0};
  max_depth_ = 0;
  while (!stack.empty()) {
    const auto old = stack.back();
    stack.pop_back();
    const auto id = static_cast<std::uint32_t>(out.size());
    new_id[old] = id;
    Record rec = std::move(records_[old]);
    rec.parent = rec.parent == kNone ? kNone : new_id[rec.parent];
    max_depth_ = std::max(max_depth_, rec.depth);
    for (auto c = rec.children.rbegin(); c != rec.children.rend(); ++c) stack.push_back(*c);
    out.push_back(std::move(rec));
    out_hash.push_back(hash_[old]);
    out_count.push_back(count_[old]);
    out_prefix.push_back(prefix_[old]);
  }
  for (auto& rec : out)
    for (auto& c : rec.children) c = new_id[c];
  records_ = std::move(out);
  hash_ = std::move(out_hash);
  count_ = std::move(out_count);
  prefix_ = std::move(out_prefix);
  canonical_ = true;

  std::vector<Placement> placement(n);
  for (std::uint32_t i = 0; i < n; ++i) {
    const auto s = survivor[i];
    if (new_id[s] != kNone) placement[i] = {new_id[s], first_copy[i]};
  }
  return placement;
}

void SystemTree::require_canonical() const {
  if (!canonical_) throw std::logic_error("call canonicalize() before querying the sequence tree");
}

bool SystemTree::same_structure(const SystemTree& a, std::uint32_t ra, const SystemTree& b,
                                  std::uint32_t rb) {
  a.require_canonical();
  b.require_canonical();
  return a.hash_.at(ra) == b.hash_.at(rb) && compare_structure(a, ra, b, rb) == 0;
}

bool SystemTree::operator==(const SystemTree& other) const {
  require_canonical();
  other.require_canonical();
  return records_[0].copies == other.records_[0].copies && same_structure(*this, 0, other, 0);
}

// ------------------------------------------------------------------------------------------
// enumeration

std::uint64_t SystemTree::count(std::uint32_t r, KindMask mask) const {
  require_canonical();
  const auto& c = count_.at(r);
  std::uint64_t sum = 0;
  for (int k = 0; k < kKindCount; ++k)
    if (mask & (1u << k)) sum += c[k];
  return sum;
}

namespace {
std::uint64_t masked(const std::array<std::uint64_t, kKindCount>& a, KindMask mask) {
  std::uint64_t sum = 0;
  for (int k = 0; k < kKindCount; ++k)
    if (mask & (1u << k)) sum += a[k];
  return sum;
}
}  // namespace

std::uint64_t SystemTree::index_of(const std::vector<PathStep>& path, KindMask mask) const {
  require_canonical();
  if (path.empty() || path[0].record != 0 || path[0].copy != 0)
    throw std::out_of_range("a path starts at the root, copy 0");
  std::uint64_t index = 0;
  for (std::size_t l = 1; l < path.size(); ++l) {
    const auto p = path[l - 1].record, r = path[l].record;
    if (r >= records_.size() || records_[r].parent != p)
      throw std::out_of_range("path step " + std::to_string(l) + ": record is not a child of the previous");
    if (path[l].copy >= records_[r].copies)
      throw std::out_of_range("path step " + std::to_string(l) + ": copy out of range");
    if (in_mask(records_[p].kind, mask)) index += 1;
    index += masked(prefix_[r], mask) + path[l].copy * masked(count_[r], mask);
  }
  if (!in_mask(records_[path.back().record].kind, mask))
    throw std::out_of_range("the path ends at an element of a kind outside the enumeration");
  return index;
}

std::vector<PathStep> SystemTree::path_of(std::uint64_t index, KindMask mask) const {
  require_canonical();
  if (index >= total(mask))
    throw std::out_of_range("index " + std::to_string(index) + " out of range (" + std::to_string(total(mask)) +
                            " elements)");
  std::vector<PathStep> path{{0, 0}};
  std::uint32_t r = 0;
  for (;;) {
    if (in_mask(records_[r].kind, mask)) {
      if (index == 0) return path;
      index -= 1;
    }
    const auto& ch = records_[r].children;
    // Last child whose block of elements starts at or before `index` and is not empty.
    auto it = std::upper_bound(ch.begin(), ch.end(), index,
                               [&](std::uint64_t i, std::uint32_t c) { return i < masked(prefix_[c], mask); });
    while (it != ch.begin() && masked(count_[*(it - 1)], mask) == 0) --it;
    if (it == ch.begin()) throw std::logic_error("inconsistent sequence counts");
    const auto c = *(it - 1);
    const auto per_copy = masked(count_[c], mask);
    const auto rel = index - masked(prefix_[c], mask);
    path.push_back({c, rel / per_copy});
    index = rel % per_copy;
    r = c;
  }
}

void SystemTree::paths_of(const std::uint64_t* indices, std::size_t n, KindMask mask, std::uint32_t* records,
                            std::uint64_t* copies) const {
  const std::size_t width = max_depth_ + 1;
  for (std::size_t i = 0; i < n; ++i) {
    const auto path = path_of(indices[i], mask);
    for (std::size_t l = 0; l < width; ++l) {
      records[i * width + l] = l < path.size() ? path[l].record : kNone;
      copies[i * width + l] = l < path.size() ? path[l].copy : std::numeric_limits<std::uint64_t>::max();
    }
  }
}

void SystemTree::ancestors_of(const std::uint64_t* indices, std::size_t n, KindMask from, std::uint32_t depth,
                                KindMask to, std::uint64_t* out) const {
  for (std::size_t i = 0; i < n; ++i) {
    auto path = path_of(indices[i], from);
    if (path.size() > depth + 1) path.resize(depth + 1);
    out[i] = index_of(path, to);
  }
}

// ------------------------------------------------------------------------------------------
// statistics and names

std::vector<std::uint64_t> SystemTree::multiplicities() const {
  require_canonical();
  std::vector<std::uint64_t> mult(records_.size());
  mult[0] = 1;
  for (std::size_t r = 1; r < records_.size(); ++r) mult[r] = mult[records_[r].parent] * records_[r].copies;
  return mult;
}

std::vector<std::pair<std::string, std::uint64_t>> SystemTree::counts_per_class() const {
  const auto mult = multiplicities();
  std::vector<std::uint64_t> per(classes_.size(), 0);
  std::vector<bool> used(classes_.size(), false);
  for (std::size_t r = 0; r < records_.size(); ++r) {
    per[records_[r].cls] += mult[r];
    used[records_[r].cls] = true;
  }
  std::vector<std::pair<std::string, std::uint64_t>> out;
  // In order of first appearance in preorder: machine, rack, ..., thread.
  std::vector<bool> done(classes_.size(), false);
  for (const auto& rec : records_)
    if (!done[rec.cls]) {
      done[rec.cls] = true;
      out.emplace_back(classes_[rec.cls], per[rec.cls]);
    }
  return out;
}

std::vector<std::uint64_t> SystemTree::counts_per_depth() const {
  const auto mult = multiplicities();
  std::vector<std::uint64_t> per(max_depth_ + 1, 0);
  for (std::size_t r = 0; r < records_.size(); ++r) per[records_[r].depth] += mult[r];
  return per;
}

std::vector<std::uint64_t> SystemTree::class_counts(std::uint32_t cls) const {
  std::vector<std::uint64_t> cc(records_.size(), 0);
  for (std::size_t r = records_.size(); r-- > 0;) {
    std::uint64_t sum = records_[r].cls == cls ? 1 : 0;
    for (auto c : records_[r].children) sum += records_[c].copies * cc[c];
    cc[r] = sum;
  }
  return cc;
}

std::string SystemTree::generated_name(const std::vector<PathStep>& path) const {
  index_of(path, kAllKinds);  // validates the path
  const Record& last = records_[path.back().record];
  std::uint64_t number = 0;
  // Subtrees rooted at a process or thread exist (the distributed algorithm ships them):
  // a location at the root is the first of its kind.
  if (last.kind == Kind::Location && last.parent != kNone) {
    for (auto s : records_[last.parent].children) {
      if (s == path.back().record) break;
      if (records_[s].cls == last.cls) number += records_[s].copies;
    }
    number += path.back().copy;
  } else {
    const auto cc = class_counts(last.cls);
    for (std::size_t l = 1; l < path.size(); ++l) {
      const Record& p = records_[path[l - 1].record];
      if (p.cls == last.cls) number += 1;
      for (auto s : p.children) {
        if (s == path[l].record) break;
        number += records_[s].copies * cc[s];
      }
      number += path[l].copy * cc[path[l].record];
    }
  }
  return classes_[last.cls] + " " + std::to_string(number);
}

// ------------------------------------------------------------------------------------------
// fold, expand, merge

SystemTree fold(const SingleNodeTree& tree, NameMap* node_names, KindMask name_kinds) {
  if (tree.size() == 0) throw std::invalid_argument("cannot fold an empty system tree");
  SystemTree seq;
  // Record i is element i: parents precede children in both.
  seq.add_root(tree.kind(0), tree.cls(0));
  for (std::uint32_t i = 1; i < tree.size(); ++i)
    seq.add_record(tree.parent(i), tree.kind(i), tree.cls(i), 1, tree.properties(i));
  if (!tree.properties(0).empty()) seq.records_[0].properties = tree.properties(0);
  detail::CanonicalTrace trace;
  seq.canonicalize_traced(node_names ? &trace : nullptr);
  if (node_names) {
    // An element's index is its parent's, plus one for the parent, plus the elements of the
    // earlier sibling groups, plus the earlier copies within its own group.
    std::vector<std::uint64_t> index(tree.size(), 0);
    for (std::uint32_t i = 0; i < tree.size(); ++i) {
      if (i > 0) {
        const auto g = trace.survivor[i];
        index[i] = index[tree.parent(i)] + 1 + trace.prefix_all[g] + trace.first_copy[i] * trace.count_all[g];
      }
      if (in_mask(tree.kind(i), name_kinds)) node_names->add(index[i], tree.name(i));
    }
  }
  return seq;
}

SingleNodeTree expand(const SystemTree& tree, const NameMap* names) {
  if (!tree.canonical()) throw std::logic_error("call canonicalize() before expanding");
  const auto& recs = tree.records();
  SingleNodeTree out;
  std::vector<std::uint64_t> running(tree.classes().size(), 0);  // global numbers per class
  std::uint64_t next_index = 0;
  auto name_of = [&](std::uint32_t r, std::uint64_t local_number) {
    const auto idx = next_index++;
    if (names)
      if (auto n = names->find(idx)) return std::string(*n);
    const Record& rec = recs[r];
    const auto number = rec.kind == Kind::Location ? local_number : running[rec.cls]++;
    return tree.classes()[rec.cls] + " " + std::to_string(number);
  };
  auto add = [&](std::uint32_t parent_elem, std::uint32_t r, std::uint64_t local_number) {
    const Record& rec = recs[r];
    const auto name = name_of(r, local_number);
    const auto e = parent_elem == SingleNodeTree::kNoParent ? out.add_root(rec.kind, tree.classes()[rec.cls], name)
                                                        : out.add_child(parent_elem, rec.kind,
                                                                        tree.classes()[rec.cls], name);
    for (const auto& [k, v] : rec.properties) out.set_property(e, k, v);
    return e;
  };
  struct Frame {
    std::uint32_t element, record;
    std::size_t child = 0;
    std::uint64_t copy = 0;
    std::vector<std::pair<std::uint32_t, std::uint64_t>> location_numbers;  // class -> next number
  };
  std::vector<Frame> stack;
  stack.push_back({add(SingleNodeTree::kNoParent, 0, 0), 0, 0, 0, {}});
  while (!stack.empty()) {
    Frame& f = stack.back();
    const auto& ch = recs[f.record].children;
    if (f.child == ch.size()) {
      stack.pop_back();
      continue;
    }
    const auto c = ch[f.child];
    std::uint64_t local = 0;
    if (recs[c].kind == Kind::Location) {
      auto it = std::find_if(f.location_numbers.begin(), f.location_numbers.end(),
                             [&](const auto& p) { return p.first == recs[c].cls; });
      if (it == f.location_numbers.end()) it = f.location_numbers.insert(it, {recs[c].cls, 0});
      local = it->second++;
    }
    if (++f.copy == recs[c].copies) {
      f.copy = 0;
      ++f.child;
    }
    const auto parent_element = f.element;  // `f` dies when the stack grows
    stack.push_back({add(parent_element, c, local), c, 0, 0, {}});
  }
  return out;
}

SystemTree merge(const SystemTree& a, const SystemTree& b) {
  if (!a.canonical() || !b.canonical()) throw std::logic_error("merge takes canonical trees");
  const Record &ra = a.record(0), &rb = b.record(0);
  if (ra.kind != rb.kind || a.class_name(0) != b.class_name(0) || ra.properties != rb.properties)
    throw std::invalid_argument("merge: the roots are different elements (" + a.class_name(0) + " vs " +
                                b.class_name(0) + ")");
  SystemTree out = a;
  for (auto c : rb.children) out.graft(0, b, c);
  out.canonicalize();
  return out;
}

}  // namespace cubescale::systree

namespace cubescale::systree {
namespace {
std::uint64_t varint_size(std::uint64_t v) {
  std::uint64_t n = 1;
  while (v >= 0x80) {
    v >>= 7;
    ++n;
  }
  return n;
}
std::uint64_t string_size(std::uint64_t length) { return varint_size(length) + length; }
// Sum over i in [begin, end) of the bytes of the name "<cls> <i>" with its length prefix.
std::uint64_t numbered_names_size(std::uint64_t cls_length, std::uint64_t begin, std::uint64_t end) {
  std::uint64_t total = 0;
  std::uint64_t digits = 1, low = 0, high = 10;
  while (begin < end) {
    while (begin >= high) {
      ++digits;
      low = high;
      high *= 10;
    }
    const auto stop = std::min(end, high);
    total += (stop - begin) * string_size(cls_length + 1 + digits);
    begin = stop;
  }
  (void)low;
  return total;
}
}  // namespace

std::uint64_t single_serialized_size(const SystemTree& tree) {
  // Header as in SingleNodeTree::serialize: magic, version, class table (in order of first use,
  // which preorder expansion reproduces), element count.
  std::vector<std::uint32_t> order_of_class(tree.classes().size(), SystemTree::kNone);
  std::uint32_t used = 0;
  for (const auto& rec : tree.records())
    if (order_of_class[rec.cls] == SystemTree::kNone) order_of_class[rec.cls] = used++;
  std::uint64_t bytes = 8 + 2 + varint_size(used);
  for (std::uint32_t c = 0; c < tree.classes().size(); ++c)
    if (order_of_class[c] != SystemTree::kNone) bytes += string_size(tree.classes()[c].size());
  bytes += varint_size(tree.total(kAllKinds));

  const auto mult = tree.multiplicities();
  std::vector<std::uint64_t> running(tree.classes().size(), 0);  // global numbers used so far
  for (std::uint32_t r = 0; r < tree.size(); ++r) {
    const Record& rec = tree.record(r);
    std::uint64_t children = 0;
    for (auto c : rec.children) children += tree.record(c).copies;
    std::uint64_t props = varint_size(rec.properties.size());
    for (const auto& [k, v] : rec.properties) props += string_size(k.size()) + string_size(v.size());
    bytes += mult[r] * (1 + varint_size(order_of_class[rec.cls]) + varint_size(children) + props);
    const auto cls_length = tree.classes()[rec.cls].size();
    if (rec.kind == Kind::Location && rec.parent != SystemTree::kNone) {
      // Numbered within the location group: this record continues after earlier siblings
      // of the same class, in every copy of the parent.
      std::uint64_t first = 0;
      for (auto s : tree.record(rec.parent).children) {
        if (s == r) break;
        if (tree.record(s).cls == rec.cls) first += tree.record(s).copies;
      }
      bytes += mult[rec.parent] * numbered_names_size(cls_length, first, first + rec.copies);
    } else {
      // Numbered across the tree; the numbers a class uses are contiguous from 0, so the
      // order in which records use them does not change the sum.
      bytes += numbered_names_size(cls_length, running[rec.cls], running[rec.cls] + mult[r]);
      running[rec.cls] += mult[r];
    }
  }
  return bytes;
}

}  // namespace cubescale::systree
