#pragma once
// Blocks of node-centred points on the leaves of an octree, and where each block finds the points
// around it (plain data, no solver physics: any block-structured solver on the octree can use it).
//
// A block of level L holds B^3 points, B = 2^m * 16 + 1 (17: one leaf; 33: a mother block), at the
// node spacing of its level; its first point sits at `origin` (node coordinates of its level, from
// the domain's lower corner: level L + 1 has twice the nodes a side). Blocks that touch share the
// points on their common face, edge or corner (node-centred), so a point one step outside a block
// (local coordinate -1 or B) is a point of a neighbouring block, of the same level, of the next
// finer level (it exists there: fine points coincide with every coarse point and lie between them)
// or of the next coarser level (it lies on or between that block's points: interpolated).
//
// The neighbourhood of a block is cut into 4 x 4 x 4 regions, each axis: 0 = beyond the lower face
// (coordinate -1), 1 = lower half (0 .. B/2 - 1), 2 = upper half (B/2 .. B - 1), 3 = beyond the upper
// face (B). The 8 middle regions are the block itself; each of the 56 others links to the one block
// holding its points (2:1 balance makes that one block, at most one level apart).
#include <array>
#include <cstdint>
#include <vector>

#include "amr/Octree.hpp"
#include "common/Macros.hpp"

namespace octoflow::amr {

struct RegionLink {
  std::int32_t block = -1;      // -1: outside the domain (a wall)
  std::int32_t levelShift = 0;  // the linked block's level minus this block's: -1, 0 or +1
  // Local coordinate c of a point s of this block (s in -1 .. B) in the linked block:
  // same level c = s + offset, finer c = 2 s + offset, coarser c = (s + offset) / 2 (odd: halfway
  // between two points, interpolated).
  std::int32_t offset[3] = {0, 0, 0};
};

// Region index of a local coordinate on one axis.
OCTO_HD inline int regionOf(int s, int blockNodes) {
  return s < 0 ? 0 : (s < blockNodes / 2 ? 1 : (s < blockNodes ? 2 : 3));
}
OCTO_HD inline int regionIndex(int rx, int ry, int rz) { return rx + 4 * (ry + 4 * rz); }
OCTO_HD inline bool isOwnRegion(int rx, int ry, int rz) {
  return rx >= 1 && rx <= 2 && ry >= 1 && ry <= 2 && rz >= 1 && rz <= 2;
}

// The index 0 .. 26 of the side of a block at offset (ox, oy, oz), each -1, 0 or +1 (13: the
// block itself): its faces, edges and corners.
OCTO_HD inline int neighbourIndex(int ox, int oy, int oz) { return (ox + 1) + 3 * (oy + 1) + 9 * (oz + 1); }

// How deep into a block another level reads it, in the block's points: a coarse point pulls from
// the fine point one coarse spacing (two fine ones) across the interface; a fine point reads the
// coarse points on the interface (a point shared with a coarser block) or one coarse spacing in (a
// pull from a fine point between two coarse ones). The cubic interpolation's taps lie along the
// interface, not across it.
constexpr int kCrossLevelReach = 2;

namespace detail {
// The sides (neighbourIndex bits) whose offset along `axis` is `component`: those with offset -1
// along x are every third bit from 0, along y three bits in every nine, along z the first nine; the
// others are those moved up by one, three or nine bits a step of the offset.
OCTO_HD constexpr std::uint32_t sidesAlong(int axis, int component) {
  const std::uint32_t lowest = axis == 0 ? 0x1249249u : (axis == 1 ? 0x1C0E07u : 0x1FFu);
  return lowest << ((axis == 0 ? 1 : (axis == 1 ? 3 : 9)) * (component + 1));
}
}  // namespace detail

// Whether point x of a block (B points a side) lies within kCrossLevelReach of one of `sides`
// (BlockLayout::crossLevelSides) on every axis that side lies across: where another level reads
// the block's points.
OCTO_HD OCTO_INLINE bool crossLevelRead(std::uint32_t sides, const int (&x)[3], int B) {
  std::uint32_t near = ~0u;
  OCTO_UNROLL
  for (int axis = 0; axis < 3; ++axis) {
    std::uint32_t along = detail::sidesAlong(axis, 0);
    if (x[axis] <= kCrossLevelReach) along |= detail::sidesAlong(axis, -1);
    if (x[axis] >= B - 1 - kCrossLevelReach) along |= detail::sidesAlong(axis, 1);
    near &= along;
  }
  return (sides & near) != 0;
}

struct BlockPlacement {
  std::int32_t level = 0;
  std::int32_t origin[3] = {0, 0, 0};  // node coordinates of point (0, 0, 0) at the block's level
  RegionLink links[64];
};

// The blocks of an octree with one block a leaf: leafCells + 1 points a side (17^3 for leaves of
// 16 cells; 33^3 for leaves of 32 cells, each the seed's mother-leaf block of 8 sibling leaves of 16).
struct BlockLayout {
  int blockNodes = 17;
  int levels = 1;  // 1 + the deepest level
  std::vector<BlockPlacement> blocks;      // leaf order (Morton)
  std::vector<std::vector<int>> byLevel;   // block indices of each level, in block order
  // Per block, the sides (neighbourIndex bits) across which blocks of another level read it (its
  // points there are interpolated or copied to another level, crossLevelRead): the solver keeps
  // more of their state.
  std::vector<std::uint32_t> crossLevelSides;
  // Whether another level reads block b.
  bool crossLevelSource(std::size_t b) const { return crossLevelSides[b] != 0; }
  // How many blocks keep a pre-collision copy (crossLevelSource).
  std::size_t crossLevelSources() const {
    std::size_t count = 0;
    for (const std::uint32_t sides : crossLevelSides) count += sides != 0 ? 1 : 0;
    return count;
  }

  std::int64_t pointsPerBlock() const {
    return static_cast<std::int64_t>(blockNodes) * blockNodes * blockNodes;
  }
};

// `leafCells`: 16 or 32 (std::invalid_argument otherwise).
BlockLayout leafBlocks(const Octree& octree, int leafCells = 16);

}  // namespace octoflow::amr
