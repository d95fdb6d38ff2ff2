#pragma once
// The uniform LBM behind the Simulation interface: one UniformSolver, or a DistributedSolver over
// the ranks of MPI_COMM_WORLD. Fields "density" and "velocity"; diagnostics: forces.csv (the force
// on the obstacles, drag and lift coefficients, SI values with [units]).
#include <memory>

#include "lbm/LbmCase.hpp"
#include "sim/Simulation.hpp"

namespace octoflow::lbm {

std::unique_ptr<sim::Simulation> makeLbmSimulation(const io::CaseDescription& description, const LbmCase& lbmCase,
                                                   const sim::CreateOptions& options);
// The same around a UniformSolver the caller made and keeps (benchmarks that set its initial
// state): one rank, no MPI.
std::unique_ptr<sim::Simulation> wrapUniformSolver(const io::CaseDescription& description, const LbmCase& lbmCase,
                                                   UniformSolver& solver);

}  // namespace octoflow::lbm
