// The octree LBM over MPI ranks against one solver of the whole octree: density, velocity and the
// obstacle force bit for bit after steps of level 0 on three levels, whatever the number of
// ranks (run under mpirun -np 2, 4 and 8).
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "AmrTestSupport.hpp"
#include "TestSupport.hpp"
#include "amr/AmrLbm.hpp"
#include "parallel/DistributedAmrLbm.hpp"

using namespace octoflow;
using namespace octoflow::amr;

namespace {

// The shared three-level channel (AmrTestSupport.hpp) stepped by `kernel`.
AmrLbmSettings channel(lbm::LatticeKind lattice, lbm::CollisionKind collision, AmrKernel kernel, exec::Backend backend) {
  AmrLbmSettings settings = test::threeLevelChannel(lattice, collision, backend);
  settings.kernel = kernel;
  return settings;
}

// The first value whose bits differ, or the size.
std::size_t firstDifference(const std::vector<float>& a, const std::vector<float>& b) {
  std::size_t n = 0;
  while (n < a.size() && std::memcmp(&a[n], &b[n], sizeof(float)) == 0) ++n;
  return n;
}

// `haloPath`: how the messages must travel over several ranks (DistributedAmrLbm::haloPath).
void expectSameAsOneRank(const AmrLbmSettings& settings, std::int64_t steps, const char* haloPath = "host") {
  // 26 blocks on 3 levels: the runs of 2 to 8 ranks cut across every level's blocks.
  const Octree tree = test::threeLevelTree();
  parallel::DistributedAmrLbm distributed(MPI_COMM_WORLD, tree, settings, test::threeLevelSphere);
  distributed.initialise(test::threeLevelStart);
  distributed.advance(steps);
  std::vector<float> density, velocity;
  distributed.fetchMoments(density, velocity);
  const std::array<double, 3> force = distributed.obstacleForce();
  // Every rank steps blocks of its own, and their state travels.
  const BlockRun own = runOf(distributed.runStarts(), distributed.rank());
  EXPECT_LT(own.first, own.end);
  if (distributed.ranks() > 1) {
    // Ranks of one host with one GPU always reach each other's memory; GPUs without a peer path
    // send through host memory.
    if (std::string(haloPath) != "CUDA IPC" || exec::cudaDevices().size() == 1)
      EXPECT_STREQ(distributed.haloPath(), haloPath);
    EXPECT_GT(distributed.traffic().exchanges, 0);
    EXPECT_GT(distributed.traffic().bytesSent, 0.0);
  }
  // A rank holds its own blocks, then the blocks they link to, and no other.
  const BlockLayout& layout = distributed.layout();
  std::vector<std::int32_t> expectedHeld;
  for (std::int32_t b = own.first; b < own.end; ++b) expectedHeld.push_back(b);
  std::vector<std::int32_t> linked;
  for (std::int32_t b = own.first; b < own.end; ++b)
    for (const RegionLink& link : layout.blocks[static_cast<std::size_t>(b)].links)
      if (link.block >= 0 && !own.holds(link.block)) linked.push_back(link.block);
  std::sort(linked.begin(), linked.end());
  linked.erase(std::unique(linked.begin(), linked.end()), linked.end());
  expectedHeld.insert(expectedHeld.end(), linked.begin(), linked.end());
  EXPECT_EQ(distributed.local().heldBlocks(), expectedHeld);
  if (distributed.ranks() == 8) EXPECT_LT(expectedHeld.size(), layout.blocks.size());

  // The velocity alone, on the last rank: fetchMoments' bits.
  std::vector<float> velocityAlone;
  distributed.fetchVelocity(velocityAlone, distributed.ranks() - 1);
  if (distributed.rank() == distributed.ranks() - 1)
    EXPECT_EQ(firstDifference(velocityAlone, velocity), velocity.size());
  else
    EXPECT_TRUE(velocityAlone.empty());

  // Picked points (a level-0 view's, here every 7th point from the last, one twice) gathered from
  // the ranks stepping them: the gathered moments' values at those points, on every rank or on one.
  std::vector<std::int64_t> picked;
  for (std::int64_t point = static_cast<std::int64_t>(density.size()) - 1; point >= 0; point -= 7) picked.push_back(point);
  picked.push_back(picked[picked.size() / 2]);
  distributed.setPickedPoints(picked);
  for (const int root : {parallel::DistributedAmrLbm::kEveryRank, distributed.ranks() - 1}) {
    std::vector<float> pickedDensity{-1.0f}, pickedVelocity{-1.0f};
    distributed.gatherPickedPoints(pickedDensity, pickedVelocity, root);
    if (root != parallel::DistributedAmrLbm::kEveryRank && distributed.rank() != root) {
      EXPECT_EQ(pickedDensity, std::vector<float>{-1.0f}) << "left as it was";
      EXPECT_EQ(pickedVelocity, std::vector<float>{-1.0f}) << "left as it was";
      continue;
    }
    std::vector<float> expectedPickedDensity, expectedPickedVelocity;
    for (const std::int64_t point : picked) {
      const std::size_t p = static_cast<std::size_t>(point);
      expectedPickedDensity.push_back(density[p]);
      expectedPickedVelocity.insert(expectedPickedVelocity.end(), velocity.begin() + static_cast<std::ptrdiff_t>(3 * p),
                                    velocity.begin() + static_cast<std::ptrdiff_t>(3 * p + 3));
    }
    ASSERT_EQ(pickedDensity.size(), picked.size());
    EXPECT_EQ(firstDifference(pickedDensity, expectedPickedDensity), picked.size());
    EXPECT_EQ(firstDifference(pickedVelocity, expectedPickedVelocity), expectedPickedVelocity.size());
  }
  // Pieces of the picked points: each rank takes every ranks-th position from its own rank's, last
  // first, and all take the first (a position in several pieces): its values alone, as gathered.
  std::vector<std::vector<std::int64_t>> pieces(static_cast<std::size_t>(distributed.ranks()));
  for (int r = 0; r < distributed.ranks(); ++r) {
    for (std::int64_t n = static_cast<std::int64_t>(picked.size()) - 1; n >= 0; --n)
      if (n % distributed.ranks() == r) pieces[static_cast<std::size_t>(r)].push_back(n);
    pieces[static_cast<std::size_t>(r)].push_back(0);
  }
  distributed.setPickedPoints(picked, pieces);
  std::vector<float> pieceDensity{-1.0f}, pieceVelocity;
  distributed.gatherPickedPiece(pieceDensity, pieceVelocity);
  const std::vector<std::int64_t>& myPiece = pieces[static_cast<std::size_t>(distributed.rank())];
  ASSERT_EQ(pieceDensity.size(), myPiece.size());
  ASSERT_EQ(pieceVelocity.size(), 3 * myPiece.size());
  for (std::size_t k = 0; k < myPiece.size(); ++k) {
    const std::size_t p = static_cast<std::size_t>(picked[static_cast<std::size_t>(myPiece[k])]);
    EXPECT_EQ(pieceDensity[k], density[p]) << "piece value " << k << " of rank " << distributed.rank();
    for (int axis = 0; axis < 3; ++axis)
      EXPECT_EQ(pieceVelocity[3 * k + static_cast<std::size_t>(axis)], velocity[3 * p + static_cast<std::size_t>(axis)])
          << "piece value " << k << " of rank " << distributed.rank();
  }
  pieces.push_back({0});
  EXPECT_THROW(distributed.setPickedPoints(picked, pieces), std::invalid_argument) << "a piece a rank";
  pieces.pop_back();
  pieces.back().push_back(static_cast<std::int64_t>(picked.size()));
  EXPECT_THROW(distributed.setPickedPoints(picked, pieces), std::invalid_argument) << "a position past the list";
  // Points of rank 0's blocks alone: the other ranks send none.
  const std::int64_t rankZeroPoints = static_cast<std::int64_t>(distributed.runStarts()[1]) * layout.pointsPerBlock();
  distributed.setPickedPoints({rankZeroPoints - 1, 0});
  std::vector<float> rankZeroDensity, rankZeroVelocity;
  distributed.gatherPickedPoints(rankZeroDensity, rankZeroVelocity);
  EXPECT_EQ(rankZeroDensity, (std::vector<float>{density[static_cast<std::size_t>(rankZeroPoints - 1)], density[0]}));
  EXPECT_THROW(distributed.gatherPickedPiece(rankZeroDensity, rankZeroVelocity), std::logic_error) << "no pieces set";
  EXPECT_THROW(distributed.setPickedPoints({static_cast<std::int64_t>(density.size())}), std::invalid_argument);

  // The blocks around each rank's run, those alone in its arrays, sent by the ranks stepping them:
  // fetchMoments' values, bit for bit.
  const std::size_t perBlock = static_cast<std::size_t>(layout.pointsPerBlock());
  const std::vector<std::int32_t> around = distributed.blocksAround();
  EXPECT_EQ(around, blocksAround(layout, own, tree.rootBlocks(), tree.periodic()));
  if (distributed.ranks() == 8) EXPECT_LT(around.size(), layout.blocks.size());
  std::vector<float> aroundDensity, aroundVelocity;
  distributed.fetchMomentsAround(aroundDensity, aroundVelocity);
  ASSERT_EQ(aroundDensity.size(), around.size() * perBlock);
  ASSERT_EQ(aroundVelocity.size(), 3 * around.size() * perBlock);
  for (std::size_t n = 0; n < around.size(); ++n) {
    const std::size_t block = static_cast<std::size_t>(around[n]);
    EXPECT_EQ(std::memcmp(aroundDensity.data() + n * perBlock, density.data() + block * perBlock, perBlock * sizeof(float)), 0)
        << "rank " << distributed.rank() << ": the density of block " << block << " differs";
    EXPECT_EQ(std::memcmp(aroundVelocity.data() + 3 * n * perBlock, velocity.data() + 3 * block * perBlock,
                          3 * perBlock * sizeof(float)),
              0)
        << "rank " << distributed.rank() << ": the velocity of block " << block << " differs";
  }
  if (distributed.rank() != 0) return;  // one reference, on rank 0

  AmrLbm reference(tree, settings, test::threeLevelSphere);
  reference.initialise(test::threeLevelStart);
  reference.advance(steps);
  std::vector<float> expectedDensity, expectedVelocity;
  reference.fetchMoments(expectedDensity, expectedVelocity);
  ASSERT_EQ(density.size(), expectedDensity.size());
  ASSERT_EQ(velocity.size(), expectedVelocity.size());
  const std::size_t densityDiffers = firstDifference(density, expectedDensity);
  EXPECT_EQ(densityDiffers, density.size()) << "density of point " << densityDiffers << " differs on "
                                            << distributed.ranks() << " ranks";
  const std::size_t velocityDiffers = firstDifference(velocity, expectedVelocity);
  EXPECT_EQ(velocityDiffers, velocity.size()) << "velocity value " << velocityDiffers << " differs on "
                                              << distributed.ranks() << " ranks";
  const std::array<double, 3> expectedForce = reference.obstacleForce();
  for (int axis = 0; axis < 3; ++axis) EXPECT_EQ(force[axis], expectedForce[axis]) << "axis " << axis;
  EXPECT_NE(expectedForce[0], 0.0);
  // The flow has moved from its initial state (a run that steps nothing would match too).
  EXPECT_NE(firstDifference(expectedVelocity, [&] {
              AmrLbm initial(tree, settings, test::threeLevelSphere);
              initial.initialise(test::threeLevelStart);
              std::vector<float> rho, u;
              initial.fetchMoments(rho, u);
              return u;
            }()),
            expectedVelocity.size());
}

}  // namespace

