#pragma once
// CUBE4 value types: how many bytes one value takes in a .data member, how its fields are
// byte-swapped, and how values combine when the call tree or system tree is aggregated.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cubescale::cube {

enum class ValueKind : std::uint8_t {
  Int8, Int16, Int32, Int64, UInt8, UInt16, UInt32, UInt64,
  Double, MinDouble, MaxDouble,
  TauAtomic,   // uint32 N, f64 min, max, sum, sum2 (packed, 36 bytes)
  Rate,        // f64 main, f64 time
  Complex,     // f64 real, f64 imaginary
  NDoubles,    // n x f64
  Histogram,   // f64 min, f64 max, n x f64 bins
  ScaleFunc,   // scaling function in an 848-byte slot (scale_func.hpp)
};

// How two values combine when aggregating along a tree.
enum class Combine : std::uint8_t { Sum, Min, Max, TauAtomic, Histogram, ScaleFunc };

struct DataType {
  ValueKind kind = ValueKind::Double;
  std::uint32_t count = 1;  // n of NDOUBLES(n) / HISTOGRAM(n)
  std::string name;         // spelled as in the file, written back unchanged

  std::size_t width() const;              // bytes per value
  // Byte sizes of the fields, for byte swapping (SCALE_FUNC: see scale_func_swap, its layout
  // depends on the value).
  std::vector<std::uint8_t> fields() const;
  Combine combine() const;
  bool is_integer() const;
  bool is_signed() const;
  // Number of f64 components for double-vector kinds (Rate, Complex, NDoubles, ...), else 0.
  std::size_t doubles() const;
};

// Parses a <dtype> text such as "DOUBLE", "FLOAT", "UINT64", "NDOUBLES(10)", "HISTOGRAM(5)";
// nullopt for an unknown type.
std::optional<DataType> parse_data_type(std::string_view text);
// Every plain name parse_data_type accepts, aliases included (not NDOUBLES(n) / HISTOGRAM(n)):
// the one list of data type names, also handed to Python.
std::vector<std::string_view> data_type_names();

}  // namespace cubescale::cube
