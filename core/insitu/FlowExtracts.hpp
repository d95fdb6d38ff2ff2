#pragma once
// What a run derives from a simulation besides its fields: tracer particles (carried by the
// solver's "velocity") and an isosurface of one of its scalar fields (or of the speed |velocity|).
// On one rank they are made where the fields live (the solver's working memory, device memory on
// CUDA): only the tracers and the surface's triangles cross to the host. A solver with levels
// (sim::BlockGrid) carries its tracers in its blocks, each interpolated inside the leaf that holds
// it; its surface is made on level 0's grid. Over several MPI ranks they are made on rank 0 on the
// host from the gathered whole grid (and every block's values), so they are the same as on one
// rank.
#include <memory>

#include "exec/Memory.hpp"
#include "insitu/Isosurface.hpp"
#include "io/CaseFile.hpp"
#include "particles/TracerSet.hpp"
#include "sim/Simulation.hpp"

namespace octoflow::insitu {

class FlowExtracts {
public:
  // Collective. For the case's tracers and surface (nothing is allocated for what it does not ask
  // for), made beside `simulation`, which must outlive this.
  FlowExtracts(const io::CaseDescription& description, sim::Simulation& simulation);

  bool hasTracers() const { return tracers_ != nullptr; }
  bool hasSurface() const { return extractor_ != nullptr; }
  // Where tracers and surfaces are made: the solver's backend on one rank, else the host of rank 0.
  exec::Backend backend() const { return backend_; }

  // Whether moving the tracers leaves the host arrays of the fields alone (one rank on CUDA: the
  // flow they move in stays on the device).
  bool movesOnDevice() const { return onSolver_ && backend_ == exec::Backend::Cuda; }
  // Rank 0 (a no-op elsewhere): releases the tracers the sources release at `step`.
  void releaseTracers(Index step);
  // Collective. Moves the tracers over the next `steps` steps in the solver's current flow: sampled
  // by the solver where it can (sim::Simulation::moveTracers), else in its velocity field.
  void moveTracers(int steps);
  // Moves tracers in the velocity field even where the solver could sample its flow itself (for
  // comparisons: `octoflow bench insitu --tracer-velocity field`).
  void moveInVelocityField(bool inField) { velocityField_ = inField; }
  // Rank 0: the live tracers on the host, valid until the next call on the tracers.
  particles::TracerView tracers();
  // Collective. The surface of the solver's current state on the host of rank 0 (empty elsewhere),
  // valid until the next call.
  insitu::Surface surface();
  // Rank 0: the times of the last surface's extraction (the field it was made from not included).
  IsosurfaceTimes lastSurfaceTimes() const { return extractor_ ? extractor_->lastTimes() : IsosurfaceTimes{}; }
  // Checkpoints (rank 0; nothing elsewhere): the tracers as records (the caller settles the
  // simulation's moves first: sim::Simulation::settleTracers; the watchdog saves the tracers beside
  // a simulation made anew, not the one these were made with), and the same read back.
  std::vector<sim::StateRecord> saveState() const {
    return tracers_ ? tracers_->saveState() : std::vector<sim::StateRecord>{};
  }
  void restoreState(const sim::StateSource& source) {
    simulation_.settleTracers();
    if (tracers_) tracers_->restoreState(source);
  }
  // Rank 0: tracers released so far, and not released for lack of room (max_particles).
  Index released() const { return tracers_ ? tracers_->released() : 0; }
  Index refused() const { return tracers_ ? tracers_->refused() : 0; }

private:
  // The current values of a field where the extracts are made (collective over ranks); null on
  // ranks other than 0.
  const float* field(const std::string& name);
  void describeBlocks(const sim::BlockGrid& blocks);

  const io::CaseDescription& description_;
  sim::Simulation& simulation_;
  exec::Backend backend_;
  bool root_ = true;
  bool onSolver_ = true;  // made in the solver's working memory (one rank)
  bool velocityField_ = false;  // moveInVelocityField
  std::unique_ptr<particles::TracerSet> tracers_;
  exec::Buffer<std::uint8_t> solid_;  // the obstacle mask where the tracers move, empty without obstacles
  // A solver with levels: tracers move in its blocks (particles::BlockVelocityView).
  exec::Buffer<std::int32_t> blockMeta_, leafOf_;
  particles::BlockVelocityView blockView_;
  Index blocksRevision_ = 0;  // of the blocks the tables describe
  std::unique_ptr<insitu::IsosurfaceExtractor> extractor_;
  exec::Buffer<float> speed_;  // surface of the speed: |velocity| per node
};

}  // namespace octoflow::insitu
