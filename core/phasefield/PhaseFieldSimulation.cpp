#include "phasefield/PhaseFieldSimulation.hpp"

#include <algorithm>
#include <array>
#include <cmath>

#include "common/Error.hpp"
#include "io/CaseFile.hpp"
#include "phasefield/DendriteMetrics.hpp"

#if OCTOFLOW_HAVE_MPI
#include <mpi.h>

#include "parallel/GridDistribution.hpp"
#endif

namespace octoflow::phasefield {

namespace {

class PhaseFieldSimulation final : public sim::Simulation {
public:
  PhaseFieldSimulation(const io::CaseDescription& description, const PhaseFieldCase& phaseFieldCase,
                       const sim::CreateOptions& options)
      : description_(description), case_(phaseFieldCase) {
    PhaseFieldConfig config = phaseFieldCase.config;
#if OCTOFLOW_HAVE_MPI
    int ranks = 1;
    if (options.overMpi) MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    if (ranks > 1) {
      distribution_ = std::make_unique<parallel::GridDistribution>(MPI_COMM_WORLD, description.extent,
                                                                   description.periodic, options.backend);
      config.isPiece = true;
      config.extent = distribution_->localExtent();
      config.periodic = distribution_->localPeriodic();
      config.owned = distribution_->ownedBox();
      config.origin = distribution_->origin();
      config.whole = description.extent;
    }
#endif
    solver_ = std::make_unique<PhaseFieldSolver>(config, options.backend);
#if OCTOFLOW_HAVE_MPI
    if (distribution_)
      solver_->setHaloExchange(
          [this](float* phi, float* u, void* stream) { distribution_->exchange({phi, u}, stream); });
#endif
    const auto count = static_cast<std::size_t>(solver_->nodeCount());
    for (auto& host : host_) host = exec::Buffer<float>(exec::stagingSpace(options.backend), count);
    for (int field = 0; field < 2; ++field) {
      const PhaseFieldCase::OutputMap map = field == 0 ? case_.phiOutput() : case_.temperatureOutput();
      if (!map.identity()) mapped_[field] = exec::Buffer<float>(exec::workingSpace(options.backend), count);
    }
  }

  std::string describe() const override {
    std::string text = case_.describe();
#if OCTOFLOW_HAVE_MPI
    if (distribution_)
      text += "; " + std::to_string(ranks()) + " MPI ranks, halos: " + distribution_->haloPath();
#endif
    return text;
  }
  exec::Backend backend() const override { return solver_->backend(); }
  const Extent& extent() const override { return description_.extent; }
  const std::vector<sim::FieldInfo>& fields() const override { return case_.fields(); }
  Index step() const override { return solver_->step(); }
  void advance(Index steps) override { solver_->advance(steps); }
  void recordTimeline(Index step) override { solver_->recordTimeline(step); }
  std::vector<sim::TimelineMark> timeline() const override { return solver_->timeline(); }

  const sim::FieldSet& fetchFields(const std::vector<std::string>& names) override {
    fields_ = {};
    fields_.box = NodeBox::of(extent());
    for (int field = 0; field < 2; ++field) {
      const char* name = kFieldNames[field];
      if (!sim::asksFor(names, name)) continue;
      const float* local = localOnHost(field);
#if OCTOFLOW_HAVE_MPI
      if (distribution_) {
        distribution_->gather(local, whole_[field]);
        if (rank() == 0) fields_.arrays.push_back({name, 1, whole_[field].data()});
        continue;
      }
#endif
      fields_.arrays.push_back({name, 1, local});
    }
    return fields_;
  }

  const sim::FieldSet& pieceFields(const std::vector<std::string>& names) override {
#if OCTOFLOW_HAVE_MPI
    if (distribution_) {
      fields_ = {};
      fields_.box = pieceBox(distribution_->piece());
      for (int field = 0; field < 2; ++field) {
        if (!sim::asksFor(names, kFieldNames[field])) continue;
        distribution_->copyPiece(localOnHost(field), piece_[field]);
        fields_.arrays.push_back({kFieldNames[field], 1, piece_[field].data()});
      }
      return fields_;
    }
#endif
    return fetchFields(names);
  }

  std::vector<NodeBox> pieceBoxes() const override {
#if OCTOFLOW_HAVE_MPI
    if (distribution_) return distribution_->pieceBoxes();
#endif
    return {NodeBox::of(extent())};
  }

  const sim::FieldSet& workingFields(const std::vector<std::string>& names) override {
    fields_ = {};
    fields_.box = solver_->localBox();
    fields_.owned = solver_->ownedBox();
    for (int field = 0; field < 2; ++field)
      if (sim::asksFor(names, kFieldNames[field])) fields_.arrays.push_back({kFieldNames[field], 1, working(field)});
    return fields_;
  }

