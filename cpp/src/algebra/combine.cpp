#include "cubescale/algebra/combine.hpp"

#include <algorithm>
#include <bit>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "cubescale/cube/aggregate.hpp"
#include "cubescale/cube/location_slices.hpp"

namespace cubescale::algebra {

using cube::DataType;
using cube::MetricKind;
using cube::Severity;
using cube::ValueKind;

namespace {

DataType named(const char* name) { return *cube::parse_data_type(name); }

bool is_min_max(const DataType& t) { return t.kind == ValueKind::MinDouble || t.kind == ValueKind::MaxDouble; }

// Per unified call path, the rows of one input that land there (CSR): usually one, several
// when an input has sibling call paths that unify into one (their values add up).
struct RowLists {
  std::vector<std::size_t> first;
  std::vector<std::uint32_t> rows;
  RowLists(const std::vector<std::uint32_t>& cnode_map, std::size_t unified) : first(unified + 1, 0) {
    for (auto u : cnode_map) ++first[u + 1];
    for (std::size_t u = 0; u < unified; ++u) first[u + 1] += first[u];
    rows.resize(cnode_map.size());
    std::vector<std::size_t> next(first.begin(), first.end() - 1);
    for (std::uint32_t r = 0; r < cnode_map.size(); ++r) rows[next[cnode_map[r]]++] = r;
  }
};

// Reads n integers of any width and signedness as int64 (UINT64 above 2^63 wraps around, which
// is what a wrapped-around counter means).
void to_int64(const DataType& t, const std::uint8_t* p, std::size_t n, std::int64_t* out) {
  const auto read = [&]<class T>(T) {
    for (std::size_t i = 0; i < n; ++i) {
      T v;
      std::memcpy(&v, p + i * sizeof(T), sizeof(T));
      out[i] = static_cast<std::int64_t>(v);
    }
  };
  switch (t.kind) {
    case ValueKind::Int8: return read(std::int8_t{});
    case ValueKind::Int16: return read(std::int16_t{});
    case ValueKind::Int32: return read(std::int32_t{});
    case ValueKind::Int64: return read(std::int64_t{});
    case ValueKind::UInt8: return read(std::uint8_t{});
    case ValueKind::UInt16: return read(std::uint16_t{});
    case ValueKind::UInt32: return read(std::uint32_t{});
    case ValueKind::UInt64: return read(std::uint64_t{});
    default: throw std::logic_error("to_int64 of a non-integer type");
  }
}

void read_values(const DataType& t, const std::uint8_t* p, std::size_t n, double* out) { cube::to_doubles(t, p, n, out); }
void read_values(const DataType& t, const std::uint8_t* p, std::size_t n, std::int64_t* out) { to_int64(t, p, n, out); }

// Whether values of type t are already T in memory: doubles (MIN/MAXDOUBLE included), INT64,
// and UINT64 for int64 (the same bits: a wrapped-around counter reads as its negative value).
template <class T>
bool stored_as(const DataType& t) {
  if constexpr (std::is_same_v<T, double>) return t.kind == ValueKind::Double || is_min_max(t);
  else return t.kind == ValueKind::Int64 || t.kind == ValueKind::UInt64;
}

// One input's values of one unified row, aligned to the unified locations [first, first +
// count) (zero where it has none): the sum of the input rows that unify there. With the same
// locations any slice works; otherwise the slice is the whole row (columns are scattered). The
// common case - one row, the same locations - is read in one pass, or is the input's own row
// when it is stored as T.
template <class T>
class RowGatherer {
 public:
  RowGatherer(const Severity* values, const InputMap& map, const RowLists* lists, std::size_t first, std::size_t count)
      : values_(values), map_(map), lists_(lists), first_(first), count_(count), buffer_(count), zeros_(count),
        direct_(values && map.identity_locations && stored_as<T>(values->dtype())) {}

