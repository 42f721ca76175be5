#pragma once
// The bytes of a .cubex archive and of its members, wherever they live.
//
// Small files (< 4 MiB) are read whole into a recycled page-aligned buffer at open: for them a
// mapping costs more in page faults and unmapping than the copy. Larger files stay open and
// are read on demand with pread: the tar headers through a 64 KiB window, anchor.xml and the
// small members into buffers, and data rows straight into the rows of the value matrix, so
// each byte is still copied once (by the kernel instead of by a page fault plus a copy).
// Why not a mapping: a mapped file that another process shortens raises SIGBUS on the first
// page past its new end, which kills the interpreter. pread instead returns short, and the
// reader raises FormatError. A size check before touching mapped pages still races with the
// writer, and a SIGBUS handler would be process-wide state that a library cannot own (Python
// and other libraries install their own, and a jump out of a handler skips C++ destructors).
// docs/benchmarks.md has the measurement: pread is as fast as the mapping was.
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "cubescale/cube/tar.hpp"

namespace cubescale::cube {

class Archive {
 public:
  // Files smaller than this are read whole, larger ones on demand.
  static constexpr std::uint64_t kReadWholeBelow = std::uint64_t(4) << 20;
  // Throws std::system_error when the file cannot be opened or read. `read_whole_below` other
  // than the default is for tests and fuzzing (0: every file on demand).
  static std::shared_ptr<Archive> open(const std::string& path, std::uint64_t read_whole_below = kReadWholeBelow);
  // An archive in memory (tests, fuzzing); `name` is used in error messages.
  static std::shared_ptr<Archive> own(std::string bytes, std::string name);
  ~Archive();
  Archive(const Archive&) = delete;
  Archive& operator=(const Archive&) = delete;

  const std::string& name() const { return name_; }
  // The size when opened.
  std::uint64_t size() const { return size_; }
  // The whole archive when it is in memory; empty when it is read on demand.
  std::string_view memory() const { return memory_; }
  bool in_memory() const { return fd_ < 0; }

  // `n` bytes at `offset`: a view into memory, or read into `scratch`. Bytes the file no
  // longer has (it was shortened after opening) are a FormatError naming `member`.
  std::string_view view(std::uint64_t offset, std::size_t n, std::string& scratch, const std::string& member) const;
  // The same bytes copied to `dst`.
  void copy(std::uint64_t offset, std::size_t n, void* dst, const std::string& member) const;
  // The regular members (tar headers read through a window when on demand).
  std::vector<TarMember> members() const;

 private:
  struct Buffer;
  Archive();
  std::string name_;
  std::uint64_t size_ = 0;
  int fd_ = -1;               // open file read on demand, else -1
  std::string_view memory_;   // the bytes of an in-memory archive
  std::unique_ptr<Buffer> buffer_;
};

// One member's bytes: in memory, or a range of an archive read on demand. What the value
// decoders read from (parse_index, read_data), so that both paths share one decoder.
class MemberBytes {
 public:
  // Bytes in memory that outlive this object (tests, the in-memory case).
  explicit MemberBytes(std::string_view bytes) : memory_(bytes), size_(bytes.size()) {}
  MemberBytes(const Archive& archive, const TarMember& member);

  std::uint64_t size() const { return size_; }
  // The whole member in memory, or empty when it is read on demand.
  bool in_memory() const { return archive_ == nullptr; }
  std::string_view view(std::uint64_t offset, std::size_t n, std::string& scratch) const;
  void copy(std::uint64_t offset, std::size_t n, void* dst) const;

 private:
  std::string_view memory_;
  const Archive* archive_ = nullptr;
  std::uint64_t offset_ = 0, size_ = 0;
  std::string member_;
};

}  // namespace cubescale::cube
