#pragma once
// The octree LBM's launches, written once for any executor (exec::CpuExecutor in AmrLbmCpu.cpp,
// exec::CudaExecutor in AmrLbmCuda.cu).
#include "amr/AmrLbm.hpp"

namespace octoflow::amr::detail {

template <class Executor>
void stepLevelOn(const Executor& executor, lbm::LatticeKind lattice, AmrKernel kernel, const AmrLbmLevels& state,
                 const std::int32_t* levelBlocks, std::int64_t blockCount, int level, float timeWeight) {
  withAmrLattice(lattice, [&](auto kind) {
    using L = decltype(kind);
    const AmrLevelStep<L> step{state, levelBlocks, level, timeWeight};
    if (kernel == AmrKernel::Naive) {
      executor.parallelFor(blockCount * state.pointCount(), step);
      return;
    }
    const std::int64_t inner =
        static_cast<std::int64_t>(state.blockNodes - 2) * (state.blockNodes - 2) * (state.blockNodes - 2);
    executor.parallelFor(blockCount * inner, AmrInnerStep<L>{step});
    executor.parallelFor(blockCount * (state.pointCount() - inner), AmrShellStep<L>{step});
  });
}

template <class Executor>
void momentsOn(const Executor& executor, lbm::LatticeKind lattice, const AmrLbmLevels& state, std::int64_t blockCount,
               float* out) {
  withAmrLattice(lattice, [&](auto kind) {
    using L = decltype(kind);
    const std::int64_t total = blockCount * state.pointCount();
    executor.parallelFor(total, AmrMoments<L>{state, total, out});
  });
}

}  // namespace octoflow::amr::detail
