#include "amr/BlockShare.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <tuple>

namespace octoflow::amr {

std::vector<std::int32_t> balancedRuns(const BlockLayout& layout, int workers) {
  const std::int64_t blocks = static_cast<std::int64_t>(layout.blocks.size());
  if (workers < 1 || blocks < workers)
    throw std::invalid_argument("the octree's " + std::to_string(blocks) + " blocks cannot be shared by " +
                                std::to_string(workers) + " ranks: fewer ranks, or a finer octree");
  std::int64_t total = 0;
  for (const BlockPlacement& block : layout.blocks) total += blockWork(block.level);
  std::vector<std::int32_t> starts(static_cast<std::size_t>(workers) + 1, 0);
  starts.back() = static_cast<std::int32_t>(blocks);
  std::int64_t before = 0;  // work of the blocks before `b`
  std::int64_t b = 0;
  for (int worker = 1; worker < workers; ++worker) {
    // The first block where the work before it reaches this worker's share (worker / workers of
    // the total), kept so that every run holds a block.
    while (b < blocks && before * workers < worker * total) before += blockWork(layout.blocks[static_cast<std::size_t>(b++)].level);
    const std::int64_t lowest = starts[static_cast<std::size_t>(worker) - 1] + 1;
    const std::int64_t highest = blocks - (workers - worker);
    const std::int64_t start = std::clamp(b, lowest, highest);
    while (b < start) before += blockWork(layout.blocks[static_cast<std::size_t>(b++)].level);
    while (b > start) before -= blockWork(layout.blocks[static_cast<std::size_t>(--b)].level);
    starts[static_cast<std::size_t>(worker)] = static_cast<std::int32_t>(start);
  }
  return starts;
}

BlockLayout heldBlocks(const BlockLayout& layout, const BlockRun& owned, std::vector<std::int32_t>& global) {
  const std::int32_t count = static_cast<std::int32_t>(layout.blocks.size());
  const std::int32_t end = owned.end < 0 ? count : owned.end;
  global.clear();
  for (std::int32_t b = owned.first; b < end; ++b) global.push_back(b);
  std::vector<std::int32_t> local(layout.blocks.size(), -1);
  for (std::int32_t b = owned.first; b < end; ++b) local[static_cast<std::size_t>(b)] = b - owned.first;
  std::vector<std::int32_t> ghosts;
  for (std::int32_t b = owned.first; b < end; ++b)
    for (const RegionLink& link : layout.blocks[static_cast<std::size_t>(b)].links)
      if (link.block >= 0 && local[static_cast<std::size_t>(link.block)] < 0) ghosts.push_back(link.block);
  std::sort(ghosts.begin(), ghosts.end());
  ghosts.erase(std::unique(ghosts.begin(), ghosts.end()), ghosts.end());
  for (const std::int32_t b : ghosts) {
    local[static_cast<std::size_t>(b)] = static_cast<std::int32_t>(global.size());
    global.push_back(b);
  }
  BlockLayout held;
  held.blockNodes = layout.blockNodes;
  held.levels = layout.levels;
  held.byLevel.assign(static_cast<std::size_t>(layout.levels), {});
  for (std::size_t h = 0; h < global.size(); ++h) {
    const std::size_t b = static_cast<std::size_t>(global[h]);
    BlockPlacement block = layout.blocks[b];
    for (RegionLink& link : block.links)
      if (link.block >= 0) link.block = local[static_cast<std::size_t>(link.block)];
    held.byLevel[static_cast<std::size_t>(block.level)].push_back(static_cast<int>(h));
    held.blocks.push_back(block);
    held.crossLevelSides.push_back(layout.crossLevelSides[b]);
  }
  return held;
}

std::vector<std::int64_t> runWork(const BlockLayout& layout, const std::vector<std::int32_t>& runStarts) {
  std::vector<std::int64_t> work(runStarts.size() - 1, 0);
  for (std::size_t worker = 0; worker + 1 < runStarts.size(); ++worker)
    for (std::int32_t b = runStarts[worker]; b < runStarts[worker + 1]; ++b)
      work[worker] += blockWork(layout.blocks[static_cast<std::size_t>(b)].level);
  return work;
}

std::vector<std::int32_t> blocksAround(const BlockLayout& layout, const BlockRun& owned,
                                       const std::array<int, 3>& rootBlocks, const std::array<bool, 3>& periodic) {
  // Boxes in node coordinates of the finest level; every block lies in one root block, so the
  // blocks are sorted into their root blocks and a grown box looks in the root blocks it meets.
  const int finest = layout.levels - 1;
  const std::int64_t cells = layout.blockNodes - 1;
  const auto scale = [&](int level) { return std::int64_t{1} << (finest - level); };
  const std::int64_t rootSize = cells * scale(0);
  const auto rootIndex = [&](const std::array<std::int64_t, 3>& root) {
    return static_cast<std::size_t>(root[0] + rootBlocks[0] * (root[1] + std::int64_t{rootBlocks[1]} * root[2]));
  };
  std::vector<std::vector<std::int32_t>> inRoot(static_cast<std::size_t>(rootBlocks[0]) * rootBlocks[1] * rootBlocks[2]);
  for (std::size_t b = 0; b < layout.blocks.size(); ++b) {
    const BlockPlacement& block = layout.blocks[b];
    std::array<std::int64_t, 3> root{};
    for (int axis = 0; axis < 3; ++axis) root[axis] = block.origin[axis] * scale(block.level) / rootSize;
    inRoot[rootIndex(root)].push_back(static_cast<std::int32_t>(b));
  }
  const auto floorDiv = [](std::int64_t a, std::int64_t b) { return a / b - (a % b != 0 && a < 0 ? 1 : 0); };
  std::vector<std::uint8_t> around(layout.blocks.size(), 0);
  const std::int32_t end = owned.end < 0 ? static_cast<std::int32_t>(layout.blocks.size()) : owned.end;
  for (std::int32_t b = owned.first; b < end; ++b) {
    const BlockPlacement& block = layout.blocks[static_cast<std::size_t>(b)];
    const std::int64_t unit = scale(block.level);
    std::int64_t lo[3], hi[3], firstRoot[3], lastRoot[3];
    for (int axis = 0; axis < 3; ++axis) {
      lo[axis] = (block.origin[axis] - 1) * unit;
      hi[axis] = (block.origin[axis] + cells + 1) * unit;
      firstRoot[axis] = floorDiv(lo[axis], rootSize);
      lastRoot[axis] = floorDiv(hi[axis], rootSize);
    }
    for (std::int64_t rz = firstRoot[2]; rz <= lastRoot[2]; ++rz)
      for (std::int64_t ry = firstRoot[1]; ry <= lastRoot[1]; ++ry)
        for (std::int64_t rx = firstRoot[0]; rx <= lastRoot[0]; ++rx) {
          // The root block there, or its periodic image (`shift`: where the image lies).
          const std::int64_t at[3] = {rx, ry, rz};
          std::array<std::int64_t, 3> root{};
          std::int64_t shift[3];
          bool inside = true;
          for (int axis = 0; axis < 3; ++axis) {
            const std::int64_t count = rootBlocks[static_cast<std::size_t>(axis)];
            root[axis] = periodic[static_cast<std::size_t>(axis)] ? ((at[axis] % count) + count) % count : at[axis];
            inside = inside && root[axis] >= 0 && root[axis] < count;
            shift[axis] = (at[axis] - root[axis]) * rootSize;
          }
          if (!inside) continue;
          for (const std::int32_t other : inRoot[rootIndex(root)]) {
            const BlockPlacement& candidate = layout.blocks[static_cast<std::size_t>(other)];
            const std::int64_t otherUnit = scale(candidate.level);
            bool meets = true;
            for (int axis = 0; axis < 3; ++axis) {
              const std::int64_t first = candidate.origin[axis] * otherUnit + shift[axis];
              meets = meets && first <= hi[axis] && first + cells * otherUnit >= lo[axis];
            }
            if (meets) around[static_cast<std::size_t>(other)] = 1;
          }
        }
  }
  std::vector<std::int32_t> blocks;
  for (std::size_t b = 0; b < around.size(); ++b)
    if (around[b]) blocks.push_back(static_cast<std::int32_t>(b));
  return blocks;
}

bool operator<(const BlockBox& a, const BlockBox& b) {
  return std::tie(a.block, a.preCollision, a.lo[2], a.lo[1], a.lo[0], a.hi[2], a.hi[1], a.hi[0]) <
         std::tie(b.block, b.preCollision, b.lo[2], b.lo[1], b.lo[0], b.hi[2], b.hi[1], b.hi[0]);
}

bool operator==(const BlockBox& a, const BlockBox& b) { return !(a < b) && !(b < a); }

BlockBox pointsRead(const RegionLink& link, int blockNodes) {
  const int last = blockNodes - 1;
  const int reach = link.levelShift == 0 ? 1 : 2;
  BlockBox box;
  box.block = link.block;
  box.preCollision = link.levelShift != 0;
  for (int axis = 0; axis < 3; ++axis) {
    const int offset = link.offset[axis];
    int lo = offset, hi = last + offset;  // the reader's points 0 .. B - 1 in the source's frame
    if (link.levelShift > 0) {
      hi = 2 * last + offset;
    } else if (link.levelShift < 0) {
      lo = offset >> 1;             // floor
      hi = (last + offset + 1) >> 1;  // ceiling
    }
    box.lo[axis] = std::max(lo - reach, 0);
    box.hi[axis] = std::min(hi + reach, last);
  }
  return box;
}

namespace {

// Whether `a` and `b` (boxes of one block and state) make one box with no point beyond them: one
// holds the other, or they agree on two axes and overlap or touch on the third. `a` becomes that box.
bool mergedInto(BlockBox& a, const BlockBox& b) {
  if (a.preCollision != b.preCollision) return false;
  int differing = 0, axis = -1;
  bool aHolds = true, bHolds = true;
  for (int d = 0; d < 3; ++d) {
    aHolds = aHolds && a.lo[d] <= b.lo[d] && b.hi[d] <= a.hi[d];
    bHolds = bHolds && b.lo[d] <= a.lo[d] && a.hi[d] <= b.hi[d];
    if (a.lo[d] != b.lo[d] || a.hi[d] != b.hi[d]) {
      ++differing;
      axis = d;
    }
  }
  if (aHolds) return true;
  if (bHolds) {
    a = b;
    return true;
  }
  if (differing != 1 || a.hi[axis] + 1 < b.lo[axis] || b.hi[axis] + 1 < a.lo[axis]) return false;
  a.lo[axis] = std::min(a.lo[axis], b.lo[axis]);
  a.hi[axis] = std::max(a.hi[axis], b.hi[axis]);
  return true;
}

// Sorted boxes, each block's merged where mergedInto allows, until none merges.
void mergeBoxes(std::vector<BlockBox>& boxes) {
  std::sort(boxes.begin(), boxes.end());
  boxes.erase(std::unique(boxes.begin(), boxes.end()), boxes.end());
  for (bool merged = true; merged;) {
    merged = false;
    for (std::size_t a = 0; a < boxes.size() && !merged; ++a)
      for (std::size_t b = a + 1; b < boxes.size() && boxes[b].block == boxes[a].block; ++b)
        if (mergedInto(boxes[a], boxes[b])) {
          boxes.erase(boxes.begin() + static_cast<std::ptrdiff_t>(b));
          merged = true;
          break;
        }
  }
  std::sort(boxes.begin(), boxes.end());
}

}  // namespace

BlockTraffic blockTraffic(const BlockLayout& layout, const std::vector<std::int32_t>& runStarts, int worker) {
  const int workers = static_cast<int>(runStarts.size()) - 1;
  std::vector<int> owner(layout.blocks.size());
  for (int w = 0; w < workers; ++w)
    for (std::int32_t b = runStarts[static_cast<std::size_t>(w)]; b < runStarts[static_cast<std::size_t>(w) + 1]; ++b)
      owner[static_cast<std::size_t>(b)] = w;
  BlockTraffic traffic;
  const std::size_t levels = static_cast<std::size_t>(layout.levels);
  traffic.send.assign(levels, std::vector<std::vector<BlockBox>>(static_cast<std::size_t>(workers)));
  traffic.receive = traffic.send;
  for (std::size_t reader = 0; reader < layout.blocks.size(); ++reader)
    for (const RegionLink& link : layout.blocks[reader].links) {
      if (link.block < 0) continue;
      const int from = owner[static_cast<std::size_t>(link.block)], to = owner[reader];
      if (from == to || (from != worker && to != worker)) continue;
      const std::size_t level = static_cast<std::size_t>(layout.blocks[static_cast<std::size_t>(link.block)].level);
      const BlockBox box = pointsRead(link, layout.blockNodes);
      if (from == worker)
        traffic.send[level][static_cast<std::size_t>(to)].push_back(box);
      else
        traffic.receive[level][static_cast<std::size_t>(from)].push_back(box);
    }
  for (auto* lists : {&traffic.send, &traffic.receive})
    for (auto& byWorker : *lists)
      for (std::vector<BlockBox>& boxes : byWorker) mergeBoxes(boxes);
  return traffic;
}

}  // namespace octoflow::amr
