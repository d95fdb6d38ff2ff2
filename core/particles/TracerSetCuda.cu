// The CUDA launches of TracerSet: the same per-tracer functors as the CPU, one thread a tracer.
#include "exec/cuda/CudaExecutor.cuh"
#include "particles/TracerSet.hpp"

namespace octoflow::particles::detail {

void advectTracersOnCuda(Index count, const AdvectTracers<VelocityFieldView>& advect) {
  exec::CudaExecutor{}.parallelForSpread(count, advect);
}
void advectTracersOnCuda(Index count, const AdvectTracers<BlockVelocityView>& advect) {
  exec::CudaExecutor{}.parallelForSpread(count, advect);
}
void gatherTracersOnCuda(Index count, const GatherTracers& gather) { exec::CudaExecutor{}.parallelFor(count, gather); }

}  // namespace octoflow::particles::detail
