#pragma once
// Tracers moved in the flow of a uniform LBM grid without a velocity field: the velocity at each
// corner of the cell around a tracer is computed from the populations there, exactly as the
// macroscopic pass (BulkMacroscopic, BoundaryMacroscopic) computes it, so a move gives the same
// positions as one in the stored field, for the price of the few nodes the tracers touch instead of
// a pass over every node.
#include <cmath>

#include "lbm/StreamCollide.hpp"
#include "lbm/VelocityTap.hpp"
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

  OCTO_HD bool solidAt(Index i, Index j, Index k) const { return grid.obstacleAt(i, j, k); }

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

// The velocity a tapped step recorded (lbm/VelocityTap.hpp) at the nodes of the state it read: the
// values FlowAtNodes computes there for that state. A node the step did not record (its stamp is
// another step's) gives NaN, which retires the tracer: a move reads only nodes it marked unless a
// velocity component exceeds one node a step, which non-negative populations never give.
struct TappedFlow {
  GridView grid;
  const TappedVelocity* velocity;
  float stamp;

  OCTO_HD bool solidAt(Index i, Index j, Index k) const { return grid.obstacleAt(i, j, k); }
  // The kind and the recorded value are read together (a value of every node exists).
  OCTO_HD void velocityAt(Index i, Index j, Index k, float (&u)[3]) const {
    const Index node = grid.extent.linear(i, j, k);
    const std::uint8_t kind = grid.kindOf(node);
    const TappedVelocity v = loadTapped(velocity + node);
    const bool atRest = kind != kBulkNode && kind != kBoundaryNode;  // as FlowAtNodes has them
    const bool recorded = v.stamp == stamp;
    u[0] = atRest ? 0.0f : (recorded ? v.x : NAN);
    u[1] = atRest ? 0.0f : (recorded ? v.y : NAN);
    u[2] = atRest ? 0.0f : (recorded ? v.z : NAN);
  }
};
OCTO_HD inline particles::TrilinearSampler<TappedFlow> samplerOf(const TappedFlow& flow) {
  return {flow, flow.grid.extent};
}

// Marks in a tap mask the nodes the next move of a tracer at `position` reads, for moves the tap
// serves (tapServes): RK2 over one step of dt <= 1 samples at the position and at the midpoint,
// at most half a node away along each axis (a component of the velocity is at most one node a
// step): the three nodes along each axis nearest to the position cover both cells, 27 in all.
struct TapMarker {
  std::uint32_t* marked = nullptr;  // null: no marks
  Extent extent;
  // The mask the step before the move read (the tapped path): every word of it that this move's
  // tracers marked at their start is zeroed, which clears it, so no pass over the mask follows.
  std::uint32_t* consumed = nullptr;

  OCTO_HD void mark(const float (&position)[3]) const {
    forEachWord(position, [this](std::uint32_t word, std::uint32_t bits) { setMaskBits(marked + word, bits); });
  }
  OCTO_HD void clearConsumed(const float (&position)[3]) const {
    forEachWord(position, [this](std::uint32_t word, std::uint32_t) { clearMaskWord(consumed + word); });
  }

  // The mask words of the nodes around `position` (a tracer alive: inside the grid) and the bits
  // of those nodes in each. Node indices are 32-bit (lbm/StreamCollide.hpp, NodeIndex).
  template <class F>
  OCTO_HD void forEachWord(const float (&position)[3], F f) const {
    std::uint32_t first[3], last[3];
    for (int a = 0; a < 3; ++a) {
      const auto lastNode = static_cast<std::int32_t>(extent.size(a) - 1);
      const float p = position[a];
      const auto cell = static_cast<std::int32_t>(p);
      const std::int32_t low = p - static_cast<float>(cell) >= 0.5f ? cell : cell - 1;
      first[a] = static_cast<std::uint32_t>(low < 0 ? 0 : low);
      last[a] = static_cast<std::uint32_t>(low + 2 > lastNode ? lastNode : low + 2);
    }
    const auto nx = static_cast<std::uint32_t>(extent.nx), ny = static_cast<std::uint32_t>(extent.ny);
    for (std::uint32_t k = first[2]; k <= last[2]; ++k)
      for (std::uint32_t j = first[1]; j <= last[1]; ++j) {
        const std::uint32_t row = nx * (j + ny * k);
        for (std::uint32_t from = row + first[0], to = row + last[0]; from <= to;) {  // a word at a time
          const std::uint32_t base = from & ~31u, end = base + 31u < to ? base + 31u : to;
          const std::uint32_t high = end - base == 31u ? ~0u : (2u << (end - base)) - 1u;
          f(from >> 5, high & ~((1u << (from - base)) - 1u));
          from = end + 1u;
        }
      }
  }
};

// A move (particles::AdvectTracers) that also marks, for each tracer still alive, the nodes its
// next move reads (and, tapped, clears the consumed mask around where it started).
template <class Field>
struct AdvectAndMark {
  particles::AdvectTracers<Field> advect;
  TapMarker marker;

  OCTO_HD void operator()(Index n) const {
    particles::TracerState tracer = advect.read(n);
    if (!tracer.alive) return;
    if (marker.consumed) marker.clearConsumed(tracer.position);
    if (advect.advance(n, tracer) && marker.marked) marker.mark(tracer.position);
  }
};

// Whether a tap serves `move`: what TapMarker assumes.
inline bool tapServes(const particles::TracerMove& move) {
  return move.integrator == particles::Integrator::Rk2 && move.substeps == 1 && move.latticeSteps == 1 &&
         move.velocityScale <= 1.0f && move.velocityScale > 0.0f;
}

}  // namespace octoflow::lbm
