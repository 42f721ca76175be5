#include "cubescale/profile/local_profile.hpp"

#include <stdexcept>
#include <string>

namespace cubescale::profile {

namespace {

// A preorder tree: each element's parent is an earlier element (or none).
void check_preorder(const std::vector<std::uint32_t>& parents, const char* what) {
  for (std::size_t i = 0; i < parents.size(); ++i) {
    if (parents[i] != cube::kNoParent && parents[i] >= i)
      throw std::invalid_argument(std::string(what) + " " + std::to_string(i) + ": parent " +
                                  std::to_string(parents[i]) + " does not come before it (not preorder)");
  }
}

}  // namespace

void LocalProfile::validate() const {
  std::vector<std::uint32_t> metric_parents;
  for (const auto& m : metrics) metric_parents.push_back(m.parent);
  check_preorder(metric_parents, "metric");
  check_preorder(cnode_parents, "cnode");
  if (cnode_regions.size() != cnode_parents.size())
    throw std::invalid_argument("cnode parents and regions differ in length");
  for (std::size_t c = 0; c < cnode_regions.size(); ++c) {
    if (cnode_regions[c] >= regions.size())
      throw std::invalid_argument("cnode " + std::to_string(c) + " calls region " + std::to_string(cnode_regions[c]) +
                                  " of " + std::to_string(regions.size()));
  }
  if (!cnode_parameters.empty() && cnode_parameters.size() != cnode_parents.size())
    throw std::invalid_argument("cnode parameters: one list per cnode, or none");
  if (!cnode_first_visit.empty() && cnode_first_visit.size() != cnode_parents.size())
    throw std::invalid_argument("cnode first visits: one per cnode, or none");
  if (values.size() != metrics.size())
    throw std::invalid_argument(std::to_string(values.size()) + " value matrices for " + std::to_string(metrics.size()) +
                                " metrics");
  for (std::size_t m = 0; m < metrics.size(); ++m) {
    const auto& v = values[m];
    if (v.cnodes() != cnode_count() || v.locations() != locations.size() || v.dtype().name != metrics[m].dtype.name)
      throw std::invalid_argument("metric " + metrics[m].uniq_name + ": values must be " + metrics[m].dtype.name + " [" +
                                  std::to_string(cnode_count()) + " cnodes, " + std::to_string(locations.size()) +
                                  " locations]");
  }
}

}  // namespace cubescale::profile
