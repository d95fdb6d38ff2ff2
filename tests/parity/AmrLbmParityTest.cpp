// The octree LBM on CUDA against the CPU reference: a 3-level tree with walls, a body force and a
// solid sphere, after 200 steps of level 0 (800 of the finest level), with BGK, TRT and MRT.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstring>
#include <cstdio>
#include <string>
#include <vector>

#include "AmrTestSupport.hpp"
#include "TestSupport.hpp"
#include "amr/AmrLbm.hpp"

using namespace octoflow;
using namespace octoflow::amr;

namespace {

// Runs the case on both backends; returns the largest change of the CPU run's velocity from its
// initial field.
double runBoth(lbm::LatticeKind lattice, lbm::CollisionKind collision, lbm::LesModel les, std::vector<float> (&density)[2],
               std::vector<float> (&velocity)[2], std::array<double, 3> (&force)[2]) {
  double largestChange = 0.0;
  const Octree tree = test::threeLevelTree();
  for (int backend = 0; backend < 2; ++backend) {
    AmrLbmSettings settings = test::threeLevelChannel(lattice, collision, backend == 0 ? exec::Backend::Cpu : exec::Backend::Cuda);
    settings.les = lbm::Les{les, lbm::Les::kCsmConstant};
    AmrLbm amr(tree, settings, test::threeLevelSphere);
    const InitialState initial = test::threeLevelStart;
    amr.initialise(initial);
    amr.advance(200);
    amr.fetchMoments(density[backend], velocity[backend]);
    force[backend] = amr.obstacleForce();
    if (backend != 0) continue;
    const int B = amr.layout().blockNodes;
    for (std::size_t b = 0; b < amr.layout().blocks.size(); ++b)
      for (int p = 0; p < B * B * B; ++p) {
        double x[3];
        amr.position(static_cast<int>(b), p % B, (p / B) % B, p / (B * B), x);
        float rho, u[3];
        initial(x, rho, u);
        const std::size_t point = b * static_cast<std::size_t>(B * B * B) + static_cast<std::size_t>(p);
        for (int c = 0; c < 3; ++c)
          largestChange = std::max(largestChange, double(std::abs(velocity[0][3 * point + c] - u[c])));
      }
  }
  return largestChange;
}

}  // namespace

