#pragma once
// The uniform-grid LBM solver: owns the population arrays on the chosen backend and advances
// them. Knows nothing of files, VTK or Catalyst; hands out host arrays of its fields.
#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include "common/Extent.hpp"
#include "exec/Backend.hpp"
#include "exec/Memory.hpp"
#include "lbm/Collision.hpp"
#include "lbm/FaceBoundaries.hpp"
#include "lbm/Lattice.hpp"
#include "lbm/PopulationStorage.hpp"
#include "lbm/StreamCollide.hpp"

namespace octoflow::lbm {

enum class CollisionKind { Bgk, Trt, Mrt };
const char* collisionName(CollisionKind kind);

struct UniformSolverConfig {
  LatticeKind lattice = LatticeKind::D2Q9;
  CollisionKind collision = CollisionKind::Bgk;
  StorageKind storage = StorageKind::Fp32;
  Extent extent;
  float tau = 0.8f;
  float trtMagic = 3.0f / 16.0f;
  Les les;  // eddy viscosity model, for every collision kind
  Vector3 acceleration;  // body force per unit mass, lattice units
  FaceBoundaries faces;
  std::vector<std::uint8_t> solid;  // empty (no obstacles) or one entry per node, 1 = obstacle
};

// Host copies of the macroscopic fields (pinned when the solver runs on CUDA). On the CPU
// backend the solver writes them in place: no copy at all.
struct HostFields {
  exec::Buffer<float> density;   // nodeCount values
  exec::Buffer<float> velocity;  // 3 * nodeCount values, xyz per node
};

namespace detail {
// The lattice-, storage-, collision- and backend-specific part, made by a factory in
// UniformEngineCpu.cpp / UniformEngineCuda.cu from one template. Arrays are on the backend's
// working memory; populations are in the configured storage.
class UniformEngine {
public:
  virtual ~UniformEngine() = default;
  virtual void initialize(const float* density, const float* velocity, void* populations) = 0;
  virtual void streamCollide(const void* source, void* destination) = 0;
  virtual void macroscopic(const void* populations, float* density, float* velocity) = 0;
  virtual void obstacleForce(const void* populations, const ObstacleLink* links, Index count, double* force) = 0;
  virtual void synchronize() = 0;
};
std::unique_ptr<UniformEngine> makeCpuEngine(const UniformSolverConfig& config, const std::uint8_t* solid);
std::unique_ptr<UniformEngine> makeCudaEngine(const UniformSolverConfig& config, const std::uint8_t* solid);
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
  // All populations (deviations f_q - w_q) as FP32, structure-of-arrays, copied to the host.
  std::vector<float> populationsOnHost() const;
  // Force on all obstacles in the last step (momentum exchange), lattice units, summed in a
  // fixed order in double: the same on every backend and thread count.
  std::array<double, 3> obstacleForce();
  Index obstacleLinkNodes() const { return static_cast<Index>(obstacleLinks_.size()); }

  Index step() const { return step_; }
  exec::Backend backend() const { return backend_; }
  const UniformSolverConfig& config() const { return config_; }
  Index nodeCount() const { return config_.extent.cellCount(); }
  int populationCount() const { return latticeQ(config_.lattice); }
  // Bytes of GPU (or host) memory the solver holds.
  std::size_t workingBytes() const;

private:
  UniformSolverConfig config_;
  exec::Backend backend_;
  exec::Buffer<std::uint8_t> solid_;       // working memory copy of config_.solid
  std::unique_ptr<detail::UniformEngine> engine_;
  exec::Buffer<unsigned char> current_;    // populations, storage format
  exec::Buffer<unsigned char> next_;
  exec::Buffer<float> deviceDensity_;      // CUDA only: fields computed on the device
  exec::Buffer<float> deviceVelocity_;     // before their copy to host_
  HostFields host_;
  std::vector<ObstacleLink> obstacleLinks_;
  exec::Buffer<ObstacleLink> workingLinks_;
  exec::Buffer<double> workingForces_;
  Index step_ = 0;
};

// The fluid nodes next to obstacle nodes and their links into the obstacles.
std::vector<ObstacleLink> findObstacleLinks(const UniformSolverConfig& config);

}  // namespace octoflow::lbm
