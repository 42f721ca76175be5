#include "cubescale/systree/simulate.hpp"

#include <algorithm>
#include <stdexcept>
#include <unordered_map>
#include <unordered_set>

#include "cubescale/systree/serialize.hpp"

namespace cubescale::systree::distributed {

// ------------------------------------------------------------------------------------------
// regular machines

RegularViews::RegularViews(const std::vector<Level>& levels) {
  std::size_t i = 0;
  for (; i < levels.size(); ++i) {
    path_.push_back(levels[i]);
    if (kind_of_class(levels[i].cls) == Kind::LocationGroup) break;
  }
  if (i == levels.size()) throw std::invalid_argument("a machine shape needs a process level");
  for (++i; i < levels.size(); ++i) {
    if (kind_of_class(levels[i].cls) != Kind::Location)
      throw std::invalid_argument("only locations may follow the process level, not '" + levels[i].cls + "'");
    locations_.push_back(levels[i]);
  }
  below_.assign(path_.size(), 1);
  for (std::size_t k = path_.size(); k-- > 0;) {
    below_[k] = k + 1 < path_.size() ? below_[k + 1] * path_[k + 1].count : 1;
  }
  ranks_ = below_[0] * path_[0].count;
}

SingleNodeTree RegularViews::view(std::uint64_t rank) const {
  if (rank >= ranks_) throw std::out_of_range("virtual rank out of range");
  SingleNodeTree tree;
  std::uint32_t parent = tree.add_root(Kind::Node, "machine", "machine");
  for (std::size_t k = 0; k < path_.size(); ++k) {
    const auto& level = path_[k];
    parent = tree.add_child(parent, kind_of_class(level.cls), level.cls,
                            level.cls + " " + std::to_string(rank / below_[k]));
  }
  for (const auto& level : locations_)
    for (std::uint64_t t = 0; t < level.count; ++t)
      tree.add_child(parent, Kind::Location, level.cls, level.cls + " " + std::to_string(t));
  return tree;
}

// ------------------------------------------------------------------------------------------
// the simulation

namespace {

struct Spine {
  std::vector<std::string> names;  // root first, process last
  std::vector<std::uint64_t> hashes;
};

Spine spine_of(const SingleNodeTree& view) {
  std::uint32_t process = SingleNodeTree::kNoParent;
  for (auto e : view.preorder())
    if (view.kind(e) == Kind::LocationGroup) {
      process = e;
      break;
    }
  if (process == SingleNodeTree::kNoParent) throw std::invalid_argument("a virtual rank's view has no process");
  Spine s;
  std::vector<std::uint32_t> up;
  for (auto e = process; e != SingleNodeTree::kNoParent; e = view.parent(e)) up.push_back(e);
  for (auto it = up.rbegin(); it != up.rend(); ++it) {
    s.names.emplace_back(view.name(*it));
    s.hashes.push_back(hash_name_path(name_path(view, *it)));
  }
  return s;
}

class Simulation {
 public:
  Simulation(const ViewSource& source, bool collect, std::string host_class)
      : source_(source), collect_(collect), host_class_(std::move(host_class)), ranks_(source.ranks()) {}

  SimulationResult run() {
    if (ranks_ == 0) throw std::invalid_argument("no virtual ranks");
    scan();
    if (collect_) {
      kept_.resize(ranks_);
      children_of_.resize(ranks_);
    }
    auto root = depth_[0] == 0 ? nullptr : run_group(0, 0);
    result_.tree = root->global_tree();
    finish(std::move(root), 0);
    result_.ranks = ranks_;
    result_.rounds = max_depth_;
    result_.naive_rank0_bytes = result_.naive_gathered_bytes + single_serialized_size(result_.tree) +
                                serialize(result_.tree).size();
    if (collect_) down_pass();
    return std::move(result_);
  }

 private:
  // One pass over the views: each rank's depth and the depth at which its path leaves its
  // predecessor's. An element seen again after it was left breaks block placement.
  void scan() {
    depth_.resize(ranks_);
    diverge_.resize(ranks_);
    Spine previous;
    std::unordered_set<std::uint64_t> closed;
    for (std::uint64_t r = 0; r < ranks_; ++r) {
      const SingleNodeTree view = source_.view(r);
      result_.naive_gathered_bytes += pack_view(view).size();
      Spine s = spine_of(view);
      const auto depth = static_cast<std::uint32_t>(s.names.size() - 1);
      if (depth > 255) throw std::invalid_argument("views deeper than 255 levels");
      std::uint32_t k = 0;
      if (r > 0) {
        while (k < s.names.size() && k < previous.names.size() && s.names[k] == previous.names[k]) ++k;
        if (k == 0) throw std::invalid_argument("virtual ranks disagree on the machine root");
        if (k > depth || k >= previous.names.size())
          throw std::invalid_argument("a process is an ancestor of another (duplicate process names?)");
        for (std::size_t d = k; d + 1 < previous.hashes.size(); ++d) closed.insert(previous.hashes[d]);
        for (std::size_t d = k; d < depth; ++d)
          if (closed.count(s.hashes[d]))
            throw std::invalid_argument("the ranks below an element must be consecutive (block placement); rank " +
                                        std::to_string(r) + " returns to " + s.names[d]);
      }
      depth_[r] = static_cast<std::uint8_t>(depth);
      diverge_[r] = static_cast<std::uint8_t>(k);
      max_depth_ = std::max(max_depth_, depth);
      previous = std::move(s);
    }
  }

