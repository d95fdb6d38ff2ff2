#pragma once
// One level's step of the octree LBM, point-wise: one source for the CPU reference and the CUDA
// kernels (the executors run it over every point of every block of a level).
//
// State: every block keeps its post-collision populations f* (deviations from the weights, as the
// uniform solver stores them), two arrays a level alternates between (`parity`). A point's step is
// "pull, then collide": population q arrives from s = x - c_q (a point of the block, of a block of
// the same level, or of another level, BlockLinks.hpp), the point collides and stores f*.
//
// Levels are coupled the way Dupuis & Chopard couple node-centred grids (Phys. Rev. E 67, 066707
// (2003)), with acoustic scaling: a level has half the spacing and half the time step of the
// level above, so lattice velocities and densities are the same on every level, the relaxation
// time obeys tau_f - 1/2 = 2 (tau_c - 1/2) and a body acceleration halves. A level steps twice
// for each step of the level above (time sub-cycling). A population that crosses levels is
// rebuilt from the pre-collision populations of its source point (kept by the blocks other levels
// read, `crossLevelSource`, at the points near the sides they read them across): their
// non-equilibrium part scales by (tau_t dt_t) / (tau_s dt_s)
// (f_neq ~ -tau dt (d_t + c.grad) f_eq), and the point is collided with the reading level's
// relaxation. Rebuilding from pre-collision values keeps the information that a post-collision
// value loses where tau = 1. Coarse points come interpolated in space (a fine point lies on or
// halfway between coarse points: cubic along the interface, docs/AMR.md) and linearly in time.
#include <cstdint>
#include <type_traits>

#include "amr/BlockLinks.hpp"
#include "common/Divisor.hpp"
#include "common/Extent.hpp"
#include "lbm/Collision.hpp"
#include "lbm/FaceBoundaries.hpp"
#include "lbm/Mrt.hpp"

namespace octoflow::amr {

constexpr int kMaxLevels = 8;

// The kinds of shell point the sorted shell kernels (AmrKernel::Sorted) launch apart, so that a
// warp holds points of one kind only: points whose every source is their own block, a block of
// their level, a wall or an obstacle (most points, and the cheapest); points that pull across
// levels or through open faces (a rebuild and a collision, or a face rule, for some directions);
// points shared with a coarser block (interface points: their whole step from the coarse state).
enum class ShellKind : int { SameLevel = 0, Linked = 1, Interface = 2 };
constexpr int kShellKinds = 3;

// A point of a level's sorted shell: its block and its index in the block.
struct ShellPoint {
  std::int32_t block = 0;
  std::int32_t point = 0;
};

// The points of finer blocks that a level's linked points pull from, each rebuilt and collided on
// the level once a step (AmrFinerSourceStep) rather than once for every population pulled from it
// (a point is the source of several pulls: 5 in D3Q19 for a point under a face). `rebuilt`: population q of source
// e at [q count + e]; `sourceOf`: Q entries a linked point, the source of its population q, or
// kRebuildInPlace (not from a finer block), or kFromSolid (bounced back).
constexpr std::int32_t kRebuildInPlace = -1;
constexpr std::int32_t kFromSolid = -2;
struct FinerSources {
  const ShellPoint* points = nullptr;  // the finer block and point of each source
  std::int64_t count = 0;
  const std::int32_t* sourceOf = nullptr;
  float* rebuilt = nullptr;
};

// The coarse taps of a level's interface points (ShellKind::Interface) summed with their weights
// once a step of the coarser level, at the level's first sub-step (AmrCoarseTapsStep), rather than
// at each of its two sub-steps and for each of the coarser level's two states: pre-collision
// populations, population q of interface point i at [q count + i]; `now` from the coarser level's
// current state, `old` from its state a coarse step before: the sums of that step, kept
// (ShellLists::oldSumsKept), or made again after a set-up, restore or regrid.
struct InterfaceTapSums {
  float* now = nullptr;
  float* old = nullptr;
};

// A level's shell points sorted by kind: count[0] same-level points, then count[1] linked ones, then
// count[2] interface points, and the finer sources of the linked ones (device memory on CUDA).
struct ShellLists {
  const ShellPoint* points = nullptr;
  std::int64_t count[kShellKinds] = {0, 0, 0};
  FinerSources finer;
  InterfaceTapSums tapSums;
  // Set by AmrLbm::stepLevel for each step (the launch reads them, no kernel does): whether it sums
  // the interface points' coarse taps (the level's first sub-step after a coarse step), and whether
  // the sums of the coarse step before are kept (else they are made too).
  bool sumTaps = false;
  bool oldSumsKept = false;
  // AmrKernel::Whole: the 27 blocks around each block of the level (the level's blocks in order;
  // kRestingWall, kOtherLevelOrOpenFace below): AmrWholeBlockStep steps every point whose pulls stay
  // on the level, and the lists above hold only the shell points it leaves (blocksAcross).
  const std::int32_t* around = nullptr;
  // AmrKernel::Whole with BGK (AmrWholeBlockStep::kStepsInterfacePoints): where each interface
  // point lies in the lists, so that AmrWholeBlockStep steps the interface points with the rest of
  // their block (their writes fill the sectors the block's other points write: a kernel of their
  // own wrote a third of each sector it touched). Per block of the level (in order): where its
  // surfacePoints(B) entries in `interfaceOfSurface` start, or -1 where it has no interface point;
  // an entry: the point's index among the interface points (InterfaceTapSums), or -1. Null on a
  // level with no interface point, and with TRT and MRT.
  const std::int32_t* interfaceMapOf = nullptr;
  const std::int32_t* interfaceOfSurface = nullptr;
};

// The points on a block's faces (B points a side): B^3 - (B - 2)^3.
OCTO_HD constexpr std::int64_t surfacePoints(int B) {
  return std::int64_t{B} * B * B - std::int64_t{B - 2} * (B - 2) * (B - 2);
}

// Where point x on a block's faces lies among them (0 .. surfacePoints(B) - 1): the two z faces,
// then the two y faces without their z rows, then the two x faces without their y and z rows.
OCTO_HD OCTO_INLINE int surfaceIndex(const int (&x)[3], int B) {
  if (x[2] == 0 || x[2] == B - 1) return (x[2] == 0 ? 0 : B * B) + x[0] + B * x[1];
  const int zFaces = 2 * B * B, yFace = B * (B - 2);
  if (x[1] == 0 || x[1] == B - 1) return zFaces + (x[1] == 0 ? 0 : yFace) + x[0] + B * (x[2] - 1);
  return zFaces + 2 * yFace + (x[0] == 0 ? 0 : (B - 2) * (B - 2)) + (x[1] - 1) + (B - 2) * (x[2] - 1);
}

// An entry of the table of the 27 blocks around a block (ShellLists::around, neighbourIndex order,
// the block itself at 13): the block of its level on that side, or one of these.
constexpr std::int32_t kRestingWall = -1;
constexpr std::int32_t kOtherLevelOrOpenFace = -2;  // a coarser or finer block, or a face with a rule

// The blocks the pulls of point x of `block` (B points a side) may read, from the 27 around it
// (ShellLists::around): across[bits] lies across the block's faces on the axes set in `bits`, on
// the sides x lies on (an axis where x is on no face: the block itself; across[0]: the block).
// False where one of them is kOtherLevelOrOpenFace: the point is not AmrWholeBlockStep's (a pull
// may leave the level or meet a face rule, or the point is shared with a coarser block), the
// sorted lists hold it. The kernel and the host's sorting both ask here.
OCTO_HD OCTO_INLINE bool blocksAcross(const std::int32_t* around, std::int32_t block, const int (&x)[3], int B,
                                      std::int32_t (&across)[8]) {
  int outward[3];
  OCTO_UNROLL
  for (int axis = 0; axis < 3; ++axis) outward[axis] = x[axis] == 0 ? -1 : (x[axis] == B - 1 ? 1 : 0);
  across[0] = block;
  bool onLevel = true;
  OCTO_UNROLL
  for (int bits = 1; bits < 8; ++bits) {
    across[bits] = around[neighbourIndex(bits & 1 ? outward[0] : 0, bits & 2 ? outward[1] : 0, bits & 4 ? outward[2] : 0)];
    onLevel = onLevel && across[bits] != kOtherLevelOrOpenFace;
  }
  return onLevel;
}

// What a linked point's pulls from finer blocks read: the rebuilt sources, and this point's Q
// entries of FinerSources::sourceOf.
struct RebuiltPulls {
  const float* rebuilt = nullptr;
  std::int64_t count = 0;
  const std::int32_t* sourceOf = nullptr;
};

// What a level's step reads and writes (device pointers on CUDA). Arrays are structure of arrays
// per block: population q of point n of block b at [(b Q + q) N + n], N = B^3; the pre-collision
// arrays are indexed by the block's source slot instead of b.
struct AmrLbmLevels {
  const BlockPlacement* blocks = nullptr;
  const std::int32_t* sourceSlot = nullptr;  // per block: its pre-collision slot, or -1
  // Per block: the sides other levels read it across (BlockLayout::crossLevelSides); a step stores
  // the pre-collision state of the points near them only (crossLevelRead).
  const std::uint32_t* crossLevelSides = nullptr;
  const std::uint8_t* solid = nullptr;       // per point of every block, or null: no obstacles
  float* post[2] = {nullptr, nullptr};
  float* pre[2] = {nullptr, nullptr};
  int blockNodes = 17;
  int parity[kMaxLevels] = {};  // the array holding each level's current state
  float tau[kMaxLevels] = {};
  lbm::Vector3 acceleration[kMaxLevels];
  // The collision operators (AmrLbmSettings::collision runs one): each level collides with its own
  // relaxation time (collideAt); TRT's magic parameter, MRT's fixed rates and the LES model are the
  // same on every level.
  lbm::Bgk bgk;
  lbm::Trt trt;
  lbm::Mrt mrt;
  // The domain's faces: resting walls unless `faceRules` (inlets, outlets, moving walls: the face
  // rules of FaceBoundaries.hpp). Level 0 has domainCells cells an axis (nodes: + 1 where walled).
  lbm::FaceBoundaries faces;
  bool faceRules = false;
  std::int32_t domainCells[3] = {0, 0, 0};
  // The CSM model (les = "csm"): per point of every block, what its eddy viscosity adds to the
  // relaxation time, 3 nu_t in its level's lattice units (AmrEddyStep makes it before a level
  // steps); null without CSM.
  float* eddy = nullptr;

