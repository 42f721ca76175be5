#pragma once
// What the analysis tests share: a temporary folder per test and synthetic MPI traces in it,
// and a metric's values per (location, region of the call path) of an analysis profile.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "cubescale/profile/local_profile.hpp"
#include "cubescale/trace/synthetic_mpi.hpp"

namespace cubescale::analysis_tests {

// A fresh folder removed at the end of the test; `tag` names the test (one per process).
struct TempDir {
  std::filesystem::path path;
  explicit TempDir(const std::string& tag)
      : path(std::filesystem::temp_directory_path() / ("cubescale_analysis_" + tag + "_" + std::to_string(::getpid()))) {
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path);
  }
  ~TempDir() { std::filesystem::remove_all(path); }
};

// <dir>/<name>.otf2 with the MPI calls of every rank (trace::write_mpi_trace); its anchor's path.
inline std::string write(const TempDir& dir, const std::vector<std::vector<trace::MpiCall>>& ranks, std::uint64_t end,
                         const std::string& name = "t") {
  trace::write_mpi_trace(dir.path.string(), name, ranks, end);
  return (dir.path / (name + ".otf2")).string();
}

// Values of `metric` (stored exclusive along the call tree) per (location, region name of the
// call path), non-zero only, as doubles (UINT64 counts converted).
inline std::map<std::pair<std::size_t, std::string>, double> by_call(const profile::LocalProfile& p,
                                                                      const std::string& metric) {
  std::size_t m = 0;
  while (m < p.metrics.size() && p.metrics[m].uniq_name != metric) ++m;
  EXPECT_LT(m, p.metrics.size()) << metric;
  std::map<std::pair<std::size_t, std::string>, double> out;
  if (m == p.metrics.size()) return out;
  const bool integer = p.metrics[m].dtype.name == "UINT64";
  for (std::size_t c = 0; c < p.cnode_count(); ++c)
    for (std::size_t l = 0; l < p.locations.size(); ++l) {
      double v;
      if (integer) {
        std::uint64_t n;
        std::memcpy(&n, p.values[m].row(c) + l * 8, 8);
        v = static_cast<double>(n);
      } else {
        std::memcpy(&v, p.values[m].row(c) + l * 8, 8);
      }
      if (v != 0) out[{l, p.regions[p.cnode_regions[c]].name}] = v;
    }
  return out;
}

}  // namespace cubescale::analysis_tests
