#include "lbm/LbmSimulation.hpp"

#include <cstdio>

#include "common/Error.hpp"
#include "io/CaseFile.hpp"
#include "lbm/UniformSolver.hpp"

#if OCTOFLOW_HAVE_MPI
#include "parallel/DistributedSolver.hpp"
#endif

namespace octoflow::lbm {

namespace {

// The watchdog's sane ranges (lattice units).
constexpr float kLowestDensity = 0.1f, kHighestDensity = 10.0f, kHighestSpeed = 0.5f;

class LbmSimulation final : public sim::Simulation {
public:
  LbmSimulation(const io::CaseDescription& description, const LbmCase& lbmCase, const sim::CreateOptions& options)
      : description_(description), case_(lbmCase) {
    const bool blocked = lbmCase.config.blocking.enabled();
    if (blocked)
      sim::requireOneProcess(options, description.sourcePath, "lbm.blocking.shared_steps", "temporal blocking",
                             "a tile reads its halo from the one grid");
#if OCTOFLOW_HAVE_MPI
    if (options.overMpi && !blocked) {
      distributed_ = std::make_unique<parallel::DistributedSolver>(MPI_COMM_WORLD, lbmCase.config, options.backend);
      return;
    }
#endif
    owned_ = std::make_unique<UniformSolver>(lbmCase.config, options.backend);
    solver_ = owned_.get();
  }
  LbmSimulation(const io::CaseDescription& description, const LbmCase& lbmCase, UniformSolver& solver)
      : description_(description), case_(lbmCase), solver_(&solver) {}

  std::string describe() const override {
    std::string text = case_.describe();
#if OCTOFLOW_HAVE_MPI
    if (distributed_ && distributed_->ranks() > 1) {
      const auto& dims = distributed_->piece().dims;
      text += "; " + std::to_string(distributed_->ranks()) + " MPI ranks, " + std::to_string(dims[0]) + "x" +
              std::to_string(dims[1]) + "x" + std::to_string(dims[2]) + " pieces";
    }
#endif
    const io::PhysicalUnits& units = case_.units;
    if (units.given) {
      char line[200];
      std::snprintf(line, sizeof line, "; units: dx %.4g m, dt %.4g s, lattice velocity 1 = %.4g m/s", units.length,
                    units.timeStep(), units.velocity);
      text += line;
    }
    return text;
  }
  exec::Backend backend() const override { return local().backend(); }
  const Extent& extent() const override { return case_.config.extent; }
  const std::vector<sim::FieldInfo>& fields() const override { return case_.fields(); }
  Index step() const override { return local().step(); }
  void advance(Index steps) override {
#if OCTOFLOW_HAVE_MPI
    if (distributed_) return distributed_->advance(steps);
#endif
    solver_->advance(steps);
  }
  void synchronize() override { local().synchronize(); }
  void recordTimeline(Index step) override { local().recordTimeline(step); }
  std::vector<sim::TimelineMark> timeline() const override { return local().timeline(); }

  const sim::FieldSet& fetchFields(const std::vector<std::string>& names) override {
    const bool density = sim::asksFor(names, "density"), velocity = sim::asksFor(names, "velocity");
    fields_ = {};
    fields_.box = NodeBox::of(extent());
#if OCTOFLOW_HAVE_MPI
    const HostFields& host = distributed_ ? distributed_->fetchFields(density, velocity)
                                          : solver_->fetchFields(density, velocity);
#else
    const HostFields& host = solver_->fetchFields(density, velocity);
#endif
    if (rank() != 0) return fields_;
    if (density) fields_.arrays.push_back({"density", 1, host.density.data()});
    if (velocity) fields_.arrays.push_back({"velocity", 3, host.velocity.data()});
    return fields_;
  }

  const sim::FieldSet& pieceFields(const std::vector<std::string>& names) override {
#if OCTOFLOW_HAVE_MPI
    if (distributed_ && distributed_->ranks() > 1) {
      const bool density = sim::asksFor(names, "density"), velocity = sim::asksFor(names, "velocity");
      const auto& piece = distributed_->pieceFields(density, velocity);
      fields_ = {};
      fields_.box = piece.box;
      if (density) fields_.arrays.push_back({"density", 1, piece.density.data()});
      if (velocity) fields_.arrays.push_back({"velocity", 3, piece.velocity.data()});
      return fields_;
    }
#endif
    return fetchFields(names);
  }

  std::vector<NodeBox> pieceBoxes() const override {
#if OCTOFLOW_HAVE_MPI
    if (distributed_) return distributed_->pieceBoxes();
#endif
    return {NodeBox::of(extent())};
  }

  const sim::FieldSet& workingFields(const std::vector<std::string>& names) override {
    const bool density = sim::asksFor(names, "density"), velocity = sim::asksFor(names, "velocity");
    const auto working = local().workingFields(density, velocity);
    fields_ = {};
    fields_.box = local().localBox();
    fields_.owned = local().ownedBox();
    if (density) fields_.arrays.push_back({"density", 1, working.density});
    if (velocity) fields_.arrays.push_back({"velocity", 3, working.velocity});
    return fields_;
  }

  bool moveTracers(const particles::TracerMove& move) override {
    // One grid, the whole one (no ghost layers): tracer positions are its node coordinates.
    if (ranks() > 1 || local().config().ghostFaces != 0) return false;
    local().moveTracers(move);
    return true;
  }
  void settleTracers() override { local().settleTracers(); }

