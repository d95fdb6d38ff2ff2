// The CUDA execution of the phase-field sweeps, after the seed's scheme: a block holds a tile of
// columns and marches along the last axis, phi and u of three planes (below, here, above; with a
// one-node rim) rolling through shared memory, so each value comes from DRAM once; the plane after
// next is fetched into registers while this one is computed. Every face flux is computed once: the
// in-plane faces of a node (east, north) by its thread, the tile's west and south faces by a few
// threads, the face towards the next plane carried to it in a register. phi and u are updated
// together (dphi/dt stays in registers for the latent heat). 3D: tiles of 32 x 8 columns march
// along z; 2D: rows of 256 nodes march along y (the grid seen as nx x 1 x ny, so the y faces take
// the place of the z faces). The physics is the models' point-wise code (PhaseFieldStencil.hpp and
// the models), which the CPU reference sweep calls with the same operands in the same order.
#include <cuda_runtime.h>

#include "exec/cuda/CudaCheck.hpp"
#include "exec/cuda/CudaExecutor.cuh"
#include "phasefield/PhaseFieldSweep.hpp"

namespace octoflow::phasefield {

namespace {

constexpr int kThreads = 256;
constexpr int kPlanesPerBlock = 64;  // the run of a block along the marching axis

// The node a tile position maps to along an axis of n nodes: wrapped on a periodic axis, else
// clamped (the no-flux mirror; positions past the box's end are loaded but not written).
__device__ __forceinline__ Index wrapOrClamp(Index g, Index n, bool periodic) {
  if (periodic) g = g < 0 ? g + n : (g >= n ? g - n : g);
  return g < 0 ? 0 : (g >= n ? n - 1 : g);
}

// TileY = 1: a 2D grid, its y axis the marching one (no in-plane y faces).
template <int TileX, int TileY, class Model>
__global__ void __launch_bounds__(kThreads) phaseFieldMarch(SweepArguments a, Model model) {
  static_assert(TileX * TileY == kThreads, "a tile is one block");
  constexpr bool kInPlaneY = TileY > 1;
  constexpr int kRow = TileX + 2, kRows = kInPlaneY ? TileY + 2 : 1, kPlane = kRow * kRows;
  constexpr int kLoads = (kPlane + kThreads - 1) / kThreads;  // rim-tile entries a thread loads
  constexpr int kFirstWest = kInPlaneY ? TileX : 0;           // threads computing the tile's west faces
  __shared__ float phiPlanes[3][kPlane];
  __shared__ float uPlanes[3][kPlane];
  __shared__ float eastFlux[TileY][TileX + 1];  // [y][x + 1]: the face east of node x; [y][0] the tile's west face
  __shared__ float northFlux[kInPlaneY ? TileY + 1 : 1][TileX];  // [y + 1][x]; [0][x] the tile's south face
  const int tx = static_cast<int>(threadIdx.x), ty = static_cast<int>(threadIdx.y), thread = ty * TileX + tx;
  // The grid as (x, in-plane y, marching axis).
  const Extent e = kInPlaneY ? a.extent : Extent{a.extent.nx, 1, a.extent.ny};
  const bool periodicY = kInPlaneY && a.periodic[1];
  const bool periodicMarch = a.periodic[kInPlaneY ? 2 : 1];
  const Index boxLo[3] = {a.box.lo[0], kInPlaneY ? a.box.lo[1] : 0, a.box.lo[kInPlaneY ? 2 : 1]};
  const Index boxEnd[3] = {a.box.lo[0] + a.box.size.nx, kInPlaneY ? a.box.lo[1] + a.box.size.ny : 1,
                           kInPlaneY ? a.box.lo[2] + a.box.size.nz : a.box.lo[1] + a.box.size.ny};
  const float* __restrict__ phiIn = a.phi;
  const float* __restrict__ uIn = a.u;
  const Index x0 = boxLo[0] + static_cast<Index>(blockIdx.x) * TileX;
  const Index y0 = boxLo[1] + static_cast<Index>(blockIdx.y) * TileY;
  const Index zBegin = boxLo[2] + static_cast<Index>(blockIdx.z) * kPlanesPerBlock;
  const Index zEnd = min(zBegin + static_cast<Index>(kPlanesPerBlock), boxEnd[2]);
  const Index planeSize = e.nx * e.ny;

  // The in-plane offsets of the rim-tile entries this thread loads of each plane.
  Index source[kLoads];
  for (int s = 0; s < kLoads; ++s) {
    const int t = min(thread + s * kThreads, kPlane - 1);
    const Index gx = wrapOrClamp(x0 - 1 + t % kRow, e.nx, a.periodic[0]);
    const Index gy = kInPlaneY ? wrapOrClamp(y0 - 1 + t / kRow, e.ny, periodicY) : 0;
    source[s] = gy * e.nx + gx;
  }
  float fetchedPhi[kLoads], fetchedU[kLoads];  // a plane on its way from DRAM
  const auto fetch = [&](Index z) {
    const Index base = planeSize * wrapOrClamp(z, e.nz, periodicMarch);
    for (int s = 0; s < kLoads; ++s) {
      fetchedPhi[s] = phiIn[base + source[s]];
      fetchedU[s] = uIn[base + source[s]];
    }
  };
  const auto store = [&](int slot) {
    for (int s = 0; s < kLoads; ++s)
      if (thread + s * kThreads < kPlane) {
        phiPlanes[slot][thread + s * kThreads] = fetchedPhi[s];
        uPlanes[slot][thread + s * kThreads] = fetchedU[s];
      }
  };
  // Centred differences in a plane at a tile position (none along y in 2D).
  const auto dX = [](const float* p, int at) { return p[at + 1] - p[at - 1]; };
  const auto dY = [](const float* p, int at) { return kInPlaneY ? p[at + kRow] - p[at - kRow] : 0.0f; };

  const float gamma = model.anisotropy;
  const int c = (kInPlaneY ? ty + 1 : 0) * kRow + tx + 1;  // this thread's node in a plane
  int below = 0, here = 1, above = 2;
  fetch(zBegin - 1);
  store(below);
  fetch(zBegin);
  store(here);
  fetch(zBegin + 1);
  __syncthreads();
  float bottomFlux;
  {
    const float *pb = phiPlanes[below], *ph = phiPlanes[here];
    bottomFlux = faceFluxBetween(pb[c], ph[c], dX(pb, c), dX(ph, c), dY(pb, c), dY(ph, c), gamma);
  }
  const Index x = x0 + tx, y = y0 + ty;
  const bool writes = x < boxEnd[0] && y < boxEnd[1];
  for (Index z = zBegin; z < zEnd; ++z) {
    store(above);  // plane z + 1; its slot's last readers passed the previous barrier
    __syncthreads();
    if (z + 1 < zEnd) fetch(z + 2);  // in flight while this plane is computed
    const float *pb = phiPlanes[below], *ph = phiPlanes[here], *pa = phiPlanes[above];
    const auto dZ = [&](int at) { return pa[at] - pb[at]; };
    NodeState node;
    node.phi = ph[c];
    eastFlux[ty][tx + 1] = faceFluxBetween(node.phi, ph[c + 1], dY(ph, c), dY(ph, c + 1), dZ(c), dZ(c + 1), gamma);
    if (kInPlaneY) {
      northFlux[ty + 1][tx] =
          faceFluxBetween(node.phi, ph[c + kRow], dX(ph, c), dX(ph, c + kRow), dZ(c), dZ(c + kRow), gamma);
      if (thread < TileX) {  // the tile's south faces: below node (thread, 0)
        const int at = kRow + 1 + thread;
        northFlux[0][thread] =
            faceFluxBetween(ph[at - kRow], ph[at], dX(ph, at - kRow), dX(ph, at), dZ(at - kRow), dZ(at), gamma);
      }
    }
    if (thread >= kFirstWest && thread < kFirstWest + TileY) {  // its west faces: west of node (0, row)
      const int row = thread - kFirstWest, at = (kInPlaneY ? row + 1 : 0) * kRow + 1;
      eastFlux[row][0] = faceFluxBetween(ph[at - 1], ph[at], dY(ph, at - 1), dY(ph, at), dZ(at - 1), dZ(at), gamma);
    }
    const float topFlux = faceFluxBetween(node.phi, pa[c], dX(ph, c), dX(pa, c), dY(ph, c), dY(pa, c), gamma);
    const float* uh = uPlanes[here];
    node.u = uh[c];
    // The Laplacian in the CPU reference's order: x, y, then z (3D) neighbours.
    float laplacian = uh[c - 1] + uh[c + 1];
    if (kInPlaneY) {
      laplacian = (laplacian + uh[c - kRow]) + uh[c + kRow];
      node.uLaplacian = (laplacian - 6.0f * node.u) + (uPlanes[below][c] + uPlanes[above][c]);
    } else {
      node.uLaplacian = ((laplacian + uPlanes[below][c]) + uPlanes[above][c]) - 4.0f * node.u;
    }
    node.gradient[0] = dX(ph, c);
    node.gradient[1] = kInPlaneY ? dY(ph, c) : dZ(c);
    node.gradient[2] = kInPlaneY ? dZ(c) : 0.0f;
    __syncthreads();  // the faces of the tile are in
    node.divergence = eastFlux[ty][tx + 1] - eastFlux[ty][tx];
    if (kInPlaneY) node.divergence += northFlux[ty + 1][tx] - northFlux[ty][tx];
    node.divergence += topFlux - bottomFlux;
    if (writes) {
      const Index n = planeSize * z + y * e.nx + x;
      // Whole-grid node index (noise key): the same linear order in the (x, 1, y) view of 2D.
      node.node = static_cast<std::uint64_t>(
          kInPlaneY ? a.whole.linear(a.origin[0] + x, a.origin[1] + y, a.origin[2] + z)
                    : a.whole.linear(a.origin[0] + x, a.origin[1] + z, 0));
      node.step = a.step;
      model.update(node, a.phiNext[n], a.uNext[n]);
    }
    bottomFlux = topFlux;
    const int freed = below;
    below = here;
    here = above;
    above = freed;
  }
}

template <int TileX, int TileY, class Model>
void launchMarch(const SweepArguments& a, const Model& model, cudaStream_t stream) {
  const NodeBox& box = a.box;
  const Index marching = TileY > 1 ? box.size.nz : box.size.ny;
  const dim3 grid(static_cast<unsigned>((box.size.nx + TileX - 1) / TileX),
                  TileY > 1 ? static_cast<unsigned>((box.size.ny + TileY - 1) / TileY) : 1u,
                  static_cast<unsigned>((marching + kPlanesPerBlock - 1) / kPlanesPerBlock));
  phaseFieldMarch<TileX, TileY, Model><<<grid, dim3(TileX, TileY, 1), 0, stream>>>(a, model);
}

}  // namespace

void phaseFieldSweepCuda(const SweepArguments& arguments, void* stream) {
  if (arguments.box.cellCount() <= 0) return;
  withModel(arguments, [&](auto dimensions, const auto& model) {
    if constexpr (decltype(dimensions)::value == 3)
      launchMarch<32, 8>(arguments, model, static_cast<cudaStream_t>(stream));
    else
      launchMarch<256, 1>(arguments, model, static_cast<cudaStream_t>(stream));
  });
  OCTO_CUDA_CHECK(cudaGetLastError());
}

struct SweepQueues::Queues {
  exec::CudaQueues queues;
};
SweepQueues::SweepQueues() : queues_(new Queues) {}
SweepQueues::~SweepQueues() { delete queues_; }
void* SweepQueues::halo() const { return queues_->queues.halo.stream; }
void SweepQueues::join() {
  queues_->queues.haloAfterCompute();
  queues_->queues.computeAfterHalo();
}
void SweepQueues::synchronize() { queues_->queues.synchronize(); }
void SweepQueues::startTimeline() { queues_->queues.startTimeline(); }
void SweepQueues::markTimeline(bool onHalo) { queues_->queues.markTimeline(onHalo); }
std::vector<double> SweepQueues::stopTimeline() { return queues_->queues.stopTimeline(); }

void affineMapCuda(const AffineMap& map, Index count) { exec::CudaExecutor{}.parallelFor(count, map); }

void synchronizeCuda() { OCTO_CUDA_CHECK(cudaDeviceSynchronize()); }

}  // namespace octoflow::phasefield
