#pragma once
#include "common/Extent.hpp"
#include "exec/Backend.hpp"

namespace octoflow::exec {

// OpenMP execution of a point-wise functor: the CPU reference. Static scheduling and no
// reductions across iterations keep results independent of the thread count.
struct CpuExecutor {
  static constexpr Backend backend = Backend::Cpu;

  template <class F>
  void parallelFor(Index count, const F& function) const {
#pragma omp parallel for schedule(static)
    for (Index i = 0; i < count; ++i) function(i);
  }
  void synchronize() const {}
};

}  // namespace octoflow::exec
