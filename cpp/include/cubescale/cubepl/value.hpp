#pragma once
// A CubePL value during whole-array evaluation. CubeLib evaluates an expression once per
// (call path, location); we evaluate it once per program over arrays instead, so a value
// has one of three shapes: a scalar (constants, loop counters), one entry per call path
// (${calculation::callpath::id}, region names, masks indexed by them) or one entry per
// (call path, location) (metric values), row-major [cnode][location]. Operations broadcast
// the smaller shape over the larger one, so `mask[callpath] * metric::time(e)` is one pass
// over the matrix. Texts exist as scalars and per call path (names of regions).
#include <cstddef>
#include <memory>
#include <regex>
#include <string>
#include <vector>

#include "cubescale/cubepl/ast.hpp"

namespace cubescale::cubepl {

struct Dims {
  std::size_t cnodes = 0, locations = 0;
};

struct Value {
  enum class Shape : std::uint8_t { Scalar, PerCnode, Full };
  Shape shape = Shape::Scalar;
  bool text = false;
  double number = 0;
  std::string string;
  std::shared_ptr<const std::vector<double>> numbers;       // PerCnode or Full numbers
  std::shared_ptr<const std::vector<std::string>> strings;  // PerCnode texts

  static Value of(double v);
  static Value of_text(std::string s);
  static Value of_numbers(Shape shape, std::shared_ptr<const std::vector<double>> v);
  static Value of_texts(std::shared_ptr<const std::vector<std::string>> v);
  bool varies() const { return shape != Shape::Scalar; }
  // Same shape and the same storage or scalar: lets if-conversion skip untouched variables.
  bool same_as(const Value& other) const;
};

// Scalar conversions as CubePL makes them: a text that is not a number counts as 0.
double as_number(const Value& scalar);
std::string as_text(const Value& scalar);

// Element-wise operations with broadcasting; `offset` names the construct in errors.
Value apply_unary(Op op, const Value& a, Dims d, std::size_t offset);
Value apply_binary(Op op, const Value& a, const Value& b, Dims d, std::size_t offset);
// eq, seq, =~ (then `b` is ignored and `pattern` used), lowercase, uppercase.
Value apply_text(Op op, const Value& a, const Value& b, const std::regex* pattern, Dims d, std::size_t offset);
// cond ? a : b element-wise (if-conversion of an `if` whose condition varies).
Value select(const Value& cond, const Value& a, const Value& b, Dims d, std::size_t offset);
// array[index] element-wise; out-of-range or negative indices read 0, as unset elements do.
Value gather(const std::vector<Value>& array, const Value& index, Dims d, std::size_t offset);
// The value at every (cnode, location).
std::vector<double> to_matrix(const Value& v, Dims d, std::size_t offset);

}  // namespace cubescale::cubepl
