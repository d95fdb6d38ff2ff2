// The linear octree of core/amr: Morton codes, refinement with 2:1 balance over faces, edges and
// corners (periodic wraps included), coarsening that keeps it, the 26-direction neighbour queries and
// the serialised form. Balance and neighbours are checked against brute force over boxes.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdint>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "amr/Octree.hpp"

using namespace octoflow::amr;

namespace {

using Kind = Neighbourhood::Kind;

// A leaf's box at the finest level: [lo, lo + size) on each axis.
struct Box {
  std::array<std::int64_t, 3> lo;
  std::int64_t size;
};

Box finestBox(const Octree& tree, const BlockKey& key) {
  const int shift = tree.maxLevel() - key.level;
  return {{key.i << shift, key.j << shift, key.k << shift}, std::int64_t{1} << shift};
}

std::uint64_t cornerCode(const Octree& tree, const BlockKey& key) {
  const Box box = finestBox(tree, key);
  return mortonEncode(static_cast<std::uint32_t>(box.lo[0]), static_cast<std::uint32_t>(box.lo[1]),
                      static_cast<std::uint32_t>(box.lo[2]));
}

// Closed boxes meet (face, edge or corner; overlap would too), across periodic wraps where allowed.
bool touches(const Octree& tree, const BlockKey& a, const BlockKey& b) {
  const Box ba = finestBox(tree, a), bb = finestBox(tree, b);
  for (std::size_t axis = 0; axis < 3; ++axis) {
    const std::int64_t extent = std::int64_t{tree.rootBlocks()[axis]} << tree.maxLevel();
    bool meets = false;
    for (std::int64_t wrap : {std::int64_t{0}, -extent, extent}) {
      if (wrap != 0 && !tree.periodic()[axis]) continue;
      const std::int64_t lo = bb.lo[axis] + wrap;
      if (ba.lo[axis] <= lo + bb.size && lo <= ba.lo[axis] + ba.size) meets = true;
    }
    if (!meets) return false;
  }
  return true;
}

// The leaves tile the domain exactly and are in strictly increasing Morton order of their corners.
void expectTilingInMortonOrder(const Octree& tree) {
  std::uint64_t volume = 0, domain = 1;
  for (int r : tree.rootBlocks()) domain *= static_cast<std::uint64_t>(r) << tree.maxLevel();
  std::set<std::tuple<int, std::int64_t, std::int64_t, std::int64_t>> seen;
  std::uint64_t previousEnd = 0;
  for (std::size_t n = 0; n < tree.leafCount(); ++n) {
    const BlockKey& leaf = tree.leaves()[n];
    ASSERT_TRUE(tree.inside(leaf));
    ASSERT_LE(leaf.level, tree.maxLevel());
    ASSERT_TRUE(seen.insert({leaf.level, leaf.i, leaf.j, leaf.k}).second) << "duplicate leaf";
    const std::uint64_t size = std::uint64_t{1} << (3 * (tree.maxLevel() - leaf.level));
    // A block is one interval of Morton codes: sorted, non-overlapping intervals.
    ASSERT_GE(cornerCode(tree, leaf), previousEnd) << "leaf " << n << " out of order or overlapping";
    previousEnd = cornerCode(tree, leaf) + size;
    volume += size;
    ASSERT_EQ(tree.findLeaf(leaf), static_cast<int>(n));
  }
  EXPECT_EQ(volume, domain);
}

// Every pair of touching leaves differs by at most one level (quadratic: small trees only).
bool bruteBalanced(const Octree& tree) {
  const auto& leaves = tree.leaves();
  for (std::size_t a = 0; a < leaves.size(); ++a)
    for (std::size_t b = a + 1; b < leaves.size(); ++b)
      if (std::abs(leaves[a].level - leaves[b].level) > 1 && touches(tree, leaves[a], leaves[b])) return false;
  return true;
}

void refineRandomly(Octree& tree, std::mt19937& rng, int calls) {
  for (int call = 0; call < calls; ++call) {
    std::uniform_int_distribution<int> pick(0, static_cast<int>(tree.leafCount()) - 1);
    std::vector<int> chosen{pick(rng)};
    if (call % 3 == 0) chosen.push_back(pick(rng));
    tree.refine(chosen);
  }
}

int indexOf(const std::vector<int>& list, int value) {
  const auto at = std::find(list.begin(), list.end(), value);
  return at == list.end() ? -1 : static_cast<int>(at - list.begin());
}

std::vector<int> listed(const Neighbourhood& n) { return {n.leaves.begin(), n.leaves.begin() + n.count}; }

Direction opposite(const Direction& d) { return {-d.dx, -d.dy, -d.dz}; }

int nonZero(const Direction& d) { return (d.dx != 0) + (d.dy != 0) + (d.dz != 0); }

std::vector<int> allLeafIndices(const Octree& tree) {
  std::vector<int> all(tree.leafCount());
  for (std::size_t n = 0; n < all.size(); ++n) all[n] = static_cast<int>(n);
  return all;
}

// The serialised form, written independently of Octree::serialize (which must produce the same).
void put(std::vector<unsigned char>& bytes, std::uint64_t value, int width) {
  for (int b = 0; b < width; ++b) bytes.push_back(static_cast<unsigned char>(value >> (8 * b)));
}

std::vector<unsigned char> encode(std::array<int, 3> roots, unsigned periodicBits, int maxLevel,
                                  const std::vector<BlockKey>& leaves) {
  std::vector<unsigned char> bytes{'O', 'F', 'O', 'C', 'T', 'R', 'E', 'E'};
  put(bytes, 1, 4);
  for (int r : roots) put(bytes, static_cast<std::uint64_t>(r), 4);
  put(bytes, periodicBits, 1);
  put(bytes, static_cast<std::uint64_t>(maxLevel), 1);
  put(bytes, leaves.size(), 8);
  for (const BlockKey& leaf : leaves) {
    put(bytes, static_cast<std::uint64_t>(leaf.level), 1);
    put(bytes, static_cast<std::uint64_t>(leaf.i), 4);
    put(bytes, static_cast<std::uint64_t>(leaf.j), 4);
    put(bytes, static_cast<std::uint64_t>(leaf.k), 4);
  }
  return bytes;
}
constexpr std::size_t kHeaderBytes = 34;
constexpr std::size_t kLeafBytes = 13;

// The message of the std::invalid_argument that deserialize throws ("" when it throws none).
std::string rejection(const std::vector<unsigned char>& bytes) {
  try {
    Octree::deserialize(bytes);
  } catch (const std::invalid_argument& error) {
    return error.what();
  }
  return "";
}

}  // namespace