  template <class C>
  OCTO_HD const C& collision() const {
    if constexpr (std::is_same_v<C, lbm::Mrt>)
      return mrt;
    else if constexpr (std::is_same_v<C, lbm::Trt>)
      return trt;
    else
      return bgk;
  }

  OCTO_HD std::int64_t pointCount() const {
    return static_cast<std::int64_t>(blockNodes) * blockNodes * blockNodes;
  }
  OCTO_HD std::int64_t point(int i, int j, int k) const { return i + blockNodes * (j + blockNodes * std::int64_t{k}); }
};

// Density and velocity of point n of `block` (of `level`) from its post-collision populations in
// `post` (the momentum after a Guo-forced collision is rho u + F/2).
template <class L>
OCTO_HD OCTO_INLINE lbm::NodeMoments pointMoments(const AmrLbmLevels& state, const float* post, std::int64_t block,
                                                  std::int64_t n, int level) {
  const std::int64_t count = state.pointCount();
  float g[L::Q];
  OCTO_UNROLL
  for (int q = 0; q < L::Q; ++q) g[q] = post[(block * L::Q + q) * count + n];
  const lbm::Vector3 backwards{-state.acceleration[level].x, -state.acceleration[level].y, -state.acceleration[level].z};
  lbm::NodeMoments moments;
  lbm::moments<L>(g, backwards, moments.rho, moments.u);
  return moments;
}

template <class L, class C = lbm::Bgk>
struct AmrLevelStep {
  AmrLbmLevels state;
  const std::int32_t* levelBlocks = nullptr;  // the blocks of the level stepped
  int level = 0;
  float timeWeight = 0.0f;  // where between its old (0) and new (1) state the coarser level is read

  OCTO_HD float population(const float* array, std::int64_t block, int q, std::int64_t point) const {
    return array[(block * L::Q + q) * state.pointCount() + point];
  }

  // Adds `weight` times the pre-collision populations of point (i, j, k) of `block`: its current
  // state (time < 0), or, for a coarser level that has stepped already, its state at `time` between
  // the old (0) and the current (1) one. At time 0 or 1 one state is read (b old + a now is that
  // state's value exactly then).
  OCTO_HD void addPreCollision(float (&set)[L::Q], std::int32_t block, int sourceLevel, int i, int j, int k,
                               float weight, float time) const {
    const std::int64_t slot = state.sourceSlot[block];
    const std::int64_t n = state.point(i, j, k);
    const int current = state.parity[sourceLevel];
    const float* now = state.pre[current];
    if (time > 0.0f && time < 1.0f) {
      const float* old = state.pre[1 - current];
      const float a = time, b = 1.0f - time;
      OCTO_UNROLL
      for (int q = 0; q < L::Q; ++q)
        set[q] += weight * (b * population(old, slot, q, n) + a * population(now, slot, q, n));
    } else {
      const float* only = time == 0.0f ? state.pre[1 - current] : now;
      OCTO_UNROLL
      for (int q = 0; q < L::Q; ++q) set[q] += weight * population(only, slot, q, n);
    }
  }

  OCTO_HD bool solidAt(std::int32_t block, int i, int j, int k) const {
    return state.solid && state.solid[block * state.pointCount() + state.point(i, j, k)] != 0;
  }

  // The coarse points a point s of this level is interpolated from (s in this block's frame, `link`
  // to the coarser block holding it): per axis on a coarse point, or halfway between two: cubic
  // through the two points on either side (-1, 9, 9, -1)/16 where the block holds them, else
  // linear. Along the interface the cubic keeps the interpolation error below the coarse grid's own
  // (a linear one, h^2 f''/8, is what a fine interface point would otherwise inherit). Near an
  // obstacle: the cubic when none of its taps is solid, else the linear taps that are fluid, their
  // weights renormalised (solid taps are skipped by the caller); false when all are solid.
  struct CoarseTaps {
    int count[3];
    int index[3][4];
    float weight[3][4];
    float normalise;
  };
  OCTO_HD bool coarseTaps(const RegionLink& link, const int (&s)[3], CoarseTaps& taps) const {
    const int B = state.blockNodes;
    for (int pass = 0; pass < 2; ++pass) {
      const bool cubic = pass == 0;
      for (int axis = 0; axis < 3; ++axis) {
        const int doubled = s[axis] + link.offset[axis];  // >= 0 inside the coarse block
        const int low = doubled >> 1;
        if ((doubled & 1) == 0) {
          taps.count[axis] = 1;
          taps.index[axis][0] = low;
          taps.weight[axis][0] = 1.0f;
        } else if (cubic && low >= 1 && low + 2 <= B - 1) {
          taps.count[axis] = 4;
          for (int t = 0; t < 4; ++t) taps.index[axis][t] = low - 1 + t;
          taps.weight[axis][0] = taps.weight[axis][3] = -1.0f / 16.0f;
          taps.weight[axis][1] = taps.weight[axis][2] = 9.0f / 16.0f;
        } else {
          taps.count[axis] = 2;
          taps.index[axis][0] = low;
          taps.index[axis][1] = low + 1;
          taps.weight[axis][0] = taps.weight[axis][1] = 0.5f;
        }
      }
      float fluidWeight = 0.0f;
      bool anySolid = false;
      for (int c = 0; c < taps.count[2]; ++c)
        for (int b = 0; b < taps.count[1]; ++b)
          for (int a = 0; a < taps.count[0]; ++a) {
            if (solidAt(link.block, taps.index[0][a], taps.index[1][b], taps.index[2][c]))
              anySolid = true;
            else
              fluidWeight += taps.weight[0][a] * taps.weight[1][b] * taps.weight[2][c];
          }
      if (anySolid && cubic) continue;  // try the linear taps
      if (!(fluidWeight > 0.0f)) return false;
      taps.normalise = 1.0f / fluidWeight;
      return true;
    }
    return false;
  }

  // The pre-collision populations of point s of this level, rebuilt from the level `link` leads to
  // (s in this block's frame, the linked block holding the point; a coarser one read at `time`
  // between its old and current state), rescaled with `finerEddy` (rescaleToLevel). False where the
  // source is solid.
  OCTO_HD OCTO_NOINLINE bool rebuiltPreCollision(const RegionLink& link, const int (&s)[3], float time, float finerEddy,
                                                float (&set)[L::Q]) const {
    OCTO_UNROLL
    for (int r = 0; r < L::Q; ++r) set[r] = 0.0f;
    const int sourceLevel = level + link.levelShift;
    if (link.levelShift > 0) {
      const int c[3] = {2 * s[0] + link.offset[0], 2 * s[1] + link.offset[1], 2 * s[2] + link.offset[2]};
      if (solidAt(link.block, c[0], c[1], c[2])) return false;
      addPreCollision(set, link.block, sourceLevel, c[0], c[1], c[2], 1.0f, -1.0f);
    } else {
      CoarseTaps taps;
      if (!coarseTaps(link, s, taps)) return false;
      forEachFluidTap(link, taps, [&](int i, int j, int k, float weight) {
        addPreCollision(set, link.block, sourceLevel, i, j, k, weight, time);
      });
    }
    rescaleToLevel(link.levelShift, set, finerEddy);
    return true;
  }

