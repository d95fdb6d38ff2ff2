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
  void synchronize() const { OCTO_CUDA_CHECK(cudaStreamSynchronize(stream)); }
};

}  // namespace octoflow::exec
