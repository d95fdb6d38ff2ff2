#pragma once
// The one template behind both executions of the uniform solver: included by
// UniformEngineCpu.cpp with CpuExecutor and by UniformEngineCuda.cu with CudaExecutor.
#include "lbm/Mrt.hpp"
#include "lbm/StreamCollide.hpp"
#include "lbm/UniformSolver.hpp"

namespace octoflow::lbm::detail {

template <class L, class S, class Collision, class Executor>
class UniformEngineFor final : public UniformEngine {
public:
  using Value = typename S::Value;

  UniformEngineFor(const UniformSolverConfig& config, const Collision& collision, const std::uint8_t* solid)
      : grid_{config.extent, config.faces, config.acceleration, solid}, collision_(collision) {}

  void initialize(const float* density, const float* velocity, void* populations) override {
    executor_.parallelFor(nodeCount(),
                          InitializeEquilibrium<L, S>{nodeCount(), density, velocity, static_cast<Value*>(populations)});
  }
  void streamCollide(const void* source, void* destination) override {
    executor_.parallelFor(nodeCount(), StreamCollide<L, S, Collision>{grid_, collision_, static_cast<const Value*>(source),
                                                                      static_cast<Value*>(destination)});
  }
  void macroscopic(const void* populations, float* density, float* velocity) override {
    executor_.parallelFor(nodeCount(), Macroscopic<L, S>{grid_, static_cast<const Value*>(populations), density, velocity});
  }
  void obstacleForce(const void* populations, const ObstacleLink* links, Index count, double* force) override {
    executor_.parallelFor(count, ObstacleForce<L, S>{links, static_cast<const Value*>(populations), nodeCount(), force});
  }
  void synchronize() override { executor_.synchronize(); }

private:
  Index nodeCount() const { return grid_.extent.cellCount(); }
  GridView grid_;
  Collision collision_;
  Executor executor_;
};

template <class Executor>
std::unique_ptr<UniformEngine> makeEngine(const UniformSolverConfig& config, const std::uint8_t* solid) {
  return withLattice(config.lattice, [&](auto lattice) {
    return withStorage(config.storage, [&](auto storage) -> std::unique_ptr<UniformEngine> {
      using L = decltype(lattice);
      using S = decltype(storage);
      if (config.collision == CollisionKind::Mrt) {
        Mrt mrt = Mrt::forLattice<L>(config.tau);
        mrt.les = config.les;
        return std::make_unique<UniformEngineFor<L, S, Mrt, Executor>>(config, mrt, solid);
      }
      if (config.collision == CollisionKind::Trt)
        return std::make_unique<UniformEngineFor<L, S, Trt, Executor>>(config, Trt{config.tau, config.trtMagic, config.les},
                                                                        solid);
      return std::make_unique<UniformEngineFor<L, S, Bgk, Executor>>(config, Bgk{config.tau, config.les}, solid);
    });
  });
}

}  // namespace octoflow::lbm::detail