  // Calls add(i, j, k, weight) for each coarse tap that is not solid, its weight renormalised.
  template <class Add>
  OCTO_HD OCTO_INLINE void forEachFluidTap(const RegionLink& link, const CoarseTaps& taps, Add&& add) const {
    for (int c = 0; c < taps.count[2]; ++c)
      for (int b = 0; b < taps.count[1]; ++b)
        for (int a = 0; a < taps.count[0]; ++a) {
          const int i = taps.index[0][a], j = taps.index[1][b], k = taps.index[2][c];
          if (solidAt(link.block, i, j, k)) continue;
          add(i, j, k, taps.normalise * taps.weight[0][a] * taps.weight[1][b] * taps.weight[2][c]);
        }
  }

  // The pre-collision populations of the coarse taps of point x of this level (held by the coarser
  // block of `link`), summed with their weights: the coarser level's current state in `now` and,
  // WithOld, its state a coarse step before in `old` (each sum added up in the same order, so the
  // sums of one state are the same bits whenever they are made). False (sums 0) when every tap is
  // solid.
  template <bool WithOld>
  OCTO_HD OCTO_INLINE bool sumCoarseTaps(const RegionLink& link, const int (&x)[3], float (&now)[L::Q],
                                         float (&old)[L::Q]) const {
    OCTO_UNROLL
    for (int q = 0; q < L::Q; ++q) now[q] = old[q] = 0.0f;
    CoarseTaps taps;
    if (!coarseTaps(link, x, taps)) return false;
    const int current = state.parity[level + link.levelShift];
    const std::int64_t slot = state.sourceSlot[link.block];
    forEachFluidTap(link, taps, [&](int i, int j, int k, float weight) {
      const std::int64_t n = state.point(i, j, k);
      OCTO_UNROLL
      for (int q = 0; q < L::Q; ++q) {
        now[q] += weight * population(state.pre[current], slot, q, n);
        if constexpr (WithOld) old[q] += weight * population(state.pre[1 - current], slot, q, n);
      }
    });
    return true;
  }

  // Pre-collision populations of a point of level `level + levelShift` made this level's: the
  // non-equilibrium part rescaled (the caller collides them with this level's relaxation), by the
  // two levels' effective relaxation times: each level's own plus the eddy part of the point,
  // `finerEddy` on the finer level and twice that on the coarser (relaxationTimeWith). CSM passes
  // the point's; Smagorinsky takes it from the state itself (smagorinskyFinerEddy); without a
  // model it is 0.
  OCTO_HD void rescaleToLevel(int levelShift, float (&set)[L::Q], float finerEddy) const {
    const int sourceLevel = level + levelShift;
    float rho;
    lbm::Vector3 u;
    lbm::moments<L>(set, state.acceleration[sourceLevel], rho, u);
    if (!state.eddy) finerEddy = smagorinskyFinerEddy(levelShift, set, rho, u);
    const float sourceTau = relaxationTimeWith(sourceLevel, levelShift < 0, finerEddy);
    const float targetTau = relaxationTimeWith(level, levelShift > 0, finerEddy);
    // The first moment of f_neq is -F/2 under Guo forcing (moments() adds it back): scaled, it would
    // be -scale F_s/2 where this level's collision expects -F_t/2, so the difference is put back
    // through the weights (sum_q w_q 3 c_q c_q = identity).
    const float ratio = levelShift > 0 ? 2.0f : 0.5f;  // dt of this level / dt of the source's
    const lbm::Vector3& sourceAcceleration = state.acceleration[sourceLevel];
    const lbm::Vector3& ownAcceleration = state.acceleration[level];
    const auto momentumFix = [&](float firstMomentScale) {
      return lbm::Vector3{1.5f * rho * (firstMomentScale * sourceAcceleration.x - ownAcceleration.x),
                          1.5f * rho * (firstMomentScale * sourceAcceleration.y - ownAcceleration.y),
                          1.5f * rho * (firstMomentScale * sourceAcceleration.z - ownAcceleration.z)};
    };
    if constexpr (std::is_same_v<C, lbm::Bgk>) {
      // One factor for all of f_neq, applied population by population: no array of equilibria (the
      // interface kernels, most of a multi-level step, keep their registers).
      const float scale = lbm::Bgk::nonEquilibriumScale(ratio, sourceTau, targetTau);
      const lbm::Vector3 fix = momentumFix(scale);
      OCTO_UNROLL
      for (int r = 0; r < L::Q; ++r) {
        const float equilibrium = lbm::equilibriumDeviation<L>(r, rho, u);
        set[r] = equilibrium + scale * (set[r] - equilibrium) + L::w(r) * lbm::velocityDot<L>(r, fix);
      }
    } else {
      float equilibrium[L::Q];
      OCTO_UNROLL
      for (int r = 0; r < L::Q; ++r) {
        equilibrium[r] = lbm::equilibriumDeviation<L>(r, rho, u);
        set[r] -= equilibrium[r];
      }
      const C collision = state.template collision<C>();
      const lbm::Vector3 fix = momentumFix(
          collision.template rescaleNonEquilibrium<L>(set, ratio, sourceTau, targetTau));
      OCTO_UNROLL
      for (int r = 0; r < L::Q; ++r) set[r] += equilibrium[r] + L::w(r) * lbm::velocityDot<L>(r, fix);
    }
  }

  // Smagorinsky: the eddy part of the relaxation time of a pre-collision state `set` of level
  // `level + levelShift` (density rho, velocity u) on its own level, from its non-equilibrium
  // stress as its collision finds it (lbm::Les::relaxationTime), made the finer level's (nu_t =
  // (C_s Delta)^2 |S|: in lattice units the coarser level's is twice the finer's). Rescaled with
  // the effective relaxation times, the state carries the same strain rate on the reading level,
  // where the collision finds that level's eddy part from it again. 0 for the other models.
  OCTO_HD OCTO_INLINE float smagorinskyFinerEddy(int levelShift, const float (&set)[L::Q], float rho,
                                                 const lbm::Vector3& u) const {
    const lbm::Les les = state.template collision<C>().les;
    if (les.model != lbm::LesModel::Smagorinsky) return 0.0f;
    const int sourceLevel = level + levelShift;
    const float molecular = state.tau[sourceLevel];
    const float eddy = les.template relaxationTime<L>(molecular, set, rho, u, state.acceleration[sourceLevel]) - molecular;
    return levelShift > 0 ? eddy : 0.5f * eddy;
  }

  // Collides with relaxation time `tau` (relaxationTime). The operator is copied: read through a
  // reference into the kernel's parameters, nvcc doubled the registers of the whole-block and inner
  // kernels (64 to 128 for D3Q27) and slowed them by 30 %.
  OCTO_HD OCTO_INLINE void collide(float (&g)[L::Q], float tau) const {
    const C collision = state.template collision<C>();
    collision.template collideAt<L>(tau, g, state.acceleration[level]);
  }

  // CSM's eddy part of the relaxation time of point n of `block` (0 without CSM).
  OCTO_HD OCTO_INLINE float eddyAt(std::int64_t block, std::int64_t n) const {
    return state.eddy ? state.eddy[block * state.pointCount() + n] : 0.0f;
  }

  // The relaxation time on level `at` of a point whose eddy part on the finer of two levels is
  // `finerEddy`: the level's own, plus that part, or twice it on the coarser level (`coarser`):
  // nu_t = C |S| in lattice units, and |S| doubles with the time step.
  OCTO_HD OCTO_INLINE float relaxationTimeWith(int at, bool coarser, float finerEddy) const {
    return state.tau[at] + (coarser ? 2.0f * finerEddy : finerEddy);
  }

  // The relaxation time of point n of `block` (of this level): the level's, with CSM plus the
  // point's eddy part.
  OCTO_HD OCTO_INLINE float relaxationTime(std::int64_t block, std::int64_t n) const {
    return state.eddy ? state.tau[level] + state.eddy[block * state.pointCount() + n] : state.tau[level];
  }

