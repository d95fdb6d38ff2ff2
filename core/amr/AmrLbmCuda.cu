// The octree LBM's kernels on CUDA: one thread a point.
#include "amr/AmrLbmLaunch.hpp"
#include "exec/cuda/CudaExecutor.cuh"

namespace octoflow::amr::detail {

namespace {

// The two streams of AmrKernel::Streams, Sorted and Whole, made once. Blocking streams: each waits for the work
// queued before on the default stream, and the default stream's next work waits for both. They do
// not wait for each other: join() makes each wait for the other's step before its next one (the
// next level's step reads what this one wrote).
struct SplitStreams {
  cudaStream_t inner = nullptr, shell = nullptr;
  cudaEvent_t innerDone = nullptr, shellDone = nullptr;
  SplitStreams() {
    OCTO_CUDA_CHECK(cudaStreamCreate(&inner));
    OCTO_CUDA_CHECK(cudaStreamCreate(&shell));
    OCTO_CUDA_CHECK(cudaEventCreateWithFlags(&innerDone, cudaEventDisableTiming));
    OCTO_CUDA_CHECK(cudaEventCreateWithFlags(&shellDone, cudaEventDisableTiming));
  }
  void join() const {
    OCTO_CUDA_CHECK(cudaEventRecord(innerDone, inner));
    OCTO_CUDA_CHECK(cudaEventRecord(shellDone, shell));
    OCTO_CUDA_CHECK(cudaStreamWaitEvent(inner, shellDone, 0));
    OCTO_CUDA_CHECK(cudaStreamWaitEvent(shell, innerDone, 0));
  }
};

}  // namespace

void stepLevelCuda(lbm::LatticeKind lattice, lbm::CollisionKind collision, AmrKernel kernel,
                  const AmrLbmLevels& state,
                   const std::int32_t* levelBlocks, std::int64_t blockCount, int level, float timeWeight,
                   const ShellLists& shells) {
  if (kernel == AmrKernel::Streams || kernel == AmrKernel::Sorted || kernel == AmrKernel::Whole) {
    static const SplitStreams streams;
    stepLevelOn(exec::CudaExecutor{streams.inner}, exec::CudaExecutor{streams.shell}, lattice, collision, kernel, state,
                levelBlocks, blockCount, level, timeWeight, shells);
    streams.join();
    return;
  }
  stepLevelOn(exec::CudaExecutor{}, exec::CudaExecutor{}, lattice, collision, kernel, state, levelBlocks, blockCount, level,
              timeWeight, shells);
}

// On the default stream: it waits for the level steps before on the two streams, and they wait for it.
void eddyCuda(lbm::LatticeKind lattice, const AmrLbmLevels& state, const std::int32_t* levelBlocks, std::int64_t blockCount,
              int level, float constant) {
  eddyOn(exec::CudaExecutor{}, lattice, state, levelBlocks, blockCount, level, constant);
}

void momentsCuda(lbm::LatticeKind lattice, const AmrLbmLevels& state, std::int64_t blockCount, float* out) {
  momentsOn(exec::CudaExecutor{}, lattice, state, blockCount, out);
}

void gatherCuda(const PointGather& gather, std::int64_t count) { gatherOn(exec::CudaExecutor{}, gather, count); }

void adoptPointsCuda(lbm::LatticeKind lattice, const AdoptArrays& arrays, std::int64_t count) {
  adoptPointsOn(exec::CudaExecutor{}, lattice, arrays, count);
}

void obstacleForceCuda(lbm::LatticeKind lattice, const AmrLbmLevels& state, const AmrObstacleLink* links,
                     std::int64_t count, double* force) {
  obstacleForceOn(exec::CudaExecutor{}, lattice, state, links, count, force);
}

void synchronizeCuda() { OCTO_CUDA_CHECK(cudaDeviceSynchronize()); }

}  // namespace octoflow::amr::detail
