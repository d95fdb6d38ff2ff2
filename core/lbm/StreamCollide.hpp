#pragma once
// The uniform-grid update as point-wise functors shared by the OpenMP and CUDA executions.
//
// One population array, updated in place by the AA pattern (Bailey, Myre, Walsh, Lilja & Saar,
// "Accelerating lattice Boltzmann fluid flow simulations using graphics processors", ICPP 2009).
// Storage is structure-of-arrays: population q of node n at [q * nodeCount + n].
//  - An even step (0, 2, ...) reads a node's populations from its own slots and writes the
//    post-collision values f*_q back into the opposite slots of the same node.
//  - An odd step reads population q from the node it streams from (slot opposite(q) of x - c_q,
//    where the even step left it) and writes f*_q to the node it streams to (slot q of x + c_q).
// Either step reads and writes only locations that no other node touches in that step, so the
// nodes may update in any order, in place, on any number of threads.
//
// A population q whose source x - c_q is not a fluid node (it lies beyond a wall or open face, or
// is an obstacle) finds the node's own f*_opposite(q) in slot q of x in either parity: an even
// step leaves it there, and an odd step writes a population bound for a non-fluid node into the
// node's own opposite slot instead of the neighbour's. That is half-way bounce-back as it stands;
// the face rules add the wall, inlet and outlet terms to it.
//
// Nodes come in three kinds. Bulk nodes (every source a fluid node, across periodic faces at
// most) run a kernel with no boundary logic at all; boundary nodes run a second kernel from a
// list; obstacle nodes are never touched.
#include <cstdint>

#include "common/Extent.hpp"
#include "lbm/Collision.hpp"
#include "lbm/FaceBoundaries.hpp"
#include "lbm/PopulationStorage.hpp"
#include "lbm/VelocityTap.hpp"

namespace octoflow::lbm {

// Ghost nodes are the layers a piece of a larger grid (an MPI rank's) holds of its neighbours'
// nodes: never updated here, filled by the halo exchange (parallel/DistributedSolver.cpp).
enum NodeKind : std::uint8_t { kBulkNode = 0, kBoundaryNode = 1, kObstacleNode = 2, kGhostNode = 3 };

// Where a grid sits in the whole grid: the whole grid's coordinates of node (0, 0, 0), its
// extent and its periodic axes (what a parabolic inlet profile is drawn over). A grid that is the
// whole grid has origin 0.
struct Placement {
  Index origin[3] = {0, 0, 0};
  Extent whole;
  unsigned periodicAxes = 0;
};

struct GridView {
  Extent extent;
  FaceBoundaries faces;
  Vector3 acceleration;
  const std::uint8_t* kind = nullptr;  // NodeKind per node; null when every node is a bulk node
  Placement placement;

  OCTO_HD std::uint8_t kindOf(Index node) const { return kind ? kind[node] : std::uint8_t{kBulkNode}; }
  OCTO_HD bool obstacleAt(Index i, Index j, Index k) const { return kindOf(extent.linear(i, j, k)) == kObstacleNode; }
};

// NodeMoments (FaceBoundaries.hpp): a node's density and velocity after a step's collision, what
// the wall and outlet rules of the next step need of a boundary node (and of the node inward of an
// outflow face).

// A node with at least one population arriving by reflection, or one whose velocity an outflow
// rule needs. Built on the host (findBoundaryNodes), handed to the boundary kernels as a list.
struct BoundaryNode {
  Index node = 0;
  std::int32_t position[3] = {0, 0, 0};
  std::uint32_t reflected = 0;  // bit q: x - c_q is not a fluid node
  std::int32_t inner = -1;      // list entry of the node one step inward from an outflow face
};

// Node indices inside one grid are 32-bit (UniformSolver admits at most 2^32 - 1 nodes a grid;
// larger domains are split over MPI ranks); population addresses are formed as a 64-bit slot
// pointer (thread-invariant) plus a 32-bit node index, one wide multiply-add on a GPU, so arrays
// of more than 2^31 values are addressed correctly.
using NodeIndex = std::uint32_t;

template <class Value>
OCTO_HD OCTO_INLINE Value* slot(Value* populations, int q, Index nodeCount) {
  return populations + q * nodeCount;
}

// Where each population's slot array starts, worked out once on the host and handed to a kernel
// with its parameters. Written as slot(populations, q, n) + node inside a kernel, the compiler
// folds the two into one 64-bit sum per population (q n + node, shifted, added: eight
// instructions an address on sm_90); from a base it cannot see through, an address is one wide
// multiply-add of the 32-bit node index.
template <class L, class Value>
struct SlotBases {
  Value* base[L::Q];
  SlotBases(Value* populations, Index nodeCount) {
    for (int q = 0; q < L::Q; ++q) base[q] = slot(populations, q, nodeCount);
  }
  OCTO_HD OCTO_INLINE Value* operator[](int q) const { return base[q]; }
};

// Node indices of the neighbours x + d of a node, d in {-1, 0, 1}^3, wrapped across every face
// (a wrapped index across a non-periodic face is never used: such links reflect).
struct Neighbourhood {
  NodeIndex offset[3][3];  // offset[axis][d + 1]: the axis' share of the node index

