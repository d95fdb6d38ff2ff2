#include "RunCommand.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <vector>

#include "ForcesLog.hpp"
#include "Progress.hpp"
#include "common/Error.hpp"
#include "io/CaseFile.hpp"
#include "lbm/UniformSolver.hpp"

#if OCTOFLOW_HAVE_MPI
#include <mpi.h>

#include "parallel/DistributedSolver.hpp"
#endif

#if OCTOFLOW_HAVE_PARAVIEW
#include "CatalystAdaptor.hpp"
#include "Channels.hpp"
#include "ImageDataBuilder.hpp"
#include "XmlSeriesWriter.hpp"
#endif

namespace octoflow::app {

namespace {

// Steps between checks of the clock: sized so that a chunk takes about this long.
constexpr double kChunkSeconds = 0.2;

io::CaseDescription loadWithOverrides(const RunOptions& options) {
  io::CaseDescription description = io::loadCase(options.casePath);
  if (options.steps < 0) throw InputError("--steps", "", "expected a positive integer, got " + std::to_string(options.steps));
  if (options.steps > 0) description.steps = options.steps;
  if (!options.outputDirectory.empty()) description.output.directory = options.outputDirectory;
  for (const std::string& script : options.catalystScripts) {
    if (!std::filesystem::is_regular_file(script))
      throw InputError("--catalyst", script, "Catalyst script not found");
    description.insitu.scripts.push_back(script);
  }
#if !OCTOFLOW_HAVE_PARAVIEW
  if (!description.insitu.scripts.empty())
    throw InputError(description.sourcePath, "insitu.scripts",
                     "this build has no ParaView Catalyst (configure with OCTOFLOW_ENABLE_PARAVIEW=ON)");
#endif
  return description;
}

bool isMultiple(Index step, Index every) { return every > 0 && step % every == 0; }

// Next step > `step` that is a multiple of `every` (or `last` when there is none before it).
Index nextMultiple(Index step, Index every, Index last) {
  if (every <= 0) return last;
  return std::min(last, (step / every + 1) * every);
}

// A run that has gone unstable says so at the first output it would have written.
void checkFinite(Index step, const float* values, Index count) {
  for (Index i = 0; i < count; ++i)
    if (!std::isfinite(values[i]))
      throw Error("the simulation diverged by step " + std::to_string(step) +
                  " (non-finite values): lower the velocities, raise tau (or use collision = \"trt\"), or refine the grid");
}

void printSummary(const io::CaseDescription& d, exec::Backend backend) {
  const auto& e = d.lbm.extent;
  const long long solidNodes = std::count(d.lbm.solid.begin(), d.lbm.solid.end(), std::uint8_t{1});
  std::fprintf(stderr,
               "octoflow: case '%s' (%s), %s %s %s, %lldx%lldx%lld (%lld obstacle nodes), tau %.4g (nu %.4g), "
               "%lld steps on %s\n",
               d.name.c_str(), d.sourcePath.c_str(), lbm::latticeName(d.lbm.lattice), lbm::collisionName(d.lbm.collision),
               lbm::storageName(d.lbm.storage), static_cast<long long>(e.nx), static_cast<long long>(e.ny),
               static_cast<long long>(e.nz), solidNodes, d.lbm.tau, lbm::viscosityFromTau(d.lbm.tau),
               static_cast<long long>(d.steps), exec::backendName(backend));
  if (d.units.given)
    std::fprintf(stderr, "octoflow: units: dx %.4g m, dt %.4g s, lattice velocity 1 = %.4g m/s, %lld steps = %.4g s\n",
                 d.units.length, d.units.timeStep(), d.units.velocity, static_cast<long long>(d.steps),
                 d.steps * d.units.timeStep());
}

// Under MPI every rank takes the decisions rank 0 takes (what to fetch, how far to step), so the
// collective calls match; without MPI there is nothing to agree on.
template <class T>
T agreed(T value) {
#if OCTOFLOW_HAVE_MPI
  MPI_Bcast(&value, sizeof value, MPI_BYTE, 0, MPI_COMM_WORLD);
#endif
  return value;
}

}  // namespace

int validateCase(const std::string& casePath) {
  const io::CaseDescription d = io::loadCase(casePath);
  const auto& e = d.lbm.extent;
  std::printf("%s: valid. case '%s', %s, %lldx%lldx%lld nodes, tau %.4g, %lld steps, output %s every %lld, %zu Catalyst script(s)\n",
              casePath.c_str(), d.name.c_str(), lbm::latticeName(d.lbm.lattice), static_cast<long long>(e.nx),
              static_cast<long long>(e.ny), static_cast<long long>(e.nz), d.lbm.tau, static_cast<long long>(d.steps),
              d.output.directory.c_str(), static_cast<long long>(d.output.every), d.insitu.scripts.size());
  return 0;
}

int runCase(const RunOptions& options) {
  const io::CaseDescription description = loadWithOverrides(options);
  const exec::Backend backend = exec::resolveBackend(options.backend);
#if OCTOFLOW_HAVE_MPI
  // Every rank runs its piece of the grid (one rank: the whole grid); rank 0 writes and renders.
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const bool root = rank == 0;
#else
  const bool root = true;
#endif
  const bool talk = root && !options.quiet;
  if (talk) printSummary(description, backend);

  const std::filesystem::path outputDirectory = description.output.directory;
#if OCTOFLOW_HAVE_PARAVIEW
  // Scripts load before anything is written: a broken script leaves no output behind.
  std::unique_ptr<adaptors::CatalystAdaptor> catalyst;
  if (root && !description.insitu.scripts.empty())
    catalyst = std::make_unique<adaptors::CatalystAdaptor>(
        description.insitu.scripts, (outputDirectory / "catalyst").string(), std::vector<std::string>{adaptors::kGridChannel},
        description.insitu.continueOnError);
#else
  if (talk) std::fprintf(stderr, "octoflow: this build has no ParaView/VTK: no .vti files are written\n");
#endif

#if OCTOFLOW_HAVE_MPI
  parallel::DistributedSolver solver(MPI_COMM_WORLD, description.lbm, backend);
  if (talk && solver.ranks() > 1) {
    const auto& dims = solver.piece().dims;
    std::fprintf(stderr, "octoflow: %d MPI ranks, %dx%dx%d pieces\n", solver.ranks(), dims[0], dims[1], dims[2]);
  }
#else
  lbm::UniformSolver solver(description.lbm, backend);
#endif
  const Index totalSteps = description.steps;
  const Index outputEvery = description.output.every;
  const bool writeFields = !description.output.fields.empty();

  const bool outputDirectoryExisted = std::filesystem::exists(outputDirectory);
  if (root) std::filesystem::create_directories(outputDirectory);
#if OCTOFLOW_HAVE_PARAVIEW
  std::unique_ptr<adaptors::XmlSeriesWriter> writer;
  if (root) writer = std::make_unique<adaptors::XmlSeriesWriter>(outputDirectory, description.name);
  const Index insituEvery = description.insitu.scripts.empty() ? 0 : description.insitu.every;
#else
  const Index insituEvery = 0;
#endif
  const Index forcesEvery = description.forces.every;
  std::unique_ptr<ForcesLog> forces;
  if (root && forcesEvery > 0)
    forces = std::make_unique<ForcesLog>(outputDirectory / "forces.csv", description.forces, description.units,
                                         description.dimensions);

  // Everything that happens at a step boundary: offline files and in-situ pipelines.
  auto handleStep = [&](Index step) {
    if (step > 0 && isMultiple(step, forcesEvery)) {
      const auto force = solver.obstacleForce();
      if (root) forces->write(step, force);
    }
    const bool output = writeFields && (isMultiple(step, outputEvery) || step == totalSteps);
    bool density = output && description.output.wants("density");
    bool velocity = output && description.output.wants("velocity");
#if OCTOFLOW_HAVE_PARAVIEW
    adaptors::CatalystAdaptor::FieldRequest request;
    if (root && isMultiple(step, insituEvery)) request = catalyst->request(step, static_cast<double>(step));
    request = agreed(request);
    density = density || request.density;
    velocity = velocity || request.velocity;
    if (!output && !request.any) return;
    const auto& fields = solver.fetchFields(density, velocity);
    if (!root) return;
    checkFinite(step, density ? fields.density.data() : fields.velocity.data(),
                density ? solver.nodeCount() : 3 * solver.nodeCount());
    const float* densityValues = density ? fields.density.data() : nullptr;
    const float* velocityValues = velocity ? fields.velocity.data() : nullptr;
    // Catalyst first: at step 0 it imports the scripts, and a broken one stops the run before
    // any file of ours is written.
    if (request.any)
      catalyst->execute(step, static_cast<double>(step), description.lbm.extent,
                        {{adaptors::kDensityArray, request.density ? densityValues : nullptr, 1},
                         {adaptors::kVelocityArray, request.velocity ? velocityValues : nullptr, 3}});
    if (output) {
      auto image = adaptors::makeImageData(description.lbm.extent, description.output.wants("density") ? densityValues : nullptr,
                                           description.output.wants("velocity") ? velocityValues : nullptr);
      const io::PhysicalUnits& units = description.units;
      std::vector<float> velocitySi, pressureSi;
      if (units.given) {
        // SI beside the lattice values (the grid itself stays in lattice units).
        if (description.output.wants("velocity")) {
          velocitySi.resize(3 * static_cast<std::size_t>(solver.nodeCount()));
          for (std::size_t i = 0; i < velocitySi.size(); ++i) velocitySi[i] = static_cast<float>(units.toSiVelocity(velocityValues[i]));
          adaptors::addPointArray(image, "velocity_si", velocitySi.data(), 3);
        }
        if (description.output.wants("density")) {
          pressureSi.resize(static_cast<std::size_t>(solver.nodeCount()));
          for (std::size_t i = 0; i < pressureSi.size(); ++i) pressureSi[i] = static_cast<float>(units.toSiPressure(densityValues[i]));
          adaptors::addPointArray(image, "pressure_si", pressureSi.data(), 1);
        }
        adaptors::addFieldValue(image, "dx_m", units.length);
        adaptors::addFieldValue(image, "dt_s", units.timeStep());
        adaptors::addFieldValue(image, "density_kg_m3", units.density);
        adaptors::addFieldValue(image, "time_s", step * units.timeStep());
      }
      writer->write(step, static_cast<double>(step), image);
    }
#else
    // No files without VTK, but an output step still checks that the run is sound.
    if (output) {
      const auto& fields = solver.fetchFields(true, false);
      if (root) checkFinite(step, fields.density.data(), solver.nodeCount());
    }
    (void)density;
    (void)velocity;
#endif
  };

  Progress progress(totalSteps, solver.nodeCount(), talk);
  try {
    handleStep(0);
  } catch (const InputError&) {
    // A script that fails on its first run is bad input: leave nothing of this run behind.
    forces.reset();
    if (root && !outputDirectoryExisted) std::filesystem::remove_all(outputDirectory);
    throw;
  }
  Index chunk = 1;
  while (solver.step() < totalSteps) {
    const Index step = solver.step();
    Index target = std::min(totalSteps, step + chunk);
    if (writeFields) target = std::min(target, nextMultiple(step, outputEvery, totalSteps));
    target = std::min(target, nextMultiple(step, insituEvery, totalSteps));
    target = agreed(std::min(target, nextMultiple(step, forcesEvery, totalSteps)));
    solver.advance(target - step);
    handleStep(solver.step());
    progress.update(solver.step());
    const double rate = progress.stepsPerSecond(solver.step());
    chunk = std::max<Index>(1, static_cast<Index>(rate * kChunkSeconds));
  }
  progress.finish(solver.step());
#if OCTOFLOW_HAVE_PARAVIEW
  if (talk && writeFields) std::fprintf(stderr, "octoflow: wrote %s\n", writer->seriesPath().c_str());
#endif
  if (talk && forces) std::fprintf(stderr, "octoflow: wrote %s\n", (outputDirectory / "forces.csv").c_str());
  return 0;
}

}  // namespace octoflow::app
