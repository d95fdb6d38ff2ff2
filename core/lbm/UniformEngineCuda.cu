#include "exec/cuda/CudaExecutor.cuh"
#include "lbm/UniformEngine.hpp"

namespace octoflow::lbm::detail {

std::unique_ptr<UniformEngine> makeCudaEngine(const UniformSolverConfig& config, const std::uint8_t* solid) {
  return makeEngine<exec::CudaExecutor>(config, solid);
}

}  // namespace octoflow::lbm::detail
