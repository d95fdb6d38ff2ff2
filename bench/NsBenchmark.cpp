// `octoflow bench ns`: steps a second of the 2D Navier-Stokes solver on the seed's case (a cylinder
// at Re = 3000, 1024 x 512 cells by default), every step's pressure equation solved to the case's
// tolerance (1e-5 of its first residual); the multigrid's cycles a step and its convergence
// factor, and the time shares of a step's phases (the timeline of one step).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <numeric>
#include <string>

#include "BenchTiming.hpp"
#include "BenchmarkCommands.hpp"
#include "common/Error.hpp"
#include "io/CaseFile.hpp"
#include "ns/NsCase.hpp"

namespace octoflow::bench {

namespace {

struct NsFlags {
  std::string backend = "auto", size = "1024x512", precision = "fp32";
  double reynolds = 3000.0;
  long long steps = 0, warmup = 200;
  int blockCells = -1;
  std::string smoothing;  // "PRE,POST" sweeps (default: the case's)
  double omega = 0.0;
  bool json = false;
};

int runNsBenchmark(const NsFlags& flags) {
  const exec::Backend backend = exec::resolveBackend(exec::parseBackendChoice(flags.backend, "--backend"));
  int nx = 0, ny = 0;
  char rest = 0;
  if (std::sscanf(flags.size.c_str(), "%dx%d%c", &nx, &ny, &rest) != 2 || nx <= 0 || ny <= 0)
    throw InputError("--size", "", "expected WIDTHxHEIGHT in cells (such as 1024x512), got \"" + flags.size + "\"");
  if (flags.steps < 0) throw InputError("--steps", "", "expected a positive integer");
  if (flags.warmup < 0) throw InputError("--warmup", "", "expected an integer >= 0");
  // The seed's geometry: the cylinder a sixteenth of the channel's height across, a quarter of
  // the way down the channel.
  const double length = 32.0, height = length * ny / nx;
  char text[512];
  std::snprintf(text, sizeof text,
                "[case]\nname = \"bench\"\nsolver = \"ns2d\"\nsteps = 1\n[domain]\nsize = [%d, %d]\n[ns]\nreynolds = %.17g\n"
                "size = [%.17g, %.17g]\nprecision = \"%s\"\n[ns.cylinder]\ncentre = [%.17g, %.17g]\ndiameter = %.17g\n",
                nx, ny, flags.reynolds, length, height, flags.precision.c_str(), length / 4.0, height / 2.0, height / 16.0);
  const io::CaseDescription d = io::parseCase(text, "bench ns");
  const auto& nsCase = dynamic_cast<const ns::NsCase&>(*d.solverCase);
  ns::NsConfig config = nsCase.config;
  if (flags.blockCells >= 0) config.multigrid.blockCells = flags.blockCells;
  if (!flags.smoothing.empty()) {
    int pre = 0, post = 0;
    if (std::sscanf(flags.smoothing.c_str(), "%d,%d%c", &pre, &post, &rest) != 2 || pre < 1 || post < 1)
      throw InputError("--smoothing", "", "expected PRE,POST sweeps (such as 2,1), got \"" + flags.smoothing + "\"");
    config.multigrid.shape.preSmoothing = pre;
    config.multigrid.shape.postSmoothing = post;
  }
  if (flags.omega != 0.0) {
    if (!(flags.omega > 0.0 && flags.omega < 2.0)) throw InputError("--omega", "", "expected a relaxation factor in (0, 2)");
    config.multigrid.shape.omega = flags.omega;
  }
  const std::unique_ptr<ns::NsEngine> engine = ns::makeNsEngine(config, backend);
  engine->initialize();
  engine->advance(flags.warmup);  // past the impulsive start, whose first steps take more cycles
  engine->takeCycleCounts();
  const long long timelineStep = engine->step() + 2;  // the first timed step
  engine->recordTimeline(timelineStep);
  const TimedSteps timed = timeSteps([&](long long steps) { engine->advance(steps); }, flags.steps, false, 1000000);
  const std::vector<int> cycles = engine->takeCycleCounts();
  const double timedCycles =
      std::accumulate(cycles.end() - static_cast<std::ptrdiff_t>(timed.steps), cycles.end(), 0.0);
  const double cyclesPerStep = timedCycles / static_cast<double>(timed.steps);
  const double stepsPerSecond = static_cast<double>(timed.steps) / timed.seconds;
  const double mlups = stepsPerSecond * nx * ny / 1e6;
  const ns::PoissonReport& last = engine->poisson();
  std::string device = "CPU";
  if (backend == exec::Backend::Cuda)
    device = exec::cudaDevices().at(static_cast<std::size_t>(exec::currentCudaDevice())).name;

  // The phases' shares of the timeline's step (its marks: the end of each phase).
  const std::vector<sim::TimelineMark>& marks = engine->timeline();
  std::string shares, sharesJson;
  const double total = marks.empty() ? 0.0 : marks.back().microseconds;
  for (std::size_t m = 1; m < marks.size(); ++m) {
    const double share = total > 0 ? (marks[m].microseconds - marks[m - 1].microseconds) / total : 0.0;
    char line[200];
    std::snprintf(line, sizeof line, "    %5.1f %%  %8.1f us  %s\n", 100.0 * share,
                  marks[m].microseconds - marks[m - 1].microseconds, marks[m].what.c_str());
    shares += line;
    std::snprintf(line, sizeof line, "%s\"%s\": %.4f", sharesJson.empty() ? "" : ", ", marks[m].what.c_str(), share);
    sharesJson += line;
  }
  if (flags.json) {
    std::printf("{\"benchmark\": \"ns\", \"backend\": \"%s\", \"device\": \"%s\", \"size\": \"%dx%d\", \"precision\": \"%s\", "
                "\"reynolds\": %g, \"steps\": %lld, \"seconds\": %.4f, \"steps_per_second\": %.1f, \"mlups\": %.1f, "
                "\"cycles_per_step\": %.3f, \"tolerance\": %g, \"convergence_factor\": %.4f, \"step_microseconds\": %.1f, "
                "\"shares\": {%s}}\n",
                exec::backendName(backend), device.c_str(), nx, ny, flags.precision.c_str(), flags.reynolds, timed.steps,
                timed.seconds, stepsPerSecond, mlups, cyclesPerStep, nsCase.config.multigrid.tolerance,
                last.convergenceFactor(), total, sharesJson.c_str());
    return 0;
  }
  std::printf("ns2d %dx%d cylinder Re %g, %s, on %s (%s), smoothing %d,%d omega %.3g, levels of <= %d cells in one "
              "block: %lld steps in %.3f s\n",
              nx, ny, flags.reynolds, flags.precision.c_str(), exec::backendName(backend), device.c_str(),
              config.multigrid.shape.preSmoothing, config.multigrid.shape.postSmoothing, config.multigrid.shape.omega,
              config.multigrid.blockCells, timed.steps, timed.seconds);
  std::printf("  %.1f steps/s (%.1f us a step), %.1f MLUPS\n", stepsPerSecond, 1e6 / stepsPerSecond, mlups);
  std::printf("  multigrid: %.2f V-cycles a step to %g of the first residual; the last step's factor a cycle %.4f\n",
              cyclesPerStep, nsCase.config.multigrid.tolerance, last.convergenceFactor());
  if (!marks.empty()) std::printf("  step %lld's phases (%s, %.1f us in all):\n%s", timelineStep,
                                  backend == exec::Backend::Cuda ? "GPU events" : "host clock", total, shares.c_str());
  return 0;
}

}  // namespace

std::function<int()> defineNsBenchmark(CLI::App& command) {
  auto flags = std::make_shared<NsFlags>();
  command.add_option("--size", flags->size, "Cells WIDTHxHEIGHT (default 1024x512, the seed's)");
  command.add_option("--steps", flags->steps, "Timed steps (default: about one second)");
  command.add_option("--warmup", flags->warmup, "Steps before the timing (default 200)");
  command.add_option("--reynolds", flags->reynolds, "Reynolds number of the cylinder (default 3000)");
  command.add_option("--precision", flags->precision, "fp32 | fp64");
  command.add_option("--backend", flags->backend, "auto | cuda | cpu");
  command.add_option("--block-cells", flags->blockCells,
                     "Levels of at most this many cells run their part of a V-cycle in one GPU block (default 4096)");
  command.add_option("--smoothing", flags->smoothing, "Red-black sweeps before and after the coarse correction: PRE,POST (default 1,2)");
  command.add_option("--omega", flags->omega, "The smoothing sweeps' relaxation factor (default 1.15)");
  command.add_flag("--json", flags->json, "One JSON object instead of text");
  return [flags] { return runNsBenchmark(*flags); };
}

}  // namespace octoflow::bench
