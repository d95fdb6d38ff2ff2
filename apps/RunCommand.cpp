#include "RunCommand.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <vector>

#include "io/BackgroundWriter.hpp"
#include "ForcesLog.hpp"
#include "Progress.hpp"
#include "common/Error.hpp"
#include "insitu/FlowExtracts.hpp"
#include "io/CaseFile.hpp"
#include "lbm/UniformSolver.hpp"

#if OCTOFLOW_HAVE_MPI
#include <mpi.h>

#endif

#if OCTOFLOW_HAVE_PARAVIEW
#include "CatalystAdaptor.hpp"
#include "Channels.hpp"
#include "ImageDataBuilder.hpp"
#include "SurfaceBuilder.hpp"
#include "TracerBuilder.hpp"
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

#if OCTOFLOW_HAVE_PARAVIEW
// One step's fields as <case>_<step>.vti, with SI arrays beside the lattice ones when the case
// gives units (the grid itself stays in lattice units). Runs on the writer thread.
// With `boxes` (MPI) the fields are this rank's piece `box`, written as a piece of a .pvti (rank 0,
// given every rank's box, writes the .pvti).
void writeFieldsFile(const io::CaseDescription& description, adaptors::XmlSeriesWriter& writer, Index step,
                     const NodeBox& box, const float* density, const float* velocity,
                     const std::vector<NodeBox>* boxes, int rank) {
  auto image = adaptors::makeImageData(box, density, velocity);
  const io::PhysicalUnits& units = description.units;
  const std::size_t nodes = static_cast<std::size_t>(box.cellCount());
  std::vector<float> velocitySi, pressureSi;
  if (units.given) {
    if (velocity) {
      velocitySi.resize(3 * nodes);
      for (std::size_t i = 0; i < velocitySi.size(); ++i) velocitySi[i] = static_cast<float>(units.toSiVelocity(velocity[i]));
      adaptors::addPointArray(image, "velocity_si", velocitySi.data(), 3);
    }
    if (density) {
      pressureSi.resize(nodes);
      for (std::size_t i = 0; i < nodes; ++i) pressureSi[i] = static_cast<float>(units.toSiPressure(density[i]));
      adaptors::addPointArray(image, "pressure_si", pressureSi.data(), 1);
    }
    adaptors::addFieldValue(image, "dx_m", units.length);
    adaptors::addFieldValue(image, "dt_s", units.timeStep());
    adaptors::addFieldValue(image, "density_kg_m3", units.density);
    adaptors::addFieldValue(image, "time_s", step * units.timeStep());
  }
  if (boxes)
    writer.writePiece(step, static_cast<double>(step), image, rank, *boxes, description.lbm.extent);
  else
    writer.write(step, static_cast<double>(step), image);
}
#endif

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
#if OCTOFLOW_HAVE_MPI
  parallel::DistributedSolver solver(MPI_COMM_WORLD, description.lbm, backend);
  if (talk && solver.ranks() > 1) {
    const auto& dims = solver.piece().dims;
    std::fprintf(stderr, "octoflow: %d MPI ranks, %dx%dx%d pieces\n", solver.ranks(), dims[0], dims[1], dims[2]);
  }
#else
  lbm::UniformSolver solver(description.lbm, backend);
#endif
  insitu::FlowExtracts extracts(description, solver);
#if OCTOFLOW_HAVE_MPI
  // Over several ranks each hands its own piece of the grid to Catalyst and writes its own piece
  // of each field file (.pvti); one rank (or a build without MPI) hands and writes the whole grid.
  const bool pieces = solver.ranks() > 1;
#else
  const bool pieces = false;
#endif
  const io::TracerRunSettings& tracerSettings = description.tracers;
  if (talk && (extracts.hasTracers() || extracts.hasSurface()))
    std::fprintf(stderr, "octoflow: %s%s%s made on %s\n", extracts.hasTracers() ? "tracers" : "",
                 extracts.hasTracers() && extracts.hasSurface() ? " and " : "",
                 extracts.hasSurface() ? ("the " + description.surface.field + " surface").c_str() : "",
                 extracts.backend() == backend ? exec::backendName(backend) : "the host of rank 0");

#if OCTOFLOW_HAVE_PARAVIEW
  // Scripts load before anything is written: a broken script leaves no output behind.
  std::unique_ptr<adaptors::CatalystAdaptor> catalyst;
  if ((root || pieces) && !description.insitu.scripts.empty()) {
    std::vector<std::string> channels = {adaptors::kGridChannel};
    if (description.surface.enabled()) channels.push_back(adaptors::kSurfaceChannel);
    if (tracerSettings.enabled()) channels.push_back(adaptors::kTracersChannel);
    catalyst = std::make_unique<adaptors::CatalystAdaptor>(description.insitu.scripts,
                                                           (outputDirectory / "catalyst").string(), channels,
                                                           description.insitu.continueOnError, pieces);
  }
#else
  if (talk) std::fprintf(stderr, "octoflow: this build has no ParaView/VTK: no .vti/.vtp files are written\n");
