#include "CatalystAdaptor.hpp"

#include <vtkCPDataDescription.h>
#include <vtkCPInputDataDescription.h>
#include <vtkCPProcessor.h>
#include <vtkCPPythonPipeline.h>
#include <vtkDataObject.h>
#include <vtkNew.h>
#include <vtkPythonInterpreter.h>
#include <vtkSmartPointer.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <string>

#if OCTOFLOW_HAVE_MPI
#include <mpi.h>
#include <vtkMPI.h>
#endif

#include "AmrBuilder.hpp"
#include "Channels.hpp"
#include "ImageDataBuilder.hpp"
#include "SurfaceBuilder.hpp"
#include "TracerBuilder.hpp"
#include "common/Error.hpp"

namespace octoflow::adaptors {
namespace {

// ParaView prints a Python error raised while a v2 script runs (catalyst_execute, a filter) and
// still reports success. Errors reach the traceback printer through sys.excepthook, so a hook
// counts them into an environment variable (os.environ sets the process's environment) that the
// adaptor reads after each script's run.
constexpr const char* kScriptErrorCount = "OCTOFLOW_CATALYST_SCRIPT_ERRORS";

void countPythonErrors() {
  vtkPythonInterpreter::RunSimpleString(
      "import os, sys\n"
      "if getattr(sys.excepthook, '__name__', '') != '_octoflow_count_error':\n"
      "    def _octoflow_count_error(kind, value, trace, _print=sys.excepthook):\n"
      "        name = 'OCTOFLOW_CATALYST_SCRIPT_ERRORS'\n"
      "        os.environ[name] = str(int(os.environ.get(name, '0')) + 1)\n"
      "        _print(kind, value, trace)\n"
      "    sys.excepthook = _octoflow_count_error\n");
}

long pythonErrorCount() {
  const char* count = std::getenv(kScriptErrorCount);
  return count ? std::strtol(count, nullptr, 10) : 0;
}

}  // namespace

struct CatalystAdaptor::Impl {
  struct Script {
    std::string path;
    vtkSmartPointer<vtkCPPythonPipeline> pipeline;
  };
  vtkNew<vtkCPProcessor> processor;
  std::vector<Script> scripts;
  std::vector<std::string> channels;
  bool continueOnError = false;
  bool allRanks = false;  // MPI: every rank runs the pipelines on its piece
  bool speaks = true;     // prints warnings: the one rank, or rank 0 of all
  bool firstExecution = true;