TEST(DistributedAmr, WholeBlockKernelOnThreeLevelsIsBitIdenticalToOneRank) {
  expectSameAsOneRank(channel(lbm::LatticeKind::D3Q19, lbm::CollisionKind::Bgk, AmrKernel::Whole, exec::Backend::Cpu),
                      20);
}

TEST(DistributedAmr, SortedShellsWithMrtOnD3Q27AreBitIdenticalToOneRank) {
  expectSameAsOneRank(channel(lbm::LatticeKind::D3Q27, lbm::CollisionKind::Mrt, AmrKernel::Sorted, exec::Backend::Cpu),
                      11);
}

// CSM: a point's eddy part reads the points around it on its level as they are before its step,
// and a coarse point rebuilt from a finer one takes the fine point's: the copies of other ranks'
// blocks get theirs from their owners once made (DistributedAmrLbm::exchange, Part::Eddy).
TEST(DistributedAmr, CsmWithMrtOnD3Q27IsBitIdenticalToOneRank) {
  AmrLbmSettings settings = channel(lbm::LatticeKind::D3Q27, lbm::CollisionKind::Mrt, AmrKernel::Whole, exec::Backend::Cpu);
  settings.les = lbm::Les::withDefaultConstant(lbm::LesModel::Csm);
  expectSameAsOneRank(settings, 11);
  settings.lattice = lbm::LatticeKind::D3Q19;
  settings.collision = lbm::CollisionKind::Bgk;
  settings.kernel = AmrKernel::Sorted;
  expectSameAsOneRank(settings, 9);
}

