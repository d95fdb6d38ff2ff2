#pragma once
// One step of the Kobayashi model over a grid, written once for both executions: the CPU reference
// (PhaseFieldCpu.cpp) and CUDA (PhaseFieldCuda.cu) instantiate it with their executor. Each node
// reads phi and u at step n and writes both at n + 1 (two arrays each, swapped by the solver).
#include <array>
#include <cstdint>

#include "common/Extent.hpp"
#include "phasefield/KobayashiModel.hpp"

namespace octoflow::phasefield {

struct SweepArguments {
  Extent extent;                       // this grid (a piece's, with its ghost layers, under MPI)
  std::array<bool, 3> periodic{};      // axes that wrap; other faces are no-flux (mirrored)
  NodeBox box;                         // the nodes to update (the rest are not written)
  std::array<Index, 3> origin{};       // whole-grid coordinates of local node 0 (noise is keyed by them)
  Extent whole;                        // the whole grid (noise keys)
  int dimensions = 3;
  KobayashiStep coefficients;
  std::uint64_t step = 0;              // the step being taken (noise key)
  const float* phi = nullptr;
  const float* u = nullptr;
  float* phiNext = nullptr;
  float* uNext = nullptr;
};

// Index of the neighbour at offset -1, 0, +1 along an axis of n nodes: wrapped on periodic axes,
// else clamped (the mirror of a no-flux face: the gradient across it is zero).
OCTO_HD inline Index neighbourIndex(Index i, int offset, Index n, bool periodic) {
  const Index j = i + offset;
  if (j < 0) return periodic ? j + n : 0;
  if (j >= n) return periodic ? j - n : n - 1;
  return j;
}

template <int Dimensions>
struct KobayashiSweep {
  SweepArguments a;
  OCTO_HD void operator()(Index i, Index j, Index k) const {
    const Extent& e = a.extent;
    Index xs[3], ys[3], zs[3];
    for (int o = 0; o < 3; ++o) {
      xs[o] = neighbourIndex(i, o - 1, e.nx, a.periodic[0]);
      ys[o] = e.nx * neighbourIndex(j, o - 1, e.ny, a.periodic[1]);
      zs[o] = Dimensions == 3 ? e.nx * e.ny * neighbourIndex(k, o - 1, e.nz, a.periodic[2]) : e.nx * e.ny * k;
    }
    PhiNeighbourhood n;
    const int kLow = Dimensions == 3 ? 0 : 1, kHigh = Dimensions == 3 ? 2 : 1;
    for (int dz = kLow; dz <= kHigh; ++dz)
      for (int dy = 0; dy < 3; ++dy)
        for (int dx = 0; dx < 3; ++dx) {
          const int away = (dx != 1) + (dy != 1) + (dz != 1);  // corners (3) are not part of the stencil
          n.p[dx][dy][dz] = away < 3 ? a.phi[xs[dx] + ys[dy] + zs[dz]] : 0.0f;
        }
    const Index centre = xs[1] + ys[1] + zs[1];
    const float u = a.u[centre];
    float laplacian = a.u[xs[0] + ys[1] + zs[1]] + a.u[xs[2] + ys[1] + zs[1]] + a.u[xs[1] + ys[0] + zs[1]] +
                      a.u[xs[1] + ys[2] + zs[1]] - 2.0f * static_cast<float>(Dimensions) * u;
    if (Dimensions == 3) laplacian += a.u[xs[1] + ys[1] + zs[0]] + a.u[xs[1] + ys[1] + zs[2]];
    float chi = 0.0f;
    if (a.coefficients.noiseAmplitude != 0.0f) {
      const Index global = a.whole.linear(a.origin[0] + i, a.origin[1] + j, a.origin[2] + k);
      chi = noiseValue(a.coefficients.noiseSeed, static_cast<std::uint64_t>(global), a.step);
    }
    kobayashiUpdate<Dimensions>(a.coefficients, n, u, laplacian, chi, a.phiNext[centre], a.uNext[centre]);
  }
};

template <class Executor>
void runKobayashiSweep(const Executor& executor, const SweepArguments& arguments) {
  if (arguments.dimensions == 3)
    executor.parallelFor3(arguments.box, KobayashiSweep<3>{arguments});
  else
    executor.parallelFor3(arguments.box, KobayashiSweep<2>{arguments});
}

// out[n] = offset + scale * in[n]: temperature in K from u, where the fields live.
struct AffineMap {
  const float* in;
  float* out;
  float scale, offset;
  OCTO_HD void operator()(Index n) const { out[n] = offset + scale * in[n]; }
};

// The two executions (PhaseFieldCpu.cpp, PhaseFieldCuda.cu).
void kobayashiSweepCpu(const SweepArguments& arguments);
void kobayashiSweepCuda(const SweepArguments& arguments);
void affineMapCpu(const AffineMap& map, Index count);
void affineMapCuda(const AffineMap& map, Index count);
void synchronizeCuda();

}  // namespace octoflow::phasefield
