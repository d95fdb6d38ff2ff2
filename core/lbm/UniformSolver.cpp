#include "lbm/UniformSolver.hpp"

#include "common/Error.hpp"

namespace octoflow::lbm {

namespace detail {
#if !OCTOFLOW_HAVE_CUDA
std::unique_ptr<UniformEngine> makeCudaEngine(const UniformSolverConfig&) {
  throw Error("the CUDA backend is not compiled into this build");
}
#endif
}  // namespace detail

UniformSolver::UniformSolver(const UniformSolverConfig& config, exec::Backend backend)
    : config_(config), backend_(backend) {
  if (config_.tau <= 0.5f) throw Error("UniformSolver: tau must exceed 1/2 (viscosity > 0)");
  engine_ = backend_ == exec::Backend::Cuda ? detail::makeCudaEngine(config_) : detail::makeCpuEngine(config_);
  const std::size_t populationValues = static_cast<std::size_t>(populationCount()) * nodeCount();
  const exec::MemorySpace working = exec::workingSpace(backend_);
  current_ = exec::Buffer<float>(working, populationValues);
  next_ = exec::Buffer<float>(working, populationValues);
  initialize();
}

UniformSolver::~UniformSolver() = default;

std::size_t UniformSolver::workingBytes() const {
  return current_.bytes() + next_.bytes() + deviceDensity_.bytes() + deviceVelocity_.bytes();
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
  std::vector<float> values(current_.size());
  current_.copyTo(values.data(), values.size());
  return values;
}

}  // namespace octoflow::lbm
