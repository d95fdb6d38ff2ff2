#include "amr/BlockLinks.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace octoflow::amr {

namespace {

// Direction of region r on one axis (-1, 0, +1) and, inside the block's span, which half (0, 1).
int regionDirection(int r) { return r == 0 ? -1 : (r == 3 ? 1 : 0); }

// The side of the block `link` leads to (another level's) that the points of this block's region
// in `direction` lie on: per axis the region leaves this block by, the face of the block read that
// the region's points lie on or beside (within kCrossLevelReach), or none where they lie between its
// faces (a fine block's edge or corner along the middle of a coarse block's face); 0 on the other
// axes (the region runs along them).
std::uint32_t sideRead(const RegionLink& link, const int (&direction)[3], int blockNodes) {
  int side[3] = {0, 0, 0};
  for (int axis = 0; axis < 3; ++axis) {
    if (direction[axis] == 0) continue;
    const int beyond = direction[axis] < 0 ? -1 : blockNodes;  // the region's points on this axis
    // Where they lie in the block read: a finer block's point 2 beyond + offset; in a coarser block
    // (beyond + offset) / 2, on a point or halfway between two.
    int low, high;
    if (link.levelShift > 0) {
      low = high = 2 * beyond + link.offset[axis];
    } else {
      const int doubled = beyond + link.offset[axis];
      low = doubled >> 1;
      high = (doubled + 1) >> 1;
    }
    if (low <= kCrossLevelReach) side[axis] = -1;
    else if (high >= blockNodes - 1 - kCrossLevelReach) side[axis] = 1;
  }
  return 1u << neighbourIndex(side[0], side[1], side[2]);
}

}  // namespace

BlockLayout leafBlocks(const Octree& octree, int leafCells) {
  if (leafCells != 16 && leafCells != 32)
    throw std::invalid_argument("leaf blocks hold 16 or 32 cells a side, not " + std::to_string(leafCells));
  BlockLayout layout;
  layout.blockNodes = leafCells + 1;
  const int cells = leafCells;
  const std::vector<BlockKey>& leaves = octree.leaves();
  layout.blocks.resize(leaves.size());
  layout.levels = octree.depth() + 1;
  layout.byLevel.assign(static_cast<std::size_t>(layout.levels), {});
  layout.crossLevelSides.assign(leaves.size(), 0);
  for (std::size_t b = 0; b < leaves.size(); ++b) {
    const BlockKey& key = leaves[b];
    BlockPlacement& block = layout.blocks[b];
    block.level = key.level;
    const std::int64_t position[3] = {key.i, key.j, key.k};
    for (int axis = 0; axis < 3; ++axis) block.origin[axis] = static_cast<std::int32_t>(position[axis] * cells);
    layout.byLevel[static_cast<std::size_t>(key.level)].push_back(static_cast<int>(b));

    for (int rz = 0; rz < 4; ++rz)
      for (int ry = 0; ry < 4; ++ry)
        for (int rx = 0; rx < 4; ++rx) {
          if (isOwnRegion(rx, ry, rz)) continue;
          RegionLink& link = block.links[regionIndex(rx, ry, rz)];
          const int region[3] = {rx, ry, rz};
          int direction[3];
          for (int axis = 0; axis < 3; ++axis) direction[axis] = regionDirection(region[axis]);
          BlockKey across;  // the block of this level across, wrapped over periodic axes
          if (!octree.shifted(key, direction[0], direction[1], direction[2], across)) continue;  // a wall
          // Unwrapped position of the block across (offsets are taken in this block's frame).
          std::int64_t unwrapped[3];
          for (int axis = 0; axis < 3; ++axis) unwrapped[axis] = position[axis] + direction[axis];

          const int same = octree.findLeaf(across);
          if (same >= 0) {
            link.block = same;
            link.levelShift = 0;
            for (int axis = 0; axis < 3; ++axis) link.offset[axis] = -cells * direction[axis];
            continue;
          }
          const int coarse = octree.coveringLeaf(across);
          if (coarse >= 0) {
            if (octree.leaves()[static_cast<std::size_t>(coarse)].level != key.level - 1)
              throw std::logic_error("block links: the octree is not 2:1 balanced");
            link.block = coarse;
            link.levelShift = -1;
            for (int axis = 0; axis < 3; ++axis) {
              // floor(unwrapped / 2): the coarse block's position, unwrapped like this block's frame
              const std::int64_t coarsePosition = unwrapped[axis] >> 1;
              link.offset[axis] = static_cast<std::int32_t>(position[axis] * cells - 2 * coarsePosition * cells);
            }
            layout.crossLevelSides[static_cast<std::size_t>(coarse)] |= sideRead(link, direction, layout.blockNodes);
            continue;
          }
          // Finer: the child of the block across that holds this region's points.
          int childBits = 0;
          std::int64_t childUnwrapped[3];
          for (int axis = 0; axis < 3; ++axis) {
            int half;
            if (direction[axis] != 0)
              half = direction[axis] < 0 ? 1 : 0;  // the half that faces this block
            else
              half = region[axis] == 1 ? 0 : 1;
            childBits |= half << axis;
            childUnwrapped[axis] = 2 * unwrapped[axis] + half;
          }
          const int fine = octree.findLeaf(across.child(childBits));
          if (fine < 0) throw std::logic_error("block links: the octree is not 2:1 balanced");
          link.block = fine;
          link.levelShift = 1;
          for (int axis = 0; axis < 3; ++axis)
            link.offset[axis] = static_cast<std::int32_t>(2 * position[axis] * cells - childUnwrapped[axis] * cells);
          layout.crossLevelSides[static_cast<std::size_t>(fine)] |= sideRead(link, direction, layout.blockNodes);
        }
  }
  return layout;
}

}  // namespace octoflow::amr
