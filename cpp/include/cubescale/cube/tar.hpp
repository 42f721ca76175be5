#pragma once
// The ustar container of a .cubex file. The reader lists regular members of an in-memory
// archive and reads header checksums but does not insist on them (real files carry wrong
// ones). The writer streams members to a seekable file: a member's size is patched into its
// header when the member ends, so rows can be written before their number is known.
#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cubescale::cube {

struct TarMember {
  std::string name;
  std::uint64_t header_offset = 0;  // of the 512-byte header in the archive
  std::uint64_t data_offset = 0;
  std::uint64_t size = 0;
  bool checksum_ok = true;
};

// Lists the regular-file members of `archive`. Throws FormatError (with `file`) on a header
// that is not ustar, a size that runs past the end, or a truncated header.
std::vector<TarMember> list_tar(std::string_view archive, const std::string& file);
// The same over an archive of `size` bytes read block by block: `block(offset)` returns the
// 512 bytes at `offset` (offset + 512 <= size).
using TarBlockReader = std::function<std::string_view(std::uint64_t offset)>;
std::vector<TarMember> list_tar(std::uint64_t size, const TarBlockReader& block, const std::string& file);

class TarWriter {
 public:
  // `file` names the file in errors: a failed write throws std::system_error with its errno.
  TarWriter(std::FILE* out, std::string file) : out_(out), file_(std::move(file)) {}
  // Starts a member; its data follows through write() until end_member().
  void begin_member(const std::string& name);
  void write(const void* data, std::size_t n);
  void write(std::string_view s) { write(s.data(), s.size()); }
  // Pads to the 512-byte block and patches size and checksum into the header. A member of
  // exactly k*512 bytes is never written: when `pad_byte` >= 0 one such byte is appended
  // (CubeW then adds a whole block, which other tar readers reject); otherwise throws.
  std::uint64_t end_member(int pad_byte = -1);
  void add_member(const std::string& name, std::string_view data, int pad_byte = -1);
  // Writes the two zero blocks that end an archive.
  void finish();
  std::uint64_t member_size() const { return size_; }

 private:
  std::FILE* out_;
  std::string file_;
  long header_at_ = -1;
  std::uint64_t size_ = 0;
  std::string name_;
};

// The 512-byte ustar header for a regular file (exposed for tests).
std::string tar_header(const std::string& name, std::uint64_t size);

}  // namespace cubescale::cube
