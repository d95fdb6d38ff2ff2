#include "Watchdog.hpp"

#include <cstring>

#if OCTOFLOW_HAVE_MPI
#include <mpi.h>
#endif

namespace octoflow::app {

bool fieldsAreSane(sim::Simulation& simulation, sim::FieldFault& fault) {
  const std::vector<sim::FieldLimit> limits = simulation.fieldLimits();
  std::vector<std::string> names;
  for (const sim::FieldLimit& limit : limits) names.push_back(limit.field);
  const bool found = sim::findFieldFault(simulation.backend(), simulation.workingFields(names), limits, fault);
  fault.rank = simulation.rank();
#if OCTOFLOW_HAVE_MPI
  if (simulation.ranks() > 1) {
    int first = found ? simulation.rank() : simulation.ranks();
    MPI_Allreduce(MPI_IN_PLACE, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (first == simulation.ranks()) return true;
    // The faulty rank's finding, to every rank.
    struct Packed {
      char field[64], limit[160];
      long long node[3];
      float values[3];
      int components, rank;
    } packed = {};
    if (simulation.rank() == first) {
      std::strncpy(packed.field, fault.field.c_str(), sizeof packed.field - 1);
      std::strncpy(packed.limit, fault.limit.c_str(), sizeof packed.limit - 1);
      for (int a = 0; a < 3; ++a) packed.node[a] = fault.node[a], packed.values[a] = fault.values[a];
      packed.components = fault.components;
      packed.rank = fault.rank;
    }
    MPI_Bcast(&packed, sizeof packed, MPI_BYTE, first, MPI_COMM_WORLD);
    fault.field = packed.field;
    fault.limit = packed.limit;
    for (int a = 0; a < 3; ++a) fault.node[a] = packed.node[a], fault.values[a] = packed.values[a];
    fault.components = packed.components;
    fault.rank = packed.rank;
    return false;
  }
#endif
  return !found;
}

}  // namespace octoflow::app
