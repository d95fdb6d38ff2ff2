// The CUDA execution of the phase-field sweeps, after the seed's scheme: a block holds a tile of
// 32 x 8 columns and marches along z, phi and u of three planes (below, here, above; with a
// one-node rim) rolling through shared memory, so each value comes from DRAM once. Every face flux
// is computed once: the east and north faces of a node by its thread, the tile's west and south
// faces by the first 40 threads, the top face carried to the next plane in a register as its
// bottom face. phi and u are updated together (dphi/dt stays in registers for the latent heat).
// The physics is the models' point-wise code (PhaseFieldStencil.hpp and the models), shared with
// the CPU reference sweep, which computes the same faces with the same operands.
#include <cuda_runtime.h>

#include "exec/cuda/CudaCheck.hpp"
#include "exec/cuda/CudaExecutor.cuh"
#include "phasefield/PhaseFieldSweep.hpp"

namespace octoflow::phasefield {

namespace {

constexpr int kTileX = 32, kTileY = 8, kThreads = kTileX * kTileY;
constexpr int kRow = kTileX + 2, kPlane = kRow * (kTileY + 2);  // a tile's plane with its rim
constexpr int kPlanesPerBlock = 64;                             // the z run of a block (3D)

// The node a tile position maps to along an axis of n nodes: wrapped on a periodic axis, else
// clamped (the no-flux mirror; positions past the box's end are loaded but not written).
__device__ __forceinline__ Index wrapOrClamp(Index g, Index n, bool periodic) {
  if (periodic) g = g < 0 ? g + n : (g >= n ? g - n : g);
  return g < 0 ? 0 : (g >= n ? n - 1 : g);
}

template <int Dimensions, class Model>
__global__ void __launch_bounds__(kThreads) phaseFieldMarch(SweepArguments a, Model model) {
  __shared__ float phiPlanes[3][kPlane];
  __shared__ float uPlanes[3][kPlane];
  __shared__ float eastFlux[kTileY][kTileX + 1];   // [y][x + 1]: the face east of node x; [y][0] the tile's west face
  __shared__ float northFlux[kTileY + 1][kTileX];  // [y + 1][x]: the face north of node y; [0][x] the south face
  const int tx = static_cast<int>(threadIdx.x), ty = static_cast<int>(threadIdx.y), thread = ty * kTileX + tx;
  const Extent e = a.extent;
  const float* __restrict__ phiIn = a.phi;
  const float* __restrict__ uIn = a.u;
  const Index x0 = a.box.lo[0] + static_cast<Index>(blockIdx.x) * kTileX;
  const Index y0 = a.box.lo[1] + static_cast<Index>(blockIdx.y) * kTileY;
  const Index zBegin = a.box.lo[2] + static_cast<Index>(blockIdx.z) * kPlanesPerBlock;
  const Index zEnd = min(zBegin + static_cast<Index>(kPlanesPerBlock), a.box.lo[2] + a.box.size.nz);
  const Index planeSize = e.nx * e.ny;

  // The in-plane offsets of the (one or two) rim-tile entries this thread loads of each plane.
  Index source[2] = {0, 0};
  for (int s = 0; s < 2; ++s) {
    const int t = thread + s * kThreads;
    if (t >= kPlane) break;
    const Index gx = wrapOrClamp(x0 - 1 + t % kRow, e.nx, a.periodic[0]);
    const Index gy = wrapOrClamp(y0 - 1 + t / kRow, e.ny, a.periodic[1]);
    source[s] = gy * e.nx + gx;
  }
  const auto load = [&](int slot, Index z) {
    const Index base = planeSize * (Dimensions == 3 ? wrapOrClamp(z, e.nz, a.periodic[2]) : z);
    phiPlanes[slot][thread] = phiIn[base + source[0]];
    uPlanes[slot][thread] = uIn[base + source[0]];
    if (thread + kThreads < kPlane) {
      phiPlanes[slot][thread + kThreads] = phiIn[base + source[1]];
      uPlanes[slot][thread + kThreads] = uIn[base + source[1]];
    }
  };
  // Centred differences in a plane at a tile position.
  const auto dX = [](const float* p, int at) { return p[at + 1] - p[at - 1]; };
  const auto dY = [](const float* p, int at) { return p[at + kRow] - p[at - kRow]; };

  const float gamma = model.anisotropy;
  const int c = (ty + 1) * kRow + tx + 1;  // this thread's node in a plane
  int below = 0, here = 1, above = 2;
  if (Dimensions == 3) load(below, zBegin - 1);
  load(here, zBegin);
  __syncthreads();
  float bottomFlux = 0.0f;
  if (Dimensions == 3) {
    const float *pb = phiPlanes[below], *ph = phiPlanes[here];
    bottomFlux = faceFluxBetween(pb[c], ph[c], dX(pb, c), dX(ph, c), dY(pb, c), dY(ph, c), gamma);
  }
  const Index x = x0 + tx, y = y0 + ty;
  const bool writes = x < a.box.lo[0] + a.box.size.nx && y < a.box.lo[1] + a.box.size.ny;
  for (Index z = zBegin; z < zEnd; ++z) {
    if (Dimensions == 3) {
      load(above, z + 1);
      __syncthreads();
    }
    const float *pb = phiPlanes[below], *ph = phiPlanes[here], *pa = phiPlanes[above];
    const auto dZ = [&](int at) { return Dimensions == 3 ? pa[at] - pb[at] : 0.0f; };
    NodeState node;
    node.phi = ph[c];
    eastFlux[ty][tx + 1] = faceFluxBetween(node.phi, ph[c + 1], dY(ph, c), dY(ph, c + 1), dZ(c), dZ(c + 1), gamma);
    northFlux[ty + 1][tx] =
        faceFluxBetween(node.phi, ph[c + kRow], dX(ph, c), dX(ph, c + kRow), dZ(c), dZ(c + kRow), gamma);
    if (thread < kTileX) {  // the tile's south faces: below node (thread, 0)
      const int at = kRow + 1 + thread;
      northFlux[0][thread] =
          faceFluxBetween(ph[at - kRow], ph[at], dX(ph, at - kRow), dX(ph, at), dZ(at - kRow), dZ(at), gamma);
    } else if (thread < kTileX + kTileY) {  // its west faces: west of node (0, row)
      const int row = thread - kTileX, at = (row + 1) * kRow + 1;
      eastFlux[row][0] = faceFluxBetween(ph[at - 1], ph[at], dY(ph, at - 1), dY(ph, at), dZ(at - 1), dZ(at), gamma);
    }
    float topFlux = 0.0f;
    if (Dimensions == 3) topFlux = faceFluxBetween(node.phi, pa[c], dX(ph, c), dX(pa, c), dY(ph, c), dY(pa, c), gamma);
    const float* uh = uPlanes[here];
    node.u = uh[c];
    node.uLaplacian = ((uh[c - 1] + uh[c + 1]) + uh[c - kRow] + uh[c + kRow]) - 2.0f * static_cast<float>(Dimensions) * node.u;
    if (Dimensions == 3) node.uLaplacian += uPlanes[below][c] + uPlanes[above][c];
    node.gradient[0] = dX(ph, c);
    node.gradient[1] = dY(ph, c);
    node.gradient[2] = dZ(c);
    __syncthreads();  // the faces of the tile are in
    node.divergence = (eastFlux[ty][tx + 1] - eastFlux[ty][tx]) + (northFlux[ty + 1][tx] - northFlux[ty][tx]);
    if (Dimensions == 3) node.divergence += topFlux - bottomFlux;
    if (writes) {
      node.node = static_cast<std::uint64_t>(a.whole.linear(a.origin[0] + x, a.origin[1] + y, a.origin[2] + z));
      node.step = a.step;
      const Index n = planeSize * z + y * e.nx + x;
      model.update(node, a.phiNext[n], a.uNext[n]);
    }
    bottomFlux = topFlux;
    const int freed = below;  // refilled with the plane above the next one (after the next barrier
    below = here;             // everyone is past this plane's reads)
    here = above;
    above = freed;
  }
}

}  // namespace

void phaseFieldSweepCuda(const SweepArguments& arguments, void* stream) {
  const NodeBox& box = arguments.box;
  if (box.cellCount() <= 0) return;
  const dim3 block(kTileX, kTileY, 1);
  const dim3 grid(static_cast<unsigned>((box.size.nx + kTileX - 1) / kTileX),
                  static_cast<unsigned>((box.size.ny + kTileY - 1) / kTileY),
                  arguments.dimensions == 3 ? static_cast<unsigned>((box.size.nz + kPlanesPerBlock - 1) / kPlanesPerBlock)
                                            : 1u);
  withModel(arguments, [&](auto dimensions, const auto& model) {
    using Model = std::decay_t<decltype(model)>;
    phaseFieldMarch<decltype(dimensions)::value, Model>
        <<<grid, block, 0, static_cast<cudaStream_t>(stream)>>>(arguments, model);
  });
  OCTO_CUDA_CHECK(cudaGetLastError());
}

void affineMapCuda(const AffineMap& map, Index count) { exec::CudaExecutor{}.parallelFor(count, map); }

void synchronizeCuda() { OCTO_CUDA_CHECK(cudaDeviceSynchronize()); }

}  // namespace octoflow::phasefield
