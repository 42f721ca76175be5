#pragma once
// The events of an OTF2 trace as the reader streams them: one small struct per event, handed
// to an EventSink one location after another (each location's events in recorded order).
// A sink sees every kind of event OTF2 3.0 defines; the fields a kind does not use keep their
// defaults. Nothing is buffered between events: a sink keeps what it needs (a call stack,
// counters, columns) and nothing else.
#include <cstdint>
#include <string_view>

#include "cubescale/trace/definitions.hpp"

namespace cubescale::trace {

// Every OTF2 3.0 event record, in the order of OTF2's event reader callbacks. X(name): the
// reader's callback setter is OTF2_EvtReaderCallbacks_Set<name>Callback; the kind's display
// name is otf2-print's: <name> in upper snake case (MpiIsend -> MPI_ISEND) but for three whose
// callbacks are named otherwise (ParameterInt -> PARAMETER_INT64, ParameterUnsignedInt ->
// PARAMETER_UINT64, IoChangeStatusFlags -> IO_CHANGE_FLAGS; reader.cpp event_type_names).
#define CUBESCALE_TRACE_EVENT_TYPES(X)                                                              \
  X(BufferFlush) X(MeasurementOnOff) X(Enter) X(Leave) X(MpiSend) X(MpiIsend) X(MpiIsendComplete)   \
  X(MpiIrecvRequest) X(MpiRecv) X(MpiIrecv) X(MpiRequestTest) X(MpiRequestCancelled)                \
  X(MpiCollectiveBegin) X(MpiCollectiveEnd) X(OmpFork) X(OmpJoin) X(OmpAcquireLock)                 \
  X(OmpReleaseLock) X(OmpTaskCreate) X(OmpTaskSwitch) X(OmpTaskComplete) X(Metric)                  \
  X(ParameterString) X(ParameterInt) X(ParameterUnsignedInt) X(RmaWinCreate) X(RmaWinDestroy)       \
  X(RmaCollectiveBegin) X(RmaCollectiveEnd) X(RmaGroupSync) X(RmaRequestLock) X(RmaAcquireLock)     \
  X(RmaTryLock) X(RmaReleaseLock) X(RmaSync) X(RmaWaitChange) X(RmaPut) X(RmaGet) X(RmaAtomic)      \
  X(RmaOpCompleteBlocking) X(RmaOpCompleteNonBlocking) X(RmaOpTest) X(RmaOpCompleteRemote)          \
  X(ThreadFork) X(ThreadJoin) X(ThreadTeamBegin) X(ThreadTeamEnd) X(ThreadAcquireLock)              \
  X(ThreadReleaseLock) X(ThreadTaskCreate) X(ThreadTaskSwitch) X(ThreadTaskComplete)                \
  X(ThreadCreate) X(ThreadBegin) X(ThreadWait) X(ThreadEnd) X(CallingContextEnter)                  \
  X(CallingContextLeave) X(CallingContextSample) X(IoCreateHandle) X(IoDestroyHandle)               \
  X(IoDuplicateHandle) X(IoSeek) X(IoChangeStatusFlags) X(IoDeleteFile) X(IoOperationBegin)         \
  X(IoOperationTest) X(IoOperationIssued) X(IoOperationComplete) X(IoOperationCancelled)            \
  X(IoAcquireLock) X(IoReleaseLock) X(IoTryLock) X(ProgramBegin) X(ProgramEnd)                      \
  X(NonBlockingCollectiveRequest) X(NonBlockingCollectiveComplete) X(CommCreate) X(CommDestroy)

enum class EventType : std::uint8_t {
#define CUBESCALE_TRACE_ENUM(name) name,
  CUBESCALE_TRACE_EVENT_TYPES(CUBESCALE_TRACE_ENUM)
#undef CUBESCALE_TRACE_ENUM
};
inline constexpr int kEventTypeCount = 0
#define CUBESCALE_TRACE_COUNT(name) +1
    CUBESCALE_TRACE_EVENT_TYPES(CUBESCALE_TRACE_COUNT)
#undef CUBESCALE_TRACE_COUNT
    ;

// "ENTER", "MPI_ISEND", ... (otf2-print's names).
std::string_view event_type_name(EventType type);

// One metric value as OTF2 stores it: its type says which member is meaningful.
union MetricValue {
  std::int64_t signed_int;
  std::uint64_t unsigned_int;
  double floating_point;
};
enum class ValueType : std::uint8_t { Int64, UInt64, Double, Other };

struct Event {
  EventType type = EventType::Enter;
  std::uint32_t location = kNone;  // dense index into Definitions::locations
  std::uint64_t time = 0;          // ticks (Definitions::clock)
  std::uint64_t position = 0;      // the event's number in its location's stream (from 1)
  // Enter/Leave: region index; CallingContext*: calling context index; ParameterX: parameter
  // index; ThreadFork/OmpFork: requested threads.
  std::uint32_t region = kNone;
  // MPI point to point: the peer rank; collectives (MPI, RMA): the root; RMA: remote rank;
  // ThreadTaskCreate/Switch/Complete: creating thread; locks (Thread/OmpAcquireLock,
  // ...ReleaseLock): the lock's paradigm (OTF2_Paradigm: OpenMP, POSIX threads ...).
  std::uint32_t partner = kNone;
  std::uint32_t communicator = kNone;  // index (MPI, thread teams); RMA window id
  // MPI point to point: message tag; collectives: the operation (OTF2_CollectiveOp); locks
  // (Thread/OmpAcquireLock, ...ReleaseLock): the acquisition order.
  std::uint32_t tag = kNone;
  std::uint64_t bytes = 0;           // sent: message length, collective bytes sent, RMA bytes (atomics: sent)
  std::uint64_t bytes_received = 0;  // collectives (MPI, RMA), RMA atomics
  std::uint64_t request = 0;  // MPI request id, RMA matching id, task id, int parameter value, lock id
  // Metric events: the metric (class or instance) index and its values.
  std::uint32_t metric = kNone;
  std::uint8_t metric_count = 0;
  const std::uint8_t* metric_types = nullptr;  // OTF2_Type per value
  const MetricValue* metric_values = nullptr;
  // Enter in an OMPT-based trace: its OMPT_PARALLEL_REGION_ID attribute (Score-P's OMPT adapter
  // writes it at a parallel region's enter, the new region's, and at an implicit task's, the
  // region the task belongs to; 0: none). Which team a worker thread starts in.
  std::uint64_t parallel_region = 0;
};

// PROGRAM_BEGIN and PROGRAM_END of a trace that defines the program's region (Score-P 7 and
// later; the reader then sets their `region`, definitions.hpp program_region) are that region's
// Enter and Leave to whatever builds call paths: the program is the root call path, with `main`
// below it and the time outside `main` its own, as in Score-P's profile and Scalasca's reports.
// `opens_or_closes_program` tells such an event; `as_region_event` returns `e`, or such an event
// as an Enter or Leave in `scratch`.
inline bool opens_or_closes_program(const Event& e) {
  return (e.type == EventType::ProgramBegin || e.type == EventType::ProgramEnd) && e.region != kNone;
}
inline const Event& as_region_event(const Event& e, Event& scratch) {
  if (!opens_or_closes_program(e)) return e;
  scratch = e;
  scratch.type = e.type == EventType::ProgramBegin ? EventType::Enter : EventType::Leave;
  return scratch;
}

// OpenMP tasks (ThreadTaskCreate/Switch/Complete): a task is named by its team, creating thread
// and generation number; generation 0 is a thread's implicit task (Score-P numbers explicit
// tasks from 1; OMPT traces number them per parallel region, so a nested region's tasks may
// repeat an outer one's creator and generation in another team). Score-P keeps a call stack per
// task: after a ThreadTaskSwitch the location's Enter and Leave events are the new current
// task's, and after a ThreadTaskComplete its implicit task's until the next switch. `task_key`
// is 0 for the implicit task, otherwise (creator << 32 | generation) mixed with the team (a
// collision of two tasks' keys would need a hostile trace, and only misplaces call paths).
inline std::uint64_t task_key(const Event& e) {
  if (e.request == 0) return 0;
  const auto key = (std::uint64_t(e.partner) << 32) | (e.request & 0xffffffffu);
  const auto mixed = key ^ ((std::uint64_t(e.communicator) + 1) * 0x9e3779b97f4a7c15ull);
  return mixed == 0 ? 1 : mixed;
}

// The task current after a ThreadTaskSwitch (the new one) or a ThreadTaskComplete (the
// implicit task where the current one completed) while `current` ran; `current` otherwise.
inline std::uint64_t task_after(const Event& e, std::uint64_t current) {
  if (e.type == EventType::ThreadTaskSwitch) return task_key(e);
  if (e.type == EventType::ThreadTaskComplete && task_key(e) == current) return 0;
  return current;
}

// What a metric value is, from its OTF2_Type.
ValueType value_type(std::uint8_t otf2_type);
double as_double(std::uint8_t otf2_type, MetricValue v);

class EventSink {
 public:
  virtual ~EventSink() = default;
  // Events that Score-P's profile (and Scalasca's reader) replay as region visits also come as
  // Enter and Leave events, beside the events as recorded (docs/trace.md):
  //  - calling contexts (Score-P's unwinding and sampling: CallingContextEnter/Sample with an
  //    unwind distance, CallingContextLeave): the frames they close and open, "Calling
  //    contexts"; an Enter or Sample's after them, a Leave's before;
  //  - MEASUREMENT_ON_OFF: a visit of the trace's "MEASUREMENT OFF" region from OFF to ON;
  //  - BUFFER_FLUSH: a visit of its "TRACE BUFFER FLUSH" region (after the event the flush
  //    was recorded before, until its stop time), "Measurement off and buffer flushes".
  // False: only the events as recorded.
  virtual bool replayed_frames() const { return true; }
  virtual void begin_location(std::uint32_t location) { (void)location; }
  virtual void event(const Event& e) = 0;
  virtual void end_location(std::uint32_t location) { (void)location; }
};

}  // namespace cubescale::trace
