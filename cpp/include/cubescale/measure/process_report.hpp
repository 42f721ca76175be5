#pragma once
// What one process measured, written as its own .cubex without MPI (a C or C++ program, or
// one rank of an MPI program that writes its part for `cubescale collate` to unify later).
// The machine is machine > node (the host) > process > one location per thread, the call
// tree the union of the threads' trees (Recorder::to_profile), the metrics those of the
// profile. The same definitions and values that unification and collation of this profile
// alone would give; the file is written to a temporary name and renamed.
#include <optional>
#include <string>

#include "cubescale/measure/recorder.hpp"
#include "cubescale/profile/local_profile.hpp"

namespace cubescale::measure {

// Writes `profile` (one process's) to `path`. `host` empty: this machine's host name.
// Throws std::invalid_argument on an inconsistent profile, std::runtime_error on I/O errors.
void write_process_report(const profile::LocalProfile& profile, const std::string& path, std::string host = "",
                          const std::string& process = "Process 0");

// The recorder's threads as one process report (see Recorder::to_profile for `program`).
// Call while no thread measures.
void write_process_report(const Recorder& recorder, const std::string& path, std::string host = "",
                          const std::string& process = "Process 0", std::optional<RegionId> program = std::nullopt);

}  // namespace cubescale::measure
