// MEASUREMENT_ON_OFF and BUFFER_FLUSH in the trace -> profile kernel: visits of the trace's
// artificial regions "MEASUREMENT OFF" (from OFF to ON) and "TRACE BUFFER FLUSH" (from the
// event the flush was recorded before to its stop time, or to the next event if that is
// earlier), as Score-P's profile and Scalasca's reader make them (docs/trace.md, "Measurement
// off and buffer flushes"); the event table keeps the events as recorded.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <string>

#include "cubescale/common/format_error.hpp"
#include "cubescale/trace/columns.hpp"
#include "cubescale/trace/profile.hpp"
#include "cubescale/trace/reader.hpp"
#include "../analysis/trace_files.hpp"
#include "one_location_trace.hpp"
#include "profile_by_path.hpp"

using namespace cubescale::trace;
using E = cubescale::trace_tests::OneLocationEvent;
using R = cubescale::trace_tests::OneLocationRegion;

namespace {

// Regions 0 "MEASUREMENT OFF", 1 "TRACE BUFFER FLUSH" (as Score-P defines them), 2 main, 3 a, 4 b.
const std::vector<R> kRegions = {{"MEASUREMENT OFF", "MEASUREMENT OFF", OTF2_REGION_ROLE_ARTIFICIAL, OTF2_PARADIGM_USER},
                                 {"TRACE BUFFER FLUSH", "TRACE BUFFER FLUSH", OTF2_REGION_ROLE_ARTIFICIAL,
                                  OTF2_PARADIGM_MEASUREMENT_SYSTEM},
                                 {"main", "main"},
                                 {"a", "a"},
                                 {"b", "b"}};

// Per call path ("main/a"): (visits, time in ns) of the only location of a trace of `events`.
std::map<std::string, std::pair<std::uint64_t, double>> profile_of(const std::vector<E>& events,
                                                                   const std::vector<R>& regions = kRegions) {
  cubescale::analysis_tests::TempDir dir("measurement");
  const auto anchor = cubescale::trace_tests::write_one_location(dir.path, "t", regions, events, "t");
  const Trace trace(anchor);
  return cubescale::trace_tests::visits_and_time(trace_profile(trace, trace.all_locations()));
}

}  // namespace

// Score-P's BT-MZ trace experiment (Score-P 1.4, recording switched off after mpi_setup_):
// Score-P's profile of the same run has the pause as a visit of MEASUREMENT OFF below MAIN__.
TEST(MeasurementFrames, MeasurementOffIsAVisitFromOffToOn) {
  auto v = profile_of({{E::Enter, 0, 2},
                            {E::MeasurementOn, 5},  // ON while on: nothing
                            {E::Enter, 10, 3},
                            {E::Leave, 20, 3},
                            {E::MeasurementOff, 30},
                            {E::MeasurementOff, 40},  // OFF while off: nothing
                            {E::MeasurementOn, 70},
                            {E::Enter, 80, 3},
                            {E::Leave, 90, 3},
                            {E::Leave, 100, 2}});
  EXPECT_EQ(v["main"], std::make_pair(std::uint64_t(1), 100.0));
  EXPECT_EQ(v["main/MEASUREMENT OFF"], std::make_pair(std::uint64_t(1), 40.0));
  EXPECT_EQ(v["main/a"], std::make_pair(std::uint64_t(2), 20.0));
  EXPECT_EQ(v.size(), 3u);
}

// OTF2 writes a flush before the event whose write started it, with that event's time T: the
// visit [T, stop] is made just before the first later event, ending there if that comes first
// (times never go back), in the call path the location is in after its events at T; a flush
// last in a location still counts.
TEST(MeasurementFrames, BufferFlushIsAVisitAfterTheEventsOfItsTime) {
  auto v = profile_of({{E::Enter, 0, 2},
                            {E::Enter, 10, 3},
                            {E::BufferFlush, 20, 0, 0, 50},
                            {E::Leave, 20, 3},  // its write started the flush
                            {E::Enter, 55, 4},
                            {E::BufferFlush, 57, 0, 0, 90},
                            {E::Enter, 57, 3},  // inside b; this flush ends early, before a's Leave
                            {E::Leave, 60, 3},
                            {E::Leave, 60, 4},
                            {E::Leave, 100, 2},
                            {E::BufferFlush, 110, 0, 0, 130}});
  EXPECT_EQ(v["main"], std::make_pair(std::uint64_t(1), 100.0));
  EXPECT_EQ(v["main/a"], std::make_pair(std::uint64_t(1), 10.0));
  EXPECT_EQ(v["main/TRACE BUFFER FLUSH"], std::make_pair(std::uint64_t(1), 30.0));
  EXPECT_EQ(v["main/b"], std::make_pair(std::uint64_t(1), 5.0));
  EXPECT_EQ(v["main/b/a"], std::make_pair(std::uint64_t(1), 3.0));
  EXPECT_EQ(v["main/b/a/TRACE BUFFER FLUSH"], std::make_pair(std::uint64_t(1), 3.0));  // [57, 60): a's Leave ends it
  EXPECT_EQ(v["TRACE BUFFER FLUSH"], std::make_pair(std::uint64_t(1), 20.0));           // at the end: its stop
}

