#pragma once
// Bytes of the OTF2 event records that a Score-P trace writes per region visit, as libotf2's
// own estimator (OTF2_EventSizeEstimator, the library behind `otf2-estimator`, which
// scorep-score runs) computes them. OTF2 stores references to definitions as compressed
// integers, so a record's size depends on how many definitions of each kind there are:
// the caller gives those counts by OTF2's definition names ("Region", "Metric", "Comm" ...;
// Score-P writes some as report attributes Score-P::DefinitionCounters::<name>).
#include <cstdint>
#include <map>
#include <string>

namespace cubescale::stat {

// Record name -> bytes, for "Timestamp" and the events scorep-score counts (Enter, Leave,
// MpiSend, MpiRecv, MpiIsend, MpiIsendComplete, MpiIrecvRequest, MpiIrecv, MpiCollectiveBegin,
// MpiCollectiveEnd, NonBlockingCollectiveRequest/Complete, Thread{Fork,Join,TeamBegin,TeamEnd,
// AcquireLock,ReleaseLock,TaskCreate,TaskSwitch,TaskComplete,Create,Begin,Wait,End},
// ParameterInt, ParameterString, ProgramBegin (with `program_arguments`), ProgramEnd,
// BufferFlush, MeasurementOnOff, CallingContextSample, and "Metric" for `dense_metrics` values
// (0: not listed)). Sizes exclude the timestamp. Throws std::invalid_argument for an unknown
// definition name or a count beyond OTF2's 32-bit references.
std::map<std::string, std::uint64_t> otf2_record_sizes(const std::map<std::string, std::uint64_t>& definition_counts,
                                                        std::uint32_t dense_metrics, std::uint32_t program_arguments);

}  // namespace cubescale::stat
