#pragma once
// The uniform LBM behind the Simulation interface: one UniformSolver, or a DistributedSolver over
// the ranks of MPI_COMM_WORLD. Fields "density" and "velocity"; diagnostics: forces.csv (the force
// on the obstacles, drag and lift coefficients, SI values with [units]).
#include <array>
#include <memory>

#include "lbm/LbmCase.hpp"
#include "sim/Simulation.hpp"

namespace octoflow::lbm {

// What every LBM solver reports alike: the watchdog's sane ranges (lattice units), the fields in
// physical units beside the lattice ones with [units] (velocity in m/s, gauge pressure in Pa) and
// the files' metadata (scales, time).
std::vector<sim::FieldLimit> flowFieldLimits();
std::vector<sim::DerivedArray> flowPhysicalArrays(const io::PhysicalUnits& units, const float* density,
                                                  const float* velocity, std::size_t points);
std::vector<std::pair<std::string, double>> flowFileMetadata(const io::PhysicalUnits& units, Index step);
// forces.csv ([forces]): its columns, and the row of a step from the force on the obstacles in
// lattice units (drag and lift coefficients, SI values with [units]).
sim::DiagnosticsLog forcesLog(const LbmCase& lbmCase);
std::vector<double> forcesRow(const LbmCase& lbmCase, Index step, const std::array<double, 3>& force, int dimensions);

std::unique_ptr<sim::Simulation> makeLbmSimulation(const io::CaseDescription& description, const LbmCase& lbmCase,
                                                   const sim::CreateOptions& options);
// The same around a UniformSolver the caller made and keeps (benchmarks that set its initial
// state): one rank, no MPI.
std::unique_ptr<sim::Simulation> wrapUniformSolver(const io::CaseDescription& description, const LbmCase& lbmCase,
                                                   UniformSolver& solver);

}  // namespace octoflow::lbm
