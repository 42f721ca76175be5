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
  std::size_t present_rows() const;

 private:
  DataType dtype_;
  std::size_t cnodes_ = 0, locations_ = 0;
  // Zeroed storage, 16-byte aligned (f64 / u64 views need no copy). Large matrices are
  // anonymous mappings with transparent huge pages: page faults on first touch otherwise cost
  // more than the arithmetic. Zero pages of rows a file leaves out are never touched.
  struct Release {
    std::size_t mapped_bytes;  // 0: allocated with calloc (no initializer: GCC needs the class complete)
    void operator()(std::uint8_t* p) const noexcept;
  };
  static std::unique_ptr<std::uint8_t[], Release> allocate_zeroed(std::size_t bytes);
  std::unique_ptr<std::uint8_t[], Release> storage_;
  std::vector<std::uint8_t> present_;
};

bool row_is_zero(const std::uint8_t* row, std::size_t bytes);

}  // namespace cubescale::cube