#endif
  const Index totalSteps = description.steps;
  const Index outputEvery = description.output.every;
  const bool writeFields = !description.output.fields.empty();
  const Index tracersEvery = tracerSettings.enabled() ? tracerSettings.every : 0;

  const bool outputDirectoryExisted = std::filesystem::exists(outputDirectory);
  if (root) std::filesystem::create_directories(outputDirectory);
#if OCTOFLOW_HAVE_PARAVIEW
  // Files are written on a host thread (BackgroundWriter) from the host arrays of a step while
  // the solver goes on; the run waits for it before those arrays change.
  std::unique_ptr<adaptors::XmlSeriesWriter> fieldWriter, tracerWriter, surfaceWriter;
  if (root || pieces) fieldWriter = std::make_unique<adaptors::XmlSeriesWriter>(outputDirectory, description.name);
  if (root) {
    if (tracerSettings.enabled()) tracerWriter = std::make_unique<adaptors::XmlSeriesWriter>(outputDirectory, "tracers");
    if (description.surface.enabled())
      surfaceWriter = std::make_unique<adaptors::XmlSeriesWriter>(outputDirectory, "surface");
  }
  const Index insituEvery = description.insitu.scripts.empty() ? 0 : description.insitu.every;
#else
  const Index insituEvery = 0;
#endif
  io::BackgroundWriter background;
  const Index forcesEvery = description.forces.every;
  std::unique_ptr<ForcesLog> forces;
  if (root && forcesEvery > 0)
    forces = std::make_unique<ForcesLog>(outputDirectory / "forces.csv", description.forces, description.units,
                                         description.dimensions);

  // Time in the pipelines (rank 0): the first run (which loads the scripts) and the others.
  double catalystFirstSeconds = 0.0, catalystSeconds = 0.0;
  Index catalystRuns = 0;
  // Offline series are written at multiples of their `every` and at the last step.
  const auto outputStep = [&](Index step, Index every, bool enabled) {
    return enabled && (isMultiple(step, every) || step == totalSteps);
  };
#if OCTOFLOW_HAVE_PARAVIEW
  // Field files in pieces: rank 0 lists a step's pieces in its .pvti (and the .pvd) once every
  // rank has written its own, i.e. after all have waited for their writers.
  bool piecesPending = false;
  const auto publishPieces = [&] {
    if (!piecesPending) return;
#if OCTOFLOW_HAVE_MPI
    MPI_Barrier(MPI_COMM_WORLD);
#endif
    if (root) fieldWriter->publishPieces();
    piecesPending = false;
  };
#endif
  // Everything that happens at a step boundary: offline files and in-situ pipelines.
  auto handleStep = [&](Index step) {
    background.wait();  // the host arrays it may still be writing change below
#if OCTOFLOW_HAVE_PARAVIEW
    publishPieces();
#endif
    if (step > 0 && isMultiple(step, forcesEvery)) {
      const auto force = solver.obstacleForce();
      if (root) forces->write(step, force);
    }
    if (isMultiple(step, tracersEvery)) extracts.releaseTracers(step);
    const bool fieldOutput = outputStep(step, outputEvery, writeFields);
    const bool tracerOutput = outputStep(step, tracerSettings.outputEvery, tracerSettings.enabled());
    const bool surfaceOutput = outputStep(step, description.surface.outputEvery, description.surface.enabled());
    bool density = fieldOutput && description.output.wants("density");
    bool velocity = fieldOutput && description.output.wants("velocity");
#if OCTOFLOW_HAVE_PARAVIEW
    adaptors::CatalystAdaptor::FieldRequest request;
    if (catalyst && isMultiple(step, insituEvery)) request = catalyst->request(step, static_cast<double>(step));
    request = agreed(request);
    density = density || request.density;
    velocity = velocity || request.velocity;
    const bool surfaceNeeded = surfaceOutput || (request.surface && description.surface.enabled());
    const bool tracersNeeded = tracerOutput || (request.tracers && tracerSettings.enabled());
    // The surface first: on the CPU it is made from the host arrays the fields are fetched into.
    const insitu::Surface surface = surfaceNeeded ? extracts.surface() : insitu::Surface{};
    particles::TracerView tracers;
    if (root && tracersNeeded) tracers = extracts.tracers();
    // The grid this rank hands over: the whole grid (rank 0) or its piece (every rank).
    const bool fieldsNeeded = density || velocity;
    NodeBox box = NodeBox::of(description.lbm.extent);
#if OCTOFLOW_HAVE_MPI
    if (pieces) box = solver.pieceBoxes()[static_cast<std::size_t>(solver.rank())];
#endif
    const float* densityValues = nullptr;
    const float* velocityValues = nullptr;
    if (fieldsNeeded) {
#if OCTOFLOW_HAVE_MPI
      if (pieces) {
        const auto& piece = solver.pieceFields(density, velocity);
        box = piece.box;
        densityValues = density ? piece.density.data() : nullptr;
        velocityValues = velocity ? piece.velocity.data() : nullptr;
      }
#endif
      if (!pieces) {
        const lbm::HostFields& fields = solver.fetchFields(density, velocity);
        densityValues = density ? fields.density.data() : nullptr;
        velocityValues = velocity ? fields.velocity.data() : nullptr;
      }
    }
    if (!root && !pieces) return;
    if (fieldsNeeded) checkFinite(step, density ? densityValues : velocityValues, (density ? 1 : 3) * box.cellCount());
    // Catalyst first: at step 0 it imports the scripts, and a broken one stops the run before
    // any file of ours is written. Ranks other than 0 hand empty surfaces and tracers.
    const auto catalystStart = std::chrono::steady_clock::now();
    if (request.any)
      catalyst->execute(step, static_cast<double>(step), description.lbm.extent,
                        {{adaptors::kDensityArray, request.density ? densityValues : nullptr, 1},
                         {adaptors::kVelocityArray, request.velocity ? velocityValues : nullptr, 3}},
                        request.surface && surfaceNeeded ? &surface : nullptr,
                        request.tracers && tracersNeeded ? &tracers : nullptr, pieces ? &box : nullptr);
    if (request.any) {
      const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - catalystStart).count();
      (catalystRuns++ == 0 ? catalystFirstSeconds : catalystSeconds) += seconds;
    }
    if (fieldOutput) {
      const float* writtenDensity = description.output.wants("density") ? densityValues : nullptr;
      const float* writtenVelocity = description.output.wants("velocity") ? velocityValues : nullptr;
#if OCTOFLOW_HAVE_MPI
      const std::vector<NodeBox> boxes = pieces && root ? solver.pieceBoxes() : std::vector<NodeBox>{};
      const int rank = solver.rank();
#else
      const std::vector<NodeBox> boxes;
      const int rank = 0;
#endif
      background.post([&, step, box, boxes, rank, writtenDensity, writtenVelocity] {
        writeFieldsFile(description, *fieldWriter, step, box, writtenDensity, writtenVelocity,
                        pieces ? &boxes : nullptr, rank);
      });
      piecesPending = pieces;
    }
    if (!root) return;
    if (tracerOutput)
      background.post([&, step, tracers] {
        tracerWriter->write(step, static_cast<double>(step), adaptors::makeTracerPolyData(tracers));
      });
    if (surfaceOutput)
      background.post([&, step, surface] {
        surfaceWriter->write(step, static_cast<double>(step), adaptors::makeSurfacePolyData(surface));
      });
