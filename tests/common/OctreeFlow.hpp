#pragma once
// A velocity field on a small octree for the tracer tests: 4 x 1 x 1 root blocks (64 x 16 x 16
// level-0 cells), the middle two refined, the middle of those refined again (levels 0, 1, 2, 1, 0
// along x), every point holding field(x, y, z); and the tables a BlockVelocityView reads.
#include <array>
#include <cmath>
#include <vector>

#include "amr/BlockLinks.hpp"
#include "amr/Octree.hpp"
#include "particles/TracerSet.hpp"

namespace octoflow::testing {

struct OctreeFlow {
  sim::BlockGrid grid;
  std::vector<float> velocity;
  particles::BlockTables tables;

  template <class F>
  explicit OctreeFlow(F field) {
    amr::Octree octree({4, 1, 1}, {false, false, false}, 2);
    octree.refine({1, 2});
    std::vector<int> finest;
    for (std::size_t n = 0; n < octree.leafCount(); ++n)
      if (octree.leaves()[n].level == 1 && (octree.leaves()[n].i == 3 || octree.leaves()[n].i == 4))
        finest.push_back(static_cast<int>(n));
    octree.refine(finest);
    const amr::BlockLayout layout = amr::leafBlocks(octree);
    grid.blockNodes = layout.blockNodes;
    grid.levels = layout.levels;
    grid.domainCells[0] = 64;
    grid.domainCells[1] = grid.domainCells[2] = 16;
    const int B = layout.blockNodes;
    for (const amr::BlockPlacement& placement : layout.blocks) {
      grid.blocks.push_back({placement.level, {placement.origin[0], placement.origin[1], placement.origin[2]}});
      const double h = std::ldexp(1.0, -placement.level);
      for (int k = 0; k < B; ++k)
        for (int j = 0; j < B; ++j)
          for (int i = 0; i < B; ++i) {
            const auto v = field((placement.origin[0] + i) * h, (placement.origin[1] + j) * h, (placement.origin[2] + k) * h);
            for (int a = 0; a < 3; ++a) velocity.push_back(static_cast<float>(v[a]));
          }
    }
    tables = particles::blockTables(grid);
    tables.view.velocity = velocity.data();
    tables.view.meta = tables.meta.data();
    tables.view.leafOf = tables.leafOf.data();
  }
};


}  // namespace octoflow::testing