  // phi (0 in the melt, 1 in the crystal) overshoots its range only a little at a sound interface.
  std::vector<sim::FieldLimit> fieldLimits() const override {
    return {{"phi", -0.1f, 1.1f, false}, {"temperature", -3.0e38f, 3.0e38f, false}};
  }

  // The solver's fields, and the last diagnostics row's time and tip (the tip velocity's history).
  sim::SolverState saveState() override {
    const double history[2] = {lastTime_, lastTipX_};
    return sim::SolverState{solver_->saveState(), {sim::makeRecord("dendrite_history", history, 2)}};
  }
  void restoreState(const sim::StateSource& source) override {
    solver_->restoreState(source);
    const std::vector<double> history = source.values<double>("dendrite_history", 2);
    lastTime_ = history[0];
    lastTipX_ = history[1];
  }

  int rank() const override {
#if OCTOFLOW_HAVE_MPI
    if (distribution_) return distribution_->rank();
#endif
    return 0;
  }
  int ranks() const override {
#if OCTOFLOW_HAVE_MPI
    if (distribution_) return distribution_->ranks();
#endif
    return 1;
  }

  sim::DiagnosticsLog diagnosticsLog() const override {
    sim::DiagnosticsLog log;
    log.fileName = "dendrite.csv";
    log.every = case_.diagnosticsEvery;
    log.columns = {"step", "time", "solid_fraction", "interface_area", "tip_x", "tip_y"};
    if (description_.dimensions == 3) log.columns.push_back("tip_z");
    log.columns.push_back("tip_velocity_x");
    if (case_.isKarmaRappel()) log.columns.push_back("free_energy");
    return log;
  }

  // Kobayashi in SI: time in s, the interface area in m^2 (2D: its length in m), tips in m from the
  // nucleus centre, the tip velocity in m/s since the last row (NaN in the first); Karma-Rappel in
  // W0 and tau0, with the free energy. Measured on rank 0 from the gathered fields; other ranks
  // return no row.
  std::vector<double> diagnostics() override {
    const sim::FieldSet& fields =
        case_.isKarmaRappel() ? fetchFields({"phi", "temperature"}) : fetchFields({"phi"});
    if (rank() != 0) return {};
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
    if (case_.isKarmaRappel())
      row.push_back(karmaRappelFreeEnergy(fields.values("phi"), fields.values("temperature"), extent(),
                                          description_.dimensions, dx, case_.anisotropy,
                                          case_.karmaRappel.coupling()));
    return row;
  }

  std::vector<std::pair<std::string, double>> fileMetadata(Index step) const override {
    const double time = static_cast<double>(step) * case_.dt;
    if (case_.isKarmaRappel()) return {{"dx_W0", case_.dx}, {"dt_tau0", case_.dt}, {"time_tau0", time}};
    return {{"dx_m", case_.dx}, {"dt_s", case_.dt}, {"time_s", time}};
  }

private:
  static constexpr const char* kFieldNames[2] = {"phi", "temperature"};

  // A field of this rank's grid in working memory: phi (0 to 1), or the temperature, mapped from
  // the model's variables where they differ.
  const float* working(int field) {
    const PhaseFieldCase::OutputMap map = field == 0 ? case_.phiOutput() : case_.temperatureOutput();
    if (map.identity()) return field == 0 ? solver_->phi() : solver_->u();
    if (field == 0)
      solver_->mapPhi(mapped_[0].data(), map.scale, map.offset);
    else
      solver_->mapU(mapped_[1].data(), map.scale, map.offset);
    return mapped_[static_cast<std::size_t>(field)].data();
  }
  // The same copied to the host (pinned on CUDA).
  const float* localOnHost(int field) {
    const auto count = static_cast<std::size_t>(solver_->nodeCount());
    host_[field].copyFrom(working(field), count);
    return host_[field].data();
  }

  const io::CaseDescription& description_;
  const PhaseFieldCase& case_;
#if OCTOFLOW_HAVE_MPI
  std::unique_ptr<parallel::GridDistribution> distribution_;
#endif
  std::unique_ptr<PhaseFieldSolver> solver_;
  std::array<exec::Buffer<float>, 2> host_;  // this rank's grid on the host: phi, temperature
  std::array<exec::Buffer<float>, 2> mapped_;  // the output fields in working memory, where they are mapped
  std::array<std::vector<float>, 2> whole_, piece_;  // gathered (rank 0) and ParaView pieces
  sim::FieldSet fields_;
  double lastTime_ = -1.0, lastTipX_ = 0.0;
};

}  // namespace

std::unique_ptr<sim::Simulation> makePhaseFieldSimulation(const io::CaseDescription& description,
                                                          const PhaseFieldCase& phaseFieldCase,
                                                          const sim::CreateOptions& options) {
  return std::make_unique<PhaseFieldSimulation>(description, phaseFieldCase, options);
}

}  // namespace octoflow::phasefield
