// The octree LBM's case (amr/AmrLbmCase): the static refinement around obstacles and the obstacles
// rasterised on every block's points.
#include <gtest/gtest.h>

#include <cmath>

#include "TestSupport.hpp"
#include "amr/AmrLbmCase.hpp"
#include "amr/BlockLinks.hpp"
#include "io/CaseFile.hpp"

namespace octoflow::amr {
namespace {

constexpr double kPi = 3.14159265358979323846;

const AmrLbmCase& amrCaseOf(const io::CaseDescription& description) {
  return dynamic_cast<const AmrLbmCase&>(*description.solverCase);
}

// The distance from a leaf's box (level-0 coordinates) to the sphere's surface.
double distanceToSphere(const BlockKey& leaf, const double (&centre)[3], double radius) {
  const double size = std::ldexp(16.0, -leaf.level);
  const std::int64_t key[3] = {leaf.i, leaf.j, leaf.k};
  double nearest = 0.0, farthest = 0.0;
  for (int axis = 0; axis < 3; ++axis) {
    const double low = key[axis] * size - centre[axis], high = low + size;
    const double near = low > 0 ? low : (high < 0 ? -high : 0.0);
    const double far = std::max(std::abs(low), std::abs(high));
    nearest += near * near;
    farthest += far * far;
  }
  const double inner = std::sqrt(nearest), outer = std::sqrt(farthest);
  return inner > radius ? inner - radius : (outer < radius ? radius - outer : 0.0);
}

TEST(AmrCase, LeavesNearTheObstacleAreRefinedAndTheRestAreNot) {
  for (const double distance : {1.0, 6.0}) {
    SCOPED_TRACE(distance);
    const std::string text = testing::replaced(testing::octreeSphereCase("octree", 10, distance), "size = [32, 33, 33]",
                                               "size = [64, 49, 49]") +
                             "[output]\nevery = 10\n";
    const io::CaseDescription description = io::parseCase(testing::replaced(text, "max_level = 1", "max_level = 2"), "octree.toml");
    const AmrLbmCase& amrCase = amrCaseOf(description);
    const Octree& octree = *amrCase.octree;
    EXPECT_TRUE(octree.isBalanced());
    EXPECT_EQ(octree.depth(), 2);
    const double centre[3] = {12.0, 16.0, 16.0};
    int deepest = 0;
    for (const BlockKey& leaf : octree.leaves()) {
      const double gap = distanceToSphere(leaf, centre, 4.0);
      // Within the distance (less the leaf's spacing, at which the surface is looked for): refined
      // to the deepest level; a leaf of the deepest level is near the surface, or was made by the
      // 2:1 balance next to one that is (within a parent's size more).
      if (gap < distance - std::ldexp(1.0, -leaf.level)) EXPECT_EQ(leaf.level, 2) << leaf.i << " " << leaf.j << " " << leaf.k;
      if (leaf.level == 2) {
        ++deepest;
        EXPECT_LE(gap, distance + 8.0 + 1.0);
      }
    }
    EXPECT_GT(deepest, 8);
    EXPECT_LT(octree.leafCount(), 8u * 3u * 3u * 64u) << "not everything refined";
  }
}

TEST(AmrCase, TheSphereIsRasterisedOnEveryBlockAtItsSpacing) {
  const io::CaseDescription description =
      io::parseCase(testing::octreeSphereCase("octree", 10) + "[output]\nevery = 10\n", "octree.toml");
  const AmrLbmCase& amrCase = amrCaseOf(description);
  const BlockLayout layout = leafBlocks(*amrCase.octree);
  ASSERT_EQ(amrCase.solidPoints.size(), layout.blocks.size() * static_cast<std::size_t>(layout.pointsPerBlock()));
  const int B = layout.blockNodes;
  double volume = 0.0;
  std::size_t n = 0, wrong = 0;
  for (const BlockPlacement& block : layout.blocks) {
    const double h = std::ldexp(1.0, -block.level);
    for (int k = 0; k < B; ++k)
      for (int j = 0; j < B; ++j)
        for (int i = 0; i < B; ++i, ++n) {
          const double x = (block.origin[0] + i) * h - 12.0, y = (block.origin[1] + j) * h - 16.0,
                       z = (block.origin[2] + k) * h - 16.0;
          const bool inside = x * x + y * y + z * z <= 16.0;
          wrong += inside != (amrCase.solidPoints[n] != 0);
          // Each block's own cells: points with i, j, k < 16 tile its volume once.
          if (inside && i < B - 1 && j < B - 1 && k < B - 1) volume += h * h * h;
        }
  }
  EXPECT_EQ(wrong, 0u);
  const double sphere = 4.0 / 3.0 * kPi * 64.0;
  EXPECT_NEAR(volume, sphere, 0.05 * sphere);
}

}  // namespace
}  // namespace octoflow::amr
