// The octree LBM's kernels: the inner/outer split, the shell classes, the shell sorted by kind and
// the blocks stepped whole compute what the naive kernel computes, on every path of a step (three levels, walls, a body
// force, a solid sphere). Short enough to run under the sanitizers (the physics tests, tests/amr/AmrLbmTest.cpp, take minutes there).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>

#include "AmrTestSupport.hpp"
#include "amr/AmrLbm.hpp"

using namespace octoflow;
using namespace octoflow::amr;

TEST(AmrLbm, SplitClassAndSortedKernelsComputeWhatTheNaiveKernelComputes) {
  // Three levels, walls on two axes, a body force and a solid sphere across a level 1-2 interface:
  // every path of the step (fine interface points beside solid coarse points included). The
  // split launches the same point updates in another order, each on the same inputs: equal bits.
  // Without an LES model, and with CSM (each point's relaxation time from the velocity gradient,
  // the sources rebuilt across levels with theirs).
  std::vector<float> withoutModel;  // the naive kernel's velocities with no LES model
  for (const lbm::LesModel les : {lbm::LesModel::None, lbm::LesModel::Csm}) {
    SCOPED_TRACE(les == lbm::LesModel::Csm ? "csm" : "no LES model");
    Octree tree({3, 2, 2}, {true, false, false}, 2);
    tree.refine({tree.findLeaf(BlockKey{0, 1, 0, 0})});
    tree.refine({tree.findLeaf(BlockKey{1, 3, 1, 1})});
    const AmrKernel kernels[] = {AmrKernel::Naive, AmrKernel::Split, AmrKernel::Classes, AmrKernel::Sorted,
                                 AmrKernel::Whole};
    constexpr int runs = 5;
    std::vector<float> density[runs], velocity[runs];
    for (int run = 0; run < runs; ++run) {
      AmrLbmSettings settings = test::cpuSettings(lbm::LatticeKind::D3Q19, 0.58);
      settings.acceleration = {1e-5, 0.0, 0.0};
      settings.kernel = kernels[run];
      settings.les = lbm::Les{les, lbm::Les::kCsmConstant};
      AmrLbm amr(tree, settings, [](const double (&x)[3]) {
        return (x[0] - 24) * (x[0] - 24) + (x[1] - 8) * (x[1] - 8) + (x[2] - 8) * (x[2] - 8) < 25.0;
      });
      const InitialState initial = [](const double (&x)[3], float& rho, float (&u)[3]) {
        rho = static_cast<float>(1.0 + 0.001 * std::cos(0.3 * x[2]));
        u[0] = 0.02f;
        u[1] = static_cast<float>(0.01 * std::sin(0.2 * x[0]));
        u[2] = 0.0f;
      };
      amr.initialise(initial);
      amr.advance(2);  // 8 steps of level 2: every path has run, at both time weights
      amr.fetchMoments(density[run], velocity[run]);
      // Every fluid point steps: none keeps its state from one step to the next under the body force
      // (a fine interface point whose coarse neighbours were partly solid once froze).
      std::vector<float> nextDensity, nextVelocity;
      amr.advance(1);
      amr.fetchMoments(nextDensity, nextVelocity);
      const int B = amr.layout().blockNodes;
      long long unchanged = 0;
      for (std::size_t b = 0; b < amr.layout().blocks.size(); ++b)
        for (int p = 0; p < B * B * B; ++p) {
          double x[3];
          amr.position(static_cast<int>(b), p % B, (p / B) % B, p / (B * B), x);
          if ((x[0] - 24) * (x[0] - 24) + (x[1] - 8) * (x[1] - 8) + (x[2] - 8) * (x[2] - 8) < 25.0) continue;
          const std::size_t point = b * static_cast<std::size_t>(B * B * B) + static_cast<std::size_t>(p);
          if (nextVelocity[3 * point] == velocity[run][3 * point] && nextVelocity[3 * point + 1] == velocity[run][3 * point + 1] &&
              nextVelocity[3 * point + 2] == velocity[run][3 * point + 2])
            ++unchanged;
        }
      EXPECT_EQ(unchanged, 0);
    }
    for (int run = 1; run < runs; ++run) {
      EXPECT_EQ(density[0], density[run]) << "kernel " << run;
      EXPECT_EQ(velocity[0], velocity[run]) << "kernel " << run;
    }
    if (les == lbm::LesModel::None)
      withoutModel = velocity[0];
    else
      EXPECT_NE(velocity[0], withoutModel);  // the model acted
  }
}