TEST(OctreeMorton, KnownSmallCodes) {
  EXPECT_EQ(mortonEncode(0, 0, 0), 0u);
  EXPECT_EQ(mortonEncode(1, 0, 0), 1u);
  EXPECT_EQ(mortonEncode(0, 1, 0), 2u);
  EXPECT_EQ(mortonEncode(0, 0, 1), 4u);
  EXPECT_EQ(mortonEncode(1, 1, 1), 7u);
  EXPECT_EQ(mortonEncode(2, 0, 0), 8u);
  EXPECT_EQ(mortonEncode(3, 3, 3), 63u);
  const std::uint32_t top = (1u << 21) - 1;
  EXPECT_EQ(mortonEncode(top, top, top), (std::uint64_t{1} << 63) - 1);
  EXPECT_EQ(mortonEncode(top, 0, 0), 0x1249249249249249ULL);
}

TEST(OctreeMorton, EncodeDecodeRoundTripsRandomValues) {
  std::mt19937 rng(12345);
  std::uniform_int_distribution<std::uint32_t> value(0, (1u << 21) - 1);
  for (int n = 0; n < 10000; ++n) {
    const std::uint32_t x = value(rng), y = value(rng), z = value(rng);
    std::uint32_t dx = 0, dy = 0, dz = 0;
    mortonDecode(mortonEncode(x, y, z), dx, dy, dz);
    ASSERT_EQ(std::make_tuple(dx, dy, dz), std::make_tuple(x, y, z));
  }
}

TEST(Octree, AllDirectionsAreTheTwentySixInIndexOrder) {
  const auto& directions = allDirections();
  int previous = -1;
  for (const Direction& d : directions) {
    EXPECT_GT(d.index(), previous);
    EXPECT_NE(d.index(), 13);
    EXPECT_EQ(Direction::fromIndex(d.index()).index(), d.index());
    previous = d.index();
  }
  EXPECT_EQ(directions.front().index(), 0);
  EXPECT_EQ(directions.back().index(), 26);
}

