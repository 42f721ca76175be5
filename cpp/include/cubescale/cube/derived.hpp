#pragma once
// Derived metrics of a report: values computed by CubePL expressions (cubepl/) instead of
// read from data members. The first request parses every metric's <cubeplinit> and runs
// them in metric order into one set of global variables (Score-P's spec fills
// per-call-path masks there), and parses a metric's <cubepl> on its first use; programs and
// globals are then read-only, so metrics evaluate concurrently. A metric whose expression is
// malformed or outside the supported subset fails with DerivedMetricError naming the metric,
// the program (<cubepl> / <cubeplinit>), the offset and the construct; the rest of the
// report stays usable; so does a failed <cubeplinit>, for its metric and the metrics that
// read its globals. Operands are read through a callback (Report supplies its values,
// derived or stored, in the requested flavour); metrics the report lacks read as 0 (CubeLib).
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "cubescale/cube/definitions.hpp"
#include "cubescale/cube/severity.hpp"
#include "cubescale/cubepl/error.hpp"
#include "cubescale/cubepl/evaluate.hpp"

namespace cubescale::cube {

class DerivedMetricError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

class DerivedMetrics {
 public:
  // Values of metric `index` in `kind` as cnodes x locations doubles.
  using Operand = std::function<std::shared_ptr<const std::vector<double>>(std::size_t index, MetricKind kind)>;

  // `defs` (with regions) must outlive this object.
  explicit DerivedMetrics(const Definitions& defs);

  // The values of derived metric `metric` in `kind` (the caller converts PREDERIVED metrics
  // to the other flavour; POSTDERIVED ones are evaluated in either). Throws
  // DerivedMetricError.
  Severity evaluate(std::size_t metric, MetricKind kind, const Operand& operand);

 private:
  void initialize();  // under mutex_: init programs, context
  const cubepl::Program& program(std::size_t metric);
  std::string message(std::size_t metric, const char* part, const cubepl::Error& e) const;

  const Definitions& defs_;
  std::mutex mutex_;
  bool initialized_ = false;
  cubepl::Context context_;
  cubepl::Globals globals_;
  // A <cubeplinit> that failed: its own metric and every metric reading one of its globals
  // (all that read any variable, if it did not even parse) fail with its message.
  struct FailedInit {
    std::string message;
    std::size_t metric;
    bool unparsed;
    std::set<std::string, std::less<>> globals;
  };
  std::vector<FailedInit> failed_inits_;
  std::vector<std::shared_ptr<const cubepl::Program>> programs_;
};

}  // namespace cubescale::cube
