#pragma once
// The uniform-grid update as point-wise functors shared by the OpenMP and CUDA executions.
// Storage is structure-of-arrays, population q of node n at [q * nodeCount + n], and holds
// post-collision values. One step pulls (streams) from the neighbours and collides in
// registers, writing to a second array ("pull", A-B pattern).
#include <cstdint>

#include "common/Extent.hpp"
#include "lbm/Collision.hpp"
#include "lbm/FaceBoundaries.hpp"
#include "lbm/PopulationStorage.hpp"

namespace octoflow::lbm {

struct GridView {
  Extent extent;
  FaceBoundaries faces;
  Vector3 acceleration;
  const std::uint8_t* solid = nullptr;  // 1 marks an obstacle node; null when there are none

  OCTO_HD bool isSolid(Index node) const { return solid && solid[node]; }
};

// Read access to one population array in storage S.
template <class S>
struct PopulationsIn {
  const typename S::Value* values;
  Index nodeCount;
  OCTO_HD float operator()(int q, Index node) const { return S::load(values[q * nodeCount + node]); }
};

namespace detail {

// Density and velocity from a node's own (post-collision) populations: what the wall and
// outlet rules need of the node, computed at most once per node.
template <class L, class S>
struct LocalMoments {
  bool known = false;
  float rho = 1.0f;
  Vector3 u;
  OCTO_HD void ensure(const PopulationsIn<S>& populations, Index node) {
    if (known) return;
    known = true;
    float deltaRho = 0.0f;
    Vector3 momentum;
    for (int p = 0; p < L::Q; ++p) {
      const float g = populations(p, node);
      deltaRho += g;
      momentum.x += g * L::c(p, 0);
      momentum.y += g * L::c(p, 1);
      momentum.z += g * L::c(p, 2);
    }
    rho = 1.0f + deltaRho;
    u = Vector3{momentum.x / rho, momentum.y / rho, momentum.z / rho};
  }
};

}  // namespace detail

// The population q arriving at `node` through the faces in `crossedFaces` (a bit per face).
// Walls of every kind reflect the node's own opposite population half-way (Ladd 1994); moving
// walls and velocity inlets add 2 w_q rho_w (c_q . u_w) / cs^2 (Krueger et al., The Lattice
// Boltzmann Method (2017), eq. 5.27) with rho_w the node's density (an inlet: rho_0 = 1, a fixed
// mass flux), summed over every such face
// the link crosses: at a resting or tangentially moving wall these terms cancel over the links
// of each node, so walls keep the mass exactly. A pressure outlet applies anti-bounce-back,
// f_q = -f*_qbar + 2 w_q rho_out [1 + 4.5 (c_q.u)^2 - 1.5 u^2] (Krueger eq. 5.53) with u the
// node's velocity; an outflow face holds the reference density rho_0 = 1 with the velocity of
// the node one step inward (zero normal gradient of the velocity at a fixed pressure, the usual
// outflow of incompressible solvers). Walls take precedence over open faces at edges and corners.
template <class L, class S>
OCTO_HD OCTO_INLINE float incomingAcrossFaces(const GridView& grid, const PopulationsIn<S>& populations, Index node,
                                              const Index (&position)[3], int q, unsigned crossedFaces,
                                              detail::LocalMoments<L, S>& local) {
  const float reflected = populations(L::opposite(q), node);
  bool wall = false, moving = false, inlet = false;
  int openFace = -1;
  Vector3 wallVelocity;
  for (int face = 0; face < kFaceCount; ++face) {
    if (!(crossedFaces & (1u << face))) continue;
    const FaceCondition& condition = grid.faces.face[face];
    switch (condition.type) {
      case FaceType::MovingWall:
      case FaceType::Velocity: {
        const Vector3 v = faceVelocity(grid.faces, face, grid.extent, position);
        wallVelocity = Vector3{wallVelocity.x + v.x, wallVelocity.y + v.y, wallVelocity.z + v.z};
        moving = true;
        wall = true;
        inlet = inlet || condition.type == FaceType::Velocity;
        break;
      }
      case FaceType::Pressure:
      case FaceType::Outflow: openFace = face; break;
      default: wall = true; break;
    }
  }
  if (wall || openFace < 0) {
    if (!moving) return reflected;
    // An inlet injects the reference density: its mass flux rho_0 u is fixed, so the density
    // in the domain cannot feed back into it (and grow) when the outlet is an outflow face.
    float wallDensity = 1.0f;
    if (!inlet) {
      local.ensure(populations, node);
      wallDensity = local.rho;
    }
    return reflected + 6.0f * L::w(q) * wallDensity * dot(velocityOf<L>(q), wallVelocity);
  }
  const FaceCondition& open = grid.faces.face[openFace];
  Vector3 outletVelocity;
  if (open.type == FaceType::Outflow) {
    // Zero normal gradient of the velocity: the node one step inward sets it.
    const int axis = faceAxis(openFace);
    Index inner[3] = {position[0], position[1], position[2]};
    inner[axis] += (openFace & 1) ? -1 : 1;
    detail::LocalMoments<L, S> innerMoments;
    innerMoments.ensure(populations, grid.extent.linear(inner[0], inner[1], inner[2]));
    outletVelocity = innerMoments.u;
  } else {
    local.ensure(populations, node);
    outletVelocity = local.u;
  }
  const float cu = dot(velocityOf<L>(q), outletVelocity);
  return -reflected +
         2.0f * L::w(q) * (open.density * (1.0f + 4.5f * cu * cu - 1.5f * dot(outletVelocity, outletVelocity)) - 1.0f);
}

// Gathers the populations that arrive at a fluid `node` in this step: from the neighbour
// x - c_q, wrapped across periodic faces; from an obstacle node, the node's own opposite
// population reflected half-way; across a boundary face, as incomingAcrossFaces says.
template <class L, class S>
OCTO_HD OCTO_INLINE void pullPopulations(const GridView& grid, const PopulationsIn<S>& populations, Index node,
                                         float (&g)[L::Q]) {
  const Extent& e = grid.extent;
  Index i, j, k;
  e.coordinates(node, i, j, k);
  const Index position[3] = {i, j, k};
  detail::LocalMoments<L, S> local;

  OCTO_UNROLL
  for (int q = 0; q < L::Q; ++q) {
    Index source[3];
    unsigned crossedFaces = 0;
    OCTO_UNROLL
    for (int axis = 0; axis < 3; ++axis) {
      source[axis] = position[axis] - L::c(q, axis);
      if (L::c(q, axis) == 0) continue;
      const Index size = e.size(axis);
      if (source[axis] >= 0 && source[axis] < size) continue;
      const int face = 2 * axis + (source[axis] >= size ? 1 : 0);
      if (grid.faces.face[face].type == FaceType::Periodic)
        source[axis] += source[axis] < 0 ? size : -size;
      else
        crossedFaces |= 1u << face;
    }
    if (crossedFaces) {
      g[q] = incomingAcrossFaces<L, S>(grid, populations, node, position, q, crossedFaces, local);
      continue;
    }
    const Index sourceNode = e.linear(source[0], source[1], source[2]);
    g[q] = grid.isSolid(sourceNode) ? populations(L::opposite(q), node) : populations(q, sourceNode);
  }
}

// One lattice update of one node: stream (pull), then collide. Obstacle nodes are skipped.
template <class L, class S, class Collision>
struct StreamCollide {
  GridView grid;
  Collision collision;
  const typename S::Value* source;
  typename S::Value* destination;

