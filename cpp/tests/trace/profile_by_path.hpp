#pragma once
// A local profile's visits and times by call path, for tests that state them per path.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "cubescale/profile/local_profile.hpp"

namespace cubescale::trace_tests {

// Call path names ("a/b/c", region names) by row; a call path with parameters is its region's
// name followed by them, "foo[size=0,mode=fast]" (parkey=parvalue, in their order).
inline std::vector<std::string> path_names(const profile::LocalProfile& p) {
  std::vector<std::string> path(p.cnode_parents.size());
  for (std::size_t c = 0; c < path.size(); ++c) {
    const auto parent = p.cnode_parents[c];
    auto name = p.regions[p.cnode_regions[c]].name;
    if (c < p.cnode_parameters.size() && !p.cnode_parameters[c].empty()) {
      std::string list;
      for (const auto& attributes : p.cnode_parameters[c]) {
        std::string key, value;
        for (const auto& [k, v] : attributes) {
          if (k == "parkey") key = v;
          if (k == "parvalue") value = v;
        }
        list += (list.empty() ? "" : ",") + key + "=" + value;
      }
      name += "[" + list + "]";
    }
    path[c] = parent == cube::kNoParent ? name : path[parent] + "/" + name;
  }
  return path;
}

// Per call path of location `column`: the value of an integer metric (UINT64), where not 0.
inline std::map<std::string, std::uint64_t> counts_by_path(const profile::LocalProfile& p, const std::string& metric,
                                                           std::size_t column = 0) {
  std::map<std::string, std::uint64_t> out;
  const auto path = path_names(p);
  for (std::size_t m = 0; m < p.metrics.size(); ++m) {
    if (p.metrics[m].uniq_name != metric) continue;
    for (std::size_t c = 0; c < path.size(); ++c) {
      std::uint64_t v = 0;
      std::memcpy(&v, p.values[m].row(c) + column * 8, 8);
      if (v != 0) out[path[c]] = v;
    }
  }
  return out;
}

// Per call path ("a/b/c", region names) of location `column`: (visits, time in whole ns).
inline std::map<std::string, std::pair<std::uint64_t, double>> visits_and_time(const profile::LocalProfile& p,
                                                                               std::size_t column = 0) {
  std::size_t visits = 0, time = 0;
  for (std::size_t m = 0; m < p.metrics.size(); ++m) {
    if (p.metrics[m].uniq_name == "visits") visits = m;
    if (p.metrics[m].uniq_name == "time") time = m;
  }
  const auto path = path_names(p);
  std::map<std::string, std::pair<std::uint64_t, double>> out;
  for (std::size_t c = 0; c < path.size(); ++c) {
    std::uint64_t v = 0;
    double t = 0;
    std::memcpy(&v, p.values[visits].row(c) + column * 8, 8);
    std::memcpy(&t, p.values[time].row(c) + column * 8, 8);
    out[path[c]] = {v, std::round(t * 1e9)};
  }
  return out;
}

}  // namespace cubescale::trace_tests
