// `octoflow bench phasefield`: grid-point updates per second of the phase-field solver (Kobayashi
// model, noise on) on a cube (or a square with --2d), quoted against its two bounds: the DRAM
// traffic of a step (16 B a point: phi and u read and written once, FP32) at the copy bandwidth
// measured in the same process, and the seed's 373 flop a point at the GPU's FP32 peak.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>

#include "BenchmarkCommands.hpp"
#include "common/Error.hpp"
#include "exec/CopyBandwidth.hpp"
#include "io/CaseFile.hpp"
#include "phasefield/PhaseFieldCase.hpp"
#include "phasefield/PhaseFieldSolver.hpp"

namespace octoflow::bench {

namespace {

constexpr double kFlopPerPoint = 373.0;   // the seed's count (PAPI on its CPU reference)
constexpr double kBytesPerPoint = 16.0;   // phi, u: one FP32 read and one write each

struct PhaseFieldFlags {
  std::string backend = "auto";
  long long size = 0, steps = 0;
  bool twoDimensional = false, json = false;
};

int runPhaseFieldBenchmark(const PhaseFieldFlags& flags) {
  const exec::Backend backend = exec::resolveBackend(exec::parseBackendChoice(flags.backend, "--backend"));
  if (flags.size < 0) throw InputError("--size", "", "expected a positive integer");
  if (flags.steps < 0) throw InputError("--steps", "", "expected a positive integer");
  const bool cuda = backend == exec::Backend::Cuda;
  const long long n = flags.size > 0 ? flags.size : (flags.twoDimensional ? (cuda ? 8192 : 1024) : (cuda ? 512 : 64));
  const std::string size = flags.twoDimensional ? "[" + std::to_string(n) + ", " + std::to_string(n) + "]"
                                                : "[" + std::to_string(n) + ", " + std::to_string(n) + ", " +
                                                      std::to_string(n) + "]";
  const io::CaseDescription d = io::parseCase(
      "[case]\nname = \"bench\"\nsolver = \"phasefield\"\nsteps = 1\n[domain]\nsize = " + size +
          "\n[phasefield]\nnoise = 0.025\nnucleus_radius = " + std::to_string(n / 8.0) + "\n",
      "bench phasefield");
  phasefield::PhaseFieldSolver solver(phasefield::phaseFieldCaseOf(d).config, backend);
  const double points = static_cast<double>(solver.nodeCount());
  solver.advance(4);  // warm-up
  long long steps = flags.steps;
  if (steps == 0) {  // about a second of work
    const auto start = std::chrono::steady_clock::now();
    solver.advance(4);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    steps = std::max<long long>(4, static_cast<long long>(1.0 / std::max(seconds / 4.0, 1e-6)));
  }
  const auto start = std::chrono::steady_clock::now();
  solver.advance(steps);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const double glups = points * steps / seconds / 1e9;
  const exec::CopyBandwidth copy = exec::measureCopyBandwidth(backend, static_cast<std::size_t>(1) << 30);
  const double bandwidthBound = copy.bytesPerSecond / kBytesPerPoint / 1e9;
  double peakFlops = 0.0;  // FP32 peak: 128 lanes a multiprocessor, a fused multiply-add a cycle (Hopper, Ampere)
  std::string device = "CPU";
  if (cuda) {
    const auto devices = exec::cudaDevices();
    const auto& gpu = devices.at(static_cast<std::size_t>(exec::currentCudaDevice()));
    device = gpu.name;
    peakFlops = 2.0 * 128.0 * gpu.multiprocessors * gpu.clockKilohertz * 1e3;
  }
  const double tflops = glups * kFlopPerPoint / 1e3;
  if (flags.json) {
    std::printf("{\"benchmark\": \"phasefield\", \"backend\": \"%s\", \"device\": \"%s\", \"size\": \"%s\", "
                "\"steps\": %lld, \"seconds\": %.4f, \"glups\": %.3f, \"tflops_at_373\": %.3f, "
                "\"copy_gbs\": %.1f, \"fraction_of_bandwidth_bound\": %.3f, \"fraction_of_fp32_peak\": %.3f}\n",
                exec::backendName(backend), device.c_str(), size.c_str(), steps, seconds, glups, tflops,
                copy.bytesPerSecond / 1e9, glups / bandwidthBound, peakFlops > 0 ? tflops * 1e12 / peakFlops : 0.0);
    return 0;
  }
  std::printf("phase-field (kobayashi, noise on) %s on %s (%s), %lld steps in %.3f s\n", size.c_str(),
              exec::backendName(backend), device.c_str(), steps, seconds);
  std::printf("  %.2f GLUPS, %.2f TFLOPS at %.0f flop/point\n", glups, tflops, kFlopPerPoint);
  std::printf("  bandwidth bound %.1f GLUPS (copy %.0f GB/s / %.0f B/point): %.1f %%\n", bandwidthBound,
              copy.bytesPerSecond / 1e9, kBytesPerPoint, 100.0 * glups / bandwidthBound);
  if (peakFlops > 0)
    std::printf("  FP32 peak %.1f TFLOPS (%.1f GLUPS at %.0f flop/point): %.1f %%\n", peakFlops / 1e12,
                peakFlops / kFlopPerPoint / 1e9, kFlopPerPoint, 100.0 * tflops * 1e12 / peakFlops);
  return 0;
}

}  // namespace

std::function<int()> definePhaseFieldBenchmark(CLI::App& command) {
  auto flags = std::make_shared<PhaseFieldFlags>();
  command.add_option("--size", flags->size, "Nodes per axis (default 512 on CUDA, 64 on CPU; --2d: 8192 / 1024)");
  command.add_option("--steps", flags->steps, "Timed steps (default: about one second)");
  command.add_flag("--2d", flags->twoDimensional, "A square grid instead of a cube");
  command.add_option("--backend", flags->backend, "auto | cuda | cpu");
  command.add_flag("--json", flags->json, "One JSON object instead of text");
  return [flags] { return runPhaseFieldBenchmark(*flags); };
}

}  // namespace octoflow::bench
