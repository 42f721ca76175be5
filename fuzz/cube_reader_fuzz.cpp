// libFuzzer target for the .cubex reader: tar listing, anchor.xml (plain or gzipped), our
// system tree member, N.index / N.data (SPARSE, DENSE, ZCUBEX, both byte orders). Any input
// must end in a FormatError or a report whose regions parse and whose every metric loads and
// converts; any other exception, crash or sanitizer report is a bug.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "cubescale/common/format_error.hpp"
#include "cubescale/cube/reader.hpp"
#include "cubescale/cube/scale_func.hpp"

using namespace cubescale;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    const auto report = cube::open_cubex_bytes(std::string(reinterpret_cast<const char*>(data), size), "fuzz");
    report->definitions();  // the regions, parsed on first use
    for (std::size_t m = 0; m < report->metric_count(); ++m) {
      std::shared_ptr<const cube::Severity> stored;
      try {
        stored = report->values(m);
      } catch (const cube::DerivedMetricError&) {
        continue;
      }
      // Converting copies the matrix; skip that for the rare huge ones to keep runs fast.
      if (stored->bytes() < (std::size_t(16) << 20)) {
        try {
          report->values(m, cube::MetricKind::Inclusive);
          report->values(m, cube::MetricKind::Exclusive);
        } catch (const cube::ScaleFuncOverflow&) {  // a sum beyond CubeLib's 30 terms: documented
        } catch (const cube::DerivedMetricError&) {  // an expression outside the CubePL subset
        }
      }
    }
  } catch (const FormatError&) {
  }
  return 0;
}
