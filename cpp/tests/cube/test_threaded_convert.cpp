// Inclusive <-> exclusive on several threads (slices of the location axis) gives the same bytes
// as one thread, for every combine rule and with absent rows. Small matrices with the thread
// count forced, so that the slicing is exercised without gigabytes of test data.
#include <gtest/gtest.h>

#include <cstring>

#include "cubescale/common/recycled_buffers.hpp"
#include "cubescale/cube/aggregate.hpp"
#include "cubescale/cube/dtype.hpp"
#include "expect_same_severity.hpp"
#include "random_severity.hpp"

using namespace cubescale::cube;

TEST(CubeThreadedConvert, SlicesGiveTheBytesOfOneThread) {
  std::mt19937 rng(7);
  for (const char* name : {"DOUBLE", "UINT64", "MINDOUBLE", "MAXDOUBLE", "TAU_ATOMIC", "NDOUBLES(3)"}) {
    SCOPED_TRACE(name);
    const auto t = *parse_data_type(name);
    const auto parents = random_parents(60, rng);
    // 3000 locations: several page-sized slices, the last one shorter.
    const auto values = random_values(t, parents.size(), 3000, rng);
    for (unsigned threads : {2u, 3u, 7u}) {
      expect_same(to_inclusive(values, parents, 1), to_inclusive(values, parents, threads));
      expect_same(to_exclusive(values, parents, 1), to_exclusive(values, parents, threads));
    }
  }
}

TEST(CubeThreadedConvert, FewLocationsUseOneSlice) {
  std::mt19937 rng(3);
  const auto t = *parse_data_type("DOUBLE");
  const auto parents = random_parents(10, rng);
  const auto values = random_values(t, parents.size(), 5, rng);
  expect_same(to_inclusive(values, parents, 1), to_inclusive(values, parents, 8));
}

TEST(CubeThreadedConvert, NoLocationsOrNoWidthRunOnce) {
  std::mt19937 rng(5);
  const auto parents = random_parents(4, rng);
  const Severity none(*parse_data_type("DOUBLE"), parents.size(), 0);
  EXPECT_EQ(to_inclusive(none, parents, 4).bytes(), 0u);
  const Severity empty(DataType{ValueKind::NDoubles, 0, "NDOUBLES(0)"}, parents.size(), 3);  // only from C++
  EXPECT_EQ(to_exclusive(empty, parents, 4).bytes(), 0u);
}

TEST(RecycledBuffers, ReusedBuffersComeBackZeroed) {
  auto& store = cubescale::RecycledBuffers::shared();
  const std::size_t bytes = 40000;
  auto* p = store.take_zeroed(bytes);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p) % 4096, 0u);  // page-aligned, see copy_bytes.hpp
  std::memset(p, 0xab, bytes);
  const auto held = store.held_bytes();
  store.give_back(p, bytes);
  EXPECT_EQ(store.held_bytes(), held + cubescale::RecycledBuffers::capacity(bytes));
  auto* q = store.take_zeroed(bytes + 100);  // the same number of pages: the same buffer
  EXPECT_EQ(q, p);
  for (std::size_t i = 0; i < bytes; ++i) ASSERT_EQ(q[i], 0) << i;
  store.give_back(q, bytes + 100);
}
