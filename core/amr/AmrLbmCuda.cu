// The octree LBM's kernels on CUDA: one thread a point.
#include "amr/AmrLbm.hpp"
#include "exec/cuda/CudaExecutor.cuh"

namespace octoflow::amr::detail {

void stepLevelCuda(lbm::LatticeKind lattice, AmrKernel kernel, const AmrLbmLevels& state,
                   const std::int32_t* levelBlocks, std::int64_t blockCount, int level, float timeWeight) {
  withAmrLattice(lattice, [&](auto kind) {
    using L = decltype(kind);
    const exec::CudaExecutor executor{};
    const AmrLevelStep<L> step{state, levelBlocks, level, timeWeight};
    if (kernel == AmrKernel::Naive) {
      executor.parallelFor(blockCount * state.pointCount(), step);
      return;
    }
    const std::int64_t inner = static_cast<std::int64_t>(state.blockNodes - 2) * (state.blockNodes - 2) *
                               (state.blockNodes - 2);
    executor.parallelFor(blockCount * inner, AmrInnerStep<L>{step});
    executor.parallelFor(blockCount * (state.pointCount() - inner), AmrShellStep<L>{step});
  });
}

void momentsCuda(lbm::LatticeKind lattice, const AmrLbmLevels& state, std::int64_t blockCount, float* out) {
  withAmrLattice(lattice, [&](auto kind) {
    using L = decltype(kind);
    const std::int64_t total = blockCount * state.pointCount();
    exec::CudaExecutor{}.parallelFor(total, AmrMoments<L>{state, total, out});
  });
}

void synchronizeCuda() { OCTO_CUDA_CHECK(cudaDeviceSynchronize()); }

}  // namespace octoflow::amr::detail