TEST(Octree, ConstructorRejectsBadShapes) {
  EXPECT_THROW(Octree({0, 1, 1}, {false, false, false}, 0), std::invalid_argument);
  EXPECT_THROW(Octree({1, 1, -2}, {false, false, false}, 0), std::invalid_argument);
  EXPECT_THROW(Octree({1, 1, 1}, {false, false, false}, -1), std::invalid_argument);
  EXPECT_THROW(Octree({1, 1, 1}, {false, false, false}, 21), std::invalid_argument);
  EXPECT_THROW(Octree({3, 1, 1}, {false, false, false}, 19), std::invalid_argument);  // 3 << 19 > 2^20
  EXPECT_NO_THROW(Octree({2, 1, 1}, {false, false, false}, 19));                       // 2 << 19 = 2^20
  EXPECT_NO_THROW(Octree({1, 1, 1}, {true, true, true}, 20));
  const Octree tree({3, 2, 1}, {true, false, false}, 2);
  EXPECT_EQ(tree.leafCount(), 6u);
  EXPECT_EQ(tree.depth(), 0);
  EXPECT_TRUE(tree.isBalanced());
  expectTilingInMortonOrder(tree);
}

TEST(Octree, KeysLookUpCoverAndShift) {
  Octree tree({4, 2, 1}, {true, false, false}, 3);
  EXPECT_TRUE(tree.inside({0, 3, 1, 0}));
  EXPECT_FALSE(tree.inside({0, 4, 0, 0}));
  EXPECT_FALSE(tree.inside({1, 0, 0, 2}));
  EXPECT_TRUE(tree.inside({1, 7, 3, 1}));
  EXPECT_FALSE(tree.inside({0, -1, 0, 0}));

  const int root = tree.findLeaf({0, 1, 0, 0});
  ASSERT_GE(root, 0);
  EXPECT_EQ(tree.coveringLeaf({2, 5, 2, 3}), root);  // a grandchild of root (1, 0, 0)
  EXPECT_EQ(tree.coveringLeaf({0, 5, 0, 0}), -1);    // outside
  tree.refine({root});
  EXPECT_EQ(tree.findLeaf({0, 1, 0, 0}), -1);
  EXPECT_EQ(tree.coveringLeaf({0, 1, 0, 0}), -1);  // refined further
  EXPECT_EQ(tree.coveringLeaf({3, 10, 3, 5}), tree.findLeaf({1, 2, 0, 1}));

  BlockKey moved;
  ASSERT_TRUE(tree.shifted({1, 7, 0, 0}, 1, 0, 0, moved));  // x wraps at level 1: 8 blocks
  EXPECT_EQ(moved, (BlockKey{1, 0, 0, 0}));
  ASSERT_TRUE(tree.shifted({1, 0, 2, 1}, -1, 1, 0, moved));
  EXPECT_EQ(moved, (BlockKey{1, 7, 3, 1}));
  EXPECT_FALSE(tree.shifted({1, 0, 3, 0}, 0, 1, 0, moved));  // y does not wrap
  EXPECT_FALSE(tree.shifted({1, 0, 0, 0}, 0, 0, -1, moved));
  ASSERT_TRUE(tree.shifted({0, 2, 0, 0}, -7, 0, 0, moved));  // several periods away
  EXPECT_EQ(moved, (BlockKey{0, 3, 0, 0}));
}

TEST(Octree, LeafCountsAfterRefinement) {
  Octree tree({2, 1, 1}, {false, false, false}, 2);
  ASSERT_EQ(tree.leafCount(), 2u);
  EXPECT_EQ(tree.refine({0}), 1u);
  EXPECT_EQ(tree.leafCount(), 1u + 8u);
  EXPECT_EQ(tree.depth(), 1);
  EXPECT_EQ(tree.refine({0, 0, 0}), 1u);  // duplicates count once
  EXPECT_EQ(tree.leafCount(), 16u);

  Octree full({2, 1, 1}, {false, false, false}, 2);
  full.refine(allLeafIndices(full));
  EXPECT_EQ(full.leafCount(), 16u);
  EXPECT_EQ(full.refine(allLeafIndices(full)), 16u);
  EXPECT_EQ(full.leafCount(), 2u * 64u);
  EXPECT_EQ(full.depth(), 2);
  EXPECT_EQ(full.refine(allLeafIndices(full)), 0u);  // all at maxLevel: left as they are
  EXPECT_EQ(full.leafCount(), 2u * 64u);
  expectTilingInMortonOrder(full);
  EXPECT_THROW(full.refine({128}), std::out_of_range);
  EXPECT_THROW(full.coarsen({-1}), std::out_of_range);
}