  // Whether the input has a present row for `unified` (a MIN/MAX row of zeros stays present).
  bool has(std::size_t unified) const {
    if (!values_) return false;
    for (auto i = lists_->first[unified]; i < lists_->first[unified + 1]; ++i)
      if (values_->present(lists_->rows[i])) return true;
    return false;
  }

  const T* row(std::size_t unified) {
    if (!values_) return zeros_.data();
    const auto begin = lists_->first[unified], end = lists_->first[unified + 1];
    if (end == begin || (end == begin + 1 && !values_->present(lists_->rows[begin]))) return zeros_.data();
    const auto width = values_->dtype().width();
    if (end == begin + 1 && map_.identity_locations) {
      const auto* row = values_->row(lists_->rows[begin]) + first_ * width;
      if (direct_) return reinterpret_cast<const T*>(row);
      read_values(values_->dtype(), row, count_, buffer_.data());
      return buffer_.data();
    }
    std::fill(buffer_.begin(), buffer_.end(), T{});
    const auto n = map_.identity_locations ? count_ : values_->locations();
    scratch_.resize(n);
    for (auto i = begin; i < end; ++i) {
      const auto r = lists_->rows[i];
      if (!values_->present(r)) continue;
      read_values(values_->dtype(), values_->row(r) + (map_.identity_locations ? first_ * width : 0), n, scratch_.data());
      if (map_.identity_locations)
        for (std::size_t l = 0; l < n; ++l) buffer_[l] += scratch_[l];
      else
        for (std::size_t l = 0; l < n; ++l) buffer_[map_.locations[l]] += scratch_[l];
    }
    return buffer_.data();
  }

