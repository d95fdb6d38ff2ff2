#pragma once
// The point-wise parts of a temporally blocked launch (TemporalBlocking.hpp), written once for the
// CPU tile loop (BlockedStepperCpu.cpp) and the CUDA kernel (BlockedStepperCuda.cu).
//
// A launch advances the state at step t to step t + ts. The first and the last streaming go
// through the global arrays in the in-place (AA) layout of their step's parity, exactly as the
// single-step kernel reads and writes them (StreamCollide.hpp): a tile's nodes and a halo of
// ts - 1 nodes are gathered as the populations that arrived at step t and collided; ts - 1 steps
// then pull and collide inside the tile, the valid region shrinking by a node a step; the last
// collision's populations of the tile's own nodes are scattered as step t + ts - 1 scatters them.
// The arrays read and written are different ones (the solver swaps them), so tiles overlap
// freely; every slot of the destination is written by exactly one node, as in the single step.
//
// Inside the tile the populations are kept in place, in the AA layout of the tile's own steps
// (TileValues): a cell's step reads and writes the same slots and no other cell's, so the one-step
// stages need a single buffer (half the shared memory of a read and a write buffer: two tiles an SM).
//
// Walls, faces and obstacles: a population whose source x - c_q is not a fluid node (beyond a
// non-periodic face, or an obstacle) is the node's own post-collision f*_opposite(q) of the step
// before: half-way bounce-back, as the single-step kernels apply for resting walls and obstacles.
#include <cstdint>

#include "lbm/StreamCollide.hpp"

namespace octoflow::lbm::blocking {

// What a blocked launch knows of the grid.
struct BlockedGrid {
  Extent extent;
  unsigned periodicAxes = 0;
  const std::uint8_t* kind = nullptr;  // NodeKind per node, or null: every node is a fluid node
  Vector3 acceleration;
};

// A tile's cells: the nodes it writes (core) and around them a halo of ts - 1 nodes along the axes
// the lattice moves on; cell (x, y, z) of the region is at x + region[0] (y + region[1] z).
struct TileShape {
  int core[3] = {1, 1, 1};
  int halo[3] = {0, 0, 0};
  int region[3] = {1, 1, 1};

