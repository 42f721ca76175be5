#include "cubescale/common/atomic_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <random>
#include <stdexcept>
#include <system_error>

namespace cubescale {

namespace {

constexpr std::size_t kKeptTargetBytes = 150;  // leaves room for the rest within NAME_MAX (255)
constexpr int kAttempts = 64;                  // names drawn before giving up on EEXIST

std::string random_hex() {
  std::random_device device;  // getrandom() on Linux: unpredictable, so nobody can plant the name
  const std::uint64_t bits = (std::uint64_t(device()) << 32) ^ device();
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(bits));
  return buf;
}

// "dir/" of "dir/name" ("" for a bare name), kept with its slash so "/name" stays in "/".
std::string directory_prefix(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? std::string() : path.substr(0, slash + 1);
}

// Makes the rename durable. Filesystems that cannot sync a directory say EINVAL or ENOTSUP:
// there is nothing more to do on them.
void sync_directory(const std::string& target) {
  const auto prefix = directory_prefix(target);
  const int fd = ::open(prefix.empty() ? "." : prefix.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) throw_errno(target);
  if (::fsync(fd) != 0 && errno != EINVAL && errno != ENOTSUP) {
    const int error = errno;
    ::close(fd);
    errno = error;
    throw_errno(target);
  }
  ::close(fd);
}

// Refuses a target the rename would replace by a file: a directory (EISDIR), a device, FIFO or
// socket (NotARegularFile), or a symlink to one of them (/dev/stdout is one). None yet, a
// regular file, a symlink to one or a dangling symlink (replaced, as mv does): fine.
void check_target(const std::string& target) {
  struct stat s {};
  if (::lstat(target.c_str(), &s) != 0) return;  // none yet; open and rename report other errors
  if (S_ISLNK(s.st_mode) && ::stat(target.c_str(), &s) != 0) return;  // dangling
  if (S_ISREG(s.st_mode)) return;
  if (S_ISDIR(s.st_mode)) {
    errno = EISDIR;
    throw_errno(target);
  }
  throw NotARegularFile(target);
}

}  // namespace

void throw_errno(const std::string& path) {
  // A failed stdio call without errno (none on Linux, but the standard allows it) is an I/O error.
  throw std::system_error(errno ? errno : EIO, std::generic_category(), path);
}

std::string temporary_host() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0) buf[0] = '\0';
  std::string host(buf);
  if (host.size() > 64) host.resize(64);
  for (auto& c : host) {
    const bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-';
    if (!plain) c = '-';
  }
  return host.empty() ? "-" : host;
}

std::string temporary_name(std::string_view target_name) {
  // Cut at a UTF-8 character boundary: the kept part stays as readable as the target's name.
  std::size_t kept = std::min(target_name.size(), kKeptTargetBytes);
  while (kept < target_name.size() && kept > 0 && (static_cast<unsigned char>(target_name[kept]) & 0xC0) == 0x80) --kept;
  return "." + std::string(target_name.substr(0, kept)) + ".cubescale-tmp." + temporary_host() + "." +
         std::to_string(::getpid()) + "." + random_hex();
}

AtomicFile::AtomicFile(std::string target) : target_(std::move(target)) {
  check_target(target_);
  const auto prefix = directory_prefix(target_);
  const std::string_view name = std::string_view(target_).substr(prefix.size());
  int fd = -1;
  for (int attempt = 0; attempt < kAttempts && fd < 0; ++attempt) {
    temporary_ = prefix + temporary_name(name);
    // O_EXCL fails on anything already there, a symlink included; O_NOFOLLOW says so twice.
    fd = ::open(temporary_.c_str(), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0 && errno != EEXIST) break;
  }
  if (fd < 0) {
    temporary_.clear();  // not ours: never removed
    throw_errno(target_);
  }
  stream_ = ::fdopen(fd, "w+b");
  if (!stream_) {
    const int error = errno;
    ::close(fd);
    discard();
    errno = error;
    throw_errno(target_);
  }
}

AtomicFile::~AtomicFile() {
  if (!committed_) discard();
}

void AtomicFile::discard() noexcept {
  if (stream_) std::fclose(stream_);
  stream_ = nullptr;
  if (!temporary_.empty()) ::unlink(temporary_.c_str());
  temporary_.clear();
}

void AtomicFile::write(const void* data, std::size_t n) {
  if (n && std::fwrite(data, 1, n, stream_) != n) throw_errno(target_);
}

void AtomicFile::commit() {
  if (committed_ || !stream_) throw std::logic_error("AtomicFile::commit: " + target_ + " already committed");
  // Each step keeps errno for the exception; the destructor removes the temporary.
  if (std::fflush(stream_) != 0 || ::fsync(::fileno(stream_)) != 0) throw_errno(target_);
  const int closed = std::fclose(stream_);
  stream_ = nullptr;
  if (closed != 0) throw_errno(target_);
  check_target(target_);  // made meanwhile: the destructor removes the temporary
  if (std::rename(temporary_.c_str(), target_.c_str()) != 0) throw_errno(target_);
  committed_ = true;
  sync_directory(target_);
}

}  // namespace cubescale
