#pragma once
// The phase-field solver's case section ([phasefield], [diagnostics]; docs/CASES.md) and the
// Simulation that runs it. Registered as case.solver = "phasefield".
#include <memory>

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
  std::string model = "kobayashi";
  KobayashiMaterial material;
  double dx = 2e-8;  // m
  double dt = 0.0;   // s
  double anisotropy = 0.05, noise = 0.025;
  PhaseFieldConfig config;       // grid units, from the keys above
  Index diagnosticsEvery = 100;  // dendrite.csv

  const std::vector<sim::FieldInfo>& fields() const override;
  std::string describe() const override;
  std::unique_ptr<sim::Simulation> create(const io::CaseDescription& description,
                                          const sim::CreateOptions& options) const override;
  double latentOverCapacity() const { return material.latentHeat / material.heatCapacity; }  // K
};

std::unique_ptr<sim::SolverCase> parsePhaseFieldCase(const io::CaseReader& reader, io::CaseDescription& description);
const PhaseFieldCase& phaseFieldCaseOf(const io::CaseDescription& description);

}  // namespace octoflow::phasefield