TEST(Octree, RandomRefinementStaysBalancedTiledAndSorted) {
  const std::array<std::array<bool, 3>, 3> periodicities{
      {{false, false, false}, {true, true, true}, {true, false, true}}};
  unsigned seed = 7;
  for (const auto& periodic : periodicities) {
    SCOPED_TRACE(testing::Message() << "periodic " << periodic[0] << periodic[1] << periodic[2]);
    Octree tree({3, 2, 2}, periodic, 5);
    std::mt19937 rng(seed++);
    for (int round = 0; round < 6; ++round) {
      refineRandomly(tree, rng, 50);
      ASSERT_TRUE(tree.isBalanced());
      expectTilingInMortonOrder(tree);
    }
    EXPECT_EQ(tree.depth(), 5);
    EXPECT_EQ(tree.balance(), 0u);  // already balanced: nothing to do
  }
}

TEST(Octree, BalanceMatchesBruteForceAndNeighboursListEveryTouchingLeaf) {
  for (const std::array<bool, 3> periodic : {std::array<bool, 3>{false, false, false},
                                             std::array<bool, 3>{true, false, true}}) {
    Octree tree({2, 3, 2}, periodic, 4);
    std::mt19937 rng(periodic[0] ? 99 : 98);
    refineRandomly(tree, rng, 40);
    ASSERT_TRUE(tree.isBalanced());
    ASSERT_TRUE(bruteBalanced(tree));
    // The neighbour lists over all 26 directions are exactly the leaves touching a leaf.
    const auto& leaves = tree.leaves();
    for (std::size_t a = 0; a < leaves.size(); ++a) {
      std::set<int> found;
      for (const Direction& d : allDirections()) {
        const Neighbourhood n = tree.neighbours(static_cast<int>(a), d);
        for (int leaf : listed(n)) found.insert(leaf);
      }
      found.erase(static_cast<int>(a));
      std::set<int> expected;
      for (std::size_t b = 0; b < leaves.size(); ++b)
        if (b != a && touches(tree, leaves[a], leaves[b])) expected.insert(static_cast<int>(b));
      ASSERT_EQ(found, expected) << "leaf " << a;
    }
  }
}

TEST(Octree, CornerBalanceRefinesTheDiagonalNeighbour) {
  Octree tree({1, 1, 1}, {false, false, false}, 3);
  tree.refine({0});
  tree.refine({tree.findLeaf({1, 0, 0, 0})});
  // Level-2 block (1, 1, 1) = [1/4, 1/2]^3: its level-3 child (3, 3, 3) touches level-1 block
  // (1, 1, 1) = [1/2, 1]^3 at the single point (1/2, 1/2, 1/2) only.
  tree.refine({tree.findLeaf({2, 1, 1, 1})});
  EXPECT_EQ(tree.findLeaf({1, 1, 1, 1}), -1) << "diagonal (corner) neighbour left two levels coarser";
  for (int c = 0; c < 8; ++c) EXPECT_GE(tree.findLeaf(BlockKey{1, 1, 1, 1}.child(c)), 0);
  // The face and edge neighbours of the level-1 block went too: all of level 1 is refined.
  for (int c = 1; c < 8; ++c) EXPECT_EQ(tree.findLeaf(BlockKey{0, 0, 0, 0}.child(c)), -1);
  EXPECT_EQ(tree.leafCount(), 64u - 1u + 8u);
  EXPECT_TRUE(tree.isBalanced());
  EXPECT_TRUE(bruteBalanced(tree));
}

TEST(Octree, BalanceWrapsAcrossPeriodicAxesOnly) {
  for (bool periodic : {true, false}) {
    Octree tree({4, 1, 1}, {periodic, false, false}, 3);
    tree.refine({tree.findLeaf({0, 0, 0, 0})});
    tree.refine({tree.findLeaf({1, 0, 0, 0})});  // level 2 at x = 0
    // Root 3 (x in [3, 4)) meets the level-2 leaves at x = 0 only across the wrap.
    const int lastRoot = tree.findLeaf({0, 3, 0, 0});
    if (periodic) {
      EXPECT_EQ(lastRoot, -1);
      EXPECT_GE(tree.findLeaf({1, 7, 0, 0}), 0);
    } else {
      EXPECT_GE(lastRoot, 0);
    }
    EXPECT_GE(tree.findLeaf({0, 1, 0, 0}), 0);  // root 1 touches level 1 only
    EXPECT_TRUE(tree.isBalanced());
    EXPECT_TRUE(bruteBalanced(tree));
  }
}

