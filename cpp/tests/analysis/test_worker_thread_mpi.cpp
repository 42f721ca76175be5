// MPI called by a thread other than the one MPI_COMM_WORLD's ranks name (MPI_THREAD_SERIALIZED
// or MULTIPLE code, which Score-P records on the calling thread): its messages cannot be paired
// (a peer is a rank, that is the rank's named thread), so the analysis refuses them at the event,
// naming the thread, as Scalasca's scout (which needs MPI_THREAD_FUNNELED) cannot take them.
#include <gtest/gtest.h>
#include <otf2/otf2.h>

#include <filesystem>
#include <string>
#include <vector>

#include "cubescale/analysis/replay.hpp"
#include "cubescale/analysis/waitstates.hpp"
#include "cubescale/common/format_error.hpp"
#include "cubescale/trace/reader.hpp"
#include "raw_otf2.hpp"
#include "trace_files.hpp"

using namespace cubescale;
using analysis_tests::TempDir;

namespace {

// What a thread does in main (ns): an MPI_Send to rank `peer`, an MPI_Recv from it, or an
// MPI_Barrier on MPI_COMM_WORLD.
enum class Call { None, Send, Recv, Barrier };

// Two processes of two threads each (locations 2p "Master thread", 2p + 1 "OMP thread 1");
// MPI_COMM_WORLD's ranks name the masters. `calls[location]`: its one call, from 100 to 200.
std::string write_threads_trace(const std::filesystem::path& dir, const std::vector<Call>& calls) {
  auto* archive = analysis_tests::open_raw_archive(dir, "threads");
  std::vector<std::uint64_t> events(calls.size());
  const std::uint64_t end = 1000;
  for (std::uint64_t l = 0; l < calls.size(); ++l) {
    auto* w = OTF2_Archive_GetEvtWriter(archive, l);
    const std::uint32_t peer = l / 2 == 0 ? 1 : 0;
    OTF2_EvtWriter_Enter(w, nullptr, 0, 0);
    if (calls[l] != Call::None) {
      const auto region = static_cast<std::uint32_t>(calls[l]);
      OTF2_EvtWriter_Enter(w, nullptr, 100, region);
      if (calls[l] == Call::Send) OTF2_EvtWriter_MpiSend(w, nullptr, 100, peer, 0, 5, 8);
      if (calls[l] == Call::Recv) OTF2_EvtWriter_MpiRecv(w, nullptr, 200, peer, 0, 5, 8);
      if (calls[l] == Call::Barrier) {
        OTF2_EvtWriter_MpiCollectiveBegin(w, nullptr, 100);
        OTF2_EvtWriter_MpiCollectiveEnd(w, nullptr, 200, OTF2_COLLECTIVE_OP_BARRIER, 0, OTF2_UNDEFINED_UINT32, 0, 0);
      }
      OTF2_EvtWriter_Leave(w, nullptr, 200, region);
    }
    events[l] = analysis_tests::end_raw_location(archive, w, end);
  }
  analysis_tests::close_raw_events(archive, calls.size());
  auto* g = analysis_tests::begin_raw_definitions(archive, end);
  const char* strings[] = {"MPI Rank 0", "MPI Rank 1", "Master thread", "OMP thread 1", "MPI_COMM_WORLD"};
  for (std::uint32_t i = 0; i < 5; ++i) OTF2_GlobalDefWriter_WriteString(g, 5 + i, strings[i]);
  for (std::uint64_t p = 0; p < 2; ++p)
    OTF2_GlobalDefWriter_WriteLocationGroup(g, p, 5 + p, OTF2_LOCATION_GROUP_TYPE_PROCESS, 0, OTF2_UNDEFINED_LOCATION_GROUP);
  for (std::uint64_t l = 0; l < calls.size(); ++l)
    OTF2_GlobalDefWriter_WriteLocation(g, l, l % 2 == 0 ? 7 : 8, OTF2_LOCATION_TYPE_CPU_THREAD, events[l], l / 2);
  const std::uint64_t masters[] = {0, 2}, world[] = {0, 1};
  OTF2_GlobalDefWriter_WriteGroup(g, 0, 9, OTF2_GROUP_TYPE_COMM_LOCATIONS, OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE, 2,
                                  masters);
  OTF2_GlobalDefWriter_WriteGroup(g, 1, 9, OTF2_GROUP_TYPE_COMM_GROUP, OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE, 2, world);
  OTF2_GlobalDefWriter_WriteComm(g, 0, 9, 1, OTF2_UNDEFINED_COMM, OTF2_COMM_FLAG_NONE);
  OTF2_Archive_CloseGlobalDefWriter(archive, g);
  OTF2_Archive_Close(archive);
  return (dir / "threads.otf2").string();
}

// The FormatError of the one-process analysis and of a rank's replay holding every location.
std::vector<std::string> errors(const std::string& path) {
  trace::Trace t(path);
  std::vector<std::string> out;
  for (int replay = 0; replay < 2; ++replay) {
    try {
      if (replay) analysis::Replay(t, {0, 1, 2, 3}, {0, 1, 2, 3}, true);
      else analysis::analyze(t, {0, 1, 2, 3});
      out.push_back("");
    } catch (const FormatError& e) {
      out.push_back(e.what());
    }
  }
  return out;
}

}  // namespace

TEST(WorkerThreadMpi, MessagesOfTheMasterThreadsAreAnalyzed) {
  TempDir dir("funneled");
  trace::Trace t(write_threads_trace(dir.path, {Call::Send, Call::None, Call::Recv, Call::None}));
  const auto report = analysis::analyze(t, {0, 1, 2, 3});
  EXPECT_GT(report.cnode_count(), 0u);
}

TEST(WorkerThreadMpi, ASendOfAWorkerThreadIsRefusedAtItsEvent) {
  TempDir dir("serialized");
  const auto path = write_threads_trace(dir.path, {Call::None, Call::Send, Call::Recv, Call::None});
  for (const auto& what : errors(path)) {
    EXPECT_NE(what.find("1.evt"), std::string::npos) << what;
    EXPECT_NE(what.find("MPI_SEND on a thread other than the one its MPI rank names"), std::string::npos) << what;
    EXPECT_NE(what.find("(OMP thread 1 of MPI Rank 0, at 0.0000001"), std::string::npos) << what;
    EXPECT_NE(what.find("MPI_THREAD_FUNNELED"), std::string::npos) << what;
  }
}

TEST(WorkerThreadMpi, AReceiveOrACollectiveOfAWorkerThreadIsRefusedToo) {
  TempDir dir("multiple");
  for (const auto& calls : {std::vector<Call>{Call::Send, Call::None, Call::None, Call::Recv},
                            std::vector<Call>{Call::Barrier, Call::None, Call::None, Call::Barrier}}) {
    const auto path = write_threads_trace(dir.path / std::to_string(static_cast<int>(calls[0])), calls);
    for (const auto& what : errors(path)) {
      EXPECT_NE(what.find("3.evt"), std::string::npos) << what;
      EXPECT_NE(what.find("(OMP thread 1 of MPI Rank 1, at 0.0000002"), std::string::npos) << what;
    }
  }
}
