#pragma once
// The process's recorder and the C++ scope API:
//   static const auto solve = cubescale::measure::global().region("solve", __FILE__, __LINE__);
//   { cubescale::measure::Scope scope(solve); ... }        // or CUBESCALE_REGION("solve");
// Each thread gets its recorder on its first event (a lock then, never after). reset() starts
// a new measurement (after every thread has stopped measuring); threads notice by an epoch.
#include <atomic>
#include <memory>
#include <cstdint>
#include <string>

#include "cubescale/measure/recorder.hpp"

namespace cubescale::measure {

Recorder& global();
// Replaces the process's recorder (filter, depth limit); the old one's data is dropped, its
// regions are kept (ids stay valid) and filtered again. With `trace`, the measurement also
// writes every thread's events through it (trace_writer.hpp).
void reset(RegionFilter filter = {}, std::size_t depth_limit = 128, std::shared_ptr<TraceWriter> trace = nullptr);
// This thread's recorder in the current recorder (created on first use; the first thread to
// ask is named "Master thread", later ones "thread <n>" unless named).
ThreadRecorder& this_thread();
// Whether this thread has no recorder in the current measurement yet (this_thread() would make one).
bool this_thread_is_new();
void name_this_thread(std::string name);
// Changes with every reset(): region ids cached elsewhere must be registered again.
std::uint64_t epoch();
// Closes every thread's open frames now (finalization while regions are still open).
void close_all_threads();

class Scope {
 public:
  explicit Scope(RegionId region) : thread_(this_thread()) { enter(thread_, global(), region); }
  ~Scope() { thread_.exit(now()); }
  Scope(const Scope&) = delete;
  Scope& operator=(const Scope&) = delete;

 private:
  ThreadRecorder& thread_;
};

}  // namespace cubescale::measure

#define CUBESCALE_CONCAT2(a, b) a##b
#define CUBESCALE_CONCAT(a, b) CUBESCALE_CONCAT2(a, b)
// Measures the rest of the enclosing block as region `name`.
#define CUBESCALE_REGION(name)                                                                         \
  static const ::cubescale::measure::RegionId CUBESCALE_CONCAT(cubescale_region_, __LINE__) =          \
      ::cubescale::measure::global().region(name, __FILE__, __LINE__);                                 \
  ::cubescale::measure::Scope CUBESCALE_CONCAT(cubescale_scope_, __LINE__)(CUBESCALE_CONCAT(cubescale_region_, __LINE__))