  // The post-collision populations, on this level, of point c of the finer block `fineBlock` (a
  // point a coarse point of this level pulls from): rebuilt and collided, as a pull does it (with
  // CSM, with the fine point's eddy part made this level's).
  OCTO_HD void rebuiltFromFiner(std::int32_t fineBlock, int c0, int c1, int c2, float (&set)[L::Q]) const {
    OCTO_UNROLL
    for (int r = 0; r < L::Q; ++r) set[r] = 0.0f;
    addPreCollision(set, fineBlock, level + 1, c0, c1, c2, 1.0f, -1.0f);
    const float finerEddy = eddyAt(fineBlock, state.point(c0, c1, c2));
    rescaleToLevel(1, set, finerEddy);
    collide(set, relaxationTimeWith(level, true, finerEddy));
  }

  // f*_q at point s of this level, rebuilt from another level (`solid`: the source is solid, the
  // caller bounces back). Out of line and returned by value: the caller's populations stay in
  // registers, and the path is not repeated in the loop unrolled over the velocity set.
  struct Rebuilt {
    float value;
    bool solid;
  };
  // With CSM, a source on a finer level takes the eddy part of its fine point (as rebuiltFromFiner),
  // one interpolated from a coarser level that of the point pulling it (point n of `block`).
  OCTO_HD OCTO_NOINLINE Rebuilt crossLevelPopulation(int q, const RegionLink& link, int sx, int sy, int sz,
                                                     std::int32_t block, std::int64_t n) const {
    float set[L::Q];
    const int s[3] = {sx, sy, sz};
    const bool finer = link.levelShift > 0;
    const float finerEddy =
        finer ? eddyAt(link.block, state.point(2 * sx + link.offset[0], 2 * sy + link.offset[1], 2 * sz + link.offset[2]))
              : eddyAt(block, n);
    if (!rebuiltPreCollision(link, s, timeWeight, finerEddy, set)) return Rebuilt{0.0f, true};
    collide(set, relaxationTimeWith(level, finer, finerEddy));
    return Rebuilt{set[q], false};
  }

  // A point shared with a coarser block: its whole step from the coarse state at the end of this
  // step (out of line, as above). The sorted and whole-block kernels take the sums of its coarse
  // taps made once a coarse step instead (AmrInterfaceStep), with the same bits.
  OCTO_HD OCTO_NOINLINE void updateInterfacePoint(std::int32_t block, std::int64_t n, const RegionLink& link, int x0,
                                                  int x1, int x2) const {
    const int x[3] = {x0, x1, x2};
    float now[L::Q], old[L::Q];
    if (sumCoarseTaps<true>(link, x, now, old)) {
      finishInterfacePoint(block, n, now, old);
      return;
    }
    // Every coarse point around is solid: the point steps on its own level (bounce-back).
    float g[L::Q];
    pullPopulations(block, state.blocks[block], x, n, state.post[state.parity[level]], g);
    finishPoint(block, preCollisionSlot(block, x), n, g);
  }

  // An interface point's step from the sums of its coarse taps (sumCoarseTaps): the coarse state at
  // the end of this step, time 0.5 (old and current states in equal parts) or 1 (the current one)
  // of the coarser level's step, made this level's (rescaled) and collided.
  OCTO_HD OCTO_INLINE void finishInterfacePoint(std::int32_t block, std::int64_t n, const float (&now)[L::Q],
                                                const float (&old)[L::Q]) const {
    const float time = timeWeight + 0.5f;
    float g[L::Q];
    OCTO_UNROLL
    for (int q = 0; q < L::Q; ++q) g[q] = time < 1.0f ? (1.0f - time) * old[q] + time * now[q] : now[q];
    rescaleToLevel(-1, g, eddyAt(block, n));
    // The coarser block holding the point reads its block across the side the point lies on: the
    // block's slot, with no test.
    finishPoint(block, state.sourceSlot[block], n, g);
  }

  // The same for interface point `index` of the level's `count` (its sums in `sums`).
  OCTO_HD OCTO_INLINE void finishInterfacePoint(std::int32_t block, std::int64_t n, const InterfaceTapSums& sums,
                                                std::int64_t count, std::int64_t index) const {
    const bool withOld = timeWeight + 0.5f < 1.0f;
    float now[L::Q], old[L::Q];
    OCTO_UNROLL
    for (int q = 0; q < L::Q; ++q) {
      now[q] = sums.now[q * count + index];
      old[q] = withOld ? sums.old[q * count + index] : 0.0f;
    }
    finishInterfacePoint(block, n, now, old);
  }

  // The link to a coarser block that holds point x of this block, when x lies on this block's
  // face, edge or corner shared with one (null otherwise).
  OCTO_HD const RegionLink* coarserHolder(const BlockPlacement& placement, const int (&x)[3]) const {
    const int B = state.blockNodes;
    int outward[3];
    for (int axis = 0; axis < 3; ++axis) outward[axis] = x[axis] == 0 ? -1 : (x[axis] == B - 1 ? 1 : 0);
    // The regions just outside x, across each face, edge and corner it lies on.
    for (int d = 1; d < 8; ++d) {
      int probe[3];
      bool valid = true;
      for (int axis = 0; axis < 3; ++axis) {
        const bool across = (d >> axis) & 1;
        if (across && outward[axis] == 0) valid = false;
        probe[axis] = x[axis] + (across ? outward[axis] : 0);
      }
      if (!valid) continue;
      const RegionLink& link =
          placement.links[regionIndex(regionOf(probe[0], B), regionOf(probe[1], B), regionOf(probe[2], B))];
      if (link.block >= 0 && link.levelShift < 0) return &link;
    }
    return nullptr;
  }

  // The kind of shell point x of `block` is (a fluid point). A point shared with a coarser block
  // whose coarse taps are all solid steps on its own level, as a linked point.
  OCTO_HD ShellKind shellKind(const BlockPlacement& placement, const int (&x)[3]) const {
    if (const RegionLink* coarser = level > 0 ? coarserHolder(placement, x) : nullptr) {
      CoarseTaps taps;
      return coarseTaps(*coarser, x, taps) ? ShellKind::Interface : ShellKind::Linked;
    }
    const int B = state.blockNodes;
    for (int q = 1; q < L::Q; ++q) {
      const int rx = regionOf(x[0] - L::c(q, 0), B), ry = regionOf(x[1] - L::c(q, 1), B), rz = regionOf(x[2] - L::c(q, 2), B);
      if (isOwnRegion(rx, ry, rz)) continue;
      const RegionLink& link = placement.links[regionIndex(rx, ry, rz)];
      if (link.block < 0 ? state.faceRules : link.levelShift != 0) return ShellKind::Linked;
    }
    return ShellKind::SameLevel;
  }

  // Population q of point x of `block` arriving through the domain's faces (x - c_q lies beyond
  // them): the face rules of FaceBoundaries.hpp with this point's moments of the previous step (and
  // those of the point one step inward of an outflow face). Out of line, as the cross-level path.
  OCTO_HD OCTO_NOINLINE float throughDomainFace(int q, std::int32_t block, const BlockPlacement& placement,
                                                std::int64_t n, const float* source, int x0, int x1, int x2) const {
    const int x[3] = {x0, x1, x2};
    const float levelSpacing = 1.0f / static_cast<float>(1 << level);
    unsigned crossed = 0, periodicAxes = 0;
    float at[3];
    Index wholeNodes[3];
    for (int axis = 0; axis < 3; ++axis) {
      const bool periodic = state.faces.periodic(axis);
      periodicAxes |= periodic ? 1u << axis : 0u;
      wholeNodes[axis] = state.domainCells[axis] + (periodic ? 0 : 1);
      const int global = placement.origin[axis] + x[axis];
      at[axis] = static_cast<float>(global) * levelSpacing;
      const int from = global - L::c(q, axis);
      if (periodic || L::c(q, axis) == 0) continue;
      if (from < 0) crossed |= 1u << (2 * axis);
      if (from > (state.domainCells[axis] << level)) crossed |= 1u << (2 * axis + 1);
    }
    const lbm::NodeMoments node = pointMoments<L>(state, source, block, n, level);
    lbm::NodeMoments inner = node;
    for (int face = 0; face < lbm::kFaceCount; ++face) {
      if (!(crossed & (1u << face)) || state.faces.face[face].type != lbm::FaceType::Outflow) continue;
      int inward[3] = {x[0], x[1], x[2]};
      inward[face / 2] += face % 2 ? -1 : 1;
      if (!solidAt(block, inward[0], inward[1], inward[2]))
        inner = pointMoments<L>(state, source, block, state.point(inward[0], inward[1], inward[2]), level);
    }
    const Extent whole{wholeNodes[0], wholeNodes[1], wholeNodes[2]};
    return lbm::incomingAcrossFaces<L>(state.faces, whole, periodicAxes, at,
                                       population(source, block, L::opposite(q), n), q, crossed, node, inner);
  }