  // The ranks holding the depth x+1 children of the depth-x element that begins at `lo`.
  std::vector<std::uint64_t> members(std::uint64_t lo, std::uint32_t x) const {
    std::vector<std::uint64_t> m{lo};
    for (std::uint64_t r = lo + 1; r < ranks_ && diverge_[r] > x; ++r)
      if (diverge_[r] == x + 1) m.push_back(r);
    return m;
  }

  // The state of the rank holding the depth-d element that begins at rank `lo`.
  std::unique_ptr<RankState> holder(std::uint64_t lo, std::uint32_t d) {
    if (depth_[lo] == d) return std::make_unique<RankState>(source_.view(lo), host_class_);
    return run_group(lo, d);
  }

  // Round x+1 for the depth-x element beginning at `lo`: returns its holder, promoted.
  std::unique_ptr<RankState> run_group(std::uint64_t lo, std::uint32_t x) {
    const auto m = members(lo, x);
    auto [root, payload] = reduce(m, 0, m.size(), x + 1);
    root->promote(x + 1);
    settle(*root, m[0], x + 1, {});
    return std::move(root);
  }

  // Settles round `round` below `state` (rank `rank`). Without collect the other members are
  // gone already and account for their part when dropped: only the group root settles here.
  void settle(RankState& state, std::uint64_t rank, std::uint32_t round, std::string_view from_parent) {
    const auto out = state.settle(round, from_parent);
    if (!collect_) return;
    const auto& kids = kids_in(rank, round);
    for (std::size_t c = 0; c < kids.size(); ++c) settle(*kept_[kids[c]], kids[c], round, out.at(c));
  }

  const std::vector<std::uint64_t>& kids_in(std::uint64_t rank, std::uint32_t round) const {
    const auto& all = children_of_[rank];
    return std::find_if(all.begin(), all.end(), [&](const auto& e) { return e.first == round; })->second;
  }

  // Member a of the spanning-tree range [a, b): the same shape as binary_tree_links.
  std::pair<std::unique_ptr<RankState>, std::string> reduce(const std::vector<std::uint64_t>& m, std::size_t a,
                                                            std::size_t b, std::uint32_t round) {
    auto me = holder(m[a], round);
    me->begin_up(round);
    const std::size_t rest = b - a - 1;
    const std::size_t mid = a + 1 + (rest + 1) / 2;
    std::vector<std::uint64_t> kids;
    auto child = [&](std::size_t c_lo, std::size_t c_hi) {
      auto [state, payload] = reduce(m, c_lo, c_hi, round);
      me->absorb(payload);
      kids.push_back(m[c_lo]);
      finish(std::move(state), m[c_lo]);
    };
    if (rest > 0) child(a + 1, mid);
    if (mid < b) child(mid, b);
    std::string merged = me->end_up(a == 0);
    if (collect_) children_of_[m[a]].emplace_back(round, std::move(kids));
    return {std::move(me), std::move(merged)};
  }

  // A rank whose up pass is over: keep it for the settle and down passes, or account for
  // its part in them and drop it.
  void finish(std::unique_ptr<RankState> state, std::uint64_t rank) {
    if (collect_) {
      kept_[rank] = std::move(state);
      return;
    }
    state->account_down_pass();
    add_stats(state->stats(), rank);
  }

  void add_stats(const RankStats& s, std::uint64_t rank) {
    result_.peak_bytes_max = std::max(result_.peak_bytes_max, s.peak_bytes);
    result_.peak_bytes_min = std::min(result_.peak_bytes_min, s.peak_bytes);
    if (rank == 0) result_.peak_bytes_rank0 = s.peak_bytes;
    result_.messages_max = std::max(result_.messages_max, s.messages_sent + s.messages_received);
    result_.bytes_max = std::max(result_.bytes_max, s.bytes_sent + s.bytes_received);
    result_.bytes_total += s.bytes_sent;
  }

  // With every rank kept: starts flow from parents (lower ranks) to children, round by round.
  void down_pass() {
    for (std::uint32_t d = 1; d <= max_depth_; ++d) {
      std::unordered_map<std::uint64_t, std::string> inbox;
      for (std::uint64_t r = 0; r < ranks_; ++r) {
        if (!kept_[r]->took_part(d)) continue;
        auto it = inbox.find(r);
        const auto out = kept_[r]->down(d, it == inbox.end() ? std::string_view() : std::string_view(it->second));
        const auto& kids = kids_in(r, d);
        for (std::size_t c = 0; c < kids.size(); ++c) inbox[kids[c]] = out.at(c);
      }
    }
    result_.location_offsets.push_back(0);
    for (std::uint64_t r = 0; r < ranks_; ++r) {
      const auto& s = *kept_[r];
      for (auto i : s.location_indices()) result_.location_indices.push_back(i);
      result_.location_offsets.push_back(result_.location_indices.size());
      result_.location_group_index.push_back(s.location_group_index());
      result_.responsible.push_back(s.responsible());
      add_stats(s.stats(), r);
    }
  }

  const ViewSource& source_;
  bool collect_;
  std::string host_class_;
  std::uint64_t ranks_;
  std::uint32_t max_depth_ = 0;
  std::vector<std::uint8_t> depth_, diverge_;
  std::vector<std::unique_ptr<RankState>> kept_;
  std::vector<std::vector<std::pair<std::uint32_t, std::vector<std::uint64_t>>>> children_of_;
  SimulationResult result_;
};

}  // namespace

SimulationResult simulate(const ViewSource& source, bool collect, const std::string& host_class) {
  return Simulation(source, collect, host_class).run();
}

}  // namespace cubescale::systree::distributed
