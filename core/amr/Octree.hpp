#pragma once
// A linear octree over a forest of root blocks (plain data, host C++; knows nothing of LBM or of any
// solver: a solver owns its fields indexed by leaf, as AMReX's AmrMesh owns no data and p4est's
// quadrant is coordinates and a level).
//
// The domain is rootBlocks[0] x rootBlocks[1] x rootBlocks[2] blocks of level 0; a block of level L
// has 8 children of level L + 1 (half its size). A block is named by its level and its integer
// position at that level (BlockKey). The leaves are kept in Morton order of their lower corner at
// the finest level (ties broken by level, coarser first: never two leaves at the same corner anyway).
// Periodic axes wrap: neighbours across a periodic face are found at the other end.
//
// 2:1 balance: two leaves that touch (over a face, an edge or a corner, periodic wraps included)
// differ by at most one level. balance() refines until that holds; coarsen() never breaks it.
#include <array>
#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

namespace octoflow::amr {

// A block of the octree: level (0 = root blocks) and position at that level (in blocks of that
// level from the domain's lower corner).
struct BlockKey {
  int level = 0;
  std::int64_t i = 0, j = 0, k = 0;
  bool operator==(const BlockKey& other) const {
    return level == other.level && i == other.i && j == other.j && k == other.k;
  }
  bool operator!=(const BlockKey& other) const { return !(*this == other); }
  BlockKey parent() const { return {level - 1, i >> 1, j >> 1, k >> 1}; }
  // Child c (0..7): bit 0 = +x half, bit 1 = +y half, bit 2 = +z half.
  BlockKey child(int c) const {
    return {level + 1, 2 * i + (c & 1), 2 * j + ((c >> 1) & 1), 2 * k + ((c >> 2) & 1)};
  }
  // Which child of its parent this block is (0..7, as child()).
  int childIndex() const { return static_cast<int>((i & 1) | ((j & 1) << 1) | ((k & 1) << 2)); }
};

// Interleaves the bits of (x, y, z) (each < 2^21), x lowest: the Morton code.
std::uint64_t mortonEncode(std::uint32_t x, std::uint32_t y, std::uint32_t z);
void mortonDecode(std::uint64_t code, std::uint32_t& x, std::uint32_t& y, std::uint32_t& z);

// One of the 26 directions to a touching block (each of dx, dy, dz in {-1, 0, 1}, not all 0).
struct Direction {
  int dx = 0, dy = 0, dz = 0;
  // 0..26 with 13 = (0, 0, 0): (dx + 1) + 3 (dy + 1) + 9 (dz + 1).
  int index() const { return (dx + 1) + 3 * (dy + 1) + 9 * (dz + 1); }
  static Direction fromIndex(int index) { return {index % 3 - 1, (index / 3) % 3 - 1, index / 9 - 1}; }
};
// The 26 directions in index order (13 left out).
const std::array<Direction, 26>& allDirections();

// What lies across a leaf's face, edge or corner.
struct Neighbourhood {
  enum class Kind { Outside, Same, Coarser, Finer };
  Kind kind = Kind::Outside;   // Outside: beyond a non-periodic end of the domain
  int count = 0;               // leaves listed: 1 (Same, Coarser), 1/2/4 (Finer: corner/edge/face)
  std::array<int, 4> leaves{{-1, -1, -1, -1}};  // leaf indices, in Morton order
};

class Octree {
public:
  // Every root block is a leaf. rootBlocks each >= 1; maxLevel in [0, 20 - ceil(log2(max root))].
  Octree(std::array<int, 3> rootBlocks, std::array<bool, 3> periodic, int maxLevel);

  const std::array<int, 3>& rootBlocks() const { return rootBlocks_; }
  const std::array<bool, 3>& periodic() const { return periodic_; }
  int maxLevel() const { return maxLevel_; }
  // The deepest level a leaf has now.
  int depth() const;

