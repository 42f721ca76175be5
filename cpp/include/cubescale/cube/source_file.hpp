#pragma once
// What a report read from a file knows about that file beyond definitions and values: the
// members that are not part of the report (text files, a `remapping.spec` ...), which the
// writer copies when the report is written again, and per metric how many bytes of its data
// member were ignored when it was loaded (trailing rows that Scalasca and CUBE 4.0 writers
// leave, padding: see values_io.hpp). Tools show both so that nothing is dropped silently.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace cubescale::cube {

struct ExtraMember {
  std::string name;
  std::uint64_t size = 0;
};

class SourceFile {
 public:
  virtual ~SourceFile() = default;
  // Members other than anchor.xml, N.index / N.data and our system tree member, in file order.
  virtual const std::vector<ExtraMember>& extra_members() const = 0;
  // Copies `n` bytes at `offset` of extra member `i` to `dst` (FormatError if the file lost them).
  virtual void read_extra(std::size_t i, std::uint64_t offset, std::size_t n, void* dst) const = 0;
  // Bytes of metric `metric`'s data member beyond its indexed rows; nullopt until it is loaded.
  virtual std::optional<std::uint64_t> ignored_bytes(std::size_t metric) const = 0;
  // Whether the file has metric `metric`'s N.index and N.data members (else it reads as zero:
  // Score-P leaves out metrics without values).
  virtual bool stores_values(std::size_t metric) const = 0;
};

}  // namespace cubescale::cube