TEST(Octree, NeighbourLookupsAreSymmetric) {
  for (const std::array<bool, 3> periodic : {std::array<bool, 3>{false, false, false},
                                             std::array<bool, 3>{true, true, false}}) {
    Octree tree({3, 2, 2}, periodic, 4);
    std::mt19937 rng(periodic[0] ? 5 : 6);
    refineRandomly(tree, rng, 60);
    ASSERT_TRUE(tree.isBalanced());
    int same = 0, finer = 0, coarser = 0;
    for (int a = 0; a < static_cast<int>(tree.leafCount()); ++a) {
      const BlockKey& key = tree.leaves()[static_cast<std::size_t>(a)];
      for (const Direction& d : allDirections()) {
        const Neighbourhood n = tree.neighbours(a, d);
        const Direction back = opposite(d);
        // Outside exactly where the direction leaves the domain across a non-periodic end.
        bool leaves = false;
        const int step[3] = {d.dx, d.dy, d.dz};
        const std::int64_t at[3] = {key.i, key.j, key.k};
        for (std::size_t axis = 0; axis < 3; ++axis) {
          const std::int64_t extent = std::int64_t{tree.rootBlocks()[axis]} << key.level;
          if (!periodic[axis] && ((step[axis] < 0 && at[axis] == 0) || (step[axis] > 0 && at[axis] == extent - 1)))
            leaves = true;
        }
        ASSERT_EQ(n.kind == Kind::Outside, leaves);
        if (n.kind == Kind::Same) {
          ++same;
          ASSERT_EQ(n.count, 1);
          const Neighbourhood r = tree.neighbours(n.leaves[0], back);
          ASSERT_EQ(r.kind, Kind::Same);
          ASSERT_EQ(r.leaves[0], a);
        } else if (n.kind == Kind::Finer) {
          ++finer;
          for (int fine : listed(n)) {
            EXPECT_EQ(tree.leaves()[static_cast<std::size_t>(fine)].level, key.level + 1);
            const Neighbourhood r = tree.neighbours(fine, back);
            ASSERT_EQ(r.kind, Kind::Coarser);
            ASSERT_EQ(r.leaves[0], a);
          }
        } else if (n.kind == Kind::Coarser) {
          ++coarser;
          ASSERT_EQ(n.count, 1);
          const int coarse = n.leaves[0];
          const BlockKey& coarseKey = tree.leaves()[static_cast<std::size_t>(coarse)];
          EXPECT_EQ(coarseKey.level, key.level - 1);
          // Back from the coarse leaf: across a face it is exactly this leaf's parent, refined, with
          // this leaf among the children facing it. Across an edge or a corner the step back may
          // land beside the parent: then it holds where it lands, and some direction still lists
          // this leaf (the two touch).
          BlockKey landed;
          const bool lands = tree.shifted(coarseKey, back.dx, back.dy, back.dz, landed);
          const Neighbourhood r = tree.neighbours(coarse, back);
          if (nonZero(d) == 1 || (lands && landed == key.parent())) {
            ASSERT_EQ(r.kind, Kind::Finer);
            ASSERT_GE(indexOf(listed(r), a), 0);
          }
          bool listsThisLeaf = false;
          for (const Direction& e : allDirections()) {
            const Neighbourhood from = tree.neighbours(coarse, e);
            if (from.kind == Kind::Finer && indexOf(listed(from), a) >= 0) listsThisLeaf = true;
          }
          ASSERT_TRUE(listsThisLeaf);
        }
        // Listed leaves come in Morton order, i.e. by increasing leaf index.
        const std::vector<int> order = listed(n);
        ASSERT_TRUE(std::is_sorted(order.begin(), order.end()));
        ASSERT_EQ(std::adjacent_find(order.begin(), order.end()), order.end());
      }
    }
    EXPECT_GT(same, 0);
    EXPECT_GT(finer, 0);
    EXPECT_GT(coarser, 0);
  }
}

