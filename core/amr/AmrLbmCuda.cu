// The octree LBM's kernels on CUDA: one thread a point.
#include "amr/AmrLbmLaunch.hpp"
#include "exec/cuda/CudaExecutor.cuh"

namespace octoflow::amr::detail {

void stepLevelCuda(lbm::LatticeKind lattice, AmrKernel kernel, const AmrLbmLevels& state,
                   const std::int32_t* levelBlocks, std::int64_t blockCount, int level, float timeWeight) {
  stepLevelOn(exec::CudaExecutor{}, lattice, kernel, state, levelBlocks, blockCount, level, timeWeight);
}

void momentsCuda(lbm::LatticeKind lattice, const AmrLbmLevels& state, std::int64_t blockCount, float* out) {
  momentsOn(exec::CudaExecutor{}, lattice, state, blockCount, out);
}

void gatherCuda(const PointGather& gather, std::int64_t count) { gatherOn(exec::CudaExecutor{}, gather, count); }

void synchronizeCuda() { OCTO_CUDA_CHECK(cudaDeviceSynchronize()); }

}  // namespace octoflow::amr::detail
