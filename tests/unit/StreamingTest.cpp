// Streaming and boundaries: where each population comes from, and what the whole grid conserves.
#include <gtest/gtest.h>

#include <numeric>
#include <vector>

#include "lbm/StreamCollide.hpp"
#include "lbm/UniformSolver.hpp"

using namespace octoflow;
using namespace octoflow::lbm;

namespace {
// A distinct value for every (q, node), so a pulled value tells where it came from.
std::vector<float> labelledPopulations(int Q, Index nodes) {
  std::vector<float> values(static_cast<std::size_t>(Q) * nodes);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i);
  return values;
}
Index wrap(Index value, Index size) { return ((value % size) + size) % size; }
}  // namespace

TEST(Streaming, PeriodicAxesWrapAndWallsReflectHalfWay) {
  using L = D3Q19;
  GridView grid;
  grid.extent = Extent{5, 4, 3};
  grid.faces.setAxisPeriodic(0);  // x periodic, y and z walls
  const Index n = grid.extent.cellCount();
  const auto values = labelledPopulations(L::Q, n);
  for (Index node = 0; node < n; ++node) {
    float g[L::Q];
    pullPopulations<L, Fp32Storage>(grid, PopulationsIn<Fp32Storage>{values.data(), n}, node, g);
    Index i, j, k;
    grid.extent.coordinates(node, i, j, k);
    for (int q = 0; q < L::Q; ++q) {
      const Index sj = j - L::c(q, 1), sk = k - L::c(q, 2);
      const bool throughWall = sj < 0 || sj >= grid.extent.ny || sk < 0 || sk >= grid.extent.nz;
      const float expected = throughWall ? values[L::opposite(q) * n + node]
                                         : values[q * n + grid.extent.linear(wrap(i - L::c(q, 0), 5), sj, sk)];
      ASSERT_EQ(g[q], expected) << "node " << node << " q " << q;
    }
  }
}

TEST(Streaming, MovingWallAddsTheWallMomentumTerm) {
  using L = D2Q9;
  GridView grid;
  grid.extent = Extent{3, 3, 1};
  grid.faces.setAxisPeriodic(0);
  grid.faces.face[3].type = FaceType::MovingWall;  // y+ moves with u = (0.1, 0)
  grid.faces.face[3].velocity = Vector3{0.1f, 0.0f, 0.0f};
  const Index n = grid.extent.cellCount();
  std::vector<float> values(static_cast<std::size_t>(L::Q) * n, 0.0f);  // rest state: rho = 1
  const Index top = grid.extent.linear(1, 2, 0);
  float g[L::Q];
  pullPopulations<L, Fp32Storage>(grid, PopulationsIn<Fp32Storage>{values.data(), n}, top, g);
  for (int q = 0; q < L::Q; ++q) {
    // Links arriving from y+ (c_y < 0) carry 6 w rho (c . u_w) = 0.6 w c_x.
    const float expected = L::c(q, 1) < 0 ? 0.6f * L::w(q) * L::c(q, 0) : 0.0f;
    EXPECT_FLOAT_EQ(g[q], expected) << "q " << q;
  }
}

namespace {
struct Totals {
  double mass = 0;
  double momentum[3] = {0, 0, 0};
};
Totals totals(UniformSolver& solver) {
  const auto& fields = solver.fetchFields(true, true);
  Totals t;
  for (Index node = 0; node < solver.nodeCount(); ++node) {
    const double rho = fields.density.data()[node];
    t.mass += rho;
    for (int a = 0; a < 3; ++a) t.momentum[a] += rho * fields.velocity.data()[3 * node + a];
  }
  return t;
}
}  // namespace

TEST(Streaming, ClosedCavityWithLidConservesMass) {
  for (LatticeKind lattice : {LatticeKind::D2Q9, LatticeKind::D3Q19, LatticeKind::D3Q27}) {
    UniformSolverConfig config;
    config.lattice = lattice;
    const bool is3d = latticeDimensions(lattice) == 3;
    config.extent = is3d ? Extent{12, 12, 12} : Extent{24, 24, 1};
    if (!is3d) config.faces.setAxisPeriodic(2);
    config.faces.face[3].type = FaceType::MovingWall;
    config.faces.face[3].velocity = Vector3{0.1f, 0.0f, 0.0f};
    config.tau = 0.6f;
    UniformSolver solver(config, exec::Backend::Cpu);
    const double before = totals(solver).mass;
    solver.advance(500);
    const Totals after = totals(solver);
    // Bounce-back and the tangential lid term move no mass across the walls; what is left is
    // FP32 rounding of ~1e3..1e4 node sums.
    EXPECT_NEAR(after.mass / before, 1.0, 1e-5) << latticeName(lattice);
    EXPECT_GT(after.momentum[0], 0.0) << "the lid drags the fluid along +x";
  }
}

TEST(Streaming, PeriodicBoxGainsExactlyTheBodyForce) {
  // Fully periodic: total momentum grows by (total mass) * a per step, mass stays.
  UniformSolverConfig config;
  config.lattice = LatticeKind::D3Q19;
  config.extent = Extent{8, 6, 4};
  for (int axis = 0; axis < 3; ++axis) config.faces.setAxisPeriodic(axis);
  config.acceleration = Vector3{1e-5f, -2e-5f, 5e-6f};
  config.tau = 0.9f;
  UniformSolver solver(config, exec::Backend::Cpu);
  const Totals start = totals(solver);
  const int steps = 200;
  solver.advance(steps);
  const Totals end = totals(solver);
  EXPECT_NEAR(end.mass, start.mass, 1e-3);
  for (int a = 0; a < 3; ++a) {
    const double expected = start.mass * config.acceleration[a] * steps;
    // Both totals carry the same half-force shift of the velocity definition.
    EXPECT_NEAR(end.momentum[a] - start.momentum[a], expected, 1e-3 * std::abs(expected)) << "axis " << a;
  }
}
