#include "insitu/FlowExtracts.hpp"

#include "common/Error.hpp"
#include "insitu/DerivedFields.hpp"

namespace octoflow::insitu {

FlowExtracts::FlowExtracts(const io::CaseDescription& description, sim::Simulation& simulation)
    : description_(description), simulation_(simulation), backend_(simulation.backend()) {
  if (simulation.ranks() > 1) {
    backend_ = exec::Backend::Cpu;
    root_ = simulation.rank() == 0;
    onSolver_ = false;
  }
  if (!root_) return;
  if (description_.tracers.enabled()) {
    tracers_ = std::make_unique<particles::TracerSet>(backend_, description_.tracers.particles);
    if (const sim::BlockGrid* blocks = simulation.blockGrid()) {
      describeBlocks(*blocks);
    } else if (const std::vector<std::uint8_t>* solid = simulation.solidMask()) {
      solid_ = exec::Buffer<std::uint8_t>(exec::workingSpace(backend_), solid->size());
      solid_.copyFrom(solid->data(), solid->size());
    }
  }
  if (description_.surface.enabled()) extractor_ = IsosurfaceExtractor::create(backend_);
}

const float* FlowExtracts::field(const std::string& name) {
  if (onSolver_) return simulation_.workingFields({name}).values(name);
  const sim::FieldSet& fields = simulation_.fetchFields({name});
  return root_ ? fields.values(name) : nullptr;
}

namespace {

template <class T>
exec::Buffer<T> uploaded(exec::Backend backend, const std::vector<T>& values) {
  exec::Buffer<T> buffer(exec::workingSpace(backend), values.size());
  buffer.copyFrom(values.data(), values.size());
  return buffer;
}

}  // namespace

void FlowExtracts::describeBlocks(const sim::BlockGrid& blocks) {
  const particles::BlockTables tables = particles::blockTables(blocks);
  blocksRevision_ = blocks.revision;
  blockMeta_ = uploaded(backend_, tables.meta);
  leafOf_ = uploaded(backend_, tables.leafOf);
  blockView_ = tables.view;
  blockView_.meta = blockMeta_.data();
  blockView_.leafOf = leafOf_.data();
}

void FlowExtracts::releaseTracers(Index step) {
  simulation_.settleTracers();
  if (tracers_) tracers_->release(step);
}

void FlowExtracts::moveTracers(int steps) {
  if (!description_.tracers.enabled()) return;
  simulation_.settleTracers();
  if (const sim::BlockGrid* grid = simulation_.blockGrid()) {
    // Over ranks every block's values gathered (collective), moved in on rank 0's host.
    const sim::BlockFieldSet& fields =
        onSolver_ ? simulation_.workingBlockFields({"velocity"}) : simulation_.fetchBlockFields({"velocity"}, sim::Simulation::BlockFieldsFor::RankZero);
    if (!root_) return;
    const sim::BlockGrid& blocks = *grid;
    if (blocks.revision != blocksRevision_) describeBlocks(blocks);  // regridded
    particles::BlockVelocityView view = blockView_;
    view.velocity = fields.values("velocity");
    view.solid = fields.solid;
    tracers_->advect(view, steps, static_cast<float>(simulation_.velocityScale()));
    return;
  }
  if (onSolver_ && !velocityField_ &&
      simulation_.moveTracers(tracers_->move(steps, static_cast<float>(simulation_.velocityScale()))))
    return;
  const float* velocity = field("velocity");
  if (!root_) return;
  particles::VelocityFieldView view;
  view.velocity = velocity;
  view.solid = solid_.size() ? solid_.data() : nullptr;
  view.extent = simulation_.extent();
  tracers_->advect(view, steps, static_cast<float>(simulation_.velocityScale()));
}

particles::TracerView FlowExtracts::tracers() {
  if (!tracers_) throw Error("this run has no tracers");
  simulation_.settleTracers();
  return tracers_->view();
}

Surface FlowExtracts::surface() {
  if (!description_.surface.enabled()) throw Error("this run has no surface");
  // "speed" is |velocity| unless the solver has a field of that name.
  const bool speed = description_.surface.field == "speed" && !sim::findField(simulation_.fields(), "speed");
  const float* values = field(speed ? "velocity" : description_.surface.field);
  if (!root_) return {};
  const Extent& extent = simulation_.extent();
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
