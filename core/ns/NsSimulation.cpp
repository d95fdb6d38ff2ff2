// The 2D Navier-Stokes solver behind the Simulation interface: its fields at the cell centres
// (the output grid's nodes), forces.csv (or flow.csv without a body), checkpoints.
#include <cmath>

#include "common/Error.hpp"
#include "exec/Memory.hpp"
#include "io/CaseFile.hpp"
#include "ns/NsCase.hpp"


namespace octoflow::ns {

namespace {

class NsSimulation final : public sim::Simulation {
public:
  NsSimulation(const io::CaseDescription& description, const NsCase& nsCase, const sim::CreateOptions& options)
      : description_(description), case_(nsCase) {
    sim::requireOneProcess(options, description.sourcePath, "case.solver", "\"ns2d\"", "one GPU holds its grid");
    engine_ = makeNsEngine(nsCase.config, options.backend);
    engine_->initialize();
    backend_ = options.backend;
    const auto cells = static_cast<std::size_t>(description.extent.cellCount());
    const std::size_t sizes[3] = {3 * cells, cells, cells};
    for (int field = 0; field < 3; ++field) {
      working_[field] = exec::Buffer<float>(exec::workingSpace(options.backend), sizes[field]);
      host_[field] = exec::Buffer<float>(exec::stagingSpace(options.backend), sizes[field]);
    }
  }

  std::string describe() const override { return case_.describe(); }
  exec::Backend backend() const override { return backend_; }
  const Extent& extent() const override { return description_.extent; }
  const std::vector<sim::FieldInfo>& fields() const override { return case_.fields(); }
  Index step() const override { return engine_->step(); }
  void advance(Index steps) override { engine_->advance(steps); }
  void recordTimeline(Index step) override { engine_->recordTimeline(step); }
  std::vector<sim::TimelineMark> timeline() const override { return engine_->timeline(); }

  const sim::FieldSet& fetchFields(const std::vector<std::string>& names) override {
    computeFields(names);
    fields_ = {};
    fields_.box = fields_.owned = NodeBox::of(extent());
    for (int field = 0; field < 3; ++field) {
      if (!sim::asksFor(names, kFieldNames[field])) continue;
      host_[field].copyFrom(working_[field].data(), working_[field].size());
      fields_.arrays.push_back({kFieldNames[field], field == 0 ? 3 : 1, host_[field].data()});
    }
    return fields_;
  }
  const sim::FieldSet& pieceFields(const std::vector<std::string>& names) override { return fetchFields(names); }
  const sim::FieldSet& workingFields(const std::vector<std::string>& names) override {
    computeFields(names);
    fields_ = {};
    fields_.box = fields_.owned = NodeBox::of(extent());
    for (int field = 0; field < 3; ++field)
      if (sim::asksFor(names, kFieldNames[field]))
        fields_.arrays.push_back({kFieldNames[field], field == 0 ? 3 : 1, working_[field].data()});
    return fields_;
  }

  // Velocities far beyond the reference velocity 1 mean the run has gone unstable.
  std::vector<sim::FieldLimit> fieldLimits() const override {
    return {{"velocity", -3.0e38f, 50.0f, true}, {"pressure", -3.0e38f, 3.0e38f, false},
            {"vorticity", -3.0e38f, 3.0e38f, false}};
  }

  sim::SolverState saveState() override {
    const NsStateArrays arrays = engine_->saveState();
    const int bytes = engine_->valueBytes();
    const Index nx = extent().nx, ny = extent().ny;
    sim::SolverState state;
    state.arrays.push_back({"u", 1, bytes, NodeBox{{0, 0, 0}, Extent{nx + 1, ny, 1}}, arrays.u});
    state.arrays.push_back({"v", 1, bytes, NodeBox{{0, 0, 0}, Extent{nx, ny + 1, 1}}, arrays.v});
    state.arrays.push_back({"p", 1, bytes, NodeBox{{0, 0, 0}, Extent{nx, ny, 1}}, arrays.p});
    const double history[4] = {lastTime_, lastLift_, lastCrossing_, strouhal_};
    state.records.push_back(sim::makeRecord("forces_history", history, 4));
    state.records.push_back(sim::makeRecord("multigrid_plan", &arrays.plannedCycles, 1));
    return state;
  }
  void restoreState(const sim::StateSource& source) override {
    const int bytes = engine_->valueBytes();
    const Index nx = extent().nx, ny = extent().ny;
    NsStateArrays arrays;
    const auto read = [&](const char* name, Index width, Index height, std::vector<unsigned char>& out) {
      out.resize(static_cast<std::size_t>(width * height) * static_cast<std::size_t>(bytes));
      source.readArray(name, 1, bytes, NodeBox{{0, 0, 0}, Extent{width, height, 1}}, out.data());
    };
    read("u", nx + 1, ny, arrays.u);
    read("v", nx, ny + 1, arrays.v);
    read("p", nx, ny, arrays.p);
    const std::vector<double> history = source.values<double>("forces_history", 4);
    lastTime_ = history[0];
    lastLift_ = history[1];
    lastCrossing_ = history[2];
    strouhal_ = history[3];
    arrays.plannedCycles = source.values<int>("multigrid_plan", 1)[0];
    if (arrays.plannedCycles < 1 || arrays.plannedCycles > case_.config.multigrid.maxCycles)
      throw InputError("checkpoint", "multigrid_plan", "holds " + std::to_string(arrays.plannedCycles) +
                                                           " V-cycles, expected 1 to ns.multigrid.max_cycles");
    engine_->restoreState(arrays, source.step());
  }

