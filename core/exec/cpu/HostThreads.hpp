#pragma once
#include <exception>

#include "common/Extent.hpp"

namespace octoflow::exec {

// function(i) for i in [0, count) on the host's OpenMP threads, handed out one at a time (for
// items of uneven cost: a regrid's blocks, some copied whole, some built point by point). Each
// item must write only its own outputs: the results do not depend on the thread count. The first
// exception an item throws is thrown here once every thread has stopped (an exception may not
// leave an OpenMP region).
template <class F>
void forEachOnHostThreads(Index count, const F& function) {
  std::exception_ptr failure;
#pragma omp parallel for schedule(dynamic, 1)
  for (Index i = 0; i < count; ++i) {
    try {
      function(i);
    } catch (...) {
#pragma omp critical(octoflow_host_threads_failure)
      if (!failure) failure = std::current_exception();
    }
  }
  if (failure) std::rethrow_exception(failure);
}

}  // namespace octoflow::exec
