#include "insitu/FlowExtracts.hpp"

#include "common/Error.hpp"
#include "insitu/DerivedFields.hpp"

namespace octoflow::insitu {

FlowExtracts::FlowExtracts(const io::CaseDescription& description, lbm::UniformSolver& solver)
    : description_(description), solver_(&solver), backend_(solver.backend()) {
  allocate();
}

#if OCTOFLOW_HAVE_MPI
FlowExtracts::FlowExtracts(const io::CaseDescription& description, parallel::DistributedSolver& solver)
    : description_(description) {
  if (solver.ranks() == 1) {
    solver_ = &solver.local();
    backend_ = solver_->backend();
  } else {
    distributed_ = &solver;
    backend_ = exec::Backend::Cpu;
    root_ = solver.rank() == 0;
    onSolver_ = false;
  }
  allocate();
}
#endif

void FlowExtracts::allocate() {
  if (!root_) return;
  if (description_.tracers.enabled()) {
    tracers_ = std::make_unique<particles::TracerSet>(backend_, description_.tracers.particles);
    const std::vector<std::uint8_t>& solid = description_.lbm.solid;
    if (!solid.empty()) {
      solid_ = exec::Buffer<std::uint8_t>(exec::workingSpace(backend_), solid.size());
      solid_.copyFrom(solid.data(), solid.size());
    }
  }
  if (description_.surface.enabled()) extractor_ = IsosurfaceExtractor::create(backend_);
}

const float* FlowExtracts::field(bool velocity) {
  if (solver_) {
    const auto fields = solver_->workingFields(!velocity, velocity);
    return velocity ? fields.velocity : fields.density;
  }
#if OCTOFLOW_HAVE_MPI
  const lbm::HostFields& fields = distributed_->fetchFields(!velocity, velocity);
  if (!root_) return nullptr;
  return velocity ? fields.velocity.data() : fields.density.data();
#else
  return nullptr;
#endif
}

void FlowExtracts::releaseTracers(Index step) {
  if (tracers_) tracers_->release(step);
}

void FlowExtracts::moveTracers(int steps) {
  if (!description_.tracers.enabled()) return;
  const float* velocity = field(true);
  if (!root_) return;
  particles::VelocityFieldView view;
  view.velocity = velocity;
  view.solid = solid_.size() ? solid_.data() : nullptr;
  view.extent = description_.lbm.extent;
  tracers_->advect(view, steps);
}

particles::TracerView FlowExtracts::tracers() {
  if (!tracers_) throw Error("this run has no tracers");
  return tracers_->view();
}

Surface FlowExtracts::surface() {
  if (!description_.surface.enabled()) throw Error("this run has no surface");
  const bool speed = description_.surface.field == "speed";
  const float* values = field(speed);
  if (!root_) return {};
  const Extent& extent = description_.lbm.extent;
  if (speed) {
    if (speed_.size() == 0) speed_ = exec::Buffer<float>(exec::workingSpace(backend_), static_cast<std::size_t>(extent.cellCount()));
    computeSpeed(backend_, values, extent.cellCount(), speed_.data());
    values = speed_.data();
  }
  ScalarFieldView view;
  view.values = values;
  view.extent = extent;
  return extractor_->extract(view, description_.surface.level);
}

}  // namespace octoflow::insitu
