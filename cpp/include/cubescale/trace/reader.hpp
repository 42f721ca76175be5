#pragma once
// Reading OTF2 traces (Score-P's trace format) over Debian's libotf2, streaming.
//
// Opening reads the anchor file and the global definitions only. read() then streams the
// events of any subset of locations through an EventSink, one location after another, with
// OTF2's own chunk buffers as the only memory: a rank of an mpirun job reads its share of
// locations, a notebook one thread, and nobody buffers a whole trace. Local definition files
// (mapping tables, clock offsets) are read for the selected locations only.
//
// Broken input (no anchor, missing or truncated definition and event files, references to
// undefined ids) raises cubescale::FormatError naming the file, the member (the archive's
// file that was being read) and, for events, the event's position in its location stream.
// OTF2's own error printing is silenced; its message becomes part of the FormatError.
#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "cubescale/trace/definitions.hpp"
#include "cubescale/trace/events.hpp"

namespace cubescale::trace {

class Trace {
 public:
  // Opens `anchor` (the .otf2 file) and reads the global definitions.
  explicit Trace(std::string anchor);

  const std::string& path() const { return path_; }
  const Definitions& definitions() const { return defs_; }
  std::vector<std::uint32_t> all_locations() const;

  // Streams the events of `locations` (dense indices, in the given order) to `sink`.
  // Exceptions thrown by the sink stop the reading and propagate.
  void read(const std::vector<std::uint32_t>& locations, EventSink& sink) const;

  // The archive member holding a location's events: "<archive>/<id>.evt".
  std::string event_member(std::uint32_t location) const;

  // The number of events a location's definition announces (0: not announced), checked
  // against what its event file can hold (most_records): a FormatError naming the file when
  // it cannot. For sinks that reserve memory for that many (read() itself only stops one
  // event past the announced number).
  std::uint64_t announced_events(std::uint32_t location) const;

  // The same reading with callbacks that do nothing for every event kind: the limit a reader
  // over libotf2 can reach (benchmarks). Returns the number of events read.
  std::uint64_t read_with_empty_callbacks(const std::vector<std::uint32_t>& locations) const;

  // The events every pass over this trace has read so far, on any thread (a progress line polls
  // it while an analysis runs): counted per batch of kRecordBatch events.
  std::uint64_t events_read() const { return events_read_.load(std::memory_order_relaxed); }

 private:
  // Selects the locations, reads their local definitions, streams their events through
  // `callbacks` (OTF2_EvtReaderCallbacks*) with `context` (the sink's EvtContext, or null).
  std::uint64_t stream(const std::vector<std::uint32_t>& locations, void* callbacks, void* context) const;
  // The most records an archive member ("<archive>.def", "<archive>/<id>.evt") can hold: one
  // per byte, times zlib's largest ratio (1032:1) in a compressed archive; the largest count
  // when unknown (substrates without a file per member).
  std::uint64_t most_records(const std::string& member) const;
  // Records read per call into libotf2 between checks of a member's limit.
  static constexpr std::uint64_t kRecordBatch = 1 << 16;

  std::string path_, archive_;
  bool compressed_ = false;
  bool newer_writer_ = false;  // the trace's OTF2 version (major.minor) is newer than libotf2's
  Definitions defs_;
  mutable std::atomic<std::uint64_t> events_read_{0};
};

// Counts of every event type per location ([location][EventType]): the cheapest full pass,
// the reference the tests compare with otf2-print, and a summary for `cubescale info`. With
// `visits` (sized to the regions), also the Enter and ProgramBegin events per region, in the
// same pass.
std::vector<std::vector<std::uint64_t>> count_events(const Trace& trace, const std::vector<std::uint32_t>& locations,
                                                     std::vector<std::uint64_t>* visits = nullptr);

}  // namespace cubescale::trace
