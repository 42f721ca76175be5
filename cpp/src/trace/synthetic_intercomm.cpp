#include "cubescale/trace/synthetic_intercomm.hpp"

#include <otf2/otf2.h>

#include <stdexcept>

#include "synthetic_parts.hpp"

namespace cubescale::trace {

namespace {

const char* const kCalls[] = {"MPI_Send", "MPI_Recv", "MPI_Barrier", "MPI_Allreduce"};
constexpr OTF2_RegionRef kMain = 0;  // the calls' regions follow: 1 + their index in kCalls

std::uint32_t call_index(const std::string& name) {
  for (std::uint32_t i = 0; i < 4; ++i)
    if (name == kCalls[i]) return i;
  throw std::invalid_argument("write_intercomm_trace: unknown call " + name);
}

void check_ranks(const std::vector<std::vector<InterCommCall>>& ranks, std::uint32_t group_a, std::uint64_t end) {
  const auto P = ranks.size();
  if (group_a < 1 || group_a >= P)
    throw std::invalid_argument("write_intercomm_trace: group A of " + std::to_string(group_a) + " of " +
                                std::to_string(P) + " ranks (each group needs one)");
  for (std::size_t r = 0; r < P; ++r) {
    const auto other = r < group_a ? P - group_a : group_a;
    std::uint64_t t = 0;
    for (const auto& c : ranks[r]) {
      const auto i = call_index(c.name);
      if (c.enter < t || c.leave < c.enter || c.leave > end)
        throw std::invalid_argument("write_intercomm_trace: rank " + std::to_string(r) + ": " + c.name +
                                    " out of time order");
      if (i < 2 && c.peer >= other)
        throw std::invalid_argument("write_intercomm_trace: rank " + std::to_string(r) + ": peer " +
                                    std::to_string(c.peer) + " outside the other group of " + std::to_string(other));
      t = c.leave;
    }
  }
}

}  // namespace

std::uint64_t write_intercomm_trace(const std::string& directory, const std::string& name,
                                    const std::vector<std::vector<InterCommCall>>& ranks, std::uint32_t group_a,
                                    std::uint64_t end) {
  using synthetic::check;
  check_ranks(ranks, group_a, end);
  const auto P = static_cast<std::uint32_t>(ranks.size());
  auto* archive = synthetic::open_archive(directory, name);
  std::uint64_t written = 0;
  std::vector<std::uint64_t> locations, events;
  for (std::uint32_t r = 0; r < P; ++r) {
    auto* w = OTF2_Archive_GetEvtWriter(archive, r);
    check(OTF2_EvtWriter_Enter(w, nullptr, 0, kMain), "enter main");
    for (const auto& c : ranks[r]) {
      const auto i = call_index(c.name);
      const auto region = static_cast<OTF2_RegionRef>(1 + i);
      check(OTF2_EvtWriter_Enter(w, nullptr, c.enter, region), "enter");
      if (i == 0) check(OTF2_EvtWriter_MpiSend(w, nullptr, c.enter, c.peer, 1, 5, 8), "send");
      if (i == 1) check(OTF2_EvtWriter_MpiRecv(w, nullptr, c.leave, c.peer, 1, 5, 8), "recv");
      if (i >= 2) {
        check(OTF2_EvtWriter_MpiCollectiveBegin(w, nullptr, c.enter), "collective begin");
        check(OTF2_EvtWriter_MpiCollectiveEnd(w, nullptr, c.leave,
                                              i == 2 ? OTF2_COLLECTIVE_OP_BARRIER : OTF2_COLLECTIVE_OP_ALLREDUCE,
                                              i == 2 ? 1 : 0, OTF2_UNDEFINED_UINT32, i == 2 ? 0 : 8, i == 2 ? 0 : 8),
              "collective end");
      }
      check(OTF2_EvtWriter_Leave(w, nullptr, c.leave, region), "leave");
    }
    check(OTF2_EvtWriter_Leave(w, nullptr, end, kMain), "leave main");
    events.push_back(synthetic::close_event_writer(archive, w));
    written += events.back();
    locations.push_back(r);
  }
  synthetic::close_event_files(archive, locations);
  // Strings after the shared first ones: main, the calls, the process and thread names, the
  // communicators' names.
  auto strings = synthetic::kFirstStrings;
  const auto first = static_cast<OTF2_StringRef>(strings.size());
  strings.insert(strings.end(), {"main", kCalls[0], kCalls[1], kCalls[2], kCalls[3], "Master thread",
                                 "MPI_COMM_WORLD", "MPI_INTERCOMM"});
  const OTF2_StringRef thread = first + 5, world_name = first + 6, inter_name = first + 7;
  const auto process_names = static_cast<OTF2_StringRef>(strings.size());
  for (std::uint32_t r = 0; r < P; ++r) strings.push_back("MPI Rank " + std::to_string(r));
  auto* g = synthetic::begin_global_definitions(archive, end, strings);
  check(OTF2_GlobalDefWriter_WriteRegion(g, kMain, first, first, 0, OTF2_REGION_ROLE_FUNCTION, OTF2_PARADIGM_USER,
                                         OTF2_REGION_FLAG_NONE, 0, 0, 0),
        "main");
  for (std::uint32_t i = 0; i < 4; ++i)
    check(OTF2_GlobalDefWriter_WriteRegion(g, 1 + i, first + 1 + i, first + 1 + i, 0,
                                           i < 2 ? OTF2_REGION_ROLE_POINT2POINT
                                                 : (i == 2 ? OTF2_REGION_ROLE_BARRIER : OTF2_REGION_ROLE_COLL_ALL2ALL),
                                           OTF2_PARADIGM_MPI, OTF2_REGION_FLAG_NONE, 0, 0, 0),
          "region");
  synthetic::write_system_tree(g);
  synthetic::write_processes(g, P, process_names);
  for (std::uint32_t r = 0; r < P; ++r)
    check(OTF2_GlobalDefWriter_WriteLocation(g, r, thread, OTF2_LOCATION_TYPE_CPU_THREAD, events[r], r), "location");
  std::vector<std::uint64_t> world(P), a, b;
  for (std::uint32_t r = 0; r < P; ++r) world[r] = r, (r < group_a ? a : b).push_back(r);
  check(OTF2_GlobalDefWriter_WriteGroup(g, 0, world_name, OTF2_GROUP_TYPE_COMM_LOCATIONS, OTF2_PARADIGM_MPI,
                                        OTF2_GROUP_FLAG_NONE, P, locations.data()),
        "locations group");
  check(OTF2_GlobalDefWriter_WriteGroup(g, 1, world_name, OTF2_GROUP_TYPE_COMM_GROUP, OTF2_PARADIGM_MPI,
                                        OTF2_GROUP_FLAG_NONE, P, world.data()),
        "world group");
  check(OTF2_GlobalDefWriter_WriteGroup(g, 2, inter_name, OTF2_GROUP_TYPE_COMM_GROUP, OTF2_PARADIGM_MPI,
                                        OTF2_GROUP_FLAG_NONE, static_cast<std::uint32_t>(a.size()), a.data()),
        "group A");
  check(OTF2_GlobalDefWriter_WriteGroup(g, 3, inter_name, OTF2_GROUP_TYPE_COMM_GROUP, OTF2_PARADIGM_MPI,
                                        OTF2_GROUP_FLAG_NONE, static_cast<std::uint32_t>(b.size()), b.data()),
        "group B");
  check(OTF2_GlobalDefWriter_WriteComm(g, 0, world_name, 1, OTF2_UNDEFINED_COMM, OTF2_COMM_FLAG_NONE), "world");
#if OTF2_VERSION_MAJOR >= 3
  check(OTF2_GlobalDefWriter_WriteInterComm(g, 1, inter_name, 2, 3, 0, OTF2_COMM_FLAG_NONE), "inter-communicator");
#else
  throw std::runtime_error("write_intercomm_trace needs OTF2 3 (InterComm definitions)");
#endif
  synthetic::close_archive(archive, g);
  return written;
}

}  // namespace cubescale::trace