  // Whether population q of point x is reflected by an obstacle in this level's step: its source
  // x - c_q is solid, as the pull below decides (a coarser source: every interpolation tap solid).
  // Momentum exchange counts these links.
  OCTO_HD bool reflectedByObstacle(int q, std::int32_t block, const BlockPlacement& placement, const int (&x)[3]) const {
    const int B = state.blockNodes;
    const int s[3] = {x[0] - L::c(q, 0), x[1] - L::c(q, 1), x[2] - L::c(q, 2)};
    const int rx = regionOf(s[0], B), ry = regionOf(s[1], B), rz = regionOf(s[2], B);
    if (isOwnRegion(rx, ry, rz)) return solidAt(block, s[0], s[1], s[2]);
    const RegionLink& link = placement.links[regionIndex(rx, ry, rz)];
    if (link.block < 0) return false;
    if (link.levelShift == 0) return solidAt(link.block, s[0] + link.offset[0], s[1] + link.offset[1], s[2] + link.offset[2]);
    if (link.levelShift > 0)
      return solidAt(link.block, 2 * s[0] + link.offset[0], 2 * s[1] + link.offset[1], 2 * s[2] + link.offset[2]);
    CoarseTaps taps;
    return !coarseTaps(link, s, taps);
  }

  // Population q of point x (local point n) of `block` before collision: pulled from x - c_q,
  // half-way bounce-back from walls and solid points.
  // SameLevelOnly: the point is of ShellKind::SameLevel (no level link, no face rule reached), and
  // the paths for those are not compiled in.
  // `finer`: the pulls from finer blocks rebuilt already (null: rebuilt here).
  template <bool SameLevelOnly = false>
  OCTO_HD OCTO_INLINE float pullOne(int q, std::int32_t block, const BlockPlacement& placement, const int (&x)[3],
                                    std::int64_t n, const float* source, const RebuiltPulls* finer = nullptr) const {
    const int B = state.blockNodes;
    const int s[3] = {x[0] - L::c(q, 0), x[1] - L::c(q, 1), x[2] - L::c(q, 2)};
    const int rx = regionOf(s[0], B), ry = regionOf(s[1], B), rz = regionOf(s[2], B);
    if (isOwnRegion(rx, ry, rz)) return pullOwn(q, block, s, n, source);
    const RegionLink& link = placement.links[regionIndex(rx, ry, rz)];
    bool bounce = false;
    float value = 0.0f;
    if (link.block < 0) {
      if constexpr (!SameLevelOnly) {
        if (state.faceRules) return throughDomainFace(q, block, placement, n, source, x[0], x[1], x[2]);
      }
      bounce = true;
    } else if (SameLevelOnly || link.levelShift == 0) {
      const int c[3] = {s[0] + link.offset[0], s[1] + link.offset[1], s[2] + link.offset[2]};
      if (solidAt(link.block, c[0], c[1], c[2]))
        bounce = true;
      else
        value = population(source, link.block, q, state.point(c[0], c[1], c[2]));
    } else if constexpr (!SameLevelOnly) {
      const std::int32_t from = finer ? finer->sourceOf[q] : kRebuildInPlace;
      if (from >= 0) {
        value = finer->rebuilt[q * finer->count + from];
      } else if (from == kFromSolid) {
        bounce = true;
      } else {
        const Rebuilt rebuilt = crossLevelPopulation(q, link, s[0], s[1], s[2], block, n);
        bounce = rebuilt.solid;
        value = rebuilt.value;
      }
    }
    // Half-way bounce-back: what this point sent towards a wall or solid point comes back.
    return bounce ? population(source, block, L::opposite(q), n) : value;
  }

  // The same for a source s inside the block itself.
  OCTO_HD OCTO_INLINE float pullOwn(int q, std::int32_t block, const int (&s)[3], std::int64_t n,
                                    const float* source) const {
    return solidAt(block, s[0], s[1], s[2]) ? population(source, block, L::opposite(q), n)
                                            : population(source, block, q, state.point(s[0], s[1], s[2]));
  }

  // All populations of point x. A point of shell class (GI, GJ, GK) (each -1: on the block's lower
  // face on that axis, +1: on its upper face, 0: between) knows at compile time which directions
  // reach outside the block: the others read the block itself, with no region or link. (0, 0, 0):
  // any point, every direction through the regions.
  template <int GI = 0, int GJ = 0, int GK = 0, bool SameLevelOnly = false>
  OCTO_HD OCTO_INLINE void pullPopulations(std::int32_t block, const BlockPlacement& placement, const int (&x)[3],
                                           std::int64_t n, const float* source, float (&g)[L::Q],
                                           const RebuiltPulls* finer = nullptr) const {
    constexpr bool classKnown = GI != 0 || GJ != 0 || GK != 0;
    OCTO_UNROLL
    for (int q = 0; q < L::Q; ++q) {
      const bool leaves = (GI == -1 && L::c(q, 0) == 1) || (GI == 1 && L::c(q, 0) == -1) ||
                          (GJ == -1 && L::c(q, 1) == 1) || (GJ == 1 && L::c(q, 1) == -1) ||
                          (GK == -1 && L::c(q, 2) == 1) || (GK == 1 && L::c(q, 2) == -1);
      if (classKnown && !leaves) {
        const int s[3] = {x[0] - L::c(q, 0), x[1] - L::c(q, 1), x[2] - L::c(q, 2)};
        g[q] = pullOwn(q, block, s, n, source);
      } else {
        g[q] = pullOne<SameLevelOnly>(q, block, placement, x, n, source, finer);
      }
    }
  }

  // The slot point x of `block` stores its pre-collision populations in: its block's, where another
  // level reads x (near a side of crossLevelSides), else -1. A block's other points are never read
  // before collision, and their bytes are most of the pre-collision state a step would write.
  OCTO_HD OCTO_INLINE std::int32_t preCollisionSlot(std::int32_t block, const int (&x)[3]) const {
    const std::int32_t slot = state.sourceSlot[block];
    return slot >= 0 && crossLevelRead(state.crossLevelSides[block], x, state.blockNodes) ? slot : -1;
  }

  // Stores a point's pre-collision populations in `slot` (preCollisionSlot; -1: none), collides
  // them and stores the result.
  OCTO_HD OCTO_INLINE void finishPoint(std::int32_t block, std::int32_t slot, std::int64_t n, float (&g)[L::Q]) const {
    const std::int64_t count = state.pointCount();
    const int current = state.parity[level];
    // A block's populations are below 2^31 floats: 32-bit offsets from the point's first one.
    const unsigned stride = static_cast<unsigned>(state.blockNodes) * state.blockNodes * state.blockNodes;
    if (slot >= 0) {
      float* pre = state.pre[1 - current] + slot * std::int64_t{L::Q} * count + n;
      OCTO_UNROLL
      for (int q = 0; q < L::Q; ++q) pre[static_cast<unsigned>(q) * stride] = g[q];
    }
    collide(g, relaxationTime(block, n));
    float* target = state.post[1 - current] + block * std::int64_t{L::Q} * count + n;
    OCTO_UNROLL
    for (int q = 0; q < L::Q; ++q) target[static_cast<unsigned>(q) * stride] = g[q];
  }

  // The step of any point x of `block`: the general path, which resolves every source through
  // the block's links (with a shell class, pullPopulations<GI, GJ, GK> for that class's points).
  template <int GI = 0, int GJ = 0, int GK = 0>
  OCTO_HD OCTO_INLINE void updatePoint(std::int32_t block, const int (&x)[3]) const {
    const int B = state.blockNodes;
    const std::int64_t n = state.point(x[0], x[1], x[2]);
    if (solidAt(block, x[0], x[1], x[2])) return;
    const BlockPlacement& placement = state.blocks[block];
    // A point shared with a coarser block is the coarse level's: it takes the coarse state at the
    // end of this step (interpolated along the interface and in time, rescaled), as the fine grid's
    // boundary nodes of Dupuis & Chopard do. Pulling it instead would interpolate across the
    // interface, a coarse spacing's worth of error.
    const bool onBoundary = x[0] == 0 || x[1] == 0 || x[2] == 0 || x[0] == B - 1 || x[1] == B - 1 || x[2] == B - 1;
    const RegionLink* coarser = onBoundary && level > 0 ? coarserHolder(placement, x) : nullptr;
    if (coarser) {
      updateInterfacePoint(block, n, *coarser, x[0], x[1], x[2]);
      return;
    }
    float g[L::Q];
    pullPopulations<GI, GJ, GK>(block, placement, x, n, state.post[state.parity[level]], g);
    finishPoint(block, preCollisionSlot(block, x), n, g);
  }

