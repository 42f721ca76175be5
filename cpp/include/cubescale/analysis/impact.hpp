#pragma once
// Scalasca's critical-path performance-impact metrics (scout's CriticalPath.pattern:
// CRITICAL_PATH_ACTIVITIES, CRITICAL_IMBALANCE_IMPACT, INTER_PARTITION_IMBALANCE,
// NON_CRITICAL_PATH_ACTIVITIES; D. Böhme's thesis), computed from what the report already
// holds: critical_path, time and the waiting times of the sync points. Per location l and call
// path i, as scout:
//   own[i]  = exclusive time - min(exclusive time, waiting time at the sync points on i)
//             (scout's "local time profile"; the waits are mpi_latesender, mpi_latereceiver,
//             mpi_latebroadcast, mpi_earlyreduce, mpi_wait_nxn, mpi_barrier_wait,
//             mpi_finalize_wait: scout's sync points, not scans)
//   gcp[i]  = critical_path summed over all locations
//   critical_path_activities     = min(gcp[i], own[i])            where gcp[i] > 0
//   non_critical_path_activities = own[i] - gcp[i]                where positive
//   critical_imbalance_impact    = cp[i,l] / gcp[i] * G[i]        where cp[i,l] > 0 and positive,
//       G[i] the sum over locations of excess[i] = max(gcp[i] - own[i], 0) scaled per location
//       so that its excesses sum to sum(gcp) - sum(own)
//   inter_partition_imbalance    = cp[i,l] / gcp[i] * H[i]        likewise, H[i] the sum of
//       the headrooms gcp[i] of call paths without own time, scaled per location so that they
//       sum to sum(gcp) - sum over own[i] > 0 of (own[i] + gcp[i] - min(own[i], gcp[i]))
// (scout's IEEE arithmetic included: a location whose scale is 0/0 or x/0 spreads NaN or
// infinity into the sums, and a NaN sum writes nothing).
//
// The sums over locations cross the ranks of a replay: they are exact (fixed point of 2^-60 s,
// with counts of NaN and infinite terms), so that any split of the locations gives the same
// bytes, and call paths are matched by the names of their regions from the root. Three steps,
// the blobs between them moved by the caller (one process: directly):
//   impact_path_sums -> merge_impact -> impact_costs -> merge_impact -> add_impact
#include <string>
#include <vector>

#include "cubescale/profile/local_profile.hpp"

namespace cubescale::analysis {

// Step 1: per call path (by its key) this profile's critical_path summed over its locations.
std::string impact_path_sums(const profile::LocalProfile& p);
// The blobs of one step from every rank, summed per call path.
std::string merge_impact(const std::vector<std::string>& blobs);
// Step 2: given every location's path sums (merged): per call path the imbalance costs and
// headrooms of this profile's locations. `program_spans` (per column, seconds): the time from
// the location's PROGRAM_BEGIN to its PROGRAM_END (SpanObserver::program_span); what its
// top-level regions leave of it is scout's artificial root call path, own time too.
// `local_time` (empty, or [row * columns + column] seconds with one more row flagging worker
// threads): what scout's local time profile of OpenMP threads adds to the profile's exclusive
// time (omp_local_time, critical_path.hpp).
std::string impact_costs(const profile::LocalProfile& p, const std::string& paths,
                         const std::vector<double>& program_spans, const std::vector<double>& local_time = {});
// Step 3: appends the four metrics (roots, EXCLUSIVE, sec, scout's names and nesting:
// inter_partition_imbalance below critical_imbalance_impact) to `p`.
void add_impact(profile::LocalProfile& p, const std::string& paths, const std::string& costs,
                const std::vector<double>& local_time = {});
// All three in one process.
void add_impact(profile::LocalProfile& p, const std::vector<double>& program_spans,
                const std::vector<double>& local_time = {});

}  // namespace cubescale::analysis
