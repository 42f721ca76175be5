#include "cubescale/profile/unify.hpp"

#include <algorithm>
#include <chrono>
#include <numeric>
#include <stdexcept>

#include "cubescale/collective/spanning_tree.hpp"
#include "cubescale/common/bytes.hpp"

namespace cubescale::profile {

namespace {

constexpr std::string_view kMapMagic = "CSIDMAP";

// Position of each cnode in the INCLUSIVE row order ("wide": a root, then all children of a
// node before descending), from the call tree's parents alone.
std::vector<std::uint32_t> wide_positions(const std::vector<std::uint32_t>& parents) {
  cube::Definitions tree;
  tree.cnodes.resize(parents.size());
  for (std::size_t c = 0; c < parents.size(); ++c) tree.cnodes[c].parent = parents[c];
  const auto order = cube::wide_order(tree);
  std::vector<std::uint32_t> position(order.size());
  for (std::size_t p = 0; p < order.size(); ++p) position[order[p]] = static_cast<std::uint32_t>(p);
  return position;
}

void write_array(ByteWriter& w, const std::vector<std::uint32_t>& v) {
  w.varint(v.size());
  for (auto x : v) w.u32(x);
}

std::vector<std::uint32_t> read_array(ByteReader& r) {
  const auto n = r.varint_at_most(r.remaining() / 4, "map length");
  std::vector<std::uint32_t> v(n);
  for (auto& x : v) x = r.u32();
  return v;
}

}  // namespace

UnifyState::UnifyState(const LocalProfile& profile) {
  profile.validate();
  merged_ = canonical_set(profile, local_to_set_);
  IdMaps own;  // the own set is the merged set so far
  own.metrics.resize(merged_.metrics.size());
  own.regions.resize(merged_.regions.size());
  own.cnodes.resize(merged_.cnode_parents.size());
  for (auto* v : {&own.metrics, &own.regions, &own.cnodes}) std::iota(v->begin(), v->end(), 0u);
  inputs_.push_back(std::move(own));
  hold(merged_.pack().size());
}

void UnifyState::hold(std::uint64_t bytes) {
  held_ = bytes;
  stats_.peak_bytes = std::max(stats_.peak_bytes, held_);
}

void UnifyState::absorb(std::string_view child_set) {
  if (ended_) throw std::logic_error("absorb after end_up");
  stats_.messages_received += 1;
  stats_.bytes_received += child_set.size();
  auto child = DefinitionSet::unpack(child_set, "child's definitions");
  hold(held_ + child_set.size());
  Merged m = merge(merged_, child);
  for (auto& input : inputs_) {
    input.metrics = compose(input.metrics, m.from_a.metrics);
    input.regions = compose(input.regions, m.from_a.regions);
    input.cnodes = compose(input.cnodes, m.from_a.cnodes);
  }
  inputs_.push_back(std::move(m.from_b));
  merged_ = std::move(m.set);
  hold(merged_.pack().size() + 12 * merged_.cnode_parents.size());
}

std::string UnifyState::end_up(bool is_root) {
  if (ended_) throw std::logic_error("end_up twice");
  ended_ = true;
  root_ = is_root;
  if (is_root) {
    // Only the whole tree knows each call path's first visit: the root orders siblings by it
    // (the same order for any number of ranks, since the minimum is taken along the way).
    std::vector<std::uint32_t> to_presented;
    merged_ = presented_by_first_visit(merged_, to_presented);
    for (auto& input : inputs_) input.cnodes = compose(input.cnodes, to_presented);
    return {};
  }
  auto packed = merged_.pack();
  stats_.messages_sent += 1;
  stats_.bytes_sent += packed.size();
  return packed;
}

const DefinitionSet& UnifyState::global() const {
  if (!root_) throw std::logic_error("only the root holds the global definitions");
  return merged_;
}

std::string UnifyState::pack_maps(const Maps& maps) {
  ByteWriter w;
  w.header(kMapMagic, 1);
  write_array(w, maps.metrics);
  write_array(w, maps.cnodes);
  write_array(w, maps.wide);
  return w.take();
}

UnifyState::Maps UnifyState::unpack_maps(std::string_view bytes) {
  ByteReader r(bytes, "parent's maps", "id map");
  r.expect_header(kMapMagic, 1, "id map");
  Maps m;
  m.metrics = read_array(r);
  m.cnodes = read_array(r);
  m.wide = read_array(r);
  return m;
}

std::vector<std::string> UnifyState::down(std::string_view from_parent) {
  if (!ended_ || down_done_) throw std::logic_error("down before end_up, or twice");
  down_done_ = true;
  Maps to_global;  // merged_ -> global
  if (root_) {
    to_global.metrics.resize(merged_.metrics.size());
    to_global.cnodes.resize(merged_.cnode_parents.size());
    std::iota(to_global.metrics.begin(), to_global.metrics.end(), 0u);
    std::iota(to_global.cnodes.begin(), to_global.cnodes.end(), 0u);
    to_global.wide = wide_positions(merged_.cnode_parents);
  } else {
    stats_.messages_received += 1;
    stats_.bytes_received += from_parent.size();
    to_global = unpack_maps(from_parent);
    if (to_global.metrics.size() != merged_.metrics.size() || to_global.cnodes.size() != merged_.cnode_parents.size() ||
        to_global.wide.size() != to_global.cnodes.size())
      throw FormatError("parent's maps", "id map", 0, "maps do not match the definitions sent up");
  }
  const auto through = [&](const IdMaps& input) {
    Maps out;
    out.metrics = compose(input.metrics, to_global.metrics);
    out.cnodes = compose(input.cnodes, to_global.cnodes);
    out.wide = compose(input.cnodes, to_global.wide);
    return out;
  };
  const Maps own = through(inputs_[0]);
  local_metric_ = compose(local_to_set_.metrics, own.metrics);
  local_cnode_ = compose(local_to_set_.cnodes, own.cnodes);
  local_wide_ = compose(local_to_set_.cnodes, own.wide);
  std::vector<std::string> out;
  for (std::size_t k = 1; k < inputs_.size(); ++k) {
    out.push_back(pack_maps(through(inputs_[k])));
    stats_.messages_sent += 1;
    stats_.bytes_sent += out.back().size();
  }
  // What stays is the global set at the root (the writer needs it) and the local maps.
  if (!root_) merged_ = DefinitionSet{};
  inputs_.clear();
  return out;
}

UnifiedInProcess unify_in_process(const std::vector<const LocalProfile*>& profiles) {
  const int size = static_cast<int>(profiles.size());
  if (size == 0) throw std::invalid_argument("no profiles");
  std::vector<UnifyState> states;
  states.reserve(profiles.size());
  for (const auto* p : profiles) states.emplace_back(*p);
  std::vector<collective::TreeLinks> links;
  for (int r = 0; r < size; ++r) links.push_back(collective::binary_tree_links(r, size));
  // Children have higher ranks than their parents: the up pass runs from the last rank down.
  using Clock = std::chrono::steady_clock;
  const auto seconds = [](Clock::time_point a) { return std::chrono::duration<double>(Clock::now() - a).count(); };
  std::vector<std::string> sent(size);
  std::vector<double> up_done(size, 0.0);  // when a rank's up pass could end, one core per rank
  UnifiedInProcess out;
  for (int r = size - 1; r >= 0; --r) {
    const auto start = Clock::now();
    double ready = 0;
    for (int c : links[r].children) {
      states[r].absorb(sent[c]);
      ready = std::max(ready, up_done[c]);
    }
    sent[r] = states[r].end_up(r == 0);
    const double own = seconds(start);
    up_done[r] = ready + own;
    out.total_seconds += own;
  }
  std::vector<std::string> from_parent(size);
  std::vector<double> down_done(size, 0.0);
  down_done[0] = up_done[0];
  for (int r = 0; r < size; ++r) {
    const auto start = Clock::now();
    auto messages = states[r].down(from_parent[r]);
    const double own = seconds(start);
    out.total_seconds += own;
    down_done[r] += own;
    for (std::size_t k = 0; k < messages.size(); ++k) {
      from_parent[links[r].children[k]] = std::move(messages[k]);
      down_done[links[r].children[k]] = down_done[r];
    }
  }
  out.critical_path_seconds = *std::max_element(down_done.begin(), down_done.end());
  out.global = states[0].global();
  for (auto& s : states) {
    out.max_bytes_received = std::max(out.max_bytes_received, s.stats().bytes_received);
    out.metric_maps.push_back(s.metric_map());
    out.cnode_maps.push_back(s.cnode_map());
    out.wide_positions.push_back(s.cnode_wide_position());
  }
  while ((std::uint64_t(1) << out.rounds) - 1 < std::uint64_t(size)) ++out.rounds;  // levels of the tree
  return out;
}

}  // namespace cubescale::profile
