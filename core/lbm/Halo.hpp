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
  NodeBox nodes() const { return NodeBox{{lo[0], lo[1], lo[2]}, Extent{hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2]}}; }
  // The place of local node (i, j, k) of the box in a buffer's run of box nodes.
  OCTO_HD Index entry(Index i, Index j, Index k) const {
    return (i - lo[0]) + (hi[0] - lo[0]) * ((j - lo[1]) + (hi[1] - lo[1]) * (k - lo[2]));
  }
};

// How many populations cross a face of lattice L (c_q[axis] == sign for one axis and sign).
template <class L>
constexpr int crossingCount() {
  int count = 0;
  for (int q = 0; q < L::Q; ++q) count += L::c(q, 0) == 1;
  return count;
}

// The populations of a box that cross, listed on the host: the slot each waits in and its
// velocity. The kernels index these by an unrolled loop; a lattice table indexed by the box's axis
// at run time would sit in each thread's local memory (it made the copies 10x slower).
struct HaloLinks {
  static constexpr int kMax = 9;  // D3Q27
  int count = 0;
  int slot[kMax] = {};
  int c[kMax][3] = {};
};

template <class L>
HaloLinks haloLinks(const HaloBox& box) {
  static_assert(crossingCount<L>() <= HaloLinks::kMax, "more crossing populations than HaloLinks holds");
  HaloLinks links;
  for (int q = 0; q < L::Q; ++q) {
    if (L::c(q, box.axis) != box.sign) continue;
    links.slot[links.count] = box.oppositeSlots ? L::opposite(q) : q;
    for (int axis = 0; axis < 3; ++axis) links.c[links.count][axis] = L::c(q, axis);
    ++links.count;
  }
  return links;
}

// Buffer layout: crossing population `link` (in q order) of box entry n at [link * boxNodes + n].
template <class S>
struct PackHalo {
  HaloBox box;
  HaloLinks links;
  Extent extent;
  const typename S::Value* populations;
  typename S::Value* buffer;

  OCTO_HD void operator()(Index i, Index j, Index k) const {
    const Index entry = box.entry(i, j, k), boxNodes = box.nodeCount(), node = extent.linear(i, j, k);
    OCTO_UNROLL
    for (int link = 0; link < HaloLinks::kMax; ++link)
      if (link < links.count)
        buffer[link * boxNodes + entry] = slot(populations, links.slot[link], extent.cellCount())[node];
  }
};

// The reverse copy. A push exchange leaves alone the slots the receiving node fills itself: slot q
// of a node whose source x - c_q is not a fluid node (a wall beyond the piece's face or an
// obstacle) holds the node's own reflected population, not one that streamed across.
template <class S>
struct UnpackHalo {
  HaloBox box;
  HaloLinks links;
  GridView grid;
  typename S::Value* populations;
  const typename S::Value* buffer;

  OCTO_HD bool reflects(const Index (&position)[3], const int (&c)[3]) const {
    Index source[3];
    OCTO_UNROLL
    for (int axis = 0; axis < 3; ++axis) {
      const Index size = grid.extent.size(axis);
      Index p = position[axis] - c[axis];
      if (p < 0 || p >= size) {
        const FaceType type = p < 0 ? grid.faces.face[2 * axis].type : grid.faces.face[2 * axis + 1].type;
        if (type != FaceType::Periodic) return true;
        p += p < 0 ? size : -size;
      }
      source[axis] = p;
    }
    return grid.kindOf(grid.extent.linear(source[0], source[1], source[2])) == kObstacleNode;
  }

  OCTO_HD void operator()(Index i, Index j, Index k) const {
    const Index entry = box.entry(i, j, k), boxNodes = box.nodeCount(), node = grid.extent.linear(i, j, k);
    const Index position[3] = {i, j, k};
    OCTO_UNROLL
    for (int link = 0; link < HaloLinks::kMax; ++link) {
      if (link >= links.count) continue;
      const typename S::Value value = buffer[link * boxNodes + entry];
      if (!box.oppositeSlots && reflects(position, links.c[link])) continue;
      slot(populations, links.slot[link], grid.extent.cellCount())[node] = value;
    }
  }
};

// The CSM velocity field (3 values a node) between a box and a buffer: [component * boxNodes + n].
// `pack` copies field -> buffer, else buffer -> field.
struct CopyLesVelocityHalo {
  HaloBox box;
  Extent extent;
  bool pack;
  LesVelocityValue* field;
  LesVelocityValue* buffer;

  OCTO_HD void operator()(Index i, Index j, Index k) const {
    const Index node = extent.linear(i, j, k), entry = box.entry(i, j, k), boxNodes = box.nodeCount();
    for (int c = 0; c < 3; ++c) {
      LesVelocityValue& inField = field[node * 3 + c];
      LesVelocityValue& inBuffer = buffer[c * boxNodes + entry];
      if (pack)
        inBuffer = inField;
      else
        inField = inBuffer;
    }
  }
};

}  // namespace octoflow::lbm
