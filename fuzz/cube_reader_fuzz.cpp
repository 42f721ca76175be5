// libFuzzer target for the .cubex reader: tar listing, anchor.xml (plain or gzipped), our
// system tree member, N.index / N.data (SPARSE, DENSE, ZCUBEX, both byte orders, rows beyond
// the index), extra members. Any input must end in a FormatError or a report whose regions
// parse and whose every metric loads and converts; any other exception, crash or sanitizer
// report is a bug. Each input is also written to a file and read on demand (the path of files
// of 4 MiB and more, see archive.hpp): both readings must agree metric by metric (the same
// bytes and ignored bytes, or both a FormatError), and so must their extra members.
#include <fcntl.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>

#include "cubescale/common/format_error.hpp"
#include "cubescale/cube/reader.hpp"
#include "cubescale/cube/scale_func.hpp"

using namespace cubescale;

namespace {

// One file per fuzzing process, rewritten for every input.
const std::string& scratch_path() {
  static const std::string path = std::string(access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp") +
                                  "/cubescale-fuzz-" + std::to_string(getpid()) + ".cubex";
  return path;
}

bool write_scratch(const std::uint8_t* data, std::size_t size) {
  const int fd = ::open(scratch_path().c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return false;
  std::size_t done = 0;
  while (done < size) {
    const auto n = ::write(fd, data + done, size - done);
    if (n <= 0) break;
    done += static_cast<std::size_t>(n);
  }
  ::close(fd);
  return done == size;
}

std::shared_ptr<cube::Report> open_or_null(const std::function<std::shared_ptr<cube::Report>()>& open) {
  try {
    return open();
  } catch (const FormatError&) {
    return nullptr;
  }
}

// The stored values of metric m, or null on FormatError.
std::shared_ptr<const cube::Severity> load_or_null(const cube::Report& r, std::size_t m) {
  try {
    return r.values(m);
  } catch (const FormatError&) {
    return nullptr;
  }
}

void check_same(const cube::Report& memory, const cube::Report& file) {
  if (memory.metric_count() != file.metric_count()) std::abort();
  for (std::size_t m = 0; m < memory.metric_count(); ++m) {
    const auto a = load_or_null(memory, m), b = load_or_null(file, m);
    if (!a != !b) std::abort();
    if (!a) continue;
    if (a->bytes() != b->bytes() || std::memcmp(a->data(), b->data(), a->bytes()) != 0) std::abort();
    if (memory.source()->ignored_bytes(m) != file.source()->ignored_bytes(m)) std::abort();
  }
  const auto& ea = memory.source()->extra_members();
  const auto& eb = file.source()->extra_members();
  if (ea.size() != eb.size()) std::abort();
  for (std::size_t i = 0; i < ea.size(); ++i) {
    if (ea[i].name != eb[i].name || ea[i].size != eb[i].size) std::abort();
    std::string x(ea[i].size, '\0'), y(eb[i].size, '\0');
    memory.source()->read_extra(i, 0, x.size(), x.data());
    file.source()->read_extra(i, 0, y.size(), y.data());
    if (x != y) std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto bytes = std::string(reinterpret_cast<const char*>(data), size);
  const auto report = open_or_null([&] { return cube::open_cubex_bytes(bytes, "fuzz"); });
  if (write_scratch(data, size)) {
    const auto on_demand = open_or_null([&] { return cube::open_cubex(scratch_path(), 0); });
    if (!report != !on_demand) std::abort();
    if (report) check_same(*report, *on_demand);
  }
  if (!report) return 0;
  try {
    report->definitions();  // the regions, parsed on first use
    for (std::size_t m = 0; m < report->metric_count(); ++m) {
      std::shared_ptr<const cube::Severity> stored;
      try {
        stored = report->values(m);
      } catch (const cube::DerivedMetricError&) {
        continue;
      }
      // Converting copies the matrix; skip that for the rare huge ones to keep runs fast.
      if (stored->bytes() < (std::size_t(16) << 20)) {
        try {
          report->values(m, cube::MetricKind::Inclusive);
          report->values(m, cube::MetricKind::Exclusive);
        } catch (const cube::ScaleFuncOverflow&) {  // a sum beyond CubeLib's 30 terms: documented
        } catch (const cube::DerivedMetricError&) {  // an expression outside the CubePL subset
        }
      }
    }
  } catch (const FormatError&) {
  }
  return 0;
}
