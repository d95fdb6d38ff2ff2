// `octoflow bench reliability`: what the watchdog and checkpoints cost a run. The watchdog's check
// (the fields computed for the current state where the solver lives, searched for values that are
// not finite or out of range) is timed right after a step, as a run does it, and quoted as a
// fraction of a step at check_every = 200 (the default); a checkpoint is written and read back (to a folder given,
// default the system's temporary one) and quoted in GB/s. Prints figures; passes or fails nothing.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>

#include "BenchTiming.hpp"
#include "BenchmarkCommands.hpp"
#include "common/Error.hpp"
#include "io/CaseFile.hpp"
#include "io/Checkpoint.hpp"
#include "sim/FieldCheck.hpp"
#include "sim/Simulation.hpp"

namespace octoflow::bench {

namespace {

struct ReliabilityFlags {
  std::string backend = "auto", solver = "lbm", folder;
  long long size = 0, checkEvery = 200;
  int checks = 20;
};

std::string caseText(const std::string& solver, long long n) {
  const std::string size = "[" + std::to_string(n) + ", " + std::to_string(n) + ", " + std::to_string(n) + "]";
  if (solver == "lbm")
    return "[case]\nname = \"bench\"\nsteps = 1\n[lbm]\nlattice = \"D3Q19\"\ntau = 0.6\n[domain]\nperiodic = [false, false, false]\nsize = " + size +
           "\n[[boundary]]\nfaces = [\"y+\"]\ntype = \"moving_wall\"\nvelocity = [0.05, 0.0, 0.0]\n"
           "[[boundary]]\nfaces = [\"x-\", \"x+\", \"y-\", \"z-\", \"z+\"]\ntype = \"wall\"\n";
  if (solver == "phasefield")
    return "[case]\nname = \"bench\"\nsolver = \"phasefield\"\nsteps = 1\n[domain]\nsize = " + size +
           "\n[phasefield]\nnoise = 0.025\nnucleus_radius = " + std::to_string(n / 8.0) + "\n";
  throw InputError("--solver", "", "expected lbm or phasefield, got \"" + solver + "\"");
}

int runReliabilityBenchmark(const ReliabilityFlags& flags) {
  const exec::Backend backend = exec::resolveBackend(exec::parseBackendChoice(flags.backend, "--backend"));
  if (flags.size < 0) throw InputError("--size", "", "expected a positive integer");
  if (flags.checkEvery <= 0) throw InputError("--check-every", "", "expected a positive integer");
  if (flags.checks <= 0) throw InputError("--checks", "", "expected a positive integer");
  if (worldRanks() > 1) throw InputError("bench reliability", "", "runs on one rank (no mpirun)");
  const bool cuda = backend == exec::Backend::Cuda;
  const long long n = flags.size > 0 ? flags.size : (cuda ? 256 : 64);
  const io::CaseDescription d = io::parseCase(caseText(flags.solver, n), "bench reliability");
  const std::unique_ptr<sim::Simulation> simulation = d.solverCase->create(d, sim::CreateOptions{backend, false});
  simulation->advance(4);
  const TimedSteps timed = timeAdvance(*simulation, 0, true, 100000);
  const double stepSeconds = timed.seconds / static_cast<double>(timed.steps);

  // Each check follows a step, so the fields it searches are computed anew, as in a run.
  double checkSeconds = 0.0;
  sim::FieldFault fault;
  for (int c = 0; c < flags.checks; ++c) {
    simulation->advance(2);
    simulation->synchronize();
    const auto start = std::chrono::steady_clock::now();
    if (!sim::fieldsAreSane(*simulation, fault)) throw Error("the benchmark's flow diverged: " + fault.describe());
    checkSeconds += secondsSince(start);
  }
  checkSeconds /= flags.checks;

  // A checkpoint of the state, written and read back.
  const std::filesystem::path folder =
      flags.folder.empty() ? std::filesystem::temp_directory_path() / "octoflow_bench_reliability"
                           : std::filesystem::path(flags.folder);
  std::filesystem::create_directories(folder);
  const std::string path = (folder / io::checkpointFileName("bench", simulation->step())).string();
  auto start = std::chrono::steady_clock::now();
  io::CheckpointFile file;
  file.header.solver = d.solver;
  file.header.caseName = d.name;
  file.header.caseHash = d.stateHash;
  file.header.extent = d.extent;
  file.header.step = simulation->step();
  sim::SolverState state = simulation->saveState();
  file.arrays = std::move(state.arrays);
  file.records = std::move(state.records);
  const double saveSeconds = secondsSince(start);
  start = std::chrono::steady_clock::now();
  const std::uint64_t bytes = io::writeCheckpoint(path, file);
  const double writeSeconds = secondsSince(start);
  file = {};
  start = std::chrono::steady_clock::now();
  {
    io::CheckpointReader reader(path);
    simulation->restoreState(reader);
  }
  const double readSeconds = secondsSince(start);
  std::filesystem::remove(path);

  std::string device = "CPU";
  if (cuda) device = exec::cudaDevices().at(static_cast<std::size_t>(exec::currentCudaDevice())).name;
  std::printf("reliability, %s %lld^3 on %s (%s): a step %.3f ms (%lld timed)\n", flags.solver.c_str(), n,
              exec::backendName(backend), device.c_str(), 1e3 * stepSeconds, timed.steps);
  std::printf("  watchdog check %.3f ms = %.2f steps; every %lld steps: %.3f %% of a step\n", 1e3 * checkSeconds,
              checkSeconds / stepSeconds, flags.checkEvery, 100.0 * checkSeconds / (stepSeconds * flags.checkEvery));
  std::printf("  checkpoint %.2f GB: state to host %.3f s, written %.3f s (%.2f GB/s, fsync included), "
              "read back and restored %.3f s (%.2f GB/s)\n",
              bytes / 1e9, saveSeconds, writeSeconds, bytes / 1e9 / writeSeconds, readSeconds, bytes / 1e9 / readSeconds);
  return 0;
}

}  // namespace

std::function<int()> defineReliabilityBenchmark(CLI::App& command) {
  auto flags = std::make_shared<ReliabilityFlags>();
  command.add_option("--solver", flags->solver, "lbm (D3Q19 lid cavity) | phasefield (Kobayashi, noise on)");
  command.add_option("--size", flags->size, "Nodes per axis (default 256 on CUDA, 64 on CPU)");
  command.add_option("--check-every", flags->checkEvery, "Steps between watchdog checks the cost is quoted for (default 200, as runs)");
  command.add_option("--checks", flags->checks, "Checks timed (default 20)");
  command.add_option("--folder", flags->folder, "Where the checkpoint is written (default: the temporary folder)");
  command.add_option("--backend", flags->backend, "auto | cuda | cpu");
  return [flags] { return runReliabilityBenchmark(*flags); };
}

}  // namespace octoflow::bench
