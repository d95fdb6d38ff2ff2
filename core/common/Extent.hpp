#pragma once
#include <cstdint>

#include "common/Macros.hpp"

namespace octoflow {

using Index = std::int64_t;  // 64-bit: population arrays pass 2^31 values from 512^3 D3Q19 on

// Size of a uniform grid in nodes; a 2D grid has nz = 1. x runs fastest in memory.
struct Extent {
  Index nx = 1;
  Index ny = 1;
  Index nz = 1;

  OCTO_HD Index cellCount() const { return nx * ny * nz; }
  OCTO_HD Index linear(Index i, Index j, Index k) const { return i + nx * (j + ny * k); }
  OCTO_HD void coordinates(Index cell, Index& i, Index& j, Index& k) const {
    i = cell % nx;
    const Index rest = cell / nx;
    j = rest % ny;
    k = rest / ny;
  }
  OCTO_HD Index size(int axis) const { return axis == 0 ? nx : (axis == 1 ? ny : nz); }
};

// The nodes [lo, lo + size) of a grid: a sub-box the kernels of a step can be limited to.
struct NodeBox {
  Index lo[3] = {0, 0, 0};
  Extent size;

  static NodeBox of(const Extent& extent) { return NodeBox{{0, 0, 0}, extent}; }
  OCTO_HD Index cellCount() const { return size.cellCount(); }
};

}  // namespace octoflow
