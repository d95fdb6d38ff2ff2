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

class SolverCase {
public:
  virtual ~SolverCase() = default;
  // The fields the solver offers for this case (output.fields, [surface], Catalyst).
  virtual const std::vector<FieldInfo>& fields() const = 0;
  // One line for `octoflow validate`: the model and its main parameters.
  virtual std::string describe() const = 0;
  // Nodes where tracers stop (obstacles), whole grid; null: none.
  virtual const std::vector<std::uint8_t>* solidMask() const { return nullptr; }
  // Collective when `options.overMpi`. `description` must outlive the simulation.
  virtual std::unique_ptr<Simulation> create(const io::CaseDescription& description,
                                             const CreateOptions& options) const = 0;
};

}  // namespace octoflow::sim
