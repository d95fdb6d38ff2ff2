#pragma once
// Passive tracers in a node-centred velocity field (the LBM's, lattice units): trilinear
// interpolation between the nodes, explicit Runge-Kutta in time. The one source of the CPU and
// GPU executions (TracerSet). Positions are in node coordinates: node (i, j, k) sits at (i, j, k).
// The field is a uniform grid (VelocityFieldView) or the blocks of an octree (BlockVelocityView,
// level-0 node coordinates).
#include <cstdint>

#include "common/Extent.hpp"

namespace octoflow::particles {

enum class Integrator { Rk2, Rk4 };

// A velocity field in the memory of the tracers' backend: 3 values per node (xyz), and optionally
// a solid mask (1 = obstacle) a tracer must not enter.
struct VelocityFieldView {
  const float* velocity = nullptr;
  const std::uint8_t* solid = nullptr;
  Extent extent;
};

// The velocity at `position`, trilinear in the cell around it; false outside the grid (an axis of
// one node, as z in 2D, admits only 0) or where the node nearest to it is solid.
OCTO_HD inline bool sampleVelocity(const VelocityFieldView& field, const float (&position)[3], float (&u)[3]) {
  const Extent& e = field.extent;
  Index base[3];
  float weight[3];
  for (int a = 0; a < 3; ++a) {
    const Index size = e.size(a);
    const float p = position[a];
    if (!(p >= 0.0f) || p > static_cast<float>(size - 1)) return false;  // also rejects NaN
    Index cell = static_cast<Index>(p);
    if (cell >= size - 1) cell = size > 1 ? size - 2 : 0;  // the last node belongs to the last cell
    base[a] = cell;
    weight[a] = size > 1 ? p - static_cast<float>(cell) : 0.0f;
  }
  if (field.solid) {
    const Index nearest = e.linear(base[0] + (weight[0] >= 0.5f), base[1] + (weight[1] >= 0.5f),
                                   base[2] + (weight[2] >= 0.5f));
    if (field.solid[nearest]) return false;
  }
  u[0] = u[1] = u[2] = 0.0f;
  for (int corner = 0; corner < 8; ++corner) {
    const int dx = corner & 1, dy = (corner >> 1) & 1, dz = corner >> 2;
    const float w = (dx ? weight[0] : 1.0f - weight[0]) * (dy ? weight[1] : 1.0f - weight[1]) *
                    (dz ? weight[2] : 1.0f - weight[2]);
    if (w == 0.0f) continue;  // also keeps a one-node axis from reading past the grid
    const Index node = e.linear(base[0] + dx, base[1] + dy, base[2] + dz);
    for (int a = 0; a < 3; ++a) u[a] += w * field.velocity[3 * node + a];
  }
  return true;
}

// A velocity field on the blocks of an octree (sim::BlockGrid): blocks of B^3 node-centred points
// (3 values a point, block after block, x fastest), block b of level meta[4b] with its first point
// at meta[4b + 1 .. 3] (node coordinates of its level). The block holding a place is found in a
// table over the domain cut into blocks of the finest level (x fastest): the leaf covering each.
struct BlockVelocityView {
  const float* velocity = nullptr;
  const std::uint8_t* solid = nullptr;  // a byte a point (1 = obstacle), or null
  const std::int32_t* meta = nullptr;
  const std::int32_t* leafOf = nullptr;
  int blockNodes = 17;
  int finestLevel = 0;
  Index table[3] = {1, 1, 1};           // finest-level blocks a side
  float domain[3] = {0.0f, 0.0f, 0.0f}; // level-0 cells a side: places from 0 to these
};

// The velocity at `position` (level-0 node coordinates), trilinear between the points of the leaf
// holding it; false outside the domain or where the point nearest to it is solid. A place on a face
// between blocks may be taken from either: where levels meet, the finer block's face points hold
// the coarser level's values there, so the field has no jump.
OCTO_HD inline bool sampleVelocity(const BlockVelocityView& field, const float (&position)[3], float (&u)[3]) {
  const int B = field.blockNodes;
  const float finestBlock = static_cast<float>(B - 1) / static_cast<float>(1 << field.finestLevel);
  Index slot[3];
  for (int a = 0; a < 3; ++a) {
    const float p = position[a];
    if (!(p >= 0.0f) || p > field.domain[a]) return false;  // also rejects NaN
    slot[a] = static_cast<Index>(p / finestBlock);
    if (slot[a] >= field.table[a]) slot[a] = field.table[a] - 1;
  }
  const std::int32_t block = field.leafOf[slot[0] + field.table[0] * (slot[1] + field.table[1] * slot[2])];
  const std::int32_t* meta = field.meta + 4 * block;
  const float scale = static_cast<float>(1 << meta[0]);
  Index base[3];
  float weight[3];
  for (int a = 0; a < 3; ++a) {
    float local = position[a] * scale - static_cast<float>(meta[1 + a]);
    local = local < 0.0f ? 0.0f : (local > static_cast<float>(B - 1) ? static_cast<float>(B - 1) : local);
    Index cell = static_cast<Index>(local);
    if (cell >= B - 1) cell = B - 2;
    base[a] = cell;
    weight[a] = local - static_cast<float>(cell);
  }
  const Index first = static_cast<Index>(block) * B * B * B;
  const auto point = [&](Index i, Index j, Index k) { return first + i + B * (j + B * k); };
  if (field.solid && field.solid[point(base[0] + (weight[0] >= 0.5f), base[1] + (weight[1] >= 0.5f),
                                       base[2] + (weight[2] >= 0.5f))])
    return false;
  u[0] = u[1] = u[2] = 0.0f;
  for (int corner = 0; corner < 8; ++corner) {
    const int dx = corner & 1, dy = (corner >> 1) & 1, dz = corner >> 2;
    const float w = (dx ? weight[0] : 1.0f - weight[0]) * (dy ? weight[1] : 1.0f - weight[1]) *
                    (dz ? weight[2] : 1.0f - weight[2]);
    const Index n = point(base[0] + dx, base[1] + dy, base[2] + dz);
    for (int a = 0; a < 3; ++a) u[a] += w * field.velocity[3 * n + a];
  }
  return true;
}

// One step of `dt` (lattice time) from `position`: midpoint rule (RK2) or the classic fourth-order
// Runge-Kutta (RK4). False when a stage lands outside the grid or in a solid (the tracer is then
// retired); `velocity` is the velocity at the start of the step.
template <class Field>
OCTO_HD inline bool advanceTracer(const Field& field, Integrator integrator, float dt, float (&position)[3],
                                  float (&velocity)[3]) {
  float k1[3], stage[3];
  if (!sampleVelocity(field, position, k1)) return false;
  for (int a = 0; a < 3; ++a) velocity[a] = k1[a];
  if (integrator == Integrator::Rk2) {
    float k2[3];
    for (int a = 0; a < 3; ++a) stage[a] = position[a] + 0.5f * dt * k1[a];
    if (!sampleVelocity(field, stage, k2)) return false;
    for (int a = 0; a < 3; ++a) position[a] += dt * k2[a];
  } else {
    float k2[3], k3[3], k4[3];
    for (int a = 0; a < 3; ++a) stage[a] = position[a] + 0.5f * dt * k1[a];
    if (!sampleVelocity(field, stage, k2)) return false;
    for (int a = 0; a < 3; ++a) stage[a] = position[a] + 0.5f * dt * k2[a];
    if (!sampleVelocity(field, stage, k3)) return false;
    for (int a = 0; a < 3; ++a) stage[a] = position[a] + dt * k3[a];
    if (!sampleVelocity(field, stage, k4)) return false;
    for (int a = 0; a < 3; ++a) position[a] += dt / 6.0f * (k1[a] + 2.0f * k2[a] + 2.0f * k3[a] + k4[a]);
  }
  float end[3];
  return sampleVelocity(field, position, end);  // retired at once if the step ends outside
}

// The tracers' per-particle update over `latticeSteps` solver steps in one velocity field (the
// solver's at the start of them): `substeps` integration steps of 1 / substeps step each, the
// field's velocity times `velocityScale` being nodes a step (sim::Simulation::velocityScale).
template <class Field>
struct AdvectTracers {
  Field field;
  Integrator integrator;
  int substeps;
  int latticeSteps;
  float velocityScale;
  float* positions;   // xyz per tracer
  float* velocities;  // xyz per tracer: the velocity where it was at the start of its last sub-step
  float* ages;        // lattice time since release
  std::uint8_t* alive;

  OCTO_HD void operator()(Index n) const {
    if (!alive[n]) return;
    float p[3] = {positions[3 * n], positions[3 * n + 1], positions[3 * n + 2]};
    float u[3] = {0.0f, 0.0f, 0.0f};
    const float dt = velocityScale / static_cast<float>(substeps);
    const int steps = substeps * latticeSteps;
    for (int s = 0; s < steps; ++s)
      if (!advanceTracer(field, integrator, dt, p, u)) {
        alive[n] = 0;
        return;
      }
    for (int a = 0; a < 3; ++a) {
      positions[3 * n + a] = p[a];
      velocities[3 * n + a] = u[a];
    }
    ages[n] += static_cast<float>(latticeSteps);
  }
};

}  // namespace octoflow::particles
