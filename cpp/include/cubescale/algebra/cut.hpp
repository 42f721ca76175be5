#pragma once
// Cutting a call tree (CubeLib's cube_cut): re-rooting at call paths and pruning (inlining)
// subtrees. A new report whose values are computed metric by metric when first asked for.
//
// * roots: the call tree becomes the subtrees of these call paths (none given: every root);
//   what lies outside them is dropped. Roots may not lie inside one another.
// * prunes (inlined, as cube_cut -p): these call paths go with their subtrees, whose exclusive
//   values are added to the caller's exclusive value (the caller's inclusive value is unchanged).
// Everything else (metrics, regions, system tree) is kept as it is.
#include <cstdint>
#include <memory>
#include <vector>

#include "cubescale/cube/report.hpp"

namespace cubescale::algebra {

// The call paths flagged in `keep` (one flag per cnode, in the report's order) with their
// values. A call path that goes adds its exclusive values to its nearest kept ancestor (whose
// inclusive value so stays as it was) or, with no kept ancestor, is dropped with its values;
// a kept call path whose parent goes becomes a root. Throws std::invalid_argument when `keep`
// has the wrong size or keeps nothing.
std::shared_ptr<cube::Report> keep_call_paths(const std::shared_ptr<const cube::Report>& report, const std::vector<bool>& keep);

// CubeLib's cube_commoncalltree: each input reduced to the call paths every input has (matched
// as unify() matches them: region, call site, parameters and attributes, from the roots down),
// the others folded into their nearest common ancestor. Each result keeps its input's metrics,
// regions and system tree. Throws std::invalid_argument when no call path is common to all.
std::vector<std::shared_ptr<cube::Report>> common(const std::vector<std::shared_ptr<const cube::Report>>& inputs);

// Throws std::invalid_argument for call paths out of range, roots inside other roots, a call
// path both root and pruned (without roots: a pruned root of the call tree, which has no caller),
// and pruned call paths inside other pruned ones.
std::shared_ptr<cube::Report> cut(const std::shared_ptr<const cube::Report>& report, const std::vector<std::uint32_t>& roots,
                                  const std::vector<std::uint32_t>& prunes);

}  // namespace cubescale::algebra
