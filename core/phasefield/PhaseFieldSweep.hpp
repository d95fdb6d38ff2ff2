#pragma once
// One step of a phase-field model over a grid (or a box of it): the arguments, the CPU reference
// sweep, and the two executions (PhaseFieldCpu.cpp, PhaseFieldCuda.cu). Each node reads phi and u
// at step n and writes both at n + 1 (two arrays each, swapped by the solver). The physics is the
// models' point-wise code (PhaseFieldStencil.hpp, KobayashiModel.hpp, KarmaRappelModel.hpp).
#include <cstdint>
#include <type_traits>

#include "common/Extent.hpp"
#include "phasefield/KarmaRappelModel.hpp"
#include "phasefield/KobayashiModel.hpp"

namespace octoflow::phasefield {

enum class PhaseFieldModel { Kobayashi, KarmaRappel };

struct SweepArguments {
  Extent extent;           // this grid (a piece's, with its ghost layers, under MPI)
  bool periodic[3] = {};   // axes that wrap; other faces are no-flux (mirrored)
  NodeBox box;             // the nodes to update (the rest are not written)
  Index origin[3] = {};    // whole-grid coordinates of local node 0 (noise is keyed by them)
  Extent whole;            // the whole grid (noise keys)
  int dimensions = 3;
  PhaseFieldModel model = PhaseFieldModel::Kobayashi;
  KobayashiStep kobayashi;      // the coefficients of the model in use
  KarmaRappelStep karmaRappel;
  std::uint64_t step = 0;  // the step being taken (noise key)
  const float* phi = nullptr;
  const float* u = nullptr;
  float* phiNext = nullptr;
  float* uNext = nullptr;

  float anisotropy() const { return model == PhaseFieldModel::Kobayashi ? kobayashi.anisotropy : karmaRappel.anisotropy; }
};

// f(Dimensions constant, model's step) for the arguments' dimensions and model.
template <class F>
void withModel(const SweepArguments& a, F&& f) {
  const auto forDimensions = [&](const auto& step) {
    if (a.dimensions == 3)
      f(std::integral_constant<int, 3>{}, step);
    else
      f(std::integral_constant<int, 2>{}, step);
  };
  if (a.model == PhaseFieldModel::Kobayashi)
    forDimensions(a.kobayashi);
  else
    forDimensions(a.karmaRappel);
}

// Index of the neighbour at offset -1, 0, +1 along an axis of n nodes: wrapped on periodic axes,
// else clamped (the mirror of a no-flux face half a spacing beyond the last node: the gradient
// across it is zero).
OCTO_HD inline Index neighbourIndex(Index i, int offset, Index n, bool periodic) {
  const Index j = i + offset;
  if (j < 0) return periodic ? j + n : 0;
  if (j >= n) return periodic ? j - n : n - 1;
  return j;
}

// The CPU reference of a step, one node at a time from its gathered neighbourhood (the CUDA
// kernel, PhaseFieldCuda.cu, computes the same faces once for the two nodes that share them).
template <int Dimensions, class Model>
struct PhaseFieldSweep {
  SweepArguments a;
  Model model;
  void operator()(Index i, Index j, Index k) const {
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
    NodeState node;
    node.phi = n.p[1][1][1];
    node.divergence = fluxDivergence<Dimensions>(n, model.anisotropy);
    node.u = a.u[centre];
    node.uLaplacian = ((a.u[xs[0] + ys[1] + zs[1]] + a.u[xs[2] + ys[1] + zs[1]]) + a.u[xs[1] + ys[0] + zs[1]] +
                       a.u[xs[1] + ys[2] + zs[1]]) -
                      2.0f * static_cast<float>(Dimensions) * node.u;
    if (Dimensions == 3) node.uLaplacian += a.u[xs[1] + ys[1] + zs[0]] + a.u[xs[1] + ys[1] + zs[2]];
    node.gradient[0] = n.p[2][1][1] - n.p[0][1][1];
    node.gradient[1] = n.p[1][2][1] - n.p[1][0][1];
    node.gradient[2] = Dimensions == 3 ? n.p[1][1][2] - n.p[1][1][0] : 0.0f;
    node.node = static_cast<std::uint64_t>(a.whole.linear(a.origin[0] + i, a.origin[1] + j, a.origin[2] + k));
    node.step = a.step;
    model.update(node, a.phiNext[centre], a.uNext[centre]);
  }
};

// out[n] = offset + scale * in[n]: temperature in K from u, where the fields live.
struct AffineMap {
  const float* in;
  float* out;
  float scale, offset;
  OCTO_HD void operator()(Index n) const { out[n] = offset + scale * in[n]; }
};

// The two executions (PhaseFieldCpu.cpp, PhaseFieldCuda.cu).
void phaseFieldSweepCpu(const SweepArguments& arguments);
// Queued on `stream` (a cudaStream_t; null: the default stream).
void phaseFieldSweepCuda(const SweepArguments& arguments, void* stream = nullptr);
void affineMapCpu(const AffineMap& map, Index count);

// The two CUDA queues of a piece's steps (exec::CudaQueues): the default stream sweeps the
// interior while a non-blocking stream of the highest priority sweeps the boundary layers and
// moves the halos.
class SweepQueues {
public:
  SweepQueues();
  ~SweepQueues();
  SweepQueues(const SweepQueues&) = delete;
  SweepQueues& operator=(const SweepQueues&) = delete;
  void* halo() const;  // its cudaStream_t
  void join();         // work queued on either from now on starts after the work queued on both so far
  void synchronize();
  // A timeline of queued work (exec::CudaQueues): marks on either queue, read back as microseconds
  // after the first once the work is done.
  void startTimeline();
  void markTimeline(bool onHalo);
  std::vector<double> stopTimeline();

private:
  struct Queues;
  Queues* queues_;
};
void affineMapCuda(const AffineMap& map, Index count);
void synchronizeCuda();

}  // namespace octoflow::phasefield
