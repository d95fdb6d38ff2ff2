#pragma once
#include <chrono>
#include <cstddef>
#include <cstring>
#include <vector>

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
  // The same (on CUDA: in smaller blocks, spread over the multiprocessors).
  template <class F>
  void parallelForSpread(Index count, const F& function) const {
    parallelFor(count, function);
  }
  // function(i, j, k) for every node of the extent, x fastest (MinBlocksPerSm: a CUDA hint).
  template <int MinBlocksPerSm = 1, class F>
  void parallelFor3(const Extent& extent, const F& function) const {
    parallelFor3<MinBlocksPerSm>(NodeBox::of(extent), function);
  }
  // The same over a box of nodes of a larger grid: function(lo + (i, j, k)).
  template <int MinBlocksPerSm = 1, class F>
  void parallelFor3(const NodeBox& box, const F& function) const {
    const Extent& extent = box.size;
#pragma omp parallel for collapse(2) schedule(static)
    for (Index k = 0; k < extent.nz; ++k)
      for (Index j = 0; j < extent.ny; ++j)
        for (Index i = 0; i < extent.nx; ++i) function(box.lo[0] + i, box.lo[1] + j, box.lo[2] + k);
  }
  void copy(void* destination, const void* source, std::size_t bytes) const {
    if (bytes > 0) std::memcpy(destination, source, bytes);
  }
  void synchronize() const {}
};

// The CPU runs everything in call order: one queue under two names (see CudaQueues).
struct CpuQueues {
  CpuExecutor compute, halo;
  void haloAfterCompute() {}
  void computeAfterHalo() {}
  void synchronize() {}
  void markQueued() {}
  void waitForMarked() {}

  // A timeline (see CudaQueues): here the host times of the calls, which run the work.
  void startTimeline() {
    marks_.clear();
    recording_ = true;
  }
  void markTimeline(bool) {
    if (recording_) marks_.push_back(std::chrono::steady_clock::now());
  }
  std::vector<double> stopTimeline() {
    recording_ = false;
    std::vector<double> microseconds;
    for (const auto& mark : marks_) microseconds.push_back(std::chrono::duration<double, std::micro>(mark - marks_[0]).count());
    return microseconds;
  }

private:
  std::vector<std::chrono::steady_clock::time_point> marks_;
  bool recording_ = false;
};

}  // namespace octoflow::exec
