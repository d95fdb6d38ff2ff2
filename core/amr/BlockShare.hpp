#pragma once
// The blocks of an octree shared out over several workers (MPI ranks): each owns one contiguous run
// of blocks in block (Morton) order, cut by work, and after each sub-step of a level sends the
// level's blocks that another worker's blocks read. Plain data, no MPI and no solver physics.
#include <array>
#include <cstdint>
#include <vector>

#include "amr/BlockLinks.hpp"

namespace octoflow::amr {

// The blocks [first, end) of the block order; end < 0: every block from `first` on.
struct BlockRun {
  std::int32_t first = 0;
  std::int32_t end = -1;
  bool holds(std::int64_t block) const { return block >= first && (end < 0 || block < end); }
};

// The work of a block of `level` in one step of level 0: its level sub-steps 2^level times.
inline std::int64_t blockWork(int level) { return std::int64_t{1} << level; }

// Where each of `workers` runs begins, and the end of the last (workers + 1 entries): contiguous
// runs in block order whose work is as even as whole blocks allow (a run ends at the first block
// where the work before it reaches its share), none empty. std::invalid_argument when there are
// fewer blocks than workers.
std::vector<std::int32_t> balancedRuns(const BlockLayout& layout, int workers);

// The blocks a worker that steps the run `owned` holds, as a layout of their own: the run's blocks
// first (in order: local index b - owned.first), then the blocks their links lead to (ghosts, in
// block order), the links renumbered. A ghost's links to blocks not held lead nowhere (-1): a ghost
// is read, never stepped. `global`: the block index of each held block. The whole run (every
// block): the layout itself.
BlockLayout heldBlocks(const BlockLayout& layout, const BlockRun& owned, std::vector<std::int32_t>& global);

// The run of worker `worker` of `runStarts` (balancedRuns).
inline BlockRun runOf(const std::vector<std::int32_t>& runStarts, int worker) {
  return BlockRun{runStarts[static_cast<std::size_t>(worker)], runStarts[static_cast<std::size_t>(worker) + 1]};
}

// The work of each worker's run, in one step of level 0 (blockWork units).
std::vector<std::int64_t> runWork(const BlockLayout& layout, const std::vector<std::int32_t>& runStarts);

// The blocks a picture of the run `owned` with a layer of ghost cells reads: the blocks whose box
// meets that of one of the run's blocks grown by one cell of that block's level on every side
// (across periodic faces too; the boxes closed, so blocks that only touch the layer count), the
// run's blocks among them; sorted. Every block that holds a point or cell of the layer is in it.
// `rootBlocks`, `periodic`: the octree's.
std::vector<std::int32_t> blocksAround(const BlockLayout& layout, const BlockRun& owned,
                                       const std::array<int, 3>& rootBlocks, const std::array<bool, 3>& periodic);

// A box of a block's points (local coordinates, inclusive bounds).
// Which state of them is read: a block of the same level reads the post-collision populations, a
// block of another level the pre-collision ones (it rebuilds the populations on its level).
struct BlockBox {
  std::int32_t block = 0;
  std::int32_t lo[3] = {0, 0, 0}, hi[3] = {0, 0, 0};
  bool preCollision = false;
  std::int64_t points() const {
    return std::int64_t{hi[0] - lo[0] + 1} * (hi[1] - lo[1] + 1) * (hi[2] - lo[2] + 1);
  }
};
bool operator<(const BlockBox& a, const BlockBox& b);
bool operator==(const BlockBox& a, const BlockBox& b);

// The points of block `source` that a step of block `reader` can read through `link` (one of the
// reader's links, to `source`): the reader's box seen from the source (the link's offset: across a
// periodic wrap too), grown by the farthest a pull reaches into a neighbour, in the source's spacing:
// 1 at the same level (x - c_q), 2 across levels (a coarse point one coarse spacing out is two fine
// spacings; the cubic interpolation of coarse points takes two on either side), clipped to the block;
// pre-collision state across levels, post-collision at the same level.
BlockBox pointsRead(const RegionLink& link, int blockNodes);

// What one worker sends and receives after each sub-step of a level: per level, per other worker,
// boxes of the level's blocks whose state goes across: of its own blocks that a block of the other
// worker links to, and of the other's blocks its own blocks link to (pointsRead), sorted, a box
// merged into another of the same state where that adds no point. The same lists are worked out by every worker from
// the layout alone.
struct BlockTraffic {
  std::vector<std::vector<std::vector<BlockBox>>> send, receive;  // [level][worker]
};
BlockTraffic blockTraffic(const BlockLayout& layout, const std::vector<std::int32_t>& runStarts, int worker);

}  // namespace octoflow::amr
