#include "RunCommand.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <memory>
#include <vector>

#include "CheckpointFiles.hpp"
#include "DiagnosticsLog.hpp"
#include "Progress.hpp"
#include "StopSignals.hpp"
#include "Watchdog.hpp"
#include "sim/FieldCheck.hpp"
#include "common/Error.hpp"
#include "insitu/FlowExtracts.hpp"
#include "io/BackgroundWriter.hpp"
#include "io/CaseFile.hpp"
#include "sim/Simulation.hpp"

#if OCTOFLOW_HAVE_MPI
#include <mpi.h>

#endif

#if OCTOFLOW_HAVE_PARAVIEW
#include "AmrBuilder.hpp"
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
  if (options.stepsGiven && options.steps <= 0)
    throw InputError("--steps", "", "expected a positive integer, got " + std::to_string(options.steps));
  // CLI11 turns an integer too large for long long into long long's maximum: a typo such as
  // --steps 10000000000000000000000 must not start a run that never ends.
  if (options.steps == std::numeric_limits<long long>::max())
    throw InputError("--steps", "", "out of range (expected a positive integer below 2^63 - 1)");
  if (options.stepsGiven) description.steps = options.steps;
  if (!options.outputDirectory.empty()) description.output.directory = options.outputDirectory;
  // A file where the output folder or one of its parents should be: no folder can be made there.
  // Said now, as bad input, before the solver starts.
  std::error_code error;
  std::filesystem::path folder = std::filesystem::absolute(description.output.directory, error);
  while (!std::filesystem::exists(folder, error) && folder.has_relative_path()) folder = folder.parent_path();
  if (std::filesystem::exists(folder, error) && !std::filesystem::is_directory(folder, error)) {
    const std::string problem = "\"" + description.output.directory + "\" cannot be made: " + folder.string() +
                                " exists and is not a folder";
    if (!options.outputDirectory.empty()) throw InputError("--output", "", problem);
    throw InputError(description.sourcePath, "output.directory", problem);
  }
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

std::string gridSize(const Extent& e) {
  return std::to_string(e.nx) + "x" + std::to_string(e.ny) + "x" + std::to_string(e.nz);
}

void printSummary(const io::CaseDescription& d, const sim::Simulation& simulation) {
  std::fprintf(stderr, "octoflow: case '%s' (%s), solver %s, %s nodes: %s; %lld steps on %s\n", d.name.c_str(),
               d.sourcePath.c_str(), d.solver.c_str(), gridSize(d.extent).c_str(), simulation.describe().c_str(),
               static_cast<long long>(d.steps), exec::backendName(simulation.backend()));
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

// Ranks of the run, and those on this host (they share its GPUs and memory).
std::array<int, 2> ranksInAllAndOnHost() {
  std::array<int, 2> ranks{1, 1};
#if OCTOFLOW_HAVE_MPI
  MPI_Comm_size(MPI_COMM_WORLD, &ranks[0]);
  MPI_Comm host;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &host);
  MPI_Comm_size(host, &ranks[1]);
  MPI_Comm_free(&host);
#endif
  return ranks;
}

