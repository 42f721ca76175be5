#include "cubescale/cube/severity.hpp"

#include <algorithm>
#include <cstdint>
#include <new>
#include <stdexcept>
#include <string>

#include <sys/mman.h>

#include "cubescale/common/recycled_buffers.hpp"

namespace cubescale::cube {

Severity::Severity(DataType dtype, std::size_t cnodes, std::size_t locations, Unallocated)
    : dtype_(std::move(dtype)), cnodes_(cnodes), locations_(locations), present_(cnodes, 0) {}

bool Severity::addressable() const {
  return !(locations_ && dtype_.width() && cnodes_ > SIZE_MAX / locations_ / dtype_.width());
}

Severity::Severity(DataType dtype, std::size_t cnodes, std::size_t locations)
    : Severity(std::move(dtype), cnodes, locations, Unallocated{}) {
  if (!addressable()) throw std::bad_alloc();
  storage_ = allocate(bytes(), true);
}

Severity Severity::for_overwrite(DataType dtype, std::size_t cnodes, std::size_t locations) {
  Severity s(std::move(dtype), cnodes, locations, Unallocated{});
  if (!s.addressable()) throw std::bad_alloc();
  s.storage_ = allocate(s.bytes(), false);
  s.absent_rows_zero_ = s.storage_.get_deleter().mapped_bytes != 0;  // fresh mappings are zero
  return s;
}

Severity Severity::borrowing(std::uint8_t* memory, DataType dtype, std::size_t cnodes, std::size_t locations) {
  Severity s(std::move(dtype), cnodes, locations, Unallocated{});
  if (!s.addressable()) throw std::invalid_argument("matrix too large for any buffer");
  if (!memory && s.bytes()) throw std::invalid_argument("no memory to borrow");
  const auto alignment = element_alignment(s.dtype_);
  if (reinterpret_cast<std::uintptr_t>(memory) % alignment != 0)
    throw std::invalid_argument("must start at a multiple of " + std::to_string(alignment) + " bytes for " +
                                s.dtype_.name);
  s.storage_ = std::unique_ptr<std::uint8_t[], Release>(memory, Release{0, 0, true});
  s.absent_rows_zero_ = false;
  return s;
}

void Severity::zero_absent_rows() {
  if (!absent_rows_zero_) clear_absent_rows();
}

void Severity::clear_absent_rows() {
  if (row_bytes() != 0)
    for (std::size_t c = 0; c < cnodes_; ++c)
      if (!present_[c]) std::memset(row(c), 0, row_bytes());
  absent_rows_zero_ = true;
}

void Severity::Release::operator()(std::uint8_t* p) const noexcept {
  if (borrowed) return;
  if (mapped_bytes) ::munmap(p, mapped_bytes);
  else if (recycled_bytes) RecycledBuffers::shared().give_back(p, recycled_bytes);
  else std::free(p);
}

std::unique_ptr<std::uint8_t[], Severity::Release> Severity::allocate(std::size_t bytes, bool zeroed) {
  constexpr std::size_t kMapFrom = std::size_t(4) << 20;
  if (bytes >= kMapFrom) {
    void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
#ifdef MADV_HUGEPAGE
    ::madvise(p, bytes, MADV_HUGEPAGE);  // a hint: failure only costs speed
#endif
    return std::unique_ptr<std::uint8_t[], Release>(static_cast<std::uint8_t*>(p), Release{bytes, 0, false});
  }
  if (RecycledBuffers::serves(bytes)) {
    auto& store = RecycledBuffers::shared();
    auto* p = zeroed ? store.take_zeroed(bytes) : store.take_for_overwrite(bytes);
    if (!p) throw std::bad_alloc();
    return std::unique_ptr<std::uint8_t[], Release>(p, Release{0, bytes, false});
  }
  const auto size = std::max<std::size_t>(bytes, 1);
  auto* p = static_cast<std::uint8_t*>(zeroed ? std::calloc(size, 1) : std::malloc(size));
  if (!p) throw std::bad_alloc();
  return std::unique_ptr<std::uint8_t[], Release>(p, Release{0, 0, false});
}

Severity::Severity(const Severity& other)
    : dtype_(other.dtype_),
      cnodes_(other.cnodes_),
      locations_(other.locations_),
      absent_rows_zero_(other.absent_rows_zero_),
      present_(other.present_) {
  storage_ = allocate(bytes(), false);
  if (bytes()) std::memcpy(storage_.get(), other.storage_.get(), bytes());
}

Severity& Severity::operator=(const Severity& other) {
  if (this != &other) *this = Severity(other);
  return *this;
}

bool row_is_zero(const std::uint8_t* row, std::size_t bytes) {
  // Word-wise test: rows are long and mostly non-zero, so the first word usually decides.
  std::size_t i = 0;
  for (; i + 8 <= bytes; i += 8) {
    std::uint64_t w;
    std::memcpy(&w, row + i, 8);
    if (w) return false;
  }
  for (; i < bytes; ++i)
    if (row[i]) return false;
  return true;
}

void Severity::mark_nonzero_rows() {
  for (std::size_t c = 0; c < cnodes_; ++c) present_[c] = row_is_zero(row(c), row_bytes()) ? 0 : 1;
}

std::size_t Severity::present_rows() const {
  return static_cast<std::size_t>(std::count(present_.begin(), present_.end(), std::uint8_t(1)));
}

std::size_t element_alignment(const DataType& dtype) {
  switch (dtype.combine()) {
    case Combine::TauAtomic:
    case Combine::ScaleFunc:
      return 1;  // packed records: every field is loaded unaligned
    case Combine::Histogram:
      return alignof(double);
    case Combine::Sum:
    case Combine::Min:
    case Combine::Max:
      return dtype.is_integer() ? dtype.width() : alignof(double);
  }
  return alignof(double);
}

}  // namespace cubescale::cube
