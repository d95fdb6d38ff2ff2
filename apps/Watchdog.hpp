#pragma once
// The watchdog of a run: the solver's fields searched where they live for values that are not
// finite or out of their sane range (sim::Simulation::fieldLimits), over every rank's owned
// nodes; every rank learns of a fault any rank finds.
#include "sim/FieldCheck.hpp"
#include "sim/Simulation.hpp"

namespace octoflow::app {

// Collective. Whether the current fields are sane; if not, `fault` is the first fault of the
// lowest rank that found one (the same on every rank).
bool fieldsAreSane(sim::Simulation& simulation, sim::FieldFault& fault);

// A run stopped by the watchdog: the CLI prints the message and exits with code 3.
class DivergenceError : public Error {
public:
  using Error::Error;
};

}  // namespace octoflow::app
