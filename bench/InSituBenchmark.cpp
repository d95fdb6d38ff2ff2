#include "InSituBenchmark.hpp"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <vector>

#include <memory>
#include <string>
#include <utility>

#include "BenchmarkCommands.hpp"
#include "common/Error.hpp"
#include "insitu/FlowExtracts.hpp"
#include "io/CaseFile.hpp"
#include "lbm/LbmCase.hpp"
#include "lbm/LbmSimulation.hpp"
#include "lbm/UniformSolver.hpp"

namespace octoflow::bench {

namespace {

constexpr double kPi = 3.14159265358979323846;
constexpr float kVortexSpeed = 0.05f;

double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// A periodic cube holding a Taylor-Green vortex (speed 0.05), with a box of tracers in its middle
// half and the surface where the speed is half the vortex's.
io::CaseDescription vortexCase(long long n, long long tracers, long long tracersEvery) {
  io::CaseDescription d;
  d.name = "insitu_bench";
  d.dimensions = 3;
  d.steps = 0;
  d.extent = Extent{n, n, n};
  d.periodic = {true, true, true};
  auto lbmCase = std::make_shared<lbm::LbmCase>();
  lbmCase->config.lattice = lbm::LatticeKind::D3Q19;
  lbmCase->config.extent = d.extent;
  lbmCase->config.tau = 0.56f;
  for (auto& face : lbmCase->config.faces.face) face.type = lbm::FaceType::Periodic;
  d.solverCase = lbmCase;
  const int perAxis = std::max(1, static_cast<int>(std::lround(std::cbrt(static_cast<double>(tracers)))));
  const float low[3] = {0.25f * (n - 1), 0.25f * (n - 1), 0.25f * (n - 1)};
  const float high[3] = {0.75f * (n - 1), 0.75f * (n - 1), 0.75f * (n - 1)};
  d.tracers.particles.sources.push_back(particles::TracerSource::box(low, high, perAxis, perAxis, perAxis));
  d.tracers.particles.maxParticles = static_cast<Index>(perAxis) * perAxis * perAxis;
  d.tracers.every = tracersEvery;
  d.surface.field = "speed";
  d.surface.level = 0.5f * kVortexSpeed;
  return d;
}

std::vector<float> vortexVelocity(long long n) {
  const Extent extent{n, n, n};
  std::vector<float> velocity(3 * static_cast<std::size_t>(extent.cellCount()));
  const double k = 2.0 * kPi / static_cast<double>(n);
#pragma omp parallel for collapse(2)
  for (Index z = 0; z < n; ++z)
    for (Index y = 0; y < n; ++y)
      for (Index x = 0; x < n; ++x) {
        const std::size_t node = static_cast<std::size_t>(extent.linear(x, y, z));
        velocity[3 * node] = static_cast<float>(kVortexSpeed * std::sin(k * x) * std::cos(k * y) * std::cos(k * z));
        velocity[3 * node + 1] = static_cast<float>(-kVortexSpeed * std::cos(k * x) * std::sin(k * y) * std::cos(k * z));
        velocity[3 * node + 2] = 0.0f;
      }
  return velocity;
}

}  // namespace

InSituBenchmarkResult runInSituBenchmark(const InSituBenchmarkOptions& options) {
  const bool cuda = options.backend == exec::Backend::Cuda;
  InSituBenchmarkResult r;
  r.backend = exec::backendName(options.backend);
  r.device = "CPU (OpenMP)";
  if (cuda) {
    const auto devices = exec::cudaDevices();
    const int current = exec::currentCudaDevice();
    if (current < static_cast<int>(devices.size())) r.device = devices[current].name;
  }
  r.size = options.size > 0 ? options.size : (cuda ? 256 : 32);
  r.steps = options.steps > 0 ? options.steps : (cuda ? 500 : 100);
  r.every = options.every;
  r.tracersEvery = options.tracersEvery;
  r.tracers = options.tracers > 0 ? options.tracers : (cuda ? 100000 : 1000);
  r.fields = options.fields;
  r.velocityField = options.velocityField;
  if (r.size < 8) throw InputError("--size", "", "expected at least 8 nodes per axis");
  if (r.every <= 0) throw InputError("--every", "", "expected a positive integer");
  if (r.tracersEvery <= 0 || r.tracersEvery > 1000) throw InputError("--tracers-every", "", "expected 1 to 1000");

  const io::CaseDescription description = vortexCase(r.size, r.tracers, r.tracersEvery);
  const std::vector<float> velocity = vortexVelocity(r.size);
  const lbm::LbmCase& lbmCase = lbm::lbmCaseOf(description);
  lbm::UniformSolver solver(lbmCase.config, options.backend);
  const auto simulation = lbm::wrapUniformSolver(description, lbmCase, solver);

  // Bare: the solver alone, after a warm-up.
  solver.initialize(nullptr, velocity.data());
  solver.advance(10);
  solver.synchronize();
  auto start = std::chrono::steady_clock::now();
  solver.advance(r.steps);
  solver.synchronize();
  r.bareSecondsPerStep = secondsSince(start) / static_cast<double>(r.steps);

  // In situ: the run loop's work (apps/RunCommand.cpp), each part timed on the host.
  solver.initialize(nullptr, velocity.data());
  insitu::FlowExtracts extracts(description, *simulation);
  extracts.moveInVelocityField(r.velocityField);
  extracts.releaseTracers(0);
  extracts.moveTracers(1);  // warm-up: first launches, buffers
  extracts.surface();

  // The tracer moves alone: the steps with a move every tracersEvery, no hand-offs.
  solver.initialize(nullptr, velocity.data());
  const Index tappedBefore = solver.tappedMoves();
  start = std::chrono::steady_clock::now();
  for (long long step = 0; step < r.steps; step += r.tracersEvery) {
    const long long stride = std::min<long long>(r.tracersEvery, r.steps - step);
    extracts.moveTracers(static_cast<int>(stride));
    ++r.moves;
    solver.advance(stride);  // a move waiting for the step is made in it
  }
  solver.synchronize();
  r.movesOnlySecondsPerStep = secondsSince(start) / static_cast<double>(r.steps);
  r.tappedMoves = solver.tappedMoves() - tappedBefore;
  // The same loop without the moves: what advancing in strides costs by itself (each advance
  // returns once all but its last step are done: the host queues the next while that one runs).
  solver.initialize(nullptr, velocity.data());
  start = std::chrono::steady_clock::now();
  for (long long step = 0; step < r.steps; step += r.tracersEvery)
    solver.advance(std::min<long long>(r.tracersEvery, r.steps - step));
  solver.synchronize();
  r.stridedSecondsPerStep = secondsSince(start) / static_cast<double>(r.steps);
  // The bare steps once more, right after: the faster of the two timings is the bare step (the
  // moves are told by a difference, so a slow first timing, caches or clocks, must not count).
  solver.initialize(nullptr, velocity.data());
  start = std::chrono::steady_clock::now();
  solver.advance(r.steps);
  solver.synchronize();
  r.bareSecondsPerStep = std::min(r.bareSecondsPerStep, secondsSince(start) / static_cast<double>(r.steps));
  r.stridedSecondsPerStep = std::max(r.stridedSecondsPerStep, r.bareSecondsPerStep);
  // The whole in-situ loop.
  solver.initialize(nullptr, velocity.data());
  const auto loopStart = std::chrono::steady_clock::now();
  for (long long step = 0; step < r.steps; step += r.tracersEvery) {
    const long long stride = std::min<long long>(r.tracersEvery, r.steps - step);
    if (step > 0 && step % r.every == 0) {
      auto part = std::chrono::steady_clock::now();
      r.triangles = extracts.surface().triangleCount;
      r.surfaceSeconds += secondsSince(part);
      r.extractSeconds += extracts.lastSurfaceTimes().extractSeconds;
      r.triangleCopySeconds += extracts.lastSurfaceTimes().copySeconds;
      part = std::chrono::steady_clock::now();
      r.tracersAlive = extracts.tracers().count;
      r.tracerViewSeconds += secondsSince(part);
      if (r.fields) {
        part = std::chrono::steady_clock::now();
        solver.fetchFields(false, true);
        r.fieldSeconds += secondsSince(part);
      }
      ++r.handOffs;
    }
    extracts.moveTracers(static_cast<int>(stride));
    solver.advance(stride);
  }
  solver.synchronize();
  r.inSituSecondsPerStep = secondsSince(loopStart) / static_cast<double>(r.steps);
  r.tracersAlive = extracts.tracers().count;
  // Last (the tracers move on): the moves back to back, no steps between them (the flow held),
  // a move's own time; with no step to ride on, each is made from the populations.
  {
    const long long count = std::max<long long>(1, r.steps / std::max<long long>(1, r.tracersEvery));
    solver.synchronize();
    start = std::chrono::steady_clock::now();
    for (long long m = 0; m < count; ++m) extracts.moveTracers(static_cast<int>(r.tracersEvery));
    simulation->settleTracers();  // each move made at once, from the populations
    solver.synchronize();
    r.backToBackMoveSeconds = secondsSince(start) / static_cast<double>(count);
  }
  r.moveSeconds = (r.movesOnlySecondsPerStep - r.stridedSecondsPerStep) * static_cast<double>(r.steps) /
                  static_cast<double>(r.moves);

  if (r.handOffs > 0) {
    r.surfaceSeconds /= static_cast<double>(r.handOffs);
    r.extractSeconds /= static_cast<double>(r.handOffs);
    r.triangleCopySeconds /= static_cast<double>(r.handOffs);
    r.tracerViewSeconds /= static_cast<double>(r.handOffs);
    r.fieldSeconds /= static_cast<double>(r.handOffs);
  }
  return r;
}

namespace {
// What the tracer moves and the advances in their strides add to a bare step.
double moveShare(const InSituBenchmarkResult& r) { return r.movesOnlySecondsPerStep / r.bareSecondsPerStep - 1.0; }
// What the moves alone add (against the same strides without moves).
double moveKernelShare(const InSituBenchmarkResult& r) {
  return r.moveSeconds / (static_cast<double>(r.tracersEvery) * r.bareSecondsPerStep);
}
}  // namespace

std::string formatText(const InSituBenchmarkResult& r) {
  char text[1600];
  int used = std::snprintf(
      text, sizeof text,
      "octoflow bench insitu: D3Q19 BGK FP32 Taylor-Green vortex %lld^3, %lld steps on %s [%s]\n"
      "  in situ: %lld tracers moved every %lld step(s) in %s; every %lld steps the speed surface and the tracers%s to "
      "the host\n"
      "  bare %.3f ms a step; with the tracer moves alone %.3f ms a step: %+.1f %%; in situ %.3f ms a step: %+.1f %%\n"
      "  parts: advancing in strides of %lld step(s) %.3f ms a step (%+.1f %%); tracer move %.3f ms (%+.1f %%; %lld of %lld made from the step's recorded velocities; back to back %.3f ms; %lld alive "
      "at the end); at each of %lld hand-offs: surface %.3f ms (%lld triangles; "
      "extraction %.3f ms, of it copying to the host %.3f ms), tracers %.3f ms",
      r.size, r.steps, r.device.c_str(), r.backend.c_str(), r.tracers, r.tracersEvery,
      r.velocityField ? "a velocity field computed for each move" : "the velocity sampled from the populations",
      r.every, r.fields ? " and the velocity field" : "", 1e3 * r.bareSecondsPerStep, 1e3 * r.movesOnlySecondsPerStep,
      100.0 * moveShare(r), 1e3 * r.inSituSecondsPerStep, 100.0 * (r.inSituSecondsPerStep / r.bareSecondsPerStep - 1.0),
      r.tracersEvery, 1e3 * r.stridedSecondsPerStep, 100.0 * (r.stridedSecondsPerStep / r.bareSecondsPerStep - 1.0),
      1e3 * r.moveSeconds, 100.0 * moveKernelShare(r), r.tappedMoves, r.moves, 1e3 * r.backToBackMoveSeconds,
      r.tracersAlive, r.handOffs,
      1e3 * r.surfaceSeconds, r.triangles, 1e3 * r.extractSeconds, 1e3 * r.triangleCopySeconds,
      1e3 * r.tracerViewSeconds);
  if (r.fields) used += std::snprintf(text + used, sizeof text - used, ", velocity field %.3f ms", 1e3 * r.fieldSeconds);
  std::snprintf(text + used, sizeof text - used, "\n");
  return text;
}

std::string formatJson(const InSituBenchmarkResult& r) {
  char text[1600];
  std::snprintf(text, sizeof text,
                "{\"benchmark\": \"insitu\", \"backend\": \"%s\", \"device\": \"%s\", \"size\": %lld, \"steps\": %lld, "
                "\"every\": %lld, \"tracers_every\": %lld, \"tracers\": %lld, \"fields\": %s, \"tracer_velocity\": \"%s\", "
                "\"bare_ms\": %.4f, \"strided_ms\": %.4f, \"moves_only_ms\": %.4f, \"insitu_ms\": %.4f, \"move_ms\": %.4f, \"back_to_back_move_ms\": %.4f, \"move_share\": %.4f, \"surface_ms\": %.4f, "
                "\"tracer_view_ms\": %.4f, "
                "\"field_ms\": %.4f, \"extract_ms\": %.4f, \"triangle_copy_ms\": %.4f, \"triangles\": %lld, "
                "\"tracers_alive\": %lld, \"moves\": %lld, \"tapped_moves\": %lld}\n",
                r.backend.c_str(), r.device.c_str(), r.size, r.steps, r.every, r.tracersEvery, r.tracers,
                r.fields ? "true" : "false", r.velocityField ? "field" : "populations", 1e3 * r.bareSecondsPerStep,
                1e3 * r.stridedSecondsPerStep, 1e3 * r.movesOnlySecondsPerStep, 1e3 * r.inSituSecondsPerStep, 1e3 * r.moveSeconds, 1e3 * r.backToBackMoveSeconds, moveShare(r), 1e3 * r.surfaceSeconds,
                1e3 * r.tracerViewSeconds, 1e3 * r.fieldSeconds,
                1e3 * r.extractSeconds, 1e3 * r.triangleCopySeconds, r.triangles, r.tracersAlive, r.moves, r.tappedMoves);
  return text;
}

}  // namespace octoflow::bench