TEST(AmrLbm, SortedShellsComputeWhatTheNaiveKernelComputesWithOpenFacesOnTwoLevels) {
  // A velocity inlet (x-) and an outflow face (x+) crossing both levels (the refined leaf touches
  // the inlet), periodic in y, walls in z: the face rules run in the linked kernel, on level 0
  // beside finer blocks and on level 1.
  Octree tree({2, 1, 1}, {false, true, false}, 1);
  tree.refine({tree.findLeaf(BlockKey{0, 0, 0, 0})});
  const AmrKernel kernels[] = {AmrKernel::Naive, AmrKernel::Sorted, AmrKernel::Whole};
  std::vector<float> density[3], velocity[3];
  for (int run = 0; run < 3; ++run) {
    AmrLbmSettings settings = test::cpuSettings(lbm::LatticeKind::D3Q27, 0.6);
    settings.kernel = kernels[run];
    settings.faces.face[0].type = lbm::FaceType::Velocity;
    settings.faces.face[0].velocity = lbm::Vector3{0.04f, 0.0f, 0.0f};
    settings.faces.face[1].type = lbm::FaceType::Outflow;
    settings.initialVelocity = {0.02, 0.0, 0.0};
    AmrLbm amr(tree, settings);
    amr.advance(3);
    amr.fetchMoments(density[run], velocity[run]);
  }
  for (int run = 1; run < 3; ++run) {
    EXPECT_EQ(density[0], density[run]) << "kernel " << run;
    EXPECT_EQ(velocity[0], velocity[run]) << "kernel " << run;
  }
  // The inlet's stream has entered: the flow is not the initial one.
  EXPECT_GT(*std::max_element(velocity[0].begin(), velocity[0].end()), 0.021f);
}

TEST(AmrLbm, EveryKernelComputesWhatTheNaiveKernelComputesOnMotherLeafBlocks) {
  // Leaves of 32 cells (33^3 points, the seed's mother-leaf blocks): two root blocks with walls on
  // y and z, the first refined, a sphere across the level 0-1 interface, a body force.
  Octree tree({2, 1, 1}, {true, false, false}, 1);
  tree.refine({0});
  const AmrKernel kernels[] = {AmrKernel::Naive, AmrKernel::Split, AmrKernel::Classes, AmrKernel::Sorted,
                               AmrKernel::Whole};
  std::vector<float> density[5], velocity[5];
  for (int run = 0; run < 5; ++run) {
    AmrLbmSettings settings = test::cpuSettings(lbm::LatticeKind::D3Q19, 0.58);
    settings.acceleration = {1e-5, 0.0, 0.0};
    settings.kernel = kernels[run];
    settings.leafCells = 32;
    AmrLbm amr(tree, settings, [](const double (&x)[3]) {
      return (x[0] - 32) * (x[0] - 32) + (x[1] - 12) * (x[1] - 12) + (x[2] - 14) * (x[2] - 14) < 25.0;
    });
    ASSERT_EQ(amr.layout().blockNodes, 33);
    amr.initialise([](const double (&x)[3], float& rho, float (&u)[3]) {
      rho = static_cast<float>(1.0 + 0.001 * std::cos(0.3 * x[2]));
      u[0] = 0.02f;
      u[1] = static_cast<float>(0.01 * std::sin(0.2 * x[0]));
      u[2] = 0.0f;
    });
    amr.advance(2);
    amr.fetchMoments(density[run], velocity[run]);
  }
  // The flow moved (not a comparison of still states), and every kernel gives the same bits.
  double change = 0.0;
  for (std::size_t p = 0; p < density[0].size(); ++p) change = std::max(change, double(std::abs(velocity[0][3 * p + 2])));
  EXPECT_GT(change, 1e-4);
  for (int run = 1; run < 5; ++run) {
    EXPECT_EQ(density[0], density[run]) << "kernel " << run;
    EXPECT_EQ(velocity[0], velocity[run]) << "kernel " << run;
  }
}

