#pragma once
// CUDA execution of a point-wise functor: one kernel launch, one thread per index.
#include <cuda_runtime.h>

#include "common/Extent.hpp"
#include "exec/Backend.hpp"
#include "exec/cuda/CudaCheck.hpp"

namespace octoflow::exec {

namespace detail {
template <class F>
__global__ void parallelForKernel(Index count, F function) {
  const Index i = static_cast<Index>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < count) function(i);
}
// Threads per block of the 3D launches.
constexpr int kBlock3 = 256;

template <int MinBlocksPerSm, class F>
__global__ void __launch_bounds__(kBlock3, MinBlocksPerSm) parallelFor3Kernel(Extent extent, F function) {
  const Index i = static_cast<Index>(blockIdx.x) * blockDim.x + threadIdx.x;
  const Index j = static_cast<Index>(blockIdx.y) * blockDim.y + threadIdx.y;
  if (i < extent.nx && j < extent.ny) function(i, j, static_cast<Index>(blockIdx.z));
}
}  // namespace detail

struct CudaExecutor {
  static constexpr Backend backend = Backend::Cuda;
  static constexpr int threadsPerBlock = 256;
  cudaStream_t stream = nullptr;

  template <class F>
  void parallelFor(Index count, const F& function) const {
    if (count <= 0) return;
    const Index blocks = (count + threadsPerBlock - 1) / threadsPerBlock;
    detail::parallelForKernel<<<static_cast<unsigned>(blocks), threadsPerBlock, 0, stream>>>(count, function);
    OCTO_CUDA_CHECK(cudaGetLastError());
  }
  // function(i, j, k) for every node of the extent: blocks of consecutive x (coalesced), a grid
  // row per z plane, so that no thread divides to find its coordinates. MinBlocksPerSm asks the
  // register allocator to leave room for that many resident blocks of 256 threads (2: 128
  // registers a thread, 3: 85, 4: 64): memory-bound kernels need the threads in flight.
  template <int MinBlocksPerSm = 1, class F>
  void parallelFor3(const Extent& extent, const F& function) const {
    if (extent.cellCount() <= 0) return;
    constexpr Index blockSize = detail::kBlock3;
    const Index x = extent.nx >= blockSize ? blockSize : (extent.nx + 31) / 32 * 32;
    Index y = blockSize / x;
    if (y > extent.ny) y = extent.ny;
    const dim3 block(static_cast<unsigned>(x), static_cast<unsigned>(y), 1);
    const Index blocksY = (extent.ny + y - 1) / y;
    if (blocksY > 65535 || extent.nz > 65535) throw Error("CUDA launch: the grid's y or z size exceeds 65535 blocks");
    const dim3 grid(static_cast<unsigned>((extent.nx + x - 1) / x), static_cast<unsigned>(blocksY),
                    static_cast<unsigned>(extent.nz));
    detail::parallelFor3Kernel<MinBlocksPerSm><<<grid, block, 0, stream>>>(extent, function);
    OCTO_CUDA_CHECK(cudaGetLastError());
  }
  void synchronize() const { OCTO_CUDA_CHECK(cudaStreamSynchronize(stream)); }
};

}  // namespace octoflow::exec
