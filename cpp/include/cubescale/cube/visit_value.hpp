#pragma once
// Dispatch from a CUBE value kind to the C++ type of its values, for kernels written once as
// templates: f(T{}) is called with T the kind's type.
#include <cstdint>

#include "cubescale/cube/dtype.hpp"

namespace cubescale::cube {

// Integer kinds; false (f not called) for every other kind.
template <typename F>
bool visit_integer(ValueKind kind, F&& f) {
  switch (kind) {
    case ValueKind::Int8: f(std::int8_t{}); return true;
    case ValueKind::Int16: f(std::int16_t{}); return true;
    case ValueKind::Int32: f(std::int32_t{}); return true;
    case ValueKind::Int64: f(std::int64_t{}); return true;
    case ValueKind::UInt8: f(std::uint8_t{}); return true;
    case ValueKind::UInt16: f(std::uint16_t{}); return true;
    case ValueKind::UInt32: f(std::uint32_t{}); return true;
    case ValueKind::UInt64: f(std::uint64_t{}); return true;
    default: return false;
  }
}

// Integers and the plain doubles (DOUBLE, MINDOUBLE, MAXDOUBLE); false for records.
template <typename F>
bool visit_scalar(ValueKind kind, F&& f) {
  if (visit_integer(kind, f)) return true;
  if (kind != ValueKind::Double && kind != ValueKind::MinDouble && kind != ValueKind::MaxDouble) return false;
  f(double{});
  return true;
}

}  // namespace cubescale::cube