namespace {

// A flow in every direction, a density wave along z: every population of the whole-blocks tree moves.
void wholeBlocksFlow(const double (&x)[3], float& rho, float (&u)[3]) {
  rho = static_cast<float>(1.0 + 0.001 * std::cos(0.3 * x[2]));
  u[0] = static_cast<float>(0.02 + 0.01 * std::sin(0.1 * x[1]));
  u[1] = static_cast<float>(0.01 * std::sin(0.2 * x[0]));
  u[2] = static_cast<float>(0.005 * std::cos(0.15 * x[0]));
}

}  // namespace

TEST(AmrLbm, BlocksSteppedWholeComputeWhatTheNaiveKernelComputes) {
  // Whole blocks on both levels, among them some that read across the periodic faces and two
  // spheres: one across the face between two whole level-0 blocks, one across four whole level-1
  // blocks (bounce-back from a neighbour's solid points), walls in z (bounce-back from the wall),
  // D3Q27 (edge and corner neighbours), a body force; the other blocks run the sorted shells.
  const Octree tree = test::wholeBlocksTree();
  const auto solid = [](const double (&x)[3]) {
    const double a = (x[0] - 56) * (x[0] - 56) + (x[1] - 48) * (x[1] - 48) + (x[2] - 8) * (x[2] - 8);
    const double b = (x[0] - 16) * (x[0] - 16) + (x[1] - 16) * (x[1] - 16) + (x[2] - 8) * (x[2] - 8);
    return a < 25.0 || b < 16.0;
  };
  const AmrKernel kernels[] = {AmrKernel::Naive, AmrKernel::Whole};
  std::vector<float> density[2], velocity[2];
  for (int run = 0; run < 2; ++run) {
    AmrLbmSettings settings = test::cpuSettings(lbm::LatticeKind::D3Q27, 0.6);
    settings.acceleration = {1e-5, 2e-6, 0.0};
    settings.kernel = kernels[run];
    AmrLbm amr(tree, settings, solid);
    if (kernels[run] == AmrKernel::Whole) {
      // Of the 16 roots left, those whose 3 x 3 neighbourhood (periodic) misses the refined 2 x 2:
      // the column i = 3; of the 32 children, the middle 2 x 2 in x and y, both layers in z (walls).
      EXPECT_EQ(amr.blocksSteppedWhole(0), 4);
      EXPECT_EQ(amr.blocksSteppedWhole(1), 8);
    }
    amr.initialise(wholeBlocksFlow);
    amr.advance(3);
    amr.fetchMoments(density[run], velocity[run]);
  }
  double change = 0.0;
  for (std::size_t p = 0; p < density[0].size(); ++p) change = std::max(change, double(std::abs(density[0][p] - 1.0f)));
  EXPECT_GT(change, 1e-4);
  EXPECT_EQ(density[0], density[1]);
  EXPECT_EQ(velocity[0], velocity[1]);
}

TEST(AmrLbm, EveryFacePointOfABlockHasItsOwnSurfaceIndex) {
  // surfaceIndex numbers the points on a block's faces 0 .. surfacePoints(B) - 1, each once (the
  // whole-block kernel finds an interface point's sums through it).
  for (const int B : {3, 4, 5, 17, 33}) {
    std::vector<int> seen(static_cast<std::size_t>(surfacePoints(B)), 0);
    for (int k = 0; k < B; ++k)
      for (int j = 0; j < B; ++j)
        for (int i = 0; i < B; ++i) {
          if (i != 0 && j != 0 && k != 0 && i != B - 1 && j != B - 1 && k != B - 1) continue;
          const int index = surfaceIndex({i, j, k}, B);
          ASSERT_GE(index, 0) << B << ": " << i << " " << j << " " << k;
          ASSERT_LT(index, surfacePoints(B)) << B << ": " << i << " " << j << " " << k;
          ++seen[static_cast<std::size_t>(index)];
        }
    EXPECT_EQ(std::count(seen.begin(), seen.end(), 1), surfacePoints(B)) << B << " points a side";
  }
}

