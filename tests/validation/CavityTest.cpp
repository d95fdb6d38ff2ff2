// Lid-driven cavity against Ghia, Ghia & Shin (1982): centre-line velocities at Re = 100 (CPU,
// in CI) and Re = 1000 (CUDA, on a GPU machine: 400 k node updates per step for ~100 k steps).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "GhiaCavity.hpp"
#include "TestSupport.hpp"
#include "lbm/UniformSolver.hpp"

using namespace octoflow;
using namespace octoflow::lbm;

namespace {

// Runs a square cavity of n x n nodes at the given Reynolds number and compares it with the
// reference columns (1: Re = 100, 2: Re = 1000).
octoflow::testing::CavityErrors runCavity(int n, double reynolds, Index steps, exec::Backend backend, int column) {
  const double lid = 0.1;
  UniformSolverConfig config;
  config.lattice = LatticeKind::D2Q9;
  config.collision = CollisionKind::Trt;
  config.extent = Extent{n, n, 1};
  config.faces.setAxisPeriodic(2);
  config.faces.face[3].type = FaceType::MovingWall;
  config.faces.face[3].velocity = Vector3{static_cast<float>(lid), 0.0f, 0.0f};
  config.tau = static_cast<float>(tauFromViscosity(lid * n / reynolds));
  UniformSolver solver(config, backend);
  solver.advance(steps);
  const auto& fields = solver.fetchFields(false, true);
  // Node j sits at (j + 1/2) / n between the half-way walls.
  const octoflow::testing::CavityErrors errors = octoflow::testing::compareWithGhia(n, fields.velocity.data(), lid, column);
  std::printf("cavity Re %.0f, %dx%d, %lld steps: max |u - Ghia| %.4f, max |v - Ghia| %.4f (of the lid speed)\n",
              reynolds, n, n, static_cast<long long>(steps), errors.maxU, errors.maxV);
  return errors;
}

}  // namespace

TEST(Cavity, Re100MatchesGhiaCentreLines) {
  // 128^2, lid 0.1 (Ma 0.17), 25 lid passes: steady to well below the bound.
  const octoflow::testing::CavityErrors errors = runCavity(128, 100.0, 32000, exec::Backend::Cpu, 1);
  RecordProperty("max_u_error", std::to_string(errors.maxU));
  RecordProperty("max_v_error", std::to_string(errors.maxV));
  // Ghia's own grid (129^2, second order) and our compressibility error (Ma^2 ~ 3 %) of the
  // centre-line peaks: 2 % of the lid speed.
  EXPECT_LT(errors.maxU, 0.02);
  EXPECT_LT(errors.maxV, 0.02);
}

TEST(Cavity, Re1000MatchesGhiaCentreLinesOnTheGpu) {
  OCTO_SKIP_WITHOUT_GPU();
  // 256^2, lid 0.1, tau 0.577: TRT keeps it stable; 100 k steps = 39 lid passes.
  const octoflow::testing::CavityErrors errors = runCavity(256, 1000.0, 100000, exec::Backend::Cuda, 2);
  RecordProperty("max_u_error", std::to_string(errors.maxU));
  RecordProperty("max_v_error", std::to_string(errors.maxV));
  // The thin wall layers at Re = 1000 are resolved by ~10 nodes here: 3 % of the lid speed.
  EXPECT_LT(errors.maxU, 0.03);
  EXPECT_LT(errors.maxV, 0.03);
}
