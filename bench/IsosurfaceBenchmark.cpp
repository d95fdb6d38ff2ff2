#include "IsosurfaceBenchmark.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <vector>

#include <memory>
#include <string>

#include "BenchmarkCommands.hpp"
#include "common/Error.hpp"
#include "exec/Memory.hpp"
#include "insitu/Isosurface.hpp"

namespace octoflow::bench {

IsosurfaceBenchmarkResult runIsosurfaceBenchmark(const IsosurfaceBenchmarkOptions& options) {
  const bool cuda = options.backend == exec::Backend::Cuda;
  const long long n = options.size > 0 ? options.size : (cuda ? 512 : 64);
  const int repeats = options.repeats > 0 ? options.repeats : (cuda ? 20 : 3);
  if (n < 2) throw InputError("--size", "", "expected at least 2 nodes per axis");
  IsosurfaceBenchmarkResult result;
  result.backend = exec::backendName(options.backend);
  result.device = "CPU (OpenMP)";
  if (cuda) {
    const auto devices = exec::cudaDevices();
    const int current = exec::currentCudaDevice();
    if (current < static_cast<int>(devices.size())) result.device = devices[current].name;
  }
  result.size = n;

  // A diffuse sphere (tanh profile 2 nodes wide, as a phase field has it), radius 0.35 n, off
  // the grid's centre so that no symmetry helps.
  const Extent extent{n, n, n};
  std::vector<float> phi(static_cast<std::size_t>(extent.cellCount()));
  const double centre = 0.5 * (n - 1) + 0.37, radius = 0.35 * n;
#pragma omp parallel for collapse(2)
  for (Index k = 0; k < n; ++k)
    for (Index j = 0; j < n; ++j)
      for (Index i = 0; i < n; ++i) {
        const double dx = i - centre, dy = j - centre, dz = k - centre;
        phi[extent.linear(i, j, k)] =
            static_cast<float>(0.5 * (1.0 + std::tanh((radius - std::sqrt(dx * dx + dy * dy + dz * dz)) / 2.0)));
      }
  exec::Buffer<float> field(exec::workingSpace(options.backend), phi.size());
  field.copyFrom(phi.data(), phi.size());
  result.fieldBytes = static_cast<double>(field.bytes());

  auto extractor = insitu::IsosurfaceExtractor::create(options.backend);
  const insitu::ScalarFieldView view{field.data(), extent, {}};
  const insitu::Surface warmUp = extractor->extract(view, 0.5f);
  result.points = warmUp.pointCount;
  result.triangles = warmUp.triangleCount;
  std::vector<double> seconds;
  result.bestSeconds = 1e30;
  for (int r = 0; r < repeats; ++r) {
    extractor->extract(view, 0.5f);
    const insitu::IsosurfaceTimes times = extractor->lastTimes();
    seconds.push_back(times.extractSeconds);
    if (times.extractSeconds < result.bestSeconds) {
      result.bestSeconds = times.extractSeconds;
      result.bestCopySeconds = times.copySeconds;
    }
  }
  std::sort(seconds.begin(), seconds.end());
  result.medianSeconds = seconds[seconds.size() / 2];

  if (cuda) {  // the whole field to pinned host memory, best of the same number of copies
    exec::Buffer<float> pinned(exec::MemorySpace::Pinned, phi.size());
    result.fieldCopySeconds = 1e30;
    for (int r = 0; r < repeats; ++r) {
      const auto start = std::chrono::steady_clock::now();
      pinned.copyFrom(field.data(), phi.size());
      result.fieldCopySeconds = std::min(
          result.fieldCopySeconds, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
  }
  return result;
}

std::string formatText(const IsosurfaceBenchmarkResult& r) {
  char text[900];
  int used = std::snprintf(text, sizeof text,
                           "octoflow bench isosurface: phi = 0.5 of a diffuse sphere, %lld^3 FP32 field (%.0f MiB) "
                           "on %s [%s]\n"
                           "  %lld triangles, %lld vertices: %.3f ms best (%.3f ms of it copying them to the host), "
                           "%.3f ms median\n",
                           r.size, r.fieldBytes / 1048576.0, r.device.c_str(), r.backend.c_str(), r.triangles, r.points,
                           1e3 * r.bestSeconds, 1e3 * r.bestCopySeconds, 1e3 * r.medianSeconds);
  if (r.fieldCopySeconds > 0.0)
    std::snprintf(text + used, sizeof text - used,
                  "  copying the whole field to pinned host memory instead: %.3f ms (%.1f GB/s)\n",
                  1e3 * r.fieldCopySeconds, r.fieldBytes / r.fieldCopySeconds / 1e9);
  return text;
}

std::string formatJson(const IsosurfaceBenchmarkResult& r) {
  char text[600];
  std::snprintf(text, sizeof text,
                "{\"benchmark\": \"isosurface\", \"backend\": \"%s\", \"device\": \"%s\", \"size\": %lld, "
                "\"triangles\": %lld, \"points\": %lld, \"best_ms\": %.4f, \"median_ms\": %.4f, \"copy_ms\": %.4f, "
                "\"field_bytes\": %.0f, \"field_copy_ms\": %.4f}\n",
                r.backend.c_str(), r.device.c_str(), r.size, r.triangles, r.points, 1e3 * r.bestSeconds,
                1e3 * r.medianSeconds, 1e3 * r.bestCopySeconds, r.fieldBytes, 1e3 * r.fieldCopySeconds);
  return text;
}

}  // namespace octoflow::bench

namespace octoflow::bench {

std::function<int()> defineIsosurfaceBenchmark(CLI::App& command) {
  struct Flags {
    std::string backend = "auto";
    long long size = 0;
    int repeats = 0;
    bool json = false;
  };
  auto flags = std::make_shared<Flags>();
  command.add_option("--size", flags->size, "Nodes per axis of the cubic field (default 512 on CUDA, 64 on CPU)");
  command.add_option("--repeats", flags->repeats, "Timed extractions (default 20 on CUDA, 3 on CPU)");
  command.add_option("--backend", flags->backend, "auto | cuda | cpu");
  command.add_flag("--json", flags->json, "One JSON object instead of text");
  return [flags] {
    IsosurfaceBenchmarkOptions options;
    options.backend = exec::resolveBackend(exec::parseBackendChoice(flags->backend, "--backend"));
    if (flags->size < 0) throw InputError("--size", "", "expected a positive integer");
    if (flags->repeats < 0) throw InputError("--repeats", "", "expected a positive integer");
    options.size = flags->size;
    options.repeats = flags->repeats;
    const auto result = runIsosurfaceBenchmark(options);
    std::fputs((flags->json ? formatJson(result) : formatText(result)).c_str(), stdout);
    return 0;
  };
}

}  // namespace octoflow::bench
