#pragma once
// The error of a CubePL program that we cannot parse or cannot evaluate: a syntax error, a
// construct outside the supported subset (named in the message), or a run-time limit.
// It is a std::invalid_argument (Python: ValueError) and carries the byte offset in the
// expression text, so that a message can point at the construct.
#include <cstddef>
#include <stdexcept>
#include <string>

namespace cubescale::cubepl {

class Error : public std::invalid_argument {
 public:
  Error(std::size_t offset, const std::string& message)
      : std::invalid_argument("offset " + std::to_string(offset) + ": " + message), offset_(offset), message_(message) {}
  std::size_t offset() const noexcept { return offset_; }
  const std::string& message() const noexcept { return message_; }

 private:
  std::size_t offset_;
  std::string message_;
};

}  // namespace cubescale::cubepl
