#include "cubescale/cube/dtype.hpp"

#include "cubescale/cube/scale_func.hpp"

#include <charconv>
#include <utility>

namespace cubescale::cube {

namespace {

struct NamedKind {
  std::string_view name;
  ValueKind kind;
};

// Aliases as older CUBE writers spell them (FLOAT and INTEGER are 64-bit in CUBE4).
constexpr NamedKind kNames[] = {
    {"DOUBLE", ValueKind::Double},        {"FLOAT", ValueKind::Double},
    {"MINDOUBLE", ValueKind::MinDouble},  {"MAXDOUBLE", ValueKind::MaxDouble},
    {"INT8", ValueKind::Int8},            {"CHAR", ValueKind::UInt8},
    {"INT16", ValueKind::Int16},          {"SHORT INT", ValueKind::Int16},
    {"SIGNED SHORT INT", ValueKind::Int16}, {"INT32", ValueKind::Int32},
    {"INT", ValueKind::Int32},            {"SIGNED INT", ValueKind::Int32},
    {"INT64", ValueKind::Int64},          {"INTEGER", ValueKind::Int64},
    {"SIGNED INTEGER", ValueKind::Int64}, {"UINT8", ValueKind::UInt8},
    {"UINT16", ValueKind::UInt16},        {"UNSIGNED SHORT INT", ValueKind::UInt16},
    {"UINT32", ValueKind::UInt32},        {"UNSIGNED INT", ValueKind::UInt32},
    {"UINT64", ValueKind::UInt64},        {"UNSIGNED INTEGER", ValueKind::UInt64},
    {"TAU_ATOMIC", ValueKind::TauAtomic}, {"RATE", ValueKind::Rate},
    {"COMPLEX", ValueKind::Complex},      {"SCALE_FUNC", ValueKind::ScaleFunc},
};

// Values of NDOUBLES(n) and HISTOGRAM(n) beyond this are not real profiles but hostile input.
constexpr std::uint32_t kMaxVectorLength = 1u << 16;

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\n' || s.front() == '\r'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\n' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

std::optional<DataType> parse_parametrized(std::string_view text, std::size_t open) {
  const auto head = trim(text.substr(0, open));
  if (text.back() != ')') return std::nullopt;
  const auto arg = trim(text.substr(open + 1, text.size() - open - 2));
  std::uint32_t n = 0;
  auto [end, ec] = std::from_chars(arg.data(), arg.data() + arg.size(), n);
  if (ec != std::errc() || end != arg.data() + arg.size() || n == 0 || n > kMaxVectorLength) return std::nullopt;
  DataType t;
  t.count = n;
  t.name = std::string(text);
  if (head == "NDOUBLES") t.kind = ValueKind::NDoubles;
  else if (head == "HISTOGRAM") t.kind = ValueKind::Histogram;
  else return std::nullopt;
  return t;
}

}  // namespace

std::optional<DataType> parse_data_type(std::string_view text) {
  text = trim(text);
  if (text.empty()) return std::nullopt;
  if (const auto open = text.find('('); open != std::string_view::npos) return parse_parametrized(text, open);
  for (const auto& [name, kind] : kNames) {
    if (name == text) return DataType{kind, 1, std::string(text)};
  }
  return std::nullopt;
}

std::vector<std::string_view> data_type_names() {
  std::vector<std::string_view> out;
  for (const auto& named : kNames) out.push_back(named.name);
  return out;
}

std::size_t DataType::width() const {
  switch (kind) {
    case ValueKind::Int8: case ValueKind::UInt8: return 1;
    case ValueKind::Int16: case ValueKind::UInt16: return 2;
    case ValueKind::Int32: case ValueKind::UInt32: return 4;
    case ValueKind::TauAtomic: return 36;
    case ValueKind::Rate: case ValueKind::Complex: return 16;
    case ValueKind::NDoubles: return 8 * std::size_t(count);
    case ValueKind::Histogram: return 8 * (std::size_t(count) + 2);
    case ValueKind::ScaleFunc: return kScaleFuncWidth;
    default: return 8;
  }
}

std::size_t DataType::doubles() const {
  switch (kind) {
    case ValueKind::Rate: case ValueKind::Complex: case ValueKind::NDoubles:
    case ValueKind::Histogram: return width() / 8;
    default: return 0;
  }
}

std::vector<std::uint8_t> DataType::fields() const {
  if (kind == ValueKind::TauAtomic) return {4, 8, 8, 8, 8};
  if (kind == ValueKind::ScaleFunc) return {};  // depends on the value: scale_func_swap
  if (doubles() > 0) return std::vector<std::uint8_t>(doubles(), 8);
  return {static_cast<std::uint8_t>(width())};
}

Combine DataType::combine() const {
  switch (kind) {
    case ValueKind::MinDouble: return Combine::Min;
    case ValueKind::MaxDouble: return Combine::Max;
    case ValueKind::TauAtomic: return Combine::TauAtomic;
    case ValueKind::Histogram: return Combine::Histogram;
    case ValueKind::ScaleFunc: return Combine::ScaleFunc;
    default: return Combine::Sum;
  }
}

bool DataType::is_integer() const { return kind <= ValueKind::UInt64; }
bool DataType::is_signed() const { return kind <= ValueKind::Int64; }

}  // namespace cubescale::cube
