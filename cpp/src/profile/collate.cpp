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

std::vector<std::uint64_t> RowSource::row_costs(std::uint32_t global_metric, std::uint32_t positions) const {
  std::vector<std::uint64_t> out(positions, 0);
  if (global_metric >= rows_.size() || local_metric_[global_metric] < 0) return out;
  const auto& values = profile_.values[local_metric_[global_metric]];
  const std::uint64_t cost = values.row_bytes() + kRowOverhead;
  for (const auto& r : rows_[global_metric]) {
    if (r.position >= positions) throw std::invalid_argument("row position beyond the metric's rows");
    out[r.position] = cost;
  }
  return out;
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

namespace {

// Where one rank's values of one row are in the gathered parts.
struct PartRow {
  std::uint32_t position;
  std::uint32_t column;   // first column, relative to the block's c0
  std::uint32_t columns;
  std::uint64_t offset;   // of the values in the gathered bytes
};
static_assert(sizeof(PartRow) <= 24, "RowSource::kRowOverhead counts 24 bytes per index entry");

}  // namespace

std::size_t write_parts(cube::CubexWriter& writer, std::string_view parts, const std::vector<std::int64_t>& sizes,
                        std::uint32_t p0, std::uint32_t p1, std::uint64_t c0, std::uint64_t c1, std::size_t width,
                        bool piece, std::size_t trailer) {
  const auto bad = [&](const std::string& what) -> FormatError {
    return FormatError("collation", "row block", 0, what);
  };
  if (p1 < p0 || c1 < c0 || (piece && p1 != p0 + 1)) throw std::invalid_argument("bad block range");
  // Entries counted first, so that the index holds exactly what the budget counted.
  std::size_t entries = 0, at = 0;
  for (const auto size : sizes) {
    if (size < 0 || at + std::size_t(size) + trailer > parts.size()) throw bad("part sizes exceed the gathered bytes");
    if (size >= 8) entries += get_u32(parts, at + 4);
    at += std::size_t(size) + trailer;
  }
  std::vector<PartRow> index;
  index.reserve(std::min<std::size_t>(entries, parts.size() / 4));
  at = 0;
  for (const auto size : sizes) {
    if (size < 0 || at + std::size_t(size) + trailer > parts.size()) throw bad("part sizes exceed the gathered bytes");
    const auto part = parts.substr(at, std::size_t(size));
    if (!part.empty()) {
      if (part.size() < 8) throw bad("part shorter than its header");
      const std::uint64_t first = get_u32(part, 0);
      const std::size_t k = get_u32(part, 4);
      if (k == 0 || k > p1 - p0 || part.size() < 8 + 4 * k) throw bad("row count does not fit the block");
      const std::size_t data = part.size() - 8 - 4 * k;
      if (data % (k * width) != 0) throw bad("row bytes are not whole values");
      const std::uint64_t columns = data / (k * width);
      if (first < c0 || first + columns > c1 || columns == 0) throw bad("columns outside the block");
      for (std::size_t i = 0; i < k; ++i) {
        const std::uint32_t position = get_u32(part, 8 + 4 * i);
        if (position < p0 || position >= p1) throw bad("row position outside the block");
        index.push_back({position, static_cast<std::uint32_t>(first - c0), static_cast<std::uint32_t>(columns),
                         at + 8 + 4 * k + i * columns * width});
      }
    }
    at += std::size_t(size) + trailer;
  }
  std::sort(index.begin(), index.end(), [](const PartRow& a, const PartRow& b) {
    return a.position != b.position ? a.position < b.position : a.column < b.column;
  });
  std::vector<std::uint8_t> row((c1 - c0) * width);
  const auto compose = [&](std::size_t from, std::size_t to) {  // index[from, to) is one row
    std::fill(row.begin(), row.end(), 0);
    for (std::size_t i = from; i < to; ++i)
      std::memcpy(row.data() + std::size_t(index[i].column) * width, parts.data() + index[i].offset,
                  std::size_t(index[i].columns) * width);
  };
  std::uint32_t next = p0;  // first position not written yet
  for (std::size_t i = 0; i < index.size();) {
    std::size_t j = i;
    while (j < index.size() && index[j].position == index[i].position) ++j;
    compose(i, j);
    if (piece) {
      writer.write_row_piece(row.data(), row.size());
    } else {
      if (index[i].position > next) writer.skip_rows(index[i].position - next);
      writer.write_rows(row.data(), 1);
    }
    next = index[i].position + 1;
    i = j;
  }
  if (piece && index.empty()) {
    std::fill(row.begin(), row.end(), 0);
    writer.write_row_piece(row.data(), row.size());
  } else if (!piece && next < p1) {
    writer.skip_rows(p1 - next);
  }
  return index.capacity() * sizeof(PartRow) + row.capacity();
}

}  // namespace cubescale::profile
