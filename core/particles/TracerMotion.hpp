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

  OCTO_HD bool solidAt(Index i, Index j, Index k) const { return solid && solid[extent.linear(i, j, k)]; }
  OCTO_HD void velocityAt(Index i, Index j, Index k, float (&u)[3]) const {
    const Index node = extent.linear(i, j, k);
    for (int a = 0; a < 3; ++a) u[a] = velocity[3 * node + a];
  }
};

// Samples a node-centred velocity field on the uniform grid `extent`: the velocity at a place,
// trilinear in the cell around it; none outside the grid (an axis of one node, as z in 2D, admits
// only 0) or where the node nearest to it is solid. `Nodes` says which nodes are solid
// (solidAt(i, j, k)) and gives the velocity of a node (velocityAt(i, j, k, u)): a stored field
// (VelocityFieldView) or one a solver computes from its own state at the nodes asked for
// (lbm::FlowAtNodes). The corners' velocities of the last cell sampled are kept: the stages of an
// integration step mostly fall in one cell, and a node's velocity may cost a read of all its
// populations. One sampler a thread.
template <class Nodes>
class TrilinearSampler {
public:
  OCTO_HD TrilinearSampler(const Nodes& nodes, const Extent& extent) : nodes_(nodes), extent_(extent) {}

  // The corners' reads are issued before the test of the nearest node (a read itself), so that the
  // two wait together: a move's time is mostly its tracers' chains of dependent reads.
  OCTO_HD bool velocity(const float (&position)[3], float (&u)[3]) {
    Index base[3];
    float weight[3];
    if (!cellOf(position, base, weight)) return false;
    if (base[0] != cell_[0] || base[1] != cell_[1] || base[2] != cell_[2]) fill(base);
    if (nearestIsSolid(base, weight)) return false;
    u[0] = u[1] = u[2] = 0.0f;
    for (int corner = 0; corner < 8; ++corner) {
      const int dx = corner & 1, dy = (corner >> 1) & 1, dz = corner >> 2;
      const float w = (dx ? weight[0] : 1.0f - weight[0]) * (dy ? weight[1] : 1.0f - weight[1]) *
                      (dz ? weight[2] : 1.0f - weight[2]);
      if (w == 0.0f) continue;  // also a corner past a one-node axis
      for (int a = 0; a < 3; ++a) u[a] += w * corners_[corner][a];
    }
    return true;
  }
  // Whether velocity() has a value at `position`, without computing it.
  OCTO_HD bool holds(const float (&position)[3]) const {
    Index base[3];
    float weight[3];
    return cellOf(position, base, weight) && !nearestIsSolid(base, weight);
  }

private:
  // The cell holding `position` (its first corner) and the weights of the far corners; false
  // outside the grid.
  OCTO_HD bool cellOf(const float (&position)[3], Index (&base)[3], float (&weight)[3]) const {
    for (int a = 0; a < 3; ++a) {
      const Index size = extent_.size(a);
      const float p = position[a];
      if (!(p >= 0.0f) || p > static_cast<float>(size - 1)) return false;  // also rejects NaN
      Index cell = static_cast<Index>(p);
      if (cell >= size - 1) cell = size > 1 ? size - 2 : 0;  // the last node belongs to the last cell
      base[a] = cell;
      weight[a] = size > 1 ? p - static_cast<float>(cell) : 0.0f;
    }
    return true;
  }
  OCTO_HD bool nearestIsSolid(const Index (&base)[3], const float (&weight)[3]) const {
    return nodes_.solidAt(base[0] + (weight[0] >= 0.5f), base[1] + (weight[1] >= 0.5f), base[2] + (weight[2] >= 0.5f));
  }
  // Unrolled, so that the corners stay in registers and their reads are in flight together; a
  // corner past a one-node axis takes the node before it (its weight is zero).
  OCTO_HD void fill(const Index (&base)[3]) {
    const Index step[3] = {extent_.nx > 1 ? 1 : 0, extent_.ny > 1 ? 1 : 0, extent_.nz > 1 ? 1 : 0};
    OCTO_UNROLL
    for (int corner = 0; corner < 8; ++corner)
      nodes_.velocityAt(base[0] + (corner & 1) * step[0], base[1] + ((corner >> 1) & 1) * step[1],
                        base[2] + (corner >> 2) * step[2], corners_[corner]);
    for (int a = 0; a < 3; ++a) cell_[a] = base[a];
  }

  const Nodes& nodes_;
  Extent extent_;
  Index cell_[3] = {-1, -1, -1};  // the cell whose corners are kept; none yet
  float corners_[8][3] = {};
};

