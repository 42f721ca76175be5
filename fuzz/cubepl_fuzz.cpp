// libFuzzer target for derived metrics. The first byte chooses what the rest is:
//  * even: a CubePL program, parsed and (when it parses) run both as <cubeplinit> and as
//    <cubepl> over a small report context;
//  * odd: an anchor.xml whose derived metrics are all computed, inclusive and exclusive.
// Any input must end in a value, a FormatError, a cubepl::Error or a DerivedMetricError;
// any other exception, crash, hang or sanitizer report is a bug.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "cubescale/common/format_error.hpp"
#include "cubescale/cube/anchor_xml.hpp"
#include "cubescale/cube/report.hpp"
#include "cubescale/cubepl/evaluate.hpp"
#include "cubescale/cubepl/parser.hpp"

using namespace cubescale;

namespace {

cubepl::Context small_context() {
  cubepl::Context c;
  c.dims = {3, 2};
  c.cnode_region = {0, 1, 1};
  c.cnode_parent = {0xffffffffu, 0, 0};
  c.regions = {{"main", "", "app", "", "", "", ""}, {"MPI_Send", "", "MPI", "mpi", "", "", "MPI"}};
  c.metric_count = 1;
  c.metric = [](const std::string& name, cubepl::Flavour) -> std::shared_ptr<const std::vector<double>> {
    if (name != "time") return nullptr;
    return std::make_shared<const std::vector<double>>(std::vector<double>{1, 2, 3, 4, 5, 6});
  };
  return c;
}

void program(const std::string& text) {
  const auto p = cubepl::parse(text);
  const auto c = small_context();
  cubepl::Globals g;
  try {
    cubepl::run_init(p, c, g);
  } catch (const cubepl::Error&) {
  }
  cubepl::evaluate(p, c, g, cubepl::Flavour::Exclusive);
}

void anchor(const std::string& xml) {
  const cube::Report report(cube::parse_anchor(xml, "fuzz"));
  for (std::size_t m = 0; m < report.metric_count(); ++m) {
    if (!cube::is_derived(report.structure().metrics[m])) continue;
    try {
      report.values(m, cube::MetricKind::Inclusive);
      report.values(m, cube::MetricKind::Exclusive);
    } catch (const cube::DerivedMetricError&) {
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  try {
    if (data[0] % 2 == 0) program(text);
    else anchor(text);
  } catch (const cubepl::Error&) {
  } catch (const FormatError&) {
  } catch (const std::invalid_argument& e) {
    // Definitions that validate() rejects (e.g. no location) are std::invalid_argument too.
  }
  return 0;
}
