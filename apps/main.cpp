// The `octoflow` command line program.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <string>

#include "InSituBenchmark.hpp"
#include "IsosurfaceBenchmark.hpp"
#include "LbmBenchmark.hpp"
#include "RunCommand.hpp"
#include "common/Error.hpp"
#include "exec/Backend.hpp"
#include "lbm/Lattice.hpp"

#if OCTOFLOW_HAVE_MPI
#include <mpi.h>
#endif

namespace {

using namespace octoflow;

// User errors exit with 2 (as bad flags do); faults of the program or machine with 1.
constexpr int kExitInputError = 2;
constexpr int kExitFailure = 1;

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

lbm::LatticeKind parseLattice(const std::string& text) {
  for (auto kind : {lbm::LatticeKind::D2Q9, lbm::LatticeKind::D3Q19, lbm::LatticeKind::D3Q27})
    if (text == lbm::latticeName(kind)) return kind;
  throw InputError("--lattice", "", "expected D2Q9, D3Q19 or D3Q27, got '" + text + "'");
}

int runCli(int argc, char** argv) {
  CLI::App cli{"octoflow: GPU lattice Boltzmann with in-situ visualisation in ParaView"};
  cli.set_version_flag("--version", std::string("octoflow ") + OCTOFLOW_VERSION);
  cli.require_subcommand(1);

  app::RunOptions run;
  std::string backendText = "auto";
  auto* runCommand = cli.add_subcommand("run", "Run a case file");
  runCommand->add_option("case", run.casePath, "Case file (TOML, see docs/CASES.md)")->required();
  runCommand->add_option("--backend", backendText, "auto | cuda | cpu (auto: CUDA when a GPU is present)");
  runCommand->add_option("--steps", run.steps, "Override the case's step count");
  runCommand->add_option("--output", run.outputDirectory, "Override the output directory");
  runCommand->add_option("--catalyst", run.catalystScripts, "Add a Catalyst script (repeatable)");
  runCommand->add_flag("--quiet", run.quiet, "No progress or summary on stderr");

  std::string validatePath;
  auto* validateCommand = cli.add_subcommand("validate", "Parse and check a case file without running it");
  validateCommand->add_option("case", validatePath, "Case file")->required();

  auto* infoCommand = cli.add_subcommand("info", "Version, build options, CUDA devices, ParaView/MPI");

  auto* benchCommand = cli.add_subcommand("bench", "Benchmarks that print figures");
  benchCommand->require_subcommand(1);
  auto* benchLbm = benchCommand->add_subcommand("lbm", "Uniform LBM MLUPS vs the measured copy bandwidth");
  std::string latticeText = "D3Q19", benchBackendText = "auto", collisionText = "bgk", storageText = "fp32", lesText = "none";
  long long benchSize = 0, benchSteps = 0;
  bool json = false;
  benchLbm->add_option("--lattice", latticeText, "D2Q9 | D3Q19 | D3Q27");
  benchLbm->add_option("--collision", collisionText, "bgk | trt | mrt");
  benchLbm->add_option("--storage", storageText, "fp32 | fp16 (FP16 storage, FP32 arithmetic)");
  benchLbm->add_option("--les", lesText, "none | smagorinsky | csm");
  benchLbm->add_option("--size", benchSize, "Nodes per axis (default 256 on CUDA, 64 on CPU; D2Q9 4096/512)");
  benchLbm->add_option("--steps", benchSteps, "Timed steps (default: about one second)");
  benchLbm->add_option("--backend", benchBackendText, "auto | cuda | cpu");
  benchLbm->add_flag("--json", json, "One JSON object instead of text");
  bool weak = false, matrix = false, timeline = false, forced = false;
  benchLbm->add_flag("--forced", forced, "With a uniform body force (1e-6 along x): times the kernels' forced form");
  benchLbm->add_flag("--timeline", timeline,
                     "Print when each phase of one step finished (GPU events; under mpirun with the halo exchange)");
  benchLbm->add_flag("--weak", weak, "Under mpirun: each rank keeps a box of --size (weak scaling); default: the box is cut over the ranks");
  benchLbm->add_flag("--matrix", matrix,
                     "D2Q9, D3Q19, D3Q27 x BGK, MRT x FP32, FP16 in one table (--size: the 3D edge, D2Q9 16 times it)")
      ->excludes("--lattice")
      ->excludes("--collision")
      ->excludes("--storage");

  auto* benchIsosurface = benchCommand->add_subcommand(
      "isosurface", "phi = 0.5 surface of a sphere extracted on the device vs copying the whole field to the host");
  std::string isosurfaceBackendText = "auto";
  long long isosurfaceSize = 0;
  int isosurfaceRepeats = 0;
  bool isosurfaceJson = false;
  benchIsosurface->add_option("--size", isosurfaceSize, "Nodes per axis of the cubic field (default 512 on CUDA, 64 on CPU)");
  benchIsosurface->add_option("--repeats", isosurfaceRepeats, "Timed extractions (default 20 on CUDA, 3 on CPU)");
  benchIsosurface->add_option("--backend", isosurfaceBackendText, "auto | cuda | cpu");
  benchIsosurface->add_flag("--json", isosurfaceJson, "One JSON object instead of text");

  auto* benchInSitu = benchCommand->add_subcommand(
      "insitu", "time a step of a GPU run with and without tracers and an isosurface handed to the host");
  std::string inSituBackendText = "auto";
  bench::InSituBenchmarkOptions inSitu;
  bool inSituJson = false;
  benchInSitu->add_option("--size", inSitu.size, "Nodes per axis (default 256 on CUDA, 32 on CPU)");
  benchInSitu->add_option("--steps", inSitu.steps, "Timed steps each way (default 500 on CUDA, 100 on CPU)");
  benchInSitu->add_option("--every", inSitu.every, "Steps between hand-offs of the surface and tracers (default 50)");
  benchInSitu->add_option("--tracers-every", inSitu.tracersEvery, "Steps between tracer moves (default 1)");
  benchInSitu->add_option("--tracers", inSitu.tracers, "Tracers (default 100000 on CUDA, 1000 on CPU)");
  benchInSitu->add_flag("--fields", inSitu.fields, "Also copy the velocity field to the host at each hand-off");
  benchInSitu->add_option("--backend", inSituBackendText, "auto | cuda | cpu");
  benchInSitu->add_flag("--json", inSituJson, "One JSON object instead of text");

  try {
    cli.parse(argc, argv);
  } catch (const CLI::Success& success) {
    return cli.exit(success);
  } catch (const CLI::ParseError& error) {
    cli.exit(error);
    return kExitInputError;
  }

  if (*runCommand) {
    run.backend = exec::parseBackendChoice(backendText, "--backend");
    return app::runCase(run);
  }
  if (*validateCommand) return app::validateCase(validatePath);
  if (*infoCommand) return printInfo();
  if (*benchLbm) {
    bench::LbmBenchmarkOptions options;
    options.lattice = parseLattice(latticeText);
    if (collisionText != "bgk" && collisionText != "trt" && collisionText != "mrt")
      throw InputError("--collision", "", "expected bgk, trt or mrt, got '" + collisionText + "'");
    options.collision = collisionText == "trt"   ? lbm::CollisionKind::Trt
                        : collisionText == "mrt" ? lbm::CollisionKind::Mrt
                                                 : lbm::CollisionKind::Bgk;
    if (storageText != "fp32" && storageText != "fp16")
      throw InputError("--storage", "", "expected fp32 or fp16, got '" + storageText + "'");
    options.storage = storageText == "fp16" ? lbm::StorageKind::Fp16 : lbm::StorageKind::Fp32;
    if (lesText != "none" && lesText != "smagorinsky" && lesText != "csm")
      throw InputError("--les", "", "expected none, smagorinsky or csm, got '" + lesText + "'");
    options.les = lesText == "smagorinsky" ? lbm::LesModel::Smagorinsky
                  : lesText == "csm"       ? lbm::LesModel::Csm
                                           : lbm::LesModel::None;
    options.backend = exec::resolveBackend(exec::parseBackendChoice(benchBackendText, "--backend"));
    if (benchSize < 0) throw InputError("--size", "", "expected a positive integer");
    if (benchSteps < 0) throw InputError("--steps", "", "expected a positive integer");
    options.size = benchSize;
    options.steps = benchSteps;
    options.weak = weak;
    options.timeline = timeline;
    options.forced = forced;
    if (matrix) {
      const auto results = bench::runLbmMatrix(options);
      if (!results.empty() && results.front().report) {
        if (json)
          for (const auto& result : results) std::fputs(bench::formatJson(result).c_str(), stdout);
        else
          std::fputs(bench::formatMatrix(results).c_str(), stdout);
      }
      return 0;
    }
    const auto result = bench::runLbmBenchmark(options);
    if (result.report) std::fputs((json ? bench::formatJson(result) : bench::formatText(result)).c_str(), stdout);
    return 0;
  }
  if (*benchIsosurface) {
    bench::IsosurfaceBenchmarkOptions options;
    options.backend = exec::resolveBackend(exec::parseBackendChoice(isosurfaceBackendText, "--backend"));
    if (isosurfaceSize < 0) throw InputError("--size", "", "expected a positive integer");
    if (isosurfaceRepeats < 0) throw InputError("--repeats", "", "expected a positive integer");
    options.size = isosurfaceSize;
    options.repeats = isosurfaceRepeats;
    const auto result = bench::runIsosurfaceBenchmark(options);
    std::fputs((isosurfaceJson ? bench::formatJson(result) : bench::formatText(result)).c_str(), stdout);
    return 0;
  }
  if (*benchInSitu) {
    inSitu.backend = exec::resolveBackend(exec::parseBackendChoice(inSituBackendText, "--backend"));
    for (const auto& [name, value] : {std::pair{"--size", inSitu.size}, std::pair{"--steps", inSitu.steps},
                                      std::pair{"--tracers", inSitu.tracers}})
      if (value < 0) throw InputError(name, "", "expected a positive integer");
    const auto result = bench::runInSituBenchmark(inSitu);
    std::fputs((inSituJson ? bench::formatJson(result) : bench::formatText(result)).c_str(), stdout);
    return 0;
  }
  return kExitInputError;
}

}  // namespace

int main(int argc, char** argv) {
#if OCTOFLOW_HAVE_MPI
  MPI_Init(&argc, &argv);
#endif
  int code = kExitFailure;
  try {
    code = runCli(argc, argv);
  } catch (const InputError& error) {
    std::fprintf(stderr, "octoflow: error: %s\n", error.what());
    code = kExitInputError;
  } catch (const std::exception& error) {
    std::fprintf(stderr, "octoflow: failed: %s\n", error.what());
    code = kExitFailure;
  }
#if OCTOFLOW_HAVE_MPI
  // A rank that fails alone would leave the others waiting in a collective call: end them all.
  int ranks = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  if (code != 0 && ranks > 1) MPI_Abort(MPI_COMM_WORLD, code);
  MPI_Finalize();
#endif
  return code;
}
