#include "cubescale/measure/trace_writer.hpp"

#include <otf2/OTF2_Pthread_Locks.h>
#include <otf2/otf2.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>
#include <stdexcept>
#include <system_error>
#include <tuple>
#include <unordered_map>

#include "cubescale/common/format_error.hpp"

namespace cubescale::measure {

namespace {

void check(OTF2_ErrorCode rc, const char* what) {
  if (rc != OTF2_SUCCESS)
    throw std::runtime_error(std::string("writing the trace: ") + what + ": " + OTF2_Error_GetDescription(rc));
}

// A location id says whose it is: rank in the high bits, the thread's index in the low 16.
constexpr std::uint32_t kThreadBits = 16;
std::uint64_t location_id(std::uint32_t rank, std::uint32_t thread) {
  return (std::uint64_t(rank) << kThreadBits) | thread;
}

OTF2_FlushType pre_flush(void* self, OTF2_FileType type, OTF2_LocationRef location, void*, bool final) {
  if (type == OTF2_FILETYPE_EVENTS && !final) static_cast<TraceWriter*>(self)->flush_begin(location);
  return OTF2_FLUSH;  // always: the buffer has a fixed size
}
OTF2_TimeStamp post_flush(void* self, OTF2_FileType type, OTF2_LocationRef location) {
  return type == OTF2_FILETYPE_EVENTS ? static_cast<TraceWriter*>(self)->flush_end(location) : 0;
}
void* allocate(void* self, OTF2_FileType type, OTF2_LocationRef, void** per_buffer, std::uint64_t size) {
  return static_cast<TraceWriter*>(self)->allocate(per_buffer, size, type == OTF2_FILETYPE_EVENTS);
}
void free_all(void* self, OTF2_FileType, OTF2_LocationRef, void** per_buffer, bool) {
  static_cast<TraceWriter*>(self)->free_all(per_buffer);
}

struct Chunks {
  std::vector<void*> chunks;
};

}  // namespace

void trace_enter(ThreadTrace* trace, RegionId region, std::int64_t now) { trace->enter(region, now); }
void trace_leave(ThreadTrace* trace, RegionId region, std::int64_t now) { trace->leave(region, now); }

// ---------------------------------------------------------------------------------------------
// Events. A closed location (writer_ null) or one that is flushing drops them.

std::int64_t ThreadTrace::stamp(std::int64_t now) {
  if (now > last_) last_ = now;  // a location's timestamps never go back (OTF2 requires it)
  return last_;
}

void ThreadTrace::enter(RegionId region, std::int64_t now) {
  if (writer_ && !flushing_) check(OTF2_EvtWriter_Enter(writer_, nullptr, stamp(now), region), "enter");
}
void ThreadTrace::leave(RegionId region, std::int64_t now) {
  if (writer_ && !flushing_) check(OTF2_EvtWriter_Leave(writer_, nullptr, stamp(now), region), "leave");
}
void ThreadTrace::send(std::uint32_t peer, std::uint32_t comm, std::uint32_t tag, std::uint64_t bytes,
                       std::int64_t now) {
  if (writer_) check(OTF2_EvtWriter_MpiSend(writer_, nullptr, stamp(now), peer, comm, tag, bytes), "MpiSend");
}
void ThreadTrace::receive(std::uint32_t peer, std::uint32_t comm, std::uint32_t tag, std::uint64_t bytes,
                          std::int64_t now) {
  if (writer_) check(OTF2_EvtWriter_MpiRecv(writer_, nullptr, stamp(now), peer, comm, tag, bytes), "MpiRecv");
}
void ThreadTrace::isend(std::uint32_t peer, std::uint32_t comm, std::uint32_t tag, std::uint64_t bytes,
                        std::uint64_t request, std::int64_t now) {
  if (writer_)
    check(OTF2_EvtWriter_MpiIsend(writer_, nullptr, stamp(now), peer, comm, tag, bytes, request), "MpiIsend");
}
void ThreadTrace::isend_complete(std::uint64_t request, std::int64_t now) {
  if (writer_) check(OTF2_EvtWriter_MpiIsendComplete(writer_, nullptr, stamp(now), request), "MpiIsendComplete");
}
void ThreadTrace::irecv_request(std::uint64_t request, std::int64_t now) {
  if (writer_) check(OTF2_EvtWriter_MpiIrecvRequest(writer_, nullptr, stamp(now), request), "MpiIrecvRequest");
}
void ThreadTrace::irecv(std::uint32_t peer, std::uint32_t comm, std::uint32_t tag, std::uint64_t bytes,
                        std::uint64_t request, std::int64_t now) {
  if (writer_)
    check(OTF2_EvtWriter_MpiIrecv(writer_, nullptr, stamp(now), peer, comm, tag, bytes, request), "MpiIrecv");
}
void ThreadTrace::collective_begin(std::int64_t now) {
  if (writer_) check(OTF2_EvtWriter_MpiCollectiveBegin(writer_, nullptr, stamp(now)), "MpiCollectiveBegin");
}
void ThreadTrace::collective_end(const std::string& operation, std::uint32_t comm, std::uint32_t root,
                                 std::uint64_t sent, std::uint64_t received, std::int64_t now) {
  const int op = collective_operation(operation);
  if (op < 0) throw std::invalid_argument("not a collective operation: " + operation);
  if (writer_)
    check(OTF2_EvtWriter_MpiCollectiveEnd(writer_, nullptr, stamp(now), OTF2_CollectiveOp(op), comm,
                                          root == kNoRoot ? OTF2_UNDEFINED_UINT32 : root, sent, received),
          "MpiCollectiveEnd");
}

void ThreadTrace::collective_request(std::uint64_t request, std::int64_t now) {
  if (writer_)
    check(OTF2_EvtWriter_NonBlockingCollectiveRequest(writer_, nullptr, stamp(now), request),
          "NonBlockingCollectiveRequest");
}
void ThreadTrace::collective_complete(const std::string& operation, std::uint32_t comm, std::uint32_t root,
                                      std::uint64_t sent, std::uint64_t received, std::uint64_t request,
                                      std::int64_t now) {
  const int op = collective_operation(operation);
  if (op < 0) throw std::invalid_argument("not a collective operation: " + operation);
  if (writer_)
    check(OTF2_EvtWriter_NonBlockingCollectiveComplete(writer_, nullptr, stamp(now), OTF2_CollectiveOp(op), comm,
                                                       root == kNoRoot ? OTF2_UNDEFINED_UINT32 : root, sent, received,
                                                       request),
          "NonBlockingCollectiveComplete");
}

void ThreadTrace::thread_create(std::uint64_t sequence, std::int64_t now) {
  if (!writer_) return;
  owner_->threads_ = true;
  check(OTF2_EvtWriter_ThreadCreate(writer_, nullptr, stamp(now), kThreadTeam, sequence), "ThreadCreate");
}
void ThreadTrace::thread_begin(std::uint64_t sequence, std::int64_t now) {
  if (!writer_) return;
  owner_->threads_ = true;
  check(OTF2_EvtWriter_ThreadBegin(writer_, nullptr, stamp(now), kThreadTeam, sequence), "ThreadBegin");
}
void ThreadTrace::thread_end(std::uint64_t sequence, std::int64_t now) {
  if (!writer_) return;
  owner_->threads_ = true;
  check(OTF2_EvtWriter_ThreadEnd(writer_, nullptr, stamp(now), kThreadTeam, sequence), "ThreadEnd");
}
void ThreadTrace::thread_wait(std::uint64_t sequence, std::int64_t now) {
  if (!writer_) return;
  owner_->threads_ = true;
  check(OTF2_EvtWriter_ThreadWait(writer_, nullptr, stamp(now), kThreadTeam, sequence), "ThreadWait");
}

int collective_operation(const std::string& f) {
  static const std::unordered_map<std::string, int> ops = {
      {"MPI_Barrier", OTF2_COLLECTIVE_OP_BARRIER},
      {"MPI_Bcast", OTF2_COLLECTIVE_OP_BCAST},
      {"MPI_Gather", OTF2_COLLECTIVE_OP_GATHER},
      {"MPI_Gatherv", OTF2_COLLECTIVE_OP_GATHERV},
      {"MPI_Scatter", OTF2_COLLECTIVE_OP_SCATTER},
      {"MPI_Scatterv", OTF2_COLLECTIVE_OP_SCATTERV},
      {"MPI_Allgather", OTF2_COLLECTIVE_OP_ALLGATHER},
      {"MPI_Allgatherv", OTF2_COLLECTIVE_OP_ALLGATHERV},
      {"MPI_Alltoall", OTF2_COLLECTIVE_OP_ALLTOALL},
      {"MPI_Alltoallv", OTF2_COLLECTIVE_OP_ALLTOALLV},
      {"MPI_Alltoallw", OTF2_COLLECTIVE_OP_ALLTOALLW},
      {"MPI_Allreduce", OTF2_COLLECTIVE_OP_ALLREDUCE},
      {"MPI_Reduce", OTF2_COLLECTIVE_OP_REDUCE},
      {"MPI_Reduce_scatter", OTF2_COLLECTIVE_OP_REDUCE_SCATTER},
      {"MPI_Reduce_scatter_block", OTF2_COLLECTIVE_OP_REDUCE_SCATTER_BLOCK},
      {"MPI_Scan", OTF2_COLLECTIVE_OP_SCAN},
      {"MPI_Exscan", OTF2_COLLECTIVE_OP_EXSCAN},
  };
  auto it = ops.find(f);
  return it == ops.end() ? -1 : it->second;
}

// ---------------------------------------------------------------------------------------------
// One rank's writer.

TraceWriter::TraceWriter(std::string directory, std::uint32_t rank, std::uint64_t buffer_bytes)
    : directory_(std::move(directory)), rank_(rank) {
  // libotf2's chunks are 256 KiB to 16 MiB; a larger buffer is several chunks.
  chunk_size_ = std::clamp<std::uint64_t>(buffer_bytes, OTF2_CHUNK_SIZE_MIN, OTF2_CHUNK_SIZE_MAX);
  chunks_ = std::max<std::uint64_t>(1, buffer_bytes / chunk_size_);
  archive_ = OTF2_Archive_Open(directory_.c_str(), "traces", OTF2_FILEMODE_WRITE, chunk_size_, OTF2_CHUNK_SIZE_MIN,
                               OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE);
  if (!archive_)
    throw std::system_error(errno ? errno : EIO, std::generic_category(), directory_);  // what: the path (OSError)
  static const OTF2_FlushCallbacks flush{pre_flush, post_flush};
  static const OTF2_MemoryCallbacks memory{measure::allocate, measure::free_all};
  try {
    check(OTF2_Archive_SetFlushCallbacks(archive_, &flush, this), "flush callbacks");
    check(OTF2_Archive_SetMemoryCallbacks(archive_, &memory, this), "memory callbacks");
    check(OTF2_Archive_SetSerialCollectiveCallbacks(archive_), "collective callbacks");
    check(OTF2_Pthread_Archive_SetLockingCallbacks(archive_, nullptr), "locking callbacks");
    check(OTF2_Archive_SetCreator(archive_, "cubescale"), "creator");
    check(OTF2_Archive_OpenEvtFiles(archive_), "event files");
  } catch (...) {
    OTF2_Archive_Close(archive_);
    throw;
  }
}

TraceWriter::~TraceWriter() {
  if (!archive_) return;
  if (!closed_) {  // never closed (an error): close what libotf2 holds, write nothing more
    for (auto& l : locations_)
      if (l->writer_) OTF2_Archive_CloseEvtWriter(archive_, l->writer_), l->writer_ = nullptr;
    OTF2_Archive_CloseEvtFiles(archive_);
  }
  OTF2_Archive_Close(archive_);
}

ThreadTrace* TraceWriter::add_location(ThreadRecorder* recorder, std::uint32_t thread) {
  std::lock_guard lock(mutex_);
  if (thread >= (1u << kThreadBits)) throw std::length_error("more than 65536 threads in one process");
  auto t = std::make_unique<ThreadTrace>();
  t->owner_ = this, t->recorder_ = recorder, t->location_ = location_id(rank_, thread);
  if (!closed_) {
    t->writer_ = OTF2_Archive_GetEvtWriter(archive_, t->location_);
    if (!t->writer_) throw std::runtime_error("writing the trace: no event writer");
  }
  const auto start = static_cast<std::uint64_t>(now());
  if (start < first_) first_ = start;
  locations_.push_back(std::move(t));
  return locations_.back().get();
}

std::uint32_t TraceWriter::communicator(std::uint32_t parent, std::vector<std::uint32_t> members) {
  std::lock_guard lock(mutex_);
  if (made_from_.size() < kFirstMadeComm) made_from_.resize(kFirstMadeComm, 0);
  if (parent >= made_from_.size()) throw std::out_of_range("no communicator " + std::to_string(parent));
  communicators_.push_back({parent, made_from_[parent]++, std::move(members)});
  made_from_.push_back(0);
  return static_cast<std::uint32_t>(communicators_.size() - 1 + kFirstMadeComm);
}

void TraceWriter::add_clock_offset(ClockOffset offset) {
  std::lock_guard lock(mutex_);
  offsets_.push_back(offset);
}

std::uint64_t TraceWriter::flushes() const {
  std::lock_guard lock(mutex_);
  return flushes_;
}

void TraceWriter::flush_begin(std::uint64_t location) {
  ThreadTrace* t = nullptr;
  {
    std::lock_guard lock(mutex_);
    for (auto& l : locations_)
      if (l->location_ == location) t = l.get();
    ++flushes_;
  }
  if (!t || flush_region_ == kNoFlushRegion) return;
  t->flushing_ = true;  // the flush's own enter and leave are no events of the trace
  t->recorder_->enter(flush_region_, true, now());
}

std::uint64_t TraceWriter::flush_end(std::uint64_t location) {
  const auto end = now();
  ThreadTrace* t = nullptr;
  {
    std::lock_guard lock(mutex_);
    for (auto& l : locations_)
      if (l->location_ == location) t = l.get();
  }
  if (!t) return static_cast<std::uint64_t>(end);
  if (t->flushing_) t->recorder_->exit(end), t->flushing_ = false;
  return static_cast<std::uint64_t>(t->stamp(end));
}

void* TraceWriter::allocate(void** per_buffer, std::uint64_t size, bool events) {
  if (!*per_buffer) *per_buffer = new Chunks;
  auto* c = static_cast<Chunks*>(*per_buffer);
  // An event buffer holds at most chunks_ chunks: then libotf2 flushes it and starts again.
  if (events && c->chunks.size() >= chunks_) return nullptr;
  void* chunk = std::malloc(size);
  if (chunk) c->chunks.push_back(chunk);
  return chunk;
}

void TraceWriter::free_all(void** per_buffer) {
  if (!*per_buffer) return;
  auto* c = static_cast<Chunks*>(*per_buffer);
  for (void* chunk : c->chunks) std::free(chunk);
  delete c;
  *per_buffer = nullptr;
}

TraceDefinitions TraceWriter::close(const Recorder& recorder, const std::string& host, const std::string& process) {
  // The recorder's regions before this writer's lock: Recorder::add_thread holds the recorder's
  // lock while it takes this one, so taking them the other way round could deadlock.
  auto regions = recorder.regions();
  std::lock_guard lock(mutex_);
  if (closed_) throw std::logic_error("the trace is closed already");
  TraceDefinitions d;
  d.rank = rank_, d.host = host, d.process = process, d.world_size = world_size_;
  d.regions = std::move(regions);
  d.communicators = communicators_;
  d.offsets = offsets_;
  d.first = first_ == UINT64_MAX ? static_cast<std::uint64_t>(now()) : first_;
  d.ticks_per_second = 1.0 / seconds_per_tick();
  d.chunk_size = chunk_size_;
  d.threads = threads_;
  std::uint64_t last = d.first;
  for (std::size_t i = 0; i < locations_.size(); ++i) {
    auto& l = *locations_[i];
    std::uint64_t events = 0;
    check(OTF2_EvtWriter_GetNumberOfEvents(l.writer_, &events), "event count");
    last = std::max<std::uint64_t>(last, l.last_);
    check(OTF2_Archive_CloseEvtWriter(archive_, l.writer_), "close an event writer");
    l.writer_ = nullptr;
    d.locations.push_back({l.location_, l.recorder_->name(), events});
  }
  d.last = last;
  closed_ = true;
  check(OTF2_Archive_CloseEvtFiles(archive_), "close the event files");
  return d;  // the archive stays open for the local definitions (finish)
}

namespace {
void write_local_definitions(OTF2_DefWriter* w, const std::vector<std::uint32_t>& regions,
                             const std::vector<std::uint32_t>& comms, const std::vector<ClockOffset>& offsets);
}  // namespace

void TraceWriter::finish(const std::vector<std::uint32_t>& regions, const std::vector<std::uint32_t>& comms) {
  std::lock_guard lock(mutex_);
  if (!closed_ || !archive_) throw std::logic_error("finish a trace after close, once");
  auto* archive = archive_;
  archive_ = nullptr;  // closed below whatever happens
  std::unique_ptr<OTF2_Archive, void (*)(OTF2_Archive*)> owned(archive, [](OTF2_Archive* a) { OTF2_Archive_Close(a); });
  check(OTF2_Archive_OpenDefFiles(archive), "definition files");
  for (const auto& l : locations_) {
    auto* w = OTF2_Archive_GetDefWriter(archive, l->location_);
    if (!w) throw std::runtime_error("writing the trace: no definition writer");
    write_local_definitions(w, regions, comms, offsets_);
    check(OTF2_Archive_CloseDefWriter(archive, w), "close local definitions");
  }
  check(OTF2_Archive_CloseDefFiles(archive), "close the definition files");
  owned.release();
  check(OTF2_Archive_Close(archive), "close the archive");
}

// ---------------------------------------------------------------------------------------------
// Definitions as bytes: little-endian integers, strings as length + bytes.

namespace {

struct Out {
  std::string s;
  template <class T>
  void put(T v) {
    s.append(reinterpret_cast<const char*>(&v), sizeof v);
  }
  void text(const std::string& t) {
    put<std::uint32_t>(static_cast<std::uint32_t>(t.size()));
    s += t;
  }
};

struct In {
  const std::string& s;
  std::size_t at = 0;
  template <class T>
  T get() {
    need(sizeof(T));
    T v;
    std::memcpy(&v, s.data() + at, sizeof v);
    at += sizeof v;
    return v;
  }
  std::string text() {
    const auto n = get<std::uint32_t>();
    need(n);
    std::string t = s.substr(at, n);
    at += n;
    return t;
  }
  std::uint32_t count(std::size_t min_bytes_each) {  // a count that the rest of the bytes can hold
    const auto n = get<std::uint32_t>();
    if (min_bytes_each && n > (s.size() - at) / min_bytes_each) fail("a count larger than its bytes");
    return n;
  }
  void need(std::size_t n) {
    if (n > s.size() - at) fail("ends early");
  }
  [[noreturn]] void fail(const std::string& why) { throw FormatError("", "trace definitions", at, why); }
};

constexpr std::uint32_t kMagic = 0x43535444;  // "DTSC"

}  // namespace

std::string TraceDefinitions::bytes() const {
  Out o;
  o.put(kMagic), o.put(rank), o.text(host), o.text(process), o.put(world_size);
  o.put(first), o.put(last), o.put(ticks_per_second), o.put(chunk_size), o.put<std::uint8_t>(threads);
  o.put<std::uint32_t>(static_cast<std::uint32_t>(regions.size()));
  for (const auto& r : regions) {
    o.text(r.name), o.text(r.file), o.text(r.paradigm), o.text(r.role), o.put(r.line);
    o.put<std::uint8_t>(r.recorded);
  }
  o.put<std::uint32_t>(static_cast<std::uint32_t>(locations.size()));
  for (const auto& l : locations) o.put(l.id), o.text(l.name), o.put(l.events);
  o.put<std::uint32_t>(static_cast<std::uint32_t>(communicators.size()));
  for (const auto& c : communicators) {
    o.put(c.parent), o.put(c.ordinal), o.put<std::uint32_t>(static_cast<std::uint32_t>(c.members.size()));
    for (auto m : c.members) o.put(m);
  }
  o.put<std::uint32_t>(static_cast<std::uint32_t>(offsets.size()));
  for (const auto& c : offsets) o.put(c.time), o.put(c.offset), o.put(c.deviation);
  return o.s;
}

TraceDefinitions TraceDefinitions::from_bytes(const std::string& bytes) {
  In in{bytes};
  if (in.get<std::uint32_t>() != kMagic) in.fail("not cubescale trace definitions");
  TraceDefinitions d;
  d.rank = in.get<std::uint32_t>(), d.host = in.text(), d.process = in.text(), d.world_size = in.get<std::uint32_t>();
  d.first = in.get<std::uint64_t>(), d.last = in.get<std::uint64_t>(), d.ticks_per_second = in.get<double>();
  d.chunk_size = in.get<std::uint64_t>(), d.threads = in.get<std::uint8_t>() != 0;
  for (auto n = in.count(25); n--;) {
    RegionInfo r;
    r.name = in.text(), r.file = in.text(), r.paradigm = in.text(), r.role = in.text();
    r.line = in.get<std::int64_t>(), r.recorded = in.get<std::uint8_t>() != 0;
    d.regions.push_back(std::move(r));
  }
  for (auto n = in.count(20); n--;) {
    TraceDefinitions::Location l;
    l.id = in.get<std::uint64_t>(), l.name = in.text(), l.events = in.get<std::uint64_t>();
    d.locations.push_back(std::move(l));
  }
  for (auto n = in.count(12); n--;) {
    TraceDefinitions::Communicator c;
    c.parent = in.get<std::uint32_t>(), c.ordinal = in.get<std::uint32_t>();
    for (auto m = in.count(4); m--;) c.members.push_back(in.get<std::uint32_t>());
    d.communicators.push_back(std::move(c));
  }
  for (auto n = in.count(24); n--;) {
    ClockOffset c;
    c.time = in.get<std::uint64_t>(), c.offset = in.get<std::int64_t>(), c.deviation = in.get<double>();
    d.offsets.push_back(c);
  }
  if (in.at != bytes.size()) in.fail("extra bytes");
  return d;
}

// ---------------------------------------------------------------------------------------------
// Rank 0: unification and the archive's definitions.

namespace {

OTF2_RegionRole region_role(const std::string& role) {
  static const std::map<std::string, OTF2_RegionRole> roles = {
      {"function", OTF2_REGION_ROLE_FUNCTION},           {"point2point", OTF2_REGION_ROLE_POINT2POINT},
      {"barrier", OTF2_REGION_ROLE_BARRIER},             {"one2all", OTF2_REGION_ROLE_COLL_ONE2ALL},
      {"all2one", OTF2_REGION_ROLE_COLL_ALL2ONE},        {"all2all", OTF2_REGION_ROLE_COLL_ALL2ALL},
      {"other collective", OTF2_REGION_ROLE_COLL_OTHER}, {"artificial", OTF2_REGION_ROLE_ARTIFICIAL},
      {"file io", OTF2_REGION_ROLE_FILE_IO},             {"loop", OTF2_REGION_ROLE_LOOP},
      {"thread create", OTF2_REGION_ROLE_THREAD_CREATE}, {"thread wait", OTF2_REGION_ROLE_THREAD_WAIT},
  };
  auto it = roles.find(role);
  return it == roles.end() ? OTF2_RegionRole(OTF2_REGION_ROLE_FUNCTION) : it->second;
}

OTF2_Paradigm region_paradigm(const std::string& paradigm) {
  if (paradigm == "mpi") return OTF2_PARADIGM_MPI;
  if (paradigm == "measurement") return OTF2_PARADIGM_MEASUREMENT_SYSTEM;
  if (paradigm == "pthread") return OTF2_PARADIGM_PTHREAD;
  if (paradigm == "python") return OTF2_PARADIGM_COMPILER;  // every function, as compiler instrumentation
  return OTF2_PARADIGM_USER;
}

// Strings of the global definitions, each written once.
struct Strings {
  std::vector<std::string> list;
  std::unordered_map<std::string, std::uint32_t> index;
  std::uint32_t operator()(const std::string& s) {
    auto [it, fresh] = index.emplace(s, static_cast<std::uint32_t>(list.size()));
    if (fresh) list.push_back(s);
    return it->second;
  }
};

// The thread teams, as Score-P defines its pthread communicators: one group of every location of
// those ranks (paradigm pthread), per rank a group of its locations' positions in that one, and
// a communicator of that group. Global ids after the MPI communicators' (`made` of them), by
// rank (2 + made + r), so that a rank knows its team's id from `made` alone.
void write_thread_teams(OTF2_GlobalDefWriter* g, const std::vector<TraceDefinitions>& ranks,
                        const std::vector<std::size_t>& teams, std::uint32_t made, Strings& strings) {
  if (teams.empty()) return;
  std::vector<std::uint64_t> locations;
  std::vector<std::vector<std::uint64_t>> positions;
  for (auto r : teams) {
    positions.emplace_back();
    for (const auto& l : ranks[r].locations) positions.back().push_back(locations.size()), locations.push_back(l.id);
  }
  const std::uint32_t group = 3 + made;
  check(OTF2_GlobalDefWriter_WriteGroup(g, group, strings(""), OTF2_GROUP_TYPE_COMM_LOCATIONS, OTF2_PARADIGM_PTHREAD,
                                        OTF2_GROUP_FLAG_NONE, locations.size(), locations.data()),
        "thread locations");
  for (std::uint32_t k = 0; k < teams.size(); ++k) {
    const auto r = static_cast<std::uint32_t>(teams[k]);  // ids by rank: each rank knows its own
    check(OTF2_GlobalDefWriter_WriteGroup(g, group + 1 + r, strings(""), OTF2_GROUP_TYPE_COMM_GROUP,
                                          OTF2_PARADIGM_PTHREAD, OTF2_GROUP_FLAG_NONE, positions[k].size(),
                                          positions[k].data()),
          "thread team group");
    check(OTF2_GlobalDefWriter_WriteComm(g, made + 2 + r, strings("Threads of " + ranks[r].process), group + 1 + r,
                                         OTF2_UNDEFINED_COMM, OTF2_COMM_FLAG_NONE),
          "thread team");
  }
}

}  // namespace

namespace {

using RegionKey = std::tuple<std::string, std::string, std::int64_t, std::string, std::string>;
using CommKey = std::tuple<std::uint32_t, std::uint32_t, std::vector<std::uint32_t>>;
constexpr std::uint32_t kUnmapped = 0xffffffffu;  // a region the filter left out; the thread team

// Unified definitions of some ranks: the regions the filter kept and the communicators they
// made, each once. A communicator is referred to by its position in comm refs: 0 MPI_COMM_WORLD,
// 1 MPI_COMM_SELF, 2 + i the i-th made one (at the root these refs are the global ids).
struct DefinitionSet {
  std::vector<RegionInfo> regions;
  std::vector<TraceDefinitions::Communicator> comms;  // parent: a comm ref of this set
  std::map<RegionKey, std::uint32_t> region_index;
  std::map<CommKey, std::uint32_t> comm_index;

