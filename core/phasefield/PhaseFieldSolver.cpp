#include "phasefield/PhaseFieldSolver.hpp"

#include <cmath>
#include <vector>

#include "phasefield/PhaseFieldSweep.hpp"

namespace octoflow::phasefield {

namespace {

// The backend's execution of a sweep and a map (CUDA calls return once the work is queued).
void sweep(exec::Backend backend, const SweepArguments& arguments) {
#if OCTOFLOW_HAVE_CUDA
  if (backend == exec::Backend::Cuda) return phaseFieldSweepCuda(arguments);
#endif
  (void)backend;
  phaseFieldSweepCpu(arguments);
}

void map(exec::Backend backend, const AffineMap& affine, Index count) {
#if OCTOFLOW_HAVE_CUDA
  if (backend == exec::Backend::Cuda) return affineMapCuda(affine, count);
#endif
  (void)backend;
  affineMapCpu(affine, count);
}

void finish(exec::Backend backend) {
#if OCTOFLOW_HAVE_CUDA
  if (backend == exec::Backend::Cuda) synchronizeCuda();
#endif
  (void)backend;
}

}  // namespace

PhaseFieldSolver::PhaseFieldSolver(const PhaseFieldConfig& config, exec::Backend backend)
    : config_(config), backend_(backend) {
  if (!config_.isPiece) {
    config_.owned = NodeBox::of(config_.extent);
    config_.whole = config_.extent;
    config_.origin = {0, 0, 0};
  }
  const auto count = static_cast<std::size_t>(config_.extent.cellCount());
  for (int n = 0; n < 2; ++n) {
    phi_[n] = exec::Buffer<float>(exec::workingSpace(backend_), count);
    u_[n] = exec::Buffer<float>(exec::workingSpace(backend_), count);
  }
  initialize();
}

void PhaseFieldSolver::initialize() {
  const Extent& e = config_.extent;
  std::vector<float> phi(static_cast<std::size_t>(e.cellCount())), u(phi.size(), config_.initialU);
  const auto& c = config_.nucleusCentre;
#pragma omp parallel for collapse(2) schedule(static)
  for (Index k = 0; k < e.nz; ++k)
    for (Index j = 0; j < e.ny; ++j)
      for (Index i = 0; i < e.nx; ++i) {
        const double x = static_cast<double>(config_.origin[0] + i) - c[0];
        const double y = static_cast<double>(config_.origin[1] + j) - c[1];
        const double z = config_.dimensions == 3 ? static_cast<double>(config_.origin[2] + k) - c[2] : 0.0;
        const double r = std::sqrt(x * x + y * y + z * z);
        const double solid = 0.5 * (1.0 - std::tanh(config_.interfaceSharpness * (r - config_.nucleusRadius)));
        phi[static_cast<std::size_t>(e.linear(i, j, k))] =
            static_cast<float>(config_.liquidPhi + (config_.solidPhi - config_.liquidPhi) * solid);
      }
  current_ = 0;
  phi_[0].copyFrom(phi.data(), phi.size());
  u_[0].copyFrom(u.data(), u.size());
  step_ = 0;
  if (haloExchange_) haloExchange_(phi_[0].data(), u_[0].data());
}

void PhaseFieldSolver::advance(Index steps) {
  SweepArguments a;
  a.extent = config_.extent;
  a.whole = config_.whole;
  for (int axis = 0; axis < 3; ++axis) {
    a.periodic[axis] = config_.periodic[static_cast<std::size_t>(axis)];
    a.origin[axis] = config_.origin[static_cast<std::size_t>(axis)];
  }
  a.box = config_.owned;
  a.dimensions = config_.dimensions;
  a.model = config_.model;
  a.kobayashi = config_.kobayashi;
  a.karmaRappel = config_.karmaRappel;
  for (Index n = 0; n < steps; ++n) {
    a.step = static_cast<std::uint64_t>(step_);
    a.phi = phi_[current_].data();
    a.u = u_[current_].data();
    a.phiNext = phi_[1 - current_].data();
    a.uNext = u_[1 - current_].data();
    sweep(backend_, a);
    current_ = 1 - current_;
    ++step_;
    if (haloExchange_) haloExchange_(phi_[current_].data(), u_[current_].data());
  }
  finish(backend_);
}

void PhaseFieldSolver::setHaloExchange(std::function<void(float*, float*)> exchange) {
  haloExchange_ = std::move(exchange);
  if (haloExchange_) haloExchange_(phi_[current_].data(), u_[current_].data());
}

void PhaseFieldSolver::mapPhi(float* out, double scale, double offset) const {
  map(backend_, AffineMap{phi(), out, static_cast<float>(scale), static_cast<float>(offset)}, nodeCount());
  finish(backend_);
}

void PhaseFieldSolver::mapU(float* out, double scale, double offset) const {
  map(backend_, AffineMap{u(), out, static_cast<float>(scale), static_cast<float>(offset)}, nodeCount());
  finish(backend_);
}

}  // namespace octoflow::phasefield