  OCTO_HD OCTO_INLINE Neighbourhood(const Extent& e, Index i, Index j, Index k) {
    const NodeIndex position[3] = {static_cast<NodeIndex>(i), static_cast<NodeIndex>(j), static_cast<NodeIndex>(k)};
    const NodeIndex stride[3] = {1, static_cast<NodeIndex>(e.nx), static_cast<NodeIndex>(e.nx * e.ny)};
    OCTO_UNROLL
    for (int axis = 0; axis < 3; ++axis) {
      const NodeIndex p = position[axis], last = static_cast<NodeIndex>(e.size(axis) - 1);
      offset[axis][0] = (p == 0 ? last : p - 1) * stride[axis];
      offset[axis][1] = p * stride[axis];
      offset[axis][2] = (p == last ? 0 : p + 1) * stride[axis];
    }
  }
  OCTO_HD OCTO_INLINE NodeIndex node() const { return offset[0][1] + offset[1][1] + offset[2][1]; }
  OCTO_HD OCTO_INLINE NodeIndex along(int axis, int d) const {  // x + d e_axis (unsigned wrap-around cancels)
    return node() - offset[axis][1] + offset[axis][d + 1];
  }
  template <class L>
  OCTO_HD OCTO_INLINE NodeIndex from(int q) const {  // x - c_q
    return offset[0][1 - L::c(q, 0)] + offset[1][1 - L::c(q, 1)] + offset[2][1 - L::c(q, 2)];
  }
  template <class L>
  OCTO_HD OCTO_INLINE NodeIndex to(int q) const {  // x + c_q
    return offset[0][1 + L::c(q, 0)] + offset[1][1 + L::c(q, 1)] + offset[2][1 + L::c(q, 2)];
  }
};

// The populations that arrive at a bulk node in a step of parity Odd, in the storage's units
// (S::Scale: no multiply after each load).
template <class L, class S, bool Odd, class Value>
OCTO_HD OCTO_INLINE void gatherBulk(const SlotBases<L, Value>& slots, const Neighbourhood& neighbours,
                                    float (&g)[L::Q]) {
  OCTO_UNROLL
  for (int q = 0; q < L::Q; ++q)
    g[q] = S::loadScaled(loadPopulation(Odd ? slots[L::opposite(q)] + neighbours.template from<L>(q)
                                      : slots[q] + neighbours.node()));
}

// Where a bulk node's post-collision populations (in the storage's units) go in a step of parity Odd.
template <class L, class S, bool Odd>
OCTO_HD OCTO_INLINE void scatterBulk(const SlotBases<L, typename S::Value>& slots, const Neighbourhood& neighbours,
                                     const float (&g)[L::Q]) {
  OCTO_UNROLL
  for (int q = 0; q < L::Q; ++q) {
    if (Odd)
      slots[q][neighbours.template to<L>(q)] = S::storeScaled(g[q]);
    else
      slots[L::opposite(q)][neighbours.node()] = S::storeScaled(g[q]);
  }
}

// Bit per face crossed by the link from x - c_q to the node at `position` (periodic faces wrap
// and count as not crossed).
template <class L>
OCTO_HD OCTO_INLINE unsigned crossedFaces(const GridView& grid, const std::int32_t (&position)[3], int q) {
  unsigned faces = 0;
  OCTO_UNROLL
  for (int axis = 0; axis < 3; ++axis) {
    if (L::c(q, axis) == 0) continue;
    const Index source = position[axis] - L::c(q, axis);
    if (source >= 0 && source < grid.extent.size(axis)) continue;
    const int face = 2 * axis + (source < 0 ? 0 : 1);
    if (grid.faces.face[face].type != FaceType::Periodic) faces |= 1u << face;
  }
  return faces;
}

// The population q arriving at a node through the faces in `faces` (FaceBoundaries.hpp); the
// node's moments are those of its previous step.
template <class L>
OCTO_HD OCTO_INLINE float incomingAcrossFaces(const GridView& grid, float reflected, const std::int32_t (&position)[3],
                                              int q, unsigned faces, const NodeMoments& node,
                                              const NodeMoments& inner) {
  const Placement& place = grid.placement;
  const Index at[3] = {position[0] + place.origin[0], position[1] + place.origin[1], position[2] + place.origin[2]};
  return incomingAcrossFaces<L>(grid.faces, place.whole, place.periodicAxes, at, reflected, q, faces, node, inner);
}

// The populations that arrive at a boundary node in a step: from the neighbours as in the bulk,
// reflected links as the face rules say (an obstacle reflects half-way). `moments` are the list's
// moments of the previous step.
template <class L, class S>
OCTO_HD OCTO_INLINE void gatherAtBoundary(const GridView& grid, const typename S::Value* populations, bool odd,
                                          const BoundaryNode& b, const NodeMoments* moments, Index entry,
                                          float (&g)[L::Q]) {
  const Index nodeCount = grid.extent.cellCount();
  const Neighbourhood neighbours(grid.extent, b.position[0], b.position[1], b.position[2]);
  OCTO_UNROLL
  for (int q = 0; q < L::Q; ++q) {
    const bool reflected = b.reflected & (1u << q);
    g[q] = S::load(odd && !reflected ? slot(populations, L::opposite(q), nodeCount)[neighbours.template from<L>(q)]
                                     : slot(populations, q, nodeCount)[b.node]);
  }
  if (!b.reflected) return;
  OCTO_UNROLL
  for (int q = 1; q < L::Q; ++q) {
    if (!(b.reflected & (1u << q))) continue;
    const unsigned faces = crossedFaces<L>(grid, b.position, q);
    if (faces)
      g[q] = incomingAcrossFaces<L>(grid, g[q], b.position, q, faces, moments[entry],
                                    moments[b.inner >= 0 ? b.inner : entry]);
  }
}

// The CSM model's velocity fields (xyz per node) are kept in FP16, stored as FP16 populations are:
// 6 bytes a node instead of 12 for each of the two fields, the extra traffic of CSM halved.
// Rounding moves a velocity by up to 2^-11 of itself (3e-5 at u = 0.1): a gradient of 1e-3 a
// node carries a few per cent of error, a smooth one of 1e-4 tens of per cent, but the eddy
// viscosity scales with |S| and is negligible there (the Taylor-Green eddy viscosity is unchanged
// to three digits). Both executions round alike.
using LesVelocityValue = Fp16Storage::Value;

// The velocity gradient at a node for the CSM model: central differences of the previous step's
// velocity field (xyz per node) over the axis neighbours. Where a neighbour is not a fluid node
// (bit 2 axis: the one below, bit 2 axis + 1: the one above), the one-sided difference with the
// node's own velocity; none on either side: zero.
OCTO_HD OCTO_INLINE VelocityGradient velocityGradient(const LesVelocityValue* velocity,
                                                      const Neighbourhood& neighbours, int dimensions,
                                                      unsigned missing) {
  VelocityGradient gradient;
  const NodeIndex here = neighbours.node();
  for (int axis = 0; axis < dimensions; ++axis) {
    const bool below = !(missing & (1u << (2 * axis))), above = !(missing & (2u << (2 * axis)));
    const LesVelocityValue* lower = velocity + 3 * static_cast<Index>(below ? neighbours.along(axis, -1) : here);
    const LesVelocityValue* upper = velocity + 3 * static_cast<Index>(above ? neighbours.along(axis, 1) : here);
    const float scale = below && above ? 0.5f : 1.0f;
    for (int component = 0; component < 3; ++component)
      gradient.g[component][axis] =
          scale * (Fp16Storage::load(upper[component]) - Fp16Storage::load(lower[component]));
  }
  return gradient;
}

// The axis neighbours a boundary node lacks, as velocityGradient's `missing` bits: links 1..6 are
// +x, -x, +y, -y, +z, -z in D3Q19 and D3Q27, links 1..4 the x and y ones in D2Q9 (Lattice.hpp;
// the z bits it sets from its diagonals 5 and 6 are never read: 2D gradients stop at y), and
// population +e arrives from below.
OCTO_HD OCTO_INLINE unsigned missingAxisNeighbours(std::uint32_t reflected) {
  unsigned missing = 0;
  for (int axis = 0; axis < 3; ++axis) {
    if (reflected & (1u << (2 * axis + 1))) missing |= 1u << (2 * axis);        // +e reflected: none below
    if (reflected & (1u << (2 * axis + 2))) missing |= 1u << (2 * axis + 1);    // -e reflected: none above
  }
  return missing;
}

// Collides (populations in the units Scale) and, with CSM (velocity fields given), takes the
// velocity gradient from the previous step's field and records the node's velocity in the next one.
template <class L, bool Forced, class Scale = Unscaled, class Collision>
OCTO_HD OCTO_INLINE NodeState collideWithLes(const Collision& collision, float (&g)[L::Q], const Vector3& acceleration,
                                             const LesVelocityValue* velocityIn, LesVelocityValue* velocityOut,
                                             const Neighbourhood& neighbours, unsigned missing) {
  if (!velocityIn) return collision.template collide<L, Forced, Scale>(g, acceleration);
  const VelocityGradient gradient = velocityGradient(velocityIn, neighbours, L::dimensions, missing);
  const NodeState state = collision.template collide<L, Forced, Scale>(g, acceleration, &gradient);
  LesVelocityValue* out = velocityOut + 3 * static_cast<Index>(neighbours.node());
  out[0] = Fp16Storage::store(state.u.x);
  out[1] = Fp16Storage::store(state.u.y);
  out[2] = Fp16Storage::store(state.u.z);
  return state;
}

// One step of the bulk nodes (a 3D launch over the grid; other nodes return at once). Forced =
// false when the case has no body force; Csm: the CSM model's velocity fields are given.
template <class L, class S, class Collision, bool Odd, bool Forced, bool Csm = false>
struct BulkStep {
  GridView grid;
  Collision collision;
  SlotBases<L, typename S::Value> slots;
  const LesVelocityValue* velocityIn = nullptr;  // CSM: the previous step's velocity field, and the next's
  LesVelocityValue* velocityOut = nullptr;
  VelocityTap tap;  // the nodes whose velocity tracers will read (lbm/VelocityTap.hpp)