  std::uint32_t region(const RegionInfo& info) {
    auto [it, fresh] = region_index.emplace(RegionKey{info.name, info.file, info.line, info.paradigm, info.role},
                                            static_cast<std::uint32_t>(regions.size()));
    if (fresh) regions.push_back(info), regions.back().recorded = true;
    return it->second;
  }
  std::uint32_t comm(std::uint32_t parent, const TraceDefinitions::Communicator& c) {
    auto [it, fresh] = comm_index.emplace(CommKey{parent, c.ordinal, c.members},
                                          static_cast<std::uint32_t>(comms.size() + 2));
    if (fresh) comms.push_back({parent, c.ordinal, c.members});
    return it->second;
  }
  // A rank's own definitions (local ids: 0 world, 1 self, kThreadTeam, made ones from
  // kFirstMadeComm): maps of its region ids and communicator ids into this set.
  std::pair<std::vector<std::uint32_t>, std::vector<std::uint32_t>> add_local(const TraceDefinitions& d) {
    std::vector<std::uint32_t> regions_map, comms_map = {0, 1, kUnmapped};
    for (const auto& info : d.regions) regions_map.push_back(info.recorded ? region(info) : kUnmapped);
    for (const auto& c : d.communicators) {
      if (c.parent >= comms_map.size() || c.parent == kThreadTeam)
        throw FormatError("", "trace definitions", 0, "a communicator before its parent");
      comms_map.push_back(comm(comms_map[c.parent], c));
    }
    return {std::move(regions_map), std::move(comms_map)};
  }
  // Another set (a subtree's): maps of its regions and comm refs into this one.
  std::pair<std::vector<std::uint32_t>, std::vector<std::uint32_t>> add_set(const TraceDefinitions& d) {
    std::vector<std::uint32_t> regions_map, comms_map = {0, 1};
    for (const auto& info : d.regions) regions_map.push_back(region(info));
    for (const auto& c : d.communicators) {
      if (c.parent >= comms_map.size()) throw FormatError("", "trace definitions", 0, "a communicator before its parent");
      comms_map.push_back(comm(comms_map[c.parent], c));
    }
    return {std::move(regions_map), std::move(comms_map)};
  }
  std::string bytes() const {
    TraceDefinitions d;
    d.regions = regions, d.communicators = comms;
    return d.bytes();
  }
};

// A rank's final maps: local ids to global ones, from its maps into a set and the set's maps
// into the global definitions (`made`: the number of made communicators in them). The thread
// team of rank r is communicator 2 + made + r.
void globalize(std::vector<std::uint32_t>& regions, std::vector<std::uint32_t>& comms,
               const std::vector<std::uint32_t>& global_regions, const std::vector<std::uint32_t>& global_comms,
               std::uint32_t made, std::uint32_t rank) {
  for (auto& r : regions) r = r == kUnmapped ? 0 : global_regions.at(r);  // no events: any id
  for (std::size_t c = 0; c < comms.size(); ++c)
    comms[c] = c == kThreadTeam ? 2 + made + rank : global_comms.at(comms[c]);
}

void write_local_definitions(OTF2_DefWriter* w, const std::vector<std::uint32_t>& regions,
                             const std::vector<std::uint32_t>& comms, const std::vector<ClockOffset>& offsets) {
  auto put_map = [&](OTF2_MappingType type, const std::vector<std::uint32_t>& map) {
    if (map.empty()) return;
    auto* m = OTF2_IdMap_CreateFromUint32Array(map.size(), map.data(), true);
    if (!m) return;  // the identity: nothing to map
    const auto rc = OTF2_DefWriter_WriteMappingTable(w, type, m);
    OTF2_IdMap_Free(m);
    check(rc, "mapping table");
  };
  put_map(OTF2_MAPPING_REGION, regions);
  put_map(OTF2_MAPPING_COMM, comms);
  for (const auto& c : offsets) check(OTF2_DefWriter_WriteClockOffset(w, c.time, c.offset, c.deviation), "clock offset");
}

std::vector<TraceDefinitions> parse_ranks(const std::vector<std::string>& parts) {
  std::vector<TraceDefinitions> ranks;
  for (const auto& p : parts) ranks.push_back(TraceDefinitions::from_bytes(p));
  if (ranks.empty()) throw std::invalid_argument("a trace needs at least one rank");
  for (std::size_t r = 0; r < ranks.size(); ++r)
    if (ranks[r].rank != r) throw FormatError("", "trace definitions", 0, "ranks out of order");
  // libotf2 reads every event file in the chunk size its anchor file names: one for all ranks.
  const auto chunk = ranks[0].chunk_size;
  for (const auto& d : ranks)
    if (d.chunk_size != chunk || chunk < OTF2_CHUNK_SIZE_MIN || chunk > OTF2_CHUNK_SIZE_MAX)
      throw FormatError("", "trace definitions", 0, "the ranks' event chunk sizes differ or are out of range");
  return ranks;
}

OTF2_Archive* open_archive(const std::string& directory, std::uint64_t chunk) {
  auto* archive = OTF2_Archive_Open(directory.c_str(), "traces", OTF2_FILEMODE_WRITE, chunk, OTF2_CHUNK_SIZE_MIN,
                                    OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE);
  if (!archive) throw std::system_error(errno ? errno : EIO, std::generic_category(), directory);
  static const OTF2_FlushCallbacks flush{
      [](void*, OTF2_FileType, OTF2_LocationRef, void*, bool) -> OTF2_FlushType { return OTF2_FLUSH; }, nullptr};
  try {
    check(OTF2_Archive_SetFlushCallbacks(archive, &flush, nullptr), "flush callbacks");
    check(OTF2_Archive_SetSerialCollectiveCallbacks(archive), "collective callbacks");
    check(OTF2_Archive_SetCreator(archive, "cubescale"), "creator");
  } catch (...) {
    OTF2_Archive_Close(archive);
    throw;
  }
  return archive;
}

// The global definitions: clock, system tree, locations, the unified regions and communicators
// (parents as global ids), the thread teams. Returns the number of locations.
std::uint64_t write_global_definitions(OTF2_Archive* archive, const std::vector<TraceDefinitions>& ranks,
                                       const std::vector<RegionInfo>& regions,
                                       const std::vector<TraceDefinitions::Communicator>& comms) {
  Strings strings;
  strings("");
  std::vector<std::size_t> teams;  // ranks with thread events
  for (std::size_t r = 0; r < ranks.size(); ++r)
    if (ranks[r].threads) teams.push_back(r);
  auto* g = OTF2_Archive_GetGlobalDefWriter(archive);
  if (!g) throw std::runtime_error("writing the trace: no global definition writer");
  // The clock: ticks of rank 0's clock; every rank's span moved by its offsets.
  std::uint64_t first = UINT64_MAX, last = 0;
  for (const auto& d : ranks) {
    const std::int64_t shift = d.offsets.empty() ? 0 : d.offsets.front().offset;
    const std::int64_t shift_end = d.offsets.empty() ? 0 : d.offsets.back().offset;
    const auto begin = std::int64_t(d.first) + std::min(shift, shift_end);
    const auto end = std::int64_t(d.last) + std::max(shift, shift_end);
    first = std::min<std::uint64_t>(first, static_cast<std::uint64_t>(begin));
    last = std::max<std::uint64_t>(last, static_cast<std::uint64_t>(end));
  }
  const auto resolution = static_cast<std::uint64_t>(std::llround(ranks[0].ticks_per_second));
  check(OTF2_GlobalDefWriter_WriteClockProperties(g, resolution, first, last - first + 1, OTF2_UNDEFINED_TIMESTAMP),
        "clock properties");
  // Strings first (OTF2 wants a definition before its use): collect every name, then write.
  for (const auto& r : regions) strings(r.name), strings(r.file);
  strings("machine"), strings("node"), strings("MPI_COMM_WORLD"), strings("MPI_COMM_SELF");
  for (const auto& d : ranks) {
    strings(d.host), strings(d.process);
    for (const auto& l : d.locations) strings(l.name);
  }
  for (std::size_t c = 0; c < comms.size(); ++c) strings("Comm " + std::to_string(c + 2));
  for (const auto& d : ranks)
    if (d.threads) strings("Threads of " + d.process);
  for (std::uint32_t s = 0; s < strings.list.size(); ++s)
    check(OTF2_GlobalDefWriter_WriteString(g, s, strings.list[s].c_str()), "string");
  // The system tree as the profile has it: machine > host > process > threads.
  check(OTF2_GlobalDefWriter_WriteSystemTreeNode(g, 0, strings("machine"), strings("machine"),
                                                 OTF2_UNDEFINED_SYSTEM_TREE_NODE),
        "machine");
  std::map<std::string, std::uint32_t> hosts;
  for (const auto& d : ranks)
    if (hosts.emplace(d.host, static_cast<std::uint32_t>(hosts.size() + 1)).second)
      check(OTF2_GlobalDefWriter_WriteSystemTreeNode(g, hosts[d.host], strings(d.host), strings("node"), 0), "host");
  for (const auto& d : ranks)
    check(OTF2_GlobalDefWriter_WriteLocationGroup(g, d.rank, strings(d.process), OTF2_LOCATION_GROUP_TYPE_PROCESS,
                                                  hosts[d.host], OTF2_UNDEFINED_LOCATION_GROUP),
          "location group");
  std::uint64_t locations = 0;
  for (const auto& d : ranks)
    for (const auto& l : d.locations) {
      check(OTF2_GlobalDefWriter_WriteLocation(g, l.id, strings(l.name), OTF2_LOCATION_TYPE_CPU_THREAD, l.events,
                                               d.rank),
            "location");
      ++locations;
    }
  for (std::uint32_t r = 0; r < regions.size(); ++r) {
    const auto& info = regions[r];
    const auto line = info.line < 0 ? 0 : static_cast<std::uint32_t>(info.line);
    check(OTF2_GlobalDefWriter_WriteRegion(g, r, strings(info.name), strings(info.name), strings(""),
                                           region_role(info.role), region_paradigm(info.paradigm),
                                           OTF2_REGION_FLAG_NONE, strings(info.file), line, line),
          "region");
  }
  // MPI: group 0 = each rank's first location (MPI's rank order), groups of world ranks.
  std::vector<std::uint64_t> world(ranks.size()), members(ranks.size());
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    world[r] = ranks[r].locations.empty() ? location_id(std::uint32_t(r), 0) : ranks[r].locations.front().id;
    members[r] = r;
  }
  check(OTF2_GlobalDefWriter_WriteGroup(g, 0, strings(""), OTF2_GROUP_TYPE_COMM_LOCATIONS, OTF2_PARADIGM_MPI,
                                        OTF2_GROUP_FLAG_NONE, world.size(), world.data()),
        "MPI locations");
  check(OTF2_GlobalDefWriter_WriteGroup(g, 1, strings(""), OTF2_GROUP_TYPE_COMM_GROUP, OTF2_PARADIGM_MPI,
                                        OTF2_GROUP_FLAG_NONE, members.size(), members.data()),
        "MPI_COMM_WORLD's group");
  check(OTF2_GlobalDefWriter_WriteGroup(g, 2, strings(""), OTF2_GROUP_TYPE_COMM_SELF, OTF2_PARADIGM_MPI,
                                        OTF2_GROUP_FLAG_NONE, 0, nullptr),
        "MPI_COMM_SELF's group");
  check(OTF2_GlobalDefWriter_WriteComm(g, 0, strings("MPI_COMM_WORLD"), 1, OTF2_UNDEFINED_COMM, OTF2_COMM_FLAG_NONE),
        "MPI_COMM_WORLD");
  check(OTF2_GlobalDefWriter_WriteComm(g, 1, strings("MPI_COMM_SELF"), 2, OTF2_UNDEFINED_COMM, OTF2_COMM_FLAG_NONE),
        "MPI_COMM_SELF");
  for (std::uint32_t c = 0; c < comms.size(); ++c) {
    std::vector<std::uint64_t> m(comms[c].members.begin(), comms[c].members.end());
    check(OTF2_GlobalDefWriter_WriteGroup(g, 3 + c, strings(""), OTF2_GROUP_TYPE_COMM_GROUP, OTF2_PARADIGM_MPI,
                                          OTF2_GROUP_FLAG_NONE, m.size(), m.data()),
          "communicator group");
    check(OTF2_GlobalDefWriter_WriteComm(g, c + 2, strings("Comm " + std::to_string(c + 2)), 3 + c, comms[c].parent,
                                         OTF2_COMM_FLAG_NONE),
          "communicator");
  }
  write_thread_teams(g, ranks, teams, static_cast<std::uint32_t>(comms.size()), strings);
  check(OTF2_Archive_CloseGlobalDefWriter(archive, g), "close the global definitions");
  return locations;
}

}  // namespace