  // The naive kernel: every point of every block of the level through the general path.
  OCTO_HD void operator()(std::int64_t index) const {
    const int B = state.blockNodes;
    const std::int64_t count = state.pointCount();
    const std::int64_t n = index % count;
    const int x[3] = {static_cast<int>(n % B), static_cast<int>((n / B) % B), static_cast<int>(n / (std::int64_t{B} * B))};
    updatePoint(levelBlocks[index / count], x);
  }
};

// The inner/outer split (the seed's second step): the points inside a block, (B - 2)^3 of them,
// read only their own block, so their kernel has no links, regions or level coupling at all;
// the outer shell (B^3 - (B - 2)^3 points) runs the general path.
template <class L, class C>
struct AmrInnerStep {
  AmrLevelStep<L, C> step;
  CubeIndexer inner;  // the B - 2 points a side inside a block

  explicit AmrInnerStep(const AmrLevelStep<L, C>& levelStep)
      : step(levelStep), inner(CubeIndexer::of(levelStep.state.blockNodes - 2)) {}

  // 32-bit index arithmetic (AmrLbm caps the points of all blocks below 2^31) and no division: a
  // division costs tens of instructions a point on the GPU.
  OCTO_HD void operator()(std::int64_t index) const {
    const AmrLbmLevels& state = step.state;
    const int B = state.blockNodes;
    int x[3];
    const std::int32_t block = step.levelBlocks[inner.split(static_cast<std::uint32_t>(index), x)];
    const int n = (x[0] + 1) + B * ((x[1] + 1) + B * (x[2] + 1));
    const int count = B * B * B;
    const float* source = state.post[state.parity[step.level]] + static_cast<std::int64_t>(block) * L::Q * count;
    float g[L::Q];
    if (state.solid) {
      const std::uint8_t* solid = state.solid + static_cast<std::int64_t>(block) * count;
      if (solid[n]) return;
      OCTO_UNROLL
      for (int q = 0; q < L::Q; ++q) {
        const int from = n - (L::c(q, 0) + B * (L::c(q, 1) + B * L::c(q, 2)));
        g[q] = solid[from] ? source[L::opposite(q) * count + n] : source[q * count + from];
      }
    } else {
      OCTO_UNROLL
      for (int q = 0; q < L::Q; ++q) g[q] = source[q * count + n - (L::c(q, 0) + B * (L::c(q, 1) + B * L::c(q, 2)))];
    }
    const int at[3] = {x[0] + 1, x[1] + 1, x[2] + 1};
    step.finishPoint(block, step.preCollisionSlot(block, at), n, g);
  }
};

// Every block of a level stepped in one launch, a thread a point in point order: each point whose
// every pull reads its block, a block of its level on the side it leaves by (`around`, 27 a block,
// the block itself in the middle) or a resting wall, at a fixed offset: no regions, links or level
// paths, reads and writes as coalesced as the uniform solver's. The points whose pulls reach
// another level or a face rule, and the points shared with a coarser block, are left to the
// sorted lists (blocksAcross decides, here and where the lists are made): in a block with
// neighbours of its level only, none. Shared face points are updated by each block holding them,
// with the same inputs (node-centred blocks), as the other kernels do. The same bits as the general
// path (pullOne's same-level branch and pullOwn). What a point costs is integer work (the
// populations' addresses) more than arithmetic: no division (CubeIndexer), the at most 8 blocks a
// point's pulls reach looked up once, 32-bit offsets inside a block.
template <class L, class C>
struct AmrWholeBlockStep {
  AmrLevelStep<L, C> step;
  const std::int32_t* around = nullptr;  // ShellLists::around
  CubeIndexer points;                    // B points a side
  // The level's interface points (ShellLists::interfaceMapOf, interfaceOfSurface, tapSums, count).
  const std::int32_t* interfaceMapOf = nullptr;
  const std::int32_t* interfaceOfSurface = nullptr;
  InterfaceTapSums tapSums;
  std::int64_t interfaceCount = 0;

  // The interface points step here with BGK only: with TRT and MRT their rescale across levels
  // raises the kernel's registers (ptxas, sm_90: D3Q27 MRT 108 -> 140, TRT 88 -> 106; D3Q19 MRT
  // 72 -> 95, TRT 64 -> 80), fewer blocks an SM for every point, so their own kernel steps them
  // (AmrInterfaceStep).
  static constexpr bool kStepsInterfacePoints = std::is_same_v<C, lbm::Bgk>;

  AmrWholeBlockStep(const AmrLevelStep<L, C>& levelStep, const ShellLists& shells)
      : step(levelStep),
        around(shells.around),
        points(CubeIndexer::of(levelStep.state.blockNodes)),
        interfaceMapOf(shells.interfaceMapOf),
        interfaceOfSurface(shells.interfaceOfSurface),
        tapSums(shells.tapSums),
        interfaceCount(shells.count[static_cast<int>(ShellKind::Interface)]) {}

  OCTO_HD void operator()(std::int64_t index) const {
    const AmrLbmLevels& state = step.state;
    const int B = state.blockNodes;
    const unsigned count = static_cast<unsigned>(B * B * B);
    const unsigned flat = static_cast<unsigned>(index);  // 32 bits: AmrLbm caps the points below 2^31
    // The block first: its neighbours' lookups wait on it, the coordinates do not.
    const unsigned listed = points.cube(flat);
    const std::int32_t block = step.levelBlocks[listed];
    const unsigned n = flat - listed * count;
    int x[3];
    points.coordinates(n, x);
    std::int32_t across[8];
    if (!blocksAcross(around + 27 * static_cast<std::int64_t>(listed), block, x, B, across)) {
      // A point shared with a coarser block (its state from the coarse taps' sums); any other the
      // sorted lists step.
      if constexpr (kStepsInterfacePoints) {
        if (!interfaceMapOf) return;
        const std::int32_t first = interfaceMapOf[listed];
        if (first < 0) return;
        const std::int32_t interfaceIndex = interfaceOfSurface[first + surfaceIndex(x, B)];
        if (interfaceIndex >= 0) step.finishInterfacePoint(block, n, tapSums, interfaceCount, interfaceIndex);
      }
      return;
    }
    float g[L::Q];
    if (state.solid) {
      if (state.solid[static_cast<std::int64_t>(block) * count + n]) return;
      pull<true>(block, across, x, n, g);
    } else {
      pull<false>(block, across, x, n, g);
    }
    step.finishPoint(block, step.preCollisionSlot(block, x), n, g);
  }

  // The populations arriving at point x (n) of `block`: a pull whose source x - c lies beyond the
  // block reads it in the block across, where that point is x - c moved B - 1 back (same-level
  // blocks share their face points); half-way bounce-back from a wall or a solid point.
  template <bool Solid>
  OCTO_HD OCTO_INLINE void pull(std::int32_t block, const std::int32_t (&across)[8], const int (&x)[3], unsigned n,
                                float (&g)[L::Q]) const {
    const AmrLbmLevels& state = step.state;
    const int B = state.blockNodes;
    const unsigned count = static_cast<unsigned>(B * B * B);
    const std::uint32_t blockFloats = static_cast<std::uint32_t>(L::Q) * count;  // below 2^31 (AmrLbm)
    const float* source = state.post[state.parity[step.level]];
    // On each axis a pull with c = +1 leaves through the low face when x = 0, one with c = -1
    // through the high face when x = B - 1 (bit a of across's index: across axis a).
    bool low[3], high[3];
    OCTO_UNROLL
    for (int axis = 0; axis < 3; ++axis) {
      low[axis] = x[axis] == 0;
      high[axis] = x[axis] == B - 1;
    }
    const int wrap[3] = {B - 1, (B - 1) * B, (B - 1) * B * B};
    OCTO_UNROLL
    for (int q = 0; q < L::Q; ++q) {
      bool leaves[3];
      int m = static_cast<int>(n) - (L::c(q, 0) + B * (L::c(q, 1) + B * L::c(q, 2)));
      OCTO_UNROLL
      for (int axis = 0; axis < 3; ++axis) {
        const int c = L::c(q, axis);
        leaves[axis] = c > 0 ? low[axis] : (c < 0 ? high[axis] : false);
        m += leaves[axis] ? c * wrap[axis] : 0;
      }
      const std::int32_t from = pick(across, leaves[0], leaves[1], leaves[2]);
      bool bounce = from == kRestingWall;
      if constexpr (Solid)
        bounce = bounce || state.solid[static_cast<std::uint64_t>(static_cast<std::uint32_t>(from)) * count + m];
      // The block read and the offset in it, chosen in 32 bits: one widening multiply a population.
      const auto holder = static_cast<std::uint32_t>(bounce ? block : from);
      const unsigned offset = bounce ? static_cast<unsigned>(L::opposite(q)) * count + n
                                     : static_cast<unsigned>(q) * count + static_cast<unsigned>(m);
      g[q] = source[static_cast<std::uint64_t>(holder) * blockFloats + offset];
    }
  }

