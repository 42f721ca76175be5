#pragma once
// Endianness-safe byte encoding shared by every binary format of ours: fixed-width
// little-endian integers and LEB128 varints. The reader checks every bound and throws
// FormatError with the offset, so hostile input can neither overrun nor over-allocate.
#include <cstdint>
#include <string>
#include <string_view>

#include "cubescale/common/format_error.hpp"

namespace cubescale {

class ByteWriter {
 public:
  void u8(std::uint8_t v) { out_.push_back(static_cast<char>(v)); }
  void u16(std::uint16_t v) { fixed(v, 2); }
  void u32(std::uint32_t v) { fixed(v, 4); }
  void u64(std::uint64_t v) { fixed(v, 8); }
  void varint(std::uint64_t v);
  void bytes(std::string_view s) { out_.append(s); }
  void string(std::string_view s) {  // length-prefixed
    varint(s.size());
    bytes(s);
  }
  // Magic and version that open each of our binary formats.
  void header(std::string_view magic, std::uint16_t version) {
    bytes(magic);
    u16(version);
  }
  std::string take() { return std::move(out_); }
  std::size_t size() const { return out_.size(); }

 private:
  void fixed(std::uint64_t v, int n) {
    for (int i = 0; i < n; ++i) out_.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  }
  std::string out_;
};

class ByteReader {
 public:
  ByteReader(std::string_view data, std::string file, std::string member)
      : data_(data), file_(std::move(file)), member_(std::move(member)) {}

  std::uint8_t u8();
  std::uint16_t u16() { return static_cast<std::uint16_t>(fixed(2)); }
  std::uint32_t u32() { return static_cast<std::uint32_t>(fixed(4)); }
  std::uint64_t u64() { return fixed(8); }
  std::uint64_t varint();
  // A varint that must be <= limit (e.g. a count bounded by the bytes left).
  std::uint64_t varint_at_most(std::uint64_t limit, const char* what);
  std::string_view bytes(std::size_t n);
  std::string_view string(std::size_t max_length);

  // Checks the magic and version written by ByteWriter::header; `what` names the format
  // in the error ("sequence tree").
  void expect_header(std::string_view magic, std::uint16_t version, const std::string& what);

  std::size_t offset() const { return pos_; }
  std::size_t remaining() const { return data_.size() - pos_; }
  bool at_end() const { return pos_ == data_.size(); }
  [[noreturn]] void fail(const std::string& message) const { fail_at(pos_, message); }
  [[noreturn]] void fail_at(std::size_t offset, const std::string& message) const {
    throw FormatError(file_, member_, offset, message);
  }

 private:
  std::uint64_t fixed(int n);
  std::string_view data_;
  std::size_t pos_ = 0;
  std::string file_;
  std::string member_;
};

}  // namespace cubescale