std::uint64_t write_trace_archive(const std::string& directory, const std::vector<std::string>& parts) {
  const auto ranks = parse_ranks(parts);
  DefinitionSet set;  // all ranks at once: the global definitions
  std::vector<std::pair<std::vector<std::uint32_t>, std::vector<std::uint32_t>>> maps;
  for (const auto& d : ranks) maps.push_back(set.add_local(d));
  std::vector<std::uint32_t> identity_regions(set.regions.size()), identity_comms(set.comms.size() + 2);
  for (std::uint32_t i = 0; i < identity_regions.size(); ++i) identity_regions[i] = i;
  for (std::uint32_t i = 0; i < identity_comms.size(); ++i) identity_comms[i] = i;
  const auto made = static_cast<std::uint32_t>(set.comms.size());
  auto* archive = open_archive(directory, ranks[0].chunk_size);
  std::unique_ptr<OTF2_Archive, void (*)(OTF2_Archive*)> owned(archive, [](OTF2_Archive* a) { OTF2_Archive_Close(a); });
  check(OTF2_Archive_OpenDefFiles(archive), "definition files");
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    auto& [regions, comms] = maps[r];
    globalize(regions, comms, identity_regions, identity_comms, made, static_cast<std::uint32_t>(r));
    for (const auto& l : ranks[r].locations) {
      auto* w = OTF2_Archive_GetDefWriter(archive, l.id);
      if (!w) throw std::runtime_error("writing the trace: no definition writer");
      write_local_definitions(w, regions, comms, ranks[r].offsets);
      check(OTF2_Archive_CloseDefWriter(archive, w), "close local definitions");
    }
  }
  check(OTF2_Archive_CloseDefFiles(archive), "close the definition files");
  const auto locations = write_global_definitions(archive, ranks, set.regions, set.comms);
  owned.release();
  check(OTF2_Archive_Close(archive), "close the archive");
  return locations;
}