// A grid beyond the solver's index limits, or larger than the memory of the machine, is refused
// (naming domain.size, the bytes needed and available) before anything is allocated.
void checkGridFits(const io::CaseDescription& d, exec::Backend backend) {
  sim::MemoryNeeds needs = d.solverCase->memoryNeeds(backend);
  if (d.tracers.enabled()) needs.workingBytesPerNode += needs.tracerBytesPerNode;
  const auto [ranks, ranksOnHost] = ranksInAllAndOnHost();
  const double nodes = static_cast<double>(d.extent.cellCount());
  // A piece's ghost layers: at most two more layers of its largest face an axis.
  const double perRank = nodes / ranks * 1.1 + 64.0;
  const auto fail = [&](const std::string& what) {
    throw InputError(d.sourcePath, "domain.size",
                     gridSize(d.extent) + " = " + std::to_string(d.extent.cellCount()) + " nodes " + what);
  };
  if (perRank > static_cast<double>(needs.maxNodesPerGrid))
    fail("over " + std::to_string(ranks) + " rank(s) leave more than " + std::to_string(needs.maxNodesPerGrid) +
         " nodes to a rank, beyond the solver's index range: use more MPI ranks or a smaller grid");
  const auto bytes = [](double value) { return OutOfMemoryError::formatBytes(static_cast<std::size_t>(value)); };
  if (backend == exec::Backend::Cuda) {
    const std::vector<exec::CudaDeviceInfo> devices = exec::cudaDevices(nullptr, true);
    if (!devices.empty()) {
      std::size_t freeBytes = devices.front().freeBytes;
      for (const auto& device : devices) freeBytes = std::min(freeBytes, device.freeBytes);
      const int sharing = (ranksOnHost + static_cast<int>(devices.size()) - 1) / static_cast<int>(devices.size());
      const double needed = perRank * needs.workingBytesPerNode * sharing;
      if (needed > 0.95 * static_cast<double>(freeBytes))
        fail("need " + bytes(needed) + " of GPU memory a device (" + std::to_string(sharing) + " rank(s) on it), " +
             bytes(static_cast<double>(freeBytes)) + " free: use more GPUs (MPI ranks) or a smaller grid");
    }
  }
  const double host = exec::availableHostBytes();
  const double hostNeeded =
      ranksOnHost * perRank * (needs.hostBytesPerNode + (backend == exec::Backend::Cpu ? needs.workingBytesPerNode : 0.0)) +
      (ranks > 1 ? nodes * needs.gatherBytesPerNode : 0.0);
  if (host > 0.0 && hostNeeded > 0.95 * host)
    fail("need " + bytes(hostNeeded) + " of host memory on this machine, " + bytes(host) +
         " available: use more machines (MPI ranks) or a smaller grid");
}

// The stop signal any rank has received (0: none), on every rank.
int agreedSignal(int signal) {
#if OCTOFLOW_HAVE_MPI
  int ranks = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  if (ranks > 1) MPI_Allreduce(MPI_IN_PLACE, &signal, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
#endif
  return signal;
}

void createOutputDirectory(const std::filesystem::path& directory) {
  std::error_code error;
  std::filesystem::create_directories(directory, error);
  if (error) throw OutputError(directory.string(), error.message());
}

#if OCTOFLOW_HAVE_PARAVIEW
// One step's fields as <case>_<step>.vti, with the solver's physical arrays and metadata beside
// the lattice ones (the grid itself stays in lattice units). Runs on the writer thread. With
// `boxes` (MPI) the fields are this rank's piece, written as a piece of a .pvti (rank 0, given
// every rank's box, writes the .pvti).
void writeFieldsFile(const io::CaseDescription& description, const sim::Simulation& simulation,
                     adaptors::XmlSeriesWriter& writer, Index step, const sim::FieldSet& fields,
                     const std::vector<NodeBox>* boxes, int rank) {
  std::vector<sim::DerivedArray> physical;
  auto image = adaptors::makeFieldsImage(simulation, step, fields, physical);
  const double time = simulation.timeOf(step);
  if (boxes)
    writer.writePiece(step, time, image, rank, *boxes, description.extent);
  else
    writer.write(step, time, image);
}
#endif

// The fields of `all` a step needs: those in `asked`, in the solver's order.
std::vector<std::string> selected(const std::vector<std::string>& all, const std::vector<bool>& asked) {
  std::vector<std::string> names;
  for (std::size_t n = 0; n < all.size(); ++n)
    if (asked[n]) names.push_back(all[n]);
  return names;
}

}  // namespace

int validateCase(const std::string& casePath) {
  const io::CaseDescription d = io::loadCase(casePath);
  std::printf("%s: valid. case '%s', solver %s: %s, %s nodes, %lld steps, output %s every %lld, %zu Catalyst script(s)\n",
              casePath.c_str(), d.name.c_str(), d.solver.c_str(), d.solverCase->describe().c_str(),
              gridSize(d.extent).c_str(), static_cast<long long>(d.steps), d.output.directory.c_str(),
              static_cast<long long>(d.output.every), d.insitu.scripts.size());
  return 0;
}

