#include "cubescale/profile/collate.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "cubescale/common/bytes.hpp"
#include "cubescale/common/format_error.hpp"

namespace cubescale::profile {

namespace {

bool row_nonzero(const std::uint8_t* row, std::size_t bytes) {
  for (std::size_t i = 0; i < bytes; ++i)
    if (row[i]) return true;
  return false;
}

void put_u32(std::string& out, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

std::uint32_t get_u32(std::string_view s, std::size_t at) {
  std::uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= std::uint32_t(static_cast<std::uint8_t>(s[at + i])) << (8 * i);
  return v;
}

}  // namespace

RowSource::RowSource(const LocalProfile& profile, const std::vector<std::uint32_t>& metric_map,
                     const std::vector<std::uint32_t>& cnode_map, const std::vector<std::uint32_t>& wide_position,
                     std::uint64_t first_location)
    : profile_(profile), first_location_(first_location) {
  if (metric_map.size() != profile.metrics.size() || cnode_map.size() != profile.cnode_count() ||
      wide_position.size() != profile.cnode_count())
    throw std::invalid_argument("maps do not match the profile");
  std::uint32_t metrics = 0;
  for (auto g : metric_map) metrics = std::max(metrics, g + 1);
  local_metric_.assign(metrics, -1);
  rows_.resize(metrics);
  // One pass over the values: which rows are non-zero, and where they go in the file.
  for (std::size_t m = 0; m < profile.metrics.size(); ++m) {
    const auto& values = profile.values[m];
    const bool inclusive = profile.metrics[m].kind == cube::MetricKind::Inclusive;
    auto& rows = rows_[metric_map[m]];
    local_metric_[metric_map[m]] = static_cast<std::int64_t>(m);
    for (std::uint32_t c = 0; c < values.cnodes(); ++c) {
      if (row_nonzero(values.row(c), values.row_bytes()))
        rows.push_back({inclusive ? wide_position[c] : cnode_map[c], c});
    }
    std::sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) { return a.position < b.position; });
  }
}

bool RowSource::nonzero(std::uint32_t global_metric, std::uint32_t position) const {
  if (global_metric >= rows_.size()) return false;
  const auto& rows = rows_[global_metric];
  auto it = std::lower_bound(rows.begin(), rows.end(), position, [](const Row& r, std::uint32_t p) { return r.position < p; });
  return it != rows.end() && it->position == position;
}

std::string RowSource::block(std::uint32_t global_metric, std::uint32_t p0, std::uint32_t p1, std::uint64_t c0,
                             std::uint64_t c1) const {
  if (global_metric >= rows_.size() || local_metric_[global_metric] < 0) return {};
  const auto& values = profile_.values[local_metric_[global_metric]];
  const std::uint64_t lo = std::max(c0, first_location_), hi = std::min(c1, first_location_ + values.locations());
  if (lo >= hi) return {};
  const auto& rows = rows_[global_metric];
  auto first = std::lower_bound(rows.begin(), rows.end(), p0, [](const Row& r, std::uint32_t p) { return r.position < p; });
  auto last = std::lower_bound(first, rows.end(), p1, [](const Row& r, std::uint32_t p) { return r.position < p; });
  const auto k = static_cast<std::size_t>(last - first);
  if (k == 0) return {};
  const std::size_t width = values.dtype().width(), piece = (hi - lo) * width;
  std::string out;
  out.reserve(8 + 4 * k + k * piece);
  put_u32(out, static_cast<std::uint32_t>(lo));
  put_u32(out, static_cast<std::uint32_t>(k));
  for (auto it = first; it != last; ++it) put_u32(out, it->position);
  for (auto it = first; it != last; ++it)
    out.append(reinterpret_cast<const char*>(values.row(it->cnode) + (lo - first_location_) * width), piece);
  return out;
}

void BlockAssembler::reset(std::uint32_t p0, std::uint32_t p1, std::uint64_t c0, std::uint64_t c1) {
  if (p1 < p0 || c1 < c0) throw std::invalid_argument("empty block range reversed");
  p0_ = p0;
  p1_ = p1;
  c0_ = c0;
  c1_ = c1;
  data_.assign(rows() * row_bytes(), 0);
  sent_.assign(rows(), 0);
}

void BlockAssembler::add(std::string_view part) {
  if (part.empty()) return;
  const auto bad = [&](const std::string& what) -> FormatError {
    return FormatError("collation", "row block", 0, what);
  };
  if (part.size() < 8) throw bad("part shorter than its header");
  const std::uint64_t first = get_u32(part, 0);
  const std::size_t k = get_u32(part, 4);
  if (k == 0 || k > rows() || part.size() < 8 + 4 * k) throw bad("row count does not fit the block");
  const std::size_t data = part.size() - 8 - 4 * k;
  if (data % (k * width_) != 0) throw bad("row bytes are not whole values");
  const std::uint64_t columns = data / (k * width_);
  if (first < c0_ || first + columns > c1_ || columns == 0) throw bad("columns outside the block");
  const char* values = part.data() + 8 + 4 * k;
  const std::size_t piece = columns * width_;
  for (std::size_t i = 0; i < k; ++i) {
    const std::uint32_t position = get_u32(part, 8 + 4 * i);
    if (position < p0_ || position >= p1_) throw bad("row position outside the block");
    const std::size_t r = position - p0_;
    std::memcpy(data_.data() + r * row_bytes() + (first - c0_) * width_, values + i * piece, piece);
    sent_[r] = 1;
  }
}

void write_block(cube::CubexWriter& writer, const BlockAssembler& block) {
  const auto& sent = block.sent();
  std::size_t r = 0;
  while (r < block.rows()) {  // runs of sent and of skipped rows
    std::size_t end = r;
    while (end < block.rows() && sent[end] == sent[r]) ++end;
    if (sent[r]) writer.write_rows(block.row(r), end - r);
    else writer.skip_rows(end - r);
    r = end;
  }
}

}  // namespace cubescale::profile
