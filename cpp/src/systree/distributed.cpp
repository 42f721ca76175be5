#include "cubescale/systree/distributed.hpp"

#include <algorithm>
#include <stdexcept>
#include <unordered_map>

#include "cubescale/common/bytes.hpp"
#include "cubescale/systree/serialize.hpp"

namespace cubescale::systree::distributed {
namespace {

constexpr std::uint8_t kPayloadVersion = 1;
constexpr std::string_view kViewMagic = "CSVIEW01";

Counts counts_of(const SystemTree& tree, std::uint32_t r) {
  return {tree.count(r, kNodes), tree.count(r, kLocationGroups), tree.count(r, kLocations)};
}

std::uint64_t total_of(const Counts& c) { return c[0] + c[1] + c[2]; }

// A tree whose root is a copy of element `e` of `view` (kind, class, properties).
SystemTree root_like(const SingleNodeTree& view, std::uint32_t e) {
  SystemTree tree;
  tree.add_root(view.kind(e), view.cls(e));
  if (!view.properties(e).empty()) tree.set_root_properties(view.properties(e));
  return tree;
}

// The subtree of `view` below and including `top`, as a new single-node tree. With
// `id_names`, every element is named by its position in the copy: fold() then reports
// where each element went, through its name map.
SingleNodeTree copy_subtree(const SingleNodeTree& view, std::uint32_t top, bool id_names) {
  SingleNodeTree out;
  struct Item {
    std::uint32_t from, to_parent;
  };
  std::vector<Item> stack{{top, SingleNodeTree::kNoParent}};
  while (!stack.empty()) {
    const Item it = stack.back();
    stack.pop_back();
    const std::string name = id_names ? std::to_string(out.size()) : std::string(view.name(it.from));
    const auto e = it.to_parent == SingleNodeTree::kNoParent
                       ? out.add_root(view.kind(it.from), view.cls(it.from), name)
                       : out.add_child(it.to_parent, view.kind(it.from), view.cls(it.from), name);
    for (const auto& [k, v] : view.properties(it.from)) out.set_property(e, k, v);
    const auto& ch = view.children(it.from);
    for (auto c = ch.rbegin(); c != ch.rend(); ++c) stack.push_back({*c, e});
  }
  return out;
}

// For every element of `single` (named by copy_subtree's ids), its index among the elements
// of the kinds in `mask` in fold(single); elements outside the mask get UINT64_MAX.
std::vector<std::uint64_t> folded_indices(const SingleNodeTree& single, const SystemTree& folded,
                                          const NameMap& ids, KindMask mask) {
  std::vector<std::uint64_t> out(single.size(), UINT64_MAX);
  for (const auto& [all_index, name] : ids.entries()) {
    const auto element = static_cast<std::uint32_t>(std::stoul(name));
    if (!in_mask(single.kind(element), mask)) continue;
    out.at(element) = folded.index_of(folded.path_of(all_index, kAllKinds), mask);
  }
  return out;
}

std::uint64_t varint_bytes(std::uint64_t v) {
  std::uint64_t n = 1;
  while (v >= 0x80) {
    v >>= 7;
    ++n;
  }
  return n;
}

// Offsets travel with fixed-width counts, so that a message's size depends only on how
// many records it describes: the simulation can then account for the down pass exactly.
std::uint64_t starts_message_bytes(std::size_t records) { return varint_bytes(records) + 24 * records; }

}  // namespace

// ------------------------------------------------------------------------------------------
// identities and the spanning tree

std::string name_path(const SingleNodeTree& view, std::uint32_t element) {
  std::vector<std::uint32_t> up;
  for (auto e = element; e != SingleNodeTree::kNoParent; e = view.parent(e)) up.push_back(e);
  ByteWriter w;
  for (auto it = up.rbegin(); it != up.rend(); ++it) w.string(view.name(*it));
  return w.take();
}

std::uint64_t hash_name_path(std::string_view path) { return collective::fnv1a(path); }

// ------------------------------------------------------------------------------------------
// payloads and merging

std::string Payload::pack() const {
  ByteWriter w;
  w.u8(kPayloadVersion);
  w.varint(held.size());
  for (const auto& h : held) w.string(h);
  w.bytes(serialize(tree));
  return w.take();
}

Payload Payload::unpack(std::string_view bytes) {
  ByteReader r(bytes, "", "systree payload");
  if (r.u8() != kPayloadVersion) r.fail_at(0, "unsupported payload version");
  Payload p;
  const auto n = r.varint_at_most(r.remaining(), "held names");
  p.held.reserve(n);
  for (std::uint64_t i = 0; i < n; ++i) p.held.emplace_back(r.string(r.remaining()));
  p.tree = deserialize(bytes.substr(r.offset()), "systree payload");
  return p;
}

Payload merge_payloads(const std::vector<const Payload*>& inputs, MergeState& state) {
  if (inputs.empty()) throw std::invalid_argument("merge_payloads needs at least one input");
  const SystemTree& first = inputs[0]->tree;
  const Record& root = first.record(0);
  Payload out;
  out.tree = first;
  std::vector<std::vector<std::uint32_t>> tops(inputs.size());
  tops[0] = root.children;
  for (std::size_t i = 1; i < inputs.size(); ++i) {
    const SystemTree& other = inputs[i]->tree;
    const Record& oroot = other.record(0);
    if (oroot.kind != root.kind || other.class_name(0) != first.class_name(0) || oroot.properties != root.properties)
      throw std::invalid_argument("payloads of one group must share their root element (" + first.class_name(0) +
                                  " vs " + other.class_name(0) + ")");
    for (auto c : oroot.children) tops[i].push_back(out.tree.graft(0, other, c));
  }
  const auto placement = out.tree.canonicalize();
  const auto& kids = out.tree.record(0).children;
  std::vector<std::uint32_t> position(out.tree.size(), SystemTree::kNone);
  for (std::uint32_t p = 0; p < kids.size(); ++p) position[kids[p]] = p;

  state = MergeState{};
  state.root_kind = root.kind;
  state.inputs.resize(inputs.size());
  for (std::size_t i = 0; i < inputs.size(); ++i)
    for (auto t : tops[i]) state.inputs[i].push_back({position.at(placement.at(t).record), placement[t].first_copy});
  for (auto k : kids) {
    state.per_copy.push_back(counts_of(out.tree, k));
    state.copies.push_back(out.tree.record(k).copies);
  }
  for (const auto* in : inputs) out.held.insert(out.held.end(), in->held.begin(), in->held.end());
  std::sort(out.held.begin(), out.held.end());
  out.held.erase(std::unique(out.held.begin(), out.held.end()), out.held.end());
  return out;
}

std::vector<Counts> MergeState::result_starts(const Counts& root) const {
  Counts s = root;
  s[static_cast<int>(root_kind)] += 1;  // the root precedes its children
  std::vector<Counts> out(per_copy.size());
  for (std::size_t p = 0; p < per_copy.size(); ++p) {
    out[p] = s;
    for (int k = 0; k < kKindCount; ++k) s[k] += copies[p] * per_copy[p][k];
  }
  return out;
}

std::vector<std::vector<Counts>> MergeState::input_starts(const std::vector<Counts>& result) const {
  if (result.size() != per_copy.size()) throw std::invalid_argument("offsets for a different merge");
  std::vector<std::vector<Counts>> out(inputs.size());
  for (std::size_t i = 0; i < inputs.size(); ++i)
    for (const auto& slot : inputs[i]) {
      Counts s = result.at(slot.position);
      for (int k = 0; k < kKindCount; ++k) s[k] += slot.first_copy * per_copy[slot.position][k];
      out[i].push_back(s);
    }
  return out;
}

MergeState MergeState::compose(const MergeState& earlier, const MergeState& latest) {
  if (latest.inputs.empty() || latest.inputs[0].size() != earlier.per_copy.size())
    throw std::invalid_argument("compose(): the latest merge did not take the earlier result as input 0");
  MergeState out;
  out.root_kind = latest.root_kind;
  out.per_copy = latest.per_copy;
  out.copies = latest.copies;
  // Copy f of an earlier record that landed at (P, F) is copy F + f of P: the copies of one
  // input record stay contiguous in every merge.
  for (const auto& in : earlier.inputs) {
    auto& mapped = out.inputs.emplace_back();
    for (const auto& slot : in) {
      const auto& via = latest.inputs[0].at(slot.position);
      mapped.push_back({via.position, via.first_copy + slot.first_copy});
    }
  }
  out.inputs.insert(out.inputs.end(), latest.inputs.begin() + 1, latest.inputs.end());
  return out;
}

std::string MergeState::pack() const {
  ByteWriter w;
  w.u8(static_cast<std::uint8_t>(root_kind));
  w.varint(per_copy.size());
  for (std::size_t p = 0; p < per_copy.size(); ++p) {
    w.varint(copies[p]);
    for (auto v : per_copy[p]) w.varint(v);
  }
  w.varint(inputs.size());
  for (const auto& in : inputs) {
    w.varint(in.size());
    for (const auto& slot : in) {
      w.varint(slot.position);
      w.varint(slot.first_copy);
    }
  }
  return w.take();
}

MergeState MergeState::unpack(std::string_view bytes) {
  ByteReader r(bytes, "", "merge state");
  MergeState m;
  const auto kind = r.u8();
  if (kind >= kKindCount) r.fail_at(0, "bad kind");
  m.root_kind = static_cast<Kind>(kind);
  const auto records = r.varint_at_most(r.remaining() / 4, "record count");
  for (std::uint64_t p = 0; p < records; ++p) {
    m.copies.push_back(r.varint());
    Counts c;
    for (auto& v : c) v = r.varint();
    m.per_copy.push_back(c);
  }
  m.inputs.resize(r.varint_at_most(r.remaining(), "input count"));
  for (auto& in : m.inputs) {
    in.resize(r.varint_at_most(r.remaining() / 2, "slot count"));
    for (auto& slot : in) {
      slot.position = static_cast<std::uint32_t>(r.varint_at_most(records ? records - 1 : 0, "position"));
      slot.first_copy = r.varint();
    }
  }
  return m;
}

std::string pack_starts(const std::vector<Counts>& starts) {
  ByteWriter w;
  w.varint(starts.size());
  for (const auto& s : starts)
    for (auto v : s) w.u64(v);
  return w.take();
}

std::vector<Counts> unpack_starts(std::string_view bytes) {
  ByteReader r(bytes, "", "systree offsets");
  const auto n = r.varint_at_most(r.remaining() / 24, "offset count");
  std::vector<Counts> out(n);
  for (auto& s : out)
    for (auto& v : s) v = r.u64();
  if (!r.at_end()) r.fail("trailing bytes after the offsets");
  return out;
}

// ------------------------------------------------------------------------------------------
// one rank

RankState::RankState(SingleNodeTree view, std::string host_class) : view_(std::move(view)) {
  if (view_.size() == 0) throw std::invalid_argument("empty local view");
  const auto order = view_.preorder();
  std::uint32_t process = SingleNodeTree::kNoParent;
  for (auto e : order)
    if (view_.kind(e) == Kind::LocationGroup) {
      process = e;
      break;
    }
  if (process == SingleNodeTree::kNoParent || process == 0)
    throw std::invalid_argument("the local view needs a process (location group) below its root");
  for (auto e = process; e != SingleNodeTree::kNoParent; e = view_.parent(e)) spine_.push_back(e);
  std::reverse(spine_.begin(), spine_.end());
  process_depth_ = view_.depth(process);
  holds_ = process_depth_;
  host_depth_ = process_depth_ - 1;
  for (std::uint32_t d = 0; d < process_depth_; ++d)
    if (view_.cls(spine_[d]) == host_class) host_depth_ = d;

  // Every location group and location must be the process's: only it is this rank's own.
  const auto sub = copy_subtree(view_, process, true);
  std::size_t own = 0;
  for (auto e : order) own += view_.kind(e) != Kind::Node;
  std::size_t in_sub = 0;
  for (std::uint32_t e = 0; e < sub.size(); ++e) in_sub += sub.kind(e) != Kind::Node;
  if (own != in_sub) throw std::invalid_argument("the local view has location groups or locations outside its process");

  NameMap ids;
  process_tree_ = fold(sub, &ids, kAllKinds);
  const auto index = folded_indices(sub, process_tree_, ids, kLocations);
  for (std::uint32_t e = 0; e < sub.size(); ++e)  // sub is numbered in preorder
    if (sub.kind(e) == Kind::Location) local_locations_.push_back(index[e]);
  rounds_.resize(process_depth_ + 1);
  starts_.resize(process_depth_ + 1);
}

std::string RankState::group_key(std::uint32_t round) const {
  if (round == 0 || round > process_depth_) throw std::out_of_range("no such round for this rank");
  return name_path(view_, spine_[round - 1]);
}

std::vector<std::string> RankState::held_entry(std::uint32_t depth) const {
  // Only children with siblings in the views can be confused with hardware that the group
  // root completes: a chain (machine > rack > node) needs no names, which keeps payloads
  // of regular machines constant in size.
  if (view_.children(spine_[depth - 1]).size() < 2) return {};
  return {std::string(view_.name(spine_[depth]))};
}

Payload RankState::initial_payload() const {
  Payload p;
  p.tree = root_like(view_, spine_[process_depth_ - 1]);
  p.tree.graft(0, process_tree_, 0);
  p.tree.canonicalize();
  p.held = held_entry(process_depth_);
  return p;
}

Payload RankState::completion_payload(std::uint32_t depth, const std::vector<std::string>& held) const {
  Payload p;
  p.tree = root_like(view_, spine_[depth]);
  for (auto c : view_.children(spine_[depth])) {
    if (c == spine_[depth + 1]) continue;
    if (std::binary_search(held.begin(), held.end(), std::string(view_.name(c)))) continue;
    const auto folded = fold(copy_subtree(view_, c, false));
    p.tree.graft(0, folded, 0);
  }
  p.tree.canonicalize();
  return p;
}

Payload RankState::promoted_payload(const Payload& merged_at) const {
  Payload p;
  const auto depth = holds_;  // already moved up to the promoted element
  p.tree = root_like(view_, spine_[depth - 1]);
  p.tree.graft(0, merged_at.tree, 0);
  p.tree.canonicalize();
  p.held = held_entry(depth);
  return p;
}

void RankState::observe(std::uint64_t transient) {
  stats_.peak_bytes = std::max<std::uint64_t>(stats_.peak_bytes, retained_ + transient);
}

void RankState::begin_up(std::uint32_t round) {
  if (round == 0 || round != holds_ || took_part(round))
    throw std::logic_error("begin_up(): this rank does not hold a depth-" + std::to_string(round) + " element");
  if (!payload_) payload_ = initial_payload();
  round_ = round;
  rounds_[round].merges.clear();
  stats_.rounds += 1;
  observe(payload_->pack().size());
}

void RankState::absorb(std::string_view child_payload) {
  if (round_ == 0 || !payload_) throw std::logic_error("absorb() outside an up pass");
  const Payload child = Payload::unpack(child_payload);
  MergeState state;
  Payload merged = merge_payloads({&*payload_, &child}, state);
  const std::uint64_t so_far = payload_->pack().size(), now = merged.pack().size();
  stats_.messages_received += 1;
  stats_.bytes_received += child_payload.size();
  std::string& kept = rounds_[round_].merges;
  std::string composed = kept.empty() ? state.pack() : MergeState::compose(MergeState::unpack(kept), state).pack();
  observe(so_far + child_payload.size() + now + composed.size());
  retained_ += composed.size();
  retained_ -= kept.size();
  kept = std::move(composed);
  rounds_[round_].children += 1;
  payload_ = std::move(merged);
}

std::string RankState::end_up(bool is_group_root) {
  if (round_ == 0 || !payload_) throw std::logic_error("end_up() outside an up pass");
  Round& r = rounds_[round_];
  r.group_root = is_group_root;
  r.took_part = true;
  std::string packed = payload_->pack();
  if (!is_group_root) {
    stats_.messages_sent += 1;
    stats_.bytes_sent += packed.size();
    payload_.reset();  // sent: this rank's part of the up pass is over
  }
  round_ = 0;
  return packed;
}

std::string RankState::up(std::uint32_t round, const std::vector<std::string>& children, bool is_group_root) {
  begin_up(round);
  for (const auto& c : children) absorb(c);
  return end_up(is_group_root);
}

void RankState::promote(std::uint32_t round) {
  if (round != holds_ || !payload_ || !took_part(round) || !rounds_[round].group_root)
    throw std::logic_error("promote(): only a group root promotes, after its up()");
  Payload merged = std::move(*payload_);
  payload_.reset();
  const auto parent_depth = round - 1;
  const Payload missing = completion_payload(parent_depth, merged.held);
  Round& r = rounds_[round];
  // Without missing children the merged payload simply moves on: counted once.
  std::uint64_t transient = merged.pack().size();
  Payload completed;
  if (missing.tree.record(0).children.empty()) {
    completed = std::move(merged);
  } else {
    MergeState state;
    completed = merge_payloads({&merged, &missing}, state);
    r.completion = state.pack();
    retained_ += r.completion.size();
    transient += missing.pack().size() + completed.pack().size();
  }
  holds_ = parent_depth;
  if (parent_depth == 0) {
    root_tree_ = std::move(completed.tree);
    observe(transient);
    return;
  }
  payload_ = promoted_payload(completed);
  observe(transient + payload_->pack().size());
}

std::uint64_t RankState::round_bytes(const Round& r) {
  return r.completion.size() + r.merges.size();
}

std::size_t RankState::result_records(const Round& r) const {
  if (!r.merges.empty()) return MergeState::unpack(r.merges).per_copy.size();
  return 1;  // its own payload: exactly its element
}

void RankState::release_merges(Round& r) {
  retained_ -= round_bytes(r);
  std::string().swap(r.merges);
  std::string().swap(r.completion);
  r.settled = true;
  retained_ += kWithinBytes;
}

// The group root's offsets for the records of its merged payload, relative to the start of
// N (the element it promoted to): N itself first, then unheld children the completion added.
std::vector<Counts> RankState::group_root_starts(std::uint32_t round, const Round& r) const {
  const Counts start_of_n{};
  if (!r.completion.empty()) {
    const auto completion = MergeState::unpack(r.completion);
    return completion.input_starts(completion.result_starts(start_of_n))[0];
  }
  if (!r.merges.empty()) return MergeState::unpack(r.merges).result_starts(start_of_n);
  Counts s = start_of_n;
  s[static_cast<int>(view_.kind(spine_[round - 1]))] += 1;
  return {s};
}

std::vector<std::string> RankState::settle(std::uint32_t round, std::string_view from_parent) {
  if (!took_part(round)) throw std::logic_error("settle(): this rank took no part in round " + std::to_string(round));
  Round& r = rounds_[round];
  if (r.settled) throw std::logic_error("settle(): round " + std::to_string(round) + " is settled already");
  if (r.group_root && holds_ >= round) throw std::logic_error("settle(): the group root settles after promote()");
  std::vector<Counts> result;
  if (r.group_root) {
    result = group_root_starts(round, r);
  } else {
    result = unpack_starts(from_parent);
  }
  if (result.size() != result_records(r)) throw std::invalid_argument("offsets for a different payload");
  // Without merges the rank's own payload is the result; else the composed state places
  // its own and every child's records in it.
  const std::optional<MergeState> merges =
      r.merges.empty() ? std::nullopt : std::optional<MergeState>(MergeState::unpack(r.merges));
  const auto per_input = merges ? merges->input_starts(result) : std::vector<std::vector<Counts>>{std::move(result)};
  if (per_input[0].size() != 1) throw std::logic_error("a rank's own payload holds exactly one element");
  r.within = per_input[0][0];
  std::vector<std::string> out;
  std::uint64_t out_bytes = 0;
  for (std::size_t c = 1; c < per_input.size(); ++c) {
    out.push_back(pack_starts(per_input[c]));
    out_bytes += out.back().size();
  }
  count_settle(r, from_parent.size(), out_bytes);
  return out;
}

std::vector<std::string> RankState::down(std::uint32_t round, std::string_view from_parent) {
  if (!took_part(round)) throw std::logic_error("down(): this rank took no part in round " + std::to_string(round));
  Round& r = rounds_[round];
  if (!r.settled || r.done) throw std::logic_error("down(): round " + std::to_string(round) + " is not settled or is over");
  Counts start_of_n{};
  if (r.group_root) {
    if (round > 1) start_of_n = starts_.at(round - 1).value();
  } else {
    const auto received = unpack_starts(from_parent);
    if (received.size() != 1) throw std::invalid_argument("down(): expected the start of one element");
    start_of_n = received[0];
  }
  Counts start = start_of_n;
  for (int k = 0; k < kKindCount; ++k) start[k] += r.within[k];
  starts_[round] = start;
  const std::string message = pack_starts({start_of_n});
  count_down(r, from_parent.size(), message.size());
  return std::vector<std::string>(r.children, message);
}

// The bookkeeping of settling a round and of its down pass, shared by the passes run with
// values and by account_down_pass(), so that both count alike. `in`: bytes received (none
// for a group root); settling sends `out` bytes in all, the down pass one `message` to
// each child.
void RankState::count_settle(Round& r, std::uint64_t in, std::uint64_t out) {
  if (!r.group_root) {
    stats_.messages_received += 1;
    stats_.bytes_received += in;
  }
  stats_.messages_sent += r.children;
  stats_.bytes_sent += out;
  observe((r.group_root ? 0 : in) + out + kWithinBytes);
  release_merges(r);
}

void RankState::count_down(Round& r, std::uint64_t in, std::uint64_t message) {
  if (!r.group_root) {
    stats_.messages_received += 1;
    stats_.bytes_received += in;
  }
  stats_.messages_sent += r.children;
  stats_.bytes_sent += r.children * message;
  observe((r.group_root ? 0 : in) + r.children * message);
  retained_ -= kWithinBytes;
  r.done = true;
}

bool RankState::took_part(std::uint32_t round) const {
  return round > 0 && round < rounds_.size() && rounds_[round].took_part;
}

void RankState::account_down_pass() {
  // Settling the round it was absorbed in (its group roots settled the others for real).
  for (std::uint32_t round = 1; round < rounds_.size(); ++round) {
    Round& r = rounds_[round];
    if (!r.took_part || r.settled) continue;
    std::uint64_t out = 0;
    if (!r.merges.empty()) {
      const auto merges = MergeState::unpack(r.merges);
      for (std::size_t c = 1; c < merges.inputs.size(); ++c) out += starts_message_bytes(merges.inputs[c].size());
    }
    count_settle(r, starts_message_bytes(result_records(r)), out);
  }
  for (std::uint32_t round = 1; round < rounds_.size(); ++round) {
    Round& r = rounds_[round];
    if (r.took_part && !r.done) count_down(r, starts_message_bytes(1), starts_message_bytes(1));
  }
}

const SystemTree& RankState::global_tree() const {
  if (!root_tree_) throw std::logic_error("only the rank holding the root has the global tree");
  return *root_tree_;
}

Counts RankState::element_start(std::uint32_t depth) const {
  if (depth >= starts_.size() || !starts_[depth]) {
    if (depth == 0 && root_tree_) return {0, 0, 0};
    throw std::logic_error("the start of that element is not known on this rank (down pass missing?)");
  }
  return *starts_[depth];
}

std::vector<std::uint64_t> RankState::location_indices() const {
  const auto start = element_start(process_depth_)[static_cast<int>(Kind::Location)];
  std::vector<std::uint64_t> out(local_locations_);
  for (auto& v : out) v += start;
  return out;
}

std::uint64_t RankState::location_group_index() const {
  return element_start(process_depth_)[static_cast<int>(Kind::LocationGroup)];
}

bool RankState::responsible() const { return holds_ <= host_depth_; }

std::vector<std::pair<std::uint64_t, std::string>> RankState::held_names(const std::vector<std::string>& classes) const {
  std::vector<std::pair<std::uint64_t, std::string>> out;
  for (std::uint32_t d = holds_; d <= process_depth_; ++d) {
    const auto e = spine_[d];
    if (std::find(classes.begin(), classes.end(), view_.cls(e)) == classes.end()) continue;
    out.emplace_back(total_of(element_start(d)), std::string(view_.name(e)));
  }
  // This rank's locations are leaves right below its process: they follow it in preorder.
  const auto process = spine_[process_depth_];
  auto index = total_of(element_start(process_depth_));
  for (const auto child : view_.children(process)) {
    ++index;
    if (std::find(classes.begin(), classes.end(), view_.cls(child)) != classes.end())
      out.emplace_back(index, std::string(view_.name(child)));
  }
  return out;
}

// ------------------------------------------------------------------------------------------
// name streams

namespace {
std::vector<std::pair<std::uint64_t, std::string>> read_chunks(std::string_view bytes) {
  std::vector<std::pair<std::uint64_t, std::string>> all, chunk;
  NameStreamReader reader(bytes, "name chunk");
  while (reader.next(chunk)) all.insert(all.end(), chunk.begin(), chunk.end());
  return all;
}
}  // namespace

std::string merge_name_chunks(std::string_view a, std::string_view b, std::size_t limit) {
  const auto x = read_chunks(a), y = read_chunks(b);
  NameMap out;
  std::size_t i = 0, j = 0;
  while (out.size() < limit && (i < x.size() || j < y.size())) {
    const bool take_x = j == y.size() || (i < x.size() && x[i].first < y[j].first);
    const auto& e = take_x ? x[i++] : y[j++];
    out.add(e.first, e.second);
  }
  return out.serialize(limit == 0 ? 1 : limit);
}

std::string name_chunk_after(const std::vector<std::pair<std::uint64_t, std::string>>& entries,
                             std::optional<std::uint64_t> after, std::size_t limit) {
  auto sorted = entries;
  std::sort(sorted.begin(), sorted.end());
  NameMap out;
  for (const auto& [index, name] : sorted) {
    if (out.size() == limit) break;
    if (!after || index > *after) out.add(index, name);
  }
  return out.serialize(limit == 0 ? 1 : limit);
}

// ------------------------------------------------------------------------------------------
// naive baseline

std::string pack_view(const SingleNodeTree& view) {
  ByteWriter w;
  w.bytes(kViewMagic);
  w.varint(view.size());
  for (std::uint32_t e = 0; e < view.size(); ++e) {
    w.varint(e == 0 ? 0 : std::uint64_t(view.parent(e)) + 1);
    w.u8(static_cast<std::uint8_t>(view.kind(e)));
    w.string(view.cls(e));
    w.string(view.name(e));
    const auto& props = view.properties(e);
    w.varint(props.size());
    for (const auto& [k, v] : props) {
      w.string(k);
      w.string(v);
    }
  }
  return w.take();
}

SingleNodeTree unpack_view(std::string_view bytes) {
  ByteReader r(bytes, "", "systree view");
  if (r.bytes(kViewMagic.size()) != kViewMagic) r.fail_at(0, "not a packed system tree view");
  const auto n = r.varint_at_most(r.remaining() / 4, "element count");
  SingleNodeTree view;
  for (std::uint64_t e = 0; e < n; ++e) {
    const auto at = r.offset();
    const auto parent = r.varint_at_most(e, "parent");
    const auto kind_byte = r.u8();
    if (kind_byte >= kKindCount) r.fail_at(at, "bad kind");
    const auto kind = static_cast<Kind>(kind_byte);
    const std::string cls(r.string(r.remaining()));
    const std::string name(r.string(r.remaining()));
    if ((e == 0) != (parent == 0)) r.fail_at(at, "exactly the first element is the root");
    const auto id = e == 0 ? view.add_root(kind, cls, name)
                           : view.add_child(static_cast<std::uint32_t>(parent - 1), kind, cls, name);
    const auto props = r.varint_at_most(r.remaining() / 2, "property count");
    for (std::uint64_t p = 0; p < props; ++p) {
      const std::string k(r.string(r.remaining()));
      view.set_property(id, k, r.string(r.remaining()));
    }
  }
  return view;
}

NaiveResult naive_build(const std::vector<std::string_view>& packed_views, const std::string& host_class,
                        const std::vector<std::string>& name_classes) {
  NaiveResult result;
  SingleNodeTree uni;  // elements named by their id, for fold()'s name map
  std::vector<std::string> real_name;
  std::vector<std::uint64_t> first_rank;
  std::unordered_map<std::string, std::uint32_t> by_identity;  // parent id + name -> element
  std::vector<std::uint32_t> process_of(packed_views.size());
  std::vector<std::uint32_t> host_of(packed_views.size());
  std::vector<std::uint32_t> locations;
  result.location_offsets.push_back(0);
  std::uint64_t gathered = 0;

  for (std::size_t rank = 0; rank < packed_views.size(); ++rank) {
    gathered += packed_views[rank].size();
    const SingleNodeTree view = unpack_view(packed_views[rank]);
    std::vector<std::uint32_t> to_union(view.size());
    std::uint32_t process = SingleNodeTree::kNoParent;
    for (auto e : view.preorder()) {
      const auto parent = e == 0 ? SingleNodeTree::kNoParent : to_union[view.parent(e)];
      std::string key(reinterpret_cast<const char*>(&parent), sizeof parent);
      key.append(view.name(e));
      auto [it, inserted] = by_identity.try_emplace(std::move(key), 0);
      if (inserted) {
        const auto id = std::to_string(uni.size());
        it->second = parent == SingleNodeTree::kNoParent ? uni.add_root(view.kind(e), view.cls(e), id)
                                                     : uni.add_child(parent, view.kind(e), view.cls(e), id);
        for (const auto& [k, v] : view.properties(e)) uni.set_property(it->second, k, v);
        real_name.emplace_back(view.name(e));
        first_rank.push_back(rank);
      }
      to_union[e] = it->second;
      if (view.kind(e) == Kind::LocationGroup && process == SingleNodeTree::kNoParent) process = e;
      if (view.kind(e) == Kind::Location) locations.push_back(it->second);
    }
    if (process == SingleNodeTree::kNoParent) throw std::invalid_argument("a view has no process");
    process_of[rank] = to_union[process];
    std::uint32_t host = view.parent(process);
    for (auto e = view.parent(process); e != SingleNodeTree::kNoParent; e = view.parent(e))
      if (view.cls(e) == host_class) {
        host = e;
        break;
      }
    host_of[rank] = to_union[host];
    result.location_offsets.push_back(locations.size());
  }

  NameMap ids;
  result.tree = fold(uni, &ids, kAllKinds);
  std::vector<std::uint64_t> all_index(uni.size());
  for (const auto& [index, name] : ids.entries()) all_index[std::stoul(name)] = index;
  auto index_in = [&](std::uint32_t element, KindMask mask) {
    return result.tree.index_of(result.tree.path_of(all_index[element], kAllKinds), mask);
  };
  result.location_indices.reserve(locations.size());
  for (auto l : locations) result.location_indices.push_back(index_in(l, kLocations));
  for (std::size_t rank = 0; rank < packed_views.size(); ++rank) {
    result.location_group_index.push_back(index_in(process_of[rank], kLocationGroups));
    result.responsible.push_back(first_rank[host_of[rank]] == rank);
  }
  for (std::uint32_t e = 0; e < uni.size(); ++e)
    if (std::find(name_classes.begin(), name_classes.end(), uni.cls(e)) != name_classes.end())
      result.names.add(all_index[e], real_name[e]);
  result.peak_bytes = gathered + uni.serialize().size() + serialize(result.tree).size();
  return result;
}

}  // namespace cubescale::systree::distributed
