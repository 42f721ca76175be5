// libFuzzer target for metric expressions and timeline partials (paper 004). The input is an
// expression in reverse Polish notation: parsed, and when it parses, evaluated for every
// element of a small machine on a small grid; the same bytes are also read as a partial (what
// a worker receives from another). Any input must end in a value, an ExpressionError or
// std::invalid_argument; any other exception, crash, hang or sanitizer report is a bug.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "cubescale/timeline/evaluate.hpp"

using namespace cubescale::timeline;

namespace {

TimelineStore small_store() {
  TimelineStore s({kNoElement, 0, 1, 1, 0});
  s.add(2, "flops", Timeline({0, 1, 2, 3}, {0, 10, 20, 30}));
  s.add(3, "flops", Timeline({0, 2}, {0, 50}, Mode::Relative, Timing::Last));
  s.add(1, "energy", Timeline({0, 3}, {0, 300}));
  s.add(4, "energy", Timeline({1, 1, 2}, {5, 7, 9}, Mode::Absolute, Timing::Next));
  return s;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  static const TimelineStore store = small_store();
  const Grid grid{0.0, 3.0, 16};
  try {
    const auto e = parse_expression(text);
    (void)e.to_string();
    for (std::uint32_t target = 0; target < store.element_count(); ++target) {
      try {
        (void)evaluate(e, store, target, grid);
      } catch (const std::invalid_argument&) {  // a metric the element does not have
      }
    }
  } catch (const ExpressionError&) {
  }
  try {
    auto p = Partial::deserialize(text);
    merge(p, p);
    (void)p.serialize();
  } catch (const std::invalid_argument&) {
  }
  return 0;
}
