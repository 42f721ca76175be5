// Cube's panes from the stored matrix (panes.hpp) equal what the converted matrix gives: per-cnode
// totals in both kinds and one cnode's row, for every combine rule, with absent rows, on one
// and several threads. Values are small whole numbers, so that every sum is exact in any
// order and the comparisons can be exact. The report keeps the totals once computed.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <stdexcept>

#include "cubescale/cube/aggregate.hpp"
#include "cubescale/cube/anchor_xml.hpp"
#include "cubescale/cube/panes.hpp"
#include "cubescale/cube/report.hpp"
#include "random_severity.hpp"

using namespace cubescale::cube;

namespace {

constexpr MetricKind kKinds[] = {MetricKind::Inclusive, MetricKind::Exclusive};

// The reference: every value as a double, then combined row by row in index order.
std::vector<double> reference_totals(const Severity& values) {
  std::vector<double> all(values.cnodes() * values.locations()), out(values.cnodes(), 0.0);
  to_doubles(values, all.data());
  const auto how = values.dtype().combine();
  for (std::size_t c = 0; c < values.cnodes() && values.locations(); ++c) {
    const double* row = all.data() + c * values.locations();
    double acc = row[0];
    for (std::size_t l = 1; l < values.locations(); ++l)
      acc = how == Combine::Min ? std::min(acc, row[l]) : how == Combine::Max ? std::max(acc, row[l]) : acc + row[l];
    out[c] = acc;
  }
  return out;
}

std::vector<double> row_of(const Severity& values, std::size_t c) {
  std::vector<double> out(values.locations());
  to_doubles(values, c, 1, out.data());
  return out;
}

// Random values stored in `kind`: inclusive ones are made from exclusive ones, as measured
// (a call path includes its callees), so that unsigned exclusive values do not wrap around.
Severity realistic(const DataType& t, MetricKind kind, const std::vector<std::uint32_t>& parents, std::size_t locations,
                   std::mt19937& rng) {
  auto exclusive = random_values(t, parents.size(), locations, rng);
  return kind == MetricKind::Exclusive ? exclusive : to_inclusive(exclusive, parents);
}

const char* const kTypes[] = {"DOUBLE", "UINT64", "INT64", "INT32", "UINT8", "MINDOUBLE", "MAXDOUBLE",
                              "TAU_ATOMIC", "NDOUBLES(3)", "HISTOGRAM(2)"};

}  // namespace

TEST(CubePanes, TotalsOfBothKindsEqualThoseOfTheConvertedMatrix) {
  std::mt19937 rng(11);
  for (const char* name : kTypes) {
    const auto t = *parse_data_type(name);
    for (auto stored_kind : kKinds) {
      SCOPED_TRACE(std::string(name) + (stored_kind == MetricKind::Inclusive ? " stored inclusive" : " stored exclusive"));
      const auto parents = random_parents(40, rng);
      // 1500 locations: several page-sized slices when threaded, the last one shorter.
      const auto stored = realistic(t, stored_kind, parents, 1500, rng);
      for (unsigned threads : {1u, 3u}) {
        const auto totals = cnode_totals(stored, stored_kind, parents, threads);
        for (auto kind : kKinds)
          EXPECT_EQ(totals.of(kind), reference_totals(convert(stored, stored_kind, kind, parents)));
      }
    }
  }
}

TEST(CubePanes, UnsignedExclusiveValuesWrapAsInTheConvertedMatrix) {
  // Inclusive values with callees above their callers: exclusive values wrap around below zero.
  std::mt19937 rng(13);
  for (const char* name : {"UINT64", "UINT32"}) {
    SCOPED_TRACE(name);
    const auto parents = random_parents(40, rng);
    const auto stored = random_values(*parse_data_type(name), parents.size(), 1500, rng);
    const auto want = reference_totals(to_exclusive(stored, parents));
    ASSERT_GT(*std::max_element(want.begin(), want.end()), 1e9);  // some did wrap (past 2^32 at least)
    for (unsigned threads : {1u, 3u}) {
      const auto got = cnode_totals(stored, MetricKind::Inclusive, parents, threads).exclusive;
      for (std::size_t c = 0; c < want.size(); ++c) EXPECT_NEAR(got[c], want[c], 1e-12 * want[c]) << "cnode " << c;
    }
  }
}