  // Whether a script ran on every rank: ranks keep or drop a script together (one that failed on
  // some ranks only would otherwise leave the others waiting in its collective steps).
  bool succeededEverywhere(bool ok) const {
#if OCTOFLOW_HAVE_MPI
    if (allRanks) {
      int flag = ok ? 1 : 0;
      MPI_Allreduce(MPI_IN_PLACE, &flag, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
      return flag != 0;
    }
#endif
    return ok;
  }
  vtkNew<vtkCPDataDescription> description;

  // A fresh description of this step holding every channel the run offers.
  void describe(vtkCPDataDescription* d, Index step, double time) const {
    if (d->GetNumberOfInputDescriptions() == 0)
      for (const std::string& channel : channels) d->AddInput(channel.c_str());
    d->SetTimeData(time, static_cast<vtkIdType>(step));
  }
};

CatalystAdaptor::CatalystAdaptor(const std::vector<std::string>& scripts, const std::string& extractsDirectory,
                                 const std::vector<std::string>& channels, bool continueOnError, bool allRanks)
    : impl_(std::make_unique<Impl>()) {
  impl_->channels = channels;
  impl_->continueOnError = continueOnError;
  impl_->allRanks = allRanks;
#if OCTOFLOW_HAVE_MPI
  if (allRanks) {
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    impl_->speaks = rank == 0;
  }
#endif
  // Extracts (PNG, data) go where octoflow's output goes, whatever a script's own setting says.
  // ParaView reads this once per pipeline, at its first execution.
  const std::string absoluteExtracts = std::filesystem::absolute(extractsDirectory).lexically_normal().string();
  setenv("PARAVIEW_OVERRIDE_EXTRACTS_OUTPUT_DIRECTORY", absoluteExtracts.c_str(), 1);
  if (!std::getenv("DISPLAY"))
    std::fprintf(stderr,
                 "octoflow: warning: DISPLAY is not set; ParaView renders through X, so Catalyst scripts that write "
                 "images need an X server: run under `xvfb-run -a`\n");
#if OCTOFLOW_HAVE_MPI
  // All ranks, each with its piece; or the rank that creates the adaptor alone.
  MPI_Comm ranks = allRanks ? MPI_COMM_WORLD : MPI_COMM_SELF;
  vtkMPICommunicatorOpaqueComm communicator(&ranks);
  if (!impl_->processor->Initialize(communicator)) throw Error("ParaView Catalyst failed to initialise");
#else
  if (allRanks) throw Error("Catalyst over all ranks needs a build with MPI");
  if (!impl_->processor->Initialize()) throw Error("ParaView Catalyst failed to initialise");
#endif
  for (const std::string& script : scripts) {
    // v2 scripts are imported lazily, after Catalyst may have changed directory: pass absolute paths.
    const std::string path = std::filesystem::absolute(script).lexically_normal().string();
    if (vtkCPPythonPipeline::DetectScriptVersion(path.c_str()) != 2)
      throw InputError(script, "", "not a ParaView Catalyst v2 script (its first lines must hold '# script-version: 2')");
    auto pipeline = vtkCPPythonPipeline::CreateAndInitializePipeline(path.c_str(), 2);
    if (!pipeline) throw InputError(script, "", "ParaView Catalyst could not load this script");
    impl_->scripts.push_back({script, pipeline});
    impl_->processor->AddPipeline(pipeline);
  }
}

CatalystAdaptor::~CatalystAdaptor() {
  // Pipelines and processor go before MPI_Finalize (main's), or Open MPI aborts at exit. A rank
  // leaving on an error of its own skips it: finalising may wait for the other ranks, and this
  // rank is on its way to MPI_Abort.
  if (impl_->allRanks && std::uncaught_exceptions() > 0) return;
  impl_->processor->Finalize();
}

CatalystAdaptor::FieldRequest CatalystAdaptor::request(Index step, double time,
                                                      const std::vector<std::string>& offeredGridFields) {
  vtkCPDataDescription* description = impl_->description;
  description->ResetAll();
  impl_->describe(description, step, time);
  FieldRequest request;
  if (!impl_->processor->RequestDataDescription(description)) return request;
  if (vtkCPInputDataDescription* grid = description->GetInputDescriptionByName(kGridChannel)) {
    request.any = grid->GetIfGridIsNecessary();
    for (std::size_t n = 0; n < offeredGridFields.size() && n < 64; ++n)
      if (grid->IsFieldNeeded(offeredGridFields[n].c_str(), vtkDataObject::POINT)) request.gridFields |= std::uint64_t{1} << n;
  }
  if (vtkCPInputDataDescription* surface = description->GetInputDescriptionByName(kSurfaceChannel)) {
    request.surface = surface->GetIfGridIsNecessary();
    request.any = request.any || request.surface;
  }
  if (vtkCPInputDataDescription* tracers = description->GetInputDescriptionByName(kTracersChannel)) {
    request.tracers = tracers->GetIfGridIsNecessary();
    request.any = request.any || request.tracers;
  }
  if (vtkCPInputDataDescription* amr = description->GetInputDescriptionByName(kAmrChannel)) {
    request.amr = amr->GetIfGridIsNecessary();
    request.any = request.any || request.amr;
  }
  return request;
}

bool CatalystAdaptor::gridFieldNeeded(const char* name) const {
  vtkCPInputDataDescription* grid = impl_->description->GetInputDescriptionByName(kGridChannel);
  return grid && grid->GetIfGridIsNecessary() && grid->IsFieldNeeded(name, vtkDataObject::POINT);
}

void CatalystAdaptor::execute(Index step, double time, const Extent& extent, const std::vector<GridArray>& arrays,
                              const insitu::Surface* surface, const particles::TracerView* tracers,
                              const NodeBox* piece, const sim::BlockGrid* blocks,
                              const std::vector<GridArray>* blockArrays) {
  vtkSmartPointer<vtkImageData> image = makeImageData(piece ? *piece : NodeBox::of(extent), arrays);
  vtkSmartPointer<vtkPolyData> polyData = surface ? makeSurfacePolyData(*surface) : nullptr;
  vtkSmartPointer<vtkPolyData> particles = tracers ? makeTracerPolyData(*tracers) : nullptr;
  vtkSmartPointer<vtkNonOverlappingAMR> amr =
      blocks && blockArrays ? makeNonOverlappingAmr(*blocks, *blockArrays, piece != nullptr) : nullptr;
  auto bind = [&](vtkCPDataDescription* description) {
    if (vtkCPInputDataDescription* grid = description->GetInputDescriptionByName(kGridChannel)) {
      grid->SetGrid(image);
      grid->SetWholeExtent(0, static_cast<int>(extent.nx - 1), 0, static_cast<int>(extent.ny - 1), 0,
                           static_cast<int>(extent.nz - 1));
    }
    vtkCPInputDataDescription* channel = description->GetInputDescriptionByName(kSurfaceChannel);
    if (channel && polyData) channel->SetGrid(polyData);
    channel = description->GetInputDescriptionByName(kTracersChannel);
    if (channel && particles) channel->SetGrid(particles);
    channel = description->GetInputDescriptionByName(kAmrChannel);
    if (channel && amr) channel->SetGrid(amr);
  };
  // The scripts run one at a time, so that one that fails is named (its Python traceback, with
  // the line, is already on stderr). At the first execution each script is also imported.
  countPythonErrors();  // here: the interpreter may be started (again) by the first script import
  const bool first = impl_->firstExecution;
  impl_->firstExecution = false;
  impl_->processor->RemoveAllPipelines();
  std::vector<Impl::Script> working;
  for (const auto& script : impl_->scripts) {
    impl_->processor->AddPipeline(script.pipeline);
    vtkNew<vtkCPDataDescription> description;
    impl_->describe(description, step, time);
    bool ok = true;
    if (impl_->processor->RequestDataDescription(description)) {
      bind(description);
      const long errorsBefore = pythonErrorCount();
      ok = impl_->processor->CoProcess(description) != 0 && pythonErrorCount() == errorsBefore;
    }
    impl_->processor->RemoveAllPipelines();
    ok = impl_->succeededEverywhere(ok);
    if (ok) {
      working.push_back(script);
      continue;
    }
    const std::string what = first ? "the Catalyst script failed on its first run"
                                   : "the Catalyst script failed at step " + std::to_string(step);
    if (!impl_->continueOnError) {
      const std::string path = script.path;
      impl_->scripts.clear();  // nothing more runs (the processor is finalised as the adaptor ends)
      throw InputError(path, "", what + " (Python traceback above)");
    }
    if (impl_->speaks)
      std::fprintf(stderr,
                   "\noctoflow: warning: %s: %s (Python traceback above); [insitu] on_error = \"continue\": "
                   "the run goes on without it\n",
                   script.path.c_str(), what.c_str());
  }
  impl_->scripts = working;
  for (const auto& script : impl_->scripts) impl_->processor->AddPipeline(script.pipeline);
}

}  // namespace octoflow::adaptors