TEST(Octree, FinerNeighbourCountsAreFourTwoOne) {
  // A 3x3x3 block of roots with the middle one coarse and its 26 neighbours refined.
  Octree tree({3, 3, 3}, {false, false, false}, 1);
  std::vector<int> around;
  for (int n = 0; n < static_cast<int>(tree.leafCount()); ++n)
    if (tree.leaves()[static_cast<std::size_t>(n)] != BlockKey{0, 1, 1, 1}) around.push_back(n);
  EXPECT_EQ(tree.refine(around), 26u);
  const int middle = tree.findLeaf({0, 1, 1, 1});
  ASSERT_GE(middle, 0);
  for (const Direction& d : allDirections()) {
    const Neighbourhood n = tree.neighbours(middle, d);
    ASSERT_EQ(n.kind, Kind::Finer);
    EXPECT_EQ(n.count, nonZero(d) == 1 ? 4 : nonZero(d) == 2 ? 2 : 1) << "direction " << d.index();
    for (int fine : listed(n)) EXPECT_TRUE(touches(tree, tree.leaves()[static_cast<std::size_t>(middle)],
                                                   tree.leaves()[static_cast<std::size_t>(fine)]));
  }
  EXPECT_THROW(tree.neighbours(middle, Direction{0, 0, 0}), std::invalid_argument);
  EXPECT_THROW(tree.neighbours(middle, Direction{2, 0, 0}), std::invalid_argument);
  EXPECT_THROW(tree.neighbours(-1, Direction{1, 0, 0}), std::out_of_range);
}

TEST(Octree, CoarsenRestoresTheLeavesBeforeRefinement) {
  Octree tree({2, 2, 1}, {false, true, false}, 3);
  tree.refine(allLeafIndices(tree));
  const std::vector<BlockKey> before = tree.leaves();
  const int refined = tree.findLeaf({1, 1, 2, 0});
  ASSERT_EQ(tree.refine({refined}), 1u);
  ASSERT_EQ(tree.leafCount(), before.size() + 7);
  std::vector<int> family;
  for (int c = 0; c < 8; ++c) family.push_back(tree.findLeaf(BlockKey{1, 1, 2, 0}.child(c)));
  // Only part of the family listed: nothing merges.
  EXPECT_EQ(tree.coarsen({family.begin(), family.begin() + 7}), 0u);
  EXPECT_EQ(tree.leafCount(), before.size() + 7);
  std::reverse(family.begin(), family.end());
  family.push_back(family.front());  // listing order and duplicates do not matter
  EXPECT_EQ(tree.coarsen(family), 1u);
  EXPECT_EQ(tree.leaves(), before);
  for (std::size_t n = 0; n < before.size(); ++n) EXPECT_EQ(tree.findLeaf(before[n]), static_cast<int>(n));
}

TEST(Octree, CoarsenRefusesMergesThatBreakBalance) {
  // The corner case again: level-3 leaves in [1/4, 1/2]^3 and every other level-1 block refined.
  Octree tree({1, 1, 1}, {false, false, false}, 3);
  tree.refine({0});
  tree.refine({tree.findLeaf({1, 0, 0, 0})});
  tree.refine({tree.findLeaf({2, 1, 1, 1})});
  ASSERT_EQ(tree.leafCount(), 71u);
  const std::vector<BlockKey> before = tree.leaves();
  auto familyOf = [&tree](const BlockKey& parent) {
    std::vector<int> family;
    for (int c = 0; c < 8; ++c) family.push_back(tree.findLeaf(parent.child(c)));
    return family;
  };
  // Level-1 block (1, 1, 1) touches the level-3 leaves at a corner only; (1, 0, 0) over a face,
  // (1, 1, 0) over an edge: merging any of them would put level 1 against level 3.
  EXPECT_EQ(tree.coarsen(familyOf({1, 1, 1, 1})), 0u);
  EXPECT_EQ(tree.coarsen(familyOf({1, 1, 0, 0})), 0u);
  EXPECT_EQ(tree.coarsen(familyOf({1, 1, 1, 0})), 0u);
  // The level-3 family has level-2 neighbours only: it may merge.
  EXPECT_EQ(tree.coarsen(familyOf({2, 1, 1, 1})), 1u);
  EXPECT_EQ(tree.leafCount(), 64u);
  EXPECT_TRUE(tree.isBalanced());
  // Now the level-1 families can go (level 2 in [0, 1/2]^3 meets level 1 elsewhere).
  EXPECT_EQ(tree.coarsen(familyOf({1, 1, 1, 1})), 1u);
  EXPECT_TRUE(tree.isBalanced());
  EXPECT_NE(tree.leaves(), before);

  // Within one call each family is checked against the tree as merged so far, in Morton order of
  // the parents. Listing every leaf: the level-3 family merges, which lets the seven level-1 blocks
  // refined by balance merge in the same call; block (0, 0, 0) came first, when one of its children
  // was still refined (not a family of leaves), so it stays refined.
  Octree again({1, 1, 1}, {false, false, false}, 3);
  again.refine({0});
  again.refine({again.findLeaf({1, 0, 0, 0})});
  again.refine({again.findLeaf({2, 1, 1, 1})});
  std::vector<int> everything = allLeafIndices(again);
  const std::size_t merged = again.coarsen(everything);
  EXPECT_EQ(merged, 1u + 7u);
  EXPECT_EQ(again.leafCount(), 8u + 7u);
  EXPECT_EQ(again.findLeaf({1, 0, 0, 0}), -1);
  EXPECT_GE(again.findLeaf({2, 1, 1, 1}), 0);
  EXPECT_TRUE(again.isBalanced());
  EXPECT_TRUE(bruteBalanced(again));
  expectTilingInMortonOrder(again);
}

