#pragma once
// The one template behind both executions of the uniform solver: included by
// UniformEngineCpu.cpp with CpuExecutor and by UniformEngineCuda.cu with CudaExecutor.
#include "lbm/StreamCollide.hpp"
#include "lbm/UniformSolver.hpp"

namespace octoflow::lbm::detail {

template <class L, class Executor>
class UniformEngineFor final : public UniformEngine {
public:
  explicit UniformEngineFor(const UniformSolverConfig& config)
      : grid_{config.extent, config.faces, config.acceleration}, collision_{config.tau} {}

  void initialize(const float* density, const float* velocity, float* populations) override {
    executor_.parallelFor(nodeCount(), InitializeEquilibrium<L>{nodeCount(), density, velocity, populations});
  }
  void streamCollide(const float* source, float* destination) override {
    executor_.parallelFor(nodeCount(), StreamCollide<L, Bgk>{grid_, collision_, source, destination});
  }
  void macroscopic(const float* populations, float* density, float* velocity) override {
    executor_.parallelFor(nodeCount(), Macroscopic<L>{grid_, populations, density, velocity});
  }
  void synchronize() override { executor_.synchronize(); }

private:
  Index nodeCount() const { return grid_.extent.cellCount(); }
  GridView grid_;
  Bgk collision_;
  Executor executor_;
};

template <class Executor>
std::unique_ptr<UniformEngine> makeEngine(const UniformSolverConfig& config) {
  return withLattice(config.lattice, [&](auto lattice) -> std::unique_ptr<UniformEngine> {
    return std::make_unique<UniformEngineFor<decltype(lattice), Executor>>(config);
  });
}

}  // namespace octoflow::lbm::detail