// The sampler of a field (what advanceTracer asks for velocities): a stored uniform field's keeps
// its last cell's corners.
OCTO_HD inline TrilinearSampler<VelocityFieldView> samplerOf(const VelocityFieldView& field) {
  return {field, field.extent};
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

// The sampler of an octree's blocks: each sample looks its leaf up.
struct BlockSampler {
  const BlockVelocityView& field;
  OCTO_HD bool velocity(const float (&position)[3], float (&u)[3]) const { return sampleVelocity(field, position, u); }
  OCTO_HD bool holds(const float (&position)[3]) const {
    float u[3];
    return sampleVelocity(field, position, u);
  }
};
OCTO_HD inline BlockSampler samplerOf(const BlockVelocityView& field) { return {field}; }

// One step of `dt` (lattice time) from `position`: midpoint rule (RK2) or the classic fourth-order
// Runge-Kutta (RK4). False when a stage lands outside the grid or in a solid (the tracer is then
// retired); `velocity` is the velocity at the start of the step.
// The stages run as a loop (not unrolled) so that the field is sampled at one place in the code: a
// sampler computing velocities from a solver's state is inlined once.
template <class Sampler>
OCTO_HD inline bool advanceTracer(Sampler& field, Integrator integrator, float dt, float (&position)[3],
                                  float (&velocity)[3]) {
  const bool rk4 = integrator == Integrator::Rk4;
  const int stages = rk4 ? 4 : 2;
  float k[3] = {0.0f, 0.0f, 0.0f}, sum[3] = {0.0f, 0.0f, 0.0f};
  OCTO_NO_UNROLL
  for (int s = 0; s < stages; ++s) {
    // Stage s samples at position + reach dt k_(s-1): reach 0, 1/2 (RK2); 0, 1/2, 1/2, 1 (RK4).
    const float reach = s == 0 ? 0.0f : (s == 3 ? 1.0f : 0.5f);
    float stage[3];
    for (int a = 0; a < 3; ++a) stage[a] = position[a] + reach * dt * k[a];
    if (!field.velocity(stage, k)) return false;
    const float weight = s == 1 || s == 2 ? 2.0f : 1.0f;  // RK4: (k1 + 2 k2 + 2 k3 + k4) / 6
    for (int a = 0; a < 3; ++a) {
      if (s == 0) velocity[a] = k[a];
      sum[a] = s == 0 ? k[a] : sum[a] + weight * k[a];
    }
  }
  for (int a = 0; a < 3; ++a) position[a] += rk4 ? dt / 6.0f * sum[a] : dt * k[a];  // RK2: the midpoint's
  return field.holds(position);  // retired at once if the step ends outside
}

// A move of the tracers over `latticeSteps` solver steps in one velocity field (the solver's at the
// start of them): `substeps` integration steps of 1 / substeps step each, the field's velocity
// times `velocityScale` being nodes a step (sim::Simulation::velocityScale). The arrays, `count`
// tracers, live in the memory of the tracers' backend.
struct TracerMove {
  Integrator integrator = Integrator::Rk2;
  int substeps = 1;
  int latticeSteps = 1;
  float velocityScale = 1.0f;
  Index count = 0;
  float* positions = nullptr;   // xyz per tracer
  float* velocities = nullptr;  // xyz per tracer: the velocity where it was at the start of its last sub-step
  float* ages = nullptr;        // lattice time since release
  std::uint8_t* alive = nullptr;
  // The tracer set's revision: it changes whenever tracers are added, removed, reordered or
  // replaced, or moved by the set itself (in a stored field); a solver's move keeps it. A solver can
  // so tell the tracers it saw and moved last.
  std::uint64_t revision = 0;
};

// A tracer as a move finds it.
struct TracerState {
  bool alive = false;
  float position[3] = {0.0f, 0.0f, 0.0f};
  float age = 0.0f;
};

// The per-tracer update of a move in `field` (any type samplerOf(field) takes).
template <class Field>
struct AdvectTracers {
  Field field;
  TracerMove move;

  OCTO_HD void operator()(Index n) const {
    TracerState tracer = read(n);
    if (tracer.alive) advance(n, tracer);
  }
  // Tracer n, every value read before any is used: the reads wait together (a move's time is
  // mostly its tracers' chains of dependent reads).
  OCTO_HD TracerState read(Index n) const {
    TracerState tracer;
    tracer.alive = move.alive[n] != 0;
    for (int a = 0; a < 3; ++a) tracer.position[a] = move.positions[3 * n + a];
    tracer.age = move.ages[n];
    return tracer;
  }
  // Moves live tracer n from `tracer` and writes it back (its new position also left in `tracer`);
  // false where it is retired.
  OCTO_HD bool advance(Index n, TracerState& tracer) const {
    float u[3] = {0.0f, 0.0f, 0.0f};
    const float dt = move.velocityScale / static_cast<float>(move.substeps);
    const int steps = move.substeps * move.latticeSteps;
    auto sampler = samplerOf(field);
    for (int s = 0; s < steps; ++s)
      if (!advanceTracer(sampler, move.integrator, dt, tracer.position, u)) {
        move.alive[n] = 0;
        return false;
      }
    for (int a = 0; a < 3; ++a) {
      move.positions[3 * n + a] = tracer.position[a];
      move.velocities[3 * n + a] = u[a];
    }
    move.ages[n] = tracer.age + static_cast<float>(move.latticeSteps);
    return true;
  }
};

}  // namespace octoflow::particles