  OCTO_HD void operator()(Index node) const {
    if (grid.isSolid(node)) return;
    const Index nodeCount = grid.extent.cellCount();
    float g[L::Q];
    pullPopulations<L, S>(grid, PopulationsIn<S>{source, nodeCount}, node, g);
    collision.template collide<L>(g, grid.acceleration);
    OCTO_UNROLL
    for (int q = 0; q < L::Q; ++q) destination[q * nodeCount + node] = S::store(g[q]);
  }
};

// Density and velocity of the current state: the moments of the populations after streaming,
// i.e. of the state the next collision sees. Velocity is written xyz-interleaved, as VTK stores
// 3-component arrays, so the host copy can be handed to VTK without rearranging. Obstacle
// nodes read rho = 1, u = 0.
template <class L, class S>
struct Macroscopic {
  GridView grid;
  const typename S::Value* populations;
  float* density;   // nodeCount values, or null
  float* velocity;  // 3 * nodeCount values, or null

  OCTO_HD void operator()(Index node) const {
    float rho = 1.0f;
    Vector3 u;
    if (!grid.isSolid(node)) {
      float g[L::Q];
      pullPopulations<L, S>(grid, PopulationsIn<S>{populations, grid.extent.cellCount()}, node, g);
      moments<L>(g, grid.acceleration, rho, u);
    }
    if (density) density[node] = rho;
    if (velocity) {
      velocity[3 * node + 0] = u.x;
      velocity[3 * node + 1] = u.y;
      velocity[3 * node + 2] = u.z;
    }
  }
};

// Sets every node to the equilibrium of a given density and velocity (arrays on the working
// memory; null means rho = 1, u = 0).
template <class L, class S>
struct InitializeEquilibrium {
  Index nodeCount;
  const float* density;
  const float* velocity;
  typename S::Value* populations;

  OCTO_HD void operator()(Index node) const {
    const float rho = density ? density[node] : 1.0f;
    const Vector3 u = velocity ? Vector3{velocity[3 * node], velocity[3 * node + 1], velocity[3 * node + 2]}
                               : Vector3{};
    OCTO_UNROLL
    for (int q = 0; q < L::Q; ++q) populations[q * nodeCount + node] = S::store(equilibriumDeviation<L>(q, rho, u));
  }
};

// A fluid node next to an obstacle: bit p of `links` is set when x + c_p is an obstacle node.
struct ObstacleLink {
  Index node;
  std::uint32_t links;
};

// Momentum given to the obstacles by one boundary node in one step, by momentum exchange
// (Ladd 1994; Krueger et al. eq. 11.8): every population f*_p sent into the obstacle comes back
// reversed, transferring 2 c_p f*_p. The rest weights cancel over a closed body, so the
// deviations g*_p suffice (and keep FP32 precision). Written in double per boundary node; the
// host sums them in a fixed order, so the total does not depend on threads or devices.
template <class L, class S>
struct ObstacleForce {
  const ObstacleLink* links;
  const typename S::Value* populations;
  Index nodeCount;
  double* force;  // 3 values per link entry

  OCTO_HD void operator()(Index entry) const {
    const ObstacleLink link = links[entry];
    double fx = 0.0, fy = 0.0, fz = 0.0;
    for (int p = 0; p < L::Q; ++p) {
      if (!(link.links & (1u << p))) continue;
      const double g = S::load(populations[p * nodeCount + link.node]);
      fx += 2.0 * L::c(p, 0) * g;
      fy += 2.0 * L::c(p, 1) * g;
      fz += 2.0 * L::c(p, 2) * g;
    }
    force[3 * entry + 0] = fx;
    force[3 * entry + 1] = fy;
    force[3 * entry + 2] = fz;
  }
};

}  // namespace octoflow::lbm
