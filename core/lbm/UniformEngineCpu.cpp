#include "exec/cpu/CpuExecutor.hpp"
#include "lbm/UniformEngine.hpp"

namespace octoflow::lbm::detail {

std::unique_ptr<UniformEngine> makeCpuEngine(const UniformSolverConfig& config) {
  return makeEngine<exec::CpuExecutor>(config);
}

}  // namespace octoflow::lbm::detail
