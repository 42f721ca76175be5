#pragma once
// Scalasca's root-cause analysis of MPI wait states (scout's delay costs and wait-state
// propagation; docs/root-cause-design.md has the rules, read from scout 2.6's sources, and a
// worked example): which time of which call path on the *delaying* process caused the waits of
// others (`delay_*`: short-term for the wait it caused directly, long-term for the waits that
// wait caused in turn), and which point-to-point waits were themselves caused by waits
// (`mpi_wait_indirect_*`) or caused later ones (`mpi_wait_propagating_*`).
//
// One process only (AnalysisOptions::root_cause): the backward pass follows waits across every
// location at once. Its inputs are what the one-process analysis has (the records, their
// message pairs and collective instances) and one more read of the MPI locations' events, which
// cuts each location's exclusive time per call path at its synchronization points (the enters
// of the MPI calls where it synchronized) and finds the MPI_Isend / MPI_Irecv calls the records
// no longer hold.
//
// Long intervals (a pair that rarely synchronizes; a collective whose delayer never synchronized
// with every other member, so that its group start is the trace start) cost no walk over them:
// a backward search walks a few points, then asks its location's index by partner; interval
// sums are differences of running sums per call path; the costs added to the waits of an
// interval are one update of a Fenwick tree over the delayer's waiting points, settled when the
// backward pass reaches each point. O((points + instances) · call paths touched · log points).
//
// Where we differ from scout (docs/analysis.md, "Root causes"): no cap of 128 call paths per time
// map (scout drops the smallest beyond it); a trace without MPI_Init starts every location's
// first interval at its first event; a cut sits at the enter of the MPI call holding the
// synchronization point (scout: at the event itself, later only if the call has nested regions
// before it). As scout's time maps, a thread's time from the fork to its team begin, and the
// master's from leaving the parallel region to its join, count for the parallel region (taken
// off the call path the master forked or joined in).
//
// OpenMP (docs/root-cause-design.md section 5): barrier waits and the idleness of the workers
// while the master runs serially are delay costs of the last thread and of the master, and
// costs of the waits in their intervals, which the backward pass carries across processes like
// the MPI types (a hybrid run: `delay_ompbarrier_longterm`, `delay_ompidle_longterm` on the
// processes that held up a master in MPI, as scout's hybrid build computes them).
#include <cstdint>
#include <vector>

#include "cubescale/analysis/late_receiver.hpp"
#include "cubescale/analysis/omp_patterns.hpp"
#include "cubescale/analysis/waitstates.hpp"
#include "cubescale/profile/local_profile.hpp"
#include "cubescale/trace/reader.hpp"

namespace cubescale::analysis {

class OffsetFunction;  // time_correct.hpp

struct RootCauseStats {
  std::uint64_t sync_points = 0;     // over all locations (the trace-start points not counted)
  std::uint64_t segment_entries = 0;  // (segment, call path) entries of the time maps
  std::uint64_t forced = 0;          // waits handled out of the backward order (a cycle: inconsistent times)
  std::uint64_t bytes = 0;           // the synchronization points, costs and time maps held
  double read_seconds = 0, seconds = 0;  // wall time of the second read, of everything
};

// The 16 metrics scout writes for the MPI root-cause analysis, in its order; with `openmp`
// delay_ompbarrier, delay_ompbarrier_longterm, delay_ompidle and delay_ompidle_longterm too,
// after delay_n21_longterm (a report has the long-term ones where the trace has MPI and OpenMP).
std::vector<const char*> root_cause_metric_names(bool openmp = false);

// Appends the root-cause metrics (roots, EXCLUSIVE, sec; the MPI ones where the trace has MPI
// records, the OpenMP ones where it has parallel regions, as scout's builds do) to `p`, the analysis report of
// `locations` whose records the matching accepted; `extras`, `pairs` and `instances`: theirs
// (RecordExtractor, pair_messages, collective_instances); `omp`, when given: the OpenMP records
// of the same pass (OpenMP barrier and idleness delay costs, where the trace has parallel
// regions). `chunking`: the second read of the trace on threads (its locations cut by their
// announced events). `moves`: where the records were corrected (ClockCheck::moves, per records
// index), the offset functions that moved them: the second read moves the events the same way,
// so that the time maps and the waits see the same clock.
void add_root_cause(const trace::Trace& trace, const std::vector<std::uint32_t>& locations,
                    const std::vector<LocationRecords>& records, const std::vector<PointToPointExtras>& extras,
                    const MessagePairs& pairs, const std::vector<std::vector<RecordRef>>& instances,
                    profile::LocalProfile& p, const OmpObserver* omp = nullptr, RootCauseStats* stats = nullptr,
                    const Chunking& chunking = {}, const std::vector<OffsetFunction>* moves = nullptr);

}  // namespace cubescale::analysis
