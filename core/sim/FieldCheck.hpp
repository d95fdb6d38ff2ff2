#pragma once
// The watchdog's search where the fields live (device memory on CUDA): the first node of a region
// whose value is not finite or outside a field's sane range (sim/Simulation.hpp FieldLimit). One
// functor for the CPU and the GPU; the GPU keeps the lowest faulty node with an atomic minimum,
// so both find the same node.
#include <cmath>
#include <cstdint>
#include <string>

#include "common/Extent.hpp"
#include "common/Macros.hpp"
#include "exec/Backend.hpp"
#include "sim/Simulation.hpp"

namespace octoflow::sim {

constexpr std::uint64_t kNoFault = ~std::uint64_t{0};

struct FaultSearch {
  const float* values;  // `components` values a node (xyz together), nodes of `grid`
  int components;
  Extent grid;          // the array's nodes
  NodeBox region;       // the nodes searched, in the array's coordinates
  float lowest, highest;
  bool magnitude;

  // The node at (i, j, k) of the array (inside `region`).
  OCTO_HD bool faulty(Index i, Index j, Index k) const {
    const float* v = values + grid.linear(i, j, k) * components;
    if (magnitude) {
      float sum = 0.0f;
      for (int c = 0; c < components; ++c) sum += v[c] * v[c];
      // A non-finite component makes the sum non-finite: the negated test catches NaN too.
      return !(sum < highest * highest);
    }
    for (int c = 0; c < components; ++c)
      if (!(v[c] >= lowest && v[c] <= highest)) return true;
    return false;
  }
  // Its index among the region's nodes (x fastest), which orders the faults.
  OCTO_HD std::uint64_t regionIndex(Index i, Index j, Index k) const {
    return static_cast<std::uint64_t>(region.size.linear(i - region.lo[0], j - region.lo[1], k - region.lo[2]));
  }
};

// The lowest node of `search.region` (its linear index in the region) that is faulty, or kNoFault.
std::uint64_t findFirstFault(exec::Backend backend, const FaultSearch& search);

// A fault found by the watchdog, for its message.
struct FieldFault {
  std::string field;
  std::string limit;        // FieldLimit::describe()
  Index node[3] = {0, 0, 0};  // whole-grid coordinates
  float values[3] = {0.0f, 0.0f, 0.0f};
  int components = 1;
  int rank = 0;
  std::string describe() const;
};

// Searches every limited field of `fields` (working memory, sim::Simulation::workingFields) over
// its owned nodes; returns whether a fault was found and fills `fault` with the first one.
bool findFieldFault(exec::Backend backend, const FieldSet& fields, const std::vector<FieldLimit>& limits,
                    FieldFault& fault);

// Collective: the watchdog's check. Whether the current fields are sane over every rank's owned
// nodes; if not, `fault` is the first fault of the lowest rank that found one (the same on every
// rank).
bool fieldsAreSane(Simulation& simulation, FieldFault& fault);

namespace detail {
std::uint64_t findFirstFaultOnCuda(const FaultSearch& search);
}

}  // namespace octoflow::sim
