#pragma once
// The phase-field solver behind the Simulation interface: fields "phi" and "temperature" (K),
// diagnostics dendrite.csv (solid fraction, interface area, tip positions and the tip velocity
// along x, in SI units).
#include <memory>

#include "phasefield/PhaseFieldCase.hpp"
#include "sim/Simulation.hpp"

namespace octoflow::phasefield {

std::unique_ptr<sim::Simulation> makePhaseFieldSimulation(const io::CaseDescription& description,
                                                          const PhaseFieldCase& phaseFieldCase,
                                                          const sim::CreateOptions& options);

}  // namespace octoflow::phasefield
