#include "FlowExtracts.hpp"

#include "common/Error.hpp"
#include "insitu/DerivedFields.hpp"

namespace octoflow::app {

namespace {
#if OCTOFLOW_HAVE_MPI
lbm::UniformSolver& localSolver(parallel::DistributedSolver& solver) { return solver.local(); }
bool singleRank(const parallel::DistributedSolver& solver) { return solver.ranks() == 1; }
bool rootRank(const parallel::DistributedSolver& solver) { return solver.rank() == 0; }
#else
lbm::UniformSolver& localSolver(lbm::UniformSolver& solver) { return solver; }
bool singleRank(const lbm::UniformSolver&) { return true; }
bool rootRank(const lbm::UniformSolver&) { return true; }
#endif
}  // namespace

FlowExtracts::FlowExtracts(const io::CaseDescription& description, RunSolver& solver)
    : solver_(solver), description_(description) {
  onSolver_ = singleRank(solver);
  root_ = rootRank(solver);
  backend_ = onSolver_ ? localSolver(solver).backend() : exec::Backend::Cpu;
  if (!root_) return;
  if (description.tracers.enabled()) {
    tracers_ = std::make_unique<particles::TracerSet>(backend_, description.tracers.particles);
    const std::vector<std::uint8_t>& solid = description.lbm.solid;
    if (!solid.empty()) {
      solid_ = exec::Buffer<std::uint8_t>(exec::workingSpace(backend_), solid.size());
      solid_.copyFrom(solid.data(), solid.size());
    }
  }
  if (description.surface.enabled()) extractor_ = insitu::IsosurfaceExtractor::create(backend_);
}

const float* FlowExtracts::field(bool velocity) {
  if (onSolver_) {
    const auto fields = localSolver(solver_).workingFields(!velocity, velocity);
    return velocity ? fields.velocity : fields.density;
  }
  const lbm::HostFields& fields = solver_.fetchFields(!velocity, velocity);
  if (!root_) return nullptr;
  return velocity ? fields.velocity.data() : fields.density.data();
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

insitu::Surface FlowExtracts::surface() {
  if (!description_.surface.enabled()) throw Error("this run has no surface");
  const bool speed = description_.surface.field == "speed";
  const float* values = field(speed);
  if (!root_) return {};
  const Extent& extent = description_.lbm.extent;
  if (speed) {
    if (speed_.size() == 0) speed_ = exec::Buffer<float>(exec::workingSpace(backend_), static_cast<std::size_t>(extent.cellCount()));
    insitu::computeSpeed(backend_, values, extent.cellCount(), speed_.data());
    values = speed_.data();
  }
  insitu::ScalarFieldView view;
  view.values = values;
  view.extent = extent;
  return extractor_->extract(view, description_.surface.level);
}

}  // namespace octoflow::app
