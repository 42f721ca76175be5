#include "cubescale/trace/synthetic.hpp"

#include <otf2/otf2.h>

#include <stdexcept>
#include <vector>

namespace cubescale::trace {

namespace {

OTF2_FlushType pre_flush(void*, OTF2_FileType, OTF2_LocationRef, void*, bool) { return OTF2_FLUSH; }
OTF2_TimeStamp post_flush(void*, OTF2_FileType, OTF2_LocationRef) { return 0; }

void check(OTF2_ErrorCode rc, const char* what) {
  if (rc != OTF2_SUCCESS) throw std::runtime_error(std::string("writing a synthetic trace: ") + what + ": " +
                                                   OTF2_Error_GetDescription(rc));
}

enum Region : OTF2_RegionRef { kMain, kSolve, kCompute, kSend, kRecv, kAllreduce, kRegions };

}  // namespace

std::uint64_t write_synthetic_trace(const std::string& directory, const std::string& name, const SyntheticTrace& spec) {
  if (spec.processes == 0) throw std::invalid_argument("a synthetic trace needs at least one process");
  auto* archive = OTF2_Archive_Open(directory.c_str(), name.c_str(), OTF2_FILEMODE_WRITE, 1024 * 1024, 4 * 1024 * 1024,
                                    OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE);
  if (!archive) throw std::runtime_error("cannot create the archive " + directory + "/" + name);
  OTF2_FlushCallbacks flush{pre_flush, post_flush};
  check(OTF2_Archive_SetFlushCallbacks(archive, &flush, nullptr), "flush callbacks");
  check(OTF2_Archive_SetSerialCollectiveCallbacks(archive), "collective callbacks");
  check(OTF2_Archive_OpenEvtFiles(archive), "event files");
  const std::uint32_t P = spec.processes;
  const OTF2_Type types[2] = {OTF2_TYPE_UINT64, OTF2_TYPE_UINT64};
  std::vector<std::uint64_t> events(P, 0);
  const std::uint64_t start = 1000;
  std::uint64_t end_time = start;
  for (std::uint32_t p = 0; p < P; ++p) {
    auto* w = OTF2_Archive_GetEvtWriter(archive, p);
    if (!w) throw std::runtime_error("no event writer");
    std::uint64_t t = start + p * 7, cycles = 0, misses = 0, state = 0x9e3779b97f4a7c15ull ^ p;
    auto step = [&](std::uint64_t base) {  // deterministic jitter
      state = state * 6364136223846793005ull + 1442695040888963407ull;
      t += base + (state >> 59);
      cycles += 3 * base + (state >> 60);
      misses += (state >> 62);
    };
    auto metric = [&] {
      if (!spec.counters) return;
      OTF2_MetricValue v[2];
      v[0].unsigned_int = cycles;
      v[1].unsigned_int = misses;
      check(OTF2_EvtWriter_Metric(w, nullptr, t, 0, 2, types, v), "metric");
    };
    auto enter = [&](OTF2_RegionRef r, bool counters) {
      if (counters) metric();
      check(OTF2_EvtWriter_Enter(w, nullptr, t, r), "enter");
    };
    auto leave = [&](OTF2_RegionRef r, bool counters) {
      if (counters) metric();
      check(OTF2_EvtWriter_Leave(w, nullptr, t, r), "leave");
    };
    enter(kMain, false);
    for (std::uint64_t i = 0; i < spec.iterations; ++i) {
      step(50);
      enter(kSolve, true);
      step(20);
      enter(kCompute, true);
      step(400 + p * 10);
      const bool defect = spec.defect == "mismatched_leave" && p == 0 && i + 1 == spec.iterations;
      leave(defect ? kSolve : kCompute, true);
      step(5);
      enter(kSend, false);
      check(OTF2_EvtWriter_MpiSend(w, nullptr, t, (p + 1) % P, 0, 7, 1024), "send");
      step(10);
      leave(kSend, false);
      enter(kRecv, false);
      step(30);
      check(OTF2_EvtWriter_MpiRecv(w, nullptr, t, (p + P - 1) % P, 0, 7, 1024), "recv");
      leave(kRecv, false);
      enter(kAllreduce, false);
      check(OTF2_EvtWriter_MpiCollectiveBegin(w, nullptr, t), "collective begin");
      step(40);
      check(OTF2_EvtWriter_MpiCollectiveEnd(w, nullptr, t, OTF2_COLLECTIVE_OP_ALLREDUCE, 0, OTF2_UNDEFINED_UINT32,
                                            8, 8),
            "collective end");
      leave(kAllreduce, false);
      step(5);
      leave(kSolve, true);
    }
    step(10);
    if (spec.defect != "unclosed") leave(kMain, false);
    check(OTF2_EvtWriter_GetNumberOfEvents(w, &events[p]), "event count");
    end_time = std::max(end_time, t);
    check(OTF2_Archive_CloseEvtWriter(archive, w), "close event writer");
  }
  check(OTF2_Archive_CloseEvtFiles(archive), "close event files");
  check(OTF2_Archive_OpenDefFiles(archive), "definition files");
  for (std::uint32_t p = 0; p < P; ++p) {
    auto* dw = OTF2_Archive_GetDefWriter(archive, p);
    check(OTF2_Archive_CloseDefWriter(archive, dw), "close local definitions");
  }
  check(OTF2_Archive_CloseDefFiles(archive), "close definition files");
  auto* g = OTF2_Archive_GetGlobalDefWriter(archive);
  if (!g) throw std::runtime_error("no global definition writer");
  check(OTF2_GlobalDefWriter_WriteClockProperties(g, 1000000000, start, end_time - start, OTF2_UNDEFINED_TIMESTAMP),
        "clock");
  std::vector<std::string> strings = {"",        "machine",   "synthetic", "node",          "node0",   "main",
                                      "solve",   "compute",   "MPI_Send",  "MPI_Recv",      "MPI_Allreduce",
                                      "Master thread", "MPI_COMM_WORLD", "PAPI_TOT_CYC", "PAPI_L2_TCM", "#", "MPI"};
  const std::uint32_t mpi_file = static_cast<std::uint32_t>(strings.size()) - 1;  // MPI regions' file, as Score-P
  const std::uint32_t first_rank_string = static_cast<std::uint32_t>(strings.size());
  for (std::uint32_t p = 0; p < P; ++p) strings.push_back("MPI Rank " + std::to_string(p));
  for (std::uint32_t s = 0; s < strings.size(); ++s) check(OTF2_GlobalDefWriter_WriteString(g, s, strings[s].c_str()), "string");
  check(OTF2_GlobalDefWriter_WriteSystemTreeNode(g, 0, 2, 1, OTF2_UNDEFINED_SYSTEM_TREE_NODE), "machine");
  check(OTF2_GlobalDefWriter_WriteSystemTreeNode(g, 1, 4, 3, 0), "node");
  for (std::uint32_t p = 0; p < P; ++p)
    check(OTF2_GlobalDefWriter_WriteLocationGroup(g, p, first_rank_string + p, OTF2_LOCATION_GROUP_TYPE_PROCESS, 1,
                                                  OTF2_UNDEFINED_LOCATION_GROUP),
          "location group");
  for (std::uint32_t p = 0; p < P; ++p)
    check(OTF2_GlobalDefWriter_WriteLocation(g, p, 11, OTF2_LOCATION_TYPE_CPU_THREAD, events[p], p), "location");
  const OTF2_RegionRole roles[kRegions] = {OTF2_REGION_ROLE_FUNCTION,    OTF2_REGION_ROLE_FUNCTION,
                                           OTF2_REGION_ROLE_FUNCTION,    OTF2_REGION_ROLE_POINT2POINT,
                                           OTF2_REGION_ROLE_POINT2POINT, OTF2_REGION_ROLE_COLL_ALL2ALL};
  for (std::uint32_t r = 0; r < kRegions; ++r)
    check(OTF2_GlobalDefWriter_WriteRegion(g, r, 5 + r, 5 + r, 0, roles[r],
                                           r >= kSend ? OTF2_PARADIGM_MPI : OTF2_PARADIGM_COMPILER, OTF2_REGION_FLAG_NONE,
                                           r >= kSend ? mpi_file : 0, 0, 0),
          "region");
  std::vector<std::uint64_t> ranks(P);
  for (std::uint32_t p = 0; p < P; ++p) ranks[p] = p;
  check(OTF2_GlobalDefWriter_WriteGroup(g, 0, 0, OTF2_GROUP_TYPE_COMM_LOCATIONS, OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE,
                                        P, ranks.data()),
        "locations group");
  check(OTF2_GlobalDefWriter_WriteGroup(g, 1, 0, OTF2_GROUP_TYPE_COMM_GROUP, OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE, P,
                                        ranks.data()),
        "comm group");
  check(OTF2_GlobalDefWriter_WriteComm(g, 0, 12, 1, OTF2_UNDEFINED_COMM, OTF2_COMM_FLAG_NONE), "communicator");
  if (spec.counters) {
    check(OTF2_GlobalDefWriter_WriteMetricMember(g, 0, 13, 0, OTF2_METRIC_TYPE_PAPI, OTF2_METRIC_ACCUMULATED_START,
                                                 OTF2_TYPE_UINT64, OTF2_BASE_DECIMAL, 0, 15),
          "metric member");
    check(OTF2_GlobalDefWriter_WriteMetricMember(g, 1, 14, 0, OTF2_METRIC_TYPE_PAPI, OTF2_METRIC_ACCUMULATED_START,
                                                 OTF2_TYPE_UINT64, OTF2_BASE_DECIMAL, 0, 15),
          "metric member");
    const OTF2_MetricMemberRef members[2] = {0, 1};
    check(OTF2_GlobalDefWriter_WriteMetricClass(g, 0, 2, members, OTF2_METRIC_SYNCHRONOUS_STRICT,
                                                OTF2_RECORDER_KIND_CPU),
          "metric class");
  }
  check(OTF2_Archive_CloseGlobalDefWriter(archive, g), "close global definitions");
  check(OTF2_Archive_Close(archive), "close archive");
  std::uint64_t total = 0;
  for (auto n : events) total += n;
  return total;
}

}  // namespace cubescale::trace