std::uint64_t write_trace_definitions(const std::string& directory, const std::string& unified,
                                      const std::vector<std::string>& summaries) {
  const auto ranks = parse_ranks(summaries);
  const auto set = TraceDefinitions::from_bytes(unified);
  for (std::size_t c = 0; c < set.communicators.size(); ++c)
    if (set.communicators[c].parent >= c + 2)
      throw FormatError("", "trace definitions", 0, "a communicator before its parent");
  auto* archive = open_archive(directory, ranks[0].chunk_size);
  std::unique_ptr<OTF2_Archive, void (*)(OTF2_Archive*)> owned(archive, [](OTF2_Archive* a) { OTF2_Archive_Close(a); });
  const auto locations = write_global_definitions(archive, ranks, set.regions, set.communicators);
  owned.release();
  check(OTF2_Archive_Close(archive), "close the archive");
  return locations;
}

// ---------------------------------------------------------------------------------------------
// The tree reduction of the definitions (TraceUnifyState).

struct TraceUnifyState::Impl {
  std::uint32_t rank = 0;
  DefinitionSet set;
  std::vector<std::uint32_t> regions, comms;  // local -> set, then (after down) local -> global
  std::vector<std::pair<std::vector<std::uint32_t>, std::vector<std::uint32_t>>> children;  // child set -> set
};