TEST(Octree, RepeatedCoarseningReturnsToTheRootBlocks) {
  for (const std::array<bool, 3> periodic : {std::array<bool, 3>{false, false, false},
                                             std::array<bool, 3>{true, true, true}}) {
    Octree tree({3, 2, 2}, periodic, 4);
    std::mt19937 rng(periodic[0] ? 31 : 32);
    refineRandomly(tree, rng, 80);
    int passes = 0;
    while (tree.coarsen(allLeafIndices(tree)) > 0) {
      ASSERT_TRUE(tree.isBalanced());
      expectTilingInMortonOrder(tree);
      ASSERT_LT(++passes, 100);
    }
    EXPECT_EQ(tree.leafCount(), 12u);
    EXPECT_EQ(tree.depth(), 0);
  }
}

TEST(Octree, SerializeRoundTrips) {
  Octree tree({3, 1, 2}, {true, false, true}, 4);
  std::mt19937 rng(2024);
  refineRandomly(tree, rng, 30);
  const std::vector<unsigned char> bytes = tree.serialize();
  EXPECT_EQ(bytes, encode(tree.rootBlocks(), 1u | 4u, tree.maxLevel(), tree.leaves()));  // the documented layout
  const Octree back = Octree::deserialize(bytes);
  EXPECT_EQ(back.rootBlocks(), tree.rootBlocks());
  EXPECT_EQ(back.periodic(), tree.periodic());
  EXPECT_EQ(back.maxLevel(), tree.maxLevel());
  EXPECT_EQ(back.leaves(), tree.leaves());
  for (std::size_t n = 0; n < back.leafCount(); ++n) ASSERT_EQ(back.findLeaf(back.leaves()[n]), static_cast<int>(n));
  EXPECT_EQ(back.serialize(), bytes);
  // The tree read back works like the original.
  Octree copy = back;
  EXPECT_EQ(copy.refine({0}), tree.refine({0}));
  EXPECT_EQ(copy.leaves(), tree.leaves());
}

