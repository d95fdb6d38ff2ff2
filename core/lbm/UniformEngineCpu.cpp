#include "exec/cpu/CpuExecutor.hpp"
#include "lbm/UniformEngine.hpp"

namespace octoflow::lbm::detail {

std::unique_ptr<UniformEngine> makeCpuEngine(const UniformSolverConfig& config, const std::uint8_t* solid) {
  return makeEngine<exec::CpuExecutor>(config, solid);
}

}  // namespace octoflow::lbm::detail
