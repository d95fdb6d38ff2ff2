#pragma once
// Scalars derived from a solver's fields where they live (device memory on CUDA), for the
// isosurfaces of fields the solver does not hold as scalars: the flow's speed |u|.
#include "common/Extent.hpp"
#include "common/Macros.hpp"
#include "exec/Backend.hpp"

#include <cmath>

namespace octoflow::insitu {

struct SpeedOfVelocity {
  const float* velocity;  // xyz per node
  float* speed;           // one value per node

  OCTO_HD void operator()(Index n) const {
    const float x = velocity[3 * n], y = velocity[3 * n + 1], z = velocity[3 * n + 2];
    speed[n] = sqrtf(x * x + y * y + z * z);
  }
};

// speed[n] = |velocity[n]| for `nodes` nodes in the backend's working memory; returns once the
// values are queued (CUDA: on the default stream, before any later work on it).
void computeSpeed(exec::Backend backend, const float* velocity, Index nodes, float* speed);

namespace detail {
void computeSpeedOnCuda(Index nodes, const SpeedOfVelocity& speed);
}

}  // namespace octoflow::insitu