  std::vector<sim::FieldLimit> fieldLimits() const override { return flowFieldLimits(); }

  sim::SolverState saveState() override { return sim::SolverState{local().saveState(), {}}; }
  void restoreState(const sim::StateSource& source) override { local().restoreState(source); }

  int rank() const override {
#if OCTOFLOW_HAVE_MPI
    if (distributed_) return distributed_->rank();
#endif
    return 0;
  }
  int ranks() const override {
#if OCTOFLOW_HAVE_MPI
    if (distributed_) return distributed_->ranks();
#endif
    return 1;
  }

  sim::DiagnosticsLog diagnosticsLog() const override { return forcesLog(case_); }

  // The force on the obstacles in the last step.
  std::vector<double> diagnostics() override {
#if OCTOFLOW_HAVE_MPI
    const std::array<double, 3> force = distributed_ ? distributed_->obstacleForce() : solver_->obstacleForce();
#else
    const std::array<double, 3> force = solver_->obstacleForce();
#endif
    return forcesRow(case_, step(), force, description_.dimensions);
  }

  const std::vector<std::uint8_t>* solidMask() const override { return case_.solidMask(); }

  std::vector<sim::DerivedArray> physicalArrays(const sim::FieldSet& fields) const override {
    return flowPhysicalArrays(case_.units, fields.values("density"), fields.values("velocity"),
                              static_cast<std::size_t>(fields.box.cellCount()));
  }
  std::vector<std::pair<std::string, double>> fileMetadata(Index step) const override {
    return flowFileMetadata(case_.units, step);
  }

private:
  const UniformSolver& local() const {
#if OCTOFLOW_HAVE_MPI
    if (distributed_) return distributed_->local();
#endif
    return *solver_;
  }
  UniformSolver& local() { return const_cast<UniformSolver&>(static_cast<const LbmSimulation*>(this)->local()); }

  const io::CaseDescription& description_;
  const LbmCase& case_;
  std::unique_ptr<UniformSolver> owned_;
  UniformSolver* solver_ = nullptr;
#if OCTOFLOW_HAVE_MPI
  std::unique_ptr<parallel::DistributedSolver> distributed_;
#endif
  sim::FieldSet fields_;
};

}  // namespace

// A lattice fluid stays near rho = 1 and well below the lattice speed of sound.
std::vector<sim::FieldLimit> flowFieldLimits() {
  return {{"density", kLowestDensity, kHighestDensity, false}, {"velocity", 0.0f, kHighestSpeed, true}};
}

std::vector<sim::DerivedArray> flowPhysicalArrays(const io::PhysicalUnits& units, const float* density,
                                                  const float* velocity, std::size_t points) {
  std::vector<sim::DerivedArray> arrays;
  if (!units.given) return arrays;
  if (velocity) {
    sim::DerivedArray si{"velocity_si", 3, std::vector<float>(3 * points)};
    for (std::size_t i = 0; i < si.values.size(); ++i) si.values[i] = static_cast<float>(units.toSiVelocity(velocity[i]));
    arrays.push_back(std::move(si));
  }
  if (density) {
    sim::DerivedArray si{"pressure_si", 1, std::vector<float>(points)};
    for (std::size_t i = 0; i < points; ++i) si.values[i] = static_cast<float>(units.toSiPressure(density[i]));
    arrays.push_back(std::move(si));
  }
  return arrays;
}

std::vector<std::pair<std::string, double>> flowFileMetadata(const io::PhysicalUnits& units, Index step) {
  if (!units.given) return {};
  return {{"dx_m", units.length}, {"dt_s", units.timeStep()}, {"density_kg_m3", units.density}, {"time_s", step * units.timeStep()}};
}

sim::DiagnosticsLog forcesLog(const LbmCase& lbmCase) {
  sim::DiagnosticsLog log;
  log.fileName = "forces.csv";
  log.every = lbmCase.forces.every;
  log.columns = {"step", "fx", "fy", "fz", "cd", "cl"};
  if (lbmCase.units.given) log.columns.insert(log.columns.end(), {"time_s", "fx_N", "fy_N", "fz_N"});
  return log;
}

std::vector<double> forcesRow(const LbmCase& lbmCase, Index step, const std::array<double, 3>& force, int dimensions) {
  std::vector<double> row = {static_cast<double>(step), force[0], force[1], force[2],
                             lbmCase.forces.coefficient(force[0], dimensions),
                             lbmCase.forces.coefficient(force[1], dimensions)};
  const io::PhysicalUnits& units = lbmCase.units;
  if (units.given)
    row.insert(row.end(), {step * units.timeStep(), units.toSiForce(force[0], dimensions),
                           units.toSiForce(force[1], dimensions), units.toSiForce(force[2], dimensions)});
  return row;
}

std::unique_ptr<sim::Simulation> wrapUniformSolver(const io::CaseDescription& description, const LbmCase& lbmCase,
                                                   UniformSolver& solver) {
  return std::make_unique<LbmSimulation>(description, lbmCase, solver);
}

std::unique_ptr<sim::Simulation> makeLbmSimulation(const io::CaseDescription& description, const LbmCase& lbmCase,
                                                   const sim::CreateOptions& options) {
  return std::make_unique<LbmSimulation>(description, lbmCase, options);
}

}  // namespace octoflow::lbm
