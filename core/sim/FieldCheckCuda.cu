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
  __device__ void operator()(Index n) const {
    if (search.faulty(n)) atomicMin(first, static_cast<unsigned long long>(n));
  }
};
}  // namespace

std::uint64_t findFirstFaultOnCuda(const FaultSearch& search) {
  static_assert(sizeof(unsigned long long) == sizeof(std::uint64_t), "64-bit atomics");
  exec::Buffer<unsigned long long> first(exec::MemorySpace::Device, 1);
  const unsigned long long none = kNoFault;
  first.copyFrom(&none, 1);
  exec::CudaExecutor{}.parallelFor(search.region.cellCount(), KeepFirstFault{search, first.data()});
  unsigned long long found = kNoFault;
  first.copyTo(&found, 1);
  return found;
}

}  // namespace octoflow::sim::detail