TEST(DistributedAmr, NaiveKernelIsBitIdenticalToOneRank) {
  expectSameAsOneRank(channel(lbm::LatticeKind::D3Q19, lbm::CollisionKind::Bgk, AmrKernel::Naive, exec::Backend::Cpu),
                      7);
}

// Ranks of one host (and one GPU, shared, in this test) copy their messages into each other's GPU
// memory (CUDA IPC); with OCTOFLOW_CUDA_IPC=0 through host memory and MPI. Both: one solver's bits.
TEST(DistributedAmr, CudaRanksAreBitIdenticalToOneCudaSolver) {
  OCTO_SKIP_WITHOUT_GPU();
  for (const char* path : {"CUDA IPC", "pinned staging"}) {
    SCOPED_TRACE(path);
    octoflow::testing::ScopedEnvironment ipc("OCTOFLOW_CUDA_IPC", std::string(path) == "CUDA IPC" ? "1" : "0");
    expectSameAsOneRank(channel(lbm::LatticeKind::D3Q27, lbm::CollisionKind::Bgk, AmrKernel::Whole, exec::Backend::Cuda),
                        40, path);
    expectSameAsOneRank(channel(lbm::LatticeKind::D3Q19, lbm::CollisionKind::Trt, AmrKernel::Sorted, exec::Backend::Cuda),
                        40, path);
    AmrLbmSettings csm = channel(lbm::LatticeKind::D3Q27, lbm::CollisionKind::Mrt, AmrKernel::Whole, exec::Backend::Cuda);
    csm.les = lbm::Les::withDefaultConstant(lbm::LesModel::Csm);
    expectSameAsOneRank(csm, 40, path);
  }
}

