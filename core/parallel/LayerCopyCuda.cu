// The CUDA execution of halo layer copies (the same functor as on the CPU).
#include "exec/cuda/CudaExecutor.cuh"
#include "parallel/LayerCopy.hpp"

namespace octoflow::parallel {

void copyLayerCuda(const LayerCopy& copy, void* stream) {
  exec::CudaExecutor{static_cast<cudaStream_t>(stream)}.parallelFor3(copy.box, copy);
}

void copyIndexedCuda(const IndexedCopy& copy, Index count) { exec::CudaExecutor{}.parallelFor(count, copy); }

}  // namespace octoflow::parallel