TEST(AmrLbm, TrtAndMrtGiveTheSameBitsWithWholeBlocksAndSortedShells) {
  // The whole-block and sorted kernels with TRT and MRT on both levels of the whole-blocks tree
  // (cross-level rebuilds with the operator's own rescale, a sphere, walls, a body force): the same
  // bits from both; and a flow of its own (not BGK's under another name).
  const Octree tree = test::wholeBlocksTree();
  const auto solid = [](const double (&x)[3]) {
    return (x[0] - 16) * (x[0] - 16) + (x[1] - 16) * (x[1] - 16) + (x[2] - 8) * (x[2] - 8) < 16.0;
  };
  const auto moments = [&](lbm::CollisionKind collision, AmrKernel kernel, std::vector<float>& density,
                           std::vector<float>& velocity) {
    AmrLbmSettings settings = test::cpuSettings(lbm::LatticeKind::D3Q27, 0.56);
    settings.acceleration = {1e-5, 2e-6, 0.0};
    settings.collision = collision;
    settings.kernel = kernel;
    AmrLbm amr(tree, settings, solid);
    amr.initialise(wholeBlocksFlow);
    amr.advance(3);
    amr.fetchMoments(density, velocity);
  };
  std::vector<float> bgkDensity, bgkVelocity;
  moments(lbm::CollisionKind::Bgk, AmrKernel::Whole, bgkDensity, bgkVelocity);
  for (const lbm::CollisionKind collision : {lbm::CollisionKind::Trt, lbm::CollisionKind::Mrt}) {
    SCOPED_TRACE(lbm::collisionName(collision));
    std::vector<float> density[2], velocity[2];
    moments(collision, AmrKernel::Whole, density[0], velocity[0]);
    moments(collision, AmrKernel::Sorted, density[1], velocity[1]);
    EXPECT_EQ(density[0], density[1]);
    EXPECT_EQ(velocity[0], velocity[1]);
    double fromBgk = 0.0;
    for (std::size_t p = 0; p < velocity[0].size(); ++p)
      fromBgk = std::max(fromBgk, double(std::abs(velocity[0][p] - bgkVelocity[p])));
    EXPECT_GT(fromBgk, 1e-6);
  }
}

TEST(AmrLbm, TheVelocityFetchedAloneIsFetchMomentsVelocity) {
  AmrLbm amr(test::wholeBlocksTree(), test::cpuSettings(lbm::LatticeKind::D3Q19, 0.56));
  amr.initialise(wholeBlocksFlow);
  amr.advance(2);
  std::vector<float> density, velocity, alone{-1.0f}, firstBlocks;
  amr.fetchMoments(density, velocity);
  amr.fetchVelocity(alone);
  EXPECT_EQ(alone, velocity);
  // A run's own blocks come first: the first two blocks' velocities.
  amr.fetchVelocity(firstBlocks, 2);
  const std::size_t firstValues = 2 * 3 * static_cast<std::size_t>(amr.layout().pointsPerBlock());
  ASSERT_EQ(firstBlocks.size(), firstValues);
  EXPECT_TRUE(std::equal(firstBlocks.begin(), firstBlocks.end(), velocity.begin()));
}

TEST(AmrLbm, TheKernelComparisonsFormsRefuseOtherCollisionsThanBgk) {
  AmrLbmSettings settings = test::cpuSettings(lbm::LatticeKind::D3Q19, 0.6);
  settings.collision = lbm::CollisionKind::Mrt;
  for (const AmrKernel kernel : {AmrKernel::Naive, AmrKernel::Split, AmrKernel::Streams, AmrKernel::Classes}) {
    settings.kernel = kernel;
    EXPECT_THROW(AmrLbm(Octree({1, 1, 1}, {true, true, true}, 0), settings), std::invalid_argument)
        << amrKernelName(kernel);
  }
}
