#include "cubescale/common/bytes.hpp"

#include <algorithm>

namespace cubescale {

void ByteWriter::varint(std::uint64_t v) {
  while (v >= 0x80) {
    out_.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out_.push_back(static_cast<char>(v));
}

std::uint8_t ByteReader::u8() {
  if (remaining() < 1) fail("unexpected end of data (need 1 byte)");
  return static_cast<std::uint8_t>(data_[pos_++]);
}

std::uint64_t ByteReader::fixed(int n) {
  if (remaining() < static_cast<std::size_t>(n))
    fail("unexpected end of data (need " + std::to_string(n) + " bytes)");
  std::uint64_t v = 0;
  for (int i = 0; i < n; ++i) v |= std::uint64_t(static_cast<std::uint8_t>(data_[pos_ + i])) << (8 * i);
  pos_ += n;
  return v;
}

std::uint64_t ByteReader::varint() {
  const std::size_t start = pos_;
  std::uint64_t v = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (remaining() < 1) fail_at(start, "truncated varint");
    const auto b = static_cast<std::uint8_t>(data_[pos_++]);
    if (shift == 63 && b > 1) fail_at(start, "varint overflows 64 bits");
    v |= std::uint64_t(b & 0x7f) << shift;
    if (!(b & 0x80)) return v;
  }
  fail_at(start, "varint longer than 10 bytes");
}

std::uint64_t ByteReader::varint_at_most(std::uint64_t limit, const char* what) {
  const std::size_t start = pos_;
  const std::uint64_t v = varint();
  if (v > limit)
    fail_at(start, std::string(what) + " " + std::to_string(v) + " exceeds the limit " +
                       std::to_string(limit));
  return v;
}

void ByteReader::expect_header(std::string_view magic, std::uint16_t version, const std::string& what) {
  if (remaining() < magic.size() || bytes(magic.size()) != magic)
    fail_at(0, "not a cubescale " + what + " (bad magic)");
  const auto found = u16();
  if (found != version)
    fail_at(magic.size(), "unsupported " + what + " version " + std::to_string(found) + " (this reader knows " +
                              std::to_string(version) + ")");
}

std::string_view ByteReader::bytes(std::size_t n) {
  if (remaining() < n) fail("unexpected end of data (need " + std::to_string(n) + " bytes)");
  auto s = data_.substr(pos_, n);
  pos_ += n;
  return s;
}

std::string_view ByteReader::string(std::size_t max_length) {
  const std::size_t n = varint_at_most(std::min<std::uint64_t>(max_length, remaining()), "string length");
  return bytes(n);
}

}  // namespace cubescale
