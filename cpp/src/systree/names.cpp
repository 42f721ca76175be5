#include "cubescale/systree/names.hpp"

#include <algorithm>

#include "cubescale/common/bytes.hpp"

namespace cubescale::systree {
namespace {
constexpr std::string_view kMagic = "CSNAMES1";
constexpr std::uint16_t kVersion = 1;
constexpr std::size_t kMaxName = 1u << 16;
}  // namespace

void NameMap::add(std::uint64_t index, std::string_view name) {
  if (!entries_.empty() && entries_.back().first >= index) sorted_ = false;
  entries_.emplace_back(index, std::string(name));
}

std::optional<std::uint64_t> NameMap::add_stream(std::string_view bytes, const std::string& source) {
  NameStreamReader reader(bytes, source);
  std::vector<std::pair<std::uint64_t, std::string>> chunk;
  std::optional<std::uint64_t> last;
  while (reader.next(chunk))
    for (auto& [index, name] : chunk) {
      add(index, name);
      last = index;
    }
  return last;
}

void NameMap::sort() const {
  if (sorted_) return;
  std::stable_sort(entries_.begin(), entries_.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  // The last name given for an index wins.
  std::vector<std::pair<std::uint64_t, std::string>> unique;
  unique.reserve(entries_.size());
  for (auto& e : entries_) {
    if (!unique.empty() && unique.back().first == e.first)
      unique.back() = std::move(e);
    else
      unique.push_back(std::move(e));
  }
  entries_ = std::move(unique);
  sorted_ = true;
}

const std::vector<std::pair<std::uint64_t, std::string>>& NameMap::entries() const {
  sort();
  return entries_;
}

std::optional<std::string_view> NameMap::find(std::uint64_t index) const {
  sort();
  auto it = std::lower_bound(entries_.begin(), entries_.end(), index,
                             [](const auto& e, std::uint64_t i) { return e.first < i; });
  if (it == entries_.end() || it->first != index) return std::nullopt;
  return std::string_view(it->second);
}

std::string NameMap::serialize(std::size_t chunk_entries) const {
  sort();
  if (chunk_entries == 0) chunk_entries = 1;
  ByteWriter w;
  w.header(kMagic, kVersion);
  std::uint64_t last = 0;
  for (std::size_t begin = 0; begin < entries_.size(); begin += chunk_entries) {
    const std::size_t end = std::min(entries_.size(), begin + chunk_entries);
    w.varint(end - begin);
    for (std::size_t i = begin; i < end; ++i) {
      // Indices ascend: store the gap (the first one absolute).
      w.varint(i == 0 ? entries_[i].first : entries_[i].first - last);
      w.string(entries_[i].second);
      last = entries_[i].first;
    }
  }
  w.varint(0);
  return w.take();
}

NameMap NameMap::deserialize(std::string_view bytes, const std::string& source) {
  NameMap map;
  NameStreamReader reader(bytes, source);
  std::vector<std::pair<std::uint64_t, std::string>> chunk;
  while (reader.next(chunk))
    for (auto& [i, n] : chunk) map.add(i, n);
  return map;
}

NameStreamReader::NameStreamReader(std::string_view bytes, std::string source)
    : bytes_(bytes), source_(std::move(source)) {
  ByteReader r(bytes_, source_, "names");
  r.expect_header(kMagic, kVersion, "name stream");
  offset_ = r.offset();
}

bool NameStreamReader::next(std::vector<std::pair<std::uint64_t, std::string>>& out) {
  out.clear();
  if (done_) return false;
  ByteReader r(bytes_.substr(offset_), source_, "names");
  const std::size_t base = offset_;
  try {
    // Each entry takes at least two bytes, which bounds the count by the bytes left.
    const auto n = r.varint_at_most(r.remaining() / 2, "name chunk size");
    if (n == 0) {
      done_ = true;
      return false;
    }
    out.reserve(n);
    for (std::uint64_t k = 0; k < n; ++k) {
      const std::size_t at = r.offset();
      const auto gap = r.varint();
      if (!first_ && gap == 0) r.fail_at(at, "name indices must ascend");
      if (!first_ && last_index_ + gap < last_index_) r.fail_at(at, "name index overflows");
      last_index_ = first_ ? gap : last_index_ + gap;
      first_ = false;
      out.emplace_back(last_index_, std::string(r.string(kMaxName)));
    }
  } catch (const FormatError& e) {
    throw FormatError(e.file(), e.member(), base + e.offset(), e.message());
  }
  offset_ = base + r.offset();
  return true;
}

}  // namespace cubescale::systree
