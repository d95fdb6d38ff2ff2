#pragma once
// The uniform-grid LBM solver: owns the population arrays on the chosen backend and advances
// them. Knows nothing of files, VTK or Catalyst; hands out host arrays of its fields.
#include <memory>
#include <vector>

#include "common/Extent.hpp"
#include "exec/Backend.hpp"
#include "exec/Memory.hpp"
#include "lbm/Collision.hpp"
#include "lbm/FaceBoundaries.hpp"
#include "lbm/Lattice.hpp"

namespace octoflow::lbm {

struct UniformSolverConfig {
  LatticeKind lattice = LatticeKind::D2Q9;
  Extent extent;
  float tau = 0.8f;
  Vector3 acceleration;  // body force per unit mass, lattice units
  FaceBoundaries faces;
};

// Host copies of the macroscopic fields (pinned when the solver runs on CUDA). On the CPU
// backend the solver writes them in place: no copy at all.
struct HostFields {
  exec::Buffer<float> density;   // nodeCount values
  exec::Buffer<float> velocity;  // 3 * nodeCount values, xyz per node
};

namespace detail {
// The lattice- and backend-specific part, made by a factory in UniformEngineCpu.cpp /
// UniformEngineCuda.cu from one template.
class UniformEngine {
public:
  virtual ~UniformEngine() = default;
  virtual void initialize(const float* density, const float* velocity, float* populations) = 0;
  virtual void streamCollide(const float* source, float* destination) = 0;
  virtual void macroscopic(const float* populations, float* density, float* velocity) = 0;
  virtual void synchronize() = 0;
};
std::unique_ptr<UniformEngine> makeCpuEngine(const UniformSolverConfig& config);
std::unique_ptr<UniformEngine> makeCudaEngine(const UniformSolverConfig& config);
}  // namespace detail

class UniformSolver {
public:
  UniformSolver(const UniformSolverConfig& config, exec::Backend backend);
  ~UniformSolver();
  UniformSolver(const UniformSolver&) = delete;
  UniformSolver& operator=(const UniformSolver&) = delete;

  // Equilibrium populations for host arrays of density (nodeCount) and velocity (3 * nodeCount,
  // xyz per node); a null array means rho = 1 or u = 0. Resets the step counter.
  void initialize(const float* density = nullptr, const float* velocity = nullptr);
  void advance(Index steps);
  // Computes the requested fields of the current state into host memory and returns them.
  const HostFields& fetchFields(bool wantDensity, bool wantVelocity);
  // All populations (deviations f_q - w_q), structure-of-arrays, copied to the host.
  std::vector<float> populationsOnHost() const;

  Index step() const { return step_; }
  exec::Backend backend() const { return backend_; }
  const UniformSolverConfig& config() const { return config_; }
  Index nodeCount() const { return config_.extent.cellCount(); }
  int populationCount() const { return latticeQ(config_.lattice); }
  // Bytes of GPU (or host) memory the solver holds, for progress reports and errors.
  std::size_t workingBytes() const;

private:
  UniformSolverConfig config_;
  exec::Backend backend_;
  std::unique_ptr<detail::UniformEngine> engine_;
  exec::Buffer<float> current_;
  exec::Buffer<float> next_;
  exec::Buffer<float> deviceDensity_;   // CUDA only: fields computed on the device
  exec::Buffer<float> deviceVelocity_;  // before their copy to host_
  HostFields host_;
  Index step_ = 0;
};

}  // namespace octoflow::lbm
