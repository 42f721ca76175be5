#include "cubescale/cube/tar.hpp"

#include <cstring>
#include <stdexcept>

#include "cubescale/common/atomic_file.hpp"
#include "cubescale/common/format_error.hpp"
#include "cubescale/cube/text.hpp"

namespace cubescale::cube {

namespace {

constexpr std::size_t kBlock = 512;

std::string_view field(std::string_view header, std::size_t offset, std::size_t length) {
  auto f = header.substr(offset, length);
  const auto nul = f.find('\0');
  return nul == std::string_view::npos ? f : f.substr(0, nul);
}

// Octal with optional spaces/NULs, or GNU base-256 for huge sizes (high bit of first byte).
bool parse_number(std::string_view f, std::uint64_t& out) {
  out = 0;
  if (!f.empty() && (static_cast<unsigned char>(f[0]) & 0x80)) {
    for (std::size_t i = 1; i < f.size(); ++i) {
      if (out >> 56) return false;
      out = (out << 8) | static_cast<unsigned char>(f[i]);
    }
    return true;
  }
  bool digits = false;
  for (char c : f) {
    if (c == ' ' || c == '\0') {
      if (digits) break;
      continue;
    }
    if (c < '0' || c > '7' || (out >> 60)) return false;
    out = out * 8 + std::uint64_t(c - '0');
    digits = true;
  }
  return true;
}

// The sum of the header's bytes with the checksum field counted as spaces. Summing all bytes
// and correcting for the field afterwards keeps the loop free of branches (it vectorizes).
std::uint64_t checksum_of(std::string_view header) {
  std::uint32_t sum = 0;
  for (std::size_t i = 0; i < kBlock; ++i) sum += static_cast<unsigned char>(header[i]);
  for (std::size_t i = 148; i < 156; ++i) sum -= static_cast<unsigned char>(header[i]);
  return sum + 8u * ' ';
}

bool all_zero(std::string_view block) {
  unsigned char any = 0;
  for (char c : block) any |= static_cast<unsigned char>(c);
  return any == 0;
}

}  // namespace

std::vector<TarMember> list_tar(std::string_view archive, const std::string& file) {
  return list_tar(archive.size(), [archive](std::uint64_t offset) { return archive.substr(offset, kBlock); }, file);
}

std::vector<TarMember> list_tar(std::uint64_t size, const TarBlockReader& block, const std::string& file) {
  std::vector<TarMember> members;
  std::uint64_t offset = 0;
  while (offset < size) {
    if (size - offset < kBlock) throw FormatError(file, "tar header", offset, "truncated tar header");
    const auto header = block(offset);
    if (header[0] == '\0' && all_zero(header)) break;  // end-of-archive marker
    const auto magic = header.substr(257, 5);
    if (magic != "ustar") throw FormatError(file, "tar header", offset, "not a ustar tar header");
    TarMember m;
    m.header_offset = offset;
    m.data_offset = offset + kBlock;
    const auto prefix = field(header, 345, 155);
    const auto raw = prefix.empty() ? std::string(field(header, 0, 100))
                                    : std::string(prefix) + "/" + std::string(field(header, 0, 100));
    // Names are compared with ASCII names and quoted in messages: escaped for that. A name
    // that is not UTF-8 is a damaged header (a flipped byte in "0.data" made a metric read
    // as all zero): refused, at the byte that breaks it.
    m.name = printable(raw);
    std::size_t bad = 0;
    if (!valid_utf8(raw, bad)) {
      // `bad` counts in "prefix/name"; the header keeps the name at 0 and the prefix at 345.
      const auto in_header = prefix.empty() ? bad : bad < prefix.size() ? 345 + bad : bad - prefix.size() - 1;
      throw FormatError(file, m.name, offset + in_header, "tar member name is not UTF-8");
    }
    std::uint64_t stored_sum = 0;
    m.checksum_ok = parse_number(header.substr(148, 8), stored_sum) && stored_sum == checksum_of(header);
    if (!parse_number(header.substr(124, 12), m.size))
      throw FormatError(file, m.name, offset + 124, "tar member size is not a number");
    if (m.size > size - m.data_offset)
      throw FormatError(file, m.name, offset + 124,
                        "tar member of " + std::to_string(m.size) + " bytes runs past the end of the file");
    const char type = header[156];
    if (type == '0' || type == '\0' || type == '7') members.push_back(m);
    offset = m.data_offset + (m.size + kBlock - 1) / kBlock * kBlock;
  }
  return members;
}

std::string tar_header(const std::string& name, std::uint64_t size) {
  if (name.size() > 100) throw std::invalid_argument("tar member name longer than 100 bytes: " + name);
  std::string h(kBlock, '\0');
  std::memcpy(h.data(), name.data(), name.size());
  auto put = [&](std::size_t at, const char* text) { std::memcpy(h.data() + at, text, std::strlen(text)); };
  put(100, "0000644");
  put(108, "0000000");
  put(116, "0000000");
  char buf[32];
  std::snprintf(buf, sizeof buf, "%011llo", static_cast<unsigned long long>(size));
  put(124, buf);
  put(136, "00000000000");
  h[156] = '0';
  std::memcpy(h.data() + 257, "ustar\0" "00", 8);
  std::snprintf(buf, sizeof buf, "%06llo", static_cast<unsigned long long>(checksum_of(h)));
  std::memcpy(h.data() + 148, buf, 7);  // six digits, NUL, and the space already there
  h[155] = ' ';
  return h;
}

void TarWriter::begin_member(const std::string& name) {
  if (header_at_ >= 0) throw std::logic_error("tar member " + name_ + " still open");
  name_ = name;
  size_ = 0;
  header_at_ = std::ftell(out_);
  if (header_at_ < 0) throw_errno(file_);
  const auto h = tar_header(name, 0);
  write(h.data(), h.size());
  size_ = 0;
}

void TarWriter::write(const void* data, std::size_t n) {
  if (n && std::fwrite(data, 1, n, out_) != n) throw_errno(file_);
  size_ += n;
}

std::uint64_t TarWriter::end_member(int pad_byte) {
  if (header_at_ < 0) throw std::logic_error("no open tar member");
  if (size_ > 0 && size_ % kBlock == 0) {
    if (pad_byte < 0) throw std::logic_error("tar member " + name_ + " would be a multiple of 512 bytes");
    const char c = static_cast<char>(pad_byte);
    write(&c, 1);
  }
  const auto size = size_;
  const std::string zeros(kBlock, '\0');
  if (size % kBlock) write(zeros.data(), kBlock - size % kBlock);
  const long end = std::ftell(out_);
  const auto h = tar_header(name_, size);
  // fseek flushes the buffer: a full disk shows here as well as in write().
  if (end < 0 || std::fseek(out_, header_at_, SEEK_SET) != 0 || std::fwrite(h.data(), 1, h.size(), out_) != h.size() ||
      std::fseek(out_, end, SEEK_SET) != 0)
    throw_errno(file_);
  header_at_ = -1;
  return size;
}

void TarWriter::add_member(const std::string& name, std::string_view data, int pad_byte) {
  begin_member(name);
  write(data);
  end_member(pad_byte);
}

void TarWriter::finish() {
  const std::string zeros(2 * kBlock, '\0');
  if (std::fwrite(zeros.data(), 1, zeros.size(), out_) != zeros.size()) throw_errno(file_);
}

}  // namespace cubescale::cube
