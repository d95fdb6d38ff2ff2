#pragma once
// The phase-field solver's case section ([phasefield], [diagnostics]; docs/CASES.md) and the
// Simulation that runs it. Registered as case.solver = "phasefield".
#include <memory>

#include "phasefield/KarmaRappelModel.hpp"
#include "phasefield/KobayashiModel.hpp"
#include "phasefield/PhaseFieldSolver.hpp"
#include "sim/SolverCase.hpp"

namespace octoflow::io {
class CaseReader;
struct CaseDescription;
}  // namespace octoflow::io

namespace octoflow::phasefield {

class PhaseFieldCase : public sim::SolverCase {
public:
  std::string model = "kobayashi";   // or "karma-rappel"
  KobayashiMaterial material;        // kobayashi
  KarmaRappelParameters karmaRappel; // karma-rappel
  double dx = 2e-8;  // kobayashi: m; karma-rappel: W0
  double dt = 0.0;   // kobayashi: s; karma-rappel: tau0
  double anisotropy = 0.05, noise = 0.025;
  PhaseFieldConfig config;       // grid units, from the keys above
  Index diagnosticsEvery = 100;  // dendrite.csv

  const std::vector<sim::FieldInfo>& fields() const override;
  std::string describe() const override;
  sim::MemoryNeeds memoryNeeds(exec::Backend backend) const override;
  std::unique_ptr<sim::Simulation> create(const io::CaseDescription& description,
                                          const sim::CreateOptions& options) const override;
  double latentOverCapacity() const { return material.latentHeat / material.heatCapacity; }  // K
  bool isKarmaRappel() const { return config.model == PhaseFieldModel::KarmaRappel; }

  // The output fields from the solver's: value = offset + scale * the model's variable. "phi" goes
  // from 0 (liquid) to 1 (solid) in both models; "temperature" is in K (Kobayashi) or U (Karma-Rappel).
  struct OutputMap {
    double scale = 1.0, offset = 0.0;
    bool identity() const { return scale == 1.0 && offset == 0.0; }
  };
  OutputMap phiOutput() const;
  OutputMap temperatureOutput() const;
};

std::unique_ptr<sim::SolverCase> parsePhaseFieldCase(const io::CaseReader& reader, io::CaseDescription& description);
const PhaseFieldCase& phaseFieldCaseOf(const io::CaseDescription& description);

}  // namespace octoflow::phasefield
