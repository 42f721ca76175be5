#include "cubescale/stat/record_sizes.hpp"

#include <otf2/OTF2_EventSizeEstimator.h>

#include <limits>
#include <memory>
#include <stdexcept>

namespace cubescale::stat {

namespace {

using Estimator = OTF2_EventSizeEstimator;
using Setter = OTF2_ErrorCode (*)(Estimator*, std::uint32_t);
using Getter = std::size_t (*)(Estimator*);

// The 32-bit setters by OTF2's definition names (Location takes 64 bits, handled apart).
const std::map<std::string, Setter>& setters() {
  static const std::map<std::string, Setter> table = {
      {"String", OTF2_EventSizeEstimator_SetNumberOfStringDefinitions},
      {"Attribute", OTF2_EventSizeEstimator_SetNumberOfAttributeDefinitions},
      {"Region", OTF2_EventSizeEstimator_SetNumberOfRegionDefinitions},
      {"Group", OTF2_EventSizeEstimator_SetNumberOfGroupDefinitions},
      {"Metric", OTF2_EventSizeEstimator_SetNumberOfMetricDefinitions},
      {"Comm", OTF2_EventSizeEstimator_SetNumberOfCommDefinitions},
      {"Parameter", OTF2_EventSizeEstimator_SetNumberOfParameterDefinitions},
      {"RmaWin", OTF2_EventSizeEstimator_SetNumberOfRmaWinDefinitions},
      {"SourceCodeLocation", OTF2_EventSizeEstimator_SetNumberOfSourceCodeLocationDefinitions},
      {"CallingContext", OTF2_EventSizeEstimator_SetNumberOfCallingContextDefinitions},
      {"InterruptGenerator", OTF2_EventSizeEstimator_SetNumberOfInterruptGeneratorDefinitions},
      {"IoFile", OTF2_EventSizeEstimator_SetNumberOfIoFileDefinitions},
      {"IoHandle", OTF2_EventSizeEstimator_SetNumberOfIoHandleDefinitions},
      {"LocationGroup", OTF2_EventSizeEstimator_SetNumberOfLocationGroupDefinitions},
  };
  return table;
}

// The records scorep-score's estimator asks for, whose size depends only on the counts.
const std::map<std::string, Getter>& getters() {
  static const std::map<std::string, Getter> table = {
      {"Timestamp", OTF2_EventSizeEstimator_GetSizeOfTimestamp},
      {"Enter", OTF2_EventSizeEstimator_GetSizeOfEnterEvent},
      {"Leave", OTF2_EventSizeEstimator_GetSizeOfLeaveEvent},
      {"MpiSend", OTF2_EventSizeEstimator_GetSizeOfMpiSendEvent},
      {"MpiIsend", OTF2_EventSizeEstimator_GetSizeOfMpiIsendEvent},
      {"MpiIsendComplete", OTF2_EventSizeEstimator_GetSizeOfMpiIsendCompleteEvent},
      {"MpiIrecvRequest", OTF2_EventSizeEstimator_GetSizeOfMpiIrecvRequestEvent},
      {"MpiRecv", OTF2_EventSizeEstimator_GetSizeOfMpiRecvEvent},
      {"MpiIrecv", OTF2_EventSizeEstimator_GetSizeOfMpiIrecvEvent},
      {"MpiCollectiveBegin", OTF2_EventSizeEstimator_GetSizeOfMpiCollectiveBeginEvent},
      {"MpiCollectiveEnd", OTF2_EventSizeEstimator_GetSizeOfMpiCollectiveEndEvent},
      {"NonBlockingCollectiveRequest", OTF2_EventSizeEstimator_GetSizeOfNonBlockingCollectiveRequestEvent},
      {"NonBlockingCollectiveComplete", OTF2_EventSizeEstimator_GetSizeOfNonBlockingCollectiveCompleteEvent},
      {"ThreadFork", OTF2_EventSizeEstimator_GetSizeOfThreadForkEvent},
      {"ThreadJoin", OTF2_EventSizeEstimator_GetSizeOfThreadJoinEvent},
      {"ThreadTeamBegin", OTF2_EventSizeEstimator_GetSizeOfThreadTeamBeginEvent},
      {"ThreadTeamEnd", OTF2_EventSizeEstimator_GetSizeOfThreadTeamEndEvent},
      {"ThreadAcquireLock", OTF2_EventSizeEstimator_GetSizeOfThreadAcquireLockEvent},
      {"ThreadReleaseLock", OTF2_EventSizeEstimator_GetSizeOfThreadReleaseLockEvent},
      {"ThreadTaskCreate", OTF2_EventSizeEstimator_GetSizeOfThreadTaskCreateEvent},
      {"ThreadTaskSwitch", OTF2_EventSizeEstimator_GetSizeOfThreadTaskSwitchEvent},
      {"ThreadTaskComplete", OTF2_EventSizeEstimator_GetSizeOfThreadTaskCompleteEvent},
      {"ThreadCreate", OTF2_EventSizeEstimator_GetSizeOfThreadCreateEvent},
      {"ThreadBegin", OTF2_EventSizeEstimator_GetSizeOfThreadBeginEvent},
      {"ThreadWait", OTF2_EventSizeEstimator_GetSizeOfThreadWaitEvent},
      {"ThreadEnd", OTF2_EventSizeEstimator_GetSizeOfThreadEndEvent},
      {"ParameterInt", OTF2_EventSizeEstimator_GetSizeOfParameterIntEvent},
      {"ParameterString", OTF2_EventSizeEstimator_GetSizeOfParameterStringEvent},
      {"ProgramEnd", OTF2_EventSizeEstimator_GetSizeOfProgramEndEvent},
      {"BufferFlush", OTF2_EventSizeEstimator_GetSizeOfBufferFlushEvent},
      {"MeasurementOnOff", OTF2_EventSizeEstimator_GetSizeOfMeasurementOnOffEvent},
      {"CallingContextSample", OTF2_EventSizeEstimator_GetSizeOfCallingContextSampleEvent},
  };
  return table;
}

void check(OTF2_ErrorCode status, const std::string& name) {
  if (status != OTF2_SUCCESS) throw std::invalid_argument("OTF2's estimator refused the count of " + name + " definitions");
}

}  // namespace

std::map<std::string, std::uint64_t> otf2_record_sizes(const std::map<std::string, std::uint64_t>& definition_counts,
                                                        std::uint32_t dense_metrics, std::uint32_t program_arguments) {
  std::unique_ptr<Estimator, decltype(&OTF2_EventSizeEstimator_Delete)> estimator(OTF2_EventSizeEstimator_New(),
                                                                                   OTF2_EventSizeEstimator_Delete);
  if (!estimator) throw std::bad_alloc();
  for (const auto& [name, count] : definition_counts) {
    if (name == "Location") {
      check(OTF2_EventSizeEstimator_SetNumberOfLocationDefinitions(estimator.get(), count), name);
      continue;
    }
    const auto setter = setters().find(name);
    if (setter == setters().end()) throw std::invalid_argument("unknown OTF2 definition name '" + name + "'");
    if (count > std::numeric_limits<std::uint32_t>::max())
      throw std::invalid_argument("more " + name + " definitions than OTF2's 32-bit references can name");
    check(setter->second(estimator.get(), static_cast<std::uint32_t>(count)), name);
  }
  std::map<std::string, std::uint64_t> sizes;
  for (const auto& [name, getter] : getters()) sizes[name] = getter(estimator.get());
  sizes["ProgramBegin"] = OTF2_EventSizeEstimator_GetSizeOfProgramBeginEvent(estimator.get(), program_arguments);
  if (dense_metrics > 0) {
    if (dense_metrics > std::numeric_limits<std::uint8_t>::max())
      throw std::invalid_argument("OTF2's metric records hold at most 255 values");
    sizes["Metric"] = OTF2_EventSizeEstimator_GetSizeOfMetricEvent(estimator.get(), static_cast<std::uint8_t>(dense_metrics));
  }
  return sizes;
}

}  // namespace cubescale::stat
