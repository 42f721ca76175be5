#include "cubescale/common/format_error.hpp"

namespace cubescale {
namespace {
std::string describe(const std::string& file, const std::string& member, std::uint64_t offset,
                     const std::string& message) {
  std::string text = file.empty() ? std::string("<bytes>") : file;
  if (!member.empty()) text += ": member " + member;
  text += ": offset " + std::to_string(offset) + ": " + message;
  return text;
}
}  // namespace

FormatError::FormatError(std::string file, std::string member, std::uint64_t offset,
                         const std::string& message)
    : std::runtime_error(describe(file, member, offset, message)),
      file_(std::move(file)),
      member_(std::move(member)),
      offset_(offset),
      message_(message) {}

}  // namespace cubescale
