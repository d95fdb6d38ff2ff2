// Dynamic refinement on the octree: a regrid's decision (amr/Regrid, Octree adapted()) and the
// LBM's state moved to the new octree (AmrLbm::adopt).
#include <gtest/gtest.h>
#include <omp.h>

#include <array>
#include <cmath>
#include <map>
#include <optional>
#include <vector>

#include "AmrTestSupport.hpp"
#include "amr/AmrLbm.hpp"
#include "amr/Octree.hpp"
#include "amr/Regrid.hpp"

namespace octoflow::amr {
namespace {

std::vector<LeafChange> allKept(const Octree& tree) { return std::vector<LeafChange>(tree.leafCount(), LeafChange::Keep); }

// A small periodic flow to move across a regrid: velocity x `mean` plus a wave of amplitude `wave`
// across y, a wave along z in velocity y and one along x in the density.
InitialState wavyFlow(double mean, double wave) {
  return [mean, wave](const double (&x)[3], float& density, float (&velocity)[3]) {
    density = static_cast<float>(1.0 + 0.002 * std::sin(0.2 * x[0]));
    velocity[0] = static_cast<float>(mean + wave * std::cos(0.15 * x[1]));
    velocity[1] = static_cast<float>(0.01 * std::sin(0.2 * x[2]));
    velocity[2] = 0.0f;
  };
}

// `tree` with every leaf of level 1 refined.
Octree levelOneRefined(const Octree& tree) {
  std::vector<LeafChange> changes = allKept(tree);
  for (std::size_t n = 0; n < tree.leafCount(); ++n)
    if (tree.leaves()[n].level == 1) changes[n] = LeafChange::Refine;
  return adapted(tree, changes);
}

TEST(OctreeAdapt, RefinesMarkedLeavesAndMergesWholeMarkedFamiliesAboveTheFloor) {
  const Octree roots({2, 2, 2}, {false, false, false}, 2);
  std::vector<LeafChange> changes = allKept(roots);
  changes[3] = LeafChange::Refine;
  const Octree refined = adapted(roots, changes);
  ASSERT_EQ(refined.leafCount(), 15u);
  EXPECT_TRUE(refined.isBalanced());
  for (int c = 0; c < 8; ++c) EXPECT_GE(refined.findLeaf(roots.leaves()[3].child(c)), 0);

  // The family merges when all 8 are marked; 7 of 8 leave it as it is.
  std::vector<LeafChange> merge = allKept(refined);
  for (int c = 0; c < 8; ++c) merge[static_cast<std::size_t>(refined.findLeaf(roots.leaves()[3].child(c)))] = LeafChange::Coarsen;
  EXPECT_EQ(adapted(refined, merge).leaves(), roots.leaves());
  // Not below the floor: refined there, the family stays.
  EXPECT_EQ(adapted(refined, merge, &refined).leaves(), refined.leaves());
  merge[static_cast<std::size_t>(refined.findLeaf(roots.leaves()[3].child(5)))] = LeafChange::Keep;
  EXPECT_EQ(adapted(refined, merge).leaves(), refined.leaves());

  // A leaf at max_level stays; refining next to a coarse leaf balances the tree.
  std::vector<LeafChange> deeper = allKept(refined);
  deeper[static_cast<std::size_t>(refined.findLeaf(roots.leaves()[3].child(0)))] = LeafChange::Refine;
  const Octree twoLevels = adapted(refined, deeper);
  EXPECT_EQ(twoLevels.depth(), 2);
  EXPECT_TRUE(twoLevels.isBalanced());
  std::vector<LeafChange> past = allKept(twoLevels);
  for (std::size_t n = 0; n < past.size(); ++n)
    if (twoLevels.leaves()[n].level == 2) past[n] = LeafChange::Refine;
  EXPECT_EQ(adapted(twoLevels, past).leaves(), twoLevels.leaves());
  EXPECT_THROW(adapted(twoLevels, allKept(refined)), std::invalid_argument);
}

TEST(AmrRegrid, LeavesBetweenTheCoarseningAndRefiningThresholdsKeepTheirLevel) {
  const auto changesOf = [](RegridCriterion criterion, double threshold, std::optional<double> coarsenBelow,
                            const std::vector<double>& indicator) {
    RegridSettings settings;
    settings.criterion = criterion;
    settings.threshold = threshold;
    settings.coarsenBelow = coarsenBelow;
    return regridChanges(indicator, settings);
  };
  using C = LeafChange;
  // The defaults: a field coarsens below its threshold, the vorticity below a quarter of it.
  EXPECT_EQ(changesOf(RegridCriterion::Field, 1.0, std::nullopt, {2.0, 1.0, 0.9}), (std::vector<C>{C::Refine, C::Keep, C::Coarsen}));
  EXPECT_EQ(changesOf(RegridCriterion::Vorticity, 0.01, std::nullopt, {0.02, 0.003, 0.002}),
            (std::vector<C>{C::Refine, C::Keep, C::Coarsen}));
  EXPECT_EQ(changesOf(RegridCriterion::Field, 1.0, 0.5, {2.0, 0.9, 0.5, 0.4}), (std::vector<C>{C::Refine, C::Keep, C::Keep, C::Coarsen}));

  // A leaf of value 1.1 whose children hold 0.9 (a peak seen finer): with the threshold 1 alone it
  // is refined, then merged, then refined again; merged below 0.5 its children stay.
  const Octree root({1, 1, 1}, {false, false, false}, 1);
  for (const std::optional<double> coarsenBelow : {std::optional<double>{}, std::optional<double>{0.5}}) {
    const Octree refined = adapted(root, changesOf(RegridCriterion::Field, 1.0, coarsenBelow, {1.1}));
    ASSERT_EQ(refined.leafCount(), 8u);
    const Octree next = adapted(refined, changesOf(RegridCriterion::Field, 1.0, coarsenBelow, std::vector<double>(8, 0.9)));
    EXPECT_EQ(next.leafCount(), coarsenBelow ? 8u : 1u);
  }
}

// u = U exp(-((y - y0) / w)^2) along x, rho = 1 + A exp(...): a jet whose vorticity lies in one row
// of leaves.
InitialState jet(double y0, double width, double speed, double bump) {
  return [=](const double (&x)[3], float& density, float (&velocity)[3]) {
    const double shape = std::exp(-(x[1] - y0) * (x[1] - y0) / (width * width));
    density = static_cast<float>(1.0 + bump * shape);
    velocity[0] = static_cast<float>(speed * shape);
    velocity[1] = velocity[2] = 0.0f;
  };
}

TEST(AmrRegrid, VorticityRefinesTheLeavesOfAJetAndTheStateMovesWithItsMass) {
  // Four rows of leaves across y; the jet at y = 24 is in the second. Its |du/dy| h peaks at
  // U sqrt(2) / w e^(-1/2) = 0.0143; at the neighbouring rows' edges it is 7e-5.
  const Octree roots({1, 4, 1}, {true, true, true}, 1);
  for (lbm::LatticeKind lattice : {lbm::LatticeKind::D3Q19, lbm::LatticeKind::D3Q27}) {
    AmrLbm coarse(roots, test::cpuSettings(lattice, 0.6));
    coarse.initialise(jet(24.0, 3.0, 0.05, 0.01));
    std::vector<float> density, velocity;
    coarse.fetchMoments(density, velocity);
    const std::vector<double> indicator = blockIndicator(coarse.layout().blockNodes, coarse.layout().blocks.size(), RegridCriterion::Vorticity, velocity.data(), 3, nullptr);
    ASSERT_EQ(indicator.size(), 4u);
    EXPECT_NEAR(indicator[1], 0.05 * std::sqrt(2.0) / 3.0 * std::exp(-0.5), 1.5e-3);
    EXPECT_LT(indicator[0], 1e-4);
    EXPECT_LT(indicator[2], 1e-4);
    RegridSettings settings;
    settings.criterion = RegridCriterion::Vorticity;
    settings.threshold = 0.005;
    const Octree next = adapted(roots, regridChanges(indicator, settings));
    ASSERT_EQ(next.leafCount(), 11u);
    for (const BlockKey& leaf : next.leaves()) EXPECT_EQ(leaf.level == 1, leaf.j / (1 << leaf.level) == 1);

    AmrLbm fine(next, test::cpuSettings(lattice, 0.6));
    fine.adopt(coarse.hostCopy());
    EXPECT_EQ(fine.step(), coarse.step());
    std::vector<float> fineDensity, fineVelocity;
    fine.fetchMoments(fineDensity, fineVelocity);
    // Interpolated linearly, the bump's mass moves within its curvature's error, which the
    // points between coarse ones on either side of its peak cancel (1e-9 measured).
    const double before = coarse.mass(density), after = fine.mass(fineDensity);
    EXPECT_NEAR(after / before, 1.0, 2e-8);
    // Back to the coarse octree: level-0 points are the fine points they coincide with.
    AmrLbm back(roots, test::cpuSettings(lattice, 0.6));
    back.adopt(fine.hostCopy());
    std::vector<float> backDensity, backVelocity;
    back.fetchMoments(backDensity, backVelocity);
    for (std::size_t n = 0; n < density.size(); ++n) ASSERT_NEAR(backDensity[n], density[n], 2e-7) << n;
    for (std::size_t n = 0; n < velocity.size(); ++n) ASSERT_NEAR(backVelocity[n], velocity[n], 2e-7) << n;
  }
}

TEST(AmrRegrid, ALinearFlowMovesToFinerAndCoarserLevelsExactly) {
  // rho = 1 and u linear in space: linear in the populations' moments, so the interpolated points
  // carry the flow's value there. Two root blocks with walls, the first refined and then not.
  const Octree roots({2, 1, 1}, {false, false, false}, 1);
  std::vector<LeafChange> changes = allKept(roots);
  changes[0] = LeafChange::Refine;
  const Octree refined = adapted(roots, changes);
  const auto flow = [](const double (&x)[3], float (&u)[3]) {
    u[0] = static_cast<float>(0.01 + 4e-4 * x[1] - 2e-4 * x[2]);
    u[1] = static_cast<float>(3e-4 * x[0] - 0.005);
    u[2] = static_cast<float>(1e-4 * (x[0] + x[1]));
  };
  AmrLbm coarse(roots, test::cpuSettings(lbm::LatticeKind::D3Q27, 0.8));
  coarse.initialise([&](const double (&x)[3], float& density, float (&velocity)[3]) {
    density = 1.0f;
    flow(x, velocity);
  });
  AmrLbm fine(refined, test::cpuSettings(lbm::LatticeKind::D3Q27, 0.8));
  fine.adopt(coarse.hostCopy());
  std::vector<float> density, velocity;
  fine.fetchMoments(density, velocity);
  const int B = fine.layout().blockNodes;
  std::size_t n = 0;
  for (std::size_t b = 0; b < fine.layout().blocks.size(); ++b)
    for (int k = 0; k < B; ++k)
      for (int j = 0; j < B; ++j)
        for (int i = 0; i < B; ++i, ++n) {
          double x[3];
          fine.position(static_cast<int>(b), i, j, k, x);
          float expected[3];
          flow(x, expected);
          ASSERT_NEAR(density[n], 1.0f, 2e-7) << b << " " << i << " " << j << " " << k;
          for (int axis = 0; axis < 3; ++axis) ASSERT_NEAR(velocity[3 * n + static_cast<std::size_t>(axis)], expected[axis], 1e-6);
        }

  // Back: the second root block never changed level, and keeps its populations bit for bit, but
  // for its face shared with the refined block: a point takes the deepest block holding it, there
  // the finer point it coincides with (so that both blocks sharing it start with one value).
  AmrLbm back(roots, test::cpuSettings(lbm::LatticeKind::D3Q27, 0.8));
  back.adopt(fine.hostCopy());
  const AmrLbmSnapshot original = coarse.snapshot(), returned = back.snapshot();
  const std::size_t points = static_cast<std::size_t>(B * B * B);
  for (std::size_t q = 0; q < 27; ++q)
    for (std::size_t p = 0; p < points; ++p) {
      const std::size_t v = (27 + q) * points + p;  // block 1
      if (p % static_cast<std::size_t>(B) != 0)
        ASSERT_EQ(returned.post[0][v], original.post[0][v]) << q << " " << p;
      else
        ASSERT_NEAR(returned.post[0][v], original.post[0][v], 1e-8) << q << " " << p;
    }
  std::vector<float> backDensity, backVelocity, coarseDensity, coarseVelocity;
  back.fetchMoments(backDensity, backVelocity);
  coarse.fetchMoments(coarseDensity, coarseVelocity);
  for (std::size_t v = 0; v < coarseVelocity.size(); ++v) ASSERT_NEAR(backVelocity[v], coarseVelocity[v], 1e-7) << v;
  EXPECT_THROW(back.adopt(AmrLbm(Octree({1, 1, 1}, {false, false, false}, 1), test::cpuSettings(lbm::LatticeKind::D3Q27, 0.8)).hostCopy()),
               std::invalid_argument);
}

// The velocity at each position of a level-0 node: of the finest block holding it.
std::map<std::array<int, 3>, std::array<float, 4>> velocityAtNodes(AmrLbm& amr) {
  std::vector<float> density, velocity;
  amr.fetchMoments(density, velocity);
  std::map<std::array<int, 3>, std::array<float, 4>> atNode;  // velocity, level
  const int B = amr.layout().blockNodes;
  std::size_t n = 0;
  for (std::size_t b = 0; b < amr.layout().blocks.size(); ++b)
    for (int k = 0; k < B; ++k)
      for (int j = 0; j < B; ++j)
        for (int i = 0; i < B; ++i, ++n) {
          double x[3];
          amr.position(static_cast<int>(b), i, j, k, x);
          if (x[0] != std::floor(x[0]) || x[1] != std::floor(x[1]) || x[2] != std::floor(x[2])) continue;
          const std::array<int, 3> node{static_cast<int>(x[0]), static_cast<int>(x[1]), static_cast<int>(x[2])};
          const float level = static_cast<float>(amr.layout().blocks[b].level);
          auto found = atNode.find(node);
          if (found == atNode.end() || found->second[3] < level)
            atNode[node] = {velocity[3 * n], velocity[3 * n + 1], velocity[3 * n + 2], level};
        }
  return atNode;
}

TEST(AmrRegrid, AForcedFlowKeepsItsVelocityWhenLevelsMergeAndSplit) {
  // A periodic stream under a body force on two levels; merged to one level, then split again. A
  // state keeps the momentum rho (u + a/2) of its own level's acceleration (it halves a level
  // down): taken with the wrong level's, the velocity at a moved point would jump by a/4 = 2.5e-5.
  const Octree roots({2, 1, 1}, {true, true, true}, 1);
  std::vector<LeafChange> changes = allKept(roots);
  changes[0] = LeafChange::Refine;
  const Octree refined = adapted(roots, changes);
  AmrLbmSettings settings = test::cpuSettings(lbm::LatticeKind::D3Q19, 0.7);
  settings.acceleration = {1e-4, 0.0, 0.0};
  settings.initialVelocity = {0.02, 0.0, 0.0};
  AmrLbm twoLevels(refined, settings);
  twoLevels.advance(3);
  AmrLbm oneLevel(roots, settings);
  oneLevel.adopt(twoLevels.hostCopy());
  AmrLbm again(refined, settings);
  again.adopt(oneLevel.hostCopy());
  const auto before = velocityAtNodes(twoLevels), merged = velocityAtNodes(oneLevel), split = velocityAtNodes(again);
  ASSERT_EQ(before.size(), merged.size());
  ASSERT_EQ(before.size(), split.size());
  int moved = 0;
  for (const auto& [node, was] : before) {
    const std::array<float, 4>& one = merged.at(node);
    const std::array<float, 4>& two = split.at(node);
    EXPECT_GT(was[0], 0.02f);  // accelerated
    for (int axis = 0; axis < 3; ++axis) {
      ASSERT_NEAR(one[axis], was[axis], 1e-6) << node[0] << " " << node[1] << " " << node[2] << " axis " << axis;
      ASSERT_NEAR(two[axis], one[axis], 1e-6) << node[0] << " " << node[1] << " " << node[2] << " axis " << axis;
    }
    moved += was[3] != one[3];
  }
  EXPECT_GT(moved, 1000);  // the refined root's nodes changed level
}

// Two periodic root blocks, the first leaf refined twice: three levels in one corner.
Octree cornerRefinedTree() {
  Octree tree({2, 1, 1}, {true, true, true}, 2);
  tree.refine({0});
  tree.refine({0});
  return tree;
}

// A sphere of radius 2.5 among the finest leaves of cornerRefinedTree.
bool sphereInTheFineCorner(const double (&x)[3]) {
  return (x[0] - 10.0) * (x[0] - 10.0) + (x[1] - 10.0) * (x[1] - 10.0) + (x[2] - 6.0) * (x[2] - 6.0) < 2.5 * 2.5;
}

TEST(AmrRegrid, BlocksSharingAPointStartWithOneStateOfIt) {
  // Level 2 beside a level-1 leaf that the regrid refines: their shared face points came from a
  // level-2 block (a copy) and from level 1 (interpolated) before each point chose its deepest
  // source. Blocks of one level that share a point must hold the same populations there, or the
  // copies drift apart (each pulls its in-plane populations from itself).
  const Octree tree = cornerRefinedTree();
  AmrLbmSettings settings = test::cpuSettings(lbm::LatticeKind::D3Q19, 0.6);
  AmrLbm before(tree, settings);
  before.initialise(wavyFlow(0.0, 0.02));
  before.advance(2);
  const Octree next = levelOneRefined(tree);
  ASSERT_GT(next.leafCount(), tree.leafCount());
  AmrLbm after(next, settings);
  after.adopt(before.hostCopy());
  const AmrLbmSnapshot state = after.snapshot();
  const BlockLayout& layout = after.layout();
  const int B = layout.blockNodes;
  const std::size_t N = static_cast<std::size_t>(B * B * B);
  std::map<std::array<std::int64_t, 4>, std::size_t> first;  // (level, position) -> block * N + point
  int shared = 0;
  for (std::size_t b = 0; b < layout.blocks.size(); ++b)
    for (int k = 0; k < B; ++k)
      for (int j = 0; j < B; ++j)
        for (int i = 0; i < B; ++i) {
          const BlockPlacement& block = layout.blocks[b];
          const std::int64_t cells = std::int64_t{16} << block.level;  // a root block at the block's level
          const std::array<std::int64_t, 4> at{block.level, (block.origin[0] + i) % (2 * cells), (block.origin[1] + j) % cells,
                                               (block.origin[2] + k) % cells};
          const std::size_t here = b * N + static_cast<std::size_t>(i + B * (j + B * k));
          const auto [entry, inserted] = first.emplace(at, here);
          if (inserted) continue;
          ++shared;
          const std::size_t there = entry->second;
          for (std::size_t q = 0; q < 19; ++q)
            for (int parity = 0; parity < 2; ++parity)
              ASSERT_EQ(state.post[parity][(here / N * 19 + q) * N + here % N], state.post[parity][(there / N * 19 + q) * N + there % N])
                  << "level " << at[0] << " at " << at[1] << " " << at[2] << " " << at[3];
        }
  EXPECT_GT(shared, 10000);
}

TEST(AmrRegrid, AHandOverStartsTheNewSolverWhereAHostCopyDoes) {
  // A regrid hands the solver's arrays over (AmrLbm::handOver): the blocks that keep their leaf are
  // copied from them, the others made point by point from them where they lie (AdoptPoints). The
  // new solver starts with the bits a whole host copy gives it, refining and merging,
  // around an obstacle; so does a hand-over moved to the host (moveToHost, when the new solver
  // finds no room beside the old arrays). The old solver holds no state after.
  const Octree tree = cornerRefinedTree();
  const AmrLbmSettings settings = test::cpuSettings(lbm::LatticeKind::D3Q19, 0.6);
  const SolidTest sphere = sphereInTheFineCorner;
  const Octree refined = levelOneRefined(tree);
  std::vector<LeafChange> changes = allKept(tree);
  for (std::size_t n = 0; n < tree.leafCount(); ++n)
    if (tree.leaves()[n].level == 2) changes[n] = LeafChange::Coarsen;
  const Octree merged = adapted(tree, changes);
  ASSERT_LT(merged.leafCount(), tree.leafCount());
  for (const Octree* next : {&refined, &merged})
    for (const bool viaHost : {false, true}) {
      AmrLbm before(tree, settings, sphere);
      before.initialise(wavyFlow(0.02, 0.01));
      before.advance(3);
      const AmrLbmHandOver copy = before.hostCopy();
      AmrLbmHandOver handed = before.handOver();
      ASSERT_TRUE(handed.resident);
      EXPECT_TRUE(handed.blocks.empty()) << "every block in the arrays: no host copy";
      EXPECT_TRUE(handed.snapshot.post[0].empty());
      EXPECT_THROW(before.advance(1), std::logic_error);
      if (viaHost) {
        handed.moveToHost();
        EXPECT_FALSE(handed.resident);
        EXPECT_EQ(handed.blocks.size(), before.layout().blocks.size()) << "every block, from the host copy or the arrays";
        EXPECT_EQ(handed.snapshot.post[0], copy.snapshot.post[0]);
        EXPECT_EQ(handed.solid, copy.solid);
      }
      AmrLbm fromCopy(*next, settings, sphere), fromHandOver(*next, settings, sphere);
      fromCopy.adopt(copy);
      fromHandOver.adopt(handed);
      const AmrLbmSnapshot expected = fromCopy.snapshot(), got = fromHandOver.snapshot();
      EXPECT_EQ(got.step, 3);
      EXPECT_EQ(got.parity, expected.parity);
      for (int n = 0; n < 2; ++n) {
        EXPECT_EQ(got.post[n], expected.post[n]) << "post " << n << (viaHost ? ", moved to the host" : "");
        EXPECT_EQ(got.pre[n], expected.pre[n]) << "pre " << n << (viaHost ? ", moved to the host" : "");
      }
      fromCopy.advance(2);
      fromHandOver.advance(2);
      EXPECT_EQ(fromHandOver.obstacleForceByLink(), fromCopy.obstacleForceByLink());
    }
}

TEST(AmrRegrid, TheHostThreadsGiveTheSameBitsWhateverTheirNumber) {
  // A regrid's host work runs on the OpenMP threads a block at a time: the state moved to the new
  // octree (adopt), the obstacle's links and the blocks a rank's new blocks read (adoptedBlocks).
  // One thread and several give the same bits.
  const Octree tree = cornerRefinedTree();
  const AmrLbmSettings settings = test::cpuSettings(lbm::LatticeKind::D3Q19, 0.6);
  const SolidTest sphere = sphereInTheFineCorner;
  AmrLbm before(tree, settings, sphere);
  before.initialise(wavyFlow(0.02, 0.01));
  before.advance(2);
  const Octree next = levelOneRefined(tree);
  const std::vector<std::uint8_t> solid = AmrLbm(next, settings, sphere).hostCopy().solid;
  ASSERT_FALSE(solid.empty());
  const AmrLbmHandOver previous = before.hostCopy();

  struct Result {
    AmrLbmSnapshot state;
    std::vector<double> linkForces;
    std::vector<std::int32_t> read;
  };
  const auto regridOn = [&](int threads) {
    const int was = omp_get_max_threads();
    omp_set_num_threads(threads);
    AmrLbm after(next, settings, solid, previous);
    Result result{after.snapshot(), {}, adoptedBlocks(tree, before.layout(), after.layout())};
    after.advance(1);
    result.linkForces = after.obstacleForceByLink();
    omp_set_num_threads(was);
    return result;
  };
  const Result one = regridOn(1), several = regridOn(4);
  ASSERT_GT(one.linkForces.size(), 100u);
  for (int parity = 0; parity < 2; ++parity) {
    EXPECT_EQ(one.state.post[parity], several.state.post[parity]) << "post " << parity;
    EXPECT_EQ(one.state.pre[parity], several.state.pre[parity]) << "pre " << parity;
  }
  EXPECT_EQ(one.linkForces, several.linkForces);
  EXPECT_EQ(one.read, several.read);
  EXPECT_EQ(one.read.size(), before.layout().blocks.size());
}

TEST(AmrRegrid, TheBlocksARankReadsLeaveOutThoseOnHand) {
  // Over ranks a regrid exchanges the old blocks a rank's new blocks read (adoptedBlocks) less
  // those its own arrays hold (on hand): those it reads where they lie.
  const Octree tree = cornerRefinedTree();
  const BlockLayout layout = leafBlocks(tree, 16);
  std::vector<LeafChange> changes = allKept(tree);
  for (std::size_t n = 0; n < tree.leafCount(); ++n)
    if (tree.leaves()[n].level == 2) changes[n] = LeafChange::Coarsen;
  const BlockLayout merged = leafBlocks(adapted(tree, changes), 16);
  const std::vector<std::int32_t> read = adoptedBlocks(tree, layout, merged);
  std::vector<std::int32_t> onHand(layout.blocks.size(), -1), away;
  for (std::size_t b = 0; b < onHand.size(); b += 2) onHand[b] = static_cast<std::int32_t>(b / 2);
  for (const std::int32_t block : read)
    if (onHand[static_cast<std::size_t>(block)] < 0) away.push_back(block);
  ASSERT_FALSE(away.empty());
  ASSERT_LT(away.size(), read.size());
  EXPECT_EQ(adoptedBlocks(tree, layout, merged, &onHand), away);
  std::vector<std::int32_t> every(layout.blocks.size());
  for (std::size_t b = 0; b < every.size(); ++b) every[b] = static_cast<std::int32_t>(b);
  EXPECT_TRUE(adoptedBlocks(tree, layout, merged, &every).empty());
}

TEST(AmrRegrid, PreCollisionValuesNoLevelReadsAreNeverRead) {
  // A step stores the pre-collision populations of the points other levels read (near the sides of
  // BlockLayout::crossLevelSides, crossLevelRead) and leaves its block's other points as they
  // were. Those others set to NaN, steps around an obstacle and two regrids give the bits they
  // give without: nothing reads them. The regrids refine a level-1 leaf and merge it back, so
  // blocks that keep their leaf are read across sides they were not read across before (their
  // points there are made anew, not copied). Every pre-collision value set to NaN shows that the
  // run reads some.
  const Octree tree = cornerRefinedTree();
  const AmrLbmSettings settings = test::cpuSettings(lbm::LatticeKind::D3Q19, 0.6);
  const SolidTest sphere = sphereInTheFineCorner;
  std::vector<LeafChange> changes = allKept(tree);
  const int farChild = tree.findLeaf(BlockKey{1, 1, 1, 1});
  ASSERT_GE(farChild, 0);
  changes[static_cast<std::size_t>(farChild)] = LeafChange::Refine;
  const Octree refined = adapted(tree, changes);
  {  // a block keeping its leaf, read across a new side
    const BlockLayout before = leafBlocks(tree, 16), after = leafBlocks(refined, 16);
    const int beside = tree.findLeaf(BlockKey{1, 0, 1, 1});
    const std::uint32_t was = before.crossLevelSides[static_cast<std::size_t>(beside)],
                        now = after.crossLevelSides[static_cast<std::size_t>(refined.findLeaf(BlockKey{1, 0, 1, 1}))];
    ASSERT_NE(was, 0u);
    ASSERT_NE(now & ~was, 0u);
  }
  enum class Poison { None, Unread, All };
  std::size_t poisonedPoints = 0, slotPoints = 0;
  const auto run = [&](Poison poison) {
    AmrLbm first(tree, settings, sphere);
    first.initialise(wavyFlow(0.02, 0.01));
    first.advance(2);
    if (poison != Poison::None) {
      AmrLbmSnapshot state = first.snapshot();
      const BlockLayout& layout = first.layout();
      const std::vector<std::int32_t> slots = sourceSlots(layout);
      const int B = layout.blockNodes;
      const std::size_t N = static_cast<std::size_t>(layout.pointsPerBlock()), Q = 19;
      poisonedPoints = slotPoints = 0;
      for (std::size_t b = 0; b < layout.blocks.size(); ++b) {
        if (slots[b] < 0) continue;
        for (int k = 0; k < B; ++k)
          for (int j = 0; j < B; ++j)
            for (int i = 0; i < B; ++i) {
              ++slotPoints;
              if (poison == Poison::Unread && crossLevelRead(layout.crossLevelSides[b], {i, j, k}, B)) continue;
              ++poisonedPoints;
              const std::size_t n = static_cast<std::size_t>(i + B * (j + B * k));
              for (int parity = 0; parity < 2; ++parity)
                for (std::size_t q = 0; q < Q; ++q)
                  state.pre[parity][(static_cast<std::size_t>(slots[b]) * Q + q) * N + n] = std::nanf("");
            }
      }
      first.restore(state);
    }
    first.advance(3);
    AmrLbm finer(refined, settings, sphere);
    finer.adopt(first.handOver());
    finer.advance(3);
    AmrLbm back(tree, settings, sphere);
    back.adopt(finer.handOver());
    back.advance(3);
    return back.snapshot();
  };
  const AmrLbmSnapshot clean = run(Poison::None), unread = run(Poison::Unread);
  EXPECT_GT(poisonedPoints, slotPoints / 3) << "most points of the blocks other levels read are not read";
  EXPECT_LT(poisonedPoints, slotPoints);
  for (int parity = 0; parity < 2; ++parity) EXPECT_EQ(unread.post[parity], clean.post[parity]) << "post " << parity;
  const AmrLbmSnapshot all = run(Poison::All);
  EXPECT_EQ(poisonedPoints, slotPoints);
  EXPECT_NE(all.post[0], clean.post[0]) << "the run reads pre-collision values";
}

}  // namespace
}  // namespace octoflow::amr
