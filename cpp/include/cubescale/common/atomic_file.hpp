#pragma once
// Every file cubescale writes goes through AtomicFile: readers of the target see the old file or
// the complete new one, never a mix, whoever else writes the same path at the same time.
//
// How: the bytes go to a temporary file beside the target, created with O_CREAT | O_EXCL |
// O_NOFOLLOW (mode 0644 minus the umask) under a name nobody else uses: a planted symlink or a
// second writer makes the creation fail with EEXIST and we draw another name, so no symlink is
// ever followed and no two writers share a file. commit() flushes, fsyncs, renames the temporary
// over the target (a symlink at the target is replaced, as mv does; its target is never written)
// and fsyncs the directory so the rename survives a crash. Any error, or destruction without
// commit(), removes the temporary. Errors are std::system_error with the real errno and the
// target path as what-prefix, which the bindings turn into OSError(errno, message, path).
//
// A target that exists as anything a rename would destroy without writing a file there (a
// device such as /dev/null, a FIFO, a socket, or a symlink to one such as /dev/stdout; as root
// the rename succeeds) is refused before the temporary is made and again before the rename:
// NotARegularFile. A directory (or a symlink to one) gives EISDIR.
//
// A writer killed by SIGKILL cannot remove its temporary. Its name says whose it was:
//   .<target name>.cubescale-tmp.<host>.<pid>.<16 hex digits>
// (the target name cut to 150 bytes, the host name's characters outside [A-Za-z0-9-] as '-'),
// so `cubescale clean DIR` (python/cubescale/files.py, the same scheme) finds and removes the
// temporaries whose process is gone.
#include <cerrno>
#include <cstdio>
#include <string>
#include <string_view>
#include <system_error>

namespace cubescale {

// The target is a device, FIFO or socket (see above): EEXIST naming the target, as every
// error here; the bindings make it FileExistsError(EEXIST, kReason, target).
class NotARegularFile : public std::system_error {
 public:
  static constexpr const char* kReason = "not a regular file (a device, FIFO or socket), which writing would replace";
  explicit NotARegularFile(const std::string& target) : std::system_error(EEXIST, std::generic_category(), target) {}
};

class AtomicFile {
 public:
  // Creates the temporary beside `target`; throws std::system_error (EACCES, ENOENT, EISDIR ...),
  // NotARegularFile.
  explicit AtomicFile(std::string target);
  ~AtomicFile();  // removes the temporary unless commit() succeeded
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  // A buffered stream on the temporary, readable and seekable (the tar writer patches headers).
  std::FILE* stream() const { return stream_; }
  const std::string& target() const { return target_; }
  const std::string& temporary() const { return temporary_; }
  void write(const void* data, std::size_t n);
  // Flush, fsync, rename over the target, fsync the directory. Once.
  void commit();

 private:
  void discard() noexcept;

  std::string target_, temporary_;
  std::FILE* stream_ = nullptr;
  bool committed_ = false;
};

// The file name of a new temporary for the file `target_name` (no directory), written by this
// process on this host, with 16 random hex digits (exposed for tests).
std::string temporary_name(std::string_view target_name);
// This host's name as it appears in temporary names.
std::string temporary_host();
// Throws std::system_error(errno) naming `path`: the form the bindings translate to OSError.
[[noreturn]] void throw_errno(const std::string& path);

}  // namespace cubescale
