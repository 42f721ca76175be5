#include "cubescale/threads/synchronization.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <string>
#include <string_view>

namespace cubescale::threads {

namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

bool starts_with(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

// Region roles (OTF2 / Score-P spellings, lower case) whose time is waiting. A "critical"
// region is the wait to enter; its body is "critical sblock" and is work.
constexpr std::array kWaitRoles{
    std::string_view{"barrier"}, std::string_view{"implicit barrier"}, std::string_view{"critical"},
    std::string_view{"taskwait"}, std::string_view{"thread wait"}, std::string_view{"lock"},
    std::string_view{"ordered"}, std::string_view{"flush"},
};

// Region names (lower case, prefixes) that wait, for reports whose roles say "function".
constexpr std::array kWaitNames{
    std::string_view{"!$omp barrier"},  std::string_view{"!$omp ibarrier"}, std::string_view{"!$omp implicit barrier"},
    std::string_view{"!$omp taskwait"}, std::string_view{"!$omp ordered @"}, std::string_view{"!$omp flush"},
    std::string_view{"omp_set_lock"},   std::string_view{"omp_set_nest_lock"}, std::string_view{"pthread_join"},
    std::string_view{"pthread_mutex_lock"}, std::string_view{"pthread_cond_wait"},
    std::string_view{"pthread_cond_timedwait"}, std::string_view{"pthread_barrier_wait"},
    std::string_view{"mpi_barrier"}, std::string_view{"mpi_wait"}, std::string_view{"idle"},
    // Python's threading, as cubescale's measurement names it
    std::string_view{"barrier.wait"}, std::string_view{"condition.wait"}, std::string_view{"event.wait"},
    std::string_view{"thread.join"}, std::string_view{"semaphore.acquire"},
};

}  // namespace

bool is_synchronization(const cube::Region& region) {
  const auto role = lower(region.role);
  if (std::find(kWaitRoles.begin(), kWaitRoles.end(), role) != kWaitRoles.end()) return true;
  const auto name = lower(region.name);
  // "!$omp critical @f.c:1" waits; "!$omp critical sblock @f.c:1" is the body.
  if (starts_with(name, "!$omp critical") && name.find("sblock") == std::string::npos) return true;
  for (auto prefix : kWaitNames)
    if (starts_with(name, prefix)) return true;
  return name.find("idle") != std::string::npos && (role.empty() || role == "artificial");
}

std::vector<std::uint8_t> synchronization_flags(const std::vector<cube::Region>& regions) {
  std::vector<std::uint8_t> out(regions.size());
  for (std::size_t i = 0; i < regions.size(); ++i) out[i] = is_synchronization(regions[i]) ? 1 : 0;
  return out;
}

}  // namespace cubescale::threads
