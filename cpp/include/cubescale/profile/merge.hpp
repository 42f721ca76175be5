#pragma once
// Several local profiles as one (e.g. the per-process reports one rank reads when there are
// fewer ranks than processes): the union of their definitions in canonical order (the same
// unification as across ranks, unify.hpp, run in this process) and their locations side by
// side, profile i's columns after those of profiles 0 .. i-1. A call path or metric a profile
// never had is zero in its columns. The result collates like any rank's profile; its
// locations are contiguous in the global order when the machine puts those processes next to
// each other.
#include <vector>

#include "cubescale/profile/local_profile.hpp"

namespace cubescale::profile {

// Throws std::invalid_argument for no profiles or for metrics the profiles define differently.
LocalProfile merge_profiles(const std::vector<const LocalProfile*>& profiles);

}  // namespace cubescale::profile
