#include "cubescale/trace/synthetic_mpi.hpp"

#include <otf2/otf2.h>

#include <algorithm>
#include <stdexcept>

namespace cubescale::trace {

namespace {

OTF2_FlushType pre_flush(void*, OTF2_FileType, OTF2_LocationRef, void*, bool) { return OTF2_FLUSH; }
OTF2_TimeStamp post_flush(void*, OTF2_FileType, OTF2_LocationRef) { return 0; }

void check(OTF2_ErrorCode rc, const char* what) {
  if (rc != OTF2_SUCCESS)
    throw std::runtime_error(std::string("writing a synthetic MPI trace: ") + what + ": " + OTF2_Error_GetDescription(rc));
}

struct CallKind {
  const char* name;
  OTF2_RegionRole role;
  int collective_op;  // OTF2_CollectiveOp, -1 for point to point, -2 for a call without events
  bool rooted;
};

// Region 0 is main; region i + 1 is kCalls[i].
const CallKind kCalls[] = {
    {"MPI_Send", OTF2_REGION_ROLE_POINT2POINT, -1, false},
    {"MPI_Isend", OTF2_REGION_ROLE_POINT2POINT, -1, false},
    {"MPI_Recv", OTF2_REGION_ROLE_POINT2POINT, -1, false},
    {"MPI_Wait", OTF2_REGION_ROLE_POINT2POINT, -1, false},
    {"MPI_Waitall", OTF2_REGION_ROLE_POINT2POINT, -1, false},
    {"MPI_Barrier", OTF2_REGION_ROLE_BARRIER, OTF2_COLLECTIVE_OP_BARRIER, false},
    {"MPI_Bcast", OTF2_REGION_ROLE_COLL_ONE2ALL, OTF2_COLLECTIVE_OP_BCAST, true},
    {"MPI_Scatter", OTF2_REGION_ROLE_COLL_ONE2ALL, OTF2_COLLECTIVE_OP_SCATTER, true},
    {"MPI_Reduce", OTF2_REGION_ROLE_COLL_ALL2ONE, OTF2_COLLECTIVE_OP_REDUCE, true},
    {"MPI_Gather", OTF2_REGION_ROLE_COLL_ALL2ONE, OTF2_COLLECTIVE_OP_GATHER, true},
    {"MPI_Allreduce", OTF2_REGION_ROLE_COLL_ALL2ALL, OTF2_COLLECTIVE_OP_ALLREDUCE, false},
    {"MPI_Alltoall", OTF2_REGION_ROLE_COLL_ALL2ALL, OTF2_COLLECTIVE_OP_ALLTOALL, false},
    {"MPI_Allgather", OTF2_REGION_ROLE_COLL_ALL2ALL, OTF2_COLLECTIVE_OP_ALLGATHER, false},
    {"MPI_Scan", OTF2_REGION_ROLE_COLL_OTHER, OTF2_COLLECTIVE_OP_SCAN, false},
    {"MPI_Init", OTF2_REGION_ROLE_FUNCTION, -2, false},
    {"MPI_Finalize", OTF2_REGION_ROLE_FUNCTION, -2, false},
    {"MPI_Ssend", OTF2_REGION_ROLE_POINT2POINT, -1, false},
    {"MPI_Irecv", OTF2_REGION_ROLE_POINT2POINT, -1, false},
    {"MPI_Ibarrier", OTF2_REGION_ROLE_BARRIER, OTF2_COLLECTIVE_OP_BARRIER, false},
    {"MPI_Ibcast", OTF2_REGION_ROLE_COLL_ONE2ALL, OTF2_COLLECTIVE_OP_BCAST, true},
    {"MPI_Ireduce", OTF2_REGION_ROLE_COLL_ALL2ONE, OTF2_COLLECTIVE_OP_REDUCE, true},
    {"MPI_Iallreduce", OTF2_REGION_ROLE_COLL_ALL2ALL, OTF2_COLLECTIVE_OP_ALLREDUCE, false},
    {"MPI_Test", OTF2_REGION_ROLE_POINT2POINT, -1, false},
    {"MPI_Alltoallv", OTF2_REGION_ROLE_COLL_ALL2ALL, OTF2_COLLECTIVE_OP_ALLTOALLV, false},
    {"MPI_Iscan", OTF2_REGION_ROLE_COLL_OTHER, OTF2_COLLECTIVE_OP_SCAN, false},
    {"MPI_Sendrecv", OTF2_REGION_ROLE_POINT2POINT, -1, false},
    {"MPI_Waitany", OTF2_REGION_ROLE_POINT2POINT, -1, false},
    {"MPI_Waitsome", OTF2_REGION_ROLE_POINT2POINT, -1, false},
    {"MPI_Testall", OTF2_REGION_ROLE_POINT2POINT, -1, false},
    {"MPI_Testsome", OTF2_REGION_ROLE_POINT2POINT, -1, false},
};

// MPI-3 non-blocking collectives (MPI_I<op>): a request here, completed by a later MPI_Wait*.
bool nonblocking_collective(const CallKind& k) { return k.collective_op >= 0 && k.name[4] == 'I'; }

// Requests of one rank: MPI_Isend's until an MPI_Wait/Waitall completes them, MPI_Irecv's
// until an MPI_Wait/Waitall receives from that peer (oldest first).
struct Requests {
  std::uint64_t next = 1;
  std::vector<std::uint64_t> isends;
  std::vector<std::pair<std::uint32_t, std::uint64_t>> irecvs;  // (peer, request)
  struct Collective {
    std::uint64_t request;
    OTF2_CollectiveOp op;
    std::uint32_t root;
    std::uint32_t communicator;  // 0 MPI_COMM_WORLD, 2 MPI_COMM_REVERSED (tag 2)
  };
  std::vector<Collective> collectives;  // open non-blocking collectives
  std::uint64_t receive(std::uint32_t peer) {
    for (auto it = irecvs.begin(); it != irecvs.end(); ++it)
      if (it->first == peer) {
        const auto r = it->second;
        irecvs.erase(it);
        return r;
      }
    return next++;
  }
};

// A stretch outside every region: main is left at the call's enter and entered again at its
// leave (a run without PROGRAM_BEGIN whose top-level regions leave gaps, as Score-P writes C++
// static constructors before main).
constexpr const char* kOutsideMain = "outside main";
constexpr std::size_t kOutsideMainIndex = std::size(kCalls);

// A rank's first call only: the program as Score-P 7 and later records it, PROGRAM_BEGIN at 0,
// main from the call's enter to its leave, PROGRAM_END at the trace's end (the program's own
// region defined as Score-P defines it, named after the trace).
constexpr const char* kMain = "main";
constexpr std::size_t kMainIndex = kOutsideMainIndex + 1;

std::size_t call_index(const std::string& name) {
  if (name == kOutsideMain) return kOutsideMainIndex;
  if (name == kMain) return kMainIndex;
  for (std::size_t i = 0; i < std::size(kCalls); ++i)
    if (name == kCalls[i].name) return i;
  throw std::invalid_argument("unknown MPI call \"" + name + "\" for a synthetic trace");
}

// MPI_Wait*/MPI_Test*: complete requests only (no peer of their own needed).
bool completes(const std::string& name) { return name.starts_with("MPI_Wait") || name.starts_with("MPI_Test"); }

// What a call needs beyond its times (checked before the archive exists: no half-written trace).
void check_call(const MpiCall& c, std::size_t kind, std::uint32_t ranks) {
  if (kind == kOutsideMainIndex || kind == kMainIndex) return;
  const auto& k = kCalls[kind];
  const std::string name = k.name;
  if (name == "MPI_Sendrecv" && c.peers.size() != 2)
    throw std::invalid_argument("MPI_Sendrecv needs two peers: the receiver, then the sender");
  const bool needs_peer = (k.collective_op == -1 && !completes(name)) || k.rooted;
  if (needs_peer && c.peers.empty()) throw std::invalid_argument(name + " needs a peer or root");
  for (auto p : c.peers)
    if (p >= ranks) throw std::invalid_argument(name + ": rank " + std::to_string(p) + " does not exist");
  if (k.collective_op >= 0 && c.tag > 2)
    throw std::invalid_argument(name + ": communicator (tag) " + std::to_string(c.tag) + " is not 0, 1 or 2");
}

void write_call(OTF2_EvtWriter* w, const MpiCall& c, std::size_t kind, Requests& requests) {
  if (kind == kOutsideMainIndex) {
    check(OTF2_EvtWriter_Leave(w, nullptr, c.enter, 0), "leave main");
    check(OTF2_EvtWriter_Enter(w, nullptr, c.leave, 0), "enter main");
    return;
  }
  const auto& k = kCalls[kind];
  const OTF2_RegionRef region = static_cast<OTF2_RegionRef>(kind + 1);
  const std::string name = k.name;
  const bool wait = completes(name);
  check(OTF2_EvtWriter_Enter(w, nullptr, c.enter, region), "enter");
  if (name == "MPI_Send" || name == "MPI_Ssend") {
    check(OTF2_EvtWriter_MpiSend(w, nullptr, c.enter, c.peers[0], 0, c.tag, c.bytes), "send");
  } else if (name == "MPI_Sendrecv") {
    check(OTF2_EvtWriter_MpiSend(w, nullptr, c.enter, c.peers[0], 0, c.tag, c.bytes), "send");
    check(OTF2_EvtWriter_MpiRecv(w, nullptr, c.leave, c.peers[1], 0, c.tag, c.bytes), "recv");
  } else if (name == "MPI_Isend") {
    requests.isends.push_back(requests.next);
    check(OTF2_EvtWriter_MpiIsend(w, nullptr, c.enter, c.peers[0], 0, c.tag, c.bytes, requests.next++), "isend");
  } else if (name == "MPI_Irecv") {
    requests.irecvs.push_back({c.peers[0], requests.next});
    check(OTF2_EvtWriter_MpiIrecvRequest(w, nullptr, c.enter, requests.next++), "irecv request");
  } else if (name == "MPI_Recv") {
    check(OTF2_EvtWriter_MpiRecv(w, nullptr, c.leave, c.peers[0], 0, c.tag, c.bytes), "recv");
  } else if (nonblocking_collective(k)) {
    // The communicator as for a blocking collective: tag 0 world, 1 self (root 0), 2 reversed.
    requests.collectives.push_back({requests.next, static_cast<OTF2_CollectiveOp>(k.collective_op),
                                    k.rooted ? (c.tag == 1 ? 0u : c.peers[0]) : OTF2_UNDEFINED_UINT32,
                                    static_cast<std::uint32_t>(c.tag)});
    check(OTF2_EvtWriter_NonBlockingCollectiveRequest(w, nullptr, c.enter, requests.next++), "collective request");
  } else if (wait) {
    for (const auto& n : requests.collectives)
      check(OTF2_EvtWriter_NonBlockingCollectiveComplete(w, nullptr, c.leave, n.op, n.communicator, n.root, c.bytes,
                                                         c.bytes, n.request),
            "collective complete");
    requests.collectives.clear();
    for (auto request : requests.isends) check(OTF2_EvtWriter_MpiIsendComplete(w, nullptr, c.leave, request), "isend complete");
    requests.isends.clear();
    for (auto p : c.peers)
      check(OTF2_EvtWriter_MpiIrecv(w, nullptr, c.leave, p, 0, c.tag, c.bytes, requests.receive(p)), "irecv");
  } else if (k.collective_op >= 0) {
    check(OTF2_EvtWriter_MpiCollectiveBegin(w, nullptr, c.enter), "collective begin");
    const auto received = c.bytes_received == MpiCall::kAsSent ? c.bytes : c.bytes_received;
    check(OTF2_EvtWriter_MpiCollectiveEnd(w, nullptr, c.leave, static_cast<OTF2_CollectiveOp>(k.collective_op), c.tag,
                                          k.rooted ? (c.tag == 1 ? 0 : c.peers[0]) : OTF2_UNDEFINED_UINT32, c.bytes,
                                          received),
          "collective end");
  }
  check(OTF2_EvtWriter_Leave(w, nullptr, c.leave, region), "leave");
}

}  // namespace

std::uint64_t write_mpi_trace(const std::string& directory, const std::string& name,
                              const std::vector<std::vector<MpiCall>>& ranks, std::uint64_t end) {
  const auto P = static_cast<std::uint32_t>(ranks.size());
  if (P == 0) throw std::invalid_argument("a synthetic MPI trace needs at least one rank");
  // Check everything before the archive exists: no half-written trace.
  std::vector<std::vector<std::size_t>> kinds(P);
  bool program = false;  // some rank records PROGRAM_BEGIN (its first call is "main")
  for (std::uint32_t p = 0; p < P; ++p) {
    std::uint64_t t = 0, last = end;  // calls lie in [t, last]: main's time, where the rank states it
    for (const auto& c : ranks[p]) {
      kinds[p].push_back(call_index(c.name));
      check_call(c, kinds[p].back(), P);
      if (kinds[p].back() == kMainIndex && kinds[p].size() > 1)
        throw std::invalid_argument("rank " + std::to_string(p) + ": \"main\" can only be a rank's first call");
      if (c.enter < t || c.leave < c.enter || c.leave > last)
        throw std::invalid_argument("rank " + std::to_string(p) + ": " + c.name + " [" + std::to_string(c.enter) + ", " +
                                    std::to_string(c.leave) + "] is out of time order");
      if (kinds[p].back() == kMainIndex) {
        program = true;
        t = c.enter, last = c.leave;
      } else {
        t = c.leave;
      }
    }
  }
  const std::string program_path = "/synthetic/" + name;  // PROGRAM_BEGIN's name; the region's canonical name
  std::vector<std::string> strings = {"", "machine", "synthetic", "node", "node0", "Master thread", "MPI_COMM_WORLD",
                                      "main"};
  const auto self_name = static_cast<std::uint32_t>(strings.size());
  strings.push_back("MPI_COMM_SELF");
  const auto reversed_name = static_cast<std::uint32_t>(strings.size());
  strings.push_back("MPI_COMM_REVERSED");
  // Score-P names "MPI" as the source file of every MPI region; Scalasca's scout finds MPI
  // calls by that file, so the synthetic traces carry it too (to compare with scout).
  const auto mpi_file = static_cast<std::uint32_t>(strings.size());
  strings.push_back("MPI");
  const std::uint32_t first_call = static_cast<std::uint32_t>(strings.size());
  for (const auto& k : kCalls) strings.push_back(k.name);
  const std::uint32_t first_rank = static_cast<std::uint32_t>(strings.size());
  for (std::uint32_t p = 0; p < P; ++p) strings.push_back("MPI Rank " + std::to_string(p));
  const auto program_name = static_cast<std::uint32_t>(strings.size());
  if (program) strings.insert(strings.end(), {name, program_path});  // the region's names, PROGRAM_BEGIN's
  auto* archive = OTF2_Archive_Open(directory.c_str(), name.c_str(), OTF2_FILEMODE_WRITE, 1024 * 1024, 4 * 1024 * 1024,
                                    OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE);
  if (!archive) throw std::runtime_error("cannot create the archive " + directory + "/" + name);
  OTF2_FlushCallbacks flush{pre_flush, post_flush};
  check(OTF2_Archive_SetFlushCallbacks(archive, &flush, nullptr), "flush callbacks");
  check(OTF2_Archive_SetSerialCollectiveCallbacks(archive), "collective callbacks");
  check(OTF2_Archive_OpenEvtFiles(archive), "event files");
  std::vector<std::uint64_t> events(P, 0);
  for (std::uint32_t p = 0; p < P; ++p) {
    auto* w = OTF2_Archive_GetEvtWriter(archive, p);
    if (!w) throw std::runtime_error("no event writer");
    const bool begins = !ranks[p].empty() && kinds[p][0] == kMainIndex;
    if (begins) check(OTF2_EvtWriter_ProgramBegin(w, nullptr, 0, program_name + 1, 0, nullptr), "program begin");
    check(OTF2_EvtWriter_Enter(w, nullptr, begins ? ranks[p][0].enter : 0, 0), "enter main");
    Requests requests;
    for (std::size_t i = begins ? 1 : 0; i < ranks[p].size(); ++i) write_call(w, ranks[p][i], kinds[p][i], requests);
    check(OTF2_EvtWriter_Leave(w, nullptr, begins ? ranks[p][0].leave : end, 0), "leave main");
    if (begins) check(OTF2_EvtWriter_ProgramEnd(w, nullptr, end, 0), "program end");
    check(OTF2_EvtWriter_GetNumberOfEvents(w, &events[p]), "event count");
    check(OTF2_Archive_CloseEvtWriter(archive, w), "close event writer");
  }
  check(OTF2_Archive_CloseEvtFiles(archive), "close event files");
  check(OTF2_Archive_OpenDefFiles(archive), "definition files");
  for (std::uint32_t p = 0; p < P; ++p) check(OTF2_Archive_CloseDefWriter(archive, OTF2_Archive_GetDefWriter(archive, p)), "local definitions");
  check(OTF2_Archive_CloseDefFiles(archive), "close definition files");
  auto* g = OTF2_Archive_GetGlobalDefWriter(archive);
  if (!g) throw std::runtime_error("no global definition writer");
  check(OTF2_GlobalDefWriter_WriteClockProperties(g, 1000000000, 0, end, OTF2_UNDEFINED_TIMESTAMP), "clock");
  for (std::uint32_t s = 0; s < strings.size(); ++s) check(OTF2_GlobalDefWriter_WriteString(g, s, strings[s].c_str()), "string");
  check(OTF2_GlobalDefWriter_WriteSystemTreeNode(g, 0, 2, 1, OTF2_UNDEFINED_SYSTEM_TREE_NODE), "machine");
  check(OTF2_GlobalDefWriter_WriteSystemTreeNode(g, 1, 4, 3, 0), "node");
  for (std::uint32_t p = 0; p < P; ++p)
    check(OTF2_GlobalDefWriter_WriteLocationGroup(g, p, first_rank + p, OTF2_LOCATION_GROUP_TYPE_PROCESS, 1,
                                                  OTF2_UNDEFINED_LOCATION_GROUP),
          "location group");
  for (std::uint32_t p = 0; p < P; ++p)
    check(OTF2_GlobalDefWriter_WriteLocation(g, p, 5, OTF2_LOCATION_TYPE_CPU_THREAD, events[p], p), "location");
  check(OTF2_GlobalDefWriter_WriteRegion(g, 0, 7, 7, 0, OTF2_REGION_ROLE_FUNCTION, OTF2_PARADIGM_USER,
                                         OTF2_REGION_FLAG_NONE, 0, 0, 0),
        "region main");
  for (std::uint32_t i = 0; i < std::size(kCalls); ++i)
    check(OTF2_GlobalDefWriter_WriteRegion(g, i + 1, first_call + i, first_call + i, 0, kCalls[i].role,
                                           OTF2_PARADIGM_MPI, OTF2_REGION_FLAG_NONE, mpi_file, 0, 0),
          "region");
  if (program)
    check(OTF2_GlobalDefWriter_WriteRegion(g, static_cast<OTF2_RegionRef>(std::size(kCalls) + 1), program_name,
                                           program_name + 1, 0, OTF2_REGION_ROLE_ARTIFICIAL,
                                           OTF2_PARADIGM_MEASUREMENT_SYSTEM, OTF2_REGION_FLAG_NONE, 0, 0, 0),
          "program region");
  std::vector<std::uint64_t> members(P);
  for (std::uint32_t p = 0; p < P; ++p) members[p] = p;
  check(OTF2_GlobalDefWriter_WriteGroup(g, 0, 0, OTF2_GROUP_TYPE_COMM_LOCATIONS, OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE,
                                        P, members.data()),
        "locations group");
  check(OTF2_GlobalDefWriter_WriteGroup(g, 1, 0, OTF2_GROUP_TYPE_COMM_GROUP, OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE, P,
                                        members.data()),
        "comm group");
  check(OTF2_GlobalDefWriter_WriteComm(g, 0, 6, 1, OTF2_UNDEFINED_COMM, OTF2_COMM_FLAG_NONE), "communicator");
  // MPI_COMM_SELF (collectives with tag 1): a communicator of one member, the recording rank.
  check(OTF2_GlobalDefWriter_WriteGroup(g, 2, 0, OTF2_GROUP_TYPE_COMM_SELF, OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE, 0,
                                        nullptr),
        "self group");
  check(OTF2_GlobalDefWriter_WriteComm(g, 1, self_name, 2, OTF2_UNDEFINED_COMM, OTF2_COMM_FLAG_NONE), "self communicator");
  // MPI_COMM_REVERSED (collectives with tag 2; defined only where used, so that the other traces
  // stay as they were): every process, ranked in reverse, as MPI_Comm_split with key -rank makes
  // it: a communicator whose rank order is not its members' location order.
  bool reversed = false;
  for (std::uint32_t p = 0; p < P; ++p)
    for (std::size_t i = 0; i < ranks[p].size(); ++i)
      reversed = reversed || (ranks[p][i].tag == 2 && kinds[p][i] != kOutsideMainIndex &&
                              kCalls[kinds[p][i]].collective_op >= 0);
  if (reversed) {
    std::vector<std::uint64_t> backwards(members.rbegin(), members.rend());
    check(OTF2_GlobalDefWriter_WriteGroup(g, 3, 0, OTF2_GROUP_TYPE_COMM_GROUP, OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE, P,
                                          backwards.data()),
          "reversed group");
    check(OTF2_GlobalDefWriter_WriteComm(g, 2, reversed_name, 3, OTF2_UNDEFINED_COMM, OTF2_COMM_FLAG_NONE),
          "reversed communicator");
  }
  check(OTF2_Archive_CloseGlobalDefWriter(archive, g), "close global definitions");
  check(OTF2_Archive_Close(archive), "close archive");
  std::uint64_t total = 0;
  for (auto n : events) total += n;
  return total;
}

}  // namespace cubescale::trace
