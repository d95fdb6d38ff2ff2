// Body-force-driven channel and duct flow against their analytic steady profiles.
#include <gtest/gtest.h>

#include <cmath>
#include <tuple>
#include <vector>

#include "TestSupport.hpp"
#include "lbm/UniformSolver.hpp"

using namespace octoflow;
using namespace octoflow::lbm;

namespace {

// Relative L2 error of the x-velocity over all nodes.
template <class Analytic>
double relativeL2Error(UniformSolver& solver, Analytic analytic) {
  const auto& fields = solver.fetchFields(false, true);
  const Extent& e = solver.config().extent;
  double errorSquared = 0.0, normSquared = 0.0;
  for (Index node = 0; node < e.cellCount(); ++node) {
    Index i, j, k;
    e.coordinates(node, i, j, k);
    const double expected = analytic(j, k);
    const double difference = fields.velocity.data()[3 * node] - expected;
    errorSquared += difference * difference;
    normSquared += expected * expected;
  }
  return std::sqrt(errorSquared / normSquared);
}

// A body force between resting walls at y- and y+, periodic along x: D2Q9, 4 x 32, tau 0.8.
UniformSolverConfig planeChannel() {
  UniformSolverConfig config;
  config.lattice = LatticeKind::D2Q9;
  config.extent = Extent{4, 32, 1};
  config.faces.setAxisPeriodic(0);
  config.faces.setAxisPeriodic(2);
  config.tau = 0.8f;
  config.acceleration = Vector3{1e-6f, 0.0f, 0.0f};
  return config;
}

}  // namespace

TEST(Poiseuille, PlaneChannelMatchesTheParabola) {
  // Walls half-way between nodes: at y = -1/2 and y = ny - 1/2, so the channel is ny wide.
  const UniformSolverConfig config = planeChannel();
  const double nu = viscosityFromTau(config.tau);
  const double g = config.acceleration.x, width = config.extent.ny;
  UniformSolver solver(config, exec::Backend::Cpu);
  // Slowest mode decays as exp(-nu pi^2 t / width^2): 15000 steps leave e^-14 of the start.
  solver.advance(15000);
  const double error = relativeL2Error(solver, [&](Index j, Index) {
    const double y = j + 0.5;
    return g / (2.0 * nu) * y * (width - y);
  });
  // BGK with half-way bounce-back is exact for the parabola up to a tau-dependent wall slip
  // of order (tau - 1/2)^2 / width^2 and FP32 rounding: 0.2 % bounds both at width 32.
  EXPECT_LT(error, 2e-3) << "relative L2 error " << error;
  RecordProperty("relative_l2_error", std::to_string(error));
}

namespace {
// Square-duct Poiseuille flow (White, Viscous Fluid Flow, eq. 3-48): cross-section
// [-a, a] x [-b, b], u = 16 a^2 g / (nu pi^3) sum_{n odd} (-1)^((n-1)/2) / n^3
// [1 - cosh(n pi z / 2a) / cosh(n pi b / 2a)] cos(n pi y / 2a).
double ductVelocity(double y, double z, double a, double b, double g, double nu) {
  const double pi = std::acos(-1.0);
  double sum = 0.0;
  for (int n = 1; n < 200; n += 2) {
    const double sign = ((n - 1) / 2) % 2 == 0 ? 1.0 : -1.0;
    const double m = n * pi / (2.0 * a);
    sum += sign / (n * n * n) * (1.0 - std::cosh(m * z) / std::cosh(m * b)) * std::cos(m * y);
  }
  return 16.0 * a * a * g / (nu * pi * pi * pi) * sum;
}
}  // namespace

class DuctPoiseuille : public ::testing::TestWithParam<std::tuple<LatticeKind, CollisionKind>> {};

TEST(Poiseuille, CsmLeavesLaminarShearUntouched) {
  // In pure shear the coherent-structure function F_CS = Q/E is exactly 0, so CSM adds no eddy
  // viscosity: the channel with CSM (gradients by central differences, one-sided at the walls)
  // must run bit for bit as the one without.
  UniformSolverConfig config = planeChannel();
  UniformSolver plain(config, exec::Backend::Cpu);
  config.les = Les{LesModel::Csm, Les::kCsmConstant};
  UniformSolver csm(config, exec::Backend::Cpu);
  plain.advance(3000);
  csm.advance(3000);
  const auto expected = plain.populationsOnHost(), actual = csm.populationsOnHost();
  ASSERT_EQ(expected.size(), actual.size());
  for (std::size_t i = 0; i < expected.size(); ++i) ASSERT_EQ(actual[i], expected[i]) << "population value " << i;
  EXPECT_GT(plain.fetchFields(false, true).velocity.data()[3 * 16 * 4], 1e-4f);  // the flow is there
}

TEST_P(DuctPoiseuille, MatchesTheSeriesSolution) {
  UniformSolverConfig config;
  config.lattice = std::get<0>(GetParam());
  config.collision = std::get<1>(GetParam());
  config.extent = Extent{4, 24, 24};
  config.faces.setAxisPeriodic(0);
  config.tau = 0.8f;
  config.acceleration = Vector3{1e-5f, 0.0f, 0.0f};
  const double nu = viscosityFromTau(config.tau);
  UniformSolver solver(config, exec::Backend::Cpu);
  // Slowest mode decays as exp(-2 nu pi^2 t / 24^2): 4000 steps leave e^-13.
  solver.advance(4000);
  const double a = 12.0, b = 12.0;
  const double error = relativeL2Error(solver, [&](Index j, Index k) {
    return ductVelocity(j + 0.5 - a, k + 0.5 - b, a, b, config.acceleration.x, nu);
  });
  // Same bound as the plane channel, with the corners' second-order error added: 0.5 %.
  EXPECT_LT(error, 5e-3) << latticeName(config.lattice) << " relative L2 error " << error;
  RecordProperty("relative_l2_error", std::to_string(error));
}

INSTANTIATE_TEST_SUITE_P(Lattices, DuctPoiseuille,
                         ::testing::Combine(::testing::Values(LatticeKind::D3Q19, LatticeKind::D3Q27),
                                            ::testing::Values(CollisionKind::Bgk, CollisionKind::Mrt)),
                         [](const auto& info) {
                           return std::string(latticeName(std::get<0>(info.param))) + "_" +
                                  collisionName(std::get<1>(info.param));
                         });