TEST(AmrLbmParity, CudaMatchesTheCpuReferenceOnThreeLevels) {
  OCTO_SKIP_WITHOUT_GPU();
  struct Model {
    lbm::LatticeKind lattice;
    lbm::CollisionKind collision;
    lbm::LesModel les = lbm::LesModel::None;
  };
  // With CSM as the seed's cyclist runs it (MRT), and with BGK (whose block kernel steps the
  // interface points too).
  for (const Model& model : {Model{lbm::LatticeKind::D3Q19, lbm::CollisionKind::Bgk},
                             Model{lbm::LatticeKind::D3Q27, lbm::CollisionKind::Bgk},
                             Model{lbm::LatticeKind::D3Q19, lbm::CollisionKind::Trt},
                             Model{lbm::LatticeKind::D3Q19, lbm::CollisionKind::Mrt},
                             Model{lbm::LatticeKind::D3Q27, lbm::CollisionKind::Mrt},
                             Model{lbm::LatticeKind::D3Q27, lbm::CollisionKind::Mrt, lbm::LesModel::Csm},
                             Model{lbm::LatticeKind::D3Q19, lbm::CollisionKind::Bgk, lbm::LesModel::Csm}}) {
    const lbm::LatticeKind lattice = model.lattice;
    SCOPED_TRACE(std::string(lbm::collisionName(model.collision)) + (model.les == lbm::LesModel::Csm ? ", csm" : ""));
    std::vector<float> density[2], velocity[2];
    std::array<double, 3> force[2];
    const double change = runBoth(lattice, model.collision, model.les, density, velocity, force);
    ASSERT_EQ(density[0].size(), density[1].size());
    double worstDensity = 0.0, worstVelocity = 0.0;
    for (std::size_t p = 0; p < density[0].size(); ++p) {
      worstDensity = std::max(worstDensity, double(std::abs(density[0][p] - density[1][p])));
      for (int c = 0; c < 3; ++c) {
        worstVelocity = std::max(worstVelocity, double(std::abs(velocity[0][3 * p + c] - velocity[1][3 * p + c])));
      }
    }
    std::printf("%s %s%s, 3 levels, 200 steps: largest |CPU - CUDA| density %.2e, velocity %.2e (the flow changed by "
                "up to %.3f)\n", lbm::latticeName(lattice), lbm::collisionName(model.collision),
                model.les == lbm::LesModel::Csm ? " + csm" : "", worstDensity, worstVelocity, change);
    EXPECT_GT(change, 0.01);  // the flow developed (the sphere, the walls): not a comparison of still states
    // FP32 on both; nvcc contracts multiply-adds into FMAs that g++ rounds twice: differences of a
    // few ulps per step that the flow carries along, far below the flow's own variations (1e-3).
    EXPECT_LT(worstDensity, 2e-5) << lbm::latticeName(lattice);
    EXPECT_LT(worstVelocity, 2e-5) << lbm::latticeName(lattice);
    std::printf("%s: force on the sphere, CPU (%.6e, %.6e, %.6e), CUDA (%.6e, %.6e, %.6e)\n", lbm::latticeName(lattice),
                force[0][0], force[0][1], force[0][2], force[1][0], force[1][1], force[1][2]);
    const double scale = std::abs(force[0][0]) + std::abs(force[0][1]) + std::abs(force[0][2]);
    EXPECT_GT(scale, 1e-3);
    for (int axis = 0; axis < 3; ++axis)
      EXPECT_NEAR(force[0][static_cast<std::size_t>(axis)], force[1][static_cast<std::size_t>(axis)], 1e-4 * scale)
          << lbm::latticeName(lattice) << " axis " << axis;
  }
}

