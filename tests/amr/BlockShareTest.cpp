// The octree's blocks shared out over ranks (amr/BlockShare.hpp): runs cut by work, and the block
// lists two ranks exchange, which each works out alone, agreeing.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <stdexcept>
#include <tuple>

#include "AmrTestSupport.hpp"
#include "amr/BlockShare.hpp"

using namespace octoflow::amr;

namespace {

std::int64_t largestBlockWork(const BlockLayout& layout) {
  std::int64_t largest = 0;
  for (const BlockPlacement& block : layout.blocks) largest = std::max(largest, blockWork(block.level));
  return largest;
}

}  // namespace

TEST(BlockShare, RunsCoverTheBlocksInOrderWithWorkWithinABlockOfTheirShare) {
  const BlockLayout layout = leafBlocks(test::nestedWholeBlocksTree());
  ASSERT_EQ(layout.levels, 3);
  const std::int64_t largest = largestBlockWork(layout);
  for (int workers = 1; workers <= 8; ++workers) {
    const std::vector<std::int32_t> starts = balancedRuns(layout, workers);
    ASSERT_EQ(starts.size(), static_cast<std::size_t>(workers) + 1);
    EXPECT_EQ(starts.front(), 0);
    EXPECT_EQ(starts.back(), static_cast<std::int32_t>(layout.blocks.size()));
    for (int w = 0; w < workers; ++w) EXPECT_LT(starts[w], starts[w + 1]) << workers << " workers, run " << w;
    const std::vector<std::int64_t> work = runWork(layout, starts);
    std::int64_t total = 0;
    for (const std::int64_t part : work) total += part;
    for (int w = 0; w < workers; ++w) {
      const double share = static_cast<double>(total) / workers;
      EXPECT_LE(std::abs(static_cast<double>(work[w]) - share), static_cast<double>(largest))
          << workers << " workers, run " << w << ": work " << work[w] << ", share " << share;
    }
  }
}

TEST(BlockShare, EveryRunHoldsABlockEvenWhereTheWorkIsUneven) {
  // A block of level 0 before 8 of level 1 (work 1, then 2 each): as many workers as blocks.
  Octree tree({2, 1, 1}, {false, false, false}, 1);
  tree.refine({1});
  const BlockLayout layout = leafBlocks(tree);
  ASSERT_EQ(layout.blocks.size(), 9u);
  const std::vector<std::int32_t> starts = balancedRuns(layout, 9);
  for (int w = 0; w < 9; ++w) EXPECT_EQ(starts[w], w);
  EXPECT_THROW(balancedRuns(layout, 10), std::invalid_argument);
  EXPECT_THROW(balancedRuns(layout, 0), std::invalid_argument);
}

TEST(BlockShare, ASameLevelNeighbourReadsTwoLayersAndACoarserOneTwoSpacingsAround) {
  // 2 x 1 x 1 roots, walls; the second refined: block 0 (level 0) beside 8 children of 16 cells.
  Octree tree({2, 1, 1}, {false, false, false}, 1);
  tree.refine({1});
  const BlockLayout layout = leafBlocks(tree);
  const int B = layout.blockNodes;
  // A child at the interface (x = 0 of level 1) reads block 0 across its lower x face: the coarse
  // points of the half face it covers, two coarse spacings around, and three layers deep (the
  // reader's own box reaches one coarse layer into block 0, its pulls two more).
  const BlockPlacement& child = layout.blocks[1];
  ASSERT_EQ(child.level, 1);
  const RegionLink& coarse = child.links[regionIndex(0, 1, 1)];
  ASSERT_EQ(coarse.block, 0);
  const BlockBox read = pointsRead(coarse, B);
  EXPECT_EQ(read.block, 0);
  EXPECT_TRUE(read.preCollision);  // rebuilt on the reader's level from the pre-collision state
  EXPECT_EQ(read.lo[0], B - 3);
  EXPECT_EQ(read.hi[0], B - 1);
  for (int axis = 1; axis < 3; ++axis) {
    const int half = child.origin[axis] / 2;  // the child's first point, in coarse points
    EXPECT_EQ(read.lo[axis], std::max(half - 2, 0)) << "axis " << axis;
    EXPECT_EQ(read.hi[axis], std::min(half + (B - 1) / 2 + 2, B - 1)) << "axis " << axis;
  }
  // Two children side by side along y read each other's layer next to their shared face and
  // the face itself: two layers.
  for (std::size_t b = 1; b < layout.blocks.size(); ++b) {
    const RegionLink& up = layout.blocks[b].links[regionIndex(1, 3, 1)];
    if (up.block < 0 || up.levelShift != 0) continue;
    const BlockBox layer = pointsRead(up, B);
    EXPECT_FALSE(layer.preCollision);
    EXPECT_EQ(layer.lo[1], 0);
    EXPECT_EQ(layer.hi[1], 1);
    EXPECT_EQ(layer.lo[0], 0);
    EXPECT_EQ(layer.hi[0], B - 1);
  }
}

