#include <algorithm>

#include "common/Extent.hpp"
#include "exec/CopyBandwidth.hpp"
#include "exec/Memory.hpp"
#include "exec/cuda/CudaCheck.hpp"

namespace octoflow::exec::detail {

namespace {
// float4 loads and stores: the widest per-thread access, as a well-tuned stencil would use.
__global__ void copyKernel(const float4* __restrict__ in, float4* __restrict__ out, Index count) {
  const Index stride = static_cast<Index>(gridDim.x) * blockDim.x;
  for (Index i = static_cast<Index>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride) out[i] = in[i];
}
}  // namespace

CopyBandwidth measureCopyBandwidthCuda(std::size_t bytes, int repetitions) {
  const Index count = static_cast<Index>(bytes / sizeof(float4));
  Buffer<float4> source(MemorySpace::Device, count), destination(MemorySpace::Device, count);
  source.setZero();
  const int threads = 256;
  const int blocks = std::max(1, currentDeviceMultiprocessors()) * 8;
  cudaEvent_t start, stop;
  OCTO_CUDA_CHECK(cudaEventCreate(&start));
  OCTO_CUDA_CHECK(cudaEventCreate(&stop));
  copyKernel<<<blocks, threads>>>(source.data(), destination.data(), count);  // warm-up
  OCTO_CUDA_CHECK(cudaGetLastError());
  double best = 0.0;
  for (int r = 0; r < repetitions; ++r) {
    OCTO_CUDA_CHECK(cudaEventRecord(start));
    copyKernel<<<blocks, threads>>>(source.data(), destination.data(), count);
    OCTO_CUDA_CHECK(cudaEventRecord(stop));
    OCTO_CUDA_CHECK(cudaEventSynchronize(stop));
    float milliseconds = 0.0f;
    OCTO_CUDA_CHECK(cudaEventElapsedTime(&milliseconds, start, stop));
    best = std::max(best, 2.0 * count * sizeof(float4) / (milliseconds * 1e-3));
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return CopyBandwidth{best, static_cast<std::size_t>(count) * sizeof(float4)};
}

}  // namespace octoflow::exec::detail
