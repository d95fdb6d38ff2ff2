#include "insitu/DerivedFields.hpp"

#include "exec/cpu/CpuExecutor.hpp"

namespace octoflow::insitu {

void computeSpeed(exec::Backend backend, const float* velocity, Index nodes, float* speed) {
  const SpeedOfVelocity function{velocity, speed};
#if OCTOFLOW_HAVE_CUDA
  if (backend == exec::Backend::Cuda) return detail::computeSpeedOnCuda(nodes, function);
#endif
  (void)backend;
  exec::CpuExecutor{}.parallelFor(nodes, function);
}

}  // namespace octoflow::insitu
