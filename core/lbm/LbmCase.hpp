#pragma once
// The uniform LBM's case section ([lbm], [units], [[boundary]], [[obstacle]], [forces]; schema in
// docs/CASES.md) and the Simulation that runs it: a UniformSolver, or under MPI a DistributedSolver
// over the ranks (parallel/DistributedSolver.hpp). Registered as case.solver = "lbm".
#include <memory>
#include <vector>

#include "geometry/Obstacle.hpp"
#include "io/PhysicalUnits.hpp"
#include "lbm/UniformSolver.hpp"
#include "sim/SolverCase.hpp"

namespace octoflow::io {
class CaseReader;
struct CaseDescription;
}  // namespace octoflow::io

namespace octoflow::lbm {

// Forces on the obstacles, written to <output.directory>/forces.csv.
struct ForcesSettings {
  Index every = 0;                 // 0: no forces file
  double referenceVelocity = 0.0;  // U, lattice units; with the length: cd = 2 fx / (rho0 U^2 A)
  double referenceLength = 0.0;    // D, lattice units
  double referenceArea = 0.0;      // 3D: A (default D^2); 2D: A = D (per unit depth)
  bool coefficients() const { return referenceVelocity > 0.0 && referenceLength > 0.0; }
  // cd = 2 f / (rho0 U^2 A): A = D per unit depth in 2D, reference_area (default D^2) in 3D; NaN
  // without reference values.
  double coefficient(double force, int dimensions) const;
};

class LbmCase : public sim::SolverCase {
public:
  UniformSolverConfig config;  // the whole grid
  io::PhysicalUnits units;
  std::vector<geometry::ObstacleSpec> obstacles;  // rasterised into config.solid
  ForcesSettings forces;

  const std::vector<sim::FieldInfo>& fields() const override;
  std::string describe() const override;
  sim::MemoryNeeds memoryNeeds(exec::Backend backend) const override;
  const std::vector<std::uint8_t>* solidMask() const override { return config.solid.empty() ? nullptr : &config.solid; }
  std::unique_ptr<sim::Simulation> create(const io::CaseDescription& description,
                                          const sim::CreateOptions& options) const override;
};

// The tables the uniform and the octree LBM read alike ([units], [lbm], [[obstacle]] (not
// rasterised), [[boundary]], [forces]) into `result` (config.extent and periodic faces from
// [domain]).
void readFlowTables(const io::CaseReader& reader, const io::CaseDescription& description, LbmCase& result);

// Parses the LBM's tables of a case (the registry's entry).
std::unique_ptr<sim::SolverCase> parseLbmCase(const io::CaseReader& reader, io::CaseDescription& description);
// The LBM section of a case; InputError naming case.solver when the case runs another solver.
const LbmCase& lbmCaseOf(const io::CaseDescription& description);

}  // namespace octoflow::lbm