namespace {

void expectSameBits(const std::vector<float>& actual, const std::vector<float>& expected, const char* what) {
  ASSERT_EQ(actual.size(), expected.size()) << what;
  const std::size_t differs = firstDifference(actual, expected);
  EXPECT_EQ(differs, actual.size()) << what << ": value " << differs << " differs";
}

void expectSameMoments(parallel::DistributedAmrLbm& distributed, AmrLbm& reference, const char* what) {
  std::vector<float> density, velocity, expectedDensity, expectedVelocity;
  distributed.fetchMoments(density, velocity);
  reference.fetchMoments(expectedDensity, expectedVelocity);
  expectSameBits(density, expectedDensity, what);
  expectSameBits(velocity, expectedVelocity, what);
}

// Two runs over ranks started alike (`first`, `second`: what each started from) against one
// solver: the same moments now and `steps` steps on, and the same obstacle force then.
void expectBothGoOnAsOne(parallel::DistributedAmrLbm& first, const std::string& firstWhat,
                         parallel::DistributedAmrLbm& second, const std::string& secondWhat, AmrLbm& one, int steps) {
  expectSameMoments(first, one, firstWhat.c_str());
  expectSameMoments(second, one, secondWhat.c_str());
  first.advance(steps);
  second.advance(steps);
  one.advance(steps);
  const std::string later = ", " + std::to_string(steps) + " steps on";
  expectSameMoments(first, one, (firstWhat + later).c_str());
  expectSameMoments(second, one, (secondWhat + later).c_str());
  EXPECT_EQ(first.obstacleForce(), one.obstacleForce()) << firstWhat << later;
}

}  // namespace

