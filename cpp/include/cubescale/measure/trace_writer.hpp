#pragma once
// Event tracing during a measurement (paper 002, section 4): every thread of a process is an
// OTF2 location whose events go through libotf2's event writer into a buffer of a fixed size
// (--trace-buffer). When the buffer is full, libotf2 asks for a flush: the buffer is written to
// the location's event file right away and reused, so memory per thread stays fixed whatever
// the number of events. The flush is recorded as Score-P records it: a visit of the region
// "TRACE BUFFER FLUSH" in the profile, and libotf2's own BufferFlush record in the trace.
//
// Which events: Enter/Leave of exactly the regions the recorder records (its filter and depth
// limit decide, recorder.hpp calls in here), and the MPI events the mpi4py wrappers hand over
// (point-to-point with peer, communicator, tag, bytes and request ids; collectives with root
// and bytes, non-blocking ones as a request and its completion). Timestamps are the recorder's clock ticks (clock.hpp).
//
// Why no libotf2 collective callbacks: a multi-rank archive opened by every rank needs MPI
// inside the core (or Python called back from C). Instead each rank writes its own event files
// through a private one-process archive (`<part>/traces/<location>.evt`), and at the end its
// definitions travel as bytes (TraceDefinitions::bytes) to rank 0, which unifies them (regions
// by name, file, line, paradigm and role; communicators by parent, creation order and members)
// and writes the anchor, the global definitions and every location's local definitions (id
// mapping tables for regions and communicators, the rank's clock offsets) with
// write_trace_archive. The MPI layer then moves the event files next to them.
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "cubescale/measure/recorder.hpp"

struct OTF2_Archive_struct;
struct OTF2_EvtWriter_struct;

namespace cubescale::measure {

class TraceWriter;

// Local communicator ids of every rank: MPI_COMM_WORLD, MPI_COMM_SELF, and the thread team of
// the process (the threads the program starts, paradigm pthread); made communicators follow.
constexpr std::uint32_t kWorldComm = 0, kSelfComm = 1, kThreadTeam = 2, kFirstMadeComm = 3;

// Clock offset of a process against rank 0 at a time of its own clock (ticks): rank 0's
// clock = local + offset (OTF2's ClockOffset).
struct ClockOffset {
  std::uint64_t time = 0;
  std::int64_t offset = 0;
  double deviation = 0.0;
};

// One location's events (one thread). Used only by its own thread.
class ThreadTrace {
 public:
  void enter(RegionId region, std::int64_t now);
  void leave(RegionId region, std::int64_t now);
  // Point-to-point: `peer` is a rank of `comm` (a communicator id of TraceWriter::communicator).
  void send(std::uint32_t peer, std::uint32_t comm, std::uint32_t tag, std::uint64_t bytes, std::int64_t now);
  void receive(std::uint32_t peer, std::uint32_t comm, std::uint32_t tag, std::uint64_t bytes, std::int64_t now);
  void isend(std::uint32_t peer, std::uint32_t comm, std::uint32_t tag, std::uint64_t bytes, std::uint64_t request,
             std::int64_t now);
  void isend_complete(std::uint64_t request, std::int64_t now);
  void irecv_request(std::uint64_t request, std::int64_t now);
  void irecv(std::uint32_t peer, std::uint32_t comm, std::uint32_t tag, std::uint64_t bytes, std::uint64_t request,
             std::int64_t now);
  // A blocking collective: Begin at its start, End with the operation (MPI function name such
  // as "MPI_Allreduce"), root (kNoRoot: none) and bytes at its end.
  static constexpr std::uint32_t kNoRoot = 0xffffffffu;
  void collective_begin(std::int64_t now);
  void collective_end(const std::string& operation, std::uint32_t comm, std::uint32_t root, std::uint64_t sent,
                      std::uint64_t received, std::int64_t now);
  // A non-blocking collective: its request at the call (MPI_Iallreduce), its completion with
  // the operation of its blocking form ("MPI_Allreduce"), root and bytes in Wait or Test.
  void collective_request(std::uint64_t request, std::int64_t now);
  void collective_complete(const std::string& operation, std::uint32_t comm, std::uint32_t root, std::uint64_t sent,
                           std::uint64_t received, std::uint64_t request, std::int64_t now);
  // Threads the program starts, as Score-P records pthreads (its create/wait model): every
  // event on the process's thread team (communicator kThreadTeam); `sequence` pairs the
  // ThreadCreate in the creating thread with the new thread's ThreadBegin, and the new
  // thread's ThreadEnd with the ThreadWait of the thread that joins it.
  void thread_create(std::uint64_t sequence, std::int64_t now);
  void thread_begin(std::uint64_t sequence, std::int64_t now);
  void thread_end(std::uint64_t sequence, std::int64_t now);
  void thread_wait(std::uint64_t sequence, std::int64_t now);
  std::uint64_t location() const { return location_; }

