// Metric timelines: resampling per timing and interpolation, expressions that print back as
// they parse, partials that survive serialization and merge in any grouping.
#include <gtest/gtest.h>

#include "cubescale/timeline/evaluate.hpp"

using namespace cubescale::timeline;

TEST(Timeline, StairstepHonoursTiming) {
  const Grid grid{0.0, 4.0, 5};
  std::vector<double> out(5);
  resample(Timeline({1, 3}, {10, 30}), Interpolation::Stairstep, grid, out.data());
  EXPECT_EQ(out, (std::vector<double>{10, 10, 10, 30, 30}));
  resample(Timeline({1, 3}, {10, 30}, Mode::Absolute, Timing::Last), Interpolation::Stairstep, grid, out.data());
  EXPECT_EQ(out, (std::vector<double>{10, 10, 30, 30, 30}));
  resample(Timeline({1, 3}, {10, 30}), Interpolation::Linear, grid, out.data());
  EXPECT_EQ(out, (std::vector<double>{10, 10, 20, 30, 30}));
  EXPECT_THROW(Timeline({2, 1}, {0, 0}), std::invalid_argument);
  EXPECT_THROW((Grid{0, 1, 0}.check()), std::invalid_argument);
}

TEST(Expression, PrintsBackAndRefusesNesting) {
  const std::string paper = R"("2" "stairstep" source-counter "sum" aggregate "0" diff-quot )"
                            R"("4" "stairstep" source-counter "sum" aggregate "0" diff-quot /)";
  const auto e = parse_expression(paper);
  EXPECT_EQ(e.to_string(), paper);
  EXPECT_EQ(e.aggregates().size(), 2u);
  try {
    parse_expression(R"("a" "stairstep" source-counter "sum" aggregate "max" aggregate)");
    FAIL();
  } catch (const ExpressionError& err) {
    EXPECT_EQ(err.position, 53u);  // the outer aggregate
  }
}

TEST(Partial, SerializesAndMergesInAnyGrouping) {
  TimelineStore a({kNoElement, 0, 0, 0}), b({kNoElement, 0, 0, 0}), all({kNoElement, 0, 0, 0});
  for (std::uint32_t e = 1; e <= 3; ++e) {
    Timeline t({0, 10}, {0, 10.0 * e});
    (e == 2 ? b : a).add(e, "x", t);
    all.add(e, "x", t);
  }
  const auto expr = parse_expression(R"("x" "linear" source-counter "avg" aggregate "0" diff-quot)");
  const Grid grid{0, 10, 11};
  auto pa = Partial::deserialize(partial_aggregate(*expr.aggregates()[0], a, 0, grid).serialize());
  merge(pa, partial_aggregate(*expr.aggregates()[0], b, 0, grid));
  const auto split = evaluate(expr, {pa}, all, 0, grid);
  const auto whole = evaluate(expr, all, 0, grid);
  ASSERT_EQ(split.size(), 11u);
  for (std::size_t i = 0; i < split.size(); ++i) {
    EXPECT_DOUBLE_EQ(split[i], 2.0);  // (1 + 2 + 3) / 3 per second
    EXPECT_DOUBLE_EQ(whole[i], split[i]);
  }
  EXPECT_THROW(Partial::deserialize("TLP1"), std::invalid_argument);
}
