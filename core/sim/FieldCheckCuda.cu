// The watchdog's search on the GPU: the FaultSearch functor over the region, the lowest faulty
// node kept by an atomic minimum.
#include "exec/Memory.hpp"
#include "exec/cuda/CudaExecutor.cuh"
#include "sim/FieldCheck.hpp"

namespace octoflow::sim::detail {

namespace {
struct KeepFirstFault {
  FaultSearch search;
  unsigned long long* first;
  __device__ void operator()(Index i, Index j, Index k) const {
    if (search.faulty(i, j, k)) atomicMin(first, static_cast<unsigned long long>(search.regionIndex(i, j, k)));
  }
};
}  // namespace

// One launch over the region's nodes (no divisions: a thread a node of a row), then the lowest
// index found back to the host. The 8 bytes it needs stay allocated for the process.
std::uint64_t findFirstFaultOnCuda(const FaultSearch& search) {
  static_assert(sizeof(unsigned long long) == sizeof(std::uint64_t), "64-bit atomics");
  static exec::Buffer<unsigned long long>* const first = new exec::Buffer<unsigned long long>(exec::MemorySpace::Device, 1);
  const unsigned long long none = kNoFault;
  first->copyFrom(&none, 1);
  exec::CudaExecutor{}.parallelFor3(search.region, KeepFirstFault{search, first->data()});
  unsigned long long found = kNoFault;
  first->copyTo(&found, 1);
  return found;
}

}  // namespace octoflow::sim::detail
