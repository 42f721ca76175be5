#pragma once
// Opens .cubex files: reads a small file whole or a large one on demand (archive.hpp), lists
// the tar members, parses anchor.xml and returns a Report whose metric values are decoded from
// N.index / N.data on first use.
#include <cstdint>
#include <memory>
#include <string>

#include "cubescale/cube/report.hpp"

namespace cubescale::cube {

// Throws FormatError for anything malformed, std::system_error when the file cannot be read.
std::shared_ptr<Report> open_cubex(const std::string& path);
// The same with files of `read_whole_below` bytes or more read on demand (see archive.hpp);
// tests and fuzzing pass 0 so that small files take the path of large ones.
std::shared_ptr<Report> open_cubex(const std::string& path, std::uint64_t read_whole_below);
// The same over bytes in memory (tests, fuzzing); `name` is used in error messages.
std::shared_ptr<Report> open_cubex_bytes(std::string bytes, const std::string& name = "<bytes>");
// Decodes every stored metric (what a fuzzer or a validity check wants); derived metrics are
// computed when asked for, so an expression outside the CubePL subset does not stop it.
void load_all(const Report& report);

}  // namespace cubescale::cube
