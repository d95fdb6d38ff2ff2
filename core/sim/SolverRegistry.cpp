#include "sim/SolverRegistry.hpp"

#if OCTOFLOW_HAVE_MPI
#include <mpi.h>
#endif

#include "common/Error.hpp"

#include "amr/AmrLbmCase.hpp"
#include "lbm/LbmCase.hpp"
#include "ns/NsCase.hpp"
#include "phasefield/PhaseFieldCase.hpp"

namespace octoflow::sim {

const std::vector<SolverEntry>& solvers() {
  static const std::vector<SolverEntry> entries = {
      {"lbm", "uniform lattice Boltzmann (D2Q9/D3Q19/D3Q27)", {"lbm", "units", "boundary", "obstacle", "forces"},
       &lbm::parseLbmCase},
      {"lbm-amr", "octree AMR lattice Boltzmann (D3Q19/D3Q27, static refinement around obstacles)",
       {"lbm", "units", "boundary", "obstacle", "forces", "amr"}, &amr::parseAmrLbmCase},
      {"phasefield", "phase-field dendritic solidification (Kobayashi model, pure Ni)", {"phasefield", "diagnostics"},
       &phasefield::parsePhaseFieldCase},
      {"ns2d", "2D incompressible Navier-Stokes (SMAC, cubic semi-Lagrangian, multigrid; cylinder, cavity, Taylor-Green)",
       {"ns", "diagnostics"}, &ns::parseNsCase},
  };
  return entries;
}

void requireOneProcess(const CreateOptions& options, const std::string& casePath, const std::string& key,
                       const std::string& what, const std::string& why) {
#if OCTOFLOW_HAVE_MPI
  if (!options.overMpi) return;
  int ranks = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  if (ranks > 1)
    throw InputError(casePath, key, what + " runs on one process (" + why + "): run it without mpirun, or with -np 1");
#else
  (void)options, (void)casePath, (void)key, (void)what, (void)why;
#endif
}

const SolverEntry* findSolver(const std::string& name) {
  for (const SolverEntry& entry : solvers())
    if (name == entry.name) return &entry;
  return nullptr;
}

}  // namespace octoflow::sim
