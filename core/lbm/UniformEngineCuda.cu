#include "exec/cuda/CudaExecutor.cuh"
#include "lbm/UniformEngine.hpp"

namespace octoflow::lbm::detail {

std::unique_ptr<UniformEngine> makeCudaEngine(const UniformSolverConfig& config) {
  return makeEngine<exec::CudaExecutor>(config);
}

}  // namespace octoflow::lbm::detail