 private:
  friend class TraceWriter;
  TraceWriter* owner_ = nullptr;
  OTF2_EvtWriter_struct* writer_ = nullptr;  // null once closed: later events are dropped
  ThreadRecorder* recorder_ = nullptr;
  std::uint64_t location_ = 0;
  std::int64_t last_ = 0;
  bool flushing_ = false;  // the flush itself enters a region: not an event of the trace
  std::int64_t stamp(std::int64_t now);
};

// What rank 0 needs from a rank to write the archive's definitions.
struct TraceDefinitions {
  struct Location {
    std::uint64_t id = 0;
    std::string name;
    std::uint64_t events = 0;
  };
  struct Communicator {  // a communicator made from `parent` (local ids), its members' world ranks
    std::uint32_t parent = 0, ordinal = 0;
    std::vector<std::uint32_t> members;
  };
  std::uint32_t rank = 0;
  std::string host, process;
  std::vector<RegionInfo> regions;
  std::vector<Location> locations;
  // local ids 3, 4 ... (0 MPI_COMM_WORLD, 1 MPI_COMM_SELF, 2 the thread team: kThreadTeam)
  std::vector<Communicator> communicators;
  std::uint32_t world_size = 1;
  std::vector<ClockOffset> offsets;
  std::uint64_t first = 0, last = 0;  // first and last timestamp of this rank
  double ticks_per_second = 1e9;
  std::uint64_t chunk_size = 0;  // of the event files: the anchor file must say the same
  bool threads = false;  // thread events were written: the archive defines this rank's thread team

  std::string bytes() const;
  // Raises FormatError (member "trace definitions") on bytes that are not such a record.
  static TraceDefinitions from_bytes(const std::string& bytes);
};

// One process's event files and definitions.
class TraceWriter {
 public:
  // Opens a one-process OTF2 archive `directory`/traces (created) for this rank's event files;
  // each location buffers up to `buffer_bytes` (at least libotf2's smallest chunk, 256 KiB).
  TraceWriter(std::string directory, std::uint32_t rank, std::uint64_t buffer_bytes);
  ~TraceWriter();
  TraceWriter(const TraceWriter&) = delete;
  TraceWriter& operator=(const TraceWriter&) = delete;

