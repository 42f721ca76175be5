#pragma once
// The values of one metric: a dense matrix [cnode][location] of fixed-width values in native
// byte order. Locations are densely populated in real profiles (paper 001), so a row is a
// plain array indexed by the location's global index; `present` marks the rows stored in the
// file, the others are all zero and are not written back.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include "cubescale/cube/dtype.hpp"

namespace cubescale::cube {

class Severity {
 public:
  Severity() = default;
  Severity(DataType dtype, std::size_t cnodes, std::size_t locations);
  // A matrix whose values are unspecified until written: the caller writes every present row,
  // then calls zero_absent_rows(). Saves clearing rows that a file is about to fill.
  static Severity for_overwrite(DataType dtype, std::size_t cnodes, std::size_t locations);
  // A matrix over `bytes()` bytes of the caller's memory (unspecified values, as for_overwrite),
  // which must outlive it and be aligned for the dtype's scalars (element_alignment()). Lets a
  // conversion write into a buffer the caller reuses, instead of fresh pages that the kernel
  // must zero first. Copies of it own their storage; so does a matrix assigned to it, whose
  // values then no longer reach the caller's memory.
  static Severity borrowing(std::uint8_t* memory, DataType dtype, std::size_t cnodes, std::size_t locations);
  Severity(const Severity& other);
  Severity& operator=(const Severity& other);
  Severity(Severity&&) noexcept = default;
  Severity& operator=(Severity&&) noexcept = default;

  const DataType& dtype() const { return dtype_; }
  std::size_t cnodes() const { return cnodes_; }
  std::size_t locations() const { return locations_; }
  std::size_t row_bytes() const { return locations_ * dtype_.width(); }
  std::size_t bytes() const { return cnodes_ * row_bytes(); }

  std::uint8_t* data() { return storage_.get(); }
  const std::uint8_t* data() const { return storage_.get(); }
  std::uint8_t* row(std::size_t c) { return data() + c * row_bytes(); }
  const std::uint8_t* row(std::size_t c) const { return data() + c * row_bytes(); }

  bool present(std::size_t c) const { return present_[c] != 0; }
  void set_present(std::size_t c, bool p) { present_[c] = p ? 1 : 0; }
  // Marks rows present exactly when they hold a non-zero byte.
  void mark_nonzero_rows();
  // Clears the rows that are not present (after for_overwrite; no-op for zeroed storage).
  void zero_absent_rows();
  // Clears the rows that are not present, whatever the storage held (for reused matrices).
  void clear_absent_rows();
  // Whether the values live in memory the caller lent (borrowing()).
  bool borrowed() const { return storage_.get_deleter().borrowed; }
  std::size_t present_rows() const;

 private:
  DataType dtype_;
  std::size_t cnodes_ = 0, locations_ = 0;
  // Zeroed storage, 16-byte aligned (f64 / u64 views need no copy). Large matrices are
  // anonymous mappings with transparent huge pages: page faults on first touch otherwise cost
  // more than the arithmetic. Zero pages of rows a file leaves out are never touched.
  // Mid-sized ones are recycled between reports (see common/recycled_buffers.hpp).
  struct Release {
    // Both 0: allocated with calloc (no initializers: GCC needs the class complete).
    std::size_t mapped_bytes;    // an anonymous mapping of this size
    std::size_t recycled_bytes;  // from RecycledBuffers, asked for this size
    bool borrowed;               // the caller's memory: never released here
    void operator()(std::uint8_t* p) const noexcept;
  };
  static std::unique_ptr<std::uint8_t[], Release> allocate(std::size_t bytes, bool zeroed);
  // The shape without storage: where every constructor starts.
  struct Unallocated {};
  Severity(DataType dtype, std::size_t cnodes, std::size_t locations, Unallocated);
  // Whether cnodes x locations values fit in a size_t of bytes.
  bool addressable() const;
  std::unique_ptr<std::uint8_t[], Release> storage_;
  bool absent_rows_zero_ = true;  // false after for_overwrite until zero_absent_rows()
  std::vector<std::uint8_t> present_;
};

bool row_is_zero(const std::uint8_t* row, std::size_t bytes);
// The alignment the aggregation kernels need for a value type: that of the scalar they
// add as a whole (8 for doubles); 1 for packed records, which are read field by field.
std::size_t element_alignment(const DataType& dtype);

}  // namespace cubescale::cube
