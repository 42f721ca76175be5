#include "cubescale/cubepl/value.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>

#include "cubescale/cubepl/error.hpp"

namespace cubescale::cubepl {

namespace {

using Shape = Value::Shape;

std::size_t element_count(Shape s, Dims d) {
  return s == Shape::Scalar ? 1 : s == Shape::PerCnode ? d.cnodes : d.cnodes * d.locations;
}

// Numbers of any value, texts converted (per call path when they vary).
Value numeric(const Value& v) {
  if (!v.text) return v;
  if (v.shape == Shape::Scalar) return Value::of(as_number(v));
  auto out = std::make_shared<std::vector<double>>(v.strings->size());
  for (std::size_t c = 0; c < out->size(); ++c) (*out)[c] = as_number(Value::of_text((*v.strings)[c]));
  return Value::of_numbers(Shape::PerCnode, std::move(out));
}

// The values of row c as a pointer and a stride along the location axis (0: broadcast).
struct Row {
  const double* p;
  std::size_t stride;
};
Row row(const Value& v, std::size_t c, Dims d) {
  if (v.shape == Shape::Scalar) return {&v.number, 0};
  if (v.shape == Shape::PerCnode) return {v.numbers->data() + c, 0};
  return {v.numbers->data() + c * d.locations, 1};
}

// out = f(a, b, ...) element-wise over the largest shape of the (numeric) operands.
template <class F, class... V>
Value zip(Dims d, F f, const V&... operands) {
  const Shape s = std::max({operands.shape...});
  if (s == Shape::Scalar) return Value::of(f(operands.number...));
  auto out = std::make_shared<std::vector<double>>(element_count(s, d));
  double* o = out->data();
  if (s == Shape::PerCnode) {
    for (std::size_t c = 0; c < d.cnodes; ++c) o[c] = f(*row(operands, c, d).p...);
  } else {
    for (std::size_t c = 0; c < d.cnodes; ++c) {
      double* oc = o + c * d.locations;
      const Row rows[] = {row(operands, c, d)...};
      if constexpr (sizeof...(V) == 1) {
        for (std::size_t l = 0; l < d.locations; ++l) oc[l] = f(rows[0].p[l * rows[0].stride]);
      } else if constexpr (sizeof...(V) == 2) {
        if (rows[0].stride == 1 && rows[1].stride == 1) {  // the common case: contiguous, vectorizes
          for (std::size_t l = 0; l < d.locations; ++l) oc[l] = f(rows[0].p[l], rows[1].p[l]);
        } else {
          for (std::size_t l = 0; l < d.locations; ++l) oc[l] = f(rows[0].p[l * rows[0].stride], rows[1].p[l * rows[1].stride]);
        }
      } else {
        for (std::size_t l = 0; l < d.locations; ++l)
          oc[l] = f(rows[0].p[l * rows[0].stride], rows[1].p[l * rows[1].stride], rows[2].p[l * rows[2].stride]);
      }
    }
  }
  return Value::of_numbers(s, std::move(out));
}

double divide(double a, double b) {
  // CubeLib: 0 / x is 0 (also for x = 0), x / 0 is NaN.
  if (a == 0) return 0;
  if (b == 0) return std::numeric_limits<double>::quiet_NaN();
  return a / b;
}

double sign(double x) { return x > 0 ? 1.0 : x < 0 ? -1.0 : 0.0; }

std::string lowercase(std::string s) {
  for (auto& ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return s;
}
std::string uppercase(std::string s) {
  for (auto& ch : s) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  return s;
}

// Texts of a scalar or per-call-path value (numbers written as texts).
const std::string& text_at(const Value& v, std::size_t c, std::string& scratch) {
  if (v.shape == Shape::PerCnode && v.text) return (*v.strings)[c];
  if (v.shape == Shape::PerCnode) return scratch = as_text(Value::of((*v.numbers)[c]));
  if (v.text) return v.string;
  return scratch = as_text(v);
}

}  // namespace

Value Value::of(double v) {
  Value r;
  r.number = v;
  return r;
}
Value Value::of_text(std::string s) {
  Value r;
  r.text = true;
  r.string = std::move(s);
  return r;
}
Value Value::of_numbers(Shape shape, std::shared_ptr<const std::vector<double>> v) {
  Value r;
  r.shape = shape;
  r.numbers = std::move(v);
  return r;
}
Value Value::of_texts(std::shared_ptr<const std::vector<std::string>> v) {
  Value r;
  r.shape = Shape::PerCnode;
  r.text = true;
  r.strings = std::move(v);
  return r;
}

bool Value::same_as(const Value& o) const {
  if (shape != o.shape || text != o.text) return false;
  if (shape != Shape::Scalar) return text ? strings == o.strings : numbers == o.numbers;
  return text ? string == o.string : (number == o.number || (std::isnan(number) && std::isnan(o.number)));
}

double as_number(const Value& v) {
  if (!v.text) return v.number;
  double x = 0;
  const auto* b = v.string.data();
  const auto [p, ec] = std::from_chars(b, b + v.string.size(), x);
  return ec == std::errc() && p == b + v.string.size() ? x : 0.0;
}

std::string as_text(const Value& v) {
  if (v.text) return v.string;
  char buf[64];
  const auto [p, ec] = std::to_chars(buf, buf + sizeof buf, v.number);
  return ec == std::errc() ? std::string(buf, p) : std::string();
}

Value apply_unary(Op op, const Value& a0, Dims d, std::size_t offset) {
  const Value a = numeric(a0);
  switch (op) {
    case Op::Neg: return zip(d, [](double x) { return -x; }, a);
    case Op::Not: return zip(d, [](double x) { return x == 0 ? 1.0 : 0.0; }, a);
    case Op::Sqrt: return zip(d, [](double x) { return std::sqrt(x); }, a);
    case Op::Sin: return zip(d, [](double x) { return std::sin(x); }, a);
    case Op::Asin: return zip(d, [](double x) { return std::asin(x); }, a);
    case Op::Cos: return zip(d, [](double x) { return std::cos(x); }, a);
    case Op::Acos: return zip(d, [](double x) { return std::acos(x); }, a);
    case Op::Tan: return zip(d, [](double x) { return std::tan(x); }, a);
    case Op::Atan: return zip(d, [](double x) { return std::atan(x); }, a);
    case Op::Exp: return zip(d, [](double x) { return std::exp(x); }, a);
    case Op::Log: return zip(d, [](double x) { return std::log(x); }, a);
    case Op::Abs: return zip(d, [](double x) { return std::fabs(x); }, a);
    case Op::Sgn: return zip(d, sign, a);
    case Op::Floor: return zip(d, [](double x) { return std::floor(x); }, a);
    case Op::Ceil: return zip(d, [](double x) { return std::ceil(x); }, a);
    default: throw Error(offset, "not a unary operation");
  }
}

Value apply_binary(Op op, const Value& a0, const Value& b0, Dims d, std::size_t offset) {
  const Value a = numeric(a0), b = numeric(b0);
  switch (op) {
    case Op::Add: return zip(d, [](double x, double y) { return x + y; }, a, b);
    case Op::Sub: return zip(d, [](double x, double y) { return x - y; }, a, b);
    case Op::Mul: return zip(d, [](double x, double y) { return x * y; }, a, b);
    case Op::Div: return zip(d, divide, a, b);
    case Op::Pow: return zip(d, [](double x, double y) { return std::pow(x, y); }, a, b);
    case Op::Eq: return zip(d, [](double x, double y) { return x == y ? 1.0 : 0.0; }, a, b);
    case Op::Ne: return zip(d, [](double x, double y) { return x != y ? 1.0 : 0.0; }, a, b);
    case Op::Lt: return zip(d, [](double x, double y) { return x < y ? 1.0 : 0.0; }, a, b);
    case Op::Gt: return zip(d, [](double x, double y) { return x > y ? 1.0 : 0.0; }, a, b);
    case Op::Le: return zip(d, [](double x, double y) { return x <= y ? 1.0 : 0.0; }, a, b);
    case Op::Ge: return zip(d, [](double x, double y) { return x >= y ? 1.0 : 0.0; }, a, b);
    case Op::And: return zip(d, [](double x, double y) { return x != 0 && y != 0 ? 1.0 : 0.0; }, a, b);
    case Op::Or: return zip(d, [](double x, double y) { return x != 0 || y != 0 ? 1.0 : 0.0; }, a, b);
    case Op::Xor: return zip(d, [](double x, double y) { return (x != 0) != (y != 0) ? 1.0 : 0.0; }, a, b);
    case Op::Min: return zip(d, [](double x, double y) { return std::min(x, y); }, a, b);
    case Op::Max: return zip(d, [](double x, double y) { return std::max(x, y); }, a, b);
    default: throw Error(offset, "not a binary operation");
  }
}

Value apply_text(Op op, const Value& a, const Value& b, const std::regex* pattern, Dims d, std::size_t offset) {
  if (a.shape == Shape::Full || (op != Op::Regex && op != Op::Lower && op != Op::Upper && b.shape == Shape::Full))
    throw Error(offset, "unsupported construct: a text operation on values that vary by location");
  const bool per_cnode = a.shape == Shape::PerCnode || ((op == Op::StrEq || op == Op::StrSeq) && b.shape == Shape::PerCnode);
  const std::size_t n = per_cnode ? d.cnodes : 1;
  std::string sa, sb;
  if (op == Op::Lower || op == Op::Upper) {
    const auto f = op == Op::Lower ? lowercase : uppercase;
    if (!per_cnode) return Value::of_text(f(text_at(a, 0, sa)));
    auto out = std::make_shared<std::vector<std::string>>(n);
    for (std::size_t c = 0; c < n; ++c) (*out)[c] = f(text_at(a, c, sa));
    return Value::of_texts(std::move(out));
  }
  auto test = [&](std::size_t c) {
    const auto& x = text_at(a, c, sa);
    if (op == Op::Regex) return std::regex_search(x, *pattern);
    const auto& y = text_at(b, c, sb);
    return op == Op::StrEq ? x == y : lowercase(x) == lowercase(y);
  };
  if (!per_cnode) return Value::of(test(0) ? 1.0 : 0.0);
  auto out = std::make_shared<std::vector<double>>(n);
  for (std::size_t c = 0; c < n; ++c) (*out)[c] = test(c) ? 1.0 : 0.0;
  return Value::of_numbers(Shape::PerCnode, std::move(out));
}

Value select(const Value& cond0, const Value& a, const Value& b, Dims d, std::size_t offset) {
  const Value cond = numeric(cond0);
  if (a.text || b.text) {
    // Texts chosen per call path: only by a condition that varies by call path.
    if (a.text && b.text && a.same_as(b)) return a;
    if (cond.shape != Shape::PerCnode || a.shape == Shape::Full || b.shape == Shape::Full)
      throw Error(offset, "unsupported construct: a text chosen by a condition that varies by location");
    auto out = std::make_shared<std::vector<std::string>>(d.cnodes);
    std::string sa, sb;
    for (std::size_t c = 0; c < d.cnodes; ++c) (*out)[c] = (*cond.numbers)[c] != 0 ? text_at(a, c, sa) : text_at(b, c, sb);
    return Value::of_texts(std::move(out));
  }
  return zip(d, [](double k, double x, double y) { return k != 0 ? x : y; }, cond, a, b);
}

Value gather(const std::vector<Value>& array, const Value& index0, Dims d, std::size_t offset) {
  const Value index = numeric(index0);
  auto element = [&](double i) -> const Value* {
    if (!(i >= 0) || i >= static_cast<double>(array.size())) return nullptr;
    return &array[static_cast<std::size_t>(i)];
  };
  if (index.shape == Shape::Scalar) {
    const auto* e = element(index.number);
    return e ? *e : Value::of(0);
  }
  bool texts = false;
  for (const auto& e : array) {
    if (e.varies()) throw Error(offset, "unsupported construct: an array of varying values indexed per call path");
    texts |= e.text;
  }
  const auto& idx = *index.numbers;
  if (texts) {
    if (index.shape != Shape::PerCnode) throw Error(offset, "unsupported construct: texts indexed per location");
    auto out = std::make_shared<std::vector<std::string>>(d.cnodes);
    for (std::size_t c = 0; c < d.cnodes; ++c)
      if (const auto* e = element(idx[c])) (*out)[c] = as_text(*e);
    return Value::of_texts(std::move(out));
  }
  auto out = std::make_shared<std::vector<double>>(idx.size());
  for (std::size_t k = 0; k < idx.size(); ++k) {
    const auto* e = element(idx[k]);
    (*out)[k] = e ? e->number : 0.0;
  }
  return Value::of_numbers(index.shape, std::move(out));
}

std::vector<double> to_matrix(const Value& v0, Dims d, std::size_t offset) {
  if (v0.text) throw Error(offset, "the expression gives a text, not a number");
  if (v0.shape == Shape::Full) return *v0.numbers;
  std::vector<double> out(d.cnodes * d.locations);
  for (std::size_t c = 0; c < d.cnodes; ++c) {
    const double x = v0.shape == Shape::Scalar ? v0.number : (*v0.numbers)[c];
    std::fill_n(out.data() + c * d.locations, d.locations, x);
  }
  return out;
}

}  // namespace cubescale::cubepl