  // across[bits] by three selections (constant flags fold away: a face pull selects once).
  OCTO_HD OCTO_INLINE static std::int32_t pick(const std::int32_t (&across)[8], bool ax, bool ay, bool az) {
    const std::int32_t below = ay ? (ax ? across[3] : across[2]) : (ax ? across[1] : across[0]);
    const std::int32_t above = ay ? (ax ? across[7] : across[6]) : (ax ? across[5] : across[4]);
    return az ? above : below;
  }
};

// The outer shell of each block: the two faces z = 0 and z = B - 1, then a ring of 4 (B - 1)
// points on every plane between.
template <class L, class C>
struct AmrShellStep {
  AmrLevelStep<L, C> step;

  OCTO_HD static void shellPoint(int r, int B, int (&x)[3]) {
    const int face = B * B, ring = 4 * (B - 1);
    if (r < 2 * face) {
      x[2] = r < face ? 0 : B - 1;
      const int p = r % face;
      x[0] = p % B;
      x[1] = p / B;
      return;
    }
    r -= 2 * face;
    x[2] = 1 + r / ring;
    const int p = r % ring;
    if (p < B) {
      x[0] = p;
      x[1] = 0;
    } else if (p < 2 * B) {
      x[0] = p - B;
      x[1] = B - 1;
    } else if (p < 2 * B + (B - 2)) {
      x[0] = 0;
      x[1] = 1 + p - 2 * B;
    } else {
      x[0] = B - 1;
      x[1] = 1 + p - 2 * B - (B - 2);
    }
  }

  OCTO_HD void operator()(std::int64_t index) const {
    const int B = step.state.blockNodes;
    const std::int64_t shell = step.state.pointCount() - static_cast<std::int64_t>(B - 2) * (B - 2) * (B - 2);
    int x[3];
    shellPoint(static_cast<int>(index % shell), B, x);
    step.updatePoint(step.levelBlocks[index / shell], x);
  }
};

// The shell points of one kind (ShellKind) of a level, listed block by block (AmrKernel::Sorted):
// a warp runs one kind's path, and same-level points a lean one without level links or face rules.
// Solid points are not listed; interface points run AmrInterfaceStep.
template <class L, class C, ShellKind Kind>
struct AmrShellKindStep {
  static_assert(Kind != ShellKind::Interface, "interface points: AmrInterfaceStep");
  AmrLevelStep<L, C> step;
  const ShellPoint* points = nullptr;
  FinerSources finer;  // ShellKind::Linked: the finer sources, rebuilt already

  OCTO_HD void operator()(std::int64_t index) const {
    const ShellPoint entry = points[index];
    const int B = step.state.blockNodes;
    const int x[3] = {entry.point % B, (entry.point / B) % B, entry.point / (B * B)};
    const RebuiltPulls pulls{finer.rebuilt, finer.count, finer.sourceOf ? finer.sourceOf + index * L::Q : nullptr};
    float g[L::Q];
    step.template pullPopulations<0, 0, 0, Kind == ShellKind::SameLevel>(
        entry.block, step.state.blocks[entry.block], x, entry.point, step.state.post[step.state.parity[step.level]], g,
        Kind == ShellKind::Linked ? &pulls : nullptr);
    step.finishPoint(entry.block, step.preCollisionSlot(entry.block, x), entry.point, g);
  }
};

// The coarse taps of a level's interface points summed (InterfaceTapSums), at the level's first
// sub-step, after the coarser level's step: its current state, and WithOld its state before.
template <class L, class C, bool WithOld>
struct AmrCoarseTapsStep {
  AmrLevelStep<L, C> step;
  const ShellPoint* points = nullptr;  // the level's interface points
  std::int64_t count = 0;
  InterfaceTapSums sums;

  OCTO_HD void operator()(std::int64_t index) const {
    const ShellPoint entry = points[index];
    const int B = step.state.blockNodes;
    const int x[3] = {entry.point % B, (entry.point / B) % B, entry.point / (B * B)};
    float now[L::Q], old[L::Q];
    // Listed as interface points: held by a coarser block, not every tap solid (shellKind).
    step.template sumCoarseTaps<WithOld>(*step.coarserHolder(step.state.blocks[entry.block], x), x, now, old);
    OCTO_UNROLL
    for (int q = 0; q < L::Q; ++q) {
      sums.now[q * count + index] = now[q];
      if constexpr (WithOld) sums.old[q * count + index] = old[q];
    }
  }
};

// A level's interface points stepped from the sums of their coarse taps: no link, tap or coarse
// state read, Q values a point (and Q more at the first sub-step, the coarse state before).
template <class L, class C>
struct AmrInterfaceStep {
  AmrLevelStep<L, C> step;
  const ShellPoint* points = nullptr;
  std::int64_t count = 0;
  InterfaceTapSums sums;

  OCTO_HD void operator()(std::int64_t index) const {
    const ShellPoint entry = points[index];
    step.finishInterfacePoint(entry.block, entry.point, sums, count, index);
  }
};

// The finer points a level's linked points pull from (FinerSources), rebuilt and collided on the
// level: the values the pulls would compute one population at a time.
template <class L, class C>
struct AmrFinerSourceStep {
  AmrLevelStep<L, C> step;
  FinerSources finer;

  OCTO_HD void operator()(std::int64_t index) const {
    const ShellPoint entry = finer.points[index];
    const int B = step.state.blockNodes;
    float set[L::Q];
    step.rebuiltFromFiner(entry.block, entry.point % B, (entry.point / B) % B, entry.point / (B * B), set);
    OCTO_UNROLL
    for (int q = 0; q < L::Q; ++q) finer.rebuilt[q * finer.count + index] = set[q];
  }
};

// The shell cut into its 26 position classes (the seed's templates): class (GI, GJ, GK), each -1
// (the block's lower face on that axis), +1 (its upper face) or 0 (the B - 2 points between), holds
// (B - 2)^(axes at 0) points a block: 6 faces, 12 edges, 8 corners. Which directions leave the
// block is known at compile time; the directions that stay read the block with no link.
template <class L, class C, int GI, int GJ, int GK>
struct AmrShellClassStep {
  AmrLevelStep<L, C> step;

  OCTO_HD static constexpr int between() { return (GI == 0) + (GJ == 0) + (GK == 0); }
  OCTO_HD static std::int64_t pointsPerBlock(int B) {
    std::int64_t count = 1;
    for (int axis = 0; axis < between(); ++axis) count *= B - 2;
    return count;
  }

  OCTO_HD void operator()(std::int64_t index) const {
    const int B = step.state.blockNodes;
    const std::int64_t perBlock = pointsPerBlock(B);
    int r = static_cast<int>(index % perBlock);
    const int classes[3] = {GI, GJ, GK};
    int x[3];
    for (int axis = 0; axis < 3; ++axis) {
      if (classes[axis] != 0) {
        x[axis] = classes[axis] < 0 ? 0 : B - 1;
      } else {
        x[axis] = 1 + r % (B - 2);
        r /= B - 2;
      }
    }
    step.template updatePoint<GI, GJ, GK>(step.levelBlocks[index / perBlock], x);
  }
};

// f(integral_constant GI, GJ, GK) for each of the 26 shell classes.
template <int I = 0, class F>
void forEachShellClass(const F& f) {
  if constexpr (I < 27) {
    if constexpr (I != 13)
      f(std::integral_constant<int, I % 3 - 1>{}, std::integral_constant<int, (I / 3) % 3 - 1>{},
        std::integral_constant<int, I / 9 - 1>{});
    forEachShellClass<I + 1>(f);
  }
}

// The 26 shell classes in one launch: the index runs over class 0's points of every block, then
// class 1's, ... (forEachShellClass's order), so a warp holds one class but where two meet; each
// point runs its class's templated update.
template <class L, class C>
struct AmrShellClassesStep {
  AmrLevelStep<L, C> step;
  std::int64_t firstIndex[27] = {};  // the first index of each class (26: the total)

