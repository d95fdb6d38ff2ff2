// Links between the blocks of an octree: every point one step outside a block is found, at its
// exact position, in the block its region links to (same level, finer or coarser).
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "amr/BlockLinks.hpp"
#include "amr/BlockShare.hpp"

using namespace octoflow::amr;

namespace {

// Refines random leaves (balanced after each call), deterministically.
Octree randomTree(std::array<int, 3> roots, std::array<bool, 3> periodic, int maxLevel, int refinements,
                  unsigned seed) {
  Octree tree(roots, periodic, maxLevel);
  std::mt19937 random(seed);
  for (int r = 0; r < refinements; ++r) {
    std::uniform_int_distribution<int> pick(0, static_cast<int>(tree.leafCount()) - 1);
    tree.refine({pick(random)});
  }
  return tree;
}

// Position of local coordinate s (on one axis) of a block, in level-0 node units, wrapped into the
// domain on periodic axes.
double wrapped(double position, double length, bool periodic) {
  if (!periodic) return position;
  double value = std::fmod(position, length);
  return value < 0 ? value + length : value;
}

void checkLinks(const Octree& tree) {
  const BlockLayout layout = leafBlocks(tree);
  const int B = layout.blockNodes;
  ASSERT_EQ(layout.blocks.size(), tree.leafCount());
  double length[3];
  for (int axis = 0; axis < 3; ++axis) length[axis] = tree.rootBlocks()[axis] * (B - 1.0);
  // Samples of each region on each axis: -1; 0, B/2 - 1; B/2, B - 1; B.
  const int samples[4][2] = {{-1, -1}, {0, B / 2 - 1}, {B / 2, B - 1}, {B, B}};
  for (std::size_t b = 0; b < layout.blocks.size(); ++b) {
    const BlockPlacement& block = layout.blocks[b];
    for (int rz = 0; rz < 4; ++rz)
      for (int ry = 0; ry < 4; ++ry)
        for (int rx = 0; rx < 4; ++rx) {
          if (isOwnRegion(rx, ry, rz)) continue;
          const RegionLink& link = block.links[regionIndex(rx, ry, rz)];
          const int region[3] = {rx, ry, rz};
          for (int corner = 0; corner < 8; ++corner) {
            int s[3];
            for (int axis = 0; axis < 3; ++axis) s[axis] = samples[region[axis]][(corner >> axis) & 1];
            for (int axis = 0; axis < 3; ++axis) ASSERT_EQ(regionOf(s[axis], B), region[axis]);
            bool outside = false;
            for (int axis = 0; axis < 3; ++axis) {
              const double p = std::ldexp(static_cast<double>(block.origin[axis] + s[axis]), -block.level);
              if (!tree.periodic()[axis] && (p < 0 || p > length[axis])) outside = true;
            }
            if (outside) {
              EXPECT_EQ(link.block, -1) << "block " << b << " region " << rx << ry << rz;
              continue;
            }
            ASSERT_GE(link.block, 0) << "block " << b << " region " << rx << ry << rz;
            const BlockPlacement& target = layout.blocks[static_cast<std::size_t>(link.block)];
            ASSERT_EQ(target.level, block.level + link.levelShift);
            for (int axis = 0; axis < 3; ++axis) {
              double local;  // in the target block's point units
              if (link.levelShift == 0)
                local = s[axis] + link.offset[axis];
              else if (link.levelShift > 0)
                local = 2.0 * s[axis] + link.offset[axis];
              else
                local = 0.5 * (s[axis] + link.offset[axis]);
              ASSERT_GE(local, 0.0);
              ASSERT_LE(local, B - 1.0);
              const double here = std::ldexp(static_cast<double>(block.origin[axis] + s[axis]), -block.level);
              const double there = std::ldexp(target.origin[axis] + local, -target.level);
              EXPECT_DOUBLE_EQ(wrapped(here, length[axis], tree.periodic()[axis]),
                               wrapped(there, length[axis], tree.periodic()[axis]))
                  << "block " << b << " region " << rx << ry << rz << " axis " << axis;
            }
          }
        }
  }
}

}  // namespace

