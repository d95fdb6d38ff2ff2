// The `octoflow` command line program.
#include <CLI/CLI.hpp>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <string>
#include <thread>

#include <functional>
#include <utility>
#include <vector>

#include "BenchmarkCommands.hpp"
#include "RunCommand.hpp"
#include "Watchdog.hpp"
#include "common/Error.hpp"
#include "exec/Backend.hpp"

#if OCTOFLOW_HAVE_MPI
#include <mpi.h>
#endif

namespace {

using namespace octoflow;

// Exit codes: 0 done; 1 a fault of the program or machine; 2 bad input (as bad flags); 3 the
// watchdog stopped a diverging run; 4 an output could not be written (disk full, permission);
// 130 and 143 stopped by SIGINT and SIGTERM (a checkpoint to go on from is written).
constexpr int kExitFailure = 1;
constexpr int kExitInputError = 2;
constexpr int kExitDiverged = 3;
constexpr int kExitOutputError = 4;

int printInfo() {
  std::printf("octoflow %s\n", OCTOFLOW_VERSION);
  std::printf("build: CUDA %s, MPI %s, ParaView %s\n", exec::cudaCompiled() ? "on" : "off",
              OCTOFLOW_HAVE_MPI ? "on" : "off", OCTOFLOW_HAVE_PARAVIEW ? "on (" OCTOFLOW_PARAVIEW_VERSION ")" : "off");
#if OCTOFLOW_HAVE_MPI
  char library[MPI_MAX_LIBRARY_VERSION_STRING];
  int length = 0;
  MPI_Get_library_version(library, &length);
  std::string firstLine(library, static_cast<std::size_t>(length));
  firstLine = firstLine.substr(0, firstLine.find_first_of("\n,"));
  std::printf("MPI: %s\n", firstLine.c_str());
#endif
  std::string whyNone;
  const auto devices = exec::cudaDevices(&whyNone, true);
  if (devices.empty()) std::printf("CUDA devices: none (%s)\n", whyNone.c_str());
  for (const auto& d : devices)
    std::printf("CUDA device %d: %s, compute capability %d.%d, %d SMs, %.1f GiB total, %.1f GiB free\n", d.index,
                d.name.c_str(), d.computeMajor, d.computeMinor, d.multiprocessors, d.totalBytes / 1073741824.0,
                d.freeBytes / 1073741824.0);
  std::printf("default backend: %s\n", exec::backendName(exec::resolveBackend(exec::BackendChoice::Auto)));
  return 0;
}

// A process held to one of the host's cores (Open MPI's mpirun binds each rank to a core by
// default when it starts one or two) runs its OpenMP threads on that core alone: the CPU
// backend's steps, and the set-up, regrids and output on either backend. Rank 0 says so.
void noteOneCore() {
  const exec::HostCores cores = exec::hostCores();
  if (cores.usable != 1 || cores.online < 2) return;
#if OCTOFLOW_HAVE_MPI
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank != 0) return;
#endif
  std::fprintf(stderr,
               "octoflow: this process may run on 1 of the host's %d cores (Open MPI's mpirun binds each rank to a core "
               "when it starts one or two): its host threads share that core; `mpirun --bind-to none` lets the ranks "
               "use the others\n",
               cores.online);
}

