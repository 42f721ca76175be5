// Statistics and trace-size scoring (cpp/include/cubescale/stat/): the sums over call paths and
// locations that `cubescale stat` and `cubescale score` need, and OTF2's record sizes. Python
// (cubescale.stat, cubescale.score) chooses the groups and formats the tables.
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "cubescale/measure/filter.hpp"
#include "cubescale/stat/group_sums.hpp"
#include "cubescale/stat/record_sizes.hpp"
#include "register.hpp"

namespace py = pybind11;

namespace cubescale::bindings {
using namespace cubescale::stat;

namespace {

template <typename T>
using Array = py::array_t<T, py::array::c_style | py::array::forcecast>;

template <typename T>
std::span<const T> span_of(const Array<T>& a) {
  return {a.data(), static_cast<std::size_t>(a.size())};
}

template <typename T>
py::array_t<double> sums(const Array<T>& values, const Array<std::uint32_t>& row_group, std::uint32_t row_groups,
                         const Array<std::uint32_t>& column_group, std::uint32_t column_groups,
                         const std::optional<Array<double>>& weight) {
  if (values.ndim() != 2) throw py::value_error("values must be a 2-d array [cnode, location]");
  const auto rows = static_cast<std::size_t>(values.shape(0));
  const auto columns = static_cast<std::size_t>(values.shape(1));
  Grouping g{span_of(row_group), row_groups, span_of(column_group), column_groups,
             weight ? span_of(*weight) : std::span<const double>{}};
  // np.zeros: calloc'ed pages the kernel fills in place (no second buffer, no copy)
  py::array_t<double> result = py::module_::import("numpy").attr("zeros")(
      py::make_tuple(static_cast<py::ssize_t>(row_groups), static_cast<py::ssize_t>(column_groups)));
  std::span<double> out(result.mutable_data(), static_cast<std::size_t>(result.size()));
  {
    py::gil_scoped_release release;
    add_group_sums(span_of(values), rows, columns, g, out);
  }
  return result;
}

}  // namespace

void register_stat(py::module_ m) {
  m.attr("SKIP") = kSkip;
  const char* doc =
      "out[row_group[c], column_group[l]] += values[c, l] * weight[c], a float64 array [row_groups, column_groups]: "
      "call paths summed into regions (or region types), locations into processes, in one pass. Rows whose group "
      "is SKIP are left out; weight (one per row) defaults to 1. ValueError when a length or group does not fit.";
  m.def("group_sums", &sums<std::uint64_t>, py::arg("values").noconvert(), py::arg("row_group"), py::arg("row_groups"),
        py::arg("column_group"), py::arg("column_groups"), py::arg("weight") = py::none(), doc);
  m.def("group_sums", &sums<double>, py::arg("values"), py::arg("row_group"), py::arg("row_groups"),
        py::arg("column_group"), py::arg("column_groups"), py::arg("weight") = py::none(), doc);
  m.def("otf2_record_sizes", &otf2_record_sizes, py::arg("definition_counts"), py::arg("dense_metrics") = 0,
        py::arg("program_arguments") = 0,
        "Bytes of each OTF2 event record scorep-score counts (without the timestamp; 'Timestamp' is listed), from "
        "libotf2's size estimator given the number of definitions by OTF2 name ('Region', 'Metric', 'Comm', "
        "'Location' ...). 'Metric' (a record of dense_metrics values) only when dense_metrics > 0. ValueError for "
        "an unknown name.");
  m.def(
      "filter_excludes",
      [](const std::string& text, const std::vector<std::string>& names, const std::vector<std::string>& files,
         const std::vector<std::string>& mangled_names) {
        if (files.size() != names.size() || mangled_names.size() != names.size())
          throw py::value_error("filter_excludes: one file and one mangled name per name");
        const auto filter = measure::RegionFilter::parse(text);
        std::vector<bool> out(names.size());
        // scorep-score matches the file rules against every region's file name, '' for none
        for (std::size_t i = 0; i < names.size(); ++i)
          out[i] = !filter.included(measure::RegionNames{names[i], mangled_names[i], std::string_view(files[i])});
        return out;
      },
      py::arg("text"), py::arg("names"), py::arg("files"), py::arg("mangled_names"),
      "Per region (name, source file and mangled name, '' for none), whether the Score-P filter `text` excludes "
      "it, as scorep-score decides: MANGLED rules match the mangled name (the name without one), file rules the "
      "file name ('' too). Same parser and matcher as `cubescale run --filter`. ValueError names the line of a "
      "syntax error.");
}

}  // namespace cubescale::bindings
