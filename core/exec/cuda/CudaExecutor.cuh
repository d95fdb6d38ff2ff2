#pragma once
// CUDA execution of a point-wise functor: one thread per index (a 3D box beyond the launch limits
// goes in several launches), on a stream.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <vector>

#include "common/Extent.hpp"
#include "exec/Backend.hpp"
#include "exec/cuda/CudaCheck.hpp"

namespace octoflow::exec {

namespace detail {
template <class F>
__global__ void parallelForKernel(Index count, F function) {
  const Index i = static_cast<Index>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < count) function(i);
}
// The box's corner comes as three 32-bit values: the bulk kernels sit at their register budget, and
// ptxas spills some of them when it comes as one aggregate (measured on sm_90, CUDA 13).
template <int MinBlocksPerSm, class F>
__global__ void __launch_bounds__(kThreadsPerBlock3, MinBlocksPerSm)
    parallelFor3Kernel(Extent size, unsigned x0, unsigned y0, unsigned z0, F function) {
  const Index i = static_cast<Index>(blockIdx.x) * blockDim.x + threadIdx.x;
  const Index j = static_cast<Index>(blockIdx.y) * blockDim.y + threadIdx.y;
  if (i < size.nx && j < size.ny)
    function(static_cast<Index>(x0) + i, static_cast<Index>(y0) + j, static_cast<Index>(z0 + blockIdx.z));
}
}  // namespace detail

struct CudaExecutor {
  static constexpr Backend backend = Backend::Cuda;
  static constexpr int threadsPerBlock = 256;
  cudaStream_t stream = nullptr;

  template <class F>
  void parallelFor(Index count, const F& function) const {
    if (count <= 0) return;
    const Index blocks = (count + threadsPerBlock - 1) / threadsPerBlock;
    detail::parallelForKernel<<<static_cast<unsigned>(blocks), threadsPerBlock, 0, stream>>>(count, function);
    OCTO_CUDA_CHECK(cudaGetLastError());
  }
  // The same in blocks small enough to put at least two on every multiprocessor (32 to 256
  // threads): for a few thousand threads each waiting on scattered reads (tracer moves), which
  // 256-thread blocks would crowd onto a few multiprocessors.
  template <class F>
  void parallelForSpread(Index count, const F& function) const {
    if (count <= 0) return;
    const Index multiprocessors = std::max(1, currentDeviceMultiprocessors());
    const Index perBlock = std::clamp<Index>((count / (2 * multiprocessors) + 31) / 32 * 32, 32, threadsPerBlock);
    const Index blocks = (count + perBlock - 1) / perBlock;
    detail::parallelForKernel<<<static_cast<unsigned>(blocks), static_cast<unsigned>(perBlock), 0, stream>>>(count, function);
    OCTO_CUDA_CHECK(cudaGetLastError());
  }
  // function(i, j, k) for every node of the extent: blocks of consecutive x (coalesced), a grid
  // row per z plane, so that no thread divides to find its coordinates. MinBlocksPerSm asks the
  // register allocator to leave room for that many resident blocks of 256 threads (2: 128
  // registers a thread, 3: 85, 4: 64): memory-bound kernels need the threads in flight.
  template <int MinBlocksPerSm = 1, class F>
  void parallelFor3(const Extent& extent, const F& function) const {
    parallelFor3<MinBlocksPerSm>(NodeBox::of(extent), function);
  }
  // The same over a box of nodes of a larger grid: function(lo + (i, j, k)). A box needing more
  // than 65535 blocks along y or z (the launch limit) goes in several launches.
  template <int MinBlocksPerSm = 1, class F>
  void parallelFor3(const NodeBox& box, const F& function) const {
    const Extent& extent = box.size;
    if (extent.cellCount() <= 0) return;
    constexpr Index blockSize = kThreadsPerBlock3, maxBlocks = 65535;
    const Index x = extent.nx >= blockSize ? blockSize : (extent.nx + 31) / 32 * 32;
    Index y = blockSize / x;
    if (y > extent.ny) y = extent.ny;
    const dim3 block(static_cast<unsigned>(x), static_cast<unsigned>(y), 1);
    const Index rowsPerLaunch = maxBlocks * y;
    for (Index z0 = 0; z0 < extent.nz; z0 += maxBlocks)
      for (Index y0 = 0; y0 < extent.ny; y0 += rowsPerLaunch) {
        const Extent part{extent.nx, std::min(extent.ny - y0, rowsPerLaunch), std::min(extent.nz - z0, maxBlocks)};
        const dim3 grid(static_cast<unsigned>((part.nx + x - 1) / x), static_cast<unsigned>((part.ny + y - 1) / y),
                        static_cast<unsigned>(part.nz));
        detail::parallelFor3Kernel<MinBlocksPerSm><<<grid, block, 0, stream>>>(
            part, static_cast<unsigned>(box.lo[0]), static_cast<unsigned>(box.lo[1] + y0),
            static_cast<unsigned>(box.lo[2] + z0), function);
        OCTO_CUDA_CHECK(cudaGetLastError());
      }
  }
  // Copies between any two memories (device, pinned host, a peer's device memory opened over CUDA
  // IPC), in order with the stream's kernels.
  void copy(void* destination, const void* source, std::size_t bytes) const {
    if (bytes > 0) OCTO_CUDA_CHECK(cudaMemcpyAsync(destination, source, bytes, cudaMemcpyDefault, stream));
  }
  void synchronize() const { OCTO_CUDA_CHECK(cudaStreamSynchronize(stream)); }
};

