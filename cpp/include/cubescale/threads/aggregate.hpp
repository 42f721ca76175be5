#pragma once
// Thread aggregation of whole reports and of one rank's local profile (strategy.hpp tells the
// strategies). A report is aggregated process by process (location group by location group);
// locations that are not CPU threads (GPU streams, metric locations) are kept unchanged after
// the aggregated ones. The metrics keep their names, kinds and order; SET turns every scalar
// metric into TAU_ATOMIC; SUM, CALLTREE and VALUE gain num_threads ("number of threads": the
// member threads that visited the call path; UINT64 for SUM, UINT32 for clusters) at the end. Memberships of KEY and cluster locations are kept as report attributes
// "cubescale::threads::<group rank>::<location name>" = the member threads' ranks, runs
// written as ranges ("0 2-5 9").
#include <cstddef>
#include <functional>
#include <memory>
#include <string>

#include "cubescale/cube/report.hpp"
#include "cubescale/profile/local_profile.hpp"
#include "cubescale/threads/strategy.hpp"

namespace cubescale::threads {

// Called after each metric with (metrics done, metrics in all), for progress lines.
using Progress = std::function<void(std::size_t, std::size_t)>;

// A new report (in memory, values set) with every process's threads aggregated. Throws
// std::invalid_argument for options that do not fit the report (no work metric for KEY or
// VALUE, a synchronization list of the wrong length, zero clusters).
std::shared_ptr<cube::Report> aggregate_report(const cube::Report& in, const Options& options, const Progress& progress = {});

// The same for one process's profile (collation aggregates before any value leaves a rank).
profile::LocalProfile aggregate_profile(const profile::LocalProfile& in, const Options& options);

// Whether a location of this class (CUBE <type>) is a CPU thread that strategies fold.
bool is_thread_class(const std::string& cls);

}  // namespace cubescale::threads
