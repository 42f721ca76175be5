#pragma once
// Cutting a call tree (CubeLib's cube_cut): re-rooting at call paths and pruning (inlining)
// subtrees. A new report whose values are computed metric by metric when first asked for.
//
// * roots: the call tree becomes the subtrees of these call paths (none given: every root);
//   what lies outside them is dropped. Roots may not lie inside one another.
// * prunes: these call paths stay, their descendants go, and the descendants' exclusive values
//   are added to the pruned call path's exclusive value (its inclusive value is unchanged).
// Everything else (metrics, regions, system tree) is kept as it is.
#include <cstdint>
#include <memory>
#include <vector>

#include "cubescale/cube/report.hpp"

namespace cubescale::algebra {

// Throws std::invalid_argument for call paths out of range and for roots inside other roots.
std::shared_ptr<cube::Report> cut(const std::shared_ptr<const cube::Report>& report, const std::vector<std::uint32_t>& roots,
                                  const std::vector<std::uint32_t>& prunes);

}  // namespace cubescale::algebra
