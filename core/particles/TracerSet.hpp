#pragma once
// Passive tracer particles: released by sources, advected in the flow each step (TracerMotion),
// retired when they leave the grid or enter a solid. Ids are given in release order and never
// reused, so a tracer keeps its id for life (pathlines join by id). Arrays live in the memory of
// the backend; view() hands the live ones to the host.
#include <cstdint>
#include <string>
#include <vector>

#include "exec/Backend.hpp"
#include "exec/Memory.hpp"
#include "particles/TracerMotion.hpp"
#include "sim/Simulation.hpp"
#include "sim/SolverState.hpp"

namespace octoflow::particles {

// Where a source puts tracers at each release (node coordinates, as obstacles).
struct TracerSource {
  enum class Shape { Point, Line, Plane, Box };
  Shape shape = Shape::Point;
  float origin[3] = {0.0f, 0.0f, 0.0f};  // point: the point; line: its start; plane: a corner; box: min corner
  float end[3] = {0.0f, 0.0f, 0.0f};     // line: its end; box: the max corner
  float edge1[3] = {0.0f, 0.0f, 0.0f};   // plane: its two edges from `origin`
  float edge2[3] = {0.0f, 0.0f, 0.0f};
  // Tracers a release: line count[0] evenly from start to end; plane count[0] x count[1] and box
  // count[0] x count[1] x count[2] at the centres of equal sub-cells; point count[0] at the point.
  int count[3] = {1, 1, 1};
  Index releaseEvery = 0;  // steps between releases (continuous release); 0 = once, at step 0

  // Released once at step 0 unless `releaseEvery` is set afterwards.
  static TracerSource point(const float (&at)[3], int count = 1);
  static TracerSource line(const float (&from)[3], const float (&to)[3], int count);
  static TracerSource plane(const float (&corner)[3], const float (&firstEdge)[3], const float (&secondEdge)[3],
                            int firstCount, int secondCount);
  static TracerSource box(const float (&low)[3], const float (&high)[3], int countX, int countY, int countZ);

  Index perRelease() const;
  std::vector<float> releasePositions() const;  // xyz per tracer
  bool releasesAt(Index step) const { return releaseEvery > 0 ? step % releaseEvery == 0 : step == 0; }
};

// The live tracers in host memory (pinned with CUDA), ids ascending; valid until the next call
// on the set.
struct TracerView {
  const float* positions = nullptr;   // xyz
  const float* velocities = nullptr;  // xyz, the flow's velocity at the tracer
  const std::int64_t* ids = nullptr;
  const float* ages = nullptr;        // lattice time since release
  Index count = 0;
};

struct TracerSettings {
  std::vector<TracerSource> sources;
  Index maxParticles = 1000000;  // releases stop adding tracers beyond this many alive
  Integrator integrator = Integrator::Rk2;
  int substeps = 1;              // integration steps per LBM step
};

// The tables a BlockVelocityView reads for the blocks of `grid` (host memory: the caller puts them
// where the tracers move and points `view` at them), and its sizes.
struct BlockTables {
  std::vector<std::int32_t> meta, leafOf;
  BlockVelocityView view;  // meta, leafOf and the fields left null
};
BlockTables blockTables(const sim::BlockGrid& grid);

class TracerSet {
public:
  TracerSet(exec::Backend backend, TracerSettings settings);

  // Releases what the sources release at `step` (up to maxParticles alive); returns how many.
  Index release(Index step);
  // `latticeSteps` LBM steps (lattice time units) of motion in `field` (in the backend's memory),
  // held fixed over them.
  void advect(const VelocityFieldView& field, int latticeSteps = 1, float velocityScale = 1.0f);
  void advect(const BlockVelocityView& field, int latticeSteps = 1, float velocityScale = 1.0f);
  // The same move for a solver that samples its flow itself (sim::Simulation::moveTracers): the
  // tracers' arrays and settings; the solver advects them (AdvectTracers) on the set's backend.
  TracerMove move(int latticeSteps = 1, float velocityScale = 1.0f);
  // Drops retired tracers and copies the live ones to the host.
  TracerView view();

  // Checkpoints: every tracer held (retired ones too, as they are) and the counters, as records;
  // and the same read back.
  std::vector<sim::StateRecord> saveState() const;
  void restoreState(const sim::StateSource& source);

  Index count() const { return count_; }          // tracers held (retired ones until the next compaction)
  Index released() const { return nextId_; }      // since the start
  Index refused() const { return refused_; }      // not released for lack of room (maxParticles)

private:
  template <class Field>
  void advectIn(const Field& field, int latticeSteps, float velocityScale);
  void compact();

  exec::Backend backend_;
  TracerSettings settings_;
  Index count_ = 0;
  std::int64_t nextId_ = 0;
  Index refused_ = 0;
  std::uint64_t revision_ = 0;  // TracerMove::revision
  exec::Buffer<float> positions_, velocities_, ages_;
  exec::Buffer<std::int64_t> ids_;
  exec::Buffer<std::uint8_t> alive_;
  // Compaction scratch (same capacity) and the host copies view() returns.
  exec::Buffer<float> positionsScratch_, velocitiesScratch_, agesScratch_;
  exec::Buffer<std::int64_t> idsScratch_;
  exec::Buffer<Index> gather_;
  exec::Buffer<float> hostPositions_, hostVelocities_, hostAges_;
  exec::Buffer<std::int64_t> hostIds_;
};

namespace detail {
// Moves tracer `from[n]` of the source arrays to slot n of the destination ones.
struct GatherTracers {
  const Index* from;
  const float *positions, *velocities, *ages;
  const std::int64_t* ids;
  float *positionsOut, *velocitiesOut, *agesOut;
  std::int64_t* idsOut;
  std::uint8_t* alive;  // all set: the gathered tracers are the live ones

  OCTO_HD void operator()(Index n) const {
    const Index source = from[n];
    for (int a = 0; a < 3; ++a) {
      positionsOut[3 * n + a] = positions[3 * source + a];
      velocitiesOut[3 * n + a] = velocities[3 * source + a];
    }
    agesOut[n] = ages[source];
    idsOut[n] = ids[source];
    alive[n] = 1;
  }
};
void advectTracersOnCuda(Index count, const AdvectTracers<VelocityFieldView>& advect);
void advectTracersOnCuda(Index count, const AdvectTracers<BlockVelocityView>& advect);
void gatherTracersOnCuda(Index count, const GatherTracers& gather);
}  // namespace detail

}  // namespace octoflow::particles
