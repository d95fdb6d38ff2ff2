#include "exec/CopyBandwidth.hpp"

#include <algorithm>
#include <chrono>

#include "common/Error.hpp"
#include "exec/Memory.hpp"
#include "exec/cpu/CpuExecutor.hpp"

namespace octoflow::exec {

#if !OCTOFLOW_HAVE_CUDA
CopyBandwidth detail::measureCopyBandwidthCuda(std::size_t, int) {
  throw Error("the CUDA backend is not compiled into this build");
}
#endif

CopyBandwidth measureCopyBandwidth(Backend backend, std::size_t bytes, int repetitions) {
  if (backend == Backend::Cuda) return detail::measureCopyBandwidthCuda(bytes, repetitions);
  const Index count = static_cast<Index>(bytes / sizeof(float));
  Buffer<float> source(MemorySpace::Host, count), destination(MemorySpace::Host, count);
  const CpuExecutor executor;
  float* in = source.data();
  float* out = destination.data();
  // First touch from the same threads that copy, so pages land on their memory nodes.
  executor.parallelFor(count, [=](Index i) { in[i] = 1.0f; out[i] = 0.0f; });
  constexpr int kFewestCopies = 3;
  constexpr double kEnoughSeconds = 0.25;
  double best = 0.0, copying = 0.0;
  for (int r = 0; r < repetitions && (r < kFewestCopies || copying < kEnoughSeconds); ++r) {
    const auto start = std::chrono::steady_clock::now();
    executor.parallelFor(count, [=](Index i) { out[i] = in[i]; });
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    copying += seconds;
    best = std::max(best, 2.0 * count * sizeof(float) / seconds);
  }
  return CopyBandwidth{best, static_cast<std::size_t>(count) * sizeof(float)};
}

}  // namespace octoflow::exec
