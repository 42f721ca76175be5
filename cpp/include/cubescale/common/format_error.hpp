#pragma once
// The one error type for bad input. Every parser throws it with the file, the member
// (a tar member, a record, a section) and the byte offset where the input went wrong,
// so that a user can find the bad byte without a debugger.
#include <cstdint>
#include <stdexcept>
#include <string>

namespace cubescale {

class FormatError : public std::runtime_error {
 public:
  FormatError(std::string file, std::string member, std::uint64_t offset, const std::string& message);

  const std::string& file() const noexcept { return file_; }
  const std::string& member() const noexcept { return member_; }
  std::uint64_t offset() const noexcept { return offset_; }
  const std::string& message() const noexcept { return message_; }

 private:
  std::string file_;
  std::string member_;
  std::uint64_t offset_;
  std::string message_;
};

}  // namespace cubescale
