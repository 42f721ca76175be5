#pragma once
// What the threads did that a report cannot show, in one line, as Score-P reports enter/exit
// mismatches: exits without an enter (also an exit on another thread than its enter), enters
// of region ids no Recorder::region() returned, and regions still open, whose calls are not
// complete and so not written. Empty when there was none.
#include <string>

#include "cubescale/measure/recorder.hpp"

namespace cubescale::measure {

// E.g. "3 exits without an enter (thread 1) were ignored; 1 region still open (Master
// thread) is not in the report (only completed calls are written)". Only while no thread measures.
std::string mismatch_warning(const Recorder& recorder);

}  // namespace cubescale::measure
