#pragma once
// Report algebra (CubeLib's cube_diff, cube_merge, cube_mean; cube_cut in cut.hpp): a new report
// over the unified definitions of the inputs (unify.hpp) whose values are computed metric by
// metric when first asked for, from one input matrix at a time: memory is the result's matrix,
// one input's matrix and one row per location, whatever the number of metrics. The median needs
// every input's matrix of the metric at once (it is no running aggregate).
//
// median: per value over the inputs; for an even number of inputs the mean of the two middle
// values (as CubeLib's cube_stat defines its median, P2Statistic.cpp; numpy.median does the same).
//
// A call path or location an input does not have counts as zero there (the run spent nothing
// in it), as in CubeLib. diff and mean combine values in the unified metric's kind along the call
// tree (linear: either kind gives the same). min, max and median are not linear: for metrics
// whose values add along the call tree they are taken of the exclusive values, and a metric
// stored inclusive gets their sums up the call tree (its inclusive values stay consistent with
// them, and no exclusive value goes below zero for inputs that have none); MIN/MAXDOUBLE are
// taken as stored (docs/algebra.md, "Values").
// Result data types: diff, min and max of integer metrics are INT64 (unsigned counters become
// signed: a difference can be negative), mean and median are DOUBLE; MINDOUBLE / MAXDOUBLE stay (their
// aggregation along the trees is min / max); DOUBLE stays DOUBLE; tuples and vectors (TAU_ATOMIC,
// HISTOGRAM, ...) become DOUBLE of their one number per value (to_doubles in aggregate.hpp).
// merge writes every input's values in input order, a later input overwriting an earlier one
// where both have the call path and location (as cube_merge); it keeps data types (DOUBLE when
// the inputs' types of a metric differ). Derived
// metrics keep their CubePL expressions and are computed from the result's values.
#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "cubescale/algebra/unify.hpp"
#include "cubescale/cube/report.hpp"

namespace cubescale::algebra {

enum class Operation : std::uint8_t { Diff, Merge, Mean, Min, Max, Median };
// "diff", "merge", "mean", "min", "max", "median"; nullopt for anything else.
std::optional<Operation> parse_operation(std::string_view name);

using Inputs = std::vector<std::shared_ptr<const cube::Report>>;

// The result of `op` over `inputs` (diff: exactly two, A - B; others: one or more). Throws
// std::invalid_argument for a wrong number of inputs and whatever unify() throws.
std::shared_ptr<cube::Report> combine(Operation op, const Inputs& inputs, SystemMatch system = SystemMatch::Auto);

// The data type of metric `unified` in the result of `op`, from the inputs' data types of it.
cube::DataType result_type(Operation op, const std::vector<const cube::DataType*>& inputs);

}  // namespace cubescale::algebra
