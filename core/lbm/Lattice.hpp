#pragma once
// Discrete velocity sets. Velocities are ordered as rest, then opposite pairs (q, q+1) for odd q,
// so opposite(q) needs no table. Weights depend only on |c|_1 (number of non-zero components).
// D2Q9: seed 1 (lbm-temporal-blocking-registers) eq. (5); D3Q27: seed 3 (octree-amr-lbm) §2;
// D3Q19: Qian, d'Humieres & Lallemand, Europhys. Lett. 17 (1992) 479.
#include <cstdint>
#include <string>

#include "common/Macros.hpp"

namespace octoflow::lbm {

enum class LatticeKind { D2Q9, D3Q19, D3Q27 };

namespace detail {
OCTO_HD OCTO_INLINE constexpr int oppositeInPairOrder(int q) { return q == 0 ? 0 : ((q & 1) ? q + 1 : q - 1); }

// c(q, axis) without a table at run time: the components along one axis packed two bits a
// velocity (component + 1) into one word at compile time, read with a shift. Indexing the
// velocity table itself with a q known only at run time made host compilers copy the whole
// table onto the stack at each call (most of the octree solver's set-up time); with q known at
// compile time (the unrolled kernels) both fold to the same constant.
template <int Q>
OCTO_HD OCTO_INLINE constexpr std::uint64_t packedComponents(const int (&velocities)[Q][3], int axis) {
  static_assert(2 * Q <= 64, "two bits a velocity in one 64-bit word");
  std::uint64_t word = 0;
  for (int q = 0; q < Q; ++q) word |= static_cast<std::uint64_t>(velocities[q][axis] + 1) << (2 * q);
  return word;
}
OCTO_HD OCTO_INLINE constexpr int component(std::uint64_t x, std::uint64_t y, std::uint64_t z, int q, int axis) {
  return static_cast<int>(((axis == 0 ? x : (axis == 1 ? y : z)) >> (2 * q)) & 3u) - 1;
}
// The weight of a velocity with `norm` non-zero components.
OCTO_HD OCTO_INLINE constexpr float weightOfNorm(int norm, float w0, float w1, float w2, float w3 = 0.0f) {
  return norm == 0 ? w0 : (norm == 1 ? w1 : (norm == 2 ? w2 : w3));
}
}  // namespace detail

struct D2Q9 {
  static constexpr LatticeKind kind = LatticeKind::D2Q9;
  static constexpr int dimensions = 2;
  static constexpr int Q = 9;
  static constexpr const char* name() { return "D2Q9"; }
  OCTO_HD OCTO_INLINE static constexpr int c(int q, int axis) {
    constexpr int v[Q][3] = {{0, 0, 0},  {1, 0, 0},   {-1, 0, 0}, {0, 1, 0},  {0, -1, 0},
                             {1, 1, 0},  {-1, -1, 0}, {1, -1, 0}, {-1, 1, 0}};
    constexpr std::uint64_t x = detail::packedComponents<Q>(v, 0), y = detail::packedComponents<Q>(v, 1),
                            z = detail::packedComponents<Q>(v, 2);
    return detail::component(x, y, z, q, axis);
  }
  OCTO_HD OCTO_INLINE static constexpr float w(int q) {
    return detail::weightOfNorm((c(q, 0) != 0) + (c(q, 1) != 0), 4.0f / 9.0f, 1.0f / 9.0f, 1.0f / 36.0f);
  }
  OCTO_HD OCTO_INLINE static constexpr int opposite(int q) { return detail::oppositeInPairOrder(q); }
};

struct D3Q19 {
  static constexpr LatticeKind kind = LatticeKind::D3Q19;
  static constexpr int dimensions = 3;
  static constexpr int Q = 19;
  static constexpr const char* name() { return "D3Q19"; }
  OCTO_HD OCTO_INLINE static constexpr int c(int q, int axis) {
    constexpr int v[Q][3] = {{0, 0, 0},   {1, 0, 0},   {-1, 0, 0},  {0, 1, 0},   {0, -1, 0},
                             {0, 0, 1},   {0, 0, -1},  {1, 1, 0},   {-1, -1, 0}, {1, -1, 0},
                             {-1, 1, 0},  {1, 0, 1},   {-1, 0, -1}, {1, 0, -1},  {-1, 0, 1},
                             {0, 1, 1},   {0, -1, -1}, {0, 1, -1},  {0, -1, 1}};
    constexpr std::uint64_t x = detail::packedComponents<Q>(v, 0), y = detail::packedComponents<Q>(v, 1),
                            z = detail::packedComponents<Q>(v, 2);
    return detail::component(x, y, z, q, axis);
  }
  OCTO_HD OCTO_INLINE static constexpr float w(int q) {
    return detail::weightOfNorm((c(q, 0) != 0) + (c(q, 1) != 0) + (c(q, 2) != 0), 1.0f / 3.0f, 1.0f / 18.0f,
                                1.0f / 36.0f);
  }
  OCTO_HD OCTO_INLINE static constexpr int opposite(int q) { return detail::oppositeInPairOrder(q); }
};

struct D3Q27 {
  static constexpr LatticeKind kind = LatticeKind::D3Q27;
  static constexpr int dimensions = 3;
  static constexpr int Q = 27;
  static constexpr const char* name() { return "D3Q27"; }
  OCTO_HD OCTO_INLINE static constexpr int c(int q, int axis) {
    constexpr int v[Q][3] = {{0, 0, 0},   {1, 0, 0},   {-1, 0, 0},  {0, 1, 0},   {0, -1, 0},
                             {0, 0, 1},   {0, 0, -1},  {1, 1, 0},   {-1, -1, 0}, {1, -1, 0},
                             {-1, 1, 0},  {1, 0, 1},   {-1, 0, -1}, {1, 0, -1},  {-1, 0, 1},
                             {0, 1, 1},   {0, -1, -1}, {0, 1, -1},  {0, -1, 1},  {1, 1, 1},
                             {-1, -1, -1}, {1, 1, -1}, {-1, -1, 1}, {1, -1, 1},  {-1, 1, -1},
                             {-1, 1, 1},  {1, -1, -1}};
    constexpr std::uint64_t x = detail::packedComponents<Q>(v, 0), y = detail::packedComponents<Q>(v, 1),
                            z = detail::packedComponents<Q>(v, 2);
    return detail::component(x, y, z, q, axis);
  }
  OCTO_HD OCTO_INLINE static constexpr float w(int q) {
    return detail::weightOfNorm((c(q, 0) != 0) + (c(q, 1) != 0) + (c(q, 2) != 0), 8.0f / 27.0f, 2.0f / 27.0f,
                                1.0f / 54.0f, 1.0f / 216.0f);
  }
  OCTO_HD OCTO_INLINE static constexpr int opposite(int q) { return detail::oppositeInPairOrder(q); }
};

// Lattice speed of sound squared, cs^2 = 1/3, for all three sets.
constexpr float kSoundSpeedSquared = 1.0f / 3.0f;

inline const char* latticeName(LatticeKind kind) {
  switch (kind) {
    case LatticeKind::D2Q9: return D2Q9::name();
    case LatticeKind::D3Q19: return D3Q19::name();
    case LatticeKind::D3Q27: return D3Q27::name();
  }
  return "?";
}
inline int latticeQ(LatticeKind kind) {
  switch (kind) {
    case LatticeKind::D2Q9: return D2Q9::Q;
    case LatticeKind::D3Q19: return D3Q19::Q;
    case LatticeKind::D3Q27: return D3Q27::Q;
  }
  return 0;
}
inline int latticeDimensions(LatticeKind kind) { return kind == LatticeKind::D2Q9 ? 2 : 3; }

// Calls f(Lattice{}) with the lattice type that `kind` names: the one place a run-time lattice
// choice becomes a compile-time type.
template <class F>
decltype(auto) withLattice(LatticeKind kind, F&& f) {
  switch (kind) {
    case LatticeKind::D2Q9: return f(D2Q9{});
    case LatticeKind::D3Q19: return f(D3Q19{});
    case LatticeKind::D3Q27: break;
  }
  return f(D3Q27{});
}

}  // namespace octoflow::lbm
