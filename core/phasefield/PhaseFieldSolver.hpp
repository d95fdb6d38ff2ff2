#pragma once
// The phase-field solver of a uniform grid: phi and the dimensionless temperature u on the chosen
// backend (two arrays each: step n and n + 1), advanced by explicit sweeps (PhaseFieldSweep.hpp).
// Knows nothing of files, VTK or Catalyst.
#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "common/Extent.hpp"
#include "exec/Backend.hpp"
#include "exec/Memory.hpp"
#include "exec/cpu/CpuExecutor.hpp"
#include "phasefield/PhaseFieldSweep.hpp"
#include "sim/SolverState.hpp"
#include "sim/StepTimeline.hpp"

namespace octoflow::phasefield {

struct PhaseFieldConfig {
  Extent extent;                                       // this grid: the whole grid, or a piece with ghost layers
  int dimensions = 3;
  std::array<bool, 3> periodic{false, false, false};  // axes that wrap within this grid
  // A piece of a larger grid (MPI): the nodes it updates (local coordinates), the whole-grid
  // coordinates of its node 0 and the whole grid (the nucleus and the noise are placed by whole-grid
  // coordinates). Not a piece: the whole extent, origin 0.
  bool isPiece = false;
  NodeBox owned;
  std::array<Index, 3> origin{0, 0, 0};
  Extent whole;
  PhaseFieldModel model = PhaseFieldModel::Kobayashi;
  KobayashiStep kobayashi;  // the coefficients of the model in use
  KarmaRappelStep karmaRappel;
  float liquidPhi = 0.0f, solidPhi = 1.0f;  // the model's phi in the melt and the crystal (Karma-Rappel: -1, 1)
  // Initial state: a spherical (2D: circular) nucleus in an undercooled melt.
  float initialU = -0.5f;                 // the melt's dimensionless temperature (Kobayashi: (T - Tm) C / L)
  double nucleusRadius = 4.0;             // nodes
  std::array<double, 3> nucleusCentre{};  // nodes
  double interfaceSharpness = 0.5;        // the equilibrium tanh profile's slope, per node
};

class PhaseFieldSolver {
public:
  PhaseFieldSolver(const PhaseFieldConfig& config, exec::Backend backend);

  // A piece's ghost layers are refilled by `exchange` (given the current phi and u, working
  // memory, and the CUDA stream to queue copies on; null: the default stream) at once, after
  // initialize() and after every step. Collective under MPI. On CUDA a step then sweeps the
  // piece's boundary layers first, on the halo stream that `exchange` gets, and its interior on
  // the default stream while the halos move.
  using HaloExchange = std::function<void(float* phi, float* u, void* stream)>;
  void setHaloExchange(HaloExchange exchange);

  // The nucleus: phi = liquid + (solid - liquid) (1 - tanh(sharpness (r - r0))) / 2, u = initialU
  // everywhere. Step 0.
  void initialize();
  void advance(Index steps);
  Index step() const { return step_; }
  // The timeline of step `step` when it runs (sim/StepTimeline.hpp): GPU events on the two sweep
  // queues, host times on the CPU.
  void recordTimeline(Index step);
  const std::vector<sim::TimelineMark>& timeline() const { return timeline_.marks(); }
  exec::Backend backend() const { return backend_; }
  const PhaseFieldConfig& config() const { return config_; }

  // The current fields in working memory (device memory on CUDA), valid until the next advance.
  const float* phi() const { return phi_[current_].data(); }
  const float* u() const { return u_[current_].data(); }
  // offset + scale * field of the current phi or u into `out` (working memory, nodeCount values):
  // the output fields (phi from 0 to 1, the temperature in K).
  void mapPhi(float* out, double scale, double offset) const;
  void mapU(float* out, double scale, double offset) const;
  Index nodeCount() const { return config_.extent.cellCount(); }
  // This grid (ghost layers included) and the nodes it updates, whole-grid coordinates.
  NodeBox localBox() const;
  NodeBox ownedBox() const;
  // Checkpoints: "phi" and "u" of the owned nodes by whole-grid coordinates (the noise needs no
  // state: it is keyed by node and step); and the same read back for every node of the local grid,
  // ghost layers included, with the step counter.
  std::vector<sim::StateArray> saveState() const;
  void restoreState(const sim::StateSource& source);

private:
  void markTimeline(const char* what, bool haloQueue);

  PhaseFieldConfig config_;
  exec::Backend backend_;
  std::array<exec::Buffer<float>, 2> phi_, u_;
  HaloExchange haloExchange_;
  std::vector<NodeBox> boundaryLayers_;  // of the owned box, next to ghost layers
  NodeBox interior_;                     // the owned box less those layers
#if OCTOFLOW_HAVE_CUDA
  std::unique_ptr<SweepQueues> queues_;  // a piece on CUDA, or a recorded timeline
#endif
  sim::StepTimeline timeline_;
  exec::CpuQueues hostClock_;  // the timeline's marks on the CPU
  int current_ = 0;
  Index step_ = 0;
};

}  // namespace octoflow::phasefield
