// Cutting a grid into pieces for MPI ranks: every node owned exactly once, ghost layers where
// neighbours are, and each piece's configuration seeing the whole grid's walls and obstacles.
#include <gtest/gtest.h>

#include <vector>

#include "common/Error.hpp"
#include "parallel/Decomposition.hpp"

using namespace octoflow;
using namespace octoflow::parallel;

TEST(Decomposition, RanksGoToTheLongestAxesAndNeverToFlatOnes) {
  EXPECT_EQ(chooseDims(Extent{256, 128, 128}, 2), (std::array<int, 3>{2, 1, 1}));
  EXPECT_EQ(chooseDims(Extent{40, 30, 1}, 4), (std::array<int, 3>{2, 2, 1}));
  EXPECT_EQ(chooseDims(Extent{64, 64, 64}, 8), (std::array<int, 3>{2, 2, 2}));
  EXPECT_EQ(chooseDims(Extent{64, 64, 64}, 2), (std::array<int, 3>{1, 1, 2}));  // a tie: the slowest axis
  EXPECT_EQ(chooseDims(Extent{100, 10, 10}, 6), (std::array<int, 3>{6, 1, 1}));
  EXPECT_THROW(chooseDims(Extent{1, 1, 1}, 2), Error);
}

TEST(Decomposition, PiecesOwnEveryNodeOnceWithGhostsTowardNeighbours) {
  const Extent whole{23, 17, 5};
  const std::array<int, 3> dims{3, 2, 1};
  const unsigned periodicAxes = 1u;  // x wraps, y does not
  std::vector<int> owners(static_cast<std::size_t>(whole.cellCount()), 0);
  for (int cx = 0; cx < 3; ++cx)
    for (int cy = 0; cy < 2; ++cy) {
      const Piece piece = makePiece(whole, periodicAxes, dims, {cx, cy, 0});
      for (Index k = piece.lo[2]; k < piece.hi[2]; ++k)
        for (Index j = piece.lo[1]; j < piece.hi[1]; ++j)
          for (Index i = piece.lo[0]; i < piece.hi[0]; ++i) ++owners[whole.linear(i, j, k)];
      // x is periodic: ghosts on both sides of every piece; y: only toward the other piece.
      EXPECT_TRUE(piece.ghostLow[0] && piece.ghostHigh[0]);
      EXPECT_EQ(piece.ghostLow[1], cy == 1);
      EXPECT_EQ(piece.ghostHigh[1], cy == 0);
      EXPECT_FALSE(piece.ghostLow[2] || piece.ghostHigh[2]);
      EXPECT_EQ(piece.localExtent().nx, piece.owned(0) + 2);
      EXPECT_EQ(piece.origin(0), piece.lo[0] - 1);
    }
  for (int count : owners) ASSERT_EQ(count, 1);
  EXPECT_THROW(makePiece(Extent{5, 4, 1}, 0u, {3, 1, 1}, {0, 0, 0}), Error);  // a piece under 2 nodes
}

TEST(Decomposition, PieceConfigurationKeepsTheWholeGridsWallsAndObstacles) {
  lbm::UniformSolverConfig whole;
  whole.extent = Extent{12, 6, 1};
  whole.faces.setAxisPeriodic(2);
  whole.faces.face[0].type = lbm::FaceType::Velocity;  // x- inlet, x+ wall (default)
  whole.solid.assign(static_cast<std::size_t>(whole.extent.cellCount()), 0);
  whole.solid[whole.extent.linear(6, 3, 0)] = 1;  // on the first node of the second piece
  const Piece second = makePiece(whole.extent, whole.faces.periodicAxes(), {2, 1, 1}, {1, 0, 0});
  const lbm::UniformSolverConfig config = pieceConfig(whole, second);
  EXPECT_EQ(config.extent.nx, 7);  // 6 owned + a ghost layer at x-
  EXPECT_EQ(config.placement.origin[0], 5);
  EXPECT_EQ(config.ghostFaces, 1u);                                 // x- only
  EXPECT_EQ(config.faces.face[0].type, lbm::FaceType::Periodic);    // the ghost side
  EXPECT_EQ(config.faces.face[1].type, lbm::FaceType::Wall);        // the whole grid's x+ wall
  EXPECT_EQ(config.solid[config.extent.linear(1, 3, 0)], 1);        // whole x = 6 is local x = 1
  const lbm::NodeClassification classes = lbm::classifyNodes(config);
  for (Index j = 0; j < 6; ++j) EXPECT_EQ(classes.kind[config.extent.linear(0, j, 0)], lbm::kGhostNode);
  EXPECT_EQ(classes.kind[config.extent.linear(1, 3, 0)], lbm::kObstacleNode);
  EXPECT_EQ(classes.kind[config.extent.linear(2, 3, 0)], lbm::kBoundaryNode);  // next to the obstacle
}

// A step updates the layers next to the cuts before the halo exchange starts and the rest while
// it runs: together they are every owned node once, no ghost node, and every owned node with a
// ghost neighbour along an axis is in the first part.
TEST(Decomposition, StepUpdatesTheLayersNextToCutsFirstAndEveryOwnedNodeOnce) {
  lbm::UniformSolverConfig whole;
  whole.lattice = lbm::LatticeKind::D3Q19;
  whole.extent = Extent{11, 9, 8};
  whole.faces.setAxisPeriodic(0);  // y and z walls
  const std::array<int, 3> dims{2, 2, 2};
  for (int c = 0; c < 8; ++c) {
    const Piece piece = makePiece(whole.extent, whole.faces.periodicAxes(), dims, {c & 1, (c >> 1) & 1, c >> 2});
    const lbm::UniformSolver solver(pieceConfig(whole, piece), exec::Backend::Cpu);
    const Extent local = piece.localExtent();
    std::vector<int> updates(static_cast<std::size_t>(local.cellCount()), 0), inShell(updates.size(), 0);
    const auto cover = [&](const NodeBox& box, bool shell) {
      for (Index k = box.lo[2]; k < box.lo[2] + box.size.nz; ++k)
        for (Index j = box.lo[1]; j < box.lo[1] + box.size.ny; ++j)
          for (Index i = box.lo[0]; i < box.lo[0] + box.size.nx; ++i) {
            ++updates[local.linear(i, j, k)];
            inShell[local.linear(i, j, k)] = shell;
          }
    };
    for (const NodeBox& box : solver.shellBoxes()) cover(box, true);
    cover(solver.interiorBox(), false);
    for (Index k = 0; k < local.nz; ++k)
      for (Index j = 0; j < local.ny; ++j)
        for (Index i = 0; i < local.nx; ++i) {
          const Index position[3] = {i, j, k};
          bool owned = true, besideGhost = false;
          for (int axis = 0; axis < 3; ++axis) {
            owned = owned && position[axis] >= piece.ownedBegin(axis) && position[axis] < piece.ownedEnd(axis);
            besideGhost = besideGhost || (piece.ghostLow[axis] && position[axis] == piece.ownedBegin(axis)) ||
                          (piece.ghostHigh[axis] && position[axis] == piece.ownedEnd(axis) - 1);
          }
          const Index node = local.linear(i, j, k);
          ASSERT_EQ(updates[node], owned ? 1 : 0) << "piece " << c << " node " << i << "," << j << "," << k;
          if (owned) EXPECT_EQ(inShell[node] == 1, besideGhost) << "piece " << c << " node " << i << "," << j << "," << k;
        }
  }
}
