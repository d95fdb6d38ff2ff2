#include "phasefield/PhaseFieldSolver.hpp"

#include <cmath>
#include <vector>

#include "phasefield/PhaseFieldSweep.hpp"

namespace octoflow::phasefield {

namespace {

// The backend's execution of a sweep and a map (CUDA calls return once the work is queued).
void sweep(exec::Backend backend, const SweepArguments& arguments, void* stream = nullptr) {
#if OCTOFLOW_HAVE_CUDA
  if (backend == exec::Backend::Cuda) return phaseFieldSweepCuda(arguments, stream);
#endif
  (void)stream;
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

// The owned nodes next to ghost layers (one layer thick, disjoint boxes: x faces, then y, then z,
// each taken from what the previous ones left), and what remains.
void splitOwnedBox(const NodeBox& owned, const Extent& extent, std::vector<NodeBox>& layers, NodeBox& interior) {
  interior = owned;
  for (int axis = 0; axis < 3; ++axis) {
    const Index n = extent.size(axis);
    Index size[3] = {interior.size.nx, interior.size.ny, interior.size.nz};
    const bool ghostBelow = owned.lo[axis] > 0, ghostAbove = owned.lo[axis] + size[axis] < n;
    for (const bool below : {true, false}) {
      if (!(below ? ghostBelow : ghostAbove) || size[axis] == 0) continue;
      NodeBox layer = interior;
      Index layerSize[3] = {size[0], size[1], size[2]};
      layerSize[axis] = 1;
      if (!below) layer.lo[axis] = interior.lo[axis] + size[axis] - 1;
      layer.size = Extent{layerSize[0], layerSize[1], layerSize[2]};
      layers.push_back(layer);
      if (below) ++interior.lo[axis];
      --size[axis];
      interior.size = Extent{size[0], size[1], size[2]};
    }
  }
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
  if (haloExchange_) haloExchange_(phi_[0].data(), u_[0].data(), nullptr);
}

NodeBox PhaseFieldSolver::localBox() const {
  return NodeBox{{config_.origin[0], config_.origin[1], config_.origin[2]}, config_.extent};
}

NodeBox PhaseFieldSolver::ownedBox() const {
  if (!config_.isPiece) return localBox();
  NodeBox owned = config_.owned;
  for (int axis = 0; axis < 3; ++axis) owned.lo[axis] += config_.origin[static_cast<std::size_t>(axis)];
  return owned;
}

std::vector<sim::StateArray> PhaseFieldSolver::saveState() const {
  const auto count = static_cast<std::size_t>(nodeCount());
  std::vector<float> host(count);
  std::vector<sim::StateArray> arrays;
  const std::array<const exec::Buffer<float>*, 2> fields = {&phi_[current_], &u_[current_]};
  const char* names[2] = {"phi", "u"};
  for (int f = 0; f < 2; ++f) {
    fields[static_cast<std::size_t>(f)]->copyTo(host.data(), count);
    arrays.push_back(sim::extractState(names[f], host.data(), localBox(), ownedBox(), 1, sizeof(float)));
  }
  return arrays;
}

void PhaseFieldSolver::restoreState(const sim::StateSource& source) {
  const auto count = static_cast<std::size_t>(nodeCount());
  const Extent whole = config_.isPiece ? config_.whole : config_.extent;
  std::vector<float> host(count);
  sim::readWrapped(source, "phi", 1, sizeof(float), localBox(), whole, host.data());
  phi_[current_].copyFrom(host.data(), count);
  sim::readWrapped(source, "u", 1, sizeof(float), localBox(), whole, host.data());
  u_[current_].copyFrom(host.data(), count);
  step_ = source.step();
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
    void* haloStream = nullptr;
    const bool recording = timeline_.begin(step_);
#if OCTOFLOW_HAVE_CUDA
    if (queues_) {
      // Boundary layers first on the halo stream, the interior beside them and the halo copies.
      queues_->join();
      if (recording) queues_->startTimeline();
      markTimeline("step started", false);
      haloStream = queues_->halo();
      for (const NodeBox& layer : boundaryLayers_) {
        a.box = layer;
        sweep(backend_, a, haloStream);
      }
      if (!boundaryLayers_.empty()) markTimeline("layers next to the cuts updated", true);
      a.box = interior_;
    }
#endif
    if (recording && backend_ == exec::Backend::Cpu) {
      hostClock_.startTimeline();
      markTimeline("step started", false);
    }
    sweep(backend_, a);
    markTimeline("interior updated", false);
    current_ = 1 - current_;
    ++step_;
    if (haloExchange_) {
      haloExchange_(phi_[current_].data(), u_[current_].data(), haloStream);
      markTimeline("halos exchanged", true);
    }
    if (recording) {
#if OCTOFLOW_HAVE_CUDA
      if (queues_) timeline_.end(queues_->stopTimeline());
#endif
      if (backend_ == exec::Backend::Cpu) timeline_.end(hostClock_.stopTimeline());
    }
  }
#if OCTOFLOW_HAVE_CUDA
  if (queues_) queues_->synchronize();
#endif
  finish(backend_);
}

void PhaseFieldSolver::recordTimeline(Index step) {
  timeline_.choose(step);
#if OCTOFLOW_HAVE_CUDA
  // One grid on CUDA sweeps on the default stream alone: the queues only give it the events.
  if (backend_ == exec::Backend::Cuda && !queues_) {
    queues_ = std::make_unique<SweepQueues>();
    interior_ = config_.owned;
  }
#endif
}

void PhaseFieldSolver::markTimeline(const char* what, bool haloQueue) {
  if (!timeline_.mark(what, haloQueue)) return;
#if OCTOFLOW_HAVE_CUDA
  if (queues_) return queues_->markTimeline(haloQueue);
#endif
  hostClock_.markTimeline(haloQueue);
}

void PhaseFieldSolver::setHaloExchange(HaloExchange exchange) {
  haloExchange_ = std::move(exchange);
  boundaryLayers_.clear();
  splitOwnedBox(config_.owned, config_.extent, boundaryLayers_, interior_);
#if OCTOFLOW_HAVE_CUDA
  if (haloExchange_ && backend_ == exec::Backend::Cuda && !queues_) queues_ = std::make_unique<SweepQueues>();
#endif
  if (haloExchange_) haloExchange_(phi_[current_].data(), u_[current_].data(), nullptr);
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
