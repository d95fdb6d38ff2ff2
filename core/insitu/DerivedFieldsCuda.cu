// The CUDA launch of the derived fields: the same per-node functor as the CPU.
#include "exec/cuda/CudaExecutor.cuh"
#include "insitu/DerivedFields.hpp"

namespace octoflow::insitu::detail {

void computeSpeedOnCuda(Index nodes, const SpeedOfVelocity& speed) { exec::CudaExecutor{}.parallelFor(nodes, speed); }

}  // namespace octoflow::insitu::detail
