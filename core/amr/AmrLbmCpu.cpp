// The octree LBM's kernels on the CPU (OpenMP): the reference the CUDA kernels are checked against.
#include "amr/AmrLbm.hpp"
#include "exec/cpu/CpuExecutor.hpp"

namespace octoflow::amr::detail {

void stepLevelCpu(lbm::LatticeKind lattice, AmrKernel kernel, const AmrLbmLevels& state,
                   const std::int32_t* levelBlocks, std::int64_t blockCount, int level, float timeWeight) {
  withAmrLattice(lattice, [&](auto kind) {
    using L = decltype(kind);
    const exec::CpuExecutor executor{};
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

void momentsCpu(lbm::LatticeKind lattice, const AmrLbmLevels& state, std::int64_t blockCount, float* out) {
  withAmrLattice(lattice, [&](auto kind) {
    using L = decltype(kind);
    const std::int64_t total = blockCount * state.pointCount();
    exec::CpuExecutor{}.parallelFor(total, AmrMoments<L>{state, total, out});
  });
}

}  // namespace octoflow::amr::detail
