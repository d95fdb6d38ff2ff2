#pragma once
// Copying the populations that cross a face between pieces of a grid (MPI ranks) into and out of
// a contiguous buffer: the point-wise halves of the halo exchange (parallel/DistributedSolver.cpp
// moves the buffers). Which populations cross, and where they wait, follows from the in-place
// update (StreamCollide.hpp):
//  - after an even step, f*_q of a node sits in its own slot opposite(q): the populations about
//    to leave a piece are copied from its boundary layer into the neighbour's ghost layer, where
//    the odd step pulls them from ("pull" exchange, opposite slots);
//  - after an odd step, the populations a piece pushed into its ghost layer (slot q) are copied
//    into the neighbour's boundary layer, where the even step reads them ("push" exchange).
#include <cstdint>

#include "lbm/StreamCollide.hpp"

namespace octoflow::lbm {

// A box of local nodes [lo, hi) and the populations of each node that cross: c_q[axis] == sign.
struct HaloBox {
  Index lo[3] = {0, 0, 0};
  Index hi[3] = {0, 0, 0};
  int axis = 0;
  int sign = 1;
  bool oppositeSlots = false;  // pull exchange: slot opposite(q); push exchange: slot q

  OCTO_HD Index nodeCount() const { return (hi[0] - lo[0]) * (hi[1] - lo[1]) * (hi[2] - lo[2]); }
  OCTO_HD Index node(Index entry, const Extent& e) const {  // local node of the box's entry-th node
    const Index nx = hi[0] - lo[0], ny = hi[1] - lo[1];
    const Index i = lo[0] + entry % nx, rest = entry / nx;
    return e.linear(i, lo[1] + rest % ny, lo[2] + rest / ny);
  }
};

// How many populations cross a face of lattice L (c_q[axis] == sign for one axis and sign).
template <class L>
constexpr int crossingCount() {
  int count = 0;
  for (int q = 0; q < L::Q; ++q) count += L::c(q, 0) == 1;
  return count;
}

// Buffer layout: crossing population k (in q order) of box node n at [k * boxNodes + n].
template <class L, class S>
struct PackHalo {
  HaloBox box;
  Extent extent;
  const typename S::Value* populations;
  typename S::Value* buffer;

  OCTO_HD void operator()(Index entry) const {
    const Index node = box.node(entry, extent), boxNodes = box.nodeCount(), nodeCount = extent.cellCount();
    int k = 0;
    OCTO_UNROLL
    for (int q = 0; q < L::Q; ++q) {
      if (L::c(q, box.axis) != box.sign) continue;
      buffer[k++ * boxNodes + entry] = slot(populations, box.oppositeSlots ? L::opposite(q) : q, nodeCount)[node];
    }
  }
};

// The reverse copy. A push exchange leaves alone the slots the receiving node fills itself: slot q
// of a node whose source x - c_q is not a fluid node (a wall beyond the piece's face or an
// obstacle) holds the node's own reflected population, not one that streamed across.
template <class L, class S>
struct UnpackHalo {
  HaloBox box;
  GridView grid;
  typename S::Value* populations;
  const typename S::Value* buffer;

  OCTO_HD bool reflects(Index node, int q) const {
    const Extent& e = grid.extent;
    Index position[3];
    e.coordinates(node, position[0], position[1], position[2]);
    for (int axis = 0; axis < 3; ++axis) {
      position[axis] -= L::c(q, axis);
      const Index size = e.size(axis);
      if (position[axis] >= 0 && position[axis] < size) continue;
      if (grid.faces.face[2 * axis + (position[axis] < 0 ? 0 : 1)].type != FaceType::Periodic) return true;
      position[axis] += position[axis] < 0 ? size : -size;
    }
    return grid.kindOf(e.linear(position[0], position[1], position[2])) == kObstacleNode;
  }

  OCTO_HD void operator()(Index entry) const {
    const Index node = box.node(entry, grid.extent), boxNodes = box.nodeCount(), nodeCount = grid.extent.cellCount();
    int k = 0;
    for (int q = 0; q < L::Q; ++q) {
      if (L::c(q, box.axis) != box.sign) continue;
      const typename S::Value value = buffer[k++ * boxNodes + entry];
      if (!box.oppositeSlots && reflects(node, q)) continue;
      slot(populations, box.oppositeSlots ? L::opposite(q) : q, nodeCount)[node] = value;
    }
  }
};

// A per-node field of `components` floats (the CSM velocity field) between a box and a buffer:
// [component * boxNodes + n]. `pack` copies field -> buffer, else buffer -> field.
struct CopyFieldHalo {
  HaloBox box;
  Extent extent;
  int components;
  bool pack;
  float* field;
  float* buffer;

  OCTO_HD void operator()(Index entry) const {
    const Index node = box.node(entry, extent), boxNodes = box.nodeCount();
    for (int c = 0; c < components; ++c) {
      float& inField = field[node * components + c];
      float& inBuffer = buffer[c * boxNodes + entry];
      if (pack)
        inBuffer = inField;
      else
        inField = inBuffer;
    }
  }
};

}  // namespace octoflow::lbm
