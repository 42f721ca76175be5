#pragma once
// Trace -> call-path profile (paper 002: the summary Score-P would have written for the same
// run), one streaming pass per location, no event kept.
//
// Per location a call stack of frames {call path, enter time, counter values at enter};
// Enter finds or adds the child call path (region below the current one), Leave closes the
// frame: visits + 1, inclusive time += leave - enter, min/max of that duration. MPI events
// add bytes sent / received to the call path they occur in (point to point and collectives,
// as Score-P's profile does). Metric events of synchronous classes update the location's
// current counter values; accumulated counters (PAPI) add leave - enter deltas per visit.
// OpenMP worker threads start with an empty stack: their call paths hang below the call path
// of the parallel region their process's earlier thread had open at that time (Score-P grafts
// them there), so a process's threads share one call tree.
//
// Metrics, in this order: visits, time, min_time, max_time, bytes_sent, bytes_received, then
// every accumulated member of the trace's synchronous metric classes, then `hits` (samples per
// innermost call path) where the trace defines calling contexts. They and the regions
// come from the global definitions, not from what a share of locations saw, so every rank of
// a conversion gives the same local definitions a unification expects.
#include <bitset>
#include <cstdint>
#include <initializer_list>
#include <vector>

#include "cubescale/profile/local_profile.hpp"
#include "cubescale/trace/reader.hpp"
#include "cubescale/trace/system_tree.hpp"

namespace cubescale::trace {

struct ProfileStats {
  std::uint64_t events = 0;
  std::uint64_t unclosed_frames = 0;  // frames still open at a location's end, closed there
};

// Sees every event beside the profile builder, with the call path the event happened on, so
// that another analysis (wait states) shares the profile's call tree instead of building its
// own. `cnode` is the innermost open call path: after the push for an Enter, before the pop
// for a Leave (there the left region's own, below which its parameters' call paths close with
// it), kNone outside every region. Call path numbers are the builder's own until
// `rows` maps them to the rows of the finished profile (rows[cnode] = row).
// The builder asks each observer once, before the first event, which event types it wants
// (`interest`) and calls `event` for those only; observers made of others (`parts`, called in
// their order for every call) are taken apart, so that each event costs one call per observer
// that wants it instead of a chain of fans (docs/analysis.md, "Speed and memory").
using EventTypeSet = std::bitset<kEventTypeCount>;
inline EventTypeSet event_types(std::initializer_list<EventType> types) {
  EventTypeSet s;
  for (auto t : types) s.set(static_cast<std::size_t>(t));
  return s;
}

class CallPathObserver {
 public:
  virtual ~CallPathObserver() = default;
  virtual void begin_location(std::uint32_t location) { (void)location; }
  virtual void event(const Event& e, std::uint32_t cnode) = 0;
  // Before the builder closes frames a stream cut short left open.
  virtual void end_location(std::uint32_t location) { (void)location; }
  virtual void rows(const std::vector<std::uint32_t>& rows) { (void)rows; }
  // Bit t set: events of type t (EventType) go to `event`.
  virtual EventTypeSet interest() const { return EventTypeSet().set(); }
  // Non-empty: this observer only forwards every call to these, in this order.
  virtual std::vector<CallPathObserver*> parts() { return {}; }
  // A pass over several parts of the locations at once (trace_profile with parts): takes over
  // what `later`, an observer of the same type, kept of a later part's locations; both have had
  // `rows` (so they number call paths alike). The default cannot: such an observer needs one part.
  virtual void absorb(CallPathObserver& later);
};


// The profile of `locations` (dense indices; columns in this order). FormatError on
// inconsistent streams (a Leave that does not match the Enter, time going backwards).
profile::LocalProfile trace_profile(const Trace& trace, const std::vector<std::uint32_t>& locations,
                                    ProfileStats* stats = nullptr, CallPathObserver* observer = nullptr);

// The same profile, the parts read at once on a thread each (the first on the calling thread),
// each part's events to its own builder and observers[k]; then the call trees are unified, the
// columns joined and every later part's observers absorbed into the first's (absorb), which
// then hold what one pass over all parts in order would have given. The parts are in location
// order and none may end between two locations of one process (part_locations makes such
// parts): a worker thread's call paths hang below its process's earlier threads', read before
// it by the same builder. The error of the earliest part that fails is thrown.
profile::LocalProfile trace_profile(const Trace& trace, const std::vector<std::vector<std::uint32_t>>& parts,
                                    ProfileStats* stats, const std::vector<CallPathObserver*>& observers);

// `locations` cut into at most `count` parts for the above, about equal in the events the
// trace announces per location (else in locations), cut only where the process changes; one
// part when the trace has no such place. Fewer parts where each part's observers' tables per
// location of the trace (about 128 bytes) would together exceed 64 MiB and 16 bytes per event
// (most_parts).
// Per location the weight of its work: the events its definition announces (capped at 2^40),
// or 1 for every location where one of them announces none.
std::vector<std::uint64_t> location_weights(const Trace& trace, const std::vector<std::uint32_t>& locations);
// At most kMostParts parts (observers number their parts in a byte: PathTimeline's lines).
inline constexpr std::size_t kMostParts = 255;
std::vector<std::vector<std::uint32_t>> part_locations(const Trace& trace, const std::vector<std::uint32_t>& locations,
                                                       std::size_t count);
// The most parts worth their tables for a trace of `trace_locations` announcing `events` (0:
// not known).
std::size_t most_parts(std::size_t trace_locations, std::uint64_t events);

}  // namespace cubescale::trace
