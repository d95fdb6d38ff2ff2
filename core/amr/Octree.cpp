#include "amr/Octree.hpp"

#include <algorithm>
#include <iterator>
#include <stdexcept>
#include <string>
#include <unordered_set>
#include <utility>

namespace octoflow::amr {

namespace {

// Finest coordinates (rootBlocks << maxLevel) must stay within 2^20 per axis: Morton codes then take
// 60 bits, and the packed index key (a sentinel bit above the code) fits in 64.
constexpr int kCoordinateBits = 20;
constexpr std::int64_t kMaxExtent = std::int64_t{1} << kCoordinateBits;

// Bits of x spread to every third position (x < 2^21).
std::uint64_t spreadBits(std::uint32_t value) {
  std::uint64_t x = value & 0x1fffffu;
  x = (x | x << 32) & 0x1f00000000ffffULL;
  x = (x | x << 16) & 0x1f0000ff0000ffULL;
  x = (x | x << 8) & 0x100f00f00f00f00fULL;
  x = (x | x << 4) & 0x10c30c30c30c30c3ULL;
  x = (x | x << 2) & 0x1249249249249249ULL;
  return x;
}

std::uint32_t compactBits(std::uint64_t x) {
  x &= 0x1249249249249249ULL;
  x = (x ^ (x >> 2)) & 0x10c30c30c30c30c3ULL;
  x = (x ^ (x >> 4)) & 0x100f00f00f00f00fULL;
  x = (x ^ (x >> 8)) & 0x1f0000ff0000ffULL;
  x = (x ^ (x >> 16)) & 0x1f00000000ffffULL;
  x = (x ^ (x >> 32)) & 0x1fffffULL;
  return static_cast<std::uint32_t>(x);
}

// Serialised form, version 1 (all integers little-endian):
//   magic "OFOCTREE" | u32 version | u32 rootBlocks x, y, z | u8 periodic bits (x = bit 0)
//   | u8 maxLevel | u64 leaf count | leaves: u8 level, u32 i, j, k (Morton order)
constexpr char kMagic[8] = {'O', 'F', 'O', 'C', 'T', 'R', 'E', 'E'};
constexpr std::uint32_t kVersion = 1;
constexpr std::size_t kHeaderBytes = 8 + 4 + 3 * 4 + 1 + 1 + 8;
constexpr std::size_t kLeafBytes = 1 + 3 * 4;

void putUnsigned(std::vector<unsigned char>& bytes, std::uint64_t value, int width) {
  for (int b = 0; b < width; ++b) bytes.push_back(static_cast<unsigned char>((value >> (8 * b)) & 0xffu));
}

std::uint64_t getUnsigned(const std::vector<unsigned char>& bytes, std::size_t& offset, int width) {
  std::uint64_t value = 0;
  for (int b = 0; b < width; ++b) value |= std::uint64_t{bytes[offset + b]} << (8 * b);
  offset += static_cast<std::size_t>(width);
  return value;
}

[[noreturn]] void badBytes(const std::string& what) {
  throw std::invalid_argument("Octree::deserialize: " + what);
}

// The children of `block` on its side facing a block in direction -d from it (i.e. the children
// that touch whatever lies across in direction -d), in child (= Morton) order.
int touchingChildren(const BlockKey& block, const Direction& towardBlock, std::array<BlockKey, 4>& out) {
  const int d[3] = {towardBlock.dx, towardBlock.dy, towardBlock.dz};
  int count = 0;
  for (int c = 0; c < 8; ++c) {
    bool touches = true;
    for (int axis = 0; axis < 3; ++axis) {
      const int bit = (c >> axis) & 1;
      // Seen from the other block the shared boundary is our low side when we lie toward +axis.
      if ((d[axis] > 0 && bit != 0) || (d[axis] < 0 && bit != 1)) touches = false;
    }
    if (touches) out[static_cast<std::size_t>(count++)] = block.child(c);
  }
  return count;
}

bool validDirection(const Direction& d) {
  const bool inRange = d.dx >= -1 && d.dx <= 1 && d.dy >= -1 && d.dy <= 1 && d.dz >= -1 && d.dz <= 1;
  return inRange && (d.dx != 0 || d.dy != 0 || d.dz != 0);
}

}  // namespace

std::uint64_t mortonEncode(std::uint32_t x, std::uint32_t y, std::uint32_t z) {
  return spreadBits(x) | (spreadBits(y) << 1) | (spreadBits(z) << 2);
}

void mortonDecode(std::uint64_t code, std::uint32_t& x, std::uint32_t& y, std::uint32_t& z) {
  x = compactBits(code);
  y = compactBits(code >> 1);
  z = compactBits(code >> 2);
}

const std::array<Direction, 26>& allDirections() {
  static const std::array<Direction, 26> directions = [] {
    std::array<Direction, 26> list{};
    std::size_t n = 0;
    for (int index = 0; index < 27; ++index)
      if (index != 13) list[n++] = Direction::fromIndex(index);
    return list;
  }();
  return directions;
}

void Octree::checkShape(const std::array<int, 3>& rootBlocks, int maxLevel) {
  for (int axis = 0; axis < 3; ++axis)
    if (rootBlocks[static_cast<std::size_t>(axis)] < 1)
      throw std::invalid_argument("Octree: root blocks must be >= 1 on every axis (axis " + std::to_string(axis) +
                                  " has " + std::to_string(rootBlocks[static_cast<std::size_t>(axis)]) + ")");
  if (maxLevel < 0 || maxLevel > kCoordinateBits)
    throw std::invalid_argument("Octree: maxLevel must be in [0, " + std::to_string(kCoordinateBits) + "] (got " +
                                std::to_string(maxLevel) + ")");
  for (int axis = 0; axis < 3; ++axis) {
    const std::int64_t finest = std::int64_t{rootBlocks[static_cast<std::size_t>(axis)]} << maxLevel;
    if (finest > kMaxExtent)
      throw std::invalid_argument("Octree: root blocks << maxLevel must be <= 2^20 (axis " + std::to_string(axis) +
                                  ": " + std::to_string(rootBlocks[static_cast<std::size_t>(axis)]) + " << " +
                                  std::to_string(maxLevel) + " = " + std::to_string(finest) + ")");
  }
}

Octree::Octree(std::array<int, 3> rootBlocks, std::array<bool, 3> periodic, int maxLevel)
    : rootBlocks_(rootBlocks), periodic_(periodic), maxLevel_(maxLevel) {
  checkShape(rootBlocks, maxLevel);
  const int widest = std::max({rootBlocks[0], rootBlocks[1], rootBlocks[2]});
  while ((std::int64_t{1} << rootBits_) < widest) ++rootBits_;
  leaves_.reserve(static_cast<std::size_t>(rootBlocks[0]) * static_cast<std::size_t>(rootBlocks[1]) *
                  static_cast<std::size_t>(rootBlocks[2]));
  for (int k = 0; k < rootBlocks[2]; ++k)
    for (int j = 0; j < rootBlocks[1]; ++j)
      for (int i = 0; i < rootBlocks[0]; ++i) leaves_.push_back({0, i, j, k});
  sortAndIndex();
}

int Octree::depth() const {
  int deepest = 0;
  for (const BlockKey& leaf : leaves_) deepest = std::max(deepest, leaf.level);
  return deepest;
}

std::uint64_t Octree::sortKey(const BlockKey& key) const {
  // The lower corner at maxLevel rather than at level 20: with several root blocks a corner at level
  // 20 may need more than 21 bits, at maxLevel it needs at most 20. Shifting every corner by the same
  // amount keeps the order, so this is the same Morton order wherever level 20 would fit.
  const int shift = maxLevel_ - key.level;
  return mortonEncode(static_cast<std::uint32_t>(key.i << shift), static_cast<std::uint32_t>(key.j << shift),
                      static_cast<std::uint32_t>(key.k << shift));
}

std::uint64_t Octree::packKey(const BlockKey& key) const {
  // Morton code of (i, j, k) at the key's level (each < 2^(rootBits + level)) under a sentinel bit at
  // 3 (rootBits + level): the sentinel's position gives the level back, so keys never collide, and
  // rootBits + maxLevel <= 20 keeps it within 61 bits.
  const std::uint64_t code = mortonEncode(static_cast<std::uint32_t>(key.i), static_cast<std::uint32_t>(key.j),
                                          static_cast<std::uint32_t>(key.k));
  return (std::uint64_t{1} << (3 * (rootBits_ + key.level))) | code;
}

bool Octree::validKey(const BlockKey& key) const { return key.level <= maxLevel_ && inside(key); }

void Octree::sortAndIndex() {
  std::vector<std::pair<std::uint64_t, int>> order;
  order.reserve(leaves_.size());
  for (std::size_t n = 0; n < leaves_.size(); ++n) order.emplace_back(sortKey(leaves_[n]), static_cast<int>(n));
  std::sort(order.begin(), order.end(), [this](const auto& a, const auto& b) {
    if (a.first != b.first) return a.first < b.first;
    return leaves_[static_cast<std::size_t>(a.second)].level < leaves_[static_cast<std::size_t>(b.second)].level;
  });
  std::vector<BlockKey> sorted;
  sorted.reserve(leaves_.size());
  for (const auto& entry : order) sorted.push_back(leaves_[static_cast<std::size_t>(entry.second)]);
  leaves_.swap(sorted);
  rebuildIndex();
}

void Octree::rebuildIndex() {
  index_.clear();
  index_.reserve(leaves_.size());
  for (std::size_t n = 0; n < leaves_.size(); ++n) index_.emplace(packKey(leaves_[n]), static_cast<int>(n));
}

int Octree::lookup(const Index& index, const BlockKey& key) const {
  if (!validKey(key)) return -1;
  const auto found = index.find(packKey(key));
  return found == index.end() ? -1 : found->second;
}

bool Octree::findCovering(const Index& index, BlockKey key, BlockKey& leaf, int& value) const {
  if (!inside(key)) return false;
  // Below maxLevel nothing is a leaf: start from the key's ancestor at maxLevel.
  if (key.level > maxLevel_) {
    const int up = std::min(key.level - maxLevel_, 62);
    key = {maxLevel_, key.i >> up, key.j >> up, key.k >> up};
  }
  for (; key.level >= 0; key = key.parent()) {
    const auto found = index.find(packKey(key));
    if (found != index.end()) {
      leaf = key;
      value = found->second;
      return true;
    }
  }
  return false;
}

int Octree::findLeaf(const BlockKey& key) const { return lookup(index_, key); }

int Octree::coveringLeaf(const BlockKey& key) const {
  BlockKey leaf;
  int value = -1;
  return findCovering(index_, key, leaf, value) ? value : -1;
}

bool Octree::inside(const BlockKey& key) const {
  if (key.level < 0 || key.i < 0 || key.j < 0 || key.k < 0) return false;
  // Compare at min(level, maxLevel): never shifts past 2^20 << maxLevel, whatever the key's level.
  const int deeper = std::max(key.level - maxLevel_, 0);
  const int down = std::min(deeper, 62);
  const int level = key.level - deeper;
  const std::int64_t position[3] = {key.i >> down, key.j >> down, key.k >> down};
  for (int axis = 0; axis < 3; ++axis)
    if (position[axis] >= (std::int64_t{rootBlocks_[static_cast<std::size_t>(axis)]} << level)) return false;
  return true;
}

bool Octree::shifted(const BlockKey& key, int di, int dj, int dk, BlockKey& moved) const {
  // Keys outside the domain, or so deep that the extent overflows, have no neighbours.
  if (key.level > 40 || !inside(key)) return false;
  const int delta[3] = {di, dj, dk};
  const std::int64_t from[3] = {key.i, key.j, key.k};
  std::int64_t to[3];
  for (int axis = 0; axis < 3; ++axis) {
    const std::int64_t extent = std::int64_t{rootBlocks_[static_cast<std::size_t>(axis)]} << key.level;
    std::int64_t position = from[axis] + delta[axis];
    if (position < 0 || position >= extent) {
      if (!periodic_[static_cast<std::size_t>(axis)]) return false;
      position = ((position % extent) + extent) % extent;
    }
    to[axis] = position;
  }
  moved = {key.level, to[0], to[1], to[2]};
  return true;
}

void Octree::checkIndices(const std::vector<int>& leafIndices, const char* caller) const {
  for (int leaf : leafIndices)
    if (leaf < 0 || static_cast<std::size_t>(leaf) >= leaves_.size())
      throw std::out_of_range(std::string("Octree::") + caller + ": leaf index " + std::to_string(leaf) +
                              " out of range (" + std::to_string(leaves_.size()) + " leaves)");
}

std::vector<BlockKey> Octree::splitFlagged(const std::vector<char>& flagged) {
  // A block's descendants fill one interval of the Morton order, and its children in child order
  // are in Morton order: children put in their parent's place keep the leaves sorted.
  std::vector<BlockKey> next;
  std::vector<BlockKey> children;
  next.reserve(leaves_.size() + 7 * static_cast<std::size_t>(std::count(flagged.begin(), flagged.end(), 1)));
  for (std::size_t n = 0; n < leaves_.size(); ++n) {
    if (!flagged[n]) {
      next.push_back(leaves_[n]);
      continue;
    }
    for (int c = 0; c < 8; ++c) {
      next.push_back(leaves_[n].child(c));
      children.push_back(leaves_[n].child(c));
    }
  }
  leaves_.swap(next);
  rebuildIndex();
  return children;
}

std::size_t Octree::refine(const std::vector<int>& leafIndices) {
  checkIndices(leafIndices, "refine");
  std::vector<char> flagged(leaves_.size(), 0);
  std::size_t count = 0;
  for (int leaf : leafIndices) {
    char& flag = flagged[static_cast<std::size_t>(leaf)];
    if (flag || leaves_[static_cast<std::size_t>(leaf)].level >= maxLevel_) continue;
    flag = 1;
    ++count;
  }
  if (count == 0) return 0;
  // The tree was balanced before (every way to build one keeps it so): only the new children can
  // be too fine for what they touch.
  return count + balanceFrom(splitFlagged(flagged));
}

std::size_t Octree::balance() { return balanceFrom(leaves_); }

std::size_t Octree::balanceFrom(std::vector<BlockKey> work) {
  // Ripple refinement: each round checks the leaves of `work` as the finer side of every pair they
  // form, refines every leaf found 2+ levels coarser, and checks the children made in the next
  // round (they are the only leaves that can be too fine for a neighbour now). Every unbalanced
  // pair has a finer side, and a leaf 2+ levels coarser that touches leaf L covers one of the 26
  // blocks of L's size around it.
  std::size_t refined = 0;
  while (!work.empty()) {
    std::vector<char> flagged(leaves_.size(), 0);
    bool any = false;
    for (const BlockKey& key : work) {
      if (key.level < 2) continue;
      for (const Direction& d : allDirections()) {
        BlockKey across;
        if (!shifted(key, d.dx, d.dy, d.dz, across)) continue;
        // Same level or one coarser across: balanced (the common case, two look-ups).
        if (findLeaf(across) >= 0 || findLeaf(across.parent()) >= 0) continue;
        const int coarse = coveringLeaf(across.parent().parent());
        if (coarse < 0 || flagged[static_cast<std::size_t>(coarse)]) continue;
        flagged[static_cast<std::size_t>(coarse)] = 1;
        any = true;
        ++refined;
      }
    }
    if (!any) break;
    work = splitFlagged(flagged);
  }
  return refined;
}

bool Octree::mergeKeepsBalance(const Index& current, const BlockKey& parent) const {
  for (const Direction& d : allDirections()) {
    BlockKey across;
    if (!shifted(parent, d.dx, d.dy, d.dz, across)) continue;
    BlockKey coarse;
    int value = -1;
    if (findCovering(current, across, coarse, value)) {
      if (coarse.level < parent.level - 1) return false;  // only if the tree was not balanced
      continue;
    }
    // Refined across: its children touching the parent must be leaves (level parent + 1); any of
    // them refined further holds a leaf that would touch the merged parent 2+ levels finer.
    std::array<BlockKey, 4> children;
    const int count = touchingChildren(across, d, children);
    for (int c = 0; c < count; ++c)
      if (lookup(current, children[static_cast<std::size_t>(c)]) == -1) return false;
  }
  return true;
}

std::size_t Octree::coarsen(const std::vector<int>& leafIndices) {
  checkIndices(leafIndices, "coarsen");
  std::unordered_set<std::uint64_t> listed;
  std::unordered_set<std::uint64_t> parentSeen;
  std::vector<BlockKey> parents;
  for (int leaf : leafIndices) {
    const BlockKey& key = leaves_[static_cast<std::size_t>(leaf)];
    listed.insert(packKey(key));
    if (key.level > 0 && parentSeen.insert(packKey(key.parent())).second) parents.push_back(key.parent());
  }
  // Deterministic: families in Morton order of their parents, whatever the order of the list.
  std::sort(parents.begin(), parents.end(), [this](const BlockKey& a, const BlockKey& b) {
    const std::uint64_t ka = sortKey(a), kb = sortKey(b);
    return ka != kb ? ka < kb : a.level < b.level;
  });

  // The tree as merges happen (merged parents map to -2, absent keys look up as -1): later families
  // are checked against it.
  Index current = index_;
  std::unordered_set<std::uint64_t> merged;
  for (const BlockKey& parent : parents) {
    bool family = true;
    for (int c = 0; c < 8 && family; ++c) {
      const BlockKey child = parent.child(c);
      family = lookup(current, child) != -1 && listed.count(packKey(child)) > 0;
    }
    if (!family || !mergeKeepsBalance(current, parent)) continue;
    for (int c = 0; c < 8; ++c) current.erase(packKey(parent.child(c)));
    current.emplace(packKey(parent), -2);
    merged.insert(packKey(parent));
  }
  if (merged.empty()) return 0;

  // Merged parents are never listed leaves, so no family merges twice: one level up at most. A
  // family is contiguous in Morton order, child 0 first: the parent takes its place.
  std::vector<BlockKey> next;
  next.reserve(leaves_.size() - 7 * merged.size());
  for (const BlockKey& leaf : leaves_) {
    if (leaf.level > 0 && merged.count(packKey(leaf.parent())) > 0) {
      if (leaf.childIndex() == 0) next.push_back(leaf.parent());
      continue;
    }
    next.push_back(leaf);
  }
  leaves_.swap(next);
  rebuildIndex();
  return merged.size();
}

bool Octree::isBalanced() const {
  // Independent of the hash index and of balance(): the leaf holding a finest-level cell is found by
  // binary search over the Morton order of the leaves' corners. For every leaf L and direction, the
  // leaf holding the corner cell of the block of L's size across must not be 2+ levels coarser.
  std::vector<std::pair<std::uint64_t, BlockKey>> sorted;
  sorted.reserve(leaves_.size());
  for (const BlockKey& leaf : leaves_) sorted.emplace_back(sortKey(leaf), leaf);
  std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  for (const BlockKey& leaf : leaves_) {
    if (leaf.level < 2) continue;
    for (const Direction& d : allDirections()) {
      BlockKey across;
      if (!shifted(leaf, d.dx, d.dy, d.dz, across)) continue;
      const int shift = maxLevel_ - across.level;
      const std::int64_t cell[3] = {across.i << shift, across.j << shift, across.k << shift};
      const std::uint64_t code = mortonEncode(static_cast<std::uint32_t>(cell[0]), static_cast<std::uint32_t>(cell[1]),
                                              static_cast<std::uint32_t>(cell[2]));
      auto after = std::upper_bound(sorted.begin(), sorted.end(), code,
                                    [](std::uint64_t value, const auto& entry) { return value < entry.first; });
      if (after == sorted.begin()) return false;  // no leaf holds the cell: not a tiling either
      const BlockKey& holder = std::prev(after)->second;
      const int up = maxLevel_ - holder.level;
      if ((cell[0] >> up) != holder.i || (cell[1] >> up) != holder.j || (cell[2] >> up) != holder.k) return false;
      if (holder.level < leaf.level - 1) return false;
    }
  }
  return true;
}

Neighbourhood Octree::neighbours(int leaf, Direction direction) const {
  if (leaf < 0 || static_cast<std::size_t>(leaf) >= leaves_.size())
    throw std::out_of_range("Octree::neighbours: leaf index " + std::to_string(leaf) + " out of range");
  if (!validDirection(direction))
    throw std::invalid_argument("Octree::neighbours: direction components must be -1, 0 or 1, not all 0");
  Neighbourhood result;
  BlockKey across;
  if (!shifted(leaves_[static_cast<std::size_t>(leaf)], direction.dx, direction.dy, direction.dz, across))
    return result;  // Outside
  const int same = findLeaf(across);
  if (same >= 0) {
    result.kind = Neighbourhood::Kind::Same;
    result.count = 1;
    result.leaves[0] = same;
    return result;
  }
  const int coarser = coveringLeaf(across);
  if (coarser >= 0) {
    result.kind = Neighbourhood::Kind::Coarser;
    result.count = 1;
    result.leaves[0] = coarser;
    return result;
  }
  std::array<BlockKey, 4> children;
  const int count = touchingChildren(across, direction, children);
  result.kind = Neighbourhood::Kind::Finer;
  result.count = count;
  for (int c = 0; c < count; ++c) {
    const int fine = findLeaf(children[static_cast<std::size_t>(c)]);
    if (fine < 0) throw std::logic_error("Octree::neighbours: tree not balanced");
    result.leaves[static_cast<std::size_t>(c)] = fine;
  }
  return result;
}

std::vector<unsigned char> Octree::serialize() const {
  std::vector<unsigned char> bytes;
  bytes.reserve(kHeaderBytes + kLeafBytes * leaves_.size());
  for (char c : kMagic) bytes.push_back(static_cast<unsigned char>(c));  // (insert: a GCC 12 false warning)
  putUnsigned(bytes, kVersion, 4);
  for (int roots : rootBlocks_) putUnsigned(bytes, static_cast<std::uint64_t>(roots), 4);
  putUnsigned(bytes, (periodic_[0] ? 1u : 0u) | (periodic_[1] ? 2u : 0u) | (periodic_[2] ? 4u : 0u), 1);
  putUnsigned(bytes, static_cast<std::uint64_t>(maxLevel_), 1);
  putUnsigned(bytes, leaves_.size(), 8);
  for (const BlockKey& leaf : leaves_) {
    putUnsigned(bytes, static_cast<std::uint64_t>(leaf.level), 1);
    putUnsigned(bytes, static_cast<std::uint64_t>(leaf.i), 4);
    putUnsigned(bytes, static_cast<std::uint64_t>(leaf.j), 4);
    putUnsigned(bytes, static_cast<std::uint64_t>(leaf.k), 4);
  }
  return bytes;
}

Octree Octree::deserialize(const std::vector<unsigned char>& bytes) {
  if (bytes.size() < kHeaderBytes)
    badBytes("truncated header (" + std::to_string(bytes.size()) + " bytes, need " + std::to_string(kHeaderBytes) +
             ")");
  if (!std::equal(kMagic, kMagic + 8, bytes.begin())) badBytes("bad magic (not an octree)");
  std::size_t offset = 8;
  const std::uint64_t version = getUnsigned(bytes, offset, 4);
  if (version != kVersion) badBytes("unsupported version " + std::to_string(version));
  std::array<int, 3> roots{};
  for (int& r : roots) {
    const std::uint64_t value = getUnsigned(bytes, offset, 4);
    if (value < 1 || value > static_cast<std::uint64_t>(kMaxExtent))
      badBytes("bad root block count " + std::to_string(value));
    r = static_cast<int>(value);
  }
  const std::uint64_t periodicBits = getUnsigned(bytes, offset, 1);
  if (periodicBits > 7) badBytes("bad periodic flags " + std::to_string(periodicBits));
  const std::array<bool, 3> periodic{(periodicBits & 1u) != 0, (periodicBits & 2u) != 0, (periodicBits & 4u) != 0};
  const int maxLevel = static_cast<int>(getUnsigned(bytes, offset, 1));
  try {
    checkShape(roots, maxLevel);
  } catch (const std::invalid_argument& error) {
    badBytes(std::string("bad root blocks or max level: ") + error.what());
  }
  const std::uint64_t count = getUnsigned(bytes, offset, 8);
  const std::size_t remaining = bytes.size() - offset;
  if (count > remaining / kLeafBytes)
    badBytes("truncated leaves (" + std::to_string(count) + " declared, room for " +
             std::to_string(remaining / kLeafBytes) + ")");
  if (remaining != count * kLeafBytes)
    badBytes(std::to_string(remaining - count * kLeafBytes) + " bytes after the last leaf");

  std::vector<BlockKey> leaves;
  leaves.reserve(static_cast<std::size_t>(count));
  for (std::uint64_t n = 0; n < count; ++n) {
    BlockKey leaf;
    leaf.level = static_cast<int>(getUnsigned(bytes, offset, 1));
    leaf.i = static_cast<std::int64_t>(getUnsigned(bytes, offset, 4));
    leaf.j = static_cast<std::int64_t>(getUnsigned(bytes, offset, 4));
    leaf.k = static_cast<std::int64_t>(getUnsigned(bytes, offset, 4));
    if (leaf.level > maxLevel)
      badBytes("leaf " + std::to_string(n) + " has level " + std::to_string(leaf.level) + " above max level " +
               std::to_string(maxLevel));
    for (int axis = 0; axis < 3; ++axis) {
      const std::int64_t position = axis == 0 ? leaf.i : axis == 1 ? leaf.j : leaf.k;
      if (position >= (std::int64_t{roots[static_cast<std::size_t>(axis)]} << leaf.level))
        badBytes("leaf " + std::to_string(n) + " lies outside the domain");
    }
    leaves.push_back(leaf);
  }

  // Tiling: each block is one interval of Morton codes at maxLevel; sorted intervals must not overlap,
  // and (all inside the domain) their total length must be the domain's volume.
  auto corner = [maxLevel](const BlockKey& key) {
    const int shift = maxLevel - key.level;
    return mortonEncode(static_cast<std::uint32_t>(key.i << shift), static_cast<std::uint32_t>(key.j << shift),
                        static_cast<std::uint32_t>(key.k << shift));
  };
  std::vector<std::pair<std::uint64_t, std::uint64_t>> intervals;  // (start, length)
  intervals.reserve(leaves.size());
  for (const BlockKey& leaf : leaves)
    intervals.emplace_back(corner(leaf), std::uint64_t{1} << (3 * (maxLevel - leaf.level)));
  std::vector<std::pair<std::uint64_t, std::uint64_t>> sorted = intervals;
  std::sort(sorted.begin(), sorted.end());
  std::uint64_t volume = 0;
  for (std::size_t n = 0; n < sorted.size(); ++n) {
    if (n > 0 && sorted[n].first < sorted[n - 1].first + sorted[n - 1].second) badBytes("leaves overlap");
    volume += sorted[n].second;
  }
  std::uint64_t domain = 1;
  for (int r : roots) domain *= static_cast<std::uint64_t>(r) << maxLevel;
  if (volume != domain) badBytes("leaves do not tile the domain (they cover " + std::to_string(volume) + " of " +
                                 std::to_string(domain) + " finest cells)");
  for (std::size_t n = 1; n < intervals.size(); ++n)
    if (intervals[n].first < intervals[n - 1].first) badBytes("leaves not in Morton order");

  // The constructor's root-block leaves number no more than the leaves read (they tile the domain),
  // so a forged header cannot make it allocate more than the bytes justify.
  Octree tree(roots, periodic, maxLevel);
  tree.leaves_ = std::move(leaves);
  tree.rebuildIndex();
  if (!tree.isBalanced()) badBytes("leaves not 2:1 balanced");
  return tree;
}

Octree adapted(const Octree& tree, const std::vector<LeafChange>& changes, const Octree* floor) {
  if (changes.size() != tree.leafCount())
    throw std::invalid_argument("adapted: " + std::to_string(changes.size()) + " changes for " +
                                std::to_string(tree.leafCount()) + " leaves");
  if (floor && (floor->rootBlocks() != tree.rootBlocks() || floor->periodic() != tree.periodic()))
    throw std::invalid_argument("adapted: the floor is a tree on other root blocks");
  Octree result = tree;
  std::vector<int> coarsen;
  std::vector<BlockKey> refine;
  for (std::size_t n = 0; n < changes.size(); ++n) {
    const BlockKey& leaf = tree.leaves()[n];
    if (changes[n] == LeafChange::Refine) refine.push_back(leaf);
    // A floor leaf covering the parent (the parent or an ancestor is a floor leaf): merging stays
    // at or above the floor.
    if (changes[n] == LeafChange::Coarsen && leaf.level > 0 && (!floor || floor->coveringLeaf(leaf.parent()) >= 0))
      coarsen.push_back(static_cast<int>(n));
  }
  result.coarsen(coarsen);
  // Leaves marked Refine are never merged (a family merges only when all 8 are marked Coarsen).
  std::vector<int> split;
  for (const BlockKey& key : refine) split.push_back(result.findLeaf(key));
  result.refine(split);
  return result;
}

}  // namespace octoflow::amr
