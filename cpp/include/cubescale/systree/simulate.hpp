#pragma once
// The distributed system tree algorithm (distributed.hpp) run for P virtual ranks in one
// process, with the same kernels (RankState) and the same spanning trees as the MPI driver,
// to measure what each rank of a machine too large to run on would hold and send.
//
// The simulation walks the ranks in order, depth first: a group's binary spanning tree is
// evaluated recursively (own, left range, right range), and a rank's state is dropped as
// soon as its part of the up pass is over. So it holds O(depth x log P) rank states at a
// time, never all ranks' trees; per rank it keeps two bytes (its depth and where its path
// leaves its predecessor's). That needs block placement: the ranks below any element are
// consecutive (checked).
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "cubescale/systree/distributed.hpp"
#include "cubescale/systree/shapes.hpp"

namespace cubescale::systree::distributed {

// Where the virtual ranks' views come from.
class ViewSource {
 public:
  virtual ~ViewSource() = default;
  virtual std::uint64_t ranks() const = 0;
  virtual SingleNodeTree view(std::uint64_t rank) const = 0;
};

// A regular machine from a shape such as "rack:28 midplane:2 nodeboard:16 node:32
// process:64 thread:4": the levels down to the process are nested, the location levels
// below it are siblings (threads and GPU streams of one process). Elements are named
// "<class> <global number>", so the nodes of the machine have distinct names.
class RegularViews : public ViewSource {
 public:
  explicit RegularViews(const std::vector<Level>& levels);
  std::uint64_t ranks() const override { return ranks_; }
  SingleNodeTree view(std::uint64_t rank) const override;

 private:
  std::vector<Level> path_;       // down to and including the process level
  std::vector<Level> locations_;  // below the process
  std::vector<std::uint64_t> below_;  // per path level: processes below one element
  std::uint64_t ranks_ = 1;
};

// Views from a function (e.g. a Python callable in the bindings).
class FunctionViews : public ViewSource {
 public:
  FunctionViews(std::uint64_t ranks, std::function<SingleNodeTree(std::uint64_t)> view)
      : ranks_(ranks), view_(std::move(view)) {}
  std::uint64_t ranks() const override { return ranks_; }
  SingleNodeTree view(std::uint64_t rank) const override { return view_(rank); }

 private:
  std::uint64_t ranks_;
  std::function<SingleNodeTree(std::uint64_t)> view_;
};

struct SimulationResult {
  SystemTree tree;
  std::uint64_t ranks = 0;
  std::uint32_t rounds = 0;
  // Over all virtual ranks.
  std::uint64_t peak_bytes_max = 0, peak_bytes_min = UINT64_MAX, peak_bytes_rank0 = 0;
  std::uint64_t messages_max = 0, bytes_max = 0;  // sent + received, per rank
  std::uint64_t bytes_total = 0;                  // sent, all ranks
  // The naive baseline computed from the same views without running it: rank 0 would hold
  // every view plus the single-node union (its serialized size, from the sequence tree).
  std::uint64_t naive_gathered_bytes = 0, naive_rank0_bytes = 0;
  // Per rank, only when asked for (small P): as build_system_tree returns them.
  std::vector<std::uint64_t> location_offsets, location_indices, location_group_index;
  std::vector<std::uint8_t> responsible;
};

// `collect` keeps every rank's state to run the settle and down passes with values and
// return per-rank indices; otherwise a member's part in them is only accounted for.
SimulationResult simulate(const ViewSource& source, bool collect = false, const std::string& host_class = "node");

}  // namespace cubescale::systree::distributed
