// The CUDA execution of halo layer copies (the same functor as on the CPU).
#include "exec/cuda/CudaExecutor.cuh"
#include "parallel/LayerCopy.hpp"

namespace octoflow::parallel {

void copyLayerCuda(const LayerCopy& copy) { exec::CudaExecutor{}.parallelFor3(copy.box, copy); }

}  // namespace octoflow::parallel
