#pragma once
// Test helper: two matrices hold the same bytes and the same present rows.
#include <gtest/gtest.h>

#include <cstring>

#include "cubescale/cube/severity.hpp"

inline void expect_same(const cubescale::cube::Severity& a, const cubescale::cube::Severity& b) {
  ASSERT_EQ(a.bytes(), b.bytes());
  EXPECT_EQ(std::memcmp(a.data(), b.data(), a.bytes()), 0);
  for (std::size_t c = 0; c < a.cnodes(); ++c) EXPECT_EQ(a.present(c), b.present(c)) << "row " << c;
}