// What a run over ranks needs beyond steps (checkpoints, regrids): the state gathered from the
// ranks is one solver's, bit for bit; ranks restored from one solver's snapshot go on as it does;
// and a regrid over ranks (each rank adopting its run of the new octree's blocks, from every
// block's state gathered or from only the blocks it adopts) equals one solver's regrid, both ways.
TEST(DistributedAmr, SnapshotsRestoresAndRegridsAreOneSolversOverRanks) {
  const AmrLbmSettings settings = channel(lbm::LatticeKind::D3Q19, lbm::CollisionKind::Bgk, AmrKernel::Whole, exec::Backend::Cpu);
  const Octree tree = test::threeLevelTree();
  AmrLbm reference(tree, settings, test::threeLevelSphere);
  reference.initialise(test::threeLevelStart);
  reference.advance(5);
  {
    parallel::DistributedAmrLbm distributed(MPI_COMM_WORLD, tree, settings, test::threeLevelSphere);
    distributed.initialise(test::threeLevelStart);
    distributed.advance(5);
    const AmrLbmSnapshot gathered = distributed.snapshot(), expected = reference.snapshot();
    EXPECT_EQ(gathered.step, expected.step);
    EXPECT_EQ(gathered.parity, expected.parity);
    EXPECT_FALSE(expected.pre[0].empty()) << "blocks read across levels keep pre-collision copies";
    for (int n = 0; n < 2; ++n) {
      expectSameBits(gathered.post[n], expected.post[n], "post-collision state");
      expectSameBits(gathered.pre[n], expected.pre[n], "pre-collision copies");
    }
  }
  parallel::DistributedAmrLbm restored(MPI_COMM_WORLD, tree, settings, test::threeLevelSphere);
  restored.restore(reference.snapshot());
  EXPECT_EQ(restored.step(), 5);
  restored.advance(4);
  reference.advance(4);
  expectSameMoments(restored, reference, "restored, 4 steps on");

  // The regrid: a level-0 leaf refined (its points interpolated from the coarse state).
  Octree finer = tree;
  int coarsest = 0;
  while (finer.leaves()[static_cast<std::size_t>(coarsest)].level != 0) ++coarsest;
  finer.refine({coarsest});
  ASSERT_GT(finer.leaves().size(), tree.leaves().size());
  const AmrLbmHandOver gathered = restored.hostCopy(), one = reference.hostCopy();
  expectSameBits(gathered.snapshot.post[0], one.snapshot.post[0], "host copy");
  EXPECT_EQ(gathered.solid, one.solid);
  EXPECT_EQ(gathered.settings.owned.first, 0);
  EXPECT_EQ(gathered.settings.owned.end, -1);
  const std::vector<std::uint8_t> solid = AmrLbm(finer, settings, test::threeLevelSphere).hostCopy().solid;
  // What a run's regrid sends instead: each rank only the blocks its part of the finer octree
  // adopts, from the ranks stepping them.
  const AmrLbmHandOver partial = restored.hostCopyFor(finer);
  ASSERT_FALSE(partial.blocks.empty());
  EXPECT_TRUE(std::is_sorted(partial.blocks.begin(), partial.blocks.end()));
  EXPECT_EQ(partial.solid.size(), partial.blocks.size() * static_cast<std::size_t>(one.layout.pointsPerBlock()));
  EXPECT_EQ(partial.snapshot.post[0].size() / partial.blocks.size(), one.snapshot.post[0].size() / one.layout.blocks.size());
  parallel::DistributedAmrLbm adopted(MPI_COMM_WORLD, finer, settings, solid, &gathered);
  parallel::DistributedAmrLbm migrated(MPI_COMM_WORLD, finer, settings, solid, &partial);
  AmrLbm regridded(finer, settings, solid, one);
  EXPECT_EQ(adopted.step(), 9);
  EXPECT_EQ(migrated.step(), 9);
  expectBothGoOnAsOne(adopted, "adopted", migrated, "adopted from the blocks sent", regridded, 3);
  // Of 8 ranks' parts, each adopts a few of the 26 blocks: the others were not sent to it, and each
  // block sent is the whole copy's, bit for bit.
  if (migrated.ranks() == 8) EXPECT_LT(partial.blocks.size(), one.layout.blocks.size());
  const std::size_t perBlock = one.snapshot.post[0].size() / one.layout.blocks.size();
  for (std::size_t n = 0; n < partial.blocks.size(); ++n)
    for (int parity = 0; parity < 2; ++parity)
      EXPECT_TRUE(std::equal(partial.snapshot.post[parity].begin() + static_cast<std::ptrdiff_t>(n * perBlock),
                             partial.snapshot.post[parity].begin() + static_cast<std::ptrdiff_t>((n + 1) * perBlock),
                             one.snapshot.post[parity].begin() +
                                 static_cast<std::ptrdiff_t>(static_cast<std::size_t>(partial.blocks[n]) * perBlock)))
          << "block " << partial.blocks[n] << ", parity " << parity;
  // A copy that lacks a block the solver reads is refused.
  AmrLbmHandOver lacking = one;
  lacking.blocks.assign(1, 0);
  for (int parity = 0; parity < 2; ++parity) {
    lacking.snapshot.post[parity].resize(perBlock);
    lacking.snapshot.pre[parity].resize(one.layout.crossLevelSource(0) ? perBlock : 0);
  }
  lacking.solid.resize(one.solid.empty() ? 0 : static_cast<std::size_t>(one.layout.pointsPerBlock()));
  EXPECT_THROW(AmrLbm(finer, settings, solid, lacking), std::invalid_argument);

  // And back to the coarser octree (fine blocks restricted), from the blocks sent.
  const AmrLbmHandOver back = migrated.hostCopyFor(tree);
  parallel::DistributedAmrLbm coarsened(MPI_COMM_WORLD, tree, settings, one.solid, &back);
  AmrLbm coarsenedOnOne(tree, settings, one.solid, regridded.hostCopy());
  expectSameMoments(coarsened, coarsenedOnOne, "coarsened from the blocks sent");
  coarsened.advance(2);
  coarsenedOnOne.advance(2);
  expectSameMoments(coarsened, coarsenedOnOne, "coarsened, 2 steps on");

  // As a run regrids: each rank hands its arrays over (its part of the new octree copied and made
  // from its own old blocks where they lie, the other ranks' blocks it reads sent), and the same
  // hand-over moved to the host (when
  // the next solver finds no room beside the arrays): both start where one solver's regrid does.
  parallel::DistributedAmrLbm twin(MPI_COMM_WORLD, tree, settings, one.solid, &back);
  twin.advance(2);
  const AmrLbmHandOver whole = coarsenedOnOne.hostCopy();
  AmrLbmHandOver handed = coarsened.handOver(finer), movedToHost = twin.handOver(finer);
  ASSERT_TRUE(handed.resident);
  EXPECT_THROW(coarsened.advance(1), std::logic_error) << "the arrays were handed over";
  EXPECT_LE(handed.blocks.size(), partial.blocks.size()) << "its own blocks not sent";
  movedToHost.moveToHost();
  EXPECT_FALSE(movedToHost.resident);
  parallel::DistributedAmrLbm fromArrays(MPI_COMM_WORLD, finer, settings, solid, &handed);
  parallel::DistributedAmrLbm fromHost(MPI_COMM_WORLD, finer, settings, solid, &movedToHost);
  AmrLbm onOne(finer, settings, solid, whole);
  expectBothGoOnAsOne(fromArrays, "from the arrays handed over", fromHost, "from the hand-over moved to the host", onOne, 2);
}
