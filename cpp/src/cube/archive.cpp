#include "cubescale/cube/archive.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <system_error>

#include "cubescale/common/format_error.hpp"
#include "cubescale/common/recycled_buffers.hpp"

namespace cubescale::cube {

namespace {

static_assert(Archive::kReadWholeBelow <= RecycledBuffers::kMaxBytes, "files read whole fit a recycled buffer");
// Tar headers of a file read on demand come through a window of this size: index members
// are small, so one read usually covers several headers.
constexpr std::size_t kHeaderWindow = 64 << 10;
// pread moves at most about 2 GiB per call on Linux; larger ranges are read in steps.
constexpr std::size_t kMaxRead = std::size_t(1) << 30;

std::uint64_t current_size(int fd) {
  struct stat st {};
  return ::fstat(fd, &st) == 0 ? static_cast<std::uint64_t>(st.st_size) : 0;
}

// Reads exactly n bytes at offset; returns how many the file had (less when it ends early).
std::size_t read_fully(int fd, std::uint64_t offset, std::size_t n, char* dst, const std::string& path) {
  std::size_t done = 0;
  while (done < n) {
    const auto ask = std::min(n - done, kMaxRead);
    const auto got = ::pread(fd, dst + done, ask, static_cast<off_t>(offset + done));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) throw std::system_error(errno, std::generic_category(), path);
    if (got == 0) break;
    done += static_cast<std::size_t>(got);
  }
  return done;
}

}  // namespace

// Where the bytes of an in-memory archive live: a recycled buffer (a file read whole) or a string.
struct Archive::Buffer {
  std::uint8_t* recycled = nullptr;
  std::size_t recycled_bytes = 0;
  std::unique_ptr<char[]> heap;
  std::string owned;
  ~Buffer() {
    if (recycled) RecycledBuffers::shared().give_back(recycled, recycled_bytes);
  }
  char* allocate(std::size_t bytes) {
    if (!RecycledBuffers::serves(bytes)) {
      heap.reset(new char[bytes]);
      return heap.get();
    }
    recycled = RecycledBuffers::shared().take_for_overwrite(bytes);
    if (!recycled) throw std::bad_alloc();
    recycled_bytes = bytes;
    return reinterpret_cast<char*>(recycled);
  }
};

Archive::Archive() : buffer_(std::make_unique<Buffer>()) {}

Archive::~Archive() {
  if (fd_ >= 0) ::close(fd_);
}

std::shared_ptr<Archive> Archive::open(const std::string& path, std::uint64_t read_whole_below) {
  std::shared_ptr<Archive> a(new Archive());
  a->name_ = path;
  a->fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);  // closed by the destructor from here on
  if (a->fd_ < 0) throw std::system_error(errno, std::generic_category(), path);
  struct stat st {};
  if (::fstat(a->fd_, &st) != 0) throw std::system_error(errno, std::generic_category(), path);
  if (S_ISDIR(st.st_mode)) throw std::system_error(EISDIR, std::generic_category(), path);
  a->size_ = static_cast<std::uint64_t>(st.st_size);
  if (a->size_ >= read_whole_below) return a;  // read on demand
  if (a->size_ > 0) {
    char* p = a->buffer_->allocate(a->size_);
    if (read_fully(a->fd_, 0, a->size_, p, path) != a->size_)
      throw std::system_error(EIO, std::generic_category(), path + " (shortened while being read)");
    a->memory_ = std::string_view(p, a->size_);
  }
  ::close(a->fd_);
  a->fd_ = -1;
  return a;
}

std::shared_ptr<Archive> Archive::own(std::string bytes, std::string name) {
  std::shared_ptr<Archive> a(new Archive());
  a->name_ = std::move(name);
  a->buffer_->owned = std::move(bytes);
  a->memory_ = a->buffer_->owned;
  a->size_ = a->memory_.size();
  return a;
}

void Archive::copy(std::uint64_t offset, std::size_t n, void* dst, const std::string& member) const {
  if (offset > size_ || n > size_ - offset)
    throw FormatError(name_, member, offset, "range of " + std::to_string(n) + " bytes runs past the end of the archive");
  if (in_memory()) {
    std::copy_n(memory_.data() + offset, n, static_cast<char*>(dst));
    return;
  }
  const auto got = read_fully(fd_, offset, n, static_cast<char*>(dst), name_);
  if (got != n)
    throw FormatError(name_, member, offset + got,
                      "the file ends at byte " + std::to_string(current_size(fd_)) + " (it had " + std::to_string(size_) +
                          " when opened: it was shortened or replaced in place)");
}

std::string_view Archive::view(std::uint64_t offset, std::size_t n, std::string& scratch, const std::string& member) const {
  if (in_memory()) {
    if (offset > size_ || n > size_ - offset)
      throw FormatError(name_, member, offset, "range of " + std::to_string(n) + " bytes runs past the end of the archive");
    return memory_.substr(offset, n);
  }
  scratch.resize(n);
  copy(offset, n, scratch.data(), member);
  return scratch;
}

std::vector<TarMember> Archive::members() const {
  if (in_memory()) return list_tar(memory_, name_);
  std::string window;
  std::uint64_t window_at = 0;
  auto block = [&](std::uint64_t offset) -> std::string_view {
    if (window.empty() || offset < window_at || offset + 512 > window_at + window.size()) {
      window_at = offset;
      window.resize(std::min<std::uint64_t>(kHeaderWindow, size_ - offset));
      copy(offset, window.size(), window.data(), "tar header");
    }
    return std::string_view(window).substr(offset - window_at, 512);
  };
  return list_tar(size_, block, name_);
}

MemberBytes::MemberBytes(const Archive& archive, const TarMember& member)
    : archive_(archive.in_memory() ? nullptr : &archive), offset_(member.data_offset), size_(member.size), member_(member.name) {
  if (archive.in_memory()) memory_ = archive.memory().substr(member.data_offset, member.size);
}

std::string_view MemberBytes::view(std::uint64_t offset, std::size_t n, std::string& scratch) const {
  if (offset > size_ || n > size_ - offset) throw std::out_of_range("member range");  // callers check sizes first
  if (!archive_) return memory_.substr(offset, n);
  return archive_->view(offset_ + offset, n, scratch, member_);
}

void MemberBytes::copy(std::uint64_t offset, std::size_t n, void* dst) const {
  if (offset > size_ || n > size_ - offset) throw std::out_of_range("member range");
  if (!archive_) {
    std::copy_n(memory_.data() + offset, n, static_cast<char*>(dst));
    return;
  }
  archive_->copy(offset_ + offset, n, dst, member_);
}

}  // namespace cubescale::cube
