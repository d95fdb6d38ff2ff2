#pragma once
// The uniform-grid update as point-wise functors shared by the OpenMP and CUDA executions.
// Storage is structure-of-arrays, population q of node n at g[q * nodeCount + n], and holds
// post-collision values. One step pulls (streams) from the neighbours and collides in place
// in registers, writing to a second array ("pull", A-B pattern).
#include "common/Extent.hpp"
#include "lbm/Collision.hpp"
#include "lbm/FaceBoundaries.hpp"

namespace octoflow::lbm {

struct GridView {
  Extent extent;
  FaceBoundaries faces;
  Vector3 acceleration;
};

// Gathers the populations that arrive at `node` in this step. A population whose source
// x - c_q lies across a periodic face wraps around; across a wall it is the node's own
// opposite population reflected half-way (bounce-back, Ladd 1994), plus for a moving wall
// the momentum term 2 w_q rho_w (c_q . u_w) / cs^2 (Krueger et al., The Lattice Boltzmann
// Method (2017), eq. (5.27)), with rho_w the node's density. A link that crosses several faces
// (edges, corners) takes the terms of every moving face it crosses: the links through one face
// are symmetric in their tangential components, so each face's terms sum to zero at every node
// and the walls neither add nor remove mass.
template <class L>
OCTO_HD OCTO_INLINE void pullPopulations(const GridView& grid, const float* populations, Index node,
                                         float (&g)[L::Q]) {
  const Extent& e = grid.extent;
  const Index nodeCount = e.cellCount();
  Index i, j, k;
  e.coordinates(node, i, j, k);
  const Index position[3] = {i, j, k};
  float wallDensity = -1.0f;  // computed on the first moving-wall link only

  OCTO_UNROLL
  for (int q = 0; q < L::Q; ++q) {
    Index source[3];
    bool crossesWall = false;
    bool crossesMovingWall = false;
    Vector3 wall;  // sum of the velocities of the moving faces crossed
    OCTO_UNROLL
    for (int axis = 0; axis < 3; ++axis) {
      source[axis] = position[axis] - L::c(q, axis);
      if (L::c(q, axis) == 0) continue;
      const Index size = e.size(axis);
      const int face = 2 * axis + (source[axis] >= size ? 1 : 0);
      if (source[axis] >= 0 && source[axis] < size) continue;
      if (grid.faces.type[face] == FaceType::Periodic) {
        source[axis] += source[axis] < 0 ? size : -size;
        continue;
      }
      crossesWall = true;
      if (grid.faces.type[face] == FaceType::MovingWall) {
        crossesMovingWall = true;
        wall.x += grid.faces.wallVelocity[face].x;
        wall.y += grid.faces.wallVelocity[face].y;
        wall.z += grid.faces.wallVelocity[face].z;
      }
    }
    if (!crossesWall) {
      g[q] = populations[q * nodeCount + e.linear(source[0], source[1], source[2])];
      continue;
    }
    float reflected = populations[L::opposite(q) * nodeCount + node];
    if (crossesMovingWall) {
      if (wallDensity < 0.0f) {
        wallDensity = 1.0f;
        for (int p = 0; p < L::Q; ++p) wallDensity += populations[p * nodeCount + node];
      }
      reflected += 6.0f * L::w(q) * wallDensity * dot(velocityOf<L>(q), wall);
    }
    g[q] = reflected;
  }
}

// One lattice update of one node: stream (pull), then collide.
template <class L, class Collision>
struct StreamCollide {
  GridView grid;
  Collision collision;
  const float* source;
  float* destination;

  OCTO_HD void operator()(Index node) const {
    float g[L::Q];
    pullPopulations<L>(grid, source, node, g);
    collision.template collide<L>(g, grid.acceleration);
    const Index nodeCount = grid.extent.cellCount();
    OCTO_UNROLL
    for (int q = 0; q < L::Q; ++q) destination[q * nodeCount + node] = g[q];
  }
};

// Density and velocity of the current state: the moments of the populations after streaming,
// i.e. of the state the next collision sees. Velocity is written xyz-interleaved, as VTK stores
// 3-component arrays, so the host copy can be handed to VTK without rearranging.
template <class L>
struct Macroscopic {
  GridView grid;
  const float* populations;
  float* density;   // nodeCount values, or null
  float* velocity;  // 3 * nodeCount values, or null

  OCTO_HD void operator()(Index node) const {
    float g[L::Q];
    pullPopulations<L>(grid, populations, node, g);
    float rho;
    Vector3 u;
    moments<L>(g, grid.acceleration, rho, u);
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
template <class L>
struct InitializeEquilibrium {
  Index nodeCount;
  const float* density;
  const float* velocity;
  float* populations;

  OCTO_HD void operator()(Index node) const {
    const float rho = density ? density[node] : 1.0f;
    const Vector3 u = velocity ? Vector3{velocity[3 * node], velocity[3 * node + 1], velocity[3 * node + 2]}
                               : Vector3{};
    OCTO_UNROLL
    for (int q = 0; q < L::Q; ++q) populations[q * nodeCount + node] = equilibriumDeviation<L>(q, rho, u);
  }
};

}  // namespace octoflow::lbm