namespace {

std::string maps_bytes(std::uint32_t made, const std::vector<std::uint32_t>& regions,
                       const std::vector<std::uint32_t>& comms) {
  Out o;
  o.put(made), o.put<std::uint32_t>(static_cast<std::uint32_t>(regions.size()));
  for (auto r : regions) o.put(r);
  o.put<std::uint32_t>(static_cast<std::uint32_t>(comms.size()));
  for (auto c : comms) o.put(c);
  return o.s;
}

std::vector<std::uint32_t> compose(const std::vector<std::uint32_t>& outer, const std::vector<std::uint32_t>& inner) {
  std::vector<std::uint32_t> out;
  out.reserve(inner.size());
  for (auto i : inner) out.push_back(outer.at(i));
  return out;
}

}  // namespace

TraceUnifyState::TraceUnifyState(const std::string& local) : impl_(std::make_unique<Impl>()) {
  const auto d = TraceDefinitions::from_bytes(local);
  impl_->rank = d.rank;
  std::tie(impl_->regions, impl_->comms) = impl_->set.add_local(d);
}

TraceUnifyState::~TraceUnifyState() = default;

void TraceUnifyState::absorb(const std::string& child) {
  received_ += child.size();
  impl_->children.push_back(impl_->set.add_set(TraceDefinitions::from_bytes(child)));
}