  sim::DiagnosticsLog diagnosticsLog() const override {
    sim::DiagnosticsLog log;
    log.fileName = case_.config.cylinder ? "forces.csv" : "flow.csv";
    log.every = case_.diagnosticsEvery;
    log.columns = {"step", "time", "kinetic_energy", "multigrid_cycles", "residual_reduction"};
    if (case_.config.cylinder)
      for (const char* column : {"drag_coefficient", "lift_coefficient", "strouhal"}) log.columns.push_back(column);
    return log;
  }

  // Case units. The coefficients 2 F / (U^2 D) of the force the last step's penalisation took; the
  // Strouhal number D / (U T) from the last period T of the lift (between its upward zero
  // crossings; NaN until there is one).
  std::vector<double> diagnostics() override {
    const double time = timeOf(step());
    const PoissonReport& poisson = engine_->poisson();
    std::vector<double> row = {static_cast<double>(step()), time, engine_->kineticEnergy(),
                               static_cast<double>(poisson.cycles),
                               poisson.initialResidual > 0.0 ? poisson.finalResidual / poisson.initialResidual : 0.0};
    if (!case_.config.cylinder) return row;
    const std::array<double, 2> force = engine_->force();
    const double scale = 2.0 / case_.config.cylinderDiameter;
    const double drag = scale * force[0], lift = scale * force[1];
    if (step() > 0 && lastTime_ >= 0.0 && lastLift_ < 0.0 && lift >= 0.0) {
      const double crossing = lastTime_ + (time - lastTime_) * (-lastLift_) / (lift - lastLift_);
      if (lastCrossing_ >= 0.0) strouhal_ = case_.config.cylinderDiameter / (crossing - lastCrossing_);
      lastCrossing_ = crossing;
    }
    lastTime_ = time;
    lastLift_ = lift;
    row.insert(row.end(), {drag, lift, strouhal_});
    return row;
  }

  std::vector<std::pair<std::string, double>> fileMetadata(Index step) const override {
    return {{"h", case_.config.h}, {"dt", case_.config.dt}, {"time", timeOf(step)}, {"reynolds", case_.reynolds}};
  }
  double timeOf(Index step) const override { return static_cast<double>(step) * case_.config.dt; }
  double velocityScale() const override { return case_.config.dt / case_.config.h; }
  const std::vector<std::uint8_t>* solidMask() const override { return case_.solidMask(); }

private:
  static constexpr const char* kFieldNames[3] = {"velocity", "pressure", "vorticity"};

  void computeFields(const std::vector<std::string>& names) {
    float* out[3];
    for (int field = 0; field < 3; ++field) out[field] = sim::asksFor(names, kFieldNames[field]) ? working_[field].data() : nullptr;
    if (out[0] || out[1] || out[2]) engine_->centreFields(out[0], out[1], out[2]);
  }

  const io::CaseDescription& description_;
  const NsCase& case_;
  exec::Backend backend_ = exec::Backend::Cpu;
  std::unique_ptr<NsEngine> engine_;
  exec::Buffer<float> working_[3], host_[3];  // velocity (xyz), pressure, vorticity at the cell centres
  sim::FieldSet fields_;
  double lastTime_ = -1.0, lastLift_ = 0.0, lastCrossing_ = -1.0, strouhal_ = NAN;
};

}  // namespace

std::unique_ptr<sim::Simulation> makeNsSimulation(const io::CaseDescription& description, const NsCase& nsCase,
                                                  const sim::CreateOptions& options) {
  return std::make_unique<NsSimulation>(description, nsCase, options);
}

}  // namespace octoflow::ns