  TileShape() = default;
  TileShape(const int (&block)[3], int dimensions, int steps) {
    for (int axis = 0; axis < 3; ++axis) {
      core[axis] = axis < dimensions ? block[axis] : 1;
      halo[axis] = axis < dimensions ? steps - 1 : 0;
      region[axis] = core[axis] + 2 * halo[axis];
    }
  }
  OCTO_HD OCTO_INLINE int cells() const { return region[0] * region[1] * region[2]; }
  OCTO_HD OCTO_INLINE int cell(int x, int y, int z) const { return x + region[0] * (y + region[1] * z); }
  // The cell offset of x - c_q.
  template <class L>
  OCTO_HD OCTO_INLINE int sourceOffset(int q) const {
    return -(L::c(q, 0) + region[0] * (L::c(q, 1) + region[1] * L::c(q, 2)));
  }
};

// Flags of a region cell: bit q (q < 27) when the source x - c_q of population q is not a fluid
// node; kFluidCell when the cell is a fluid node at all (else nothing of it is computed).
constexpr std::uint32_t kFluidCell = 1u << 31;

// The cells of a region within `radius` of the core: [lo, hi) per axis.
struct CellRange {
  int lo[3], hi[3];
  OCTO_HD OCTO_INLINE CellRange(const TileShape& shape, int radius) {
    for (int axis = 0; axis < 3; ++axis) {
      const int r = shape.halo[axis] > 0 ? radius : 0;
      lo[axis] = shape.halo[axis] - r;
      hi[axis] = shape.halo[axis] + shape.core[axis] + r;
    }
  }
  OCTO_HD OCTO_INLINE int width() const { return hi[0] - lo[0]; }
  OCTO_HD OCTO_INLINE int rows() const { return (hi[1] - lo[1]) * (hi[2] - lo[2]); }
  // Row `row` of the range (y fastest) as its y and z.
  OCTO_HD OCTO_INLINE void row(int index, int& y, int& z) const {
    const int height = hi[1] - lo[1];
    y = lo[1] + index % height;
    z = lo[2] + index / height;
  }
};

// The grid coordinate of region coordinate x along `axis` for the tile whose core starts at
// `origin`: wrapped across a periodic axis; false beyond a non-periodic face.
OCTO_HD OCTO_INLINE bool gridCoordinate(const BlockedGrid& grid, const TileShape& shape, int axis, Index origin, int x,
                                        Index& coordinate) {
  const Index n = grid.extent.size(axis);
  Index g = origin + x - shape.halo[axis];
  if (g >= 0 && g < n) {
    coordinate = g;
    return true;
  }
  if (!(grid.periodicAxes & (1u << axis))) return false;
  g %= n;
  coordinate = g < 0 ? g + n : g;
  return true;
}

OCTO_HD OCTO_INLINE bool isObstacle(const BlockedGrid& grid, Index node) {
  return grid.kind && grid.kind[node] == kObstacleNode;
}

// The flags of the node at grid position p (a fluid node or not).
template <class L>
OCTO_HD OCTO_INLINE std::uint32_t nodeFlags(const BlockedGrid& grid, const Index (&p)[3]) {
  const Extent& e = grid.extent;
  // A bulk node (every node, without a kind array) has every source a fluid node: one byte read.
  const std::uint8_t kind = grid.kind ? grid.kind[e.linear(p[0], p[1], p[2])] : std::uint8_t{kBulkNode};
  if (kind == kBulkNode) return kFluidCell;
  if (kind == kObstacleNode) return 0;
  std::uint32_t flags = kFluidCell;
  OCTO_UNROLL
  for (int q = 1; q < L::Q; ++q) {
    Index source[3];
    bool outside = false;
    OCTO_UNROLL
    for (int axis = 0; axis < 3; ++axis) {
      const Index n = e.size(axis);
      source[axis] = p[axis] - L::c(q, axis);
      if (source[axis] >= 0 && source[axis] < n) continue;
      if (!(grid.periodicAxes & (1u << axis))) outside = true;
      source[axis] = source[axis] < 0 ? source[axis] + n : source[axis] - n;
    }
    if (outside || isObstacle(grid, e.linear(source[0], source[1], source[2]))) flags |= 1u << q;
  }
  return flags;
}

// The populations that arrived at a fluid node at step t (`odd`: the parity of t), read from the
// global array as the single-step kernel reads them, reflected links from the node's own slot.
template <class L, class S>
OCTO_HD OCTO_INLINE void gatherNode(const SlotBases<L, const typename S::Value>& slots, const Neighbourhood& neighbours,
                                    bool odd, std::uint32_t flags, float (&g)[L::Q]) {
  OCTO_UNROLL
  for (int q = 0; q < L::Q; ++q)
    g[q] = S::load(loadPopulation(odd && !(flags & (1u << q)) ? slots[L::opposite(q)] + neighbours.template from<L>(q)
                                                              : slots[q] + neighbours.node()));
}

// Where a fluid node's post-collision populations of a step of parity `odd` go in the global array:
// to the node they stream to, or (even step, or a link into a non-fluid node) home, as the
// single-step kernels put them.
template <class L, class S>
OCTO_HD OCTO_INLINE void scatterNode(const SlotBases<L, typename S::Value>& slots, const Neighbourhood& neighbours,
                                     bool odd, std::uint32_t flags, const float (&g)[L::Q]) {
  OCTO_UNROLL
  for (int q = 0; q < L::Q; ++q) {
    if (odd && !(flags & (1u << L::opposite(q))))
      slots[q][neighbours.template to<L>(q)] = S::store(g[q]);
    else
      slots[L::opposite(q)][neighbours.node()] = S::store(g[q]);
  }
}

// Post-collision values of a tile buffer: slot q of cell c at values[q * cells + c]. The tile's
// steps keep them in the in-place (AA) layout of their parity, counted from the launch's first step
// (step 0, even): an even step reads a cell's own slots and writes each population home into the
// opposite slot; an odd step reads from the neighbours' opposite slots and writes to the
// neighbours. Either way a cell's step reads and writes the same slots, which no other cell touches.
struct TileValues {
  float* values;
  int cells;
  OCTO_HD OCTO_INLINE float& at(int q, int cell) const { return values[q * cells + cell]; }
};

// The populations that arrive at a fluid cell in a step of parity `odd` inside the tile: the
// neighbours' post-collision values of the step before, the cell's own opposite one on a reflected
// link (a reflected link's value sits in the cell's own slot q after either parity's write).
template <class L>
OCTO_HD OCTO_INLINE void pullInTile(const TileValues& from, const TileShape& shape, int cell, std::uint32_t flags,
                                    bool odd, float (&g)[L::Q]) {
  OCTO_UNROLL
  for (int q = 0; q < L::Q; ++q)
    g[q] = odd && !(flags & (1u << q)) ? from.at(L::opposite(q), cell + shape.sourceOffset<L>(q)) : from.at(q, cell);
}

// Where a fluid cell's post-collision populations of a step of parity `odd` go in the tile: to the
// cell they stream to (odd, when it is a fluid node), else home into the opposite slot.
template <class L>
OCTO_HD OCTO_INLINE void pushInTile(const TileValues& to, const TileShape& shape, int cell, std::uint32_t flags,
                                    bool odd, const float (&g)[L::Q]) {
  OCTO_UNROLL
  for (int q = 0; q < L::Q; ++q) {
    if (odd && !(flags & (1u << L::opposite(q))))
      to.at(q, cell - shape.sourceOffset<L>(q)) = g[q];
    else
      to.at(L::opposite(q), cell) = g[q];
  }
}

// One step of a fluid cell inside the tile: pull, then collide.
template <class L, bool Forced, class Collision>
OCTO_HD OCTO_INLINE void stepInTile(const Collision& collision, const Vector3& acceleration, const TileValues& from,
                                    const TileShape& shape, int cell, std::uint32_t flags, bool odd, float (&g)[L::Q]) {
  pullInTile<L>(from, shape, cell, flags, odd, g);
  collision.template collide<L, Forced>(g, acceleration);
}

// Two steps of a fluid cell without a barrier between them (a register stage, tr = 1; the first of
// parity `oddFirst`): the first step's collisions of the cell and of every fluid neighbour it pulls
// from are recomputed here, each kept only for the population that streams to the cell.
template <class L, bool Forced, class Collision>
OCTO_HD OCTO_INLINE void twoStepsInRegisters(const Collision& collision, const Vector3& acceleration,
                                             const TileValues& from, const std::uint32_t* flags,
                                             const TileShape& shape, int cell, bool oddFirst, float (&g)[L::Q]) {
  const std::uint32_t own = flags[cell];
  float first[L::Q];
  stepInTile<L, Forced>(collision, acceleration, from, shape, cell, own, oddFirst, first);
  OCTO_UNROLL
  for (int q = 0; q < L::Q; ++q) {
    if (q == 0 || (own & (1u << q))) {
      g[q] = first[q == 0 ? 0 : L::opposite(q)];
      continue;
    }
    const int source = cell + shape.sourceOffset<L>(q);
    float neighbour[L::Q];
    stepInTile<L, Forced>(collision, acceleration, from, shape, source, flags[source], oddFirst, neighbour);
    g[q] = neighbour[q];
  }
  collision.template collide<L, Forced>(g, acceleration);
}

// One launch over one tile, cell by cell: what the CPU loop and the CUDA kernel both call, in
// stages separated by barriers (first(), then inside() for radii ts - 2 down to 0).
template <class L, class S, bool Forced, class Collision>
struct TileLaunch {
  using Value = typename S::Value;
  using Lattice = L;
  static constexpr int Q = L::Q;
  static constexpr bool forced = Forced;
  BlockedGrid grid;
  Collision collision;
  TileShape shape;
  Index origin[3];  // the grid position of the tile's first core node
  SlotBases<L, const Value> source;
  SlotBases<L, Value> destination;
  int steps;
  bool oddFirst, oddLast;  // the parities of the launch's first and last step

