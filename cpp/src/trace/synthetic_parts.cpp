#include "synthetic_parts.hpp"

#include <algorithm>
#include <stdexcept>

namespace cubescale::trace::synthetic {

namespace {

OTF2_FlushType pre_flush(void*, OTF2_FileType, OTF2_LocationRef, void*, bool) { return OTF2_FLUSH; }
OTF2_TimeStamp post_flush(void*, OTF2_FileType, OTF2_LocationRef) { return 0; }

// The names of a table's entries (their `name`) appended to `strings`; returns the first one's index.
template <typename Table>
OTF2_StringRef append_names(std::vector<std::string>& strings, const Table& table) {
  const auto first = static_cast<OTF2_StringRef>(strings.size());
  for (const auto& entry : table) strings.push_back(entry.name);
  return first;
}

}  // namespace

void check(OTF2_ErrorCode rc, const char* what) {
  if (rc != OTF2_SUCCESS)
    throw std::runtime_error(std::string("writing a synthetic trace: ") + what + ": " + OTF2_Error_GetDescription(rc));
}

OTF2_Archive* open_archive(const std::string& directory, const std::string& name) {
  auto* archive = OTF2_Archive_Open(directory.c_str(), name.c_str(), OTF2_FILEMODE_WRITE, 1024 * 1024, 4 * 1024 * 1024,
                                    OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE);
  if (!archive) throw std::runtime_error("cannot create the archive " + directory + "/" + name);
  // OTF2 keeps the callbacks' address: they outlive the archive.
  static const OTF2_FlushCallbacks flush{pre_flush, post_flush};
  check(OTF2_Archive_SetFlushCallbacks(archive, &flush, nullptr), "flush callbacks");
  check(OTF2_Archive_SetSerialCollectiveCallbacks(archive), "collective callbacks");
  check(OTF2_Archive_OpenEvtFiles(archive), "event files");
  return archive;
}

std::uint64_t close_event_writer(OTF2_Archive* archive, OTF2_EvtWriter* w) {
  std::uint64_t events = 0;
  check(OTF2_EvtWriter_GetNumberOfEvents(w, &events), "event count");
  check(OTF2_Archive_CloseEvtWriter(archive, w), "close event writer");
  return events;
}

void close_event_files(OTF2_Archive* archive, const std::vector<std::uint64_t>& locations) {
  check(OTF2_Archive_CloseEvtFiles(archive), "close event files");
  check(OTF2_Archive_OpenDefFiles(archive), "definition files");
  for (auto l : locations) check(OTF2_Archive_CloseDefWriter(archive, OTF2_Archive_GetDefWriter(archive, l)), "local definitions");
  check(OTF2_Archive_CloseDefFiles(archive), "close definition files");
}

OTF2_GlobalDefWriter* begin_global_definitions(OTF2_Archive* archive, std::uint64_t end,
                                               const std::vector<std::string>& strings) {
  auto* g = OTF2_Archive_GetGlobalDefWriter(archive);
  if (!g) throw std::runtime_error("no global definition writer");
  check(OTF2_GlobalDefWriter_WriteClockProperties(g, 1000000000, 0, end, OTF2_UNDEFINED_TIMESTAMP), "clock");
  for (std::uint32_t s = 0; s < strings.size(); ++s) check(OTF2_GlobalDefWriter_WriteString(g, s, strings[s].c_str()), "string");
  return g;
}

void write_system_tree(OTF2_GlobalDefWriter* g) {
  check(OTF2_GlobalDefWriter_WriteSystemTreeNode(g, 0, 2, 1, OTF2_UNDEFINED_SYSTEM_TREE_NODE), "machine");
  check(OTF2_GlobalDefWriter_WriteSystemTreeNode(g, 1, 4, 3, 0), "node");
}

void write_processes(OTF2_GlobalDefWriter* g, std::uint32_t processes, OTF2_StringRef first_name) {
  for (std::uint32_t p = 0; p < processes; ++p)
    check(OTF2_GlobalDefWriter_WriteLocationGroup(g, p, first_name + p, OTF2_LOCATION_GROUP_TYPE_PROCESS, 1,
                                                  OTF2_UNDEFINED_LOCATION_GROUP),
          "location group");
}

void write_program_region(OTF2_GlobalDefWriter* g, OTF2_RegionRef id, OTF2_StringRef name, OTF2_StringRef canonical) {
  check(OTF2_GlobalDefWriter_WriteRegion(g, id, name, canonical, 0, OTF2_REGION_ROLE_ARTIFICIAL,
                                         OTF2_PARADIGM_MEASUREMENT_SYSTEM, OTF2_REGION_FLAG_NONE, 0, 0, 0),
        "program region");
}

void close_archive(OTF2_Archive* archive, OTF2_GlobalDefWriter* g) {
  check(OTF2_Archive_CloseGlobalDefWriter(archive, g), "close global definitions");
  check(OTF2_Archive_Close(archive), "close archive");
}

// ---------------------------------------------------------------------------------------------
namespace mpi {

const CallKind kCalls[30] = {
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

namespace {

// MPI-3 non-blocking collectives (MPI_I<op>): a request here, completed by a later MPI_Wait*.
bool nonblocking_collective(const CallKind& k) { return k.collective_op >= 0 && k.name[4] == 'I'; }

// MPI_Wait*/MPI_Test*: complete requests only (no peer of their own needed).
bool completes(const std::string& name) { return name.starts_with("MPI_Wait") || name.starts_with("MPI_Test"); }

// What a call needs beyond its times (checked before the archive exists: no half-written trace).
void check_call(const MpiCall& c, std::size_t kind, std::uint32_t ranks) {
  if (kind == kOutsideMain || kind == kMain) return;
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

}  // namespace

std::size_t call_index(const std::string& name) {
  if (name == "outside main") return kOutsideMain;
  if (name == "main") return kMain;
  for (std::size_t i = 0; i < kCallCount; ++i)
    if (name == kCalls[i].name) return i;
  throw std::invalid_argument("unknown MPI call \"" + name + "\" for a synthetic trace");
}

std::vector<std::size_t> check_rank(const std::vector<MpiCall>& calls, std::uint32_t rank, std::uint32_t ranks,
                                    std::uint64_t end) {
  std::vector<std::size_t> kinds;
  std::uint64_t t = 0, last = end;  // calls lie in [t, last]: main's time, where the rank states it
  for (const auto& c : calls) {
    kinds.push_back(call_index(c.name));
    check_call(c, kinds.back(), ranks);
    if (kinds.back() == kMain && kinds.size() > 1)
      throw std::invalid_argument("rank " + std::to_string(rank) + ": \"main\" can only be a rank's first call");
    if (c.enter < t || c.leave < c.enter || c.leave > last)
      throw std::invalid_argument("rank " + std::to_string(rank) + ": " + c.name + " [" + std::to_string(c.enter) + ", " +
                                  std::to_string(c.leave) + "] is out of time order");
    if (kinds.back() == kMain) {
      t = c.enter, last = c.leave;
    } else {
      t = c.leave;
    }
  }
  return kinds;
}

bool uses_reversed(const std::vector<MpiCall>& calls, const std::vector<std::size_t>& kinds) {
  for (std::size_t i = 0; i < calls.size(); ++i)
    if (calls[i].tag == 2 && kinds[i] != kOutsideMain && kinds[i] != kMain && kCalls[kinds[i]].collective_op >= 0)
      return true;
  return false;
}

std::uint64_t Requests::receive(std::uint32_t peer) {
  for (auto it = irecvs.begin(); it != irecvs.end(); ++it)
    if (it->first == peer) {
      const auto r = it->second;
      irecvs.erase(it);
      return r;
    }
  return next++;
}

void write_call(OTF2_EvtWriter* w, const MpiCall& c, std::size_t kind, Requests& requests, const Regions& regions) {
  if (kind == kOutsideMain) {
    check(OTF2_EvtWriter_Leave(w, nullptr, c.enter, regions.main), "leave main");
    check(OTF2_EvtWriter_Enter(w, nullptr, c.leave, regions.main), "enter main");
    return;
  }
  const auto& k = kCalls[kind];
  const OTF2_RegionRef region = regions.first_call + static_cast<OTF2_RegionRef>(kind);
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

OTF2_StringRef append_call_names(std::vector<std::string>& strings) { return append_names(strings, kCalls); }

void write_call_regions(OTF2_GlobalDefWriter* g, OTF2_RegionRef first_call, OTF2_StringRef first_name,
                        OTF2_StringRef file) {
  for (std::uint32_t i = 0; i < kCallCount; ++i)
    check(OTF2_GlobalDefWriter_WriteRegion(g, first_call + i, first_name + i, first_name + i, 0, kCalls[i].role,
                                           OTF2_PARADIGM_MPI, OTF2_REGION_FLAG_NONE, file, 0, 0),
          "region");
}

std::pair<std::uint32_t, std::uint32_t> write_communicators(OTF2_GlobalDefWriter* g,
                                                             const std::vector<std::uint64_t>& locations,
                                                             OTF2_StringRef world, OTF2_StringRef self,
                                                             OTF2_StringRef reversed_name, bool reversed) {
  const auto P = static_cast<std::uint32_t>(locations.size());
  std::vector<std::uint64_t> ranks(P);
  for (std::uint32_t p = 0; p < P; ++p) ranks[p] = p;
  check(OTF2_GlobalDefWriter_WriteGroup(g, 0, 0, OTF2_GROUP_TYPE_COMM_LOCATIONS, OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE,
                                        P, locations.data()),
        "locations group");
  check(OTF2_GlobalDefWriter_WriteGroup(g, 1, 0, OTF2_GROUP_TYPE_COMM_GROUP, OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE, P,
                                        ranks.data()),
        "comm group");
  check(OTF2_GlobalDefWriter_WriteComm(g, 0, world, 1, OTF2_UNDEFINED_COMM, OTF2_COMM_FLAG_NONE), "communicator");
  // MPI_COMM_SELF (collectives with tag 1): a communicator of one member, the recording rank.
  check(OTF2_GlobalDefWriter_WriteGroup(g, 2, 0, OTF2_GROUP_TYPE_COMM_SELF, OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE, 0,
                                        nullptr),
        "self group");
  check(OTF2_GlobalDefWriter_WriteComm(g, 1, self, 2, OTF2_UNDEFINED_COMM, OTF2_COMM_FLAG_NONE), "self communicator");
  if (!reversed) return {3, 2};
  // MPI_COMM_REVERSED (collectives with tag 2; defined only where used, so that the other traces
  // stay as they were): every process, ranked in reverse, as MPI_Comm_split with key -rank makes
  // it: a communicator whose rank order is not its members' location order.
  std::vector<std::uint64_t> backwards(ranks.rbegin(), ranks.rend());
  check(OTF2_GlobalDefWriter_WriteGroup(g, 3, 0, OTF2_GROUP_TYPE_COMM_GROUP, OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE, P,
                                        backwards.data()),
        "reversed group");
  check(OTF2_GlobalDefWriter_WriteComm(g, 2, reversed_name, 3, OTF2_UNDEFINED_COMM, OTF2_COMM_FLAG_NONE),
        "reversed communicator");
  return {4, 3};
}

}  // namespace mpi

// ---------------------------------------------------------------------------------------------
namespace omp {

namespace {

struct RegionDef {
  const char* name;
  OTF2_RegionRole role;
  OTF2_Paradigm paradigm;
  bool pthread_file = false;  // source file "PTHREAD", as Score-P's POSIX threads wrappers name it
};
// In the order of Region.
const RegionDef kRegions[kRegionCount] = {
    {"!$omp parallel @synthetic.c:1", OTF2_REGION_ROLE_PARALLEL, OTF2_PARADIGM_OPENMP},
    {"!$omp implicit barrier @synthetic.c:2", OTF2_REGION_ROLE_IMPLICIT_BARRIER, OTF2_PARADIGM_OPENMP},
    {"!$omp barrier @synthetic.c:3", OTF2_REGION_ROLE_BARRIER, OTF2_PARADIGM_OPENMP},
    {"!$omp critical @synthetic.c:4", OTF2_REGION_ROLE_CRITICAL, OTF2_PARADIGM_OPENMP},
    {"!$omp critical sblock @synthetic.c:4", OTF2_REGION_ROLE_CRITICAL_SBLOCK, OTF2_PARADIGM_OPENMP},
    {"omp_set_lock", OTF2_REGION_ROLE_WRAPPER, OTF2_PARADIGM_OPENMP},
    {"omp_unset_lock", OTF2_REGION_ROLE_WRAPPER, OTF2_PARADIGM_OPENMP},
    {"pthread_mutex_lock", OTF2_REGION_ROLE_WRAPPER, OTF2_PARADIGM_PTHREAD, true},
    {"pthread_mutex_unlock", OTF2_REGION_ROLE_WRAPPER, OTF2_PARADIGM_PTHREAD, true},
    {"pthread_cond_wait", OTF2_REGION_ROLE_WRAPPER, OTF2_PARADIGM_PTHREAD, true},
};
const RegionDef kTaskRegions[kTaskRegionCount] = {
    {"!$omp task @synthetic.c:5", OTF2_REGION_ROLE_TASK, OTF2_PARADIGM_OPENMP},
    {"!$omp task untied @synthetic.c:6", OTF2_REGION_ROLE_TASK_UNTIED, OTF2_PARADIGM_OPENMP},
    {"!$omp create task @synthetic.c:5", OTF2_REGION_ROLE_TASK_CREATE, OTF2_PARADIGM_OPENMP},
    {"!$omp taskwait @synthetic.c:7", OTF2_REGION_ROLE_TASK_WAIT, OTF2_PARADIGM_OPENMP},
    {"work", OTF2_REGION_ROLE_FUNCTION, OTF2_PARADIGM_USER},
};

bool task_call(const std::string& call) {
  return call == "task_create" || call == "task_begin" || call == "task_end" || call == "task_switch" ||
         call == "enter" || call == "leave";
}
Region named_region(const std::string& region) {
  if (region == "taskwait") return Region::Taskwait;
  if (region == "ibarrier") return Region::ImplicitBarrier;
  if (region == "work") return Region::Work;
  throw std::invalid_argument("no region \"" + region + "\" for enter/leave in a synthetic OpenMP trace");
}
// Calls that acquire a lock, and those whose lock is a POSIX threads one (lock ids are per paradigm).
bool locks(const std::string& call) { return call == "critical" || call == "lock" || call == "mutex" || call == "condwait"; }
bool pthread_lock(const std::string& call) { return call == "mutex" || call == "condwait"; }

std::uint64_t team_begin(const OmpParallel& r, std::size_t th) { return r.begins.empty() ? r.fork : r.begins[th]; }
std::uint64_t team_end(const OmpParallel& r, std::size_t th) { return r.ends.empty() ? r.join : r.ends[th]; }

void write_call(OTF2_EvtWriter* w, const OmpCall& c, std::uint32_t order, const Ids& ids) {
  auto enter = [&](Region region, std::uint64_t t) { check(OTF2_EvtWriter_Enter(w, nullptr, t, ids(region)), "enter"); };
  auto leave = [&](Region region, std::uint64_t t) { check(OTF2_EvtWriter_Leave(w, nullptr, t, ids(region)), "leave"); };
  const auto paradigm = pthread_lock(c.name) ? OTF2_PARADIGM_PTHREAD : OTF2_PARADIGM_OPENMP;
  auto acquire = [&](std::uint64_t t) {
    check(OTF2_EvtWriter_ThreadAcquireLock(w, nullptr, t, paradigm, c.lock, order), "acquire");
  };
  auto release = [&](std::uint64_t t) {
    check(OTF2_EvtWriter_ThreadReleaseLock(w, nullptr, t, paradigm, c.lock, order), "release");
  };
  auto task = [&](auto write, const char* what) {
    check(write(w, nullptr, c.enter, ids.team, c.creator, c.generation), what);
  };
  const auto task_region = c.untied ? Region::UntiedTask : Region::Task;
  if (c.name == "task_create") {
    enter(Region::CreateTask, c.enter);
    task(OTF2_EvtWriter_ThreadTaskCreate, "task create");
    leave(Region::CreateTask, c.leave);
  } else if (c.name == "task_begin") {
    task(OTF2_EvtWriter_ThreadTaskSwitch, "task switch");
    enter(task_region, c.enter);
  } else if (c.name == "task_end") {
    leave(task_region, c.enter);
    task(OTF2_EvtWriter_ThreadTaskComplete, "task complete");
  } else if (c.name == "task_switch") {
    task(OTF2_EvtWriter_ThreadTaskSwitch, "task switch");
  } else if (c.name == "enter") {
    enter(named_region(c.region), c.enter);
  } else if (c.name == "leave") {
    leave(named_region(c.region), c.enter);
  } else if (c.name == "ibarrier" || c.name == "barrier") {
    const auto region = c.name == "ibarrier" ? Region::ImplicitBarrier : Region::Barrier;
    enter(region, c.enter);
    leave(region, c.leave);
  } else if (c.name == "critical") {
    enter(Region::Critical, c.enter);
    acquire(c.acquire);
    enter(Region::Sblock, c.acquire);
    leave(Region::Sblock, c.leave);
    release(c.leave);
    leave(Region::Critical, c.leave);
  } else {
    const bool api = c.name == "lock";
    const auto take = api ? Region::SetLock : c.name == "mutex" ? Region::MutexLock : Region::CondWait;
    enter(take, c.enter);
    acquire(c.acquire);
    leave(take, c.acquire);
    enter(api ? Region::UnsetLock : Region::MutexUnlock, c.leave);
    release(c.leave);
    leave(api ? Region::UnsetLock : Region::MutexUnlock, c.leave);
  }
}

}  // namespace

void check_regions(const std::vector<OmpParallel>& regions, std::uint32_t threads, std::uint64_t end) {
  std::uint64_t t = 0;
  std::vector<std::uint64_t> last(threads, 0);  // per thread its latest team end (its events stay in time order)
  for (const auto& r : regions) {
    if (r.fork < t || r.join < r.fork || r.join > end) throw std::invalid_argument("parallel regions out of time order");
    if (r.threads.empty() || r.threads.size() > threads)
      throw std::invalid_argument("a team needs 1 to " + std::to_string(threads) + " threads");
    if ((!r.begins.empty() && r.begins.size() != r.threads.size()) || (!r.ends.empty() && r.ends.size() != r.threads.size()))
      throw std::invalid_argument("begin and end need one time per thread of the team");
    // The master writes the fork before its team begin and the join after its team end.
    if (team_begin(r, 0) < r.fork || team_end(r, 0) > r.join)
      throw std::invalid_argument("the master's team begin before the fork or its end after the join");
    for (std::size_t th = 0; th < r.threads.size(); ++th) {
      const auto& calls = r.threads[th];
      std::uint64_t at = team_begin(r, th);
      if (team_end(r, th) < at || team_end(r, th) > end) throw std::invalid_argument("a thread's team end before its begin");
      if (at < last[th]) throw std::invalid_argument("a thread's team begin before its previous team's end");
      last[th] = team_end(r, th);
      for (const auto& c : calls) {
        if (c.name == "enter" || c.name == "leave") (void)named_region(c.region);
        if (c.name != "ibarrier" && c.name != "barrier" && !locks(c.name) && !task_call(c.name))
          throw std::invalid_argument("unknown OpenMP call \"" + c.name + "\" for a synthetic trace");
        // One-event calls happen at their enter.
        const auto leave = task_call(c.name) && c.name != "task_create" ? c.enter : c.leave;
        if (c.enter < at || leave < c.enter || leave > team_end(r, th) ||
            (locks(c.name) && (c.acquire < c.enter || c.acquire > leave)))
          throw std::invalid_argument(c.name + " [" + std::to_string(c.enter) + ", " + std::to_string(leave) +
                                      "] is out of time order");
        at = leave;
      }
    }
    t = r.join;
  }
}

bool uses_tasks(const std::vector<OmpParallel>& regions) {
  for (const auto& r : regions)
    for (const auto& calls : r.threads)
      for (const auto& c : calls)
        if (task_call(c.name)) return true;
  return false;
}

Orders acquisition_orders(const std::vector<OmpParallel>& regions) {
  Orders orders;
  for (std::size_t r = 0; r < regions.size(); ++r)
    for (std::size_t th = 0; th < regions[r].threads.size(); ++th)
      for (std::size_t i = 0; i < regions[r].threads[th].size(); ++i) {
        const auto& c = regions[r].threads[th][i];
        if (locks(c.name)) orders[{pthread_lock(c.name), c.lock, c.acquire, r, th, i}] = 0;
      }
  std::map<std::pair<bool, std::uint32_t>, std::uint32_t> next;
  for (auto& [key, order] : orders) order = ++next[{std::get<0>(key), std::get<1>(key)}];
  return orders;
}

void write_team(OTF2_EvtWriter* w, const std::vector<OmpParallel>& regions, std::size_t r, std::size_t th,
                const Orders& orders, const Ids& ids, const std::function<void(std::uint64_t)>& master_until) {
  const auto& region = regions[r];
  if (th >= region.threads.size()) return;
  if (th == 0)
    check(OTF2_EvtWriter_ThreadFork(w, nullptr, region.fork, OTF2_PARADIGM_OPENMP,
                                    static_cast<std::uint32_t>(region.threads.size())),
          "fork");
  check(OTF2_EvtWriter_ThreadTeamBegin(w, nullptr, team_begin(region, th), ids.team), "team begin");
  check(OTF2_EvtWriter_Enter(w, nullptr, team_begin(region, th), ids(Region::Parallel)), "enter parallel");
  for (std::size_t i = 0; i < region.threads[th].size(); ++i) {
    const auto& c = region.threads[th][i];
    const auto it = orders.find({pthread_lock(c.name), c.lock, c.acquire, r, th, i});
    if (th == 0 && master_until) master_until(c.enter);
    write_call(w, c, it == orders.end() ? 0 : it->second, ids);
  }
  if (th == 0 && master_until) master_until(team_end(region, th));
  check(OTF2_EvtWriter_Leave(w, nullptr, team_end(region, th), ids(Region::Parallel)), "leave parallel");
  check(OTF2_EvtWriter_ThreadTeamEnd(w, nullptr, team_end(region, th), ids.team), "team end");
  if (th == 0) check(OTF2_EvtWriter_ThreadJoin(w, nullptr, region.join, OTF2_PARADIGM_OPENMP), "join");
}

std::uint64_t master_first(const OmpParallel& r) { return std::min(r.fork, team_begin(r, 0)); }
std::uint64_t master_last(const OmpParallel& r) { return std::max(r.join, team_end(r, 0)); }

bool fits_master_gap(const OmpParallel& r, std::uint64_t enter, std::uint64_t leave) {
  if (enter < team_begin(r, 0) || leave > team_end(r, 0)) return false;
  for (const auto& c : r.threads[0]) {
    const auto last = task_call(c.name) && c.name != "task_create" ? c.enter : c.leave;  // one-event calls: at enter
    if (enter < last && leave > c.enter) return false;
  }
  return true;
}

OTF2_StringRef append_region_names(std::vector<std::string>& strings) { return append_names(strings, kRegions); }

OTF2_StringRef append_task_region_names(std::vector<std::string>& strings) {
  return append_names(strings, kTaskRegions);
}

void write_regions(OTF2_GlobalDefWriter* g, OTF2_RegionRef first, OTF2_StringRef first_name,
                   OTF2_StringRef pthread_file) {
  for (std::uint32_t i = 0; i < kRegionCount; ++i)
    check(OTF2_GlobalDefWriter_WriteRegion(g, first + i, first_name + i, first_name + i, 0, kRegions[i].role,
                                           kRegions[i].paradigm, OTF2_REGION_FLAG_NONE,
                                           kRegions[i].pthread_file ? pthread_file : 0, 0, 0),
          "region");
}

void write_task_regions(OTF2_GlobalDefWriter* g, OTF2_RegionRef first, OTF2_StringRef first_name) {
  for (std::uint32_t i = 0; i < kTaskRegionCount; ++i)
    check(OTF2_GlobalDefWriter_WriteRegion(g, first + i, first_name + i, first_name + i, 0, kTaskRegions[i].role,
                                           kTaskRegions[i].paradigm, OTF2_REGION_FLAG_NONE, 0, 0, 0),
          "task region");
}

}  // namespace omp

}  // namespace cubescale::trace::synthetic