  template <int I = 0>
  OCTO_HD OCTO_INLINE void run(int shellClass, std::int64_t local) const {
    if constexpr (I < 27) {
      if constexpr (I != 13) {
        if (shellClass == I) {
          AmrShellClassStep<L, C, I % 3 - 1, (I / 3) % 3 - 1, I / 9 - 1>{step}(local);
          return;
        }
      }
      run<I + 1>(shellClass, local);
    }
  }

  OCTO_HD void operator()(std::int64_t index) const {
    int slot = 0;
    while (slot + 1 < 26 && index >= firstIndex[slot + 1]) ++slot;
    run(slot < 13 ? slot : slot + 1, index - firstIndex[slot]);
  }
};

// Density and velocity of every point of every block from its post-collision populations (the
// momentum after a Guo-forced collision is rho u + F/2). `out`: densities of all points, then
// their velocities (xyz per point).
template <class L>
struct AmrMoments {
  AmrLbmLevels state;
  std::int64_t totalPoints = 0;
  float* out = nullptr;

  OCTO_HD void operator()(std::int64_t index) const {
    const std::int64_t count = state.pointCount();
    const std::int64_t block = index / count;
    const std::int64_t n = index % count;
    const int level = state.blocks[block].level;
    const lbm::NodeMoments moments = pointMoments<L>(state, state.post[state.parity[level]], block, n, level);
    const float rho = moments.rho;
    const lbm::Vector3& u = moments.u;
    out[index] = rho;
    out[totalPoints + 3 * index] = u.x;
    out[totalPoints + 3 * index + 1] = u.y;
    out[totalPoints + 3 * index + 2] = u.z;
  }
};

// The CSM model's part of the relaxation time of each point of a level's blocks (AmrLbmLevels::
// eddy), from the velocity gradient of the level's current state: central differences over the
// axis neighbours, which lie in the block or, across its face, in a block of the same level (the
// copies of a point that blocks share read the same neighbours); one-sided with the point's own velocity
// where a neighbour is solid, beyond a wall or on another level; zero where both are. A point's
// velocity is that of its post-collision populations (pointMoments): the uniform solver's CSM reads
// the same, the velocity its previous collision recorded.
template <class L>
struct AmrEddyStep {
  AmrLbmLevels state;
  const std::int32_t* levelBlocks = nullptr;
  int level = 0;
  float constant = lbm::Les::kCsmConstant;  // C'

  OCTO_HD bool solidAt(std::int64_t block, std::int64_t n) const {
    return state.solid && state.solid[block * state.pointCount() + n] != 0;
  }

  // The velocity of the point `side` (-1 or +1) along `axis` from point x of `block`; false where
  // none of this level is fluid there. Beyond the block, the block across the face holds it, or,
  // where x lies on the block's faces along the other axes, a block across an edge or corner there:
  // when the block across the face is of another level, one beside it may be of this one (and the
  // copies of x in the blocks around must find the same neighbours).
  OCTO_HD bool neighbourVelocity(std::int32_t block, const int (&x)[3], int axis, int side, lbm::Vector3& u) const {
    const int B = state.blockNodes;
    int c[3] = {x[0], x[1], x[2]};
    c[axis] += side;
    std::int32_t holder = block;
    if (c[axis] < 0 || c[axis] >= B) {
      const int other[2] = {(axis + 1) % 3, (axis + 2) % 3};
      const RegionLink* found = nullptr;
      for (int across = 0; across < 4 && !found; ++across) {
        int probe[3] = {c[0], c[1], c[2]};
        bool valid = true;
        for (int o = 0; o < 2; ++o) {
          if (!((across >> o) & 1)) continue;
          const int a = other[o];
          valid = valid && (x[a] == 0 || x[a] == B - 1);
          probe[a] = x[a] == 0 ? -1 : B;
        }
        if (!valid) continue;
        const RegionLink& link = state.blocks[block].links[regionIndex(regionOf(probe[0], B), regionOf(probe[1], B), regionOf(probe[2], B))];
        if (link.block >= 0 && link.levelShift == 0) found = &link;
      }
      if (!found) return false;
      holder = found->block;
      for (int a = 0; a < 3; ++a) c[a] += found->offset[a];
    }
    const std::int64_t n = state.point(c[0], c[1], c[2]);
    if (solidAt(holder, n)) return false;
    u = pointMoments<L>(state, state.post[state.parity[level]], holder, n, level).u;
    return true;
  }

  OCTO_HD void operator()(std::int64_t index) const {
    const int B = state.blockNodes;
    const std::int64_t count = state.pointCount();
    const std::int32_t block = levelBlocks[index / count];
    const std::int64_t n = index % count;
    float& out = state.eddy[block * count + n];
    if (solidAt(block, n)) {
      out = 0.0f;
      return;
    }
    const int x[3] = {static_cast<int>(n % B), static_cast<int>((n / B) % B), static_cast<int>(n / (std::int64_t{B} * B))};
    const lbm::Vector3 own = pointMoments<L>(state, state.post[state.parity[level]], block, n, level).u;
    lbm::VelocityGradient gradient;
    for (int axis = 0; axis < 3; ++axis) {
      lbm::Vector3 lower = own, upper = own;
      const bool below = neighbourVelocity(block, x, axis, -1, lower);
      const bool above = neighbourVelocity(block, x, axis, 1, upper);
      const float scale = below && above ? 0.5f : 1.0f;
      for (int component = 0; component < 3; ++component)
        gradient.g[component][axis] = scale * (upper[component] - lower[component]);
    }
    out = 3.0f * lbm::csmEddyViscosity(gradient, constant);
  }
};

// A fluid point next to an obstacle: the populations its step reflects (bit q: population q comes
// back from the obstacle) and its share of the force (the part of its dual cell its block holds,
// times h_L^2: the momentum of a level-L link over the level's time step, in level-0 units).
struct AmrObstacleLink {
  std::int64_t point = 0;  // block * B^3 + local point
  std::uint32_t reflected = 0;
  float weight = 1.0f;
};

// Momentum exchange at the link points (Ladd 1994; Krueger et al. eq. 11.8): population
// p = opposite(q) of a reflected link, sent into the obstacle, came back reversed in the level's
// last step and gave it 2 c_p f_p; f_p (weight plus the stored deviation) is the point's
// post-collision value of the step before, the array that step read. Three values a link point.
template <class L>
struct AmrObstacleForce {
  AmrLbmLevels state;
  const AmrObstacleLink* links = nullptr;
  double* force = nullptr;

  OCTO_HD void operator()(std::int64_t entry) const {
    const AmrObstacleLink link = links[entry];
    const std::int64_t count = state.pointCount();
    const std::int64_t block = link.point / count, n = link.point % count;
    const float* post = state.post[1 - state.parity[state.blocks[block].level]];
    double f[3] = {0.0, 0.0, 0.0};
    OCTO_UNROLL
    for (int q = 1; q < L::Q; ++q) {
      if (!(link.reflected & (1u << q))) continue;
      const int p = L::opposite(q);
      const double value = static_cast<double>(L::w(p)) + post[(block * L::Q + p) * count + n];
      for (int axis = 0; axis < 3; ++axis) f[axis] += 2.0 * L::c(p, axis) * value;
    }
    for (int axis = 0; axis < 3; ++axis) force[3 * entry + axis] = link.weight * f[axis];
  }
};

// Calls f(Lattice{}) for the octree LBM's lattices (D3Q19, D3Q27).
template <class F>
void withAmrLattice(lbm::LatticeKind kind, F&& f) {
  if (kind == lbm::LatticeKind::D3Q19)
    f(lbm::D3Q19{});
  else
    f(lbm::D3Q27{});
}

// Calls f(Lattice{}, Collision{}) for the octree LBM's lattices and collision operators (the
// second argument names the operator's type; AmrLbmLevels::collision<C>() holds its parameters).
template <class F>
void withAmrModel(lbm::LatticeKind kind, lbm::CollisionKind collision, F&& f) {
  withAmrLattice(kind, [&](auto lattice) {
    if (collision == lbm::CollisionKind::Mrt)
      f(lattice, lbm::Mrt{});
    else if (collision == lbm::CollisionKind::Trt)
      f(lattice, lbm::Trt{});
    else
      f(lattice, lbm::Bgk{});
  });
}

}  // namespace octoflow::amr
