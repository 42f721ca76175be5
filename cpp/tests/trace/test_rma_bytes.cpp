// One-sided communication in the trace -> profile kernel: Score-P's bytes_put and bytes_get
// (RMA_PUT and RMA_GET bytes, and what RMA collectives and atomics sent and received) on the
// call path of the event, where the trace defines RMA windows (docs/trace.md).
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <string>

#include "cubescale/trace/profile.hpp"
#include "cubescale/trace/reader.hpp"
#include "../analysis/trace_files.hpp"
#include "one_location_trace.hpp"
#include "profile_by_path.hpp"

using namespace cubescale::trace;
using E = cubescale::trace_tests::OneLocationEvent;
using cubescale::trace_tests::counts_by_path;

TEST(RmaBytes, PutsGetsCollectivesAndAtomicsOnTheirCallPaths) {
  cubescale::analysis_tests::TempDir dir("rma");
  // Regions 0 main, 1 MPI_Win_create, 2 MPI_Put, 3 MPI_Get, 4 MPI_Accumulate.
  E put{E::RmaPut, 11}, get{E::RmaGet, 21}, atomic{E::RmaAtomic, 31}, create{E::RmaCollectiveEnd, 2},
      in_main{E::RmaPut, 40}, outside{E::RmaGet, 60};
  put.bytes = 100, get.bytes = 200, atomic.bytes = 40, atomic.received = 50, create.bytes = 8, create.received = 16;
  in_main.bytes = 7, outside.bytes = 9;
  const auto anchor = cubescale::trace_tests::write_one_location(
      dir.path, "t", {{"main", "main"}, {"MPI_Win_create", "MPI_Win_create"}, {"MPI_Put", "MPI_Put"},
                      {"MPI_Get", "MPI_Get"}, {"MPI_Accumulate", "MPI_Accumulate"}},
      {{E::Enter, 0, 0}, {E::Enter, 1, 1}, create, {E::Leave, 3, 1}, {E::Enter, 10, 2}, put, {E::Leave, 12, 2},
       {E::Enter, 20, 3}, get, {E::Leave, 22, 3}, {E::Enter, 30, 4}, atomic, {E::Leave, 32, 4}, in_main,
       {E::Leave, 50, 0}, outside},  // outside every region: on no call path
      "t");
  const Trace trace(anchor);
  const auto p = trace_profile(trace, trace.all_locations());
  std::vector<std::string> names;
  for (const auto& m : p.metrics) names.push_back(m.uniq_name);
  EXPECT_EQ(names, (std::vector<std::string>{"visits", "time", "min_time", "max_time", "bytes_put", "bytes_get",
                                             "bytes_sent", "bytes_received"}));  // Score-P's order
  EXPECT_EQ(counts_by_path(p, "bytes_put"), (std::map<std::string, std::uint64_t>{
                                                {"main", 7}, {"main/MPI_Win_create", 8}, {"main/MPI_Put", 100},
                                                {"main/MPI_Accumulate", 40}}));
  EXPECT_EQ(counts_by_path(p, "bytes_get"), (std::map<std::string, std::uint64_t>{
                                                {"main/MPI_Win_create", 16}, {"main/MPI_Get", 200},
                                                {"main/MPI_Accumulate", 50}}));
}

// Without RMA windows the profile has no RMA metrics (and no memory for them).
TEST(RmaBytes, NoWindowsNoMetrics) {
  cubescale::analysis_tests::TempDir dir("rma");
  const auto anchor = cubescale::trace_tests::write_one_location(dir.path, "t", {{"main", "main"}},
                                                                  {{E::Enter, 0, 0}, {E::Leave, 5, 0}}, "t");
  const Trace trace(anchor);
  const auto p = trace_profile(trace, trace.all_locations());
  ASSERT_EQ(p.metrics.size(), 6u);
  EXPECT_EQ(p.metrics[4].uniq_name, "bytes_sent");
}
