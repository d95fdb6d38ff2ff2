#include "LbmBenchmark.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <map>
#include <type_traits>

#include <memory>
#include <string>

#include "BenchTiming.hpp"
#include "BenchmarkCommands.hpp"
#include "common/Error.hpp"
#include "exec/CopyBandwidth.hpp"
#include "lbm/UniformSolver.hpp"

#if OCTOFLOW_HAVE_MPI
#include <mpi.h>

#include "parallel/DistributedSolver.hpp"
#endif

namespace octoflow::bench {

namespace {
// The timed run (BenchTiming.hpp); `haloTimes` reads the solver's halo exchange times
// (DistributedSolver::HaloTimes), if any, around the timed steps.
template <class Solver, class HaloTimes = std::nullptr_t>
void timeSteps(Solver& solver, long long requestedSteps, LbmBenchmarkResult& result, HaloTimes haloTimes = nullptr) {
  TimedSteps timed;
  if constexpr (!std::is_same_v<HaloTimes, std::nullptr_t>) {
    // The last call is the timed one: its halo times stay.
    timed = bench::timeSteps(
        [&](long long steps) {
          const auto before = haloTimes();
          solver.advance(steps);
          solver.synchronize();
          const auto after = haloTimes();
          result.haloSecondsPerStep = (after.total - before.total) / steps;
          result.haloWaitSecondsPerStep = (after.waitingForCopies - before.waitingForCopies) / steps;
          result.haloMpiSecondsPerStep = (after.inMpi - before.inMpi) / steps;
        },
        requestedSteps, true, 10000);
  } else {
    timed = timeAdvance(solver, requestedSteps, true, 10000);
  }
  result.steps = timed.steps;
  result.seconds = timed.seconds;
}

// The box starts in motion, not at rest (a uniform state would hide a wrong halo from --digest):
// three shear waves, u = A (sin 2pi y/ny, sin 2pi z/nz, sin 2pi x/nx) (2D: A (sin 2pi y/ny,
// sin 2pi x/nx, 0)), set on every node of this grid by its whole-grid coordinates (ghost layers
// wrapped across the periodic faces).
void startShearWaves(lbm::UniformSolver& solver, const Extent& whole) {
  constexpr double kAmplitude = 0.02, kTwoPi = 6.283185307179586;
  const NodeBox box = solver.localBox();
  const auto wave = [&](Index node, Index period) {
    const Index wrapped = ((node % period) + period) % period;
    return static_cast<float>(kAmplitude * std::sin(kTwoPi * static_cast<double>(wrapped) / static_cast<double>(period)));
  };
  const bool flat = whole.nz == 1;
  std::vector<float> velocity(static_cast<std::size_t>(3 * box.size.cellCount()));
  std::size_t n = 0;
  for (Index k = box.lo[2]; k < box.lo[2] + box.size.nz; ++k)
    for (Index j = box.lo[1]; j < box.lo[1] + box.size.ny; ++j)
      for (Index i = box.lo[0]; i < box.lo[0] + box.size.nx; ++i) {
        velocity[n++] = wave(j, whole.ny);
        velocity[n++] = flat ? wave(i, whole.nx) : wave(k, whole.nz);
        velocity[n++] = flat ? 0.0f : wave(i, whole.nx);
      }
  solver.initialize(nullptr, velocity.data());
}

// `--digest`: the whole grid's populations gathered on rank 0 (collective), as one solver of the
// whole grid holds them.
template <class Solver>
void digestPopulations(Solver& solver, LbmBenchmarkResult& result) {
  const std::vector<float> populations = solver.populationsOnHost();
  result.digestStep = solver.step();
  Digest digest;
  digest.add(populations.data(), populations.size() * sizeof(float));
  result.digest = digest.hex();
}
std::string blockingLabel(const lbm::TemporalBlocking& blocking, int dimensions) {
  if (!blocking.enabled()) return "single-step";
  std::string label = blocking.name() + " " + std::to_string(blocking.block[0]) + "x" + std::to_string(blocking.block[1]);
  if (dimensions == 3) label += "x" + std::to_string(blocking.block[2]);
  return label;
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
  config.les = lbm::Les::withDefaultConstant(options.les);
  const int ranks = worldRanks();
  // Weak scaling grows the slowest axis (z; y in 2D), the one the ranks are cut along.
  const long long grown = options.weak ? size * ranks : size;
  config.extent = dimensions == 3 ? Extent{size, size, grown} : Extent{size, grown, 1};
  config.tau = 0.6f;
  if (options.forced) config.acceleration = {1e-6f, 0.0f, 0.0f};
  for (int axis = 0; axis < 3; ++axis) config.faces.setAxisPeriodic(axis);
  if (options.walls) {
    config.faces.setType(2, lbm::FaceType::Wall);
    config.faces.setType(3, lbm::FaceType::Wall);
  }
  config.blocking = options.blocking;
  config.fp16NodePairs = options.nodesPerThread == 2;
  if (ranks > 1 && options.blocking.enabled())
    throw InputError("--shared-steps", "", "temporal blocking runs on one process: run without mpirun, or with -np 1");
  if (const lbm::BlockingProblem problem = lbm::blockingProblem(config))
    throw InputError(problem.key == "lbm.blocking.register_steps" ? "--register-steps"
                     : problem.key == "lbm.blocking.warp_shuffle"   ? "--warp-shuffle"
                     : problem.key == "lbm.blocking.block"          ? "--block"
                     : problem.key == "lbm.blocking.shared_steps"   ? "--shared-steps"
                                                                    : "--lattice",
                     "", problem.key + ": " + problem.reason);

  LbmBenchmarkResult result;
  result.lattice = lbm::latticeName(options.lattice);
  result.collision = lbm::collisionName(options.collision);
  result.storage = lbm::storageName(options.storage);
  result.les = options.les == lbm::LesModel::Smagorinsky ? "smagorinsky" : (options.les == lbm::LesModel::Csm ? "csm" : "none");
  result.forced = options.forced;
  result.walls = options.walls;
  result.blocking = blockingLabel(options.blocking, dimensions);
  result.fp16NodePairs = config.fp16NodePairs;
  result.backend = exec::backendName(options.backend);
  result.device = "CPU (OpenMP)";
  result.nx = config.extent.nx;
  result.ny = config.extent.ny;
  result.nz = config.extent.nz;
  result.ranks = ranks;
  result.weak = options.weak;
  const int q = lbm::latticeQ(options.lattice);
  result.bytesPerUpdate = 2.0 * q * lbm::storageBytes(options.storage);

  // The copy roofline of this rank's device, on a buffer of its population array's size (at
  // least 256 MiB, so caches do not flatter it); measured once the rank's device is chosen.
  const auto measureCopy = [&] {
    if (cuda) {
      const auto devices = exec::cudaDevices();
      const int current = exec::currentCudaDevice();
      if (current < static_cast<int>(devices.size())) result.device = devices[current].name;
    }
    const std::size_t copyBytes =
        std::max<std::size_t>(256u << 20, static_cast<std::size_t>(q) * config.extent.cellCount() / ranks * 4);
    // Once a process for each backend and size: the rows of --matrix share it (a 256 MiB copy
    // a row took most of a small matrix's time).
    static std::map<std::pair<int, std::size_t>, double> measured;
    const std::pair<int, std::size_t> key{static_cast<int>(options.backend), copyBytes};
    if (!measured.count(key)) measured[key] = exec::measureCopyBandwidth(options.backend, copyBytes).bytesPerSecond;
    result.copyBytesPerSecond = measured[key];
  };
  // The timeline's step: the first of the timed run (the warm-up ran steps 0 and 1).
  if (options.timeline) result.timelineStep = 2;
  if (ranks == 1) {
    lbm::UniformSolver timed(config, options.backend);
    startShearWaves(timed, config.extent);
    timed.recordTimeline(result.timelineStep);
    measureCopy();
    timeSteps(timed, options.steps, result);
    result.timeline = timed.timeline();
    if (options.digest) digestPopulations(timed, result);
  } else {
#if OCTOFLOW_HAVE_MPI
    parallel::DistributedSolver timed(MPI_COMM_WORLD, config, options.backend);
    startShearWaves(timed.local(), config.extent);
    result.report = timed.rank() == 0;
    result.halo = timed.haloPath();
    timed.recordTimeline(result.timelineStep);
    measureCopy();
    timeSteps(timed, options.steps, result, [&] { return timed.haloTimes(); });
    result.timeline = timed.timeline();
    if (options.digest) digestPopulations(timed, result);
#endif
  }
  result.mlups = static_cast<double>(config.extent.cellCount()) * result.steps / result.seconds / 1e6;
  result.effectiveBytesPerSecond = result.mlups * 1e6 * result.bytesPerUpdate;
  // Against the copy bandwidth of all the ranks' devices together.
  result.fractionOfCopy = result.effectiveBytesPerSecond / (ranks * result.copyBytesPerSecond);
  return result;
}

std::string formatText(const LbmBenchmarkResult& r) {
  const std::string scaling =
      r.ranks > 1 ? std::string(r.weak ? " (weak" : " (strong") + ", halos: " + r.halo + ")" : std::string();
  char haloTimes[200] = "";
  if (r.ranks > 1)
    std::snprintf(haloTimes, sizeof haloTimes,
                  "  halo exchange on rank 0: %.1f us a step of host time (%.1f waiting for packing and copies, %.1f in MPI)\n",
                  1e6 * r.haloSecondsPerStep, 1e6 * r.haloWaitSecondsPerStep, 1e6 * r.haloMpiSecondsPerStep);
  // FP16 pairs are the default form: the label says so only where they were turned off.
  const bool oneNodeAThread = r.storage == "fp16" && !r.fp16NodePairs;
  char text[1100];
  std::snprintf(text, sizeof text,
                "octoflow bench lbm: %s %s %s les=%s%s%s, %s%s, on %s [%s] x %d rank(s)%s, %lldx%lldx%lld nodes, %lld steps in %.3f s\n"
                "  %.1f MLUPS, %.0f B/update -> %.1f GB/s effective\n"
                "  copy bandwidth (same process, all ranks) %.1f GB/s -> %.1f %% of the single-step copy roofline\n%s",
                r.lattice.c_str(), r.collision.c_str(), r.storage.c_str(), r.les.c_str(), r.forced ? " forced" : "",
                r.walls ? " walls" : "", r.blocking.c_str(), oneNodeAThread ? ", one node a thread" : "", r.device.c_str(),
                r.backend.c_str(), r.ranks, scaling.c_str(), r.nx, r.ny, r.nz, r.steps, r.seconds, r.mlups,
                r.bytesPerUpdate, r.effectiveBytesPerSecond / 1e9, r.ranks * r.copyBytesPerSecond / 1e9,
                100.0 * r.fractionOfCopy, haloTimes);
  std::string result = text;
  result += formatTimeline(r.timeline, r.timelineStep, r.backend == "cuda");
  if (!r.digest.empty()) result += "  digest of the populations after step " + std::to_string(r.digestStep) + ": " + r.digest + "\n";
  return result;
}

std::string formatJson(const LbmBenchmarkResult& r) {
  char text[1300];
  std::snprintf(text, sizeof text,
                "{\"benchmark\": \"lbm\", \"lattice\": \"%s\", \"collision\": \"%s\", \"storage\": \"%s\", \"les\": \"%s\", "
                "\"forced\": %s, \"walls\": %s, \"blocking\": \"%s\", \"fp16_node_pairs\": %s, \"backend\": \"%s\", \"device\": \"%s\", "
                "\"size\": [%lld, %lld, %lld], \"steps\": %lld, \"seconds\": %.6f, \"mlups\": %.3f, "
                "\"bytes_per_update\": %.0f, \"effective_gb_per_s\": %.3f, \"copy_gb_per_s\": %.3f, "
                "\"fraction_of_copy\": %.4f, \"ranks\": %d, \"weak\": %s, \"halos\": \"%s\", "
                "\"halo_us_per_step\": %.1f, \"halo_wait_us_per_step\": %.1f, \"halo_mpi_us_per_step\": %.1f, "
                "\"digest\": \"%s\"}\n",
                r.lattice.c_str(), r.collision.c_str(), r.storage.c_str(), r.les.c_str(), r.forced ? "true" : "false",
                r.walls ? "true" : "false", r.blocking.c_str(), r.fp16NodePairs ? "true" : "false", r.backend.c_str(), r.device.c_str(), r.nx, r.ny,
                r.nz, r.steps, r.seconds, r.mlups,
                r.bytesPerUpdate, r.effectiveBytesPerSecond / 1e9, r.copyBytesPerSecond / 1e9, r.fractionOfCopy, r.ranks,
                r.weak ? "true" : "false", r.ranks > 1 ? r.halo.c_str() : "none", 1e6 * r.haloSecondsPerStep,
                1e6 * r.haloWaitSecondsPerStep, 1e6 * r.haloMpiSecondsPerStep, r.digest.c_str());
  return text;
}

std::vector<LbmBenchmarkResult> runLbmMatrix(const LbmBenchmarkOptions& base) {
  std::vector<LbmBenchmarkResult> results;
  for (lbm::LatticeKind lattice : {lbm::LatticeKind::D2Q9, lbm::LatticeKind::D3Q19, lbm::LatticeKind::D3Q27})
    for (lbm::CollisionKind collision : {lbm::CollisionKind::Bgk, lbm::CollisionKind::Mrt})
      for (lbm::StorageKind storage : {lbm::StorageKind::Fp32, lbm::StorageKind::Fp16}) {
        LbmBenchmarkOptions options = base;
        options.lattice = lattice;
        options.collision = collision;
        options.storage = storage;
        if (base.size > 0 && lbm::latticeDimensions(lattice) == 2) options.size = 16 * base.size;
        results.push_back(runLbmBenchmark(options));
      }
  return results;
}

std::string formatMatrix(const std::vector<LbmBenchmarkResult>& results) {
  if (results.empty()) return {};
  const auto find = [&](const LbmBenchmarkResult& like, const char* collision, const char* storage) {
    for (const LbmBenchmarkResult& r : results)
      if (r.lattice == like.lattice && r.collision == collision && r.storage == storage) return &r;
    return static_cast<const LbmBenchmarkResult*>(nullptr);
  };
  const LbmBenchmarkResult& first = results.front();
  std::string text;
  char line[400];
  std::snprintf(line, sizeof line, "octoflow bench lbm --matrix: les=%s%s on %s [%s] x %d rank(s)%s\n", first.les.c_str(),
                first.forced ? " forced" : "", first.device.c_str(), first.backend.c_str(), first.ranks,
                first.ranks > 1 ? (first.weak ? " (weak)" : " (strong)") : "");
  text += line;
  std::snprintf(line, sizeof line, "%-7s %-9s %-7s %-17s %12s %10s %9s %9s %14s\n", "lattice", "collision", "storage",
                "nodes", "MLUPS", "GB/s copy", "% copy", "vs FP32", "vs BGK (time)");
  text += line;
  for (const LbmBenchmarkResult& r : results) {
    char nodes[64], speedup[32] = "-", extraTime[32] = "-";
    std::snprintf(nodes, sizeof nodes, "%lldx%lldx%lld", r.nx, r.ny, r.nz);
    const LbmBenchmarkResult* fp32 = find(r, r.collision.c_str(), "fp32");
    if (r.storage != "fp32" && fp32 && fp32->mlups > 0.0) std::snprintf(speedup, sizeof speedup, "%.2fx", r.mlups / fp32->mlups);
    const LbmBenchmarkResult* bgk = find(r, "bgk", r.storage.c_str());
    if (r.collision != "bgk" && bgk && r.mlups > 0.0)
      std::snprintf(extraTime, sizeof extraTime, "%+.1f %%", 100.0 * (bgk->mlups / r.mlups - 1.0));
    std::snprintf(line, sizeof line, "%-7s %-9s %-7s %-17s %12.1f %10.1f %8.1f %% %9s %14s\n", r.lattice.c_str(),
                  r.collision.c_str(), r.storage.c_str(), nodes, r.mlups, r.ranks * r.copyBytesPerSecond / 1e9,
                  100.0 * r.fractionOfCopy, speedup, extraTime);
    text += line;
  }
  return text;
}

std::vector<LbmBenchmarkResult> runBlockingSweep(const LbmBenchmarkOptions& base,
                                                 const std::vector<std::array<int, 3>>& blocks) {
  std::vector<LbmBenchmarkResult> results;
  LbmBenchmarkOptions options = base;
  options.blocking = lbm::TemporalBlocking{};
  results.push_back(runLbmBenchmark(options));
  struct Registers {
    int steps;
    bool shuffle;
  };
  for (const std::array<int, 3>& block : blocks)
    for (int shared : {1, 2, 4, 8, 12, 16})
      for (const Registers registers : {Registers{0, false}, Registers{1, false}, Registers{1, true}}) {
        lbm::TemporalBlocking& b = options.blocking;
        b.sharedSteps = shared;
        b.registerSteps = registers.steps;
        b.warpShuffle = registers.shuffle;
        for (int axis = 0; axis < 3; ++axis) b.block[axis] = block[static_cast<std::size_t>(axis)];
        if (registers.steps > 0 && shared < registers.steps + 2) continue;
        if (registers.shuffle && options.lattice != lbm::LatticeKind::D2Q9) continue;
        try {
          results.push_back(runLbmBenchmark(options));
        } catch (const Error& error) {  // the tile does not fit the GPU's shared memory: a row without figures
          LbmBenchmarkResult missing;
          missing.blocking = blockingLabel(b, lbm::latticeDimensions(options.lattice));
          missing.device = error.what();
          results.push_back(missing);
        }
      }
  return results;
}

std::string formatBlockingSweep(const std::vector<LbmBenchmarkResult>& results) {
  if (results.empty()) return {};
  const LbmBenchmarkResult& single = results.front();
  std::string text;
  char line[400];
  std::snprintf(line, sizeof line,
                "octoflow bench lbm --blocking-sweep: %s %s %s%s%s, %lldx%lldx%lld nodes, on %s [%s]; copy %.1f GB/s "
                "-> single-step roofline %.1f MLUPS (%.0f B/update)\n",
                single.lattice.c_str(), single.collision.c_str(), single.storage.c_str(), single.forced ? " forced" : "",
                single.walls ? " walls" : "", single.nx, single.ny, single.nz, single.device.c_str(),
                single.backend.c_str(), single.copyBytesPerSecond / 1e9,
                single.copyBytesPerSecond / single.bytesPerUpdate / 1e6, single.bytesPerUpdate);
  text += line;
  std::snprintf(line, sizeof line, "%-24s %12s %12s %10s %11s %13s\n", "kernel (block)", "us a step", "MLUPS",
                "x roofline", "vs s1r0tb", "vs 1-step");
  text += line;
  const auto blockOf = [](const std::string& label) { return label.substr(label.find(' ') + 1); };
  for (const LbmBenchmarkResult& r : results) {
    if (r.steps == 0) {
      std::snprintf(line, sizeof line, "%-24s %12s   (%s)\n", r.blocking.c_str(), "-", r.device.c_str());
      text += line;
      continue;
    }
    char overTile[32] = "-", overSingle[32] = "-";
    for (const LbmBenchmarkResult& base : results)
      if (base.steps > 0 && base.blocking.rfind("s1r0tb ", 0) == 0 && r.blocking != "single-step" &&
          blockOf(base.blocking) == blockOf(r.blocking))
        std::snprintf(overTile, sizeof overTile, "%.2fx", r.mlups / base.mlups);
    if (single.mlups > 0.0) std::snprintf(overSingle, sizeof overSingle, "%.2fx", r.mlups / single.mlups);
    std::snprintf(line, sizeof line, "%-24s %12.2f %12.1f %10.2f %11s %13s\n", r.blocking.c_str(),
                  1e6 * r.seconds / static_cast<double>(r.steps), r.mlups, r.fractionOfCopy, overTile, overSingle);
    text += line;
  }
  return text;
}

}  // namespace octoflow::bench

namespace octoflow::bench {

namespace {

lbm::LatticeKind parseLattice(const std::string& text) {
  for (auto kind : {lbm::LatticeKind::D2Q9, lbm::LatticeKind::D3Q19, lbm::LatticeKind::D3Q27})
    if (text == lbm::latticeName(kind)) return kind;
  throw InputError("--lattice", "", "expected D2Q9, D3Q19 or D3Q27, got '" + text + "'");
}

// The flags of `bench lbm` as given, turned into options once parsed.
struct LbmBenchmarkFlags {
  std::string lattice = "D3Q19", backend = "auto", collision = "bgk", storage = "fp32", les = "none";
  long long size = 0, steps = 0;
  bool json = false, weak = false, matrix = false, timeline = false, forced = false, digest = false;
  bool walls = false, sweep = false;
  int sharedSteps = 0, registerSteps = 0, nodesPerThread = 2;
  bool warpShuffle = false;
  std::string block;  // "32x8" or "8x8x4"
};

// "32x8" or "8x8x4": the tile's nodes along x, y (and z).
std::array<int, 3> parseBlock(const std::string& text, int dimensions) {
  std::array<int, 3> block{1, 1, 1};
  std::size_t start = 0;
  int axis = 0;
  while (axis < 3) {
    const std::size_t end = text.find('x', start);
    const std::string part = text.substr(start, end == std::string::npos ? std::string::npos : end - start);
    if (part.empty() || part.find_first_not_of("0123456789") != std::string::npos || part.size() > 4)
      throw InputError("--block", "", "expected sizes like 32x8 (2D) or 16x4x4 (3D), got '" + text + "'");
    block[static_cast<std::size_t>(axis++)] = std::stoi(part);
    if (end == std::string::npos) break;
    start = end + 1;
  }
  if (axis != dimensions) throw InputError("--block", "", "expected " + std::to_string(dimensions) + " sizes, got '" + text + "'");
  return block;
}

int runLbmBenchmarkCommand(const LbmBenchmarkFlags& flags) {
  LbmBenchmarkOptions options;
  options.lattice = parseLattice(flags.lattice);
  options.collision = collisionOption(flags.collision);
  if (flags.storage != "fp32" && flags.storage != "fp16")
    throw InputError("--storage", "", "expected fp32 or fp16, got '" + flags.storage + "'");
  options.storage = flags.storage == "fp16" ? lbm::StorageKind::Fp16 : lbm::StorageKind::Fp32;
  options.les = lesOption(flags.les);
  options.backend = exec::resolveBackend(exec::parseBackendChoice(flags.backend, "--backend"));
  if (flags.size < 0) throw InputError("--size", "", "expected a positive integer");
  if (flags.steps < 0) throw InputError("--steps", "", "expected a positive integer");
  options.size = flags.size;
  options.steps = flags.steps;
  options.weak = flags.weak;
  options.timeline = flags.timeline;
  options.digest = flags.digest;
  options.forced = flags.forced;
  options.walls = flags.walls;
  if (flags.nodesPerThread != 1 && flags.nodesPerThread != 2)
    throw InputError("--nodes-per-thread", "", "expected 1 or 2, got " + std::to_string(flags.nodesPerThread));
  options.nodesPerThread = flags.nodesPerThread;
  const int dimensions = lbm::latticeDimensions(options.lattice);
  options.blocking.sharedSteps = flags.sharedSteps;
  options.blocking.registerSteps = flags.registerSteps;
  options.blocking.warpShuffle = flags.warpShuffle;
  if (!flags.block.empty()) {
    const std::array<int, 3> block = parseBlock(flags.block, dimensions);
    for (int axis = 0; axis < 3; ++axis) options.blocking.block[axis] = block[static_cast<std::size_t>(axis)];
  } else if (dimensions == 3) {
    options.blocking.block[0] = 16, options.blocking.block[1] = 4, options.blocking.block[2] = 4;
  }
  if (flags.sweep) {
    // The seed's experiment by default: a 320x320 Poiseuille channel, D2Q9 BGK FP32.
    if (flags.size == 0 && dimensions == 2) options.size = 320;
    if (flags.steps == 0) options.steps = 20000;
    std::vector<std::array<int, 3>> blocks;
    if (!flags.block.empty())
      blocks.push_back(parseBlock(flags.block, dimensions));
    else if (dimensions == 2)
      blocks = {{8, 8, 1}, {10, 10, 1}, {16, 16, 1}, {32, 8, 1}, {32, 16, 1}, {64, 8, 1}};
    else
      blocks = {{8, 8, 4}, {16, 4, 4}, {32, 4, 2}};
    const auto results = runBlockingSweep(options, blocks);
    if (flags.json)
      for (const auto& result : results) std::fputs(formatJson(result).c_str(), stdout);
    else
      std::fputs(formatBlockingSweep(results).c_str(), stdout);
    return 0;
  }
  if (flags.matrix) {
    const auto results = runLbmMatrix(options);
    if (!results.empty() && results.front().report) {
      if (flags.json)
        for (const auto& result : results) std::fputs(formatJson(result).c_str(), stdout);
      else
        std::fputs(formatMatrix(results).c_str(), stdout);
    }
    return 0;
  }
  const auto result = runLbmBenchmark(options);
  if (result.report) std::fputs((flags.json ? formatJson(result) : formatText(result)).c_str(), stdout);
  return 0;
}

}  // namespace

std::function<int()> defineLbmBenchmark(CLI::App& command) {
  auto flags = std::make_shared<LbmBenchmarkFlags>();
  command.add_option("--lattice", flags->lattice, "D2Q9 | D3Q19 | D3Q27");
  command.add_option("--collision", flags->collision, "bgk | trt | mrt");
  command.add_option("--storage", flags->storage, "fp32 | fp16 (FP16 storage, FP32 arithmetic)");
  command.add_option("--les", flags->les, "none | smagorinsky | csm");
  command.add_option("--size", flags->size, "Nodes per axis (default 256 on CUDA, 64 on CPU; D2Q9 4096/512)");
  command.add_option("--steps", flags->steps, "Timed steps (default: about one second)");
  command.add_option("--backend", flags->backend, "auto | cuda | cpu");
  command.add_flag("--json", flags->json, "One JSON object instead of text");
  command.add_flag("--forced", flags->forced, "With a uniform body force (1e-6 along x): times the kernels' forced form");
  command.add_flag("--timeline", flags->timeline,
                   "Print when each phase of one step finished (GPU events; under mpirun with the halo exchange)");
  command.add_flag("--weak", flags->weak,
                   "Under mpirun: each rank keeps a box of --size (weak scaling); default: the box is cut over the ranks");
  command.add_flag("--digest", flags->digest,
                   "Print a fingerprint of the final populations (with --steps: the same on any number of ranks and GPUs)");
  command.add_option("--nodes-per-thread", flags->nodesPerThread,
                     "FP16 bulk steps: 2 (default) updates node pairs where they were measured to pay, 1 one node a thread");
  command.add_flag("--walls", flags->walls, "Resting walls on the y faces (with --forced: a Poiseuille channel)");
  command.add_option("--shared-steps", flags->sharedSteps,
                     "Temporal blocking: steps a launch advances in shared memory (ts; 0: the single-step kernel)");
  command.add_option("--register-steps", flags->registerSteps, "Temporal blocking: extra steps a stage takes in registers (tr, 0 or 1)");
  command.add_flag("--warp-shuffle", flags->warpShuffle, "Temporal blocking, D2Q9, tr = 1: lanes share collisions by warp shuffles");
  command.add_option("--block", flags->block, "Temporal blocking: the nodes a tile writes, e.g. 32x8 (default) or 16x4x4");
  command
      .add_flag("--blocking-sweep", flags->sweep,
                "The seed's temporal-blocking experiment: tiles x ts x tr (default: D2Q9 320x320 channel; add --walls --forced)")
      ->excludes("--shared-steps")
      ->excludes("--register-steps")
      ->excludes("--warp-shuffle");
  command
      .add_flag("--matrix", flags->matrix,
                "D2Q9, D3Q19, D3Q27 x BGK, MRT x FP32, FP16 in one table (--size: the 3D edge, D2Q9 16 times it)")
      ->excludes("--lattice")
      ->excludes("--collision")
      ->excludes("--storage");
  return [flags] { return runLbmBenchmarkCommand(*flags); };
}

}  // namespace octoflow::bench