  OCTO_HD void operator()(Index i, Index j, Index k) const {
    const Neighbourhood neighbours(grid.extent, i, j, k);
    // The tap's mask is read first and the populations before the node's kind is known (every
    // slot they come from lies in the array): waiting for either first would add a memory latency
    // to every thread. A non-bulk node may so read slots a halo copy is writing at the same time
    // (beside a ghost layer); it discards what it read.
    const bool tapped = tap.wants(neighbours.node());
    float g[L::Q];
    gatherBulk<L, S, Odd>(slots, neighbours, g);
    if (grid.kindOf(neighbours.node()) != kBulkNode) return;
    using Scale = typename S::Scale;
    if (tapped) {  // as bulkMoments computes it
      float rho;
      Vector3 u;
      moments<L, Scale>(g, grid.acceleration, rho, u);
      tap.record(neighbours.node(), u);
    }
    if constexpr (Csm)
      collideWithLes<L, Forced, Scale>(collision, g, grid.acceleration, velocityIn, velocityOut, neighbours, 0u);
    else
      collision.template collide<L, Forced, Scale>(g, grid.acceleration);
    scatterBulk<L, S, Odd>(slots, neighbours, g);
  }
};

// One step of the boundary nodes, from their list. Records each node's moments for the rules of
// the next step (`next`), reading those of the previous one (`previous`).
template <class L, class S, class Collision>
struct BoundaryStep {
  GridView grid;
  Collision collision;
  typename S::Value* populations;
  bool odd;
  const BoundaryNode* nodes;
  const NodeMoments* previous;
  NodeMoments* next;
  const LesVelocityValue* velocityIn = nullptr;  // CSM (see BulkStep)
  LesVelocityValue* velocityOut = nullptr;
  VelocityTap tap;  // (see BulkStep)

