#pragma once
// What the octree LBM's test programs share.
#include <cmath>
#include <vector>

#include "amr/AmrLbm.hpp"

namespace octoflow::amr::test {

// The CPU reference with BGK at relaxation time `tau` on level 0.
inline AmrLbmSettings cpuSettings(lbm::LatticeKind lattice, double tau) {
  AmrLbmSettings settings;
  settings.lattice = lattice;
  settings.tau = tau;
  settings.backend = exec::Backend::Cpu;
  return settings;
}

// Three levels on a small domain: 3 x 2 x 2 leaves, periodic along x, walls on y and z; the leaf
// at the middle of the bottom refined twice (26 blocks).
inline Octree threeLevelTree() {
  Octree tree({3, 2, 2}, {true, false, false}, 2);
  tree.refine({tree.findLeaf(BlockKey{0, 1, 0, 0})});
  tree.refine({tree.findLeaf(BlockKey{1, 3, 1, 1})});
  return tree;
}

// A channel on threeLevelTree() through every path of a step (same level, finer and coarser links,
// face rules, obstacles): tau 0.56 on level 0, a body force along x, a wall sliding along x at y-,
// an outflow face at z+ (with threeLevelSphere and threeLevelStart).
inline AmrLbmSettings threeLevelChannel(lbm::LatticeKind lattice, lbm::CollisionKind collision, exec::Backend backend) {
  AmrLbmSettings settings;
  settings.lattice = lattice;
  settings.collision = collision;
  settings.tau = 0.56;
  settings.acceleration = {2e-5, 0.0, 0.0};
  settings.backend = backend;
  settings.faces.face[2].type = lbm::FaceType::MovingWall;
  settings.faces.face[2].velocity = lbm::Vector3{0.02f, 0.0f, 0.0f};
  settings.faces.face[5].type = lbm::FaceType::Outflow;
  return settings;
}

// A sphere of radius 5 around (24, 8, 8) (level-0 nodes): solid points on levels 1 and 2.
inline bool threeLevelSphere(const double (&x)[3]) {
  return (x[0] - 24) * (x[0] - 24) + (x[1] - 8) * (x[1] - 8) + (x[2] - 8) * (x[2] - 8) < 25.0;
}

// The channel's start: a density wave along y, a flow along x with a shear along z.
inline void threeLevelStart(const double (&x)[3], float& rho, float (&u)[3]) {
  rho = static_cast<float>(1.0 + 0.002 * std::sin(0.2 * x[1]));
  u[0] = 0.03f;
  u[1] = static_cast<float>(0.01 * std::sin(0.3 * x[2]));
  u[2] = 0.0f;
}

// Two levels where blocks of each level lie wholly among blocks of their level (AmrKernel::Whole
// steps them whole) beside blocks that border the other level: 5 x 4 x 1 root blocks, periodic in
// x and y (some whole blocks reach their neighbours across the periodic faces), walls in z, the 2 x 2
// roots at the corner refined (their 4 x 4 x 2 children: the middle 2 x 2 x 2 are whole on level 1).
inline Octree wholeBlocksTree() {
  Octree tree({5, 4, 1}, {true, true, false}, 1);
  std::vector<int> corner;
  for (int j = 0; j < 2; ++j)
    for (int i = 0; i < 2; ++i) corner.push_back(tree.findLeaf(BlockKey{0, i, j, 0}));
  tree.refine(corner);
  return tree;
}

// Three levels, each with blocks among blocks of its level (the benchmark's kind of octree: fully
// periodic, refined in nested boxes): 8^3 roots, a box of 5^3 refined (10^3 children), the middle
// 4^3 of those refined again; every level keeps a ring of blocks three deep around the next one.
inline Octree nestedWholeBlocksTree() {
  Octree tree({8, 8, 8}, {true, true, true}, 2);
  for (int level = 0; level < 2; ++level) {
    const int low = level == 0 ? 0 : 3, high = level == 0 ? 4 : 6;
    std::vector<int> box;
    for (std::size_t leaf = 0; leaf < tree.leafCount(); ++leaf) {
      const BlockKey& key = tree.leaves()[leaf];
      const bool inside = key.i >= low && key.i <= high && key.j >= low && key.j <= high && key.k >= low && key.k <= high;
      if (key.level == level && inside) box.push_back(static_cast<int>(leaf));
    }
    tree.refine(box);
  }
  return tree;
}

}  // namespace octoflow::amr::test