  // Leaves in Morton order; a leaf's index is its position here (changes after refine/coarsen).
  const std::vector<BlockKey>& leaves() const { return leaves_; }
  std::size_t leafCount() const { return leaves_.size(); }
  // Index of the leaf with this key, or -1.
  int findLeaf(const BlockKey& key) const;
  // The leaf that is `key` or an ancestor of it (the leaf covering the block), or -1 when the block
  // is refined further or lies outside the domain.
  int coveringLeaf(const BlockKey& key) const;
  // True for a key inside the domain at its level (no wrapping).
  bool inside(const BlockKey& key) const;
  // The key moved by (di, dj, dk) blocks at its level, wrapped across periodic axes; false when it
  // leaves the domain on a non-periodic axis (or the key itself is not inside()).
  bool shifted(const BlockKey& key, int di, int dj, int dk, BlockKey& moved) const;

  // Each listed leaf becomes its 8 children (leaves at maxLevel are left as they are), then the
  // tree is balanced. Returns the number of leaves refined, balance included.
  std::size_t refine(const std::vector<int>& leafIndices);
  // Each listed leaf's family (its parent's 8 children) becomes its parent, when all 8 siblings are
  // leaves and listed, and the result stays 2:1 balanced. Returns the number of families merged.
  std::size_t coarsen(const std::vector<int>& leafIndices);
  // Refines leaves until the tree is 2:1 balanced over faces, edges and corners. Returns the number
  // of leaves refined.
  std::size_t balance();
  bool isBalanced() const;

  // What touches leaf `leaf` in direction `direction`.
  Neighbourhood neighbours(int leaf, Direction direction) const;

  // Bytes that hold the whole tree (root blocks, periodicity, max level, leaves), and the tree back
  // from them: std::invalid_argument naming what is wrong for bytes that are not a valid tree
  // (truncated, unknown version, leaves that do not tile the domain, unbalanced).
  std::vector<unsigned char> serialize() const;
  static Octree deserialize(const std::vector<unsigned char>& bytes);

private:
  using Index = std::unordered_map<std::uint64_t, int>;

  // Throws std::invalid_argument unless the shape is one the constructor accepts.
  static void checkShape(const std::array<int, 3>& rootBlocks, int maxLevel);
  // Morton code of the lower corner at maxLevel (ties between levels are broken by the caller).
  std::uint64_t sortKey(const BlockKey& key) const;
  // Unique for every key with validKey(): the index's key.
  std::uint64_t packKey(const BlockKey& key) const;
  bool validKey(const BlockKey& key) const;  // level in [0, maxLevel] and inside
  void sortAndIndex();
  void rebuildIndex();
  int lookup(const Index& index, const BlockKey& key) const;
  // Key or its nearest ancestor present in `index`: its key and mapped value.
  bool findCovering(const Index& index, BlockKey key, BlockKey& leaf, int& value) const;
  void checkIndices(const std::vector<int>& leafIndices, const char* caller) const;
  // Replaces flagged leaves by their children (order kept); returns the children made.
  std::vector<BlockKey> splitFlagged(const std::vector<char>& flagged);
  // Ripple refinement checking the leaves of `work` first, then the children each round makes.
  std::size_t balanceFrom(std::vector<BlockKey> work);
  bool mergeKeepsBalance(const Index& current, const BlockKey& parent) const;

  std::array<int, 3> rootBlocks_;
  std::array<bool, 3> periodic_;
  int maxLevel_ = 0;
  int rootBits_ = 0;  // ceil(log2(widest root block count))
  std::vector<BlockKey> leaves_;
  Index index_;  // packKey(leaf) -> leaf index
};

// What a regrid does to a leaf (adapted()).
enum class LeafChange : std::int8_t { Coarsen = -1, Keep = 0, Refine = 1 };

// The tree after a regrid: families whose 8 leaves are all marked Coarsen merge into their parent
// (when that keeps the 2:1 balance, and unless `floor`, a tree on the same root blocks, is refined
// below the parent there: a floor the regrid never coarsens past, as static refinement), then the
// leaves marked Refine (below maxLevel) split, and the tree is balanced. `changes`: one per leaf of
// `tree`, in its leaf order.
Octree adapted(const Octree& tree, const std::vector<LeafChange>& changes, const Octree* floor = nullptr);

}  // namespace octoflow::amr
