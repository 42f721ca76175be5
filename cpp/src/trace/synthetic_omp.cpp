#include "cubescale/trace/synthetic_omp.hpp"

#include <otf2/otf2.h>

#include <stdexcept>

#include "synthetic_parts.hpp"

namespace cubescale::trace {

using synthetic::check;
namespace omp = synthetic::omp;

// Regions: 0 main, 1 .. 10 the OpenMP regions (omp::Region Parallel .. CondWait), 11 the
// program's region (where `main` is given), then the task regions where a call uses them (so
// that traces without tasks keep their definitions). The team is communicator 0.
std::uint64_t write_omp_trace(const std::string& directory, const std::string& name,
                              const std::vector<OmpParallel>& regions, std::uint32_t threads, std::uint64_t end,
                              const std::optional<OmpMain>& main) {
  if (threads == 0) throw std::invalid_argument("a synthetic OpenMP trace needs at least one thread");
  omp::check_regions(regions, threads, end);  // before the archive exists: no half-written trace
  if (main && (main->leave < main->enter || main->leave > end ||
               (!regions.empty() && (regions.front().fork < main->enter || regions.back().join > main->leave))))
    throw std::invalid_argument("main [" + std::to_string(main->enter) + ", " + std::to_string(main->leave) +
                                "] must hold the parallel regions and end by the trace's end");
  constexpr OTF2_RegionRef kMain = 0;
  const auto program_region = static_cast<OTF2_RegionRef>(omp::kRegionCount + 1);
  const omp::Ids ids{1, program_region + 1, 0};
  // PROGRAM_BEGIN's path, "/synthetic/<name>", after the program region's name <name> (strings 7, 8).
  constexpr OTF2_StringRef kProgramPath = 8;
  const auto orders = omp::acquisition_orders(regions);
  const bool tasks = omp::uses_tasks(regions);
  auto* archive = synthetic::open_archive(directory, name);
  std::vector<std::uint64_t> events(threads, 0), locations(threads);
  for (std::uint32_t th = 0; th < threads; ++th) {
    locations[th] = th;
    auto* w = OTF2_Archive_GetEvtWriter(archive, th);
    if (!w) throw std::runtime_error("no event writer");
    if (th == 0 && main)
      check(OTF2_EvtWriter_ProgramBegin(w, nullptr, 0, kProgramPath, 0, nullptr), "program begin");
    if (th == 0) check(OTF2_EvtWriter_Enter(w, nullptr, main ? main->enter : 0, kMain), "enter main");
    for (std::size_t r = 0; r < regions.size(); ++r) omp::write_team(w, regions, r, th, orders, ids);
    if (th == 0) check(OTF2_EvtWriter_Leave(w, nullptr, main ? main->leave : end, kMain), "leave main");
    if (th == 0 && main) check(OTF2_EvtWriter_ProgramEnd(w, nullptr, end, 0), "program end");
    events[th] = synthetic::close_event_writer(archive, w);
  }
  synthetic::close_event_files(archive, locations);
  // Strings 7 and 8 (kProgramPath): the program region's name and PROGRAM_BEGIN's path; 9 the
  // POSIX threads wrappers' source file.
  std::vector<std::string> strings = synthetic::kFirstStrings;
  strings.insert(strings.end(), {"Process", "OpenMP team", name, "/synthetic/" + name, "PTHREAD"});
  constexpr OTF2_StringRef kPthreadFile = 9;
  const auto main_name = static_cast<std::uint32_t>(strings.size());
  strings.push_back("main");
  const auto first_region = omp::append_region_names(strings);
  const auto first_task_region = tasks ? omp::append_task_region_names(strings) : 0;
  const auto first_thread = static_cast<std::uint32_t>(strings.size());
  for (std::uint32_t th = 0; th < threads; ++th) strings.push_back(th == 0 ? "Master thread" : "OMP thread " + std::to_string(th));
  auto* g = synthetic::begin_global_definitions(archive, end, strings);
  synthetic::write_system_tree(g);
  synthetic::write_processes(g, 1, 5);  // "Process"
  for (std::uint32_t th = 0; th < threads; ++th)
    check(OTF2_GlobalDefWriter_WriteLocation(g, th, first_thread + th, OTF2_LOCATION_TYPE_CPU_THREAD, events[th], 0),
          "location");
  check(OTF2_GlobalDefWriter_WriteRegion(g, kMain, main_name, main_name, 0, OTF2_REGION_ROLE_FUNCTION, OTF2_PARADIGM_USER,
                                         OTF2_REGION_FLAG_NONE, 0, 0, 0),
        "region");
  omp::write_regions(g, ids.first, first_region, kPthreadFile);
  if (tasks) omp::write_task_regions(g, ids.first_task, first_task_region);
  if (main) synthetic::write_program_region(g, program_region, kProgramPath - 1, kProgramPath);
  check(OTF2_GlobalDefWriter_WriteGroup(g, 0, 0, OTF2_GROUP_TYPE_COMM_LOCATIONS, OTF2_PARADIGM_OPENMP,
                                        OTF2_GROUP_FLAG_NONE, threads, locations.data()),
        "locations group");
  check(OTF2_GlobalDefWriter_WriteGroup(g, 1, 0, OTF2_GROUP_TYPE_COMM_GROUP, OTF2_PARADIGM_OPENMP, OTF2_GROUP_FLAG_NONE,
                                        threads, locations.data()),
        "team group");
  check(OTF2_GlobalDefWriter_WriteComm(g, ids.team, 6, 1, OTF2_UNDEFINED_COMM, OTF2_COMM_FLAG_NONE), "team");
  synthetic::close_archive(archive, g);
  std::uint64_t total = 0;
  for (auto n : events) total += n;
  return total;
}

}  // namespace cubescale::trace
