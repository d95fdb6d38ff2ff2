#pragma once
// The phase-field solver of a uniform grid: phi and the dimensionless temperature u on the chosen
// backend (two arrays each: step n and n + 1), advanced by explicit sweeps (PhaseFieldSweep.hpp).
// Knows nothing of files, VTK or Catalyst.
#include <array>
#include <cstdint>

#include "common/Extent.hpp"
#include "exec/Backend.hpp"
#include "exec/Memory.hpp"
#include "phasefield/KobayashiModel.hpp"

namespace octoflow::phasefield {

struct PhaseFieldConfig {
  Extent extent;
  int dimensions = 3;
  std::array<bool, 3> periodic{false, false, false};
  KobayashiStep coefficients;
  // Initial state: a spherical (2D: circular) nucleus in an undercooled melt.
  float initialU = -0.5f;                 // u = (T - Tm) C / L of the melt
  double nucleusRadius = 4.0;             // nodes
  std::array<double, 3> nucleusCentre{};  // nodes
  double interfaceSharpness = 0.5;        // sqrt(2W) dx / (2 epsBar): the tanh profile's slope, per node
};

class PhaseFieldSolver {
public:
  PhaseFieldSolver(const PhaseFieldConfig& config, exec::Backend backend);

  // The nucleus: phi = (1 - tanh(sharpness (r - r0))) / 2, u = initialU everywhere. Step 0.
  void initialize();
  void advance(Index steps);
  Index step() const { return step_; }
  exec::Backend backend() const { return backend_; }
  const PhaseFieldConfig& config() const { return config_; }

  // The current fields in working memory (device memory on CUDA), valid until the next advance.
  const float* phi() const { return phi_[current_].data(); }
  const float* u() const { return u_[current_].data(); }
  // Temperature in K of the current state into `out` (working memory, nodeCount values).
  void temperature(float* out, double meltingTemperature, double latentOverCapacity) const;
  Index nodeCount() const { return config_.extent.cellCount(); }

private:
  PhaseFieldConfig config_;
  exec::Backend backend_;
  std::array<exec::Buffer<float>, 2> phi_, u_;
  int current_ = 0;
  Index step_ = 0;
};

}  // namespace octoflow::phasefield