 private:
  const Severity* values_;
  const InputMap& map_;
  const RowLists* lists_;
  std::size_t first_, count_;
  std::vector<T> buffer_, zeros_, scratch_;
  bool direct_;
};

// Whether v's bytes are not all zero (as row_is_zero() judges a row: -0.0 is stored).
template <class T>
bool nonzero_bits(T v) {
  if constexpr (std::is_same_v<T, double>) return std::bit_cast<std::uint64_t>(v) != 0;
  else return v != 0;
}

// out[l] = f(out[l], x[l]) over n values; with `any`, also notes whether a result is not zero
// (in the same pass: a separate scan of a row that no longer fits the caches reads it again).
template <class T, class F>
void each(T* out, const T* x, std::size_t n, bool* any, F f) {
  if (!any) {
    for (std::size_t l = 0; l < n; ++l) out[l] = f(out[l], x[l]);
    return;
  }
  bool seen = false;
  for (std::size_t l = 0; l < n; ++l) {
    out[l] = f(out[l], x[l]);
    seen |= nonzero_bits(out[l]);
  }
  *any = seen;
}

// out (op)= x for the input at `position` of `count`; the first input's values are copied.
// `any` (or nullptr) receives whether the row is not zero afterwards.
template <class T>
void apply(Operation op, std::size_t position, std::size_t count, const T* x, T* out, std::size_t n, bool* any) {
  if (position == 0) return each(out, x, n, any, [](T, T b) { return b; });
  switch (op) {
    case Operation::Diff: return each(out, x, n, any, [](T a, T b) { return a - b; });
    case Operation::Mean:
      if (position + 1 < count) return each(out, x, n, any, [](T a, T b) { return a + b; });
      // the last input also divides: one pass less
      return each(out, x, n, any, [k = static_cast<T>(count)](T a, T b) { return (a + b) / k; });
    case Operation::Min: return each(out, x, n, any, [](T a, T b) { return std::min(a, b); });
    case Operation::Max: return each(out, x, n, any, [](T a, T b) { return std::max(a, b); });
    case Operation::Merge: throw std::logic_error("merge copies values");
    case Operation::Median: throw std::logic_error("the median is no running aggregate");
  }
}

struct Plan {
  Operation op;
  Inputs inputs;
  Unified unified;
  std::vector<RowLists> rows;        // per input
  std::vector<std::uint32_t> parents;  // of the unified call tree
};

// Whether metric u is combined per call path in its exclusive values and then summed up the call
// tree: min, max and median of a metric stored INCLUSIVE whose values add along the call tree.
// They are not linear: the maximum of the inputs' inclusive values of a call path can be less
// than the sum of the maxima of its children, which left exclusive values below zero (max of
// blast and kripke: PARALLEL -17.7 s). Exclusive values are what each call path spent itself,
// so their minimum, maximum or median is one a run could have spent there, and the inclusive
// values that follow from them are consistent with the exclusive ones by construction.
// MIN/MAXDOUBLE stay in their stored values: their "exclusive" values are the stored ones
// (aggregate.hpp), and min, max and median of the inputs keep the call tree's order of them.
// Linear operations (diff, mean) give the same either way and stay in the stored kind.
bool summed_up(Operation op, const cube::Metric& metric) {
  const bool nonlinear = op == Operation::Min || op == Operation::Max || op == Operation::Median;
  return nonlinear && metric.kind == MetricKind::Inclusive && metric.dtype.combine() == cube::Combine::Sum;
}

// Exclusive values of the result's call tree (as T) made inclusive in place: backwards, each
// row added to its parent's, whose children all come after it (preorder). A row is present when
// it or a row below it is.
template <class T>
void sum_up(Severity& values, const std::vector<std::uint32_t>& parents) {
  const auto cnodes = values.cnodes();
  for (std::size_t c = cnodes; c-- > 0;)
    if (values.present(c) && parents[c] != cube::kNoParent) values.set_present(parents[c], true);
  const auto slice = [&](std::size_t first, std::size_t n) {
    for (std::size_t c = cnodes; c-- > 0;) {
      const auto p = parents[c];
      if (p == cube::kNoParent || !values.present(c)) continue;
      const auto* x = reinterpret_cast<const T*>(values.row(c)) + first;
      auto* o = reinterpret_cast<T*>(values.row(p)) + first;
      if constexpr (std::is_integral_v<T>) {  // wrapping around, as the counters do
        using U = std::make_unsigned_t<T>;
        for (std::size_t l = 0; l < n; ++l) o[l] = static_cast<T>(static_cast<U>(o[l]) + static_cast<U>(x[l]));
      } else {
        for (std::size_t l = 0; l < n; ++l) o[l] += x[l];
      }
    }
  };
  cube::over_location_slices(values.locations(), sizeof(T), values.bytes(), cube::kAutomaticThreads, slice);
}

// Whether a result row is present where an input's row is, zero or not: for types whose zero is
// a value (a minimum of 0 is no absent row: MIN/MAXDOUBLE ...); not in a difference, which is no
// minimum or maximum of anything (a report less itself is empty).
bool keeps_input_rows(Operation op, const DataType& type) {
  return cube::zero_row_is_a_value(type) && op != Operation::Diff;
}

// An arithmetic operation on metric u: input by input (one input matrix held at a time), row
// by row, in T (double or int64). With the same locations the location axis is split over
// threads (the loops are bound by memory bandwidth and page faults, cube/location_slices.hpp);
// the last input's pass also notes which rows are not zero.
template <class T>
Severity arithmetic(const Plan& plan, std::size_t u, const DataType& out_type, MetricKind kind) {
  const auto& defs = plan.unified.defs;
  const auto cnodes = defs.cnodes.size(), locations = defs.locations.size();
  Severity out(out_type, cnodes, locations);
  const auto count = plan.inputs.size();
  std::vector<std::uint8_t> nonzero(cnodes, 0);
  const bool keeps_rows = keeps_input_rows(plan.op, out_type);
  std::mutex mutex;
  for (std::size_t i = 0; i < count; ++i) {
    const auto& map = plan.unified.inputs[i];
    std::shared_ptr<const Severity> values;
    if (map.metric_of[u] != kAbsent) values = plan.inputs[i]->values(map.metric_of[u], kind);
    const auto slice = [&](std::size_t first, std::size_t n) {
      RowGatherer<T> gather(values.get(), map, &plan.rows[i], first, n);
      std::vector<std::uint8_t> seen(i + 1 == count ? cnodes : 0);
      for (std::size_t c = 0; c < cnodes; ++c) {
        auto* o = reinterpret_cast<T*>(out.row(c)) + first;
        bool any = false;
        apply<T>(plan.op, i, count, gather.row(c), o, n, seen.empty() ? nullptr : &any);
        if (!seen.empty()) seen[c] = any;
      }
      std::lock_guard lock(mutex);
      for (std::size_t c = 0; c < seen.size(); ++c) nonzero[c] |= seen[c];
      if (keeps_rows && first == 0)  // (every slice sees the same rows: the first notes them)
        for (std::size_t c = 0; c < cnodes; ++c) nonzero[c] |= gather.has(c);
    };
    if (map.identity_locations) cube::over_location_slices(locations, sizeof(T), out.bytes(), cube::kAutomaticThreads, slice);
    else slice(0, locations);
  }
  for (std::size_t c = 0; c < cnodes; ++c) out.set_present(c, nonzero[c] != 0);
  return out;
}

// The median of values[0 .. k) (reordered): the middle one, for even k the mean of the two
// middle ones.
double median_of(double* values, std::size_t k) {
  const auto middle = values + k / 2;
  std::nth_element(values, middle, values + k);
  if (k % 2) return *middle;
  return (*std::max_element(values, middle) + *middle) / 2;
}

// The median of metric u in `kind`: every input's matrix at once, one unified row of each at a
// time.
Severity median(const Plan& plan, std::size_t u, const DataType& out_type, MetricKind kind) {
  const auto& defs = plan.unified.defs;
  const auto cnodes = defs.cnodes.size(), locations = defs.locations.size();
  Severity out(out_type, cnodes, locations);
  const auto count = plan.inputs.size();
  std::vector<std::shared_ptr<const Severity>> values(count);
  bool identity = true;
  for (std::size_t i = 0; i < count; ++i) {
    const auto& map = plan.unified.inputs[i];
    if (map.metric_of[u] != kAbsent) values[i] = plan.inputs[i]->values(map.metric_of[u], kind);
    identity = identity && map.identity_locations;
  }
  std::vector<std::uint8_t> nonzero(cnodes, 0);
  const bool keeps_rows = keeps_input_rows(plan.op, out_type);
  std::mutex mutex;
  const auto slice = [&](std::size_t first, std::size_t n) {
    std::vector<std::unique_ptr<RowGatherer<double>>> gather;
    for (std::size_t i = 0; i < count; ++i)
      gather.push_back(std::make_unique<RowGatherer<double>>(values[i].get(), plan.unified.inputs[i], &plan.rows[i], first, n));
    std::vector<const double*> rows(count);
    std::vector<double> column(count);
    std::vector<std::uint8_t> seen(cnodes, 0);
    for (std::size_t c = 0; c < cnodes; ++c) {
      for (std::size_t i = 0; i < count; ++i) rows[i] = gather[i]->row(c);
      auto* o = reinterpret_cast<double*>(out.row(c)) + first;
      for (std::size_t l = 0; l < n; ++l) {
        for (std::size_t i = 0; i < count; ++i) column[i] = rows[i][l];
        o[l] = median_of(column.data(), count);
      }
      seen[c] = !cube::row_is_zero(reinterpret_cast<const std::uint8_t*>(o), n * sizeof(double));
      if (keeps_rows && first == 0)  // (every slice sees the same rows: the first notes them)
        for (std::size_t i = 0; i < count && !seen[c]; ++i) seen[c] = gather[i]->has(c);
    }
    std::lock_guard lock(mutex);
    for (std::size_t c = 0; c < cnodes; ++c) nonzero[c] |= seen[c];
  };
  if (identity) cube::over_location_slices(locations, sizeof(double), out.bytes() * count, cube::kAutomaticThreads, slice);
  else slice(0, locations);
  for (std::size_t c = 0; c < cnodes; ++c) out.set_present(c, nonzero[c] != 0);
  return out;
}

bool same_type(const DataType& a, const DataType& b) { return a.kind == b.kind && a.count == b.count; }

// One input's values of unified row c in the input's own locations (and type, or DOUBLE when
// `doubles`): its rows that unify there combined (siblings add up, MIN/MAXDOUBLE by min / max),
// an absent row counting as zero. Returns nullptr when the input has no call path there.
const std::uint8_t* input_row(const Severity& values, const RowLists& lists, std::size_t c, bool doubles,
                              std::vector<std::uint8_t>& row, std::vector<double>& converted) {
  const auto begin = lists.first[c], end = lists.first[c + 1];
  if (begin == end) return nullptr;
  std::fill(row.begin(), row.end(), std::uint8_t{0});
  bool written = false;
  for (auto k = begin; k < end; ++k) {
    const auto r = lists.rows[k];
    if (!values.present(r)) continue;
    if (written) cube::combine_values(values.dtype(), row.data(), values.row(r), values.locations());
    else std::memcpy(row.data(), values.row(r), row.size());
    written = true;
  }
  if (!doubles) return row.data();
  cube::to_doubles(values.dtype(), row.data(), values.locations(), converted.data());
  return reinterpret_cast<const std::uint8_t*>(converted.data());
}

// merge, as CubeLib's cube_merge: every input that has metric u writes its values, input by
// input, into the unified rows and columns it has (an absent row as zeros), a later input
// overwriting an earlier one where both have a call path and location. (Taking each metric
// from the first input alone left zeros wherever only a later input had a call path or
// location: kripke.p8 merged with blast.p64 lost blast's MPI_Bcast and locations 8-63.)
// Inputs whose types of the metric differ are read as DOUBLE (result_type()).
Severity copied(const Plan& plan, std::size_t u) {
  const auto& defs = plan.unified.defs;
  const auto& type = defs.metrics[u].dtype;
  const auto width = type.width();
  Severity out(type, defs.cnodes.size(), defs.locations.size());
  std::vector<std::uint8_t> written_present(defs.cnodes.size(), 0);
  for (std::size_t i = 0; i < plan.inputs.size(); ++i) {
    const auto& map = plan.unified.inputs[i];
    if (map.metric_of[u] == kAbsent) continue;
    const auto values = plan.inputs[i]->values(map.metric_of[u], defs.metrics[u].kind);
    const bool doubles = !same_type(values->dtype(), type);
    if (doubles && type.kind != ValueKind::Double) throw std::logic_error("merge: metric types differ");
    std::vector<std::uint8_t> row(values->row_bytes());
    std::vector<double> converted(doubles ? values->locations() : 0);
    const auto& lists = plan.rows[i];
    for (std::size_t c = 0; c < defs.cnodes.size(); ++c) {
      const auto* x = input_row(*values, lists, c, doubles, row, converted);
      if (!x) continue;
      auto* o = out.row(c);
      if (map.identity_locations) std::memcpy(o, x, out.row_bytes());
      else
        for (std::size_t l = 0; l < values->locations(); ++l) std::memcpy(o + map.locations[l] * width, x + l * width, width);
      for (auto k = lists.first[c]; k < lists.first[c + 1]; ++k) written_present[c] |= values->present(lists.rows[k]);
    }
  }
  out.mark_nonzero_rows();
  if (keeps_input_rows(plan.op, type))
    for (std::size_t c = 0; c < written_present.size(); ++c)
      if (written_present[c]) out.set_present(c, true);
  return out;
}

// Metric u of the result, in the metric's stored kind.
Severity compute(const Plan& plan, std::size_t u) {
  const auto& metric = plan.unified.defs.metrics[u];
  const auto& type = metric.dtype;
  if (plan.op == Operation::Merge) return copied(plan, u);
  const bool up = summed_up(plan.op, metric);
  const auto kind = up ? MetricKind::Exclusive : metric.kind;
  const bool integers = type.kind == ValueKind::Int64;
  Severity out = plan.op == Operation::Median ? median(plan, u, type, kind)
                 : integers                   ? arithmetic<std::int64_t>(plan, u, type, kind)
                                              : arithmetic<double>(plan, u, type, kind);
  if (up) {
    if (integers) sum_up<std::int64_t>(out, plan.parents);
    else sum_up<double>(out, plan.parents);
  }
  return out;
}

}  // namespace

std::optional<Operation> parse_operation(std::string_view name) {
  if (name == "diff") return Operation::Diff;
  if (name == "merge") return Operation::Merge;
  if (name == "mean") return Operation::Mean;
  if (name == "min") return Operation::Min;
  if (name == "max") return Operation::Max;
  if (name == "median") return Operation::Median;
  return std::nullopt;
}

DataType result_type(Operation op, const std::vector<const DataType*>& inputs) {
  if (op == Operation::Merge) {  // one type read as DOUBLE when the inputs' types differ
    const auto& first = *inputs.front();
    const bool same = std::all_of(inputs.begin(), inputs.end(), [&](auto* t) { return same_type(*t, first); });
    return same ? first : named("DOUBLE");
  }
  const bool integers = std::all_of(inputs.begin(), inputs.end(), [](auto* t) { return t->is_integer(); });
  const bool averaged = op == Operation::Mean || op == Operation::Median;
  if (integers) return named(averaged ? "DOUBLE" : "INT64");
  const auto kind = inputs.front()->kind;
  const bool same_min_max = is_min_max(*inputs.front()) &&
                            std::all_of(inputs.begin(), inputs.end(), [&](auto* t) { return t->kind == kind; });
  if (same_min_max) return *inputs.front();
  return named("DOUBLE");
}

std::shared_ptr<cube::Report> combine(Operation op, const Inputs& inputs, SystemMatch system) {
  if (inputs.empty()) throw std::invalid_argument("report algebra needs at least one report");
  if (op == Operation::Diff && inputs.size() != 2) throw std::invalid_argument("diff takes exactly two reports (A - B)");
  std::vector<const cube::Definitions*> defs;
  for (const auto& r : inputs) {
    if (!r) throw std::invalid_argument("report algebra: a report is missing");
    defs.push_back(&r->definitions());
  }
  auto plan = std::make_shared<Plan>();
  plan->op = op;
  plan->inputs = inputs;
  plan->unified = unify(defs, system);
  auto& unified = plan->unified;
  for (const auto& map : unified.inputs) plan->rows.emplace_back(map.cnodes, unified.defs.cnodes.size());
  for (const auto& c : unified.defs.cnodes) plan->parents.push_back(c.parent);
  for (std::size_t u = 0; u < unified.defs.metrics.size(); ++u) {
    auto& metric = unified.defs.metrics[u];
    if (cube::is_derived(metric)) continue;  // computed from the result's values
    std::vector<const DataType*> types;
    for (std::size_t i = 0; i < inputs.size(); ++i)
      if (unified.inputs[i].metric_of[u] != kAbsent) types.push_back(&defs[i]->metrics[unified.inputs[i].metric_of[u]].dtype);
    metric.dtype = result_type(op, types);
  }
  cube::Definitions result = unified.defs;
  // Where the result came from, for its readers (Cube shows report attributes).
  static const char* const names[] = {"diff", "merge", "mean", "min", "max", "median"};
  result.attrs.emplace_back("cubescale::algebra::operation", names[static_cast<int>(op)]);
  result.attrs.emplace_back("cubescale::algebra::system", unified.reduced ? "reduce" : unified.collapsed ? "processes" : "same");
  return std::make_shared<cube::Report>(std::move(result), [plan](std::size_t m) { return compute(*plan, m); });
}

}  // namespace cubescale::algebra