  // A location for the recorder of a new thread (its index in the process). Thread-safe.
  ThreadTrace* add_location(ThreadRecorder* recorder, std::uint32_t thread);
  // The region that stands for a buffer flush ("TRACE BUFFER FLUSH", registered by the caller).
  void set_flush_region(RegionId region) { flush_region_ = region; }
  // A communicator made from `parent` (kWorldComm, kSelfComm, or an id returned here) with its
  // members' ranks in MPI_COMM_WORLD; returns its local id. Thread-safe.
  std::uint32_t communicator(std::uint32_t parent, std::vector<std::uint32_t> members);
  void set_world_size(std::uint32_t size) { world_size_ = size; }
  void add_clock_offset(ClockOffset offset);
  // Closes every location's event writer (no thread may record any more) and returns this
  // rank's definitions; later events are dropped.
  TraceDefinitions close(const Recorder& recorder, const std::string& host, const std::string& process);
  // After close: every location's local definitions (mapping tables from this rank's region and
  // communicator ids to the global ones, TraceUnifyState's maps; the clock offsets) beside its
  // event file, and the archive closed.
  void finish(const std::vector<std::uint32_t>& regions, const std::vector<std::uint32_t>& comms);
  const std::string& directory() const { return directory_; }
  std::uint64_t buffer_bytes() const { return chunk_size_ * chunks_; }
  std::uint64_t flushes() const;

 private:
  friend class ThreadTrace;
  static constexpr std::uint32_t kNoFlushRegion = 0xffffffffu;
  std::string directory_;
  std::uint32_t rank_;
  std::uint64_t chunk_size_, chunks_;
  OTF2_Archive_struct* archive_ = nullptr;
  mutable std::mutex mutex_;
  std::vector<std::unique_ptr<ThreadTrace>> locations_;
  std::vector<TraceDefinitions::Communicator> communicators_;
  std::vector<std::uint32_t> made_from_;  // per communicator id: communicators made from it so far
  std::vector<ClockOffset> offsets_;
  std::uint32_t world_size_ = 1;
  RegionId flush_region_ = kNoFlushRegion;
  std::uint64_t flushes_ = 0;
  std::uint64_t first_ = UINT64_MAX;
  bool closed_ = false;
  std::atomic<bool> threads_{false};  // a thread event was written

 public:  // libotf2's callbacks (C linkage needs plain functions reaching these)
  void flush_begin(std::uint64_t location);
  std::uint64_t flush_end(std::uint64_t location);
  void* allocate(void** per_buffer, std::uint64_t size, bool events);
  void free_all(void** per_buffer);
};

// Rank 0: the archive `directory`/traces.otf2 with the global definitions of every rank's
// `parts` (TraceDefinitions::bytes, in rank order) and each location's local definitions
// (mapping tables, clock offsets). The ranks' event files go to `directory`/traces/ (moved
// there by the caller). Returns the number of locations.
std::uint64_t write_trace_archive(const std::string& directory, const std::vector<std::string>& parts);

// Rank 0 of the tree reduction: the archive `directory`/traces.otf2 with the global definitions
// of the unified definitions `unified` (the root's TraceUnifyState::end_up) and every rank's
// `summaries` (TraceDefinitions::bytes without regions and communicators, in rank order: its
// host, process, locations, clock). The ranks write their local definitions (finish) and move
// them with their event files to `directory`/traces/. Returns the number of locations.
std::uint64_t write_trace_definitions(const std::string& directory, const std::string& unified,
                                      const std::vector<std::string>& summaries);

// The definitions of a trace reduced along a tree, as the profile's unification does: each rank
// starts from its own definitions (close's bytes), absorbs its children's unified definitions
// (end_up's bytes, in rank order) and sends its own up; the root's are the global definitions.
// Down the tree each rank gets the maps of its set into the global one (down: "" at the root),
// hands its children theirs, and keeps its own ids' global ones (region_map, comm_map).
class TraceUnifyState {
 public:
  explicit TraceUnifyState(const std::string& local_definitions);
  ~TraceUnifyState();
  void absorb(const std::string& child);
  std::string end_up() const;
  std::vector<std::string> down(const std::string& message);
  const std::vector<std::uint32_t>& region_map() const;
  const std::vector<std::uint32_t>& comm_map() const;
  std::uint64_t bytes_received() const { return received_; }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::uint64_t received_ = 0;
};

// The OTF2 collective operation of an MPI function name ("MPI_Allreduce"); -1 if none.
int collective_operation(const std::string& mpi_function);

}  // namespace cubescale::measure