int runCli(int argc, char** argv) {
  CLI::App cli{"octoflow: GPU simulation (lattice Boltzmann, phase-field) with in-situ visualisation in ParaView"};
  cli.set_version_flag("--version", std::string("octoflow ") + OCTOFLOW_VERSION);
  cli.require_subcommand(1);

  app::RunOptions run;
  std::string backendText = "auto";
  auto* runCommand = cli.add_subcommand("run", "Run a case file");
  runCommand->add_option("case", run.casePath, "Case file (TOML, see docs/CASES.md)")->required();
  runCommand->add_option("--backend", backendText, "auto | cuda | cpu (auto: CUDA when a GPU is present)");
  CLI::Option* stepsOption = runCommand->add_option("--steps", run.steps, "Override the case's step count (the last step)");
  runCommand->add_option("--output", run.outputDirectory, "Override the output directory");
  runCommand->add_option("--catalyst", run.catalystScripts, "Add a Catalyst script (repeatable)");
  runCommand->add_flag("--quiet", run.quiet, "No progress or summary on stderr");
  runCommand->add_option("--restart", run.restartPath, "Go on from a checkpoint (<case>_<step>.ckpt, see docs/FORMATS.md)");

  std::string validatePath;
  auto* validateCommand = cli.add_subcommand("validate", "Parse and check a case file without running it");
  validateCommand->add_option("case", validatePath, "Case file")->required();

  auto* infoCommand = cli.add_subcommand("info", "Version, build options, CUDA devices, ParaView/MPI");

  auto* benchCommand = cli.add_subcommand("bench", "Benchmarks that print figures");
  benchCommand->require_subcommand(1);
  // Each benchmark defines its own options (bench/BenchmarkCommands.hpp).
  std::vector<std::pair<CLI::App*, std::function<int()>>> benchmarks;
  for (const bench::BenchmarkCommand& benchmark : bench::benchmarkCommands()) {
    CLI::App* command = benchCommand->add_subcommand(benchmark.name, benchmark.summary);
    benchmarks.emplace_back(command, benchmark.define(*command));
  }

  // A first word that names no command: say which it is (CLI11 would only ask for a command).
  if (argc > 1 && argv[1][0] != '-') {
    std::string commands;
    bool known = false;
    for (const CLI::App* command : cli.get_subcommands([](CLI::App*) { return true; })) {
      known = known || command->get_name() == argv[1];
      commands += (commands.empty() ? "" : ", ") + command->get_name();
    }
    if (!known) {
      std::fprintf(stderr, "octoflow: error: unknown command \"%s\" (expected one of: %s; octoflow --help)\n", argv[1],
                   commands.c_str());
      return kExitInputError;
    }
  }
  try {
    cli.parse(argc, argv);
  } catch (const CLI::Success& success) {
    return cli.exit(success);
  } catch (const CLI::ParseError& error) {
    // One line, as every other bad input: what CLI11 found, and where help is.
    std::fprintf(stderr, "octoflow: error: %s (octoflow --help, octoflow run --help)\n", error.what());
    return kExitInputError;
  }

  if (*runCommand) {
    run.stepsGiven = stepsOption->count() > 0;
    run.backend = exec::parseBackendChoice(backendText, "--backend");
    if (!run.quiet) noteOneCore();
    return app::runCase(run);
  }
  if (*validateCommand) return app::validateCase(validatePath);
  if (*infoCommand) return printInfo();
  for (const auto& [command, runBenchmark] : benchmarks)
    if (*command) {
      noteOneCore();
      return runBenchmark();
    }
  return kExitInputError;
}

}  // namespace

int main(int argc, char** argv) {
  // A file over the size limit (ulimit -f) fails its write (EFBIG, exit 4) instead of killing us.
  std::signal(SIGXFSZ, SIG_IGN);
#if OCTOFLOW_HAVE_MPI
  // MPI_Init maps the machine with hwloc, whose OpenGL component connects to every X display it
  // finds (:0, :1, ...) to ask for GPUs: an X server closing meanwhile (a user's session, a test's
  // virtual display) ends the rank with "X connection to :0 broken". We need no GPU locality from
  // X; a user's own HWLOC_COMPONENTS is kept.
  setenv("HWLOC_COMPONENTS", "-gl", 0);
  MPI_Init(&argc, &argv);
#endif
  int code = kExitFailure;
  std::string message;  // the one line a failure prints
  try {
    code = runCli(argc, argv);
  } catch (const InputError& error) {
    message = std::string("octoflow: error: ") + error.what();
    code = kExitInputError;
  } catch (const app::DivergenceError& error) {
    message = std::string("octoflow: stopped: ") + error.what();
    code = kExitDiverged;
  } catch (const OutputError& error) {
    message = std::string("octoflow: error: ") + error.what();
    code = kExitOutputError;
  } catch (const std::exception& error) {
    message = std::string("octoflow: failed: ") + error.what();
    code = kExitFailure;
  }
#if OCTOFLOW_HAVE_MPI
  // A rank that fails alone would leave the others waiting in a collective call: end them all.
  // Where every rank fails alike (the same case file), rank 0 speaks first and its abort ends the
  // others before they repeat it; a rank failing alone still says why, a moment later.
  int ranks = 1, rank = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (!message.empty()) {
    if (ranks > 1 && rank != 0) std::this_thread::sleep_for(std::chrono::milliseconds(500));
    std::fprintf(stderr, "%s%s\n", ranks > 1 ? ("[rank " + std::to_string(rank) + "] ").c_str() : "", message.c_str());
    std::fflush(stderr);
  }
  if (code != 0 && ranks > 1) MPI_Abort(MPI_COMM_WORLD, code);
  MPI_Finalize();
#else
  if (!message.empty()) std::fprintf(stderr, "%s\n", message.c_str());
#endif
  return code;
}