  OCTO_HD void operator()(Index entry) const {
    const BoundaryNode b = nodes[entry];
    const bool tapped = tap.wants(b.node);  // read with the populations (see BulkStep)
    float g[L::Q];
    gatherAtBoundary<L, S>(grid, populations, odd, b, previous, entry, g);
    if (tapped) {  // as boundaryMoments computes it
      float rho;
      Vector3 u;
      moments<L>(g, grid.acceleration, rho, u);
      tap.record(b.node, u);
    }
    const Index nodeCount = grid.extent.cellCount();
    const Neighbourhood neighbours(grid.extent, b.position[0], b.position[1], b.position[2]);
    const NodeState state = collideWithLes<L, true>(collision, g, grid.acceleration, velocityIn, velocityOut,
                                                    neighbours, missingAxisNeighbours(b.reflected));
    next[entry] = NodeMoments{state.rho, state.u};
    OCTO_UNROLL
    for (int q = 0; q < L::Q; ++q) {
      // Bound for a non-fluid node (x + c_q is the source of the opposite link): kept at home.
      const bool home = !odd || (b.reflected & (1u << L::opposite(q)));
      if (home)
        slot(populations, L::opposite(q), nodeCount)[b.node] = S::store(g[q]);
      else
        slot(populations, q, nodeCount)[neighbours.template to<L>(q)] = S::store(g[q]);
    }
  }
};

// Density and velocity of the current state: the moments of the populations the next step's
// collision sees. Velocity is written xyz-interleaved, as VTK stores 3-component arrays, so the
// host copy can be handed to VTK without rearranging. Obstacle nodes read rho = 1, u = 0;
// boundary nodes are left to BoundaryMacroscopic.
OCTO_HD OCTO_INLINE void writeMoments(float* density, float* velocity, Index node, float rho, const Vector3& u) {
  if (density) density[node] = rho;
  if (velocity) {
    velocity[3 * node + 0] = u.x;
    velocity[3 * node + 1] = u.y;
    velocity[3 * node + 2] = u.z;
  }
}

// The density and velocity of a bulk node (its neighbourhood given) and of boundary list entry
// `entry` in the current state, the next step being of parity Odd / `odd`.
template <class L, class S, bool Odd>
OCTO_HD OCTO_INLINE void bulkMoments(const GridView& grid, const SlotBases<L, const typename S::Value>& slots,
                                     const Neighbourhood& neighbours, float& rho, Vector3& u) {
  float g[L::Q];
  gatherBulk<L, S, Odd>(slots, neighbours, g);
  moments<L, typename S::Scale>(g, grid.acceleration, rho, u);
}
template <class L, class S>
OCTO_HD OCTO_INLINE void boundaryMoments(const GridView& grid, const typename S::Value* populations, bool odd,
                                         const BoundaryNode* nodes, const NodeMoments* previous, Index entry,
                                         float& rho, Vector3& u) {
  float g[L::Q];
  gatherAtBoundary<L, S>(grid, populations, odd, nodes[entry], previous, entry, g);
  moments<L>(g, grid.acceleration, rho, u);
}

template <class L, class S, bool Odd>
struct BulkMacroscopic {
  GridView grid;
  SlotBases<L, const typename S::Value> slots;
  float* density;   // nodeCount values, or null
  float* velocity;  // 3 * nodeCount values, or null