  // The grid position of a region cell; false beyond a non-periodic face.
  OCTO_HD OCTO_INLINE bool position(int x, int y, int z, Index (&p)[3]) const {
    return gridCoordinate(grid, shape, 0, origin[0], x, p[0]) && gridCoordinate(grid, shape, 1, origin[1], y, p[1]) &&
           gridCoordinate(grid, shape, 2, origin[2], z, p[2]);
  }
  // Whether the step that leaves the cells within `radius` of the core valid is odd in the tile's
  // layout (the launch's first step, radius steps - 1, is step 0).
  OCTO_HD OCTO_INLINE bool oddInTile(int radius) const { return ((steps - 1 - radius) & 1) != 0; }
  // Whether a core cell is a node of the grid (a tile at the grid's end reaches past it).
  OCTO_HD OCTO_INLINE bool owns(int x, int y, int z) const {
    return origin[0] + x - shape.halo[0] < grid.extent.nx && origin[1] + y - shape.halo[1] < grid.extent.ny &&
           origin[2] + z - shape.halo[2] < grid.extent.nz;
  }

  // The launch's first step at a region cell: its flags, and the collided populations that
  // arrived at step t, kept in `to` (a one-step launch scatters them at once).
  OCTO_HD OCTO_INLINE void first(int x, int y, int z, std::uint32_t* flags, const TileValues& to) const {
    const int cell = shape.cell(x, y, z);
    Index p[3];
    const std::uint32_t own = position(x, y, z, p) ? nodeFlags<L>(grid, p) : 0u;
    flags[cell] = own;
    if (!(own & kFluidCell)) return;
    const Neighbourhood neighbours(grid.extent, p[0], p[1], p[2]);
    float g[L::Q];
    gatherNode<L, S>(source, neighbours, oddFirst, own, g);
    collision.template collide<L, Forced>(g, grid.acceleration);
    if (steps == 1) {
      if (owns(x, y, z)) scatterNode<L, S>(destination, neighbours, oddLast, own, g);
      return;
    }
    pushInTile<L>(to, shape, cell, own, false, g);
  }