// The two queues of a solver's device work. `compute` is the default stream, so that every other
// use of the device (blocking copies of fields, initialisation) stays in order with the steps;
// `halo` is a non-blocking stream of the highest priority: halo packing and copies run beside a
// step's interior kernel, their blocks scheduled first as SMs free up.
class CudaQueues {
public:
  CudaExecutor compute, halo;

  CudaQueues() {
    int least = 0, greatest = 0;
    OCTO_CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
    OCTO_CUDA_CHECK(cudaStreamCreateWithPriority(&halo.stream, cudaStreamNonBlocking, greatest));
    OCTO_CUDA_CHECK(cudaEventCreateWithFlags(&computeMark_, cudaEventDisableTiming));
    OCTO_CUDA_CHECK(cudaEventCreateWithFlags(&haloMark_, cudaEventDisableTiming));
    OCTO_CUDA_CHECK(cudaEventCreateWithFlags(&queuedMark_, cudaEventDisableTiming));
  }
  ~CudaQueues() {
    cudaStreamSynchronize(halo.stream);
    for (cudaEvent_t mark : timelineMarks_) cudaEventDestroy(mark);
    cudaEventDestroy(queuedMark_);
    cudaEventDestroy(haloMark_);
    cudaEventDestroy(computeMark_);
    cudaStreamDestroy(halo.stream);
  }
  CudaQueues(const CudaQueues&) = delete;
  CudaQueues& operator=(const CudaQueues&) = delete;

  // Work queued on `halo` from now on starts after the work queued on `compute` so far.
  void haloAfterCompute() { order(compute, computeMark_, halo); }
  // Work queued on `compute` from now on starts after the work queued on `halo` so far.
  void computeAfterHalo() { order(halo, haloMark_, compute); }
  void synchronize() {
    halo.synchronize();
    compute.synchronize();
  }
  // Marks the work queued on `compute` so far; waitForMarked() returns once that is done, while
  // the device goes on with what was queued after the mark.
  void markQueued() { OCTO_CUDA_CHECK(cudaEventRecord(queuedMark_, compute.stream)); }
  void waitForMarked() { OCTO_CUDA_CHECK(cudaEventSynchronize(queuedMark_)); }

  // A timeline of queued work: marks on either stream while recording, read back as microseconds
  // after the first one once the work is done.
  void startTimeline() {
    marksUsed_ = 0;
    recording_ = true;
  }
  void markTimeline(bool onHalo) {
    if (!recording_) return;
    if (marksUsed_ == timelineMarks_.size()) {
      cudaEvent_t mark;
      OCTO_CUDA_CHECK(cudaEventCreate(&mark));
      timelineMarks_.push_back(mark);
    }
    OCTO_CUDA_CHECK(cudaEventRecord(timelineMarks_[marksUsed_++], onHalo ? halo.stream : compute.stream));
  }
  std::vector<double> stopTimeline() {
    recording_ = false;
    synchronize();
    std::vector<double> microseconds;
    for (std::size_t m = 0; m < marksUsed_; ++m) {
      float milliseconds = 0.0f;
      OCTO_CUDA_CHECK(cudaEventElapsedTime(&milliseconds, timelineMarks_[0], timelineMarks_[m]));
      microseconds.push_back(1000.0 * milliseconds);
    }
    return microseconds;
  }

private:
  static void order(const CudaExecutor& first, cudaEvent_t mark, const CudaExecutor& then) {
    OCTO_CUDA_CHECK(cudaEventRecord(mark, first.stream));
    OCTO_CUDA_CHECK(cudaStreamWaitEvent(then.stream, mark, 0));
  }
  cudaEvent_t computeMark_ = nullptr, haloMark_ = nullptr, queuedMark_ = nullptr;
  std::vector<cudaEvent_t> timelineMarks_;
  std::size_t marksUsed_ = 0;
  bool recording_ = false;
};

}  // namespace octoflow::exec