// A flush whose write was started by MEASUREMENT_ON_OFF, by an Enter and a Leave of the same
// time, or before PROGRAM_END: whole visits that nest where the location is, never a
// FormatError, and the program's region still closes at PROGRAM_END.
TEST(MeasurementFrames, FlushesBesideOtherReplayedVisits) {
  auto v = profile_of({{E::Enter, 0, 2},
                       {E::BufferFlush, 20, 0, 0, 40},
                       {E::MeasurementOff, 20},  // started the flush: its visit goes into the pause
                       {E::MeasurementOn, 60},
                       {E::BufferFlush, 70, 0, 0, 80},
                       {E::Enter, 70, 3},
                       {E::Leave, 75, 3},  // the first later event: the flush ends before it, in a
                       {E::MeasurementOff, 100},
                       {E::BufferFlush, 150, 0, 0, 170},
                       {E::MeasurementOn, 150},  // started the flush: its visit follows the pause
                       {E::Leave, 200, 2}});
  EXPECT_EQ(v["main"], std::make_pair(std::uint64_t(1), 200.0));
  EXPECT_EQ(v["main/MEASUREMENT OFF"], std::make_pair(std::uint64_t(2), 90.0));
  EXPECT_EQ(v["main/MEASUREMENT OFF/TRACE BUFFER FLUSH"], std::make_pair(std::uint64_t(1), 20.0));
  EXPECT_EQ(v["main/a/TRACE BUFFER FLUSH"], std::make_pair(std::uint64_t(1), 5.0));
  EXPECT_EQ(v["main/TRACE BUFFER FLUSH"], std::make_pair(std::uint64_t(1), 20.0));

  // Regions 0-4 as above, 5 the program "t" (as Score-P defines it).
  auto regions = kRegions;
  regions.push_back({"t", "t", OTF2_REGION_ROLE_ARTIFICIAL, OTF2_PARADIGM_MEASUREMENT_SYSTEM});
  auto w = profile_of({{E::ProgramBegin, 0},
                       {E::Enter, 0, 2},
                       {E::BufferFlush, 90, 0, 0, 95},
                       {E::Leave, 90, 2},
                       {E::ProgramEnd, 100},
                       {E::Enter, 200, 3},
                       {E::Leave, 210, 3}},
                      regions);
  EXPECT_EQ(w["t"], std::make_pair(std::uint64_t(1), 100.0));
  EXPECT_EQ(w["t/TRACE BUFFER FLUSH"], std::make_pair(std::uint64_t(1), 5.0));
  EXPECT_EQ(w["a"], std::make_pair(std::uint64_t(1), 10.0));  // after the program's end: a root
}

// The event table and the event counts take the events as recorded; a trace that defines
// neither region (not Score-P's) keeps them as events only.
TEST(MeasurementFrames, RecordedEventsStayAsRecorded) {
  cubescale::analysis_tests::TempDir dir("measurement");
  const std::vector<E> events = {{E::Enter, 0, 2}, {E::MeasurementOff, 30}, {E::MeasurementOn, 70},
                                 {E::BufferFlush, 80, 0, 0, 90}, {E::Leave, 100, 2}};
  const auto anchor = cubescale::trace_tests::write_one_location(dir.path, "t", kRegions, events, "t");
  const Trace trace(anchor);
  const auto columns = event_columns(trace, trace.all_locations(), EventFilter{});
  ASSERT_EQ(columns.size(), 5u);
  EXPECT_EQ(columns.type[1], std::uint8_t(EventType::MeasurementOnOff));
  EXPECT_EQ(columns.type[3], std::uint8_t(EventType::BufferFlush));
  EXPECT_EQ(count_events(trace, trace.all_locations())[0][std::size_t(EventType::Enter)], 1u);

  const std::vector<R> without = {{"x", "x"}, {"y", "y"}, {"main", "main"}};
  auto v = profile_of(events, without);
  EXPECT_EQ(v.size(), 1u);
  EXPECT_EQ(v["main"], std::make_pair(std::uint64_t(1), 100.0));
}

// Regions entered while the measurement was off and still open at ON: a one-line FormatError.
TEST(MeasurementFrames, RegionsOpenAcrossOnAreAClearError) {
  cubescale::analysis_tests::TempDir dir("measurement");
  const auto anchor = cubescale::trace_tests::write_one_location(
      dir.path, "t", kRegions,
      {{E::Enter, 0, 2}, {E::MeasurementOff, 30}, {E::Enter, 40, 3}, {E::MeasurementOn, 50}, {E::Leave, 100, 2}}, "t");
  const Trace trace(anchor);
  try {
    trace_profile(trace, trace.all_locations());
    FAIL() << "no error";
  } catch (const cubescale::FormatError& e) {
    EXPECT_NE(std::string(e.what()).find("Leave of \"MEASUREMENT OFF\" inside \"a\""), std::string::npos) << e.what();
  }
}
