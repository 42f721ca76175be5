#pragma once
// The kernels of thread aggregation: each output column folds a set of input columns of the
// same matrix, row by row, in one pass. Sums (integers wrap around as counters do; doubles
// in member order) keep every process's totals exactly; MINDOUBLE / MAXDOUBLE take the
// minimum / maximum over the members that visited the call path (a thread that never went
// there has a 0 that is no measurement); other types combine as along the system tree.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "cubescale/cube/severity.hpp"

namespace cubescale::threads {

// Output columns as lists of input columns (CSR): output g folds member[first[g] .. first[g+1]).
struct ColumnGroups {
  std::vector<std::size_t> first{0};
  std::vector<std::uint32_t> member;
  // 1 where a group's members are consecutive columns (a process's threads under SUM/SET,
  // KEY's workers mostly): the kernels then read them as one run that vectorizes.
  std::vector<std::uint8_t> consecutive;
  std::size_t size() const { return first.size() - 1; }
  void add(const std::vector<std::uint32_t>& columns);
};

// visited: [cnode][input location] flags (1: the location visited the call path).
cube::Severity fold_columns(const cube::Severity& in, const ColumnGroups& groups, const std::vector<std::uint8_t>& visited);
// SET: every output value a TAU_ATOMIC tuple over the members: N = members that visited,
// min / max over those (over all members when none did), sum and sum of squares over all
// members (so that the sums keep the totals). Scalar input types only.
cube::Severity tuple_columns(const cube::Severity& in, const ColumnGroups& groups, const std::vector<std::uint8_t>& visited);
// num_threads: per (cnode, output column) the members that visited the call path, as
// `dtype` (UINT64 or UINT32).
cube::Severity count_visits(const ColumnGroups& groups, const std::vector<std::uint8_t>& visited, std::size_t cnodes,
                            std::size_t locations, const cube::DataType& dtype);
// Whether SET can turn values of this type into tuples (integers, doubles, MIN/MAXDOUBLE).
bool is_scalar(const cube::DataType& t);

}  // namespace cubescale::threads
