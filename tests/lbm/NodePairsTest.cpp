// FP16 bulk steps two nodes a thread (core/lbm/BulkPairStep.hpp) against one node a thread: the
// same case run both ways must hold the same bits after 300 steps, on the CPU and on the GPU. The
// case has every kind of node a pair can hold beside a bulk node: an inlet, a pressure outlet, a
// resting and a moving wall, an obstacle, periodic faces, and rows whose pairs end at a periodic
// face (x + 1 of the last node wraps to the first). The cases are those the program runs in pairs
// (the lean kernel form, no body force, no CSM: UniformEngine.hpp, pairsPay): D3Q19 BGK in
// registers, D3Q19 MRT two a register, D3Q27 BGK staged in shared memory.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "TestSupport.hpp"
#include "geometry/Obstacle.hpp"
#include "lbm/UniformSolver.hpp"

using namespace octoflow;
using namespace octoflow::lbm;

namespace {

struct PairCase {
  LatticeKind lattice;
  CollisionKind collision;
  bool periodicX;  // x periodic (rows wrap) or an inlet and an outlet on the x faces
};

std::string pairCaseName(const PairCase& c) {
  return std::string(latticeName(c.lattice)) + "_" + collisionName(c.collision) + (c.periodicX ? "_periodic" : "_channel");
}

UniformSolverConfig pairCaseConfig(const PairCase& c, bool nodePairs) {
  UniformSolverConfig config;
  config.lattice = c.lattice;
  config.collision = c.collision;
  config.storage = StorageKind::Fp16;
  config.fp16NodePairs = nodePairs;
  config.extent = Extent{26, 14, 10};
  config.faces.setAxisPeriodic(2);
  if (c.periodicX) {
    config.faces.setAxisPeriodic(0);
  } else {
    config.faces.face[0].type = FaceType::Velocity;
    config.faces.face[0].velocity = Vector3{0.05f, 0.0f, 0.0f};
    config.faces.face[1].type = FaceType::Pressure;
    config.faces.face[1].density = 1.0f;
  }
  config.faces.face[3].type = FaceType::MovingWall;
  config.faces.face[3].velocity = Vector3{0.06f, 0.0f, 0.02f};
  config.initialVelocity = Vector3{0.03f, 0.0f, 0.01f};
  config.tau = 0.62f;
  geometry::ObstacleSpec sphere;
  sphere.kind = geometry::ShapeKind::Sphere;
  sphere.center = {9.4, 6.7, 4.5};
  sphere.radius = 2.6;
  config.solid.assign(static_cast<std::size_t>(config.extent.cellCount()), 0);
  geometry::rasterize(sphere, config.extent, config.solid.data());
  return config;
}

// The populations after `steps` steps, as stored (FP16 bits widened to floats: equal floats are
// equal bits).
std::vector<float> populationsAfter(const UniformSolverConfig& config, exec::Backend backend, int steps) {
  UniformSolver solver(config, backend);
  solver.advance(steps);
  return solver.populationsOnHost();
}

void expectSameBits(const PairCase& c, exec::Backend backend) {
  const int steps = 300;
  const auto pairs = populationsAfter(pairCaseConfig(c, true), backend, steps);
  const auto nodes = populationsAfter(pairCaseConfig(c, false), backend, steps);
  ASSERT_EQ(pairs.size(), nodes.size());
  std::size_t differing = 0, moved = 0;
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    if (std::memcmp(&pairs[i], &nodes[i], sizeof(float)) != 0) ++differing;
    if (nodes[i] != 0.0f) ++moved;
  }
  std::printf("%s on %s: %zu of %zu populations differ after %d steps\n", pairCaseName(c).c_str(),
              exec::backendName(backend), differing, pairs.size(), steps);
  EXPECT_EQ(differing, 0u);
  EXPECT_GT(moved, pairs.size() / 2) << "the flow should have moved most populations off equilibrium";
}

void PrintTo(const PairCase& c, std::ostream* out) { *out << pairCaseName(c); }

}  // namespace

class NodePairs : public ::testing::TestWithParam<PairCase> {};

TEST_P(NodePairs, GiveTheBitsOfOneNodeAThreadOnTheCpu) { expectSameBits(GetParam(), exec::Backend::Cpu); }

TEST_P(NodePairs, GiveTheBitsOfOneNodeAThreadOnTheGpu) {
  OCTO_SKIP_WITHOUT_GPU();
  expectSameBits(GetParam(), exec::Backend::Cuda);
}

INSTANTIATE_TEST_SUITE_P(Cases, NodePairs,
                         ::testing::Values(PairCase{LatticeKind::D3Q19, CollisionKind::Bgk, true},
                                           PairCase{LatticeKind::D3Q19, CollisionKind::Bgk, false},
                                           PairCase{LatticeKind::D3Q19, CollisionKind::Mrt, false},
                                           PairCase{LatticeKind::D3Q19, CollisionKind::Mrt, true},
                                           PairCase{LatticeKind::D3Q27, CollisionKind::Bgk, true},
                                           PairCase{LatticeKind::D3Q27, CollisionKind::Bgk, false}),
                         [](const auto& info) { return pairCaseName(info.param); });