TEST(BlockShare, WhatOneRankSendsIsWhatTheOtherReceivesAndEveryPointReadTravels) {
  const BlockLayout layout = leafBlocks(test::nestedWholeBlocksTree());
  const int B = layout.blockNodes;
  for (int workers : {1, 2, 3, 8}) {
    const std::vector<std::int32_t> starts = balancedRuns(layout, workers);
    std::vector<BlockTraffic> traffic;
    for (int w = 0; w < workers; ++w) traffic.push_back(blockTraffic(layout, starts, w));
    // Every point read across a cut: (level, owner, reader rank, block, pre-collision state, point).
    std::set<std::tuple<int, int, int, std::int32_t, bool, int>> reads;
    const auto eachPoint = [B](const BlockBox& box, auto&& visit) {
      for (int k = box.lo[2]; k <= box.hi[2]; ++k)
        for (int j = box.lo[1]; j <= box.hi[1]; ++j)
          for (int i = box.lo[0]; i <= box.hi[0]; ++i) visit(i + B * (j + B * k));
    };
    for (int reader = 0; reader < workers; ++reader)
      for (std::int32_t b = starts[reader]; b < starts[reader + 1]; ++b)
        for (const RegionLink& link : layout.blocks[static_cast<std::size_t>(b)].links) {
          if (link.block < 0) continue;
          const int owner = static_cast<int>(std::upper_bound(starts.begin(), starts.end(), link.block) - starts.begin()) - 1;
          if (owner == reader) continue;
          const int level = layout.blocks[static_cast<std::size_t>(link.block)].level;
          const BlockBox read = pointsRead(link, B);
          EXPECT_EQ(read.preCollision, link.levelShift != 0);
          eachPoint(read, [&](int point) { reads.emplace(level, owner, reader, link.block, read.preCollision, point); });
        }
    std::size_t sentPoints = 0;
    std::set<std::tuple<int, int, int, std::int32_t, bool, int>> sent;
    for (int from = 0; from < workers; ++from)
      for (int to = 0; to < workers; ++to)
        for (int level = 0; level < layout.levels; ++level) {
          const std::vector<BlockBox>& boxes = traffic[from].send[level][to];
          EXPECT_EQ(boxes, traffic[to].receive[level][from]) << workers << " workers, " << from << " to " << to;
          EXPECT_TRUE(std::is_sorted(boxes.begin(), boxes.end()));
          for (const BlockBox& box : boxes) {
            EXPECT_TRUE(runOf(starts, from).holds(box.block));
            EXPECT_EQ(layout.blocks[static_cast<std::size_t>(box.block)].level, level);
            sentPoints += static_cast<std::size_t>(box.points());
            eachPoint(box, [&](int point) { sent.emplace(level, from, to, box.block, box.preCollision, point); });
          }
        }
    // Every point read is sent, none that is not, and merged boxes overlap little.
    EXPECT_EQ(sent, reads) << workers << " workers";
    EXPECT_LE(sentPoints, sent.size() + sent.size() / 2) << workers << " workers";
    if (workers > 1) EXPECT_GT(sentPoints, 0u);
  }
}

TEST(BlockShare, HeldBlocksAreTheRunThenTheBlocksItLinksToRenumbered) {
  const BlockLayout layout = leafBlocks(test::nestedWholeBlocksTree());
  std::vector<std::int32_t> global;
  // Every block: the layout itself.
  const BlockLayout whole = heldBlocks(layout, BlockRun{}, global);
  ASSERT_EQ(whole.blocks.size(), layout.blocks.size());
  EXPECT_EQ(whole.byLevel, layout.byLevel);
  EXPECT_EQ(whole.crossLevelSides, layout.crossLevelSides);
  for (std::size_t b = 0; b < layout.blocks.size(); ++b) {
    EXPECT_EQ(global[b], static_cast<std::int32_t>(b));
    for (int r = 0; r < 64; ++r) EXPECT_EQ(whole.blocks[b].links[r].block, layout.blocks[b].links[r].block);
  }
  const std::vector<std::int32_t> starts = balancedRuns(layout, 3);
  const BlockRun run = runOf(starts, 1);
  const BlockLayout held = heldBlocks(layout, run, global);
  const std::int32_t own = run.end - run.first;
  ASSERT_EQ(held.blocks.size(), global.size());
  EXPECT_LT(held.blocks.size(), layout.blocks.size());
  for (std::int32_t h = 0; h < static_cast<std::int32_t>(global.size()); ++h) {
    const BlockPlacement& block = held.blocks[static_cast<std::size_t>(h)];
    const BlockPlacement& original = layout.blocks[static_cast<std::size_t>(global[static_cast<std::size_t>(h)])];
    if (h < own) EXPECT_EQ(global[static_cast<std::size_t>(h)], run.first + h);
    else EXPECT_FALSE(run.holds(global[static_cast<std::size_t>(h)]));  // a ghost
    EXPECT_EQ(block.level, original.level);
    EXPECT_EQ(held.crossLevelSides[static_cast<std::size_t>(h)],
              layout.crossLevelSides[static_cast<std::size_t>(global[static_cast<std::size_t>(h)])]);
    for (int r = 0; r < 64; ++r) {
      const RegionLink& link = block.links[r];
      const RegionLink& was = original.links[r];
      EXPECT_EQ(link.levelShift, was.levelShift);
      if (link.block >= 0)
        EXPECT_EQ(global[static_cast<std::size_t>(link.block)], was.block);
      else if (h < own)
        EXPECT_EQ(was.block, -1) << "an own block's link lost its block";  // own blocks keep every link
    }
  }
  // The ghosts are exactly the blocks the run links to, each once, in block order.
  EXPECT_TRUE(std::is_sorted(global.begin() + own, global.end()));
  EXPECT_EQ(std::adjacent_find(global.begin() + own, global.end()), global.end());
}