TEST(CubePanes, RowOfEitherKindEqualsTheConvertedMatrixRow) {
  std::mt19937 rng(12);
  for (const char* name : kTypes) {
    const auto t = *parse_data_type(name);
    for (auto stored_kind : kKinds) {
      SCOPED_TRACE(name);
      const auto parents = random_parents(30, rng);
      const auto stored = realistic(t, stored_kind, parents, 1100, rng);
      for (auto kind : kKinds) {
        const auto converted = convert(stored, stored_kind, kind, parents);
        for (std::size_t c = 0; c < parents.size(); ++c)
          for (unsigned threads : {1u, 2u}) {
            std::vector<double> row(stored.locations(), -1.0);
            cnode_row(stored, stored_kind, kind, parents, c, row.data(), threads);
            ASSERT_EQ(row, row_of(converted, c)) << "cnode " << c << ", " << threads << " threads";
          }
      }
    }
  }
}

TEST(CubePanes, SubtreeWithoutRowsIsZeroForMinAndMax) {
  // Root 0 with children [1, 3], 1 with child [2]; only row 3 present, holding negative values.
  const std::vector<std::uint32_t> parents{kNoParent, 0, 1, 0};
  for (const char* name : {"MINDOUBLE", "MAXDOUBLE"}) {
    Severity s(*parse_data_type(name), 4, 2);
    const double values[2] = {-5, -7};
    std::memcpy(s.row(3), values, sizeof values);
    s.set_present(3, true);
    const auto totals = cnode_totals(s, MetricKind::Exclusive, parents, 1);
    const double extreme = std::string(name) == "MINDOUBLE" ? -7 : -5;
    EXPECT_EQ(totals.inclusive, (std::vector<double>{extreme, 0, 0, extreme})) << name;
    EXPECT_EQ(totals.exclusive, (std::vector<double>{0, 0, 0, extreme})) << name;
  }
}

TEST(CubePanes, NoLocationsGiveZeros) {
  const std::vector<std::uint32_t> parents{kNoParent, 0};
  const Severity none(*parse_data_type("DOUBLE"), 2, 0);
  const auto totals = cnode_totals(none, MetricKind::Inclusive, parents, 4);
  EXPECT_EQ(totals.exclusive, (std::vector<double>{0, 0}));
  cnode_row(none, MetricKind::Inclusive, MetricKind::Exclusive, parents, 1, nullptr, 4);  // writes nothing
}

TEST(CubePanes, BadSelectionsThrow) {
  const std::vector<std::uint32_t> parents{kNoParent, 0};
  const Severity s(*parse_data_type("DOUBLE"), 2, 3);
  double row[3];
  EXPECT_THROW(cnode_row(s, MetricKind::Inclusive, MetricKind::Exclusive, parents, 2, row), std::out_of_range);
  EXPECT_THROW(cnode_totals(s, MetricKind::Inclusive, {kNoParent}), std::invalid_argument);
  EXPECT_THROW(cnode_totals(s, MetricKind::Inclusive, {kNoParent, 1}), std::invalid_argument);
}

TEST(CubePanes, ReportKeepsTotalsUntilValuesAreReplaced) {
  // One exclusive DOUBLE metric over the call chain 0 > 1 > 2, one location.
  const auto d = parse_anchor(
      R"(<cube version="4.4"><metrics><metric id="0" type="EXCLUSIVE"><uniq_name>t</uniq_name><dtype>DOUBLE</dtype>)"
      R"(</metric></metrics><program><region id="0" mod="" begin="0" end="0"><name>f</name></region>)"
      R"(<cnode id="0" calleeId="0"><cnode id="1" calleeId="0"><cnode id="2" calleeId="0"/></cnode></cnode>)"
      R"(</program><system><systemtreenode Id="0"><name>m</name><class>machine</class><locationgroup Id="0">)"
      R"(<name>p</name><rank>0</rank><type>process</type><location Id="0"><name>t</name><rank>0</rank>)"
      R"(<type>thread</type></location></locationgroup></systemtreenode></system></cube>)",
      "panes.xml");
  std::atomic<int> loads{0};
  Report report(d, [&](std::size_t) {
    ++loads;
    Severity s(*parse_data_type("DOUBLE"), 3, 1);
    for (std::size_t c = 0; c < 3; ++c) {
      const double v = double(c + 1);
      std::memcpy(s.row(c), &v, 8);
      s.set_present(c, true);
    }
    return s;
  });
  const auto first = report.cnode_totals(0);
  EXPECT_EQ(first->inclusive, (std::vector<double>{6, 5, 3}));
  EXPECT_EQ(report.cnode_totals(0), first);  // the same object: no second pass
  double row = 0;
  report.cnode_row(0, MetricKind::Inclusive, 1, &row);
  EXPECT_EQ(row, 5);
  EXPECT_EQ(loads.load(), 1);
  report.set_values(0, Severity(*parse_data_type("DOUBLE"), 3, 1));
  const auto replaced = report.cnode_totals(0);
  EXPECT_NE(replaced, first);
  EXPECT_EQ(replaced->inclusive, (std::vector<double>{0, 0, 0}));
}
