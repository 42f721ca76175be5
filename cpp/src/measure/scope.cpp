#include "cubescale/measure/scope.hpp"

#include <cstdio>
#include <exception>
#include <memory>
#include <mutex>

#include "cubescale/measure/c_api.h"
#include "cubescale/measure/mismatch_warning.hpp"
#include "cubescale/measure/process_report.hpp"

namespace cubescale::measure {

namespace {

std::mutex reset_mutex;
std::unique_ptr<Recorder> current = std::make_unique<Recorder>();
std::atomic<std::uint64_t> epoch_counter{1};

struct ThreadSlot {
  std::uint64_t epoch = 0;
  ThreadRecorder* recorder = nullptr;
};
thread_local ThreadSlot slot;

}  // namespace

Recorder& global() { return *current; }

void reset(RegionFilter filter, std::size_t depth_limit, std::shared_ptr<TraceWriter> trace) {
  std::lock_guard lock(reset_mutex);
  // The regions carry over (their ids stay valid); threads and values start afresh.
  current = std::make_unique<Recorder>(std::move(filter), depth_limit, *current);
  if (trace) current->set_trace(std::move(trace));
  epoch_counter.fetch_add(1);
}

ThreadRecorder& this_thread() {
  const auto now = epoch_counter.load(std::memory_order_relaxed);
  if (slot.epoch != now || !slot.recorder) {
    auto& r = global();
    const auto n = r.thread_count();
    slot.recorder = r.add_thread(n == 0 ? "Master thread" : "thread " + std::to_string(n));
    slot.epoch = now;
  }
  return *slot.recorder;
}

bool this_thread_is_new() { return slot.epoch != epoch_counter.load(std::memory_order_relaxed) || !slot.recorder; }

void name_this_thread(std::string name) { this_thread().rename(std::move(name)); }

std::uint64_t epoch() { return epoch_counter.load(std::memory_order_relaxed); }

void close_all_threads() { global().close_all_threads(now()); }

}  // namespace cubescale::measure

using namespace cubescale::measure;

extern "C" uint32_t cubescale_region(const char* name, const char* file, int64_t line) {
  return global().region(name ? name : "", file ? file : "", line);
}
extern "C" void cubescale_enter(uint32_t region) { enter(this_thread(), global(), region); }
extern "C" void cubescale_exit(void) { this_thread().exit(now()); }
extern "C" void cubescale_bytes(uint64_t sent, uint64_t received) { this_thread().add_bytes(sent, received); }
extern "C" uint32_t cubescale_counter(const char* name, const char* unit) {
  return global().counter(name ? name : "", unit ? unit : "");
}
extern "C" void cubescale_add(uint32_t counter, double value) { this_thread().add_counter(counter, value); }
extern "C" int cubescale_write(const char* path, const char* process) {
  if (!path || !*path) {  // else the OS's "No such file or directory" after an empty name
    std::fputs("cubescale_write: no output path given\n", stderr);
    return -1;
  }
  try {
    write_process_report(global(), path, "", process ? process : "Process 0");
    // After the report: the line says what it lacks, once, where Score-P would say it.
    if (const auto warning = mismatch_warning(global()); !warning.empty())
      std::fprintf(stderr, "cubescale_write: warning: %s\n", warning.c_str());
    return 0;
  } catch (const std::exception& e) {  // C callers get a status, never an exception
    std::fprintf(stderr, "cubescale_write: %s\n", e.what());
    return -1;
  }
}