TEST(Octree, DeserializeRejectsDamagedBytes) {
  Octree tree({2, 1, 1}, {false, false, false}, 2);
  tree.refine({0});
  const std::vector<unsigned char> good = tree.serialize();
  ASSERT_NO_THROW(Octree::deserialize(good));
  ASSERT_EQ(good.size(), kHeaderBytes + 9 * kLeafBytes);

  for (std::size_t length = 0; length < good.size(); ++length)
    EXPECT_NE(rejection({good.begin(), good.begin() + static_cast<std::ptrdiff_t>(length)}), "") << length;
  std::vector<unsigned char> bytes = good;
  bytes.push_back(0);
  EXPECT_NE(rejection(bytes).find("after the last leaf"), std::string::npos) << rejection(bytes);

  bytes = good;
  bytes[0] ^= 0x20;
  EXPECT_NE(rejection(bytes).find("magic"), std::string::npos);
  bytes = good;
  bytes[8] = 2;
  EXPECT_NE(rejection(bytes).find("version"), std::string::npos);
  bytes = good;
  bytes[12] = 0;  // no root blocks along x
  EXPECT_NE(rejection(bytes).find("root"), std::string::npos);
  bytes = good;
  bytes[25] = 21;  // maxLevel
  EXPECT_NE(rejection(bytes).find("max level"), std::string::npos);
  bytes = good;
  bytes[24] = 8;  // an unknown periodic flag
  EXPECT_NE(rejection(bytes).find("periodic"), std::string::npos);
  bytes = good;
  bytes[26] = 10;  // one leaf more than the bytes hold
  EXPECT_NE(rejection(bytes).find("truncated"), std::string::npos);

  // Leaves as (level, i, j, k): the 8 children of root 0 and root 1.
  const std::size_t firstLeaf = kHeaderBytes;
  bytes = good;
  bytes[firstLeaf] = 3;  // above maxLevel 2
  EXPECT_NE(rejection(bytes).find("above max level"), std::string::npos);
  bytes = good;
  bytes[firstLeaf + 1] = 4;  // level-1 x = 4 >= 2 << 1
  EXPECT_NE(rejection(bytes).find("outside the domain"), std::string::npos);
  bytes = good;
  bytes[firstLeaf + kLeafBytes + 1] = 0;  // child 1 (1, 1, 0, 0) moved onto child 0
  EXPECT_NE(rejection(bytes).find("overlap"), std::string::npos) << rejection(bytes);
  bytes = good;
  bytes[firstLeaf + 8 * kLeafBytes] = 1;  // root 1 (0, 1, 0, 0) read as level-1 (1, 1, 0, 0): overlaps
  EXPECT_NE(rejection(bytes).find("overlap"), std::string::npos) << rejection(bytes);

  // A gap: root 1 left out.
  std::vector<BlockKey> leaves = tree.leaves();
  leaves.pop_back();
  EXPECT_NE(rejection(encode({2, 1, 1}, 0, 2, leaves)).find("tile"), std::string::npos);
  // Out of Morton order: two leaves swapped.
  leaves = tree.leaves();
  std::swap(leaves[0], leaves[1]);
  EXPECT_NE(rejection(encode({2, 1, 1}, 0, 2, leaves)).find("Morton order"), std::string::npos);
  // Unbalanced: root 0 all at level 2 beside root 1 at level 0 (a tiling, in Morton order).
  leaves.clear();
  for (int k = 0; k < 4; ++k)
    for (int j = 0; j < 4; ++j)
      for (int i = 0; i < 4; ++i) leaves.push_back({2, i, j, k});
  leaves.push_back({0, 1, 0, 0});
  std::sort(leaves.begin(), leaves.end(), [&tree](const BlockKey& a, const BlockKey& b) {
    return cornerCode(tree, a) < cornerCode(tree, b);
  });
  EXPECT_NE(rejection(encode({2, 1, 1}, 0, 2, leaves)).find("balanced"), std::string::npos);
  // The same leaves with root 1 refined once are balanced, and read back.
  leaves.pop_back();
  for (int c = 0; c < 8; ++c) leaves.push_back(BlockKey{0, 1, 0, 0}.child(c));
  EXPECT_EQ(Octree::deserialize(encode({2, 1, 1}, 0, 2, leaves)).leafCount(), 72u);
}

TEST(Octree, SphereRefinementStaysBalancedAtScale) {
  // Root blocks refined three levels around a sphere's surface: 512 roots as asked of the octree,
  // and 4096 roots for about 10^5 leaves.
  for (const auto& [roots, radius] : {std::pair<int, double>{8, 2.7}, std::pair<int, double>{16, 6.1}}) {
    Octree tree({roots, roots, roots}, {false, false, false}, 3);
    const double centre = roots / 2.0;
    for (int pass = 0; pass < 3; ++pass) {
      std::vector<int> cut;
      for (int n = 0; n < static_cast<int>(tree.leafCount()); ++n) {
        const BlockKey& leaf = tree.leaves()[static_cast<std::size_t>(n)];
        const double size = 1.0 / static_cast<double>(1 << leaf.level);
        const double lo[3] = {leaf.i * size, leaf.j * size, leaf.k * size};
        double nearest = 0, farthest = 0;
        for (int axis = 0; axis < 3; ++axis) {
          const double a = lo[axis] - centre, b = lo[axis] + size - centre;
          const double near = (a > 0) ? a : (b < 0 ? -b : 0.0);
          const double far = std::max(std::abs(a), std::abs(b));
          nearest += near * near;
          farthest += far * far;
        }
        if (nearest <= radius * radius && farthest >= radius * radius) cut.push_back(n);
      }
      tree.refine(cut);
    }
    EXPECT_EQ(tree.depth(), 3);
    EXPECT_GT(tree.leafCount(), roots == 8 ? 20000u : 100000u);
    EXPECT_TRUE(tree.isBalanced());
  }
}
