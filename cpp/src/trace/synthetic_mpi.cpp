#include "cubescale/trace/synthetic_mpi.hpp"

#include <otf2/otf2.h>

#include <charconv>
#include <map>
#include <stdexcept>
#include <utility>

#include "synthetic_parts.hpp"

namespace cubescale::trace {

using synthetic::check;
namespace mpi = synthetic::mpi;

// Region 0 is main; region i + 1 is mpi::kCalls[i], then the program's region where a rank
// records its program ("main" as its first call).
std::uint64_t write_mpi_trace(const std::string& directory, const std::string& name,
                              const std::vector<std::vector<MpiCall>>& ranks, std::uint64_t end) {
  const auto P = static_cast<std::uint32_t>(ranks.size());
  if (P == 0) throw std::invalid_argument("a synthetic MPI trace needs at least one rank");
  // Check everything before the archive exists: no half-written trace.
  // Parameters taken out of the calls: per rank, the calls without them and each parameter
  // with the index of the call it comes before.
  std::vector<std::vector<MpiCall>> calls(P);
  std::vector<std::vector<std::pair<std::size_t, MpiCall>>> parameters(P);
  for (std::uint32_t p = 0; p < P; ++p)
    for (const auto& c : ranks[p]) {
      if (c.name.rfind(kParameterCall, 0) != 0) {
        calls[p].push_back(c);
        continue;
      }
      if (c.name.find('=') == std::string::npos || c.enter > end || c.name.size() == std::string(kParameterCall).size())
        throw std::invalid_argument("a parameter is \"parameter NAME=VALUE\" at `enter` (<= end): " + c.name);
      parameters[p].push_back({calls[p].size(), c});
    }
  std::vector<std::vector<std::size_t>> kinds(P);
  bool program = false;  // some rank records PROGRAM_BEGIN (its first call is "main")
  bool reversed = false;  // some collective is on MPI_COMM_REVERSED
  for (std::uint32_t p = 0; p < P; ++p) {
    kinds[p] = mpi::check_rank(calls[p], p, P, end);
    program = program || (!kinds[p].empty() && kinds[p][0] == mpi::kMain);
    reversed = reversed || mpi::uses_reversed(calls[p], kinds[p]);
  }
  const std::string program_path = "/synthetic/" + name;  // PROGRAM_BEGIN's name; the region's canonical name
  std::vector<std::string> strings = synthetic::kFirstStrings;
  strings.insert(strings.end(), {"Master thread", "MPI_COMM_WORLD", "main"});
  const auto self_name = static_cast<std::uint32_t>(strings.size());
  strings.push_back("MPI_COMM_SELF");
  const auto reversed_name = static_cast<std::uint32_t>(strings.size());
  strings.push_back("MPI_COMM_REVERSED");
  // Score-P names "MPI" as the source file of every MPI region; Scalasca's scout finds MPI
  // calls by that file, so the synthetic traces carry it too (to compare with scout).
  const auto mpi_file = static_cast<std::uint32_t>(strings.size());
  strings.push_back("MPI");
  const std::uint32_t first_call = mpi::append_call_names(strings);
  const std::uint32_t first_rank = static_cast<std::uint32_t>(strings.size());
  for (std::uint32_t p = 0; p < P; ++p) strings.push_back("MPI Rank " + std::to_string(p));
  const auto program_name = static_cast<std::uint32_t>(strings.size());
  if (program) strings.insert(strings.end(), {name, program_path});  // the region's names, PROGRAM_BEGIN's
  // Parameters by (name, int64 or string), their names and string values after the others.
  std::map<std::pair<std::string, bool>, std::uint32_t> parameter_ids;
  std::map<std::string, std::uint32_t> string_ids;
  const auto string_id = [&](const std::string& text) {
    const auto [it, added] = string_ids.try_emplace(text, static_cast<std::uint32_t>(strings.size()));
    if (added) strings.push_back(text);
    return it->second;
  };
  struct Written {
    std::uint32_t parameter;
    bool integer;
    std::int64_t value;
    std::uint32_t text;
  };
  std::vector<std::vector<Written>> written(P);
  std::vector<std::pair<std::uint32_t, bool>> parameter_defs;  // name string, integer
  for (std::uint32_t p = 0; p < P; ++p)
    for (const auto& [at, c] : parameters[p]) {
      const auto assignment = c.name.substr(std::string(kParameterCall).size());
      const auto equals = assignment.find('=');
      const auto key = assignment.substr(0, equals), value = assignment.substr(equals + 1);
      std::int64_t number = 0;
      const auto [end_of, error] = std::from_chars(value.data(), value.data() + value.size(), number);
      const bool integer = !value.empty() && error == std::errc() && end_of == value.data() + value.size();
      const auto [it, added] = parameter_ids.try_emplace({key, integer}, static_cast<std::uint32_t>(parameter_defs.size()));
      if (added) parameter_defs.push_back({string_id(key), integer});
      written[p].push_back({it->second, integer, number, integer ? 0u : string_id(value)});
    }
  const mpi::Regions regions{0, 1};
  const auto program_region = static_cast<OTF2_RegionRef>(mpi::kCallCount + 1);
  auto* archive = synthetic::open_archive(directory, name);
  std::vector<std::uint64_t> events(P, 0), locations(P);
  for (std::uint32_t p = 0; p < P; ++p) {
    locations[p] = p;
    auto* w = OTF2_Archive_GetEvtWriter(archive, p);
    if (!w) throw std::runtime_error("no event writer");
    const bool begins = !calls[p].empty() && kinds[p][0] == mpi::kMain;
    if (begins) check(OTF2_EvtWriter_ProgramBegin(w, nullptr, 0, program_name + 1, 0, nullptr), "program begin");
    check(OTF2_EvtWriter_Enter(w, nullptr, begins ? calls[p][0].enter : 0, regions.main), "enter main");
    mpi::Requests requests;
    std::size_t next = 0;  // the next parameter
    const auto parameters_before = [&](std::size_t call) {
      for (; next < parameters[p].size() && parameters[p][next].first <= call; ++next) {
        const auto& [id, integer, value, text] = written[p][next];
        const auto time = parameters[p][next].second.enter;
        check(integer ? OTF2_EvtWriter_ParameterInt(w, nullptr, time, id, value)
                      : OTF2_EvtWriter_ParameterString(w, nullptr, time, id, text),
              "parameter");
      }
    };
    for (std::size_t i = begins ? 1 : 0; i < calls[p].size(); ++i) {
      parameters_before(i);
      mpi::write_call(w, calls[p][i], kinds[p][i], requests, regions);
    }
    parameters_before(calls[p].size());
    check(OTF2_EvtWriter_Leave(w, nullptr, begins ? calls[p][0].leave : end, regions.main), "leave main");
    if (begins) check(OTF2_EvtWriter_ProgramEnd(w, nullptr, end, 0), "program end");
    events[p] = synthetic::close_event_writer(archive, w);
  }
  synthetic::close_event_files(archive, locations);
  auto* g = synthetic::begin_global_definitions(archive, end, strings);
  synthetic::write_system_tree(g);
  synthetic::write_processes(g, P, first_rank);
  for (std::uint32_t p = 0; p < P; ++p)
    check(OTF2_GlobalDefWriter_WriteLocation(g, p, 5, OTF2_LOCATION_TYPE_CPU_THREAD, events[p], p), "location");
  check(OTF2_GlobalDefWriter_WriteRegion(g, regions.main, 7, 7, 0, OTF2_REGION_ROLE_FUNCTION, OTF2_PARADIGM_USER,
                                         OTF2_REGION_FLAG_NONE, 0, 0, 0),
        "region main");
  mpi::write_call_regions(g, regions.first_call, first_call, mpi_file);
  if (program) synthetic::write_program_region(g, program_region, program_name, program_name + 1);
  for (std::uint32_t i = 0; i < parameter_defs.size(); ++i)
    check(OTF2_GlobalDefWriter_WriteParameter(g, i, parameter_defs[i].first,
                                              parameter_defs[i].second ? OTF2_PARAMETER_TYPE_INT64 : OTF2_PARAMETER_TYPE_STRING),
          "parameter definition");
  mpi::write_communicators(g, locations, 6, self_name, reversed_name, reversed);
  synthetic::close_archive(archive, g);
  std::uint64_t total = 0;
  for (auto n : events) total += n;
  return total;
}

}  // namespace cubescale::trace