TEST(BlockLinks, OneLevelPeriodicLinksWrap) {
  const Octree tree({2, 3, 1}, {true, true, true}, 0);
  checkLinks(tree);
  const BlockLayout layout = leafBlocks(tree);
  // A single block along z links to itself across both z faces.
  const RegionLink& up = layout.blocks[0].links[regionIndex(1, 1, 3)];
  EXPECT_EQ(up.block, 0);
  EXPECT_EQ(up.offset[2], -16);
  for (const std::uint32_t sides : layout.crossLevelSides) EXPECT_EQ(sides, 0u);
}

TEST(BlockLinks, RandomBalancedTreesLinkEveryPointToItsPosition) {
  checkLinks(randomTree({2, 2, 2}, {false, false, false}, 3, 12, 7));
  checkLinks(randomTree({2, 1, 3}, {true, false, true}, 3, 12, 11));
  checkLinks(randomTree({1, 1, 1}, {true, true, true}, 4, 20, 5));
}

TEST(BlockLinks, CrossLevelSourcesAreTheBlocksAtInterfaces) {
  Octree tree({2, 2, 2}, {false, false, false}, 2);
  tree.refine({0});
  const BlockLayout layout = leafBlocks(tree);
  ASSERT_EQ(layout.levels, 2);
  int sources = 0;
  for (std::size_t b = 0; b < layout.blocks.size(); ++b) sources += layout.crossLevelSource(b);
  // All 7 coarse blocks touch the refined corner; of its 8 children, only the one in the domain's
  // corner touches no coarse block.
  EXPECT_EQ(sources, 7 + 7);
  // The sides they are read across: a coarse block across the refined corner's face, edge or corner
  // on that side alone; the fine block in the refined block's far corner on its 7 sides towards
  // the coarse blocks.
  const auto sidesOf = [&](BlockKey key) {
    const int leaf = tree.findLeaf(key);
    EXPECT_GE(leaf, 0);
    return layout.crossLevelSides[static_cast<std::size_t>(leaf)];
  };
  EXPECT_EQ(sidesOf(BlockKey{0, 1, 0, 0}), 1u << neighbourIndex(-1, 0, 0));
  EXPECT_EQ(sidesOf(BlockKey{0, 1, 1, 0}), 1u << neighbourIndex(-1, -1, 0));
  EXPECT_EQ(sidesOf(BlockKey{0, 1, 1, 1}), 1u << neighbourIndex(-1, -1, -1));
  std::uint32_t farSides = 0;
  for (int side = 0; side < 27; ++side)
    if (side != 13 && side % 3 != 0 && (side / 3) % 3 != 0 && side / 9 != 0) farSides |= 1u << side;
  EXPECT_EQ(sidesOf(BlockKey{1, 1, 1, 1}), farSides);
  EXPECT_EQ(sidesOf(BlockKey{1, 0, 0, 0}), 0u);
}

