#include "cubescale/cube/system_member.hpp"

#include "cubescale/common/bytes.hpp"
#include "cubescale/cube/anchor_xml.hpp"
#include "cubescale/cube/text.hpp"
#include "cubescale/cube/xml.hpp"
#include "cubescale/systree/names.hpp"
#include "cubescale/systree/sequence.hpp"
#include "cubescale/systree/serialize.hpp"

namespace cubescale::cube {

namespace {

using systree::Kind;
constexpr std::string_view kMagic = "CUBESCALE.SYSTREE";

bool same_element(const systree::SingleNodeTree& a, const systree::SingleNodeTree& b, std::uint32_t e) {
  return a.kind(e) == b.kind(e) && a.parent(e) == b.parent(e) && a.cls(e) == b.cls(e) && a.name(e) == b.name(e) &&
         a.properties(e) == b.properties(e);
}

bool default_ranks(const Definitions& d) {
  for (std::size_t g = 0; g < d.group_rank.size(); ++g)
    if (d.group_rank[g] != static_cast<std::int64_t>(g)) return false;
  std::vector<std::int64_t> next(d.system.size(), 0);
  for (std::size_t l = 0; l < d.locations.size(); ++l)
    if (d.location_rank[l] != next[d.system.parent(d.locations[l])]++) return false;
  return true;
}

void fill_bookkeeping(Definitions& d) {
  d.location_groups.clear();
  d.locations.clear();
  for (std::uint32_t e = 0; e < d.system.size(); ++e) {
    if (d.system.kind(e) == Kind::LocationGroup) d.location_groups.push_back(e);
    else if (d.system.kind(e) == Kind::Location) d.locations.push_back(e);
  }
  d.location_file_id.resize(d.locations.size());
  for (std::size_t l = 0; l < d.locations.size(); ++l) d.location_file_id[l] = l;
}

// Whether anchor.xml spells every name, class and property as it is: else (xml_escape put
// U+FFFD in) the member would give our reader other names than every other reader sees.
bool xml_spells_all(const systree::SingleNodeTree& t) {
  for (std::uint32_t e = 0; e < t.size(); ++e) {
    if (!xml_can_hold(t.name(e)) || !xml_can_hold(t.cls(e))) return false;
    for (const auto& [k, v] : t.properties(e))
      if (!xml_can_hold(k) || !xml_can_hold(v)) return false;
  }
  return true;
}

}  // namespace

std::optional<std::string> encode_system_member(const Definitions& defs) {
  if (defs.system.size() == 0 || !xml_spells_all(defs.system)) return std::nullopt;
  for (std::size_t l = 0; l < defs.location_file_id.size(); ++l)
    if (defs.location_file_id[l] != l) return std::nullopt;
  systree::NameMap names;
  const auto seq = systree::fold(defs.system, &names, systree::kAllKinds);
  const auto expanded = systree::expand(seq, &names);
  if (expanded.size() != defs.system.size()) return std::nullopt;
  for (std::uint32_t e = 0; e < expanded.size(); ++e)
    if (!same_element(expanded, defs.system, e)) return std::nullopt;
  ByteWriter w;
  w.bytes(kMagic);
  w.u16(1);
  const auto tree = systree::serialize(seq);
  w.u64(tree.size());
  w.bytes(tree);
  const auto name_bytes = names.serialize();
  w.u64(name_bytes.size());
  w.bytes(name_bytes);
  const bool ranks = !default_ranks(defs);
  w.u8(ranks ? 1 : 0);
  if (ranks) {
    w.varint(defs.group_rank.size());
    for (auto r : defs.group_rank) w.varint(static_cast<std::uint64_t>(r));
    w.varint(defs.location_rank.size());
    for (auto r : defs.location_rank) w.varint(static_cast<std::uint64_t>(r));
  }
  return w.take();
}

void decode_system_member(std::string_view bytes, Definitions& defs, const std::string& file,
                          const SystemCounts& spelled) {
  ByteReader r(bytes, file, kSystemMember);
  if (r.remaining() < kMagic.size() || r.bytes(kMagic.size()) != kMagic) r.fail_at(0, "wrong magic");
  if (r.u16() != 1) r.fail("unsupported version");
  const auto tree_size = r.u64();
  if (tree_size > r.remaining()) r.fail("sequence tree size exceeds the member");
  const auto tree_at = r.offset();
  const auto seq = systree::deserialize(r.bytes(tree_size), file + ": " + kSystemMember + " @" + std::to_string(tree_at));
  const auto names_size = r.u64();
  if (names_size > r.remaining()) r.fail("name map size exceeds the member");
  const auto names = systree::NameMap::deserialize(r.bytes(names_size), file + ": " + kSystemMember);
  // A sequence tree stands for up to 2^62 elements. The ones it expands to are spelled out in
  // anchor.xml too (for other readers), which costs bytes per element: the two must agree, so
  // a few bytes of records cannot make the reader build a machine no file describes.
  const std::uint64_t counts[3] = {seq.total(systree::kLocations), seq.total(systree::kLocationGroups),
                                   seq.total(systree::kNodes)};
  const std::uint64_t in_xml[3] = {spelled.locations, spelled.groups, spelled.nodes};
  static const char* const kinds[3] = {"locations", "location groups", "system tree nodes"};
  for (int k = 0; k < 3; ++k)
    if (counts[k] != in_xml[k])
      r.fail_at(tree_at, "the sequence tree expands to " + std::to_string(counts[k]) + " " + kinds[k] + ", anchor.xml's <system> at byte " +
                             std::to_string(spelled.offset) + " spells out " + std::to_string(in_xml[k]));
  defs.system = systree::expand(seq, &names);
  for (std::uint32_t e = 0; e < defs.system.size(); ++e) {
    std::size_t bad = 0;
    bool ok = valid_utf8(defs.system.name(e), bad) && valid_utf8(defs.system.cls(e), bad);
    for (const auto& [k, v] : defs.system.properties(e)) ok = ok && valid_utf8(k, bad) && valid_utf8(v, bad);
    if (!ok) r.fail_at(tree_at, "system tree element " + std::to_string(e) + " has a name that is not UTF-8");
  }
  fill_bookkeeping(defs);
  const auto ranks_stored = r.u8();
  defs.group_rank.assign(defs.location_groups.size(), 0);
  defs.location_rank.assign(defs.locations.size(), 0);
  if (ranks_stored) {
    if (r.varint() != defs.group_rank.size()) r.fail("group rank count differs from the tree");
    for (auto& v : defs.group_rank) v = static_cast<std::int64_t>(r.varint());
    if (r.varint() != defs.location_rank.size()) r.fail("location rank count differs from the tree");
    for (auto& v : defs.location_rank) v = static_cast<std::int64_t>(r.varint());
  } else {
    for (std::size_t g = 0; g < defs.group_rank.size(); ++g) defs.group_rank[g] = static_cast<std::int64_t>(g);
    std::vector<std::int64_t> next(defs.system.size(), 0);
    for (std::size_t l = 0; l < defs.locations.size(); ++l) defs.location_rank[l] = next[defs.system.parent(defs.locations[l])]++;
  }
}

}  // namespace cubescale::cube
