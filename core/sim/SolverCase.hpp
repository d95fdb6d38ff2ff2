#pragma once
// A solver's own case section, parsed and checked (the keys of its tables: [lbm], [phasefield],
// ...), and the factory of the Simulation that runs it. The shared parser (io/CaseFile.hpp) reads
// [case] [domain] [output] [insitu] [tracers] [surface] and hands the rest to the solver named by
// `case.solver` through the registry (sim/SolverRegistry.hpp).
#include <memory>
#include <string>
#include <vector>

#include "exec/Backend.hpp"
#include "sim/Simulation.hpp"

namespace octoflow::io {
struct CaseDescription;
}

namespace octoflow::sim {

struct CreateOptions {
  exec::Backend backend = exec::Backend::Cpu;
  // Run over the ranks of MPI_COMM_WORLD (builds with MPI; one rank runs the whole grid). Off: this
  // process runs the whole grid alone (the ParaView plugin).
  bool overMpi = false;
};

// What a node of the grid costs a solver, and the most nodes one grid (a rank's piece) may hold:
// the run refuses a domain.size beyond what the machine has before anything is allocated.
struct MemoryNeeds {
  double workingBytesPerNode = 0.0;  // where the solver lives (device memory on CUDA)
  double hostBytesPerNode = 0.0;     // host copies of the fields (pinned with CUDA)
  double gatherBytesPerNode = 0.0;   // rank 0 of several: the whole grid's fields gathered for output
  double tracerBytesPerNode = 0.0;   // more working memory where tracers run (the LBM's velocity tap)
  Index maxNodesPerGrid = Index{1} << 40;
};

// Refuses a run over several MPI ranks (`options.overMpi` and more than one rank) of something
// that runs on one process: InputError on `key` saying "<what> runs on one process (<why>)".
void requireOneProcess(const CreateOptions& options, const std::string& casePath, const std::string& key,
                       const std::string& what, const std::string& why);

class SolverCase {
public:
  virtual ~SolverCase() = default;
  // The fields the solver offers for this case (output.fields, [surface], Catalyst).
  virtual const std::vector<FieldInfo>& fields() const = 0;
  // One line for `octoflow validate`: the model and its main parameters.
  virtual std::string describe() const = 0;
  // Whether its simulations have levels (Simulation::blockGrid): outputs are then AMR datasets.
  virtual bool hasLevels() const { return false; }
  // Nodes where tracers stop (obstacles), whole grid; null: none.
  virtual const std::vector<std::uint8_t>* solidMask() const { return nullptr; }
  virtual MemoryNeeds memoryNeeds(exec::Backend backend) const = 0;
  // Collective when `options.overMpi`. `description` must outlive the simulation.
  virtual std::unique_ptr<Simulation> create(const io::CaseDescription& description,
                                             const CreateOptions& options) const = 0;
};

}  // namespace octoflow::sim