int runCase(const RunOptions& options) {
  const io::CaseDescription description = loadWithOverrides(options);
  const exec::Backend backend = exec::resolveBackend(options.backend);
  checkGridFits(description, backend);
  // Every rank runs its piece of the grid (one rank: the whole grid); rank 0 writes and renders.
  std::unique_ptr<sim::Simulation> simulation =
      description.solverCase->create(description, sim::CreateOptions{backend, OCTOFLOW_HAVE_MPI != 0});
  const bool root = simulation->rank() == 0;
  const bool talk = root && !options.quiet;
  if (talk) printSummary(description, *simulation);

  const std::filesystem::path outputDirectory = description.output.directory;
  insitu::FlowExtracts extracts(description, *simulation);
  // A restart reads its checkpoint before anything is written: a bad one leaves no output behind.
  Index startStep = 0;
  if (!options.restartPath.empty()) {
    startStep = restoreCheckpoint(options.restartPath, description, *simulation, &extracts);
    if (startStep >= description.steps)
      throw InputError(options.restartPath, "",
                       "the checkpoint is at step " + std::to_string(startStep) + " and the run ends at step " +
                           std::to_string(description.steps) + " (case.steps, --steps): nothing left to run");
    if (talk) std::fprintf(stderr, "octoflow: restarted from %s at step %lld\n", options.restartPath.c_str(),
                           static_cast<long long>(startStep));
  }
  // Over several ranks each hands its own piece of the grid to Catalyst and writes its own piece
  // of each field file (.pvti); one rank hands and writes the whole grid.
  const bool pieces = simulation->ranks() > 1;
  const io::TracerRunSettings& tracerSettings = description.tracers;
  if (talk && (extracts.hasTracers() || extracts.hasSurface()))
    std::fprintf(stderr, "octoflow: %s%s%s made on %s\n", extracts.hasTracers() ? "tracers" : "",
                 extracts.hasTracers() && extracts.hasSurface() ? " and " : "",
                 extracts.hasSurface() ? ("the " + description.surface.field + " surface").c_str() : "",
                 extracts.backend() == backend ? exec::backendName(backend) : "the host of rank 0");
  const std::vector<std::string> fieldNames = sim::fieldNames(simulation->fields());

#if OCTOFLOW_HAVE_PARAVIEW
  // Scripts load before anything is written: a broken script leaves no output behind.
  std::unique_ptr<adaptors::CatalystAdaptor> catalyst;
  if ((root || pieces) && !description.insitu.scripts.empty()) {
    std::vector<std::string> channels = {adaptors::kGridChannel};
    if (description.surface.enabled()) channels.push_back(adaptors::kSurfaceChannel);
    if (tracerSettings.enabled()) channels.push_back(adaptors::kTracersChannel);
    if (simulation->blockGrid()) channels.push_back(adaptors::kAmrChannel);
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
  if (root) createOutputDirectory(outputDirectory);
#if OCTOFLOW_HAVE_PARAVIEW
  // Files are written on a host thread (BackgroundWriter) from the host arrays of a step while
  // the solver goes on; the run waits for it before those arrays change.
  std::unique_ptr<adaptors::XmlSeriesWriter> fieldWriter, tracerWriter, surfaceWriter, blockWriter;
  if (root || pieces) fieldWriter = std::make_unique<adaptors::XmlSeriesWriter>(outputDirectory, description.name);
  // A solver with levels: its blocks beside level 0's grid, as <case>_amr_<step>.vthb (under MPI
  // each rank writes its blocks, rank 0 the summary).
  if ((root || pieces) && simulation->blockGrid())
    blockWriter = std::make_unique<adaptors::XmlSeriesWriter>(outputDirectory, description.name + "_amr");
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
  const sim::DiagnosticsLog diagnosticsLog = simulation->diagnosticsLog();
  const Index diagnosticsEvery = diagnosticsLog.every;
  std::unique_ptr<DiagnosticsCsv> diagnostics;
  if (root && diagnosticsEvery > 0)
    diagnostics = std::make_unique<DiagnosticsCsv>(outputDirectory / diagnosticsLog.fileName, diagnosticsLog.columns,
                                                   options.restartPath.empty() ? -1 : startStep);
#if OCTOFLOW_HAVE_PARAVIEW
  // A restart goes on with the series of the run it continues: their entries up to its step stay.
  if (!options.restartPath.empty()) {
    const double resumeTime = simulation->timeOf(startStep);
    for (auto* writer : {fieldWriter.get(), tracerWriter.get(), surfaceWriter.get(), blockWriter.get()})
      if (writer && root) writer->resume(resumeTime);
  }
#endif

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
    if (root) {
      fieldWriter->publishPieces();
      if (blockWriter) blockWriter->publishPieces();
    }
    piecesPending = false;
  };
#endif
  // Everything that happens at a step boundary: offline files and in-situ pipelines.
  auto handleStep = [&](Index step) {
    background.wait();  // the host arrays it may still be writing change below
#if OCTOFLOW_HAVE_PARAVIEW
    publishPieces();
#endif
    // Diagnostics rows at multiples of their `every` and at the last step.
    if (step > 0 && diagnosticsEvery > 0 && (isMultiple(step, diagnosticsEvery) || step == totalSteps)) {
      const std::vector<double> row = simulation->diagnostics();
      if (root) diagnostics->write(row);
    }
    if (isMultiple(step, tracersEvery)) extracts.releaseTracers(step);
    const bool fieldOutput = outputStep(step, outputEvery, writeFields);
    const bool tracerOutput = outputStep(step, tracerSettings.outputEvery, tracerSettings.enabled());
    const bool surfaceOutput = outputStep(step, description.surface.outputEvery, description.surface.enabled());
    std::vector<bool> written(fieldNames.size()), asked(fieldNames.size());
    for (std::size_t n = 0; n < fieldNames.size(); ++n)
      written[n] = fieldOutput && description.output.wants(fieldNames[n]);
#if OCTOFLOW_HAVE_PARAVIEW
    adaptors::CatalystAdaptor::FieldRequest request;
    if (catalyst && isMultiple(step, insituEvery))
      request = catalyst->request(step, simulation->timeOf(step), fieldNames);
    request = agreed(request);
    for (std::size_t n = 0; n < fieldNames.size(); ++n) asked[n] = written[n] || request.wants(n);
    const bool surfaceNeeded = surfaceOutput || (request.surface && description.surface.enabled());
    const bool tracersNeeded = tracerOutput || (request.tracers && tracerSettings.enabled());
    // The surface first: on the CPU it is made from the host arrays the fields are fetched into.
    const insitu::Surface surface = surfaceNeeded ? extracts.surface() : insitu::Surface{};
    particles::TracerView tracers;
    if (root && tracersNeeded) tracers = extracts.tracers();
    // The grid this rank hands over: the whole grid (rank 0) or its piece (every rank).
    const std::vector<std::string> needed = selected(fieldNames, asked);
    sim::FieldSet fields;
    fields.box = pieces ? simulation->pieceBoxes()[static_cast<std::size_t>(simulation->rank())]
                        : NodeBox::of(description.extent);
    if (!needed.empty()) fields = pieces ? simulation->pieceFields(needed) : simulation->fetchFields(needed);
    // The blocks of a solver with levels, for channel "amr" and the .vthb files: over ranks each
    // rank's piece, its run of blocks with the blocks around it (fetching them is collective:
    // every rank asks when any needs them).
    const sim::BlockGrid* blocks = simulation->blockGrid();
    std::vector<adaptors::PointArray> blockArrays;
    if (blocks && (request.amr || fieldOutput)) {
      const sim::BlockFieldSet& blockFields =
          simulation->fetchBlockFields(fieldNames, sim::Simulation::BlockFieldsFor::Pieces);
      for (const auto& array : blockFields.arrays) blockArrays.push_back({array.name, array.values, array.components});
    }
    if (!root && !pieces) return;
    // Catalyst first: at step 0 it imports the scripts, and a broken one stops the run before
    // any file of ours is written. Ranks other than 0 hand empty surfaces and tracers.
    const auto catalystStart = std::chrono::steady_clock::now();
    if (request.any) {
      std::vector<adaptors::PointArray> arrays;
      for (std::size_t n = 0; n < fieldNames.size(); ++n)
        if (request.wants(n)) arrays.push_back({fieldNames[n], fields.values(fieldNames[n]), simulation->fields()[n].components});
      catalyst->execute(step, simulation->timeOf(step), description.extent, arrays,
                        request.surface && surfaceNeeded ? &surface : nullptr,
                        request.tracers && tracersNeeded ? &tracers : nullptr, pieces ? &fields.box : nullptr,
                        request.amr ? blocks : nullptr, request.amr ? &blockArrays : nullptr);
      const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - catalystStart).count();
      (catalystRuns++ == 0 ? catalystFirstSeconds : catalystSeconds) += seconds;
    }
    if (fieldOutput) {
      sim::FieldSet writtenFields;
      writtenFields.box = fields.box;
      for (const auto& array : fields.arrays)
        if (description.output.wants(array.name)) writtenFields.arrays.push_back(array);
      const std::vector<NodeBox> boxes = pieces && root ? simulation->pieceBoxes() : std::vector<NodeBox>{};
      const int rank = simulation->rank();
      background.post([&, step, writtenFields, boxes, rank] {
        writeFieldsFile(description, *simulation, *fieldWriter, step, writtenFields, pieces ? &boxes : nullptr, rank);
      });
      piecesPending = pieces;
      if (blockWriter) {
        std::vector<adaptors::PointArray> written;
        for (const auto& array : blockArrays)
          if (description.output.wants(array.name)) written.push_back(array);
        // A copy of the blocks: a solver that regrids changes them while the file is written.
        background.post([&, step, written, grid = *blocks, root] {
          const double time = simulation->timeOf(step);
          if (!pieces) {
            blockWriter->write(step, time, adaptors::makeNonOverlappingAmr(grid, written));
            return;
          }
          blockWriter->writeAmrPiece(step, time, adaptors::makeNonOverlappingAmr(grid, written, true), root);
        });
      }
    }
    if (!root) return;
    if (tracerOutput)
      background.post([&, step, tracers] {
        tracerWriter->write(step, simulation->timeOf(step), adaptors::makeTracerPolyData(tracers));
      });
    if (surfaceOutput)
      background.post([&, step, surface] {
        surfaceWriter->write(step, simulation->timeOf(step), adaptors::makeSurfacePolyData(surface));
      });
#else
    (void)asked;
    (void)tracerOutput;
    (void)surfaceOutput;
#endif
  };

  // Checkpoints at multiples of checkpoint.every and at the last step; on a stop signal, at the
  // step the run stops at.
  const Index checkpointEvery = description.checkpoint.every;
  const std::string checkpointFolder = checkpointDirectory(description);
  std::string lastCheckpoint = options.restartPath;
  Index lastCheckpointStep = options.restartPath.empty() ? -1 : startStep;
  const auto saveCheckpoint = [&](Index keep) {
    background.wait();
    lastCheckpoint = writeCheckpoint(description, *simulation, extracts, checkpointFolder, description.name, keep);
    lastCheckpointStep = simulation->step();
  };

  // The watchdog: on a fault, the run stops; the last good state (the step of the last check
  // passed) is computed again from the newest checkpoint before it, or from the start (a run is
  // deterministic), and written for inspection.
  const Index checkEvery = description.watchdog.checkEvery;
  Index lastGoodStep = startStep;
  const auto stopDiverged = [&](const sim::FieldFault& fault) {
    const Index badStep = simulation->step();
    background.wait();
#if OCTOFLOW_HAVE_PARAVIEW
    publishPieces();
#endif
    diagnostics.reset();
    std::string message = "the simulation diverged: at step " + std::to_string(badStep) + " " + fault.describe() +
                          "; the last good state is step " + std::to_string(lastGoodStep);
    if (talk)
      std::fprintf(stderr, "\noctoflow: %s; computing it again from %s\n", message.c_str(),
                   lastCheckpointStep >= 0 && lastCheckpointStep <= lastGoodStep ? lastCheckpoint.c_str() : "the start");
    if (lastCheckpointStep >= 0 && lastCheckpointStep <= lastGoodStep) {
      restoreCheckpoint(lastCheckpoint, description, *simulation, nullptr);
    } else {
      simulation.reset();  // its memory first
      simulation = description.solverCase->create(description, sim::CreateOptions{backend, OCTOFLOW_HAVE_MPI != 0});
    }
    simulation->advance(lastGoodStep - simulation->step());
    const std::string name = description.name + "_last_good";
    const std::string snapshot = writeCheckpoint(description, *simulation, extracts, checkpointFolder, name, 0);
    message += " (" + snapshot;
#if OCTOFLOW_HAVE_PARAVIEW
    adaptors::XmlSeriesWriter snapshotWriter(outputDirectory, name);
    const std::vector<std::string> names = sim::fieldNames(simulation->fields());
    const sim::FieldSet& fields = pieces ? simulation->pieceFields(names) : simulation->fetchFields(names);
    if (root || pieces) {
      const std::vector<NodeBox> boxes = pieces && root ? simulation->pieceBoxes() : std::vector<NodeBox>{};
      writeFieldsFile(description, *simulation, snapshotWriter, lastGoodStep, fields, pieces ? &boxes : nullptr,
                      simulation->rank());
    }
    if (pieces) {
#if OCTOFLOW_HAVE_MPI
      MPI_Barrier(MPI_COMM_WORLD);
#endif
      if (root) snapshotWriter.publishPieces();
    }
    message += ", " + snapshotWriter.seriesPath().string();
#endif
    message += "): lower the velocities or the time step, raise tau (or use collision = \"trt\"), or refine the grid";
    throw DivergenceError(message);
  };

  StopSignals stopSignals;
  Progress progress(totalSteps, simulation->nodeUpdatesPerStep(), talk);
  if (startStep == 0) {
    try {
      handleStep(0);
    } catch (const InputError&) {
      // A script that fails on its first run is bad input: leave nothing of this run behind.
      diagnostics.reset();
      if (root && !outputDirectoryExisted) std::filesystem::remove_all(outputDirectory);
      throw;
    }
  }
  Index chunk = 1;
  while (simulation->step() < totalSteps) {
    const Index step = simulation->step();
    Index target = std::min(totalSteps, step + chunk);
    if (writeFields) target = std::min(target, nextMultiple(step, outputEvery, totalSteps));
    target = std::min(target, nextMultiple(step, insituEvery, totalSteps));
    target = std::min(target, nextMultiple(step, tracerSettings.outputEvery, totalSteps));
    target = std::min(target, nextMultiple(step, description.surface.outputEvery, totalSteps));
    target = std::min(target, nextMultiple(step, tracersEvery, totalSteps));
    target = std::min(target, nextMultiple(step, checkpointEvery, totalSteps));
    target = std::min(target, nextMultiple(step, checkEvery, totalSteps));
    target = agreed(std::min(target, nextMultiple(step, diagnosticsEvery, totalSteps)));
    if (isMultiple(step, tracersEvery)) {
      // Over the steps to the next tracer step, in the flow of this one. On the CPU (and over
      // several ranks) that flow lands in the host arrays the writer may still be reading.
      if (!extracts.movesOnDevice()) background.wait();
      extracts.moveTracers(static_cast<int>(std::min(tracersEvery, totalSteps - step)));
    }
    simulation->advance(target - step);
    const Index now = simulation->step();
    if (isMultiple(now, checkEvery) || (checkEvery > 0 && now == totalSteps)) {
      sim::FieldFault fault;
      if (!sim::fieldsAreSane(*simulation, fault)) stopDiverged(fault);
      lastGoodStep = now;
    }
    handleStep(now);
    if (description.checkpoint.enabled() && (isMultiple(now, checkpointEvery) || now == totalSteps))
      saveCheckpoint(description.checkpoint.keep);
    if (const int signal = agreedSignal(stopSignals.requested())) {
      // Stop here, resumable: the checkpoint of this step (kept beside the others).
      if (lastCheckpointStep != now) saveCheckpoint(description.checkpoint.enabled() ? description.checkpoint.keep : 0);
      background.wait();
#if OCTOFLOW_HAVE_PARAVIEW
      publishPieces();
#endif
      if (root)
        std::fprintf(stderr, "\noctoflow: stopped by %s at step %lld; to go on: octoflow run %s --restart %s\n",
                     signalName(signal), static_cast<long long>(now), options.casePath.c_str(), lastCheckpoint.c_str());
      return 128 + signal;
    }
    progress.setNodeUpdatesPerStep(simulation->nodeUpdatesPerStep());
    progress.update(now);
    const double rate = progress.stepsPerSecond(now);
    chunk = std::max<Index>(1, static_cast<Index>(rate * kChunkSeconds));
  }
  background.wait();
#if OCTOFLOW_HAVE_PARAVIEW
  publishPieces();
#endif
  progress.finish(simulation->step());
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
  if (talk && writeFields && blockWriter) std::fprintf(stderr, "octoflow: wrote %s\n", blockWriter->seriesPath().c_str());
  if (talk && tracerWriter) std::fprintf(stderr, "octoflow: wrote %s\n", tracerWriter->seriesPath().c_str());
  if (talk && surfaceWriter) std::fprintf(stderr, "octoflow: wrote %s\n", surfaceWriter->seriesPath().c_str());
#endif
  if (talk && diagnostics)
    std::fprintf(stderr, "octoflow: wrote %s\n", (outputDirectory / diagnosticsLog.fileName).c_str());
  return 0;
}

}  // namespace octoflow::app
