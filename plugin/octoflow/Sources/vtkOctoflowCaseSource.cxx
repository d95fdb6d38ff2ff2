#include "vtkOctoflowCaseSource.h"

#include <vtkDataArraySelection.h>
#include <vtkInformation.h>
#include <vtkInformationVector.h>
#include <vtkObjectFactory.h>
#include <vtkStreamingDemandDrivenPipeline.h>

#include <algorithm>
#include <exception>
#include <string>
#include <vector>

#include "SimulationOutput.h"
#include "common/Error.hpp"
#include "exec/Backend.hpp"
#include "io/CaseFile.hpp"
#include "sim/Simulation.hpp"

namespace of = octoflow;

struct vtkOctoflowCaseSource::Internals {
  std::string caseFile;  // the file `description` was read from
  std::unique_ptr<of::io::CaseDescription> description;
  std::string simulationBackend;
  std::unique_ptr<of::sim::Simulation> simulation;  // null until the first update, and after Reset
  bool updated = false;                             // an update has run on `simulation`
  std::vector<of::Index> steps;                     // the solver step of each time step offered

  const of::io::CaseDescription& caseOf(const char* file) {
    if (!file || !*file) throw of::InputError("octoflow Case", "CaseFile", "no case file given");
    if (!this->description || this->caseFile != file) {
      this->simulation.reset();
      this->updated = false;
      this->description.reset();
      this->description = std::make_unique<of::io::CaseDescription>(of::io::loadCase(file));
      this->caseFile = file;
    }
    return *this->description;
  }
};

vtkStandardNewMacro(vtkOctoflowCaseSource);

vtkOctoflowCaseSource::vtkOctoflowCaseSource() : Internal(new Internals) {
  this->SetNumberOfInputPorts(0);
  this->SetNumberOfOutputPorts(1);
  this->SetBackend("auto");
}

vtkOctoflowCaseSource::~vtkOctoflowCaseSource() {
  this->SetCaseFile(nullptr);
  this->SetBackend(nullptr);
}

void vtkOctoflowCaseSource::Reset() {
  // The case is read again too: an edited case file takes effect.
  this->Internal->simulation.reset();
  this->Internal->description.reset();
  this->Internal->updated = false;
  this->Modified();
}

vtkIdType vtkOctoflowCaseSource::GetCurrentStep() {
  const Internals& internal = *this->Internal;
  return internal.simulation && internal.updated ? static_cast<vtkIdType>(internal.simulation->step()) : -1;
}

int vtkOctoflowCaseSource::GetNumberOfPointArrays() { return this->PointArraySelection->GetNumberOfArrays(); }
const char* vtkOctoflowCaseSource::GetPointArrayName(int index) { return this->PointArraySelection->GetArrayName(index); }
int vtkOctoflowCaseSource::GetPointArrayStatus(const char* name) { return this->PointArraySelection->ArrayIsEnabled(name); }
void vtkOctoflowCaseSource::SetPointArrayStatus(const char* name, int status) {
  if (status)
    this->PointArraySelection->EnableArray(name);
  else
    this->PointArraySelection->DisableArray(name);
  this->Modified();
}

int vtkOctoflowCaseSource::FillOutputPortInformation(int, vtkInformation* info) {
  info->Set(vtkDataObject::DATA_TYPE_NAME(), "vtkDataObject");
  return 1;
}

int vtkOctoflowCaseSource::RequestDataObject(vtkInformation*, vtkInformationVector**, vtkInformationVector* outputVector) {
  try {
    of::plugin::makeGridOutput(outputVector->GetInformationObject(0), this->Internal->caseOf(this->CaseFile));
  } catch (const std::exception& error) {
    vtkErrorMacro("octoflow Case: " << error.what());
    return 0;
  }
  return 1;
}

