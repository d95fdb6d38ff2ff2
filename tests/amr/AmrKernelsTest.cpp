// The octree LBM's kernels: the inner/outer split computes what the naive kernel computes, on every
// path of a step (three levels, walls, a body force, a solid sphere). Short enough to run under the
// sanitizers (the physics tests, tests/amr/AmrLbmTest.cpp, take minutes there).
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "amr/AmrLbm.hpp"

using namespace octoflow;
using namespace octoflow::amr;

namespace {

AmrLbmSettings settingsOf(lbm::LatticeKind lattice, double tau) {
  AmrLbmSettings settings;
  settings.lattice = lattice;
  settings.tau = tau;
  settings.backend = exec::Backend::Cpu;
  return settings;
}

}  // namespace

TEST(AmrLbm, InnerAndShellKernelsComputeWhatTheNaiveKernelComputes) {
  // Three levels, walls on two axes, a body force and a solid sphere: every path of the step. The
  // split launches the same point updates in another order, each on the same inputs: equal bits.
  Octree tree({2, 1, 1}, {true, false, false}, 2);
  tree.refine({0});
  tree.refine({tree.findLeaf(BlockKey{1, 1, 0, 0})});
  std::vector<float> density[2], velocity[2];
  for (int run = 0; run < 2; ++run) {
    AmrLbmSettings settings = settingsOf(lbm::LatticeKind::D3Q19, 0.58);
    settings.acceleration = {1e-5, 0.0, 0.0};
    settings.kernel = run == 0 ? AmrKernel::Naive : AmrKernel::Split;
    AmrLbm amr(tree, settings, [](const double (&x)[3]) {
      return (x[0] - 12) * (x[0] - 12) + (x[1] - 8) * (x[1] - 8) + (x[2] - 8) * (x[2] - 8) < 9.0;
    });
    amr.initialise([](const double (&x)[3], float& rho, float (&u)[3]) {
      rho = static_cast<float>(1.0 + 0.001 * std::cos(0.3 * x[2]));
      u[0] = 0.02f;
      u[1] = static_cast<float>(0.01 * std::sin(0.2 * x[0]));
      u[2] = 0.0f;
    });
    amr.advance(4);  // 16 steps of level 2: every path has run
    amr.fetchMoments(density[run], velocity[run]);
  }
  EXPECT_EQ(density[0], density[1]);
  EXPECT_EQ(velocity[0], velocity[1]);
}