// Every kernel form computes what the naive kernel computes on the GPU: the same bits, on three
// levels with a sphere, (1) D3Q19 with walls and a body force, (2) D3Q27 with the Smagorinsky
// model, a velocity inlet and an outflow face (level 1 touches the inlet), (3) = (1) on mother-leaf
// blocks of 33^3 points, (4) two levels with blocks stepped whole, (5) D3Q27 on three nested levels,
// each with blocks stepped whole, no solid points (as `octoflow bench amr --levels 3`), (6) = (1)
// with the CSM model: the
// inner/shell split, the two on streams, the 26 templated shell classes, the shells sorted by kind
// (their finer sources rebuilt apart) and the blocks stepped whole.
TEST(AmrLbmGpu, EveryKernelFormGivesTheBitsOfTheNaiveKernel) {
  OCTO_SKIP_WITHOUT_GPU();
  const AmrKernel kernels[] = {AmrKernel::Naive, AmrKernel::Split, AmrKernel::Streams, AmrKernel::Classes,
                               AmrKernel::Sorted, AmrKernel::Whole};
  constexpr int runs = 6;
  for (int setup = 0; setup < 6; ++setup) {
    const bool open = setup == 1;
    // Setup 3: setup 1 on mother-leaf blocks (leaves of 32 cells, 33^3 points), twice the size.
    const bool mother = setup == 2;
    const double scale = mother ? 2.0 : 1.0;
    Octree tree = test::threeLevelTree();
    if (open) {
      tree = Octree({3, 2, 2}, {false, false, false}, 2);
      tree.refine({tree.findLeaf(BlockKey{0, 1, 0, 0}), tree.findLeaf(BlockKey{0, 0, 1, 1})});
      tree.refine({tree.findLeaf(BlockKey{1, 3, 1, 1})});
    }
    // Setup 4: blocks stepped whole on both levels, across periodic faces (the sphere on level 1).
    if (setup == 3) tree = test::wholeBlocksTree();
    const bool nested = setup == 4;
    if (nested) tree = test::nestedWholeBlocksTree();
    std::vector<float> density[runs], velocity[runs];
    for (int run = 0; run < runs; ++run) {
      AmrLbmSettings settings;
      settings.tau = 0.56;
      settings.backend = exec::Backend::Cuda;
      settings.kernel = kernels[run];
      settings.leafCells = mother ? 32 : 16;
      if (nested) settings.lattice = lbm::LatticeKind::D3Q27;
      if (setup == 5) settings.les = lbm::Les::withDefaultConstant(lbm::LesModel::Csm);
      if (open) {
        settings.lattice = lbm::LatticeKind::D3Q27;
        settings.les.model = lbm::LesModel::Smagorinsky;
        settings.faces.face[0].type = lbm::FaceType::Velocity;
        settings.faces.face[0].velocity = lbm::Vector3{0.04f, 0.0f, 0.0f};
        settings.faces.face[1].type = lbm::FaceType::Outflow;
      } else {
        settings.acceleration = {2e-5, 0.0, 0.0};
      }
      const SolidTest sphere = [scale](const double (&x)[3]) {
        const double y[3] = {x[0] / scale, x[1] / scale, x[2] / scale};
        return (y[0] - 24) * (y[0] - 24) + (y[1] - 8) * (y[1] - 8) + (y[2] - 8) * (y[2] - 8) < 25.0;
      };
      AmrLbm amr(tree, settings, nested ? SolidTest{} : sphere);
      if (settings.kernel == AmrKernel::Whole && setup >= 3)
        for (int level = 0; level < amr.levels(); ++level) EXPECT_GT(amr.blocksSteppedWhole(level), 0) << level;
      amr.initialise([scale](const double (&x)[3], float& rho, float (&u)[3]) {
        rho = 1.0f;
        u[0] = 0.03f;
        u[1] = static_cast<float>(0.01 * std::sin(0.3 * x[2] / scale));
        u[2] = 0.0f;
      });
      amr.advance(100);
      amr.fetchMoments(density[run], velocity[run]);
    }
    for (int run = 1; run < runs; ++run) {
      ASSERT_EQ(density[0].size(), density[run].size());
      EXPECT_EQ(std::memcmp(density[0].data(), density[run].data(), density[0].size() * sizeof(float)), 0)
          << "setup " << setup << ", kernel " << run;
      EXPECT_EQ(std::memcmp(velocity[0].data(), velocity[run].data(), velocity[0].size() * sizeof(float)), 0)
          << "setup " << setup << ", kernel " << run;
    }
  }
}

TEST(AmrLbmGpu, MassIsConservedInAClosedBoxOverTenThousandStepsOnThreeLevels) {
  OCTO_SKIP_WITHOUT_GPU();
  // Walls on every side; one corner leaf refined twice (interfaces level 0-1 and 1-2 on faces,
  // edges and corners). A density pulse at rest sends sound waves across them for 10,000 steps of
  // level 0 (40,000 of level 2).
  Octree tree({2, 2, 2}, {false, false, false}, 2);
  tree.refine({0});
  tree.refine({0});
  ASSERT_EQ(tree.depth(), 2);
  AmrLbmSettings settings;
  settings.lattice = lbm::LatticeKind::D3Q19;
  settings.tau = 0.6;
  settings.backend = exec::Backend::Cuda;
  AmrLbm amr(tree, settings);
  amr.initialise([](const double (&x)[3], float& density, float (&velocity)[3]) {
    const double r2 = (x[0] - 10) * (x[0] - 10) + (x[1] - 9) * (x[1] - 9) + (x[2] - 12) * (x[2] - 12);
    density = static_cast<float>(1.0 + 0.01 * std::exp(-r2 / 18.0));
    velocity[0] = velocity[1] = velocity[2] = 0.0f;
  });
  std::vector<float> density, velocity;
  amr.fetchMoments(density, velocity);
  const double initial = amr.mass(density);
  double worst = 0.0;
  for (int chunk = 0; chunk < 10; ++chunk) {
    amr.advance(1000);
    amr.fetchMoments(density, velocity);
    const double drift = amr.mass(density) / initial - 1.0;
    worst = std::max(worst, std::abs(drift));
    std::printf("closed box, 3 levels, CUDA: step %lld relative mass drift %.3e\n", static_cast<long long>(amr.step()),
                drift);
  }
  EXPECT_LT(worst, 1e-6);
}