  OCTO_HD void operator()(Index i, Index j, Index k) const {
    const Neighbourhood neighbours(grid.extent, i, j, k);
    const NodeIndex node = neighbours.node();
    const std::uint8_t kind = grid.kindOf(node);
    if (kind == kBoundaryNode) return;
    float rho = 1.0f;
    Vector3 u;
    if (kind == kBulkNode) bulkMoments<L, S, Odd>(grid, slots, neighbours, rho, u);
    writeMoments(density, velocity, node, rho, u);
  }
};

template <class L, class S>
struct BoundaryMacroscopic {
  GridView grid;
  const typename S::Value* populations;
  bool odd;
  const BoundaryNode* nodes;
  const NodeMoments* previous;
  float* density;
  float* velocity;

  OCTO_HD void operator()(Index entry) const {
    float rho;
    Vector3 u;
    boundaryMoments<L, S>(grid, populations, odd, nodes, previous, entry, rho, u);
    writeMoments(density, velocity, nodes[entry].node, rho, u);
  }
};

// Sets every node to the equilibrium of a given density and velocity (arrays on the working
// memory; null means rho = 1, u = 0), laid out for an even step.
template <class L, class S>
struct InitializeEquilibrium {
  Index nodeCount;
  const float* density;
  const float* velocity;  // null: `uniformVelocity` everywhere
  Vector3 uniformVelocity;
  typename S::Value* populations;
  LesVelocityValue* lesVelocity = nullptr;  // CSM: the velocity field the first step's gradients read

