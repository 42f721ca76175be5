#pragma once
// OTF2 archives written with libotf2's writer directly, for definitions cubescale's own trace
// writers never make (broken ones, threads calling MPI): the archive opened with its event
// files, then its local definition files closed empty, as tests need them.
#include <otf2/otf2.h>

#include <cstdint>
#include <filesystem>

namespace cubescale::analysis_tests {

namespace raw_otf2_detail {
inline OTF2_FlushType flush_always(void*, OTF2_FileType, OTF2_LocationRef, void*, bool) { return OTF2_FLUSH; }
inline OTF2_TimeStamp no_time(void*, OTF2_FileType, OTF2_LocationRef) { return 0; }
}  // namespace raw_otf2_detail

// <dir>/<name>.otf2 opened for writing, its event files open (serial: one writing process).
inline OTF2_Archive* open_raw_archive(const std::filesystem::path& dir, const char* name) {
  auto* archive = OTF2_Archive_Open(dir.c_str(), name, OTF2_FILEMODE_WRITE, 1024 * 1024, 4 * 1024 * 1024,
                                    OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE);
  static OTF2_FlushCallbacks flush{raw_otf2_detail::flush_always, raw_otf2_detail::no_time};
  OTF2_Archive_SetFlushCallbacks(archive, &flush, nullptr);
  OTF2_Archive_SetSerialCollectiveCallbacks(archive);
  OTF2_Archive_OpenEvtFiles(archive);
  return archive;
}

// After the events of locations 0 .. locations - 1: the event files closed, each location's
// local definitions written empty; the global definitions come next.
inline void close_raw_events(OTF2_Archive* archive, std::uint64_t locations) {
  OTF2_Archive_CloseEvtFiles(archive);
  OTF2_Archive_OpenDefFiles(archive);
  for (std::uint64_t l = 0; l < locations; ++l) OTF2_Archive_CloseDefWriter(archive, OTF2_Archive_GetDefWriter(archive, l));
  OTF2_Archive_CloseDefFiles(archive);
}

// A location's events ended: main (region 0) left at `end`, its writer closed; its events.
inline std::uint64_t end_raw_location(OTF2_Archive* archive, OTF2_EvtWriter* w, std::uint64_t end) {
  std::uint64_t events = 0;
  OTF2_EvtWriter_Leave(w, nullptr, end, 0);
  OTF2_EvtWriter_GetNumberOfEvents(w, &events);
  OTF2_Archive_CloseEvtWriter(archive, w);
  return events;
}

// The global definitions the raw MPI traces start with: a clock of 1 ns ticks to `end`, strings
// 0-4 "main", "MPI_Send", "MPI_Recv", "MPI_Barrier", "node" (a test's own from 5 on), regions 0
// main and 1-3 those MPI calls, system tree node 0.
inline OTF2_GlobalDefWriter* begin_raw_definitions(OTF2_Archive* archive, std::uint64_t end) {
  auto* g = OTF2_Archive_GetGlobalDefWriter(archive);
  OTF2_GlobalDefWriter_WriteClockProperties(g, 1000000000, 0, end + 1, OTF2_UNDEFINED_TIMESTAMP);
  const char* strings[] = {"main", "MPI_Send", "MPI_Recv", "MPI_Barrier", "node"};
  for (std::uint32_t i = 0; i < 5; ++i) OTF2_GlobalDefWriter_WriteString(g, i, strings[i]);
  OTF2_GlobalDefWriter_WriteRegion(g, 0, 0, 0, OTF2_UNDEFINED_STRING, OTF2_REGION_ROLE_FUNCTION, OTF2_PARADIGM_USER,
                                   OTF2_REGION_FLAG_NONE, OTF2_UNDEFINED_STRING, 0, 0);
  for (std::uint32_t r = 1; r <= 3; ++r)
    OTF2_GlobalDefWriter_WriteRegion(g, r, r, r, OTF2_UNDEFINED_STRING,
                                     r == 3 ? OTF2_REGION_ROLE_BARRIER : OTF2_REGION_ROLE_POINT2POINT, OTF2_PARADIGM_MPI,
                                     OTF2_REGION_FLAG_NONE, OTF2_UNDEFINED_STRING, 0, 0);
  OTF2_GlobalDefWriter_WriteSystemTreeNode(g, 0, 4, 4, OTF2_UNDEFINED_SYSTEM_TREE_NODE);
  return g;
}

}  // namespace cubescale::analysis_tests
