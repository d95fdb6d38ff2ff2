// Streaming and boundaries: where each population comes from, and what the whole grid conserves.
#include <gtest/gtest.h>

#include <numeric>
#include <vector>

#include "exec/cpu/CpuExecutor.hpp"
#include "lbm/StreamCollide.hpp"
#include "lbm/UniformSolver.hpp"

using namespace octoflow;
using namespace octoflow::lbm;

namespace {
// A distinct value for every (q, node), so a gathered value tells where it came from.
std::vector<float> labelledPopulations(int Q, Index nodes) {
  std::vector<float> values(static_cast<std::size_t>(Q) * nodes);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i);
  return values;
}
Index wrap(Index value, Index size) { return ((value % size) + size) % size; }

// The populations a step of the given parity gathers at `node`, bulk or boundary alike.
template <class L>
void gather(const GridView& grid, const NodeClassification& classes, const std::vector<float>& values, bool odd,
            Index node, float (&g)[L::Q]) {
  const Index n = grid.extent.cellCount();
  const std::vector<NodeMoments> restMoments(classes.boundary.size());
  for (std::size_t entry = 0; entry < classes.boundary.size(); ++entry) {
    if (classes.boundary[entry].node != node) continue;
    gatherAtBoundary<L, Fp32Storage>(grid, values.data(), odd, classes.boundary[entry], restMoments.data(),
                                     static_cast<Index>(entry), g);
    return;
  }
  Index i, j, k;
  grid.extent.coordinates(node, i, j, k);
  const Neighbourhood neighbours(grid.extent, i, j, k);
  const SlotBases<L, const float> slots(values.data(), n);
  if (odd)
    gatherBulk<L, Fp32Storage, true>(slots, neighbours, g);
  else
    gatherBulk<L, Fp32Storage, false>(slots, neighbours, g);
}
}  // namespace

TEST(Streaming, OddStepsPullFromNeighboursAcrossPeriodicFacesAndReflectAtWalls) {
  using L = D3Q19;
  UniformSolverConfig config;
  config.lattice = LatticeKind::D3Q19;
  config.extent = Extent{5, 4, 3};
  config.faces.setAxisPeriodic(0);  // x periodic, y and z walls
  const NodeClassification classes = classifyNodes(config);
  const GridView grid{config.extent, config.faces, Vector3{}, classes.kind.data()};
  const Index n = grid.extent.cellCount();
  const auto values = labelledPopulations(L::Q, n);
  for (Index node = 0; node < n; ++node) {
    Index i, j, k;
    grid.extent.coordinates(node, i, j, k);
    const bool atWall = j == 0 || j == 3 || k == 0 || k == 2;
    ASSERT_EQ(classes.kind[node], atWall ? kBoundaryNode : kBulkNode) << "node " << node;
    for (bool odd : {false, true}) {
      float g[L::Q];
      gather<L>(grid, classes, values, odd, node, g);
      for (int q = 0; q < L::Q; ++q) {
        const Index sj = j - L::c(q, 1), sk = k - L::c(q, 2);
        const bool throughWall = sj < 0 || sj >= grid.extent.ny || sk < 0 || sk >= grid.extent.nz;
        // Even steps read the node's own slots; odd steps the opposite slot of the source node,
        // or, through a wall, the node's own slot q (where its reflected population waits).
        const float expected = !odd || throughWall
                                   ? values[q * n + node]
                                   : values[L::opposite(q) * n + grid.extent.linear(wrap(i - L::c(q, 0), 5), sj, sk)];
        ASSERT_EQ(g[q], expected) << "node " << node << " q " << q << (odd ? " odd" : " even");
      }
    }
  }
}

TEST(Streaming, MovingWallAddsTheWallMomentumTerm) {
  using L = D2Q9;
  UniformSolverConfig config;
  config.extent = Extent{3, 3, 1};
  config.faces.setAxisPeriodic(0);
  config.faces.setAxisPeriodic(2);
  config.faces.face[3].type = FaceType::MovingWall;  // y+ moves with u = (0.1, 0)
  config.faces.face[3].velocity = Vector3{0.1f, 0.0f, 0.0f};
  const NodeClassification classes = classifyNodes(config);
  const GridView grid{config.extent, config.faces, Vector3{}, classes.kind.data()};
  const std::vector<float> values(static_cast<std::size_t>(L::Q) * grid.extent.cellCount(), 0.0f);  // rho = 1
  for (bool odd : {false, true}) {
    float g[L::Q];
    gather<L>(grid, classes, values, odd, grid.extent.linear(1, 2, 0), g);
    for (int q = 0; q < L::Q; ++q) {
      // Links arriving from y+ (c_y < 0) carry 6 w rho (c . u_w) = 0.6 w c_x.
      const float expected = L::c(q, 1) < 0 ? 0.6f * L::w(q) * L::c(q, 0) : 0.0f;
      EXPECT_FLOAT_EQ(g[q], expected) << "q " << q;
    }
  }
}

namespace {
// Collision that leaves the populations as they are: the update is pure streaming.
struct NoCollision {
  template <class L, bool Forced, class Scale>
  NodeState collide(float (&)[L::Q], const Vector3&) const { return NodeState{1.0f, Vector3{}, 1.0f}; }
};
}  // namespace

TEST(Streaming, InPlaceStepsStreamEveryPopulationOnceAStep) {
  // Without collisions, two steps (even, odd) carry population q from x - 2 c_q to x, in place.
  using L = D3Q27;
  const Extent extent{6, 5, 4};
  const Index n = extent.cellCount();
  std::vector<float> values = labelledPopulations(L::Q, n);
  const std::vector<float> start = values;
  GridView grid;
  grid.extent = extent;
  const SlotBases<L, float> slots(values.data(), n);
  exec::CpuExecutor executor;
  executor.parallelFor3(extent, BulkStep<L, Fp32Storage, NoCollision, false, false>{grid, NoCollision{}, slots});
  executor.parallelFor3(extent, BulkStep<L, Fp32Storage, NoCollision, true, false>{grid, NoCollision{}, slots});
  for (Index node = 0; node < n; ++node) {
    Index i, j, k;
    extent.coordinates(node, i, j, k);
    for (int q = 0; q < L::Q; ++q) {
      const Index source = extent.linear(wrap(i - 2 * L::c(q, 0), extent.nx), wrap(j - 2 * L::c(q, 1), extent.ny),
                                         wrap(k - 2 * L::c(q, 2), extent.nz));
      ASSERT_EQ(values[q * n + node], start[q * n + source]) << "node " << node << " q " << q;
    }
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
