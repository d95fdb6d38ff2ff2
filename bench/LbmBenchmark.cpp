#include "LbmBenchmark.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "exec/CopyBandwidth.hpp"
#include "lbm/UniformSolver.hpp"

namespace octoflow::bench {

namespace {
double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}
}  // namespace

LbmBenchmarkResult runLbmBenchmark(const LbmBenchmarkOptions& options) {
  const bool cuda = options.backend == exec::Backend::Cuda;
  const int dimensions = lbm::latticeDimensions(options.lattice);
  long long size = options.size;
  if (size <= 0) size = dimensions == 2 ? (cuda ? 4096 : 512) : (cuda ? 256 : 64);

  lbm::UniformSolverConfig config;
  config.lattice = options.lattice;
  config.collision = options.collision;
  config.storage = options.storage;
  config.les.model = options.les;
  config.extent = Extent{size, size, dimensions == 3 ? size : 1};
  config.tau = 0.6f;
  for (int axis = 0; axis < 3; ++axis) config.faces.setAxisPeriodic(axis);
  lbm::UniformSolver solver(config, options.backend);

  LbmBenchmarkResult result;
  result.lattice = lbm::latticeName(options.lattice);
  result.collision = lbm::collisionName(options.collision);
  result.storage = lbm::storageName(options.storage);
  result.les = options.les == lbm::LesModel::Smagorinsky ? "smagorinsky" : "none";
  result.backend = exec::backendName(options.backend);
  result.device = "CPU (OpenMP)";
  if (cuda) {
    const auto devices = exec::cudaDevices();
    if (!devices.empty()) result.device = devices.front().name;
  }
  result.nx = config.extent.nx;
  result.ny = config.extent.ny;
  result.nz = config.extent.nz;
  result.bytesPerUpdate = 2.0 * solver.populationCount() * lbm::storageBytes(options.storage);

  // Copy roofline on a buffer of the population array's size (at least 256 MiB, so caches
  // do not flatter it).
  const std::size_t copyBytes =
      std::max<std::size_t>(256u << 20, static_cast<std::size_t>(solver.populationCount()) * solver.nodeCount() * 4);
  result.copyBytesPerSecond = exec::measureCopyBandwidth(options.backend, copyBytes).bytesPerSecond;

  // Warm-up, then size the timed run to about a second unless told.
  auto start = std::chrono::steady_clock::now();
  solver.advance(2);
  const double perStep = std::max(secondsSince(start) / 2.0, 1e-6);
  long long steps = options.steps > 0 ? options.steps : std::clamp<long long>(static_cast<long long>(1.0 / perStep), 4, 10000);
  steps += steps % 2;  // an even count ends on the array the run started from
  start = std::chrono::steady_clock::now();
  solver.advance(steps);
  result.seconds = secondsSince(start);
  result.steps = steps;
  result.mlups = static_cast<double>(solver.nodeCount()) * steps / result.seconds / 1e6;
  result.effectiveBytesPerSecond = result.mlups * 1e6 * result.bytesPerUpdate;
  result.fractionOfCopy = result.effectiveBytesPerSecond / result.copyBytesPerSecond;
  return result;
}

std::string formatText(const LbmBenchmarkResult& r) {
  char text[640];
  std::snprintf(text, sizeof text,
                "octoflow bench lbm: %s %s %s les=%s on %s [%s], %lldx%lldx%lld nodes, %lld steps in %.3f s\n"
                "  %.1f MLUPS, %.0f B/update -> %.1f GB/s effective\n"
                "  copy bandwidth (same process) %.1f GB/s -> %.1f %% of the copy roofline\n",
                r.lattice.c_str(), r.collision.c_str(), r.storage.c_str(), r.les.c_str(), r.device.c_str(), r.backend.c_str(), r.nx,
                r.ny, r.nz, r.steps, r.seconds, r.mlups, r.bytesPerUpdate, r.effectiveBytesPerSecond / 1e9, r.copyBytesPerSecond / 1e9,
                100.0 * r.fractionOfCopy);
  return text;
}

std::string formatJson(const LbmBenchmarkResult& r) {
  char text[800];
  std::snprintf(text, sizeof text,
                "{\"benchmark\": \"lbm\", \"lattice\": \"%s\", \"collision\": \"%s\", \"storage\": \"%s\", \"les\": \"%s\", "
                "\"backend\": \"%s\", \"device\": \"%s\", "
                "\"size\": [%lld, %lld, %lld], \"steps\": %lld, \"seconds\": %.6f, \"mlups\": %.3f, "
                "\"bytes_per_update\": %.0f, \"effective_gb_per_s\": %.3f, \"copy_gb_per_s\": %.3f, "
                "\"fraction_of_copy\": %.4f}\n",
                r.lattice.c_str(), r.collision.c_str(), r.storage.c_str(), r.les.c_str(), r.backend.c_str(), r.device.c_str(), r.nx, r.ny,
                r.nz, r.steps, r.seconds, r.mlups,
                r.bytesPerUpdate, r.effectiveBytesPerSecond / 1e9, r.copyBytesPerSecond / 1e9, r.fractionOfCopy);
  return text;
}

}  // namespace octoflow::bench