// Every block holding a cell of the layer one cell (of each own block's level) around a run's
// blocks, found cell by cell (across periodic faces; at walls the layer is outside and reads
// nothing), is among blocksAround's, as the run's own blocks are; larger runs of small octrees
// read most blocks, and a run of eight on a wide periodic octree leaves blocks out.
TEST(BlockShare, BlocksAroundHoldEveryCellOfTheGhostLayer) {
  struct Case {
    Octree tree;
    int leafCells;
  };
  for (const Case& octree : {Case{test::threeLevelTree(), 16}, Case{test::wholeBlocksTree(), 16},
                             Case{test::wholeBlocksTree(), 32}}) {
    const Octree& tree = octree.tree;
    const BlockLayout layout = leafBlocks(tree, octree.leafCells);
    const int C = layout.blockNodes - 1;
    bool leavesOut = false;
    for (int workers : {1, 2, 3, 8}) {
      const std::vector<std::int32_t> starts = balancedRuns(layout, workers);
      for (int w = 0; w < workers; ++w) {
        const BlockRun run = runOf(starts, w);
        const std::vector<std::int32_t> around = blocksAround(layout, run, tree.rootBlocks(), tree.periodic());
        EXPECT_TRUE(std::is_sorted(around.begin(), around.end()));
        const std::set<std::int32_t> listed(around.begin(), around.end());
        EXPECT_EQ(listed.size(), around.size()) << "a block listed twice";
        leavesOut = leavesOut || around.size() < layout.blocks.size();
        for (std::int32_t b = run.first; b < run.end; ++b) {
          EXPECT_TRUE(listed.count(b)) << "own block " << b << " missing";
          const BlockPlacement& block = layout.blocks[static_cast<std::size_t>(b)];
          const double spacing = std::ldexp(1.0, -block.level);
          for (int k = -1; k <= C; ++k)
            for (int j = -1; j <= C; ++j)
              for (int i = -1; i <= C; ++i) {
                if (i >= 0 && i < C && j >= 0 && j < C && k >= 0 && k < C) continue;  // the block's own cell
                // The cell's centre in level-0 coordinates, wrapped; outside a wall: nothing read.
                const int local[3] = {i, j, k};
                double centre[3];
                bool inside = true;
                for (int axis = 0; axis < 3; ++axis) {
                  double x = (block.origin[axis] + local[axis] + 0.5) * spacing;
                  const double domain = static_cast<double>(tree.rootBlocks()[axis]) * C;
                  if (tree.periodic()[axis]) x = std::fmod(std::fmod(x, domain) + domain, domain);
                  inside = inside && x > 0.0 && x < domain;
                  centre[axis] = x;
                }
                if (!inside) continue;
                for (std::size_t other = 0; other < layout.blocks.size(); ++other) {
                  const BlockPlacement& candidate = layout.blocks[other];
                  const double otherSpacing = std::ldexp(1.0, -candidate.level);
                  bool holds = true;
                  for (int axis = 0; axis < 3; ++axis)
                    holds = holds && centre[axis] > candidate.origin[axis] * otherSpacing &&
                            centre[axis] < (candidate.origin[axis] + C) * otherSpacing;
                  if (holds)
                    EXPECT_TRUE(listed.count(static_cast<std::int32_t>(other)))
                        << workers << " workers, run " << w << ": block " << other << " holds cell (" << i << ", " << j
                        << ", " << k << ") around block " << b;
                }
              }
        }
      }
    }
    EXPECT_TRUE(leavesOut) << "every run reads every block";
  }
}
