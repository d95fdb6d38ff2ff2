#pragma once
// The octree LBM's launches, written once for any executor (exec::CpuExecutor in AmrLbmCpu.cpp,
// exec::CudaExecutor in AmrLbmCuda.cu).
#include "amr/AmrAdopt.hpp"
#include "amr/AmrLbm.hpp"

namespace octoflow::amr::detail {

// `shellExecutor` launches the shells of the split kernels (a second stream on CUDA: the inner
// points and the shells of a level read one array and write another, so they may run at once).
// With the sorted shell, the same-level points follow the inner points on `executor`, the linked
// and interface points (fewer, each longer) run on `shellExecutor` beside them. With whole blocks,
// every block's points whose pulls stay on the level come first on `executor` (in place of the
// inner points), and the shell points left run as sorted.
template <class Executor>
void stepLevelOn(const Executor& executor, const Executor& shellExecutor, lbm::LatticeKind lattice,
                 lbm::CollisionKind collision, AmrKernel kernel, const AmrLbmLevels& state,
                 const std::int32_t* levelBlocks, std::int64_t blockCount, int level, float timeWeight,
                 const ShellLists& shells) {
  withAmrModel(lattice, collision, [&](auto kind, auto collisionKind) {
    using L = decltype(kind);
    using C = decltype(collisionKind);
    // The forms of the Table 4 comparison (naive, split, streams, classes) are built for BGK only
    // (AmrLbm refuses them with another collision).
    constexpr bool everyForm = std::is_same_v<C, lbm::Bgk>;
    const AmrLevelStep<L, C> step{state, levelBlocks, level, timeWeight};
    if constexpr (everyForm) {
      if (kernel == AmrKernel::Naive) {
        executor.parallelFor(blockCount * state.pointCount(), step);
        return;
      }
    }
    const std::int64_t inner =
        static_cast<std::int64_t>(state.blockNodes - 2) * (state.blockNodes - 2) * (state.blockNodes - 2);
    const ShellPoint* linked = shells.points + shells.count[0];
    const ShellPoint* interfacePoints = linked + shells.count[1];
    const std::int64_t interfaceCount = shells.count[2];
    // The interface points' coarse taps summed, at the level's first sub-step (the coarser level
    // has just stepped; AmrLbm::stepLevel swapped the sums of the step before into `old`): on
    // `tapsExecutor`, before the launch that reads them.
    const auto sumTaps = [&](const Executor& tapsExecutor) {
      if (!shells.sumTaps || interfaceCount == 0) return;
      if (shells.oldSumsKept)
        tapsExecutor.parallelFor(interfaceCount,
                                 AmrCoarseTapsStep<L, C, false>{step, interfacePoints, interfaceCount, shells.tapSums});
      else
        tapsExecutor.parallelFor(interfaceCount,
                                 AmrCoarseTapsStep<L, C, true>{step, interfacePoints, interfaceCount, shells.tapSums});
    };
    // With whole blocks, the interface points step in the block kernel where AmrLbm made their map
    // (ShellLists::interfaceMapOf: BGK only, AmrWholeBlockStep::kStepsInterfacePoints).
    const bool interfacesInBlocks = kernel == AmrKernel::Whole && shells.interfaceMapOf != nullptr;
    if (interfacesInBlocks) sumTaps(executor);
    if (kernel == AmrKernel::Whole)
      executor.parallelFor(blockCount * state.pointCount(), AmrWholeBlockStep<L, C>{step, shells});
    else
      executor.parallelFor(blockCount * inner, AmrInnerStep<L, C>{step});
    if (kernel == AmrKernel::Sorted || kernel == AmrKernel::Whole) {
      executor.parallelFor(shells.count[0], AmrShellKindStep<L, C, ShellKind::SameLevel>{step, shells.points, {}});
      shellExecutor.parallelFor(shells.finer.count, AmrFinerSourceStep<L, C>{step, shells.finer});
      shellExecutor.parallelFor(shells.count[1], AmrShellKindStep<L, C, ShellKind::Linked>{step, linked, shells.finer});
      if (interfacesInBlocks) return;
      sumTaps(shellExecutor);
      shellExecutor.parallelFor(interfaceCount, AmrInterfaceStep<L, C>{step, interfacePoints, interfaceCount, shells.tapSums});
      return;
    }
    if constexpr (everyForm) {
      if (kernel != AmrKernel::Classes) {
        shellExecutor.parallelFor(blockCount * (state.pointCount() - inner), AmrShellStep<L, C>{step});
        return;
      }
      AmrShellClassesStep<L, C> classes{step};
      int slot = 0;
      forEachShellClass([&](auto gi, auto gj, auto gk) {
        using Class = AmrShellClassStep<L, C, decltype(gi)::value, decltype(gj)::value, decltype(gk)::value>;
        classes.firstIndex[slot + 1] = classes.firstIndex[slot] + blockCount * Class::pointsPerBlock(state.blockNodes);
        ++slot;
      });
      shellExecutor.parallelFor(classes.firstIndex[26], classes);
    }
  });
}

// The CSM model's part of the relaxation time of a level's points (AmrEddyStep).
template <class Executor>
void eddyOn(const Executor& executor, lbm::LatticeKind lattice, const AmrLbmLevels& state, const std::int32_t* levelBlocks,
            std::int64_t blockCount, int level, float constant) {
  withAmrLattice(lattice, [&](auto kind) {
    using L = decltype(kind);
    executor.parallelFor(blockCount * state.pointCount(), AmrEddyStep<L>{state, levelBlocks, level, constant});
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

// Points picked out of the moments (density, then velocity xyz a point): output n takes point
// source[n], for a grid sampled from the blocks.
struct PointGather {
  const float* moments = nullptr;
  std::int64_t totalPoints = 0;
  const std::int64_t* source = nullptr;
  float* density = nullptr;
  float* velocity = nullptr;

  OCTO_HD void operator()(std::int64_t n) const {
    const std::int64_t point = source[n];
    density[n] = moments[point];
    for (int c = 0; c < 3; ++c) velocity[3 * n + c] = moments[totalPoints + 3 * point + c];
  }
};

template <class Executor>
void obstacleForceOn(const Executor& executor, lbm::LatticeKind lattice, const AmrLbmLevels& state,
                     const AmrObstacleLink* links, std::int64_t count, double* force) {
  withAmrLattice(lattice, [&](auto kind) {
    using L = decltype(kind);
    executor.parallelFor(count, AmrObstacleForce<L>{state, links, force});
  });
}

template <class Executor>
void adoptPointsOn(const Executor& executor, lbm::LatticeKind lattice, const AdoptArrays& arrays, std::int64_t count) {
  withAmrLattice(lattice, [&](auto kind) {
    using L = decltype(kind);
    executor.parallelFor(count, AdoptPoints<L>{arrays});
  });
}

template <class Executor>
void gatherOn(const Executor& executor, const PointGather& gather, std::int64_t count) {
  executor.parallelFor(count, gather);
}

}  // namespace octoflow::amr::detail
