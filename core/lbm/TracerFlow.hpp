#pragma once
// Tracers moved in the flow of a uniform LBM grid without a velocity field: the velocity at each
// corner of the cell around a tracer is computed from the populations there, exactly as the
// macroscopic pass (BulkMacroscopic, BoundaryMacroscopic) computes it, so a move gives the same
// positions as one in the stored field, for the price of the few nodes the tracers touch instead of
// a pass over every node.
#include "lbm/StreamCollide.hpp"
#include "particles/TracerMotion.hpp"

namespace octoflow::lbm {

// The current state's velocity at any node (the `Nodes` of particles::TrilinearSampler); the next
// step is of parity Odd.
template <class L, class S, bool Odd>
struct FlowAtNodes {
  using Value = typename S::Value;
  GridView grid;
  SlotBases<L, const Value> slots;
  const Value* populations;
  const BoundaryNode* boundary;  // sorted by node
  Index boundaryCount;
  const NodeMoments* previous;   // the boundary nodes' moments the next step reads

  OCTO_HD bool solidAt(Index i, Index j, Index k) const {
    return grid.kindOf(grid.extent.linear(i, j, k)) == kObstacleNode;
  }

  OCTO_HD void velocityAt(Index i, Index j, Index k, float (&velocity)[3]) const {
    const Neighbourhood neighbours(grid.extent, i, j, k);
    const std::uint8_t kind = grid.kindOf(neighbours.node());
    float rho = 1.0f;
    Vector3 u;  // obstacle and ghost nodes: at rest, as the macroscopic pass has them
    if (kind == kBulkNode)
      bulkMoments<L, S, Odd>(grid, slots, neighbours, rho, u);
    else if (kind == kBoundaryNode)
      boundaryMoments<L, S>(grid, populations, Odd, boundary, previous, boundaryEntry(neighbours.node()), rho, u);
    velocity[0] = u.x;
    velocity[1] = u.y;
    velocity[2] = u.z;
  }

  // The list entry of a boundary node (binary search: boundary nodes next to tracers are few).
  OCTO_HD Index boundaryEntry(Index node) const {
    Index low = 0, high = boundaryCount - 1;
    while (low < high) {
      const Index middle = low + (high - low) / 2;
      if (boundary[middle].node < node)
        low = middle + 1;
      else
        high = middle;
    }
    return low;
  }
};

template <class L, class S, bool Odd>
OCTO_HD inline particles::TrilinearSampler<FlowAtNodes<L, S, Odd>> samplerOf(const FlowAtNodes<L, S, Odd>& flow) {
  return {flow, flow.grid.extent};
}

}  // namespace octoflow::lbm