namespace octoflow::bench {

std::function<int()> defineInSituBenchmark(CLI::App& command) {
  struct Flags {
    std::string backend = "auto";
    InSituBenchmarkOptions options;
    bool json = false;
    std::string tracerVelocity = "populations";
  };
  auto flags = std::make_shared<Flags>();
  InSituBenchmarkOptions& o = flags->options;
  command.add_option("--size", o.size, "Nodes per axis (default 256 on CUDA, 32 on CPU)");
  command.add_option("--steps", o.steps, "Timed steps each way (default 500 on CUDA, 100 on CPU)");
  command.add_option("--every", o.every, "Steps between hand-offs of the surface and tracers (default 50)");
  command.add_option("--tracers-every", o.tracersEvery, "Steps between tracer moves (default 1)");
  command.add_option("--tracers", o.tracers, "Tracers (default 100000 on CUDA, 1000 on CPU)");
  command.add_flag("--fields", o.fields, "Also copy the velocity field to the host at each hand-off");
  command.add_option("--tracer-velocity", flags->tracerVelocity,
                     "populations (default: sampled at the tracers) | field (a velocity field each move)");
  command.add_option("--backend", flags->backend, "auto | cuda | cpu");
  command.add_flag("--json", flags->json, "One JSON object instead of text");
  return [flags] {
    InSituBenchmarkOptions options = flags->options;
    options.backend = exec::resolveBackend(exec::parseBackendChoice(flags->backend, "--backend"));
    if (flags->tracerVelocity != "populations" && flags->tracerVelocity != "field")
      throw InputError("--tracer-velocity", flags->tracerVelocity, "expected populations or field");
    options.velocityField = flags->tracerVelocity == "field";
    for (const auto& [name, value] : {std::pair{"--size", options.size}, std::pair{"--steps", options.steps},
                                      std::pair{"--tracers", options.tracers}})
      if (value < 0) throw InputError(name, "", "expected a positive integer");
    const auto result = runInSituBenchmark(options);
    std::fputs((flags->json ? formatJson(result) : formatText(result)).c_str(), stdout);
    return 0;
  };
}

}  // namespace octoflow::bench
