// The octree LBM's kernels on the CPU (OpenMP): the reference the CUDA kernels are checked against.
#include "amr/AmrLbmLaunch.hpp"
#include "exec/cpu/CpuExecutor.hpp"

namespace octoflow::amr::detail {

void stepLevelCpu(lbm::LatticeKind lattice, lbm::CollisionKind collision, AmrKernel kernel,
                  const AmrLbmLevels& state,
                  const std::int32_t* levelBlocks, std::int64_t blockCount, int level, float timeWeight,
                  const ShellLists& shells) {
  stepLevelOn(exec::CpuExecutor{}, exec::CpuExecutor{}, lattice, collision, kernel, state, levelBlocks, blockCount, level, timeWeight,
              shells);
}

void eddyCpu(lbm::LatticeKind lattice, const AmrLbmLevels& state, const std::int32_t* levelBlocks, std::int64_t blockCount,
             int level, float constant) {
  eddyOn(exec::CpuExecutor{}, lattice, state, levelBlocks, blockCount, level, constant);
}

void momentsCpu(lbm::LatticeKind lattice, const AmrLbmLevels& state, std::int64_t blockCount, float* out) {
  momentsOn(exec::CpuExecutor{}, lattice, state, blockCount, out);
}

void gatherCpu(const PointGather& gather, std::int64_t count) { gatherOn(exec::CpuExecutor{}, gather, count); }

void adoptPointsCpu(lbm::LatticeKind lattice, const AdoptArrays& arrays, std::int64_t count) {
  adoptPointsOn(exec::CpuExecutor{}, lattice, arrays, count);
}

void obstacleForceCpu(lbm::LatticeKind lattice, const AmrLbmLevels& state, const AmrObstacleLink* links,
                     std::int64_t count, double* force) {
  obstacleForceOn(exec::CpuExecutor{}, lattice, state, links, count, force);
}

}  // namespace octoflow::amr::detail