  OCTO_HD void operator()(Index node) const {
    const float rho = density ? density[node] : 1.0f;
    const Vector3 u = velocity ? Vector3{velocity[3 * node], velocity[3 * node + 1], velocity[3 * node + 2]}
                               : uniformVelocity;
    OCTO_UNROLL
    for (int q = 0; q < L::Q; ++q) slot(populations, q, nodeCount)[node] = S::store(equilibriumDeviation<L>(q, rho, u));
    if (lesVelocity) {
      lesVelocity[3 * node + 0] = Fp16Storage::store(u.x);
      lesVelocity[3 * node + 1] = Fp16Storage::store(u.y);
      lesVelocity[3 * node + 2] = Fp16Storage::store(u.z);
    }
  }
};

// The boundary list's moments for the first step: those of the initial state; and the slots of
// its reflected links. The first step is even: it takes a node's slots as the populations that
// have arrived (the initial equilibrium, feq_q in slot q), except that on a reflected link it
// applies the face rule to slot q, which every later step finds holding f*_opposite(q) (the top
// of this file). So slot q starts as the value the face rule turns into feq_q: feq_q itself for
// an obstacle or a resting wall, feq_q less the wall's momentum for a moving wall or an inlet,
// and so on; the rules are affine in that value, so two evaluations invert them. A stream set at
// an inlet's velocity then flows on unchanged from the first step.
template <class L, class S>
struct InitializeBoundaryNodes {
  GridView grid;
  const BoundaryNode* nodes;
  const float* density;
  const float* velocity;  // null: `uniformVelocity` everywhere
  Vector3 uniformVelocity;
  NodeMoments* moments;
  typename S::Value* populations;

  OCTO_HD NodeMoments initialMoments(Index node) const {
    NodeMoments m;
    if (density) m.rho = density[node];
    m.u = velocity ? Vector3{velocity[3 * node], velocity[3 * node + 1], velocity[3 * node + 2]} : uniformVelocity;
    return m;
  }

  OCTO_HD void operator()(Index entry) const {
    const BoundaryNode& b = nodes[entry];
    const NodeMoments m = initialMoments(b.node);
    moments[entry] = m;
    const NodeMoments inner = b.inner >= 0 ? initialMoments(nodes[b.inner].node) : m;
    OCTO_UNROLL
    for (int q = 1; q < L::Q; ++q) {
      if (!(b.reflected & (1u << q))) continue;
      const unsigned faces = crossedFaces<L>(grid, b.position, q);
      if (!faces) continue;  // an obstacle: slot q keeps feq_q
      const float arrived = equilibriumDeviation<L>(q, m.rho, m.u);
      const float offset = incomingAcrossFaces<L>(grid, 0.0f, b.position, q, faces, m, inner);
      const float sign = incomingAcrossFaces<L>(grid, 1.0f, b.position, q, faces, m, inner) > offset ? 1.0f : -1.0f;
      slot(populations, q, grid.extent.cellCount())[b.node] = S::store(sign * (arrived - offset));
    }
  }
};

// A fluid node next to an obstacle: bit p of `links` is set when x + c_p is an obstacle node.
struct ObstacleLink {
  Index node;
  std::uint32_t links;
};

// Momentum given to the obstacles by one boundary node in one step, by momentum exchange
// (Ladd 1994; Krueger et al. eq. 11.8): every population f*_p sent into the obstacle comes back
// reversed, transferring 2 c_p f*_p. After a step of either parity f*_p of such a link is in the
// node's own slot opposite(p) (see the top of this file). The rest weights cancel over a closed
// body, so the deviations g*_p suffice (and keep FP32 precision). Written in double per boundary
// node; the host sums them in a fixed order, so the total does not depend on threads or devices.
template <class L, class S>
struct ObstacleForce {
  const ObstacleLink* links;
  const typename S::Value* populations;
  Index nodeCount;
  double* force;  // 3 values per link entry

  OCTO_HD void operator()(Index entry) const {
    const ObstacleLink link = links[entry];
    double fx = 0.0, fy = 0.0, fz = 0.0;
    for (int p = 0; p < L::Q; ++p) {
      if (!(link.links & (1u << p))) continue;
      const double g = S::load(slot(populations, L::opposite(p), nodeCount)[link.node]);
      fx += 2.0 * L::c(p, 0) * g;
      fy += 2.0 * L::c(p, 1) * g;
      fz += 2.0 * L::c(p, 2) * g;
    }
    force[3 * entry + 0] = fx;
    force[3 * entry + 1] = fy;
    force[3 * entry + 2] = fz;
  }
};

}  // namespace octoflow::lbm