#else
    // No files without VTK, but an output step still checks that the run is sound.
    if (fieldOutput) {
      const auto& fields = solver.fetchFields(true, false);
      if (root) checkFinite(step, fields.density.data(), solver.nodeCount());
    }
    (void)density;
    (void)velocity;
    (void)tracerOutput;
    (void)surfaceOutput;
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
    target = std::min(target, nextMultiple(step, tracerSettings.outputEvery, totalSteps));
    target = std::min(target, nextMultiple(step, description.surface.outputEvery, totalSteps));
    target = std::min(target, nextMultiple(step, tracersEvery, totalSteps));
    target = agreed(std::min(target, nextMultiple(step, forcesEvery, totalSteps)));
    if (isMultiple(step, tracersEvery)) {
      // Over the steps to the next tracer step, in the flow of this one. On the CPU (and over
      // several ranks) that flow lands in the host arrays the writer may still be reading.
      if (!extracts.movesOnDevice()) background.wait();
      extracts.moveTracers(static_cast<int>(std::min(tracersEvery, totalSteps - step)));
    }
    solver.advance(target - step);
    handleStep(solver.step());
    progress.update(solver.step());
    const double rate = progress.stepsPerSecond(solver.step());
    chunk = std::max<Index>(1, static_cast<Index>(rate * kChunkSeconds));
  }
  background.wait();
#if OCTOFLOW_HAVE_PARAVIEW
  publishPieces();
#endif
  progress.finish(solver.step());
  if (talk && extracts.hasTracers())
    std::fprintf(stderr, "octoflow: tracers: %lld released, %lld not released (tracers.max_particles)\n",
                 static_cast<long long>(extracts.released()), static_cast<long long>(extracts.refused()));
#if OCTOFLOW_HAVE_PARAVIEW
  if (talk && catalystRuns > 0) {
    std::fprintf(stderr, "octoflow: in situ: the Catalyst pipelines ran %lld times: %.2f s the first (loading the scripts)",
                 static_cast<long long>(catalystRuns), catalystFirstSeconds);
    if (catalystRuns > 1) std::fprintf(stderr, ", then %.1f ms each", 1e3 * catalystSeconds / (catalystRuns - 1));
    std::fprintf(stderr, "\n");
  }
  if (talk && writeFields) std::fprintf(stderr, "octoflow: wrote %s\n", fieldWriter->seriesPath().c_str());
  if (talk && tracerWriter) std::fprintf(stderr, "octoflow: wrote %s\n", tracerWriter->seriesPath().c_str());
  if (talk && surfaceWriter) std::fprintf(stderr, "octoflow: wrote %s\n", surfaceWriter->seriesPath().c_str());
#endif
  if (talk && forces) std::fprintf(stderr, "octoflow: wrote %s\n", (outputDirectory / "forces.csv").c_str());
  return 0;
}

}  // namespace octoflow::app
