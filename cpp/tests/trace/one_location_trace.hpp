#pragma once
// A trace of one location written event by event with OTF2's own writer, for orders and
// definitions the synthetic writers never produce (another writer's PROGRAM_BEGIN inside a
// region, a PROGRAM_BEGIN whose program has no region, calling contexts, measurement events,
// parameters).
#include <otf2/otf2.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

namespace cubescale::trace_tests {

struct OneLocationRegion {
  std::string name, canonical_name;
  OTF2_RegionRole role = OTF2_REGION_ROLE_FUNCTION;
  OTF2_Paradigm paradigm = OTF2_PARADIGM_USER;
};
struct OneLocationEvent {
  enum Kind {
    Enter, Leave, ProgramBegin, ProgramEnd, ContextEnter, ContextLeave, ContextSample, TeamBegin, TeamEnd, Fork, Join,
    MeasurementOff, MeasurementOn, BufferFlush, RmaPut, RmaGet, RmaAtomic, RmaCollectiveEnd,
    ParameterInt, ParameterUint, ParameterString
  } kind;
  std::uint64_t time;      // ns
  std::uint32_t region = 0;  // Enter / Leave; the calling context of Context*
  std::uint32_t unwind = 0;  // ContextEnter / ContextSample: the unwind distance
  std::uint64_t stop = 0;    // BufferFlush: when the flush ended (ns)
  std::uint64_t bytes = 0, received = 0;  // Rma*: bytes (sent), bytes received (atomics, collectives)
  // Parameter*: `region` is the parameter (OneLocationParameter's index), `value` its value
  // (ParameterInt: the int64's bits), `text` a string parameter's value.
  std::uint64_t value = 0;
  std::string text = {};
};
// A parameter definition: its name and OTF2 type.
struct OneLocationParameter {
  std::string name;
  OTF2_Type type = OTF2_TYPE_INT64;  // OTF2_TYPE_INT64, OTF2_TYPE_UINT64 or OTF2_TYPE_STRING
};
// A calling context (Score-P's unwinding): its region and parent context (~0u: a root).
struct OneLocationContext {
  std::uint32_t region, parent = ~0u;
};

namespace detail {
inline OTF2_FlushType flush_always(void*, OTF2_FileType, OTF2_LocationRef, void*, bool) { return OTF2_FLUSH; }
inline OTF2_TimeStamp no_time(void*, OTF2_FileType, OTF2_LocationRef) { return 0; }
}  // namespace detail

// Writes <dir>/<name>.otf2 (dir must exist); PROGRAM_BEGIN names `program` (no arguments);
// times are ns unless the clock properties say `ticks_per_second` otherwise. Returns the
// anchor's path.
inline std::string write_one_location(const std::filesystem::path& dir, const std::string& name,
                                      const std::vector<OneLocationRegion>& regions,
                                      const std::vector<OneLocationEvent>& events, const std::string& program,
                                      const std::vector<OneLocationContext>& contexts = {},
                                      const std::vector<OneLocationParameter>& parameters = {},
                                      std::uint64_t ticks_per_second = 1000000000) {
  auto* archive = OTF2_Archive_Open(dir.c_str(), name.c_str(), OTF2_FILEMODE_WRITE, 1024 * 1024, 4 * 1024 * 1024,
                                    OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE);
  if (!archive) throw std::runtime_error("cannot create " + name);
  OTF2_FlushCallbacks flush{detail::flush_always, detail::no_time};
  OTF2_Archive_SetFlushCallbacks(archive, &flush, nullptr);
  OTF2_Archive_SetSerialCollectiveCallbacks(archive);
  OTF2_Archive_OpenEvtFiles(archive);
  auto* w = OTF2_Archive_GetEvtWriter(archive, 0);
  const OTF2_StringRef program_string = 0;
  // Strings: program, "node", "Master thread", "process", the regions' names, the parameters'
  // names, then the string parameters' values in the order they occur.
  std::vector<std::string> strings = {program, "node", "Master thread", "process"};
  for (const auto& r : regions) strings.insert(strings.end(), {r.name, r.canonical_name});
  const auto first_parameter_name = static_cast<OTF2_StringRef>(strings.size());
  for (const auto& p : parameters) strings.push_back(p.name);
  std::uint64_t end = 0;
  for (const auto& e : events) {
    end = std::max(end, e.time);
    switch (e.kind) {
      case OneLocationEvent::Enter: OTF2_EvtWriter_Enter(w, nullptr, e.time, e.region); break;
      case OneLocationEvent::Leave: OTF2_EvtWriter_Leave(w, nullptr, e.time, e.region); break;
      case OneLocationEvent::ProgramBegin: OTF2_EvtWriter_ProgramBegin(w, nullptr, e.time, program_string, 0, nullptr); break;
      case OneLocationEvent::ProgramEnd: OTF2_EvtWriter_ProgramEnd(w, nullptr, e.time, 0); break;
      case OneLocationEvent::ContextEnter: OTF2_EvtWriter_CallingContextEnter(w, nullptr, e.time, e.region, e.unwind); break;
      case OneLocationEvent::ContextLeave: OTF2_EvtWriter_CallingContextLeave(w, nullptr, e.time, e.region); break;
      case OneLocationEvent::ContextSample:
        OTF2_EvtWriter_CallingContextSample(w, nullptr, e.time, e.region, e.unwind, 0);
        break;
      case OneLocationEvent::TeamBegin: OTF2_EvtWriter_ThreadTeamBegin(w, nullptr, e.time, 0); break;  // team undefined
      case OneLocationEvent::TeamEnd: OTF2_EvtWriter_ThreadTeamEnd(w, nullptr, e.time, 0); break;
      case OneLocationEvent::Fork: OTF2_EvtWriter_ThreadFork(w, nullptr, e.time, OTF2_PARADIGM_OPENMP, 2); break;
      case OneLocationEvent::Join: OTF2_EvtWriter_ThreadJoin(w, nullptr, e.time, OTF2_PARADIGM_OPENMP); break;
      case OneLocationEvent::MeasurementOff: OTF2_EvtWriter_MeasurementOnOff(w, nullptr, e.time, OTF2_MEASUREMENT_OFF); break;
      case OneLocationEvent::MeasurementOn: OTF2_EvtWriter_MeasurementOnOff(w, nullptr, e.time, OTF2_MEASUREMENT_ON); break;
      case OneLocationEvent::BufferFlush: OTF2_EvtWriter_BufferFlush(w, nullptr, e.time, e.stop); break;
      case OneLocationEvent::RmaPut: OTF2_EvtWriter_RmaPut(w, nullptr, e.time, 0, 0, e.bytes, 1); break;
      case OneLocationEvent::RmaGet: OTF2_EvtWriter_RmaGet(w, nullptr, e.time, 0, 0, e.bytes, 1); break;
      case OneLocationEvent::RmaAtomic:
        OTF2_EvtWriter_RmaAtomic(w, nullptr, e.time, 0, 0, OTF2_RMA_ATOMIC_TYPE_ACCUMULATE, e.bytes, e.received, 1);
        break;
      case OneLocationEvent::RmaCollectiveEnd:
        OTF2_EvtWriter_RmaCollectiveEnd(w, nullptr, e.time, OTF2_COLLECTIVE_OP_CREATE_HANDLE, OTF2_RMA_SYNC_LEVEL_NONE, 0,
                                        OTF2_UNDEFINED_UINT32, e.bytes, e.received);
        break;
      case OneLocationEvent::ParameterInt:
        OTF2_EvtWriter_ParameterInt(w, nullptr, e.time, e.region, static_cast<std::int64_t>(e.value));
        break;
      case OneLocationEvent::ParameterUint: OTF2_EvtWriter_ParameterUnsignedInt(w, nullptr, e.time, e.region, e.value); break;
      case OneLocationEvent::ParameterString:
        strings.push_back(e.text);
        OTF2_EvtWriter_ParameterString(w, nullptr, e.time, e.region, static_cast<OTF2_StringRef>(strings.size() - 1));
        break;
    }
  }
  uint64_t written = 0;
  OTF2_EvtWriter_GetNumberOfEvents(w, &written);
  OTF2_Archive_CloseEvtWriter(archive, w);
  OTF2_Archive_CloseEvtFiles(archive);
  OTF2_Archive_OpenDefFiles(archive);
  OTF2_Archive_CloseDefWriter(archive, OTF2_Archive_GetDefWriter(archive, 0));
  OTF2_Archive_CloseDefFiles(archive);
  auto* g = OTF2_Archive_GetGlobalDefWriter(archive);
  OTF2_GlobalDefWriter_WriteClockProperties(g, ticks_per_second, 0, end + 1, OTF2_UNDEFINED_TIMESTAMP);
  for (std::uint32_t i = 0; i < strings.size(); ++i) OTF2_GlobalDefWriter_WriteString(g, i, strings[i].c_str());
  for (std::uint32_t r = 0; r < regions.size(); ++r)
    OTF2_GlobalDefWriter_WriteRegion(g, r, 4 + 2 * r, 5 + 2 * r, OTF2_UNDEFINED_STRING, regions[r].role,
                                     regions[r].paradigm, OTF2_REGION_FLAG_NONE, OTF2_UNDEFINED_STRING, 0, 0);
  if (!contexts.empty())
    OTF2_GlobalDefWriter_WriteInterruptGenerator(g, 0, 1, OTF2_INTERRUPT_GENERATOR_MODE_TIME, OTF2_BASE_DECIMAL, 0, 1000);
  for (std::uint32_t c = 0; c < contexts.size(); ++c)
    OTF2_GlobalDefWriter_WriteCallingContext(g, c, contexts[c].region, OTF2_UNDEFINED_SOURCE_CODE_LOCATION,
                                             contexts[c].parent == ~0u ? OTF2_UNDEFINED_CALLING_CONTEXT : contexts[c].parent);
  for (std::uint32_t p = 0; p < parameters.size(); ++p) {
    const auto type = parameters[p].type == OTF2_TYPE_STRING   ? OTF2_PARAMETER_TYPE_STRING
                      : parameters[p].type == OTF2_TYPE_UINT64 ? OTF2_PARAMETER_TYPE_UINT64
                                                               : OTF2_PARAMETER_TYPE_INT64;
    OTF2_GlobalDefWriter_WriteParameter(g, p, first_parameter_name + p, type);
  }
  const bool rma = std::any_of(events.begin(), events.end(), [](const OneLocationEvent& e) {
    return e.kind == OneLocationEvent::RmaPut || e.kind == OneLocationEvent::RmaGet ||
           e.kind == OneLocationEvent::RmaAtomic || e.kind == OneLocationEvent::RmaCollectiveEnd;
  });
  if (rma) OTF2_GlobalDefWriter_WriteRmaWin(g, 0, 1, OTF2_UNDEFINED_COMM, OTF2_RMA_WIN_FLAG_NONE);  // window 0
  OTF2_GlobalDefWriter_WriteSystemTreeNode(g, 0, 1, 1, OTF2_UNDEFINED_SYSTEM_TREE_NODE);
  OTF2_GlobalDefWriter_WriteLocationGroup(g, 0, 3, OTF2_LOCATION_GROUP_TYPE_PROCESS, 0, OTF2_UNDEFINED_LOCATION_GROUP);
  OTF2_GlobalDefWriter_WriteLocation(g, 0, 2, OTF2_LOCATION_TYPE_CPU_THREAD, written, 0);
  OTF2_Archive_CloseGlobalDefWriter(archive, g);
  OTF2_Archive_Close(archive);
  return (dir / (name + ".otf2")).string();
}

}  // namespace cubescale::trace_tests
