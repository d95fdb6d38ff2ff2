#include "phasefield/PhaseFieldSimulation.hpp"

#include <algorithm>
#include <cmath>

#include "common/Error.hpp"
#include "io/CaseFile.hpp"
#include "phasefield/DendriteMetrics.hpp"

#if OCTOFLOW_HAVE_MPI
#include <mpi.h>
#endif

namespace octoflow::phasefield {

namespace {

bool asks(const std::vector<std::string>& names, const char* name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

class PhaseFieldSimulation final : public sim::Simulation {
public:
  PhaseFieldSimulation(const io::CaseDescription& description, const PhaseFieldCase& phaseFieldCase,
                       const sim::CreateOptions& options)
      : description_(description), case_(phaseFieldCase), solver_(phaseFieldCase.config, options.backend) {
    const auto count = static_cast<std::size_t>(solver_.nodeCount());
    hostPhi_ = exec::Buffer<float>(exec::stagingSpace(options.backend), count);
    hostTemperature_ = exec::Buffer<float>(exec::stagingSpace(options.backend), count);
    workingTemperature_ = exec::Buffer<float>(exec::workingSpace(options.backend), count);
  }

  std::string describe() const override { return case_.describe(); }
  exec::Backend backend() const override { return solver_.backend(); }
  const Extent& extent() const override { return description_.extent; }
  const std::vector<sim::FieldInfo>& fields() const override { return case_.fields(); }
  Index step() const override { return solver_.step(); }
  void advance(Index steps) override { solver_.advance(steps); }

  const sim::FieldSet& fetchFields(const std::vector<std::string>& names) override {
    fields_ = {};
    fields_.box = NodeBox::of(extent());
    const auto count = static_cast<std::size_t>(solver_.nodeCount());
    if (asks(names, "phi")) {
      hostPhi_.copyFrom(solver_.phi(), count);
      fields_.arrays.push_back({"phi", 1, hostPhi_.data()});
    }
    if (asks(names, "temperature")) {
      solver_.temperature(workingTemperature_.data(), case_.material.meltingTemperature, case_.latentOverCapacity());
      hostTemperature_.copyFrom(workingTemperature_.data(), count);
      fields_.arrays.push_back({"temperature", 1, hostTemperature_.data()});
    }
    return fields_;
  }
  const sim::FieldSet& pieceFields(const std::vector<std::string>& names) override { return fetchFields(names); }
  const sim::FieldSet& workingFields(const std::vector<std::string>& names) override {
    fields_ = {};
    fields_.box = NodeBox::of(extent());
    if (asks(names, "phi")) fields_.arrays.push_back({"phi", 1, solver_.phi()});
    if (asks(names, "temperature")) {
      solver_.temperature(workingTemperature_.data(), case_.material.meltingTemperature, case_.latentOverCapacity());
      fields_.arrays.push_back({"temperature", 1, workingTemperature_.data()});
    }
    return fields_;
  }

  sim::DiagnosticsLog diagnosticsLog() const override {
    sim::DiagnosticsLog log;
    log.fileName = "dendrite.csv";
    log.every = case_.diagnosticsEvery;
    log.columns = {"step", "time", "solid_fraction", "interface_area", "tip_x", "tip_y"};
    if (description_.dimensions == 3) log.columns.push_back("tip_z");
    log.columns.push_back("tip_velocity_x");
    return log;
  }

  // SI: time in s, the interface area in m^2 (2D: its length in m), tips in m from the nucleus
  // centre, the tip velocity in m/s since the last row (NaN in the first).
  std::vector<double> diagnostics() override {
    const sim::FieldSet& fields = fetchFields({"phi"});
    const DendriteMetrics m =
        measureDendrite(fields.values("phi"), extent(), description_.dimensions, case_.config.nucleusCentre);
    const double dx = case_.dx, time = static_cast<double>(step()) * case_.dt;
    const double tipX = m.tip[0] * dx;
    const double velocity = lastTime_ >= 0.0 && time > lastTime_ ? (tipX - lastTipX_) / (time - lastTime_) : NAN;
    lastTime_ = time;
    lastTipX_ = tipX;
    std::vector<double> row = {static_cast<double>(step()), time, m.solidFraction,
                               m.interfaceArea * std::pow(dx, description_.dimensions - 1), tipX, m.tip[1] * dx};
    if (description_.dimensions == 3) row.push_back(m.tip[2] * dx);
    row.push_back(velocity);
    return row;
  }

  std::vector<std::pair<std::string, double>> fileMetadata(Index step) const override {
    return {{"dx_m", case_.dx}, {"dt_s", case_.dt}, {"time_s", static_cast<double>(step) * case_.dt}};
  }

private:
  const io::CaseDescription& description_;
  const PhaseFieldCase& case_;
  PhaseFieldSolver solver_;
  exec::Buffer<float> hostPhi_, hostTemperature_, workingTemperature_;
  sim::FieldSet fields_;
  double lastTime_ = -1.0, lastTipX_ = 0.0;
};

}  // namespace

std::unique_ptr<sim::Simulation> makePhaseFieldSimulation(const io::CaseDescription& description,
                                                          const PhaseFieldCase& phaseFieldCase,
                                                          const sim::CreateOptions& options) {
#if OCTOFLOW_HAVE_MPI
  if (options.overMpi) {
    int ranks = 1;
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    if (ranks > 1)
      throw InputError(description.sourcePath, "case.solver",
                       "the phase-field solver runs on one rank in this version (run it without mpirun -np " +
                           std::to_string(ranks) + ")");
  }
#endif
  return std::make_unique<PhaseFieldSimulation>(description, phaseFieldCase, options);
}

}  // namespace octoflow::phasefield