// A regrid on CUDA moves the state as the CPU does (AmrLbm::adopt reads and writes device memory):
// after 50 steps the level-2 family merges and a root leaf at the other end is refined, then 50 steps more.
TEST(AmrLbmParity, CudaMatchesTheCpuReferenceAcrossARegrid) {
  OCTO_SKIP_WITHOUT_GPU();
  const Octree tree = test::threeLevelTree();
  std::vector<LeafChange> changes(tree.leafCount(), LeafChange::Keep);
  for (std::size_t n = 0; n < tree.leafCount(); ++n)
    if (tree.leaves()[n].level == 2) changes[n] = LeafChange::Coarsen;
  const int root = tree.findLeaf(BlockKey{0, 0, 1, 1});
  ASSERT_GE(root, 0);
  changes[static_cast<std::size_t>(root)] = LeafChange::Refine;
  const Octree next = adapted(tree, changes);
  ASSERT_EQ(next.depth(), 1);
  ASSERT_GE(next.findLeaf(BlockKey{1, 0, 2, 2}), 0);
  std::vector<float> density[2], velocity[2];
  for (int backend = 0; backend < 2; ++backend) {
    AmrLbmSettings settings;
    settings.lattice = lbm::LatticeKind::D3Q27;
    settings.tau = 0.56;
    settings.acceleration = {2e-5, 0.0, 0.0};
    settings.backend = backend == 0 ? exec::Backend::Cpu : exec::Backend::Cuda;
    const SolidTest sphere = [](const double (&x)[3]) {
      return (x[0] - 24) * (x[0] - 24) + (x[1] - 8) * (x[1] - 8) + (x[2] - 8) * (x[2] - 8) < 25.0;
    };
    AmrLbm before(tree, settings, sphere);
    before.initialise([](const double (&x)[3], float& rho, float (&u)[3]) {
      rho = 1.0f;
      u[0] = 0.03f;
      u[1] = static_cast<float>(0.01 * std::sin(0.3 * x[2]));
      u[2] = 0.0f;
    });
    before.advance(50);
    // As a run regrids: the arrays handed over (on CUDA the blocks that keep their leaf copied on
    // the device), the same bits as a whole host copy gives.
    AmrLbm viaHost(next, settings, sphere), after(next, settings, sphere);
    viaHost.adopt(before.hostCopy());
    after.adopt(before.handOver());
    const AmrLbmSnapshot expected = viaHost.snapshot(), got = after.snapshot();
    for (int n = 0; n < 2; ++n) {
      EXPECT_EQ(got.post[n], expected.post[n]) << exec::backendName(settings.backend);
      EXPECT_EQ(got.pre[n], expected.pre[n]) << exec::backendName(settings.backend);
    }
    after.advance(50);
    EXPECT_EQ(after.step(), 100);
    after.fetchMoments(density[backend], velocity[backend]);
  }
  ASSERT_EQ(density[0].size(), density[1].size());
  double worst = 0.0;
  for (std::size_t p = 0; p < density[0].size(); ++p) {
    worst = std::max(worst, double(std::abs(density[0][p] - density[1][p])));
    for (int c = 0; c < 3; ++c) worst = std::max(worst, double(std::abs(velocity[0][3 * p + c] - velocity[1][3 * p + c])));
  }
  std::printf("D3Q27, regrid after 50 steps, 50 more: largest |CPU - CUDA| of density and velocity %.2e\n", worst);
  EXPECT_LT(worst, 2e-5);  // as CudaMatchesTheCpuReferenceOnThreeLevels: FMA contraction only
}
