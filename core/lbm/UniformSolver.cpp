#include "lbm/UniformSolver.hpp"

#include "common/Error.hpp"

namespace octoflow::lbm {

namespace detail {
#if !OCTOFLOW_HAVE_CUDA
std::unique_ptr<UniformEngine> makeCudaEngine(const UniformSolverConfig&, const std::uint8_t*) {
  throw Error("the CUDA backend is not compiled into this build");
}
#endif
}  // namespace detail

const char* collisionName(CollisionKind kind) {
  switch (kind) {
    case CollisionKind::Trt: return "trt";
    case CollisionKind::Mrt: return "mrt";
    case CollisionKind::Bgk: break;
  }
  return "bgk";
}

std::vector<ObstacleLink> findObstacleLinks(const UniformSolverConfig& config) {
  std::vector<ObstacleLink> links;
  if (config.solid.empty()) return links;
  const Extent& e = config.extent;
  withLattice(config.lattice, [&](auto lattice) {
    using L = decltype(lattice);
    for (Index node = 0; node < e.cellCount(); ++node) {
      if (config.solid[node]) continue;
      Index i, j, k;
      e.coordinates(node, i, j, k);
      const Index position[3] = {i, j, k};
      std::uint32_t mask = 0;
      for (int p = 1; p < L::Q; ++p) {
        Index neighbour[3];
        bool inside = true;
        for (int axis = 0; axis < 3; ++axis) {
          neighbour[axis] = position[axis] + L::c(p, axis);
          const Index size = e.size(axis);
          if (neighbour[axis] >= 0 && neighbour[axis] < size) continue;
          if (!config.faces.periodic(axis)) inside = false;
          neighbour[axis] = (neighbour[axis] + size) % size;
        }
        if (inside && config.solid[e.linear(neighbour[0], neighbour[1], neighbour[2])]) mask |= 1u << p;
      }
      if (mask) links.push_back(ObstacleLink{node, mask});
    }
  });
  return links;
}

UniformSolver::UniformSolver(const UniformSolverConfig& config, exec::Backend backend)
    : config_(config), backend_(backend) {
  if (config_.tau <= 0.5f) throw Error("UniformSolver: tau must exceed 1/2 (viscosity > 0)");
  const std::size_t n = static_cast<std::size_t>(nodeCount());
  if (!config_.solid.empty() && config_.solid.size() != n)
    throw Error("UniformSolver: the solid mask has " + std::to_string(config_.solid.size()) + " entries for " +
                std::to_string(n) + " nodes");
  const exec::MemorySpace working = exec::workingSpace(backend_);
  if (!config_.solid.empty()) {
    solid_ = exec::Buffer<std::uint8_t>(working, n);
    solid_.copyFrom(config_.solid.data(), n);
    obstacleLinks_ = findObstacleLinks(config_);
    workingLinks_ = exec::Buffer<ObstacleLink>(working, obstacleLinks_.size());
    workingLinks_.copyFrom(obstacleLinks_.data(), obstacleLinks_.size());
    workingForces_ = exec::Buffer<double>(working, 3 * obstacleLinks_.size());
  }
  engine_ = backend_ == exec::Backend::Cuda ? detail::makeCudaEngine(config_, solid_.data())
                                            : detail::makeCpuEngine(config_, solid_.data());
  const std::size_t populationBytes = n * populationCount() * storageBytes(config_.storage);
  current_ = exec::Buffer<unsigned char>(working, populationBytes);
  next_ = exec::Buffer<unsigned char>(working, populationBytes);
  // Obstacle nodes are never written by the update: give both arrays defined contents.
  current_.setZero();
  next_.setZero();
  initialize();
}

UniformSolver::~UniformSolver() = default;

std::size_t UniformSolver::workingBytes() const {
  return current_.bytes() + next_.bytes() + deviceDensity_.bytes() + deviceVelocity_.bytes() + solid_.bytes() +
         workingLinks_.bytes() + workingForces_.bytes();
}

void UniformSolver::initialize(const float* density, const float* velocity) {
  const std::size_t n = static_cast<std::size_t>(nodeCount());
  if (backend_ == exec::Backend::Cpu) {
    engine_->initialize(density, velocity, current_.data());
  } else {
    // Stage the host arrays on the device so the one initialisation functor runs there too.
    exec::Buffer<float> densityOnDevice, velocityOnDevice;
    if (density) {
      densityOnDevice = exec::Buffer<float>(exec::MemorySpace::Device, n);
      densityOnDevice.copyFrom(density, n);
    }
    if (velocity) {
      velocityOnDevice = exec::Buffer<float>(exec::MemorySpace::Device, 3 * n);
      velocityOnDevice.copyFrom(velocity, 3 * n);
    }
    engine_->initialize(densityOnDevice.data(), velocityOnDevice.data(), current_.data());
    engine_->synchronize();
  }
  step_ = 0;
}

void UniformSolver::advance(Index steps) {
  for (Index s = 0; s < steps; ++s) {
    engine_->streamCollide(current_.data(), next_.data());
    current_.swap(next_);
    ++step_;
  }
  engine_->synchronize();
}

const HostFields& UniformSolver::fetchFields(bool wantDensity, bool wantVelocity) {
  const std::size_t n = static_cast<std::size_t>(nodeCount());
  const exec::MemorySpace staging = exec::stagingSpace(backend_);
  if (wantDensity && host_.density.size() != n) host_.density = exec::Buffer<float>(staging, n);
  if (wantVelocity && host_.velocity.size() != 3 * n) host_.velocity = exec::Buffer<float>(staging, 3 * n);

  if (backend_ == exec::Backend::Cpu) {
    engine_->macroscopic(current_.data(), wantDensity ? host_.density.data() : nullptr,
                         wantVelocity ? host_.velocity.data() : nullptr);
    return host_;
  }
  if (wantDensity && deviceDensity_.size() != n) deviceDensity_ = exec::Buffer<float>(exec::MemorySpace::Device, n);
  if (wantVelocity && deviceVelocity_.size() != 3 * n)
    deviceVelocity_ = exec::Buffer<float>(exec::MemorySpace::Device, 3 * n);
  engine_->macroscopic(current_.data(), wantDensity ? deviceDensity_.data() : nullptr,
                       wantVelocity ? deviceVelocity_.data() : nullptr);
  engine_->synchronize();
  if (wantDensity) deviceDensity_.copyTo(host_.density.data(), n);
  if (wantVelocity) deviceVelocity_.copyTo(host_.velocity.data(), 3 * n);
  return host_;
}

std::vector<float> UniformSolver::populationsOnHost() const {
  std::vector<unsigned char> raw(current_.size());
  current_.copyTo(raw.data(), raw.size());
  const std::size_t values = static_cast<std::size_t>(nodeCount()) * populationCount();
  std::vector<float> result(values);
  withStorage(config_.storage, [&](auto storage) {
    using S = decltype(storage);
    const auto* stored = reinterpret_cast<const typename S::Value*>(raw.data());
    for (std::size_t i = 0; i < values; ++i) result[i] = S::load(stored[i]);
  });
  return result;
}

std::array<double, 3> UniformSolver::obstacleForce() {
  std::array<double, 3> total{0.0, 0.0, 0.0};
  const Index count = static_cast<Index>(obstacleLinks_.size());
  if (count == 0) return total;
  engine_->obstacleForce(current_.data(), workingLinks_.data(), count, workingForces_.data());
  engine_->synchronize();
  std::vector<double> perNode(3 * obstacleLinks_.size());
  workingForces_.copyTo(perNode.data(), perNode.size());
  for (Index entry = 0; entry < count; ++entry)
    for (int axis = 0; axis < 3; ++axis) total[axis] += perNode[3 * entry + axis];
  return total;
}

}  // namespace octoflow::lbm