int vtkOctoflowCaseSource::RequestInformation(vtkInformation*, vtkInformationVector**, vtkInformationVector* outputVector) {
  try {
    const of::io::CaseDescription& description = this->Internal->caseOf(this->CaseFile);
    of::plugin::offerFields(this->PointArraySelection, description);
    of::Index every = this->StepsPerUpdate;
    if (every <= 0) every = description.output.every > 0 ? description.output.every : std::max<of::Index>(1, description.steps / 100);
    // Step 0, every `every` steps, and the last step.
    std::vector<of::Index>& steps = this->Internal->steps;
    steps.clear();
    for (of::Index step = 0; step < description.steps; step += every) steps.push_back(step);
    steps.push_back(description.steps);
    // The times are the run's (Simulation::timeOf): the simulation that the first update advances
    // is made now, at step 0, and tells them.
    if (!this->Internal->simulation) {
      const std::string backendChoice = this->Backend ? this->Backend : "auto";
      const of::exec::Backend backend =
          of::exec::resolveBackend(of::exec::parseBackendChoice(backendChoice, "Backend"), "Backend");
      this->Internal->simulation = description.solverCase->create(description, of::sim::CreateOptions{backend, false});
      this->Internal->simulationBackend = backendChoice;
    }
    std::vector<double> times;
    for (of::Index step : steps) times.push_back(this->Internal->simulation->timeOf(step));
    vtkInformation* info = outputVector->GetInformationObject(0);
    info->Set(vtkStreamingDemandDrivenPipeline::TIME_STEPS(), times.data(), static_cast<int>(times.size()));
    const double range[2] = {times.front(), times.back()};
    info->Set(vtkStreamingDemandDrivenPipeline::TIME_RANGE(), range, 2);
    of::plugin::describeGridOutput(info, description);
  } catch (const std::exception& error) {
    vtkErrorMacro("octoflow Case: " << error.what());
    return 0;
  }
  return 1;
}

int vtkOctoflowCaseSource::RequestData(vtkInformation*, vtkInformationVector**, vtkInformationVector* outputVector) {
  vtkInformation* info = outputVector->GetInformationObject(0);
  try {
    Internals& internal = *this->Internal;
    const of::io::CaseDescription& description = internal.caseOf(this->CaseFile);
    const std::string backendChoice = this->Backend ? this->Backend : "auto";
    const of::exec::Backend backend =
        of::exec::resolveBackend(of::exec::parseBackendChoice(backendChoice, "Backend"), "Backend");
    if (internal.steps.empty()) throw of::InputError("octoflow Case", "", "no time steps (RequestInformation failed)");
    // The time step asked for (the last at or before the time), and its solver step.
    std::size_t index = 0;
    if (info->Has(vtkStreamingDemandDrivenPipeline::UPDATE_TIME_STEP())) {
      const double time = info->Get(vtkStreamingDemandDrivenPipeline::UPDATE_TIME_STEP());
      const double* times = info->Get(vtkStreamingDemandDrivenPipeline::TIME_STEPS());
      const int count = info->Length(vtkStreamingDemandDrivenPipeline::TIME_STEPS());
      for (int n = 0; n < count; ++n)
        if (times[n] <= time * (1.0 + 1e-12) + 1e-12) index = static_cast<std::size_t>(n);
    }
    const of::Index target = internal.steps[std::min(index, internal.steps.size() - 1)];
    // A new simulation: none yet, another backend, or a step already passed (runs go forward).
    if (!internal.simulation || internal.simulationBackend != backendChoice || internal.simulation->step() > target) {
      internal.simulation.reset();
      internal.simulation = description.solverCase->create(description, of::sim::CreateOptions{backend, false});
      internal.simulationBackend = backendChoice;
    }
    of::sim::Simulation& simulation = *internal.simulation;
    simulation.advance(target - simulation.step());
    internal.updated = true;
    of::plugin::fillGridOutput(simulation, of::plugin::selectedFields(this->PointArraySelection, simulation),
                               info->Get(vtkDataObject::DATA_OBJECT()), simulation.timeOf(target));
  } catch (const std::exception& error) {
    vtkErrorMacro("octoflow Case: " << error.what());
    return 0;
  }
  return 1;
}

void vtkOctoflowCaseSource::PrintSelf(ostream& os, vtkIndent indent) {
  this->Superclass::PrintSelf(os, indent);
  os << indent << "CaseFile: " << (this->CaseFile ? this->CaseFile : "(none)") << "\n";
  os << indent << "Backend: " << (this->Backend ? this->Backend : "(none)") << "\n";
  os << indent << "StepsPerUpdate: " << this->StepsPerUpdate << "\n";
}
