#include "sim/FieldCheck.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "common/Error.hpp"
#include "exec/Memory.hpp"

#if OCTOFLOW_HAVE_MPI
#include <mpi.h>
#endif

namespace octoflow::sim {

std::string FieldLimit::describe() const {
  char text[160];
  if (magnitude)
    std::snprintf(text, sizeof text, "|%s| < %g", field.c_str(), static_cast<double>(highest));
  else
    std::snprintf(text, sizeof text, "%g <= %s <= %g", static_cast<double>(lowest), field.c_str(),
                  static_cast<double>(highest));
  return text;
}

const BlockFieldSet& Simulation::fetchBlockFields(const std::vector<std::string>&, BlockFieldsFor) {
  throw Error("this solver has no blocks (fetchBlockFields called on a uniform grid)");
}
const BlockFieldSet& Simulation::workingBlockFields(const std::vector<std::string>&) {
  throw Error("this solver has no blocks (workingBlockFields called on a uniform grid)");
}

std::string FieldFault::describe() const {
  char text[320];
  char value[120];
  if (components == 3)
    std::snprintf(value, sizeof value, "(%g, %g, %g)", static_cast<double>(values[0]), static_cast<double>(values[1]),
                  static_cast<double>(values[2]));
  else
    std::snprintf(value, sizeof value, "%g", static_cast<double>(values[0]));
  std::snprintf(text, sizeof text, "%s = %s at node (%lld, %lld, %lld) (rank %d): outside the sane range %s",
                field.c_str(), value, static_cast<long long>(node[0]), static_cast<long long>(node[1]),
                static_cast<long long>(node[2]), rank, limit.c_str());
  return text;
}

std::uint64_t findFirstFault(exec::Backend backend, const FaultSearch& search) {
  if (backend == exec::Backend::Cuda) {
#if OCTOFLOW_HAVE_CUDA
    return detail::findFirstFaultOnCuda(search);
#else
    throw Error("this build has no CUDA");
#endif
  }
  const NodeBox& r = search.region;
  std::uint64_t first = kNoFault;
#pragma omp parallel for collapse(2) reduction(min : first) schedule(static)
  for (Index k = r.lo[2]; k < r.lo[2] + r.size.nz; ++k)
    for (Index j = r.lo[1]; j < r.lo[1] + r.size.ny; ++j)
      for (Index i = r.lo[0]; i < r.lo[0] + r.size.nx; ++i)
        if (search.faulty(i, j, k)) {
          first = std::min(first, search.regionIndex(i, j, k));
          break;  // the row's first is its lowest
        }
  return first;
}

bool findFieldFault(exec::Backend backend, const FieldSet& fields, const std::vector<FieldLimit>& limits,
                    FieldFault& fault) {
  NodeBox region = fields.owned;
  for (int axis = 0; axis < 3; ++axis) region.lo[axis] -= fields.box.lo[axis];
  for (const FieldLimit& limit : limits) {
    int components = 1;
    const float* values = nullptr;
    for (const FieldSet::Array& array : fields.arrays)
      if (array.name == limit.field) values = array.values, components = array.components;
    if (!values) continue;
    const FaultSearch search{values, components, fields.box.size, region, limit.lowest, limit.highest, limit.magnitude};
    const std::uint64_t first = findFirstFault(backend, search);
    if (first == kNoFault) continue;
    Index i, j, k;
    region.size.coordinates(static_cast<Index>(first), i, j, k);
    const Index node = fields.box.size.linear(region.lo[0] + i, region.lo[1] + j, region.lo[2] + k);
    fault.field = limit.field;
    fault.limit = limit.describe();
    fault.components = std::min(components, 3);
    exec::copyBytes(fault.values, values + node * components, sizeof(float) * static_cast<std::size_t>(fault.components));
    fault.node[0] = fields.owned.lo[0] + i;
    fault.node[1] = fields.owned.lo[1] + j;
    fault.node[2] = fields.owned.lo[2] + k;
    return true;
  }
  return false;
}

bool fieldsAreSane(Simulation& simulation, FieldFault& fault) {
  const std::vector<FieldLimit> limits = simulation.fieldLimits();
  std::vector<std::string> names;
  for (const FieldLimit& limit : limits) names.push_back(limit.field);
  const bool found = findFieldFault(simulation.backend(), simulation.workingFields(names), limits, fault);
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

}  // namespace octoflow::sim
