#include "cubescale/trace/synthetic_hybrid.hpp"

#include <otf2/otf2.h>

#include <stdexcept>

#include "synthetic_parts.hpp"

namespace cubescale::trace {

using synthetic::check;
namespace mpi = synthetic::mpi;
namespace omp = synthetic::omp;

namespace {

// The master's MPI calls (from `first`) and parallel regions in time order: on_call(i) for a call
// outside the regions, on_region(r, i, j) for region r with the calls [i, j) inside it (in the
// gaps between its master's calls); std::invalid_argument where a call overlaps a region's
// bounds or one of the master's calls in it.
template <typename OnCall, typename OnRegion>
void interleave(const HybridRank& rank, const std::vector<std::size_t>& kinds, std::uint32_t p, std::size_t first,
                OnCall on_call, OnRegion on_region) {
  std::size_t i = first, r = 0;
  const auto n = rank.mpi.size();
  while (i < n || r < rank.regions.size()) {
    if (r == rank.regions.size() || (i < n && rank.mpi[i].leave <= omp::master_first(rank.regions[r]))) {
      on_call(i++);
      continue;
    }
    const auto& region = rank.regions[r];
    auto j = i;
    // (main's own enter and leave, "outside main" and "main", cannot happen inside a region)
    const auto inside = [&](std::size_t k) {
      return kinds[k] < mpi::kCallCount && omp::fits_master_gap(region, rank.mpi[k].enter, rank.mpi[k].leave);
    };
    while (j < n && rank.mpi[j].enter < omp::master_last(region) && inside(j)) ++j;
    if (j < n && rank.mpi[j].enter < omp::master_last(region)) {
      const auto& c = rank.mpi[j];
      throw std::invalid_argument("rank " + std::to_string(p) + ": " + c.name + " [" + std::to_string(c.enter) + ", " +
                                  std::to_string(c.leave) + "] overlaps the parallel region [" +
                                  std::to_string(omp::master_first(region)) + ", " +
                                  std::to_string(omp::master_last(region)) +
                                  "] or one of its master's calls: an MPI call lies outside the rank's parallel "
                                  "regions or inside its master's team between its calls");
    }
    on_region(r++, i, j);
    i = j;
  }
}

}  // namespace

std::uint64_t write_hybrid_trace(const std::string& directory, const std::string& name,
                                 const std::vector<HybridRank>& ranks, std::uint32_t threads, std::uint64_t end) {
  const auto P = static_cast<std::uint32_t>(ranks.size());
  if (P == 0) throw std::invalid_argument("a synthetic hybrid trace needs at least one rank");
  if (threads == 0) throw std::invalid_argument("a synthetic hybrid trace needs at least one thread per rank");
  // Check everything before the archive exists: no half-written trace.
  std::vector<std::vector<std::size_t>> kinds(P);
  std::vector<bool> begins(P, false);  // the rank records its program ("main" first)
  bool program = false, reversed = false, tasks = false;
  for (std::uint32_t p = 0; p < P; ++p) {
    const auto& rank = ranks[p];
    kinds[p] = mpi::check_rank(rank.mpi, p, P, end);
    try {
      omp::check_regions(rank.regions, threads, end);
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument("rank " + std::to_string(p) + ": " + e.what());
    }
    begins[p] = !kinds[p].empty() && kinds[p][0] == mpi::kMain;
    if (begins[p] && !rank.regions.empty() &&
        (omp::master_first(rank.regions.front()) < rank.mpi[0].enter ||
         omp::master_last(rank.regions.back()) > rank.mpi[0].leave))
      throw std::invalid_argument("rank " + std::to_string(p) + ": main [" + std::to_string(rank.mpi[0].enter) + ", " +
                                  std::to_string(rank.mpi[0].leave) + "] must hold the parallel regions");
    interleave(rank, kinds[p], p, begins[p] ? 1 : 0, [](std::size_t) {}, [](std::size_t, std::size_t, std::size_t) {});
    program = program || begins[p];
    reversed = reversed || mpi::uses_reversed(rank.mpi, kinds[p]);
    tasks = tasks || omp::uses_tasks(rank.regions);
  }
  // Regions: 0 main, the MPI calls, the OpenMP regions, the program's, the task regions.
  const mpi::Regions mpi_regions{0, 1};
  const auto first_omp = static_cast<OTF2_RegionRef>(1 + mpi::kCallCount);
  auto next_region = static_cast<OTF2_RegionRef>(first_omp + omp::kRegionCount);
  const auto program_region = program ? next_region++ : OTF2_UNDEFINED_REGION;
  const auto first_task = next_region;
  // Groups and communicators: MPI's (mpi::write_communicators), then the OpenMP locations
  // group, per process its team's group and communicator.
  const std::uint32_t mpi_groups = reversed ? 4 : 3, mpi_comms = reversed ? 3 : 2;
  std::vector<std::string> strings = synthetic::kFirstStrings;
  strings.insert(strings.end(),
                 {"Master thread", "MPI_COMM_WORLD", "main", "MPI_COMM_SELF", "MPI_COMM_REVERSED", "MPI", "PTHREAD",
                  "OpenMP team", "/synthetic/" + name, name});
  constexpr OTF2_StringRef kMaster = 5, kWorld = 6, kMainName = 7, kSelf = 8, kReversed = 9, kMpiFile = 10,
                           kPthreadFile = 11, kTeamName = 12, kProgramPath = 13, kProgramName = 14;
  const auto first_call_name = mpi::append_call_names(strings);
  const auto first_omp_name = omp::append_region_names(strings);
  const auto first_task_name = tasks ? omp::append_task_region_names(strings) : 0;
  const auto first_worker = static_cast<std::uint32_t>(strings.size());  // "OMP thread 1" ...
  for (std::uint32_t t = 1; t < threads; ++t) strings.push_back("OMP thread " + std::to_string(t));
  const auto first_rank = static_cast<std::uint32_t>(strings.size());
  for (std::uint32_t p = 0; p < P; ++p) strings.push_back("MPI Rank " + std::to_string(p));

  auto* archive = synthetic::open_archive(directory, name);
  std::vector<std::uint64_t> locations(std::size_t(P) * threads), events(locations.size(), 0);
  for (std::uint32_t p = 0; p < P; ++p) {
    const auto& rank = ranks[p];
    const omp::Ids ids{first_omp, first_task, mpi_comms + p};
    const auto orders = omp::acquisition_orders(rank.regions);
    for (std::uint32_t t = 0; t < threads; ++t) {
      const auto location = std::uint64_t(p) * threads + t;
      locations[location] = location;
      auto* w = OTF2_Archive_GetEvtWriter(archive, location);
      if (!w) throw std::runtime_error("no event writer");
      if (t == 0) {
        const auto enter = begins[p] ? rank.mpi[0].enter : 0, leave = begins[p] ? rank.mpi[0].leave : end;
        if (begins[p]) check(OTF2_EvtWriter_ProgramBegin(w, nullptr, 0, kProgramPath, 0, nullptr), "program begin");
        check(OTF2_EvtWriter_Enter(w, nullptr, enter, mpi_regions.main), "enter main");
        mpi::Requests requests;
        interleave(
            rank, kinds[p], p, begins[p] ? 1 : 0,
            [&](std::size_t i) { mpi::write_call(w, rank.mpi[i], kinds[p][i], requests, mpi_regions); },
            [&](std::size_t r, std::size_t i, std::size_t j) {
              omp::write_team(w, rank.regions, r, 0, orders, ids, [&](std::uint64_t until) {
                for (; i < j && rank.mpi[i].leave <= until; ++i)
                  mpi::write_call(w, rank.mpi[i], kinds[p][i], requests, mpi_regions);
              });
            });
        check(OTF2_EvtWriter_Leave(w, nullptr, leave, mpi_regions.main), "leave main");
        if (begins[p]) check(OTF2_EvtWriter_ProgramEnd(w, nullptr, end, 0), "program end");
      } else {
        for (std::size_t r = 0; r < rank.regions.size(); ++r) omp::write_team(w, rank.regions, r, t, orders, ids);
      }
      events[location] = synthetic::close_event_writer(archive, w);
    }
  }
  synthetic::close_event_files(archive, locations);

  auto* g = synthetic::begin_global_definitions(archive, end, strings);
  synthetic::write_system_tree(g);
  synthetic::write_processes(g, P, first_rank);
  for (std::uint32_t p = 0; p < P; ++p)
    for (std::uint32_t t = 0; t < threads; ++t) {
      const auto location = std::uint64_t(p) * threads + t;
      check(OTF2_GlobalDefWriter_WriteLocation(g, location, t == 0 ? kMaster : first_worker + t - 1,
                                               OTF2_LOCATION_TYPE_CPU_THREAD, events[location], p),
            "location");
    }
  check(OTF2_GlobalDefWriter_WriteRegion(g, mpi_regions.main, kMainName, kMainName, 0, OTF2_REGION_ROLE_FUNCTION,
                                         OTF2_PARADIGM_USER, OTF2_REGION_FLAG_NONE, 0, 0, 0),
        "region main");
  mpi::write_call_regions(g, mpi_regions.first_call, first_call_name, kMpiFile);
  omp::write_regions(g, first_omp, first_omp_name, kPthreadFile);
  if (program) synthetic::write_program_region(g, program_region, kProgramName, kProgramPath);
  if (tasks) omp::write_task_regions(g, first_task, first_task_name);
  // MPI: the master threads are the ranks.
  std::vector<std::uint64_t> masters(P);
  for (std::uint32_t p = 0; p < P; ++p) masters[p] = std::uint64_t(p) * threads;
  const auto written = mpi::write_communicators(g, masters, kWorld, kSelf, kReversed, reversed);
  if (written != std::pair{mpi_groups, mpi_comms}) throw std::logic_error("synthetic hybrid trace: MPI communicator ids");
  // OpenMP: every thread in one locations group; per process a team of its threads (their
  // indices in that group, which are their location ids).
  check(OTF2_GlobalDefWriter_WriteGroup(g, mpi_groups, 0, OTF2_GROUP_TYPE_COMM_LOCATIONS, OTF2_PARADIGM_OPENMP,
                                        OTF2_GROUP_FLAG_NONE, static_cast<std::uint32_t>(locations.size()),
                                        locations.data()),
        "OpenMP locations group");
  for (std::uint32_t p = 0; p < P; ++p) {
    const auto group = mpi_groups + 1 + p;
    check(OTF2_GlobalDefWriter_WriteGroup(g, group, 0, OTF2_GROUP_TYPE_COMM_GROUP, OTF2_PARADIGM_OPENMP,
                                          OTF2_GROUP_FLAG_NONE, threads, locations.data() + std::size_t(p) * threads),
          "team group");
    check(OTF2_GlobalDefWriter_WriteComm(g, mpi_comms + p, kTeamName, group, OTF2_UNDEFINED_COMM, OTF2_COMM_FLAG_NONE),
          "team");
  }
  synthetic::close_archive(archive, g);
  std::uint64_t total = 0;
  for (auto n : events) total += n;
  return total;
}

}  // namespace cubescale::trace