  // The end of a step of parity `odd` inside the tile at a cell `radius` nodes from the core: kept
  // in `to`, or (the last step, radius 0) scattered to the grid.
  OCTO_HD OCTO_INLINE void finish(int x, int y, int z, int radius, bool odd, std::uint32_t flags,
                                  const float (&g)[L::Q], const TileValues& to) const {
    if (radius > 0) {
      pushInTile<L>(to, shape, shape.cell(x, y, z), flags, odd, g);
      return;
    }
    Index p[3];
    if (!owns(x, y, z) || !position(x, y, z, p)) return;
    scatterNode<L, S>(destination, Neighbourhood(grid.extent, p[0], p[1], p[2]), oddLast, flags, g);
  }

  // A step inside the tile at a cell `radius` nodes from the core (`from` and `to` may be one
  // buffer); `odd` is oddInTile(radius), passed so a caller that knows it as a constant (the CUDA
  // stages) drops the other parity's addressing. A cell whose links are all fluid ones (the bulk)
  // takes the form without a test a link.
  OCTO_HD OCTO_INLINE void inside(int x, int y, int z, int radius, bool odd, const std::uint32_t* flags,
                                  const TileValues& from, const TileValues& to) const {
    const int cell = shape.cell(x, y, z);
    const std::uint32_t own = flags[cell];
    if (!(own & kFluidCell)) return;
    const auto step = [&](std::uint32_t links) {
      float g[L::Q];
      stepInTile<L, Forced>(collision, grid.acceleration, from, shape, cell, links, odd, g);
      finish(x, y, z, radius, odd, links, g, to);
    };
    if (own == kFluidCell)
      step(kFluidCell);
    else
      step(own);
  }

  // Two steps inside the tile (a register stage) at a cell `radius` nodes from the core.
  OCTO_HD OCTO_INLINE void twoInside(int x, int y, int z, int radius, const std::uint32_t* flags,
                                     const TileValues& from, const TileValues& to) const {
    const int cell = shape.cell(x, y, z);
    if (!(flags[cell] & kFluidCell)) return;
    float g[L::Q];
    twoStepsInRegisters<L, Forced>(collision, grid.acceleration, from, flags, shape, cell, oddInTile(radius + 1), g);
    finish(x, y, z, radius, oddInTile(radius), flags[cell], g, to);
  }
};

}  // namespace octoflow::lbm::blocking