std::string TraceUnifyState::end_up() const { return impl_->set.bytes(); }

std::vector<std::string> TraceUnifyState::down(const std::string& message) {
  std::uint32_t made = 0;
  std::vector<std::uint32_t> regions, comms;
  if (message.empty()) {  // the root: its set is the global definitions
    made = static_cast<std::uint32_t>(impl_->set.comms.size());
    for (std::uint32_t i = 0; i < impl_->set.regions.size(); ++i) regions.push_back(i);
    for (std::uint32_t i = 0; i < made + 2; ++i) comms.push_back(i);
  } else {
    In in{message};
    made = in.get<std::uint32_t>();
    for (auto n = in.count(4); n--;) regions.push_back(in.get<std::uint32_t>());
    for (auto n = in.count(4); n--;) comms.push_back(in.get<std::uint32_t>());
    if (in.at != message.size()) in.fail("extra bytes");
    received_ += message.size();
  }
  std::vector<std::string> out;
  for (const auto& [child_regions, child_comms] : impl_->children)
    out.push_back(maps_bytes(made, compose(regions, child_regions), compose(comms, child_comms)));
  globalize(impl_->regions, impl_->comms, regions, comms, made, impl_->rank);
  return out;
}

const std::vector<std::uint32_t>& TraceUnifyState::region_map() const { return impl_->regions; }
const std::vector<std::uint32_t>& TraceUnifyState::comm_map() const { return impl_->comms; }

}  // namespace cubescale::measure