// Every point a block of another level may read of block `link.block` through a region of a block
// lies where crossLevelRead says its pre-collision state is stored: from a finer block the point a
// pull's source coincides with; from a coarser one the taps around a pull's source one step out
// and around a point on the block's face (a point shared with the coarser block), up to the cubic
// interpolation's four a side; and so do the points a rank sends for such a read.
void checkCrossLevelReads(const Octree& tree) {
  const BlockLayout layout = leafBlocks(tree);
  const int B = layout.blockNodes;
  int reads = 0;
  for (const BlockPlacement& block : layout.blocks)
    for (int rz = 0; rz < 4; ++rz)
      for (int ry = 0; ry < 4; ++ry)
        for (int rx = 0; rx < 4; ++rx) {
          const RegionLink& link = block.links[regionIndex(rx, ry, rz)];
          if (isOwnRegion(rx, ry, rz) || link.block < 0 || link.levelShift == 0) continue;
          const std::uint32_t sides = layout.crossLevelSides[static_cast<std::size_t>(link.block)];
          // What a rank sends of the block for this link (BlockShare's pointsRead, the reads grown
          // by two points) lies there too: no message carries a value no step stored.
          const BlockBox sent = pointsRead(link, B);
          for (int k = sent.lo[2]; k <= sent.hi[2]; ++k)
            for (int j = sent.lo[1]; j <= sent.hi[1]; ++j)
              for (int i = sent.lo[0]; i <= sent.hi[0]; ++i)
                ASSERT_TRUE(crossLevelRead(sides, {i, j, k}, B))
                    << "block " << link.block << " point " << i << " " << j << " " << k << " sent to level " << block.level;
          const int region[3] = {rx, ry, rz};
          int first[3], last[3];
          for (int axis = 0; axis < 3; ++axis) {
            first[axis] = region[axis] == 0 ? -1 : (region[axis] == 3 ? B : (region[axis] == 1 ? 0 : B / 2));
            last[axis] = region[axis] == 0 ? 0 : (region[axis] == 3 ? B - 1 : (region[axis] == 1 ? B / 2 - 1 : B - 1));
            if (link.levelShift > 0 && (region[axis] == 0 || region[axis] == 3)) last[axis] = first[axis];
          }
          for (int k = std::min(first[2], last[2]); k <= std::max(first[2], last[2]); ++k)
            for (int j = std::min(first[1], last[1]); j <= std::max(first[1], last[1]); ++j)
              for (int i = std::min(first[0], last[0]); i <= std::max(first[0], last[0]); ++i) {
                const int s[3] = {i, j, k};
                int low[3], high[3];
                for (int axis = 0; axis < 3; ++axis) {
                  if (link.levelShift > 0) {
                    low[axis] = high[axis] = 2 * s[axis] + link.offset[axis];
                  } else {
                    const int doubled = s[axis] + link.offset[axis];
                    low[axis] = std::max((doubled >> 1) - ((doubled & 1) ? 1 : 0), 0);
                    high[axis] = std::min(((doubled + 1) >> 1) + ((doubled & 1) ? 1 : 0), B - 1);
                  }
                }
                for (int c = low[2]; c <= high[2]; ++c)
                  for (int b = low[1]; b <= high[1]; ++b)
                    for (int a = low[0]; a <= high[0]; ++a) {
                      ASSERT_TRUE(a >= 0 && a < B && b >= 0 && b < B && c >= 0 && c < B);
                      ASSERT_TRUE(crossLevelRead(sides, {a, b, c}, B))
                          << "block " << link.block << " point " << a << " " << b << " " << c << " read from level "
                          << block.level;
                      ++reads;
                    }
              }
        }
  EXPECT_GT(reads, 0);
}

TEST(BlockLinks, EveryCrossLevelReadLiesWhereThePreCollisionStateIsStored) {
  checkCrossLevelReads(randomTree({2, 2, 2}, {false, false, false}, 3, 12, 7));
  checkCrossLevelReads(randomTree({2, 1, 3}, {true, false, true}, 3, 12, 11));
  checkCrossLevelReads(randomTree({1, 1, 1}, {true, true, true}, 4, 20, 5));
}

TEST(BlockLinks, TheCrossLevelReadsReachTwoPointsIntoTheSidesRead) {
  for (int axis = 0; axis < 3; ++axis)
    for (int component = -1; component <= 1; ++component)
      for (int ox = -1; ox <= 1; ++ox)
        for (int oy = -1; oy <= 1; ++oy)
          for (int oz = -1; oz <= 1; ++oz) {
            const int offset[3] = {ox, oy, oz};
            EXPECT_EQ((detail::sidesAlong(axis, component) >> neighbourIndex(ox, oy, oz)) & 1u,
                      offset[axis] == component ? 1u : 0u);
          }
  const int B = 17;
  const std::uint32_t face = 1u << neighbourIndex(-1, 0, 0), edge = 1u << neighbourIndex(1, 1, 0);
  EXPECT_TRUE(crossLevelRead(face, {0, 8, 8}, B));
  EXPECT_TRUE(crossLevelRead(face, {2, 0, 16}, B));
  EXPECT_FALSE(crossLevelRead(face, {3, 8, 8}, B));
  EXPECT_FALSE(crossLevelRead(face, {16, 8, 8}, B));
  EXPECT_TRUE(crossLevelRead(edge, {14, 16, 3}, B));
  EXPECT_FALSE(crossLevelRead(edge, {14, 13, 3}, B));
  EXPECT_FALSE(crossLevelRead(edge, {16, 8, 3}, B)) << "on the face, not near the edge";
  EXPECT_TRUE(crossLevelRead(face | edge, {16, 16, 0}, B));
  EXPECT_FALSE(crossLevelRead(0u, {0, 0, 0}, B));
}
