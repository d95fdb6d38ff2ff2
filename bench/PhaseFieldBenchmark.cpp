// `octoflow bench phasefield`: grid-point updates per second of the phase-field solver (Kobayashi
// model, noise on) on a cube (or a square with --2d), quoted against its two bounds: the DRAM
// traffic of a step (16 B a point: phi and u read and written once, FP32) at the copy bandwidth
// measured in the same process, and the seed's 373 flop a point at the GPU's FP32 peak.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>

#include "BenchTiming.hpp"
#include "BenchmarkCommands.hpp"
#include "common/Error.hpp"
#include "exec/CopyBandwidth.hpp"
#include "io/CaseFile.hpp"
#include "phasefield/PhaseFieldCase.hpp"
#include "sim/Simulation.hpp"

namespace octoflow::bench {

namespace {

constexpr double kFlopPerPoint = 373.0;   // the seed's count (PAPI on its CPU reference)
constexpr double kBytesPerPoint = 16.0;   // phi, u: one FP32 read and one write each

struct PhaseFieldFlags {
  std::string backend = "auto";
  long long size = 0, steps = 0;
  bool twoDimensional = false, json = false, weak = false, timeline = false, digest = false;
};

int runPhaseFieldBenchmark(const PhaseFieldFlags& flags) {
  const exec::Backend backend = exec::resolveBackend(exec::parseBackendChoice(flags.backend, "--backend"));
  if (flags.size < 0) throw InputError("--size", "", "expected a positive integer");
  if (flags.steps < 0) throw InputError("--steps", "", "expected a positive integer");
  const bool cuda = backend == exec::Backend::Cuda;
  const int ranks = worldRanks();
  const long long n = flags.size > 0 ? flags.size : (flags.twoDimensional ? (cuda ? 8192 : 1024) : (cuda ? 512 : 64));
  // Weak scaling grows the last axis (z; y in 2D) with the ranks.
  const long long last = flags.weak ? n * ranks : n;
  const std::string size = flags.twoDimensional ? "[" + std::to_string(n) + ", " + std::to_string(last) + "]"
                                                : "[" + std::to_string(n) + ", " + std::to_string(n) + ", " +
                                                      std::to_string(last) + "]";
  const io::CaseDescription d = io::parseCase(
      "[case]\nname = \"bench\"\nsolver = \"phasefield\"\nsteps = 1\n[domain]\nsize = " + size +
          "\n[phasefield]\nnoise = 0.025\nnucleus_radius = " + std::to_string(n / 8.0) + "\n",
      "bench phasefield");
  // Through the solver's Simulation: under mpirun the grid is cut over the ranks, halos overlapped.
  const std::unique_ptr<sim::Simulation> simulation =
      phasefield::phaseFieldCaseOf(d).create(d, sim::CreateOptions{backend, true});
  const double points = static_cast<double>(d.extent.cellCount());
  simulation->advance(4);  // warm-up
  // The timeline's step: the first of the timed run (after the warm-up and timeSteps' two).
  const long long timelineStep = simulation->step() + 2;
  if (flags.timeline) simulation->recordTimeline(timelineStep);
  const TimedSteps timed = timeAdvance(*simulation, flags.steps, false, 100000);
  const long long steps = timed.steps;
  const double seconds = timed.seconds;
  const double glups = points * steps / seconds / 1e9;
  std::string digest;  // `--digest`: phi and the temperature of the whole grid, gathered on rank 0
  if (flags.digest) {
    const sim::FieldSet& fields = simulation->fetchFields(sim::fieldNames(simulation->fields()));
    Digest hash;
    for (const sim::FieldSet::Array& array : fields.arrays)
      hash.add(array.values, static_cast<std::size_t>(fields.box.size.cellCount()) * array.components * sizeof(float));
    digest = hash.hex();
  }
  // On a buffer of this rank's phi and u, from 256 MiB (so caches do not flatter it) to 2 GiB.
  const exec::CopyBandwidth copy = exec::measureCopyBandwidth(
      backend, std::clamp<std::size_t>(static_cast<std::size_t>(kBytesPerPoint * points / ranks), 256u << 20, 2u << 30));
  // Bounds of all the ranks' devices together.
  const double bandwidthBound = ranks * copy.bytesPerSecond / kBytesPerPoint / 1e9;
  double peakFlops = 0.0;  // FP32 peak: 128 lanes a multiprocessor, a fused multiply-add a cycle (Hopper, Ampere)
  std::string device = "CPU";
  if (cuda) {
    const auto devices = exec::cudaDevices();
    const auto& gpu = devices.at(static_cast<std::size_t>(exec::currentCudaDevice()));
    device = gpu.name;
    peakFlops = ranks * 2.0 * 128.0 * gpu.multiprocessors * gpu.clockKilohertz * 1e3;
  }
  const double tflops = glups * kFlopPerPoint / 1e3;
  if (simulation->rank() != 0) return 0;
  // How the halos travel: the end of the Simulation's description ("...; N MPI ranks, halos: X").
  const std::string description = simulation->describe();
  const std::size_t halos = description.rfind("halos: ");
  const std::string scaling = std::string(flags.weak ? "weak" : "strong") +
                              (halos != std::string::npos ? ", " + description.substr(halos) : "");
  if (flags.json) {
    std::printf("{\"benchmark\": \"phasefield\", \"backend\": \"%s\", \"device\": \"%s\", \"size\": \"%s\", "
                "\"steps\": %lld, \"seconds\": %.4f, \"glups\": %.3f, \"tflops_at_373\": %.3f, "
                "\"copy_gbs\": %.1f, \"fraction_of_bandwidth_bound\": %.3f, \"fraction_of_fp32_peak\": %.3f, "
                "\"ranks\": %d, \"weak\": %s, \"glups_per_rank\": %.3f, \"scaling\": \"%s\", \"digest\": \"%s\"}\n",
                exec::backendName(backend), device.c_str(), size.c_str(), steps, seconds, glups, tflops,
                copy.bytesPerSecond / 1e9, glups / bandwidthBound, peakFlops > 0 ? tflops * 1e12 / peakFlops : 0.0,
                ranks, flags.weak ? "true" : "false", glups / ranks, scaling.c_str(), digest.c_str());
    return 0;
  }
  std::printf("phase-field (kobayashi, noise on) %s on %s (%s), %lld steps in %.3f s\n", size.c_str(),
              exec::backendName(backend), device.c_str(), steps, seconds);
  if (ranks > 1) std::printf("  %d ranks (%s): %.2f GLUPS a rank\n", ranks, scaling.c_str(), glups / ranks);
  std::printf("  %.2f GLUPS, %.2f TFLOPS at %.0f flop/point\n", glups, tflops, kFlopPerPoint);
  std::printf("  bandwidth bound %.1f GLUPS (copy %.0f GB/s / %.0f B/point): %.1f %%\n", bandwidthBound,
              copy.bytesPerSecond / 1e9, kBytesPerPoint, 100.0 * glups / bandwidthBound);
  if (peakFlops > 0)
    std::printf("  FP32 peak %.1f TFLOPS (%.1f GLUPS at %.0f flop/point): %.1f %%\n", peakFlops / 1e12,
                peakFlops / kFlopPerPoint / 1e9, kFlopPerPoint, 100.0 * tflops * 1e12 / peakFlops);
  std::fputs(formatTimeline(simulation->timeline(), timelineStep, cuda).c_str(), stdout);
  if (flags.digest)
    std::printf("  digest of phi and the temperature after step %lld: %s\n", static_cast<long long>(simulation->step()),
                digest.c_str());
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
  command.add_flag("--weak", flags->weak,
                   "Under mpirun: --size per rank, the last axis grown with the ranks (default: one grid cut over them)");
  command.add_flag("--timeline", flags->timeline,
                   "Print when each phase of one step finished (GPU events; under mpirun with the halo exchange)");
  command.add_flag("--digest", flags->digest,
                   "Print a fingerprint of the final phi and temperature (with --steps: the same on any number of ranks and GPUs)");
  return [flags] { return runPhaseFieldBenchmark(*flags); };
}

}  // namespace octoflow::bench
