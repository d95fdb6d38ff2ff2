#include "vtkOctoflowCheckpointReader.h"

#include <vtkDataArraySelection.h>
#include <vtkInformation.h>
#include <vtkInformationVector.h>
#include <vtkObjectFactory.h>
#include <vtkPolyData.h>
#include <vtkStreamingDemandDrivenPipeline.h>

#include <cstring>
#include <exception>
#include <fstream>
#include <string>
#include <vector>

#include "SimulationOutput.h"
#include "TracerBuilder.hpp"
#include "common/Error.hpp"
#include "exec/Backend.hpp"
#include "insitu/FlowExtracts.hpp"
#include "io/CaseFile.hpp"
#include "io/Checkpoint.hpp"
#include "sim/Simulation.hpp"

namespace {

std::string recordText(const octoflow::io::CheckpointFile& file, const char* name) {
  for (const auto& record : file.records)
    if (record.name == name) return std::string(record.bytes.begin(), record.bytes.end());
  return {};
}

}  // namespace

// The case of the last file read (parsed once, kept while the files are of the same case), and the
// solver rebuilt from it (kept across the time steps of a series: each file restores its state).
struct vtkOctoflowCheckpointReader::Internals {
  std::string caseKey;  // case path + text (or the CaseFile override) it was parsed from
  std::unique_ptr<octoflow::io::CaseDescription> description;
  std::string simulationBackend;
  std::unique_ptr<octoflow::sim::Simulation> simulation;
  std::unique_ptr<octoflow::insitu::FlowExtracts> extracts;

  // The case of `file` (its header and records read): the checkpoint's own, or `caseFile`.
  const octoflow::io::CaseDescription& caseOf(const std::string& path, const octoflow::io::CheckpointFile& file,
                                              const char* caseFile) {
    std::string key, text, source;
    if (caseFile && *caseFile) {
      key = std::string("file:") + caseFile;
    } else {
      text = recordText(file, octoflow::io::kCaseTextRecord);
      source = recordText(file, octoflow::io::kCasePathRecord);
      if (text.empty())
        throw octoflow::InputError(path, "", "this checkpoint carries no case (written before the case was kept in "
                                             "checkpoints): give its case file in CaseFile");
      key = source + '\n' + text;
    }
    if (key != this->caseKey || !this->description) {
      this->simulation.reset();
      this->extracts.reset();
      this->description.reset();
      this->description = std::make_unique<octoflow::io::CaseDescription>(
          caseFile && *caseFile ? octoflow::io::loadCase(caseFile) : octoflow::io::parseCase(text, source));
      this->caseKey = key;
    }
    return *this->description;
  }
};

vtkStandardNewMacro(vtkOctoflowCheckpointReader);

vtkOctoflowCheckpointReader::vtkOctoflowCheckpointReader() : Internal(new Internals) {
  this->SetNumberOfInputPorts(0);
  this->SetNumberOfOutputPorts(2);
  this->SetBackend("cpu");
}

vtkOctoflowCheckpointReader::~vtkOctoflowCheckpointReader() {
  this->SetFileName(nullptr);
  this->SetCaseFile(nullptr);
  this->SetBackend(nullptr);
}

int vtkOctoflowCheckpointReader::CanReadFile(const char* fileName) {
  std::ifstream file(fileName ? fileName : "", std::ios::binary);
  char magic[sizeof octoflow::io::kCheckpointMagic] = {};
  return file.read(magic, sizeof magic) && std::memcmp(magic, octoflow::io::kCheckpointMagic, sizeof magic) == 0 ? 1 : 0;
}

int vtkOctoflowCheckpointReader::GetNumberOfPointArrays() { return this->PointArraySelection->GetNumberOfArrays(); }
const char* vtkOctoflowCheckpointReader::GetPointArrayName(int index) {
  return this->PointArraySelection->GetArrayName(index);
}
int vtkOctoflowCheckpointReader::GetPointArrayStatus(const char* name) {
  return this->PointArraySelection->ArrayIsEnabled(name);
}
void vtkOctoflowCheckpointReader::SetPointArrayStatus(const char* name, int status) {
  if (status)
    this->PointArraySelection->EnableArray(name);
  else
    this->PointArraySelection->DisableArray(name);
  this->Modified();
}

int vtkOctoflowCheckpointReader::FillOutputPortInformation(int port, vtkInformation* info) {
  info->Set(vtkDataObject::DATA_TYPE_NAME(), port == 0 ? "vtkDataObject" : "vtkPolyData");
  return 1;
}

int vtkOctoflowCheckpointReader::RequestDataObject(vtkInformation*, vtkInformationVector**,
                                                   vtkInformationVector* outputVector) {
  try {
    if (!this->FileName || !*this->FileName) throw octoflow::InputError("octoflow Checkpoint", "FileName", "no file given");
    const octoflow::io::CheckpointFile file = octoflow::io::readCheckpointHeader(this->FileName);
    octoflow::plugin::makeGridOutput(outputVector->GetInformationObject(0),
                                     this->Internal->caseOf(this->FileName, file, this->CaseFile));
    vtkInformation* tracers = outputVector->GetInformationObject(1);
    if (!vtkPolyData::SafeDownCast(tracers->Get(vtkDataObject::DATA_OBJECT())))
      tracers->Set(vtkDataObject::DATA_OBJECT(), vtkSmartPointer<vtkPolyData>::New());
  } catch (const std::exception& error) {
    vtkErrorMacro("octoflow Checkpoint: " << error.what());
    return 0;
  }
  return 1;
}

int vtkOctoflowCheckpointReader::RequestInformation(vtkInformation*, vtkInformationVector**,
                                                    vtkInformationVector* outputVector) {
  try {
    const octoflow::io::CheckpointFile file = octoflow::io::readCheckpointHeader(this->FileName ? this->FileName : "");
    const octoflow::io::CaseDescription& description = this->Internal->caseOf(this->FileName, file, this->CaseFile);
    octoflow::plugin::offerFields(this->PointArraySelection, description);
    const double time = file.header.time;
    const double range[2] = {time, time};
    for (int port = 0; port < 2; ++port) {
      vtkInformation* info = outputVector->GetInformationObject(port);
      info->Set(vtkStreamingDemandDrivenPipeline::TIME_STEPS(), &time, 1);
      info->Set(vtkStreamingDemandDrivenPipeline::TIME_RANGE(), range, 2);
    }
    octoflow::plugin::describeGridOutput(outputVector->GetInformationObject(0), description);
  } catch (const std::exception& error) {
    vtkErrorMacro("octoflow Checkpoint: " << error.what());
    return 0;
  }
  return 1;
}

int vtkOctoflowCheckpointReader::RequestData(vtkInformation*, vtkInformationVector**, vtkInformationVector* outputVector) {
  namespace of = octoflow;
  try {
    const of::io::CheckpointFile file = of::io::readCheckpointHeader(this->FileName ? this->FileName : "");
    Internals& internal = *this->Internal;
    const of::io::CaseDescription& description = internal.caseOf(this->FileName, file, this->CaseFile);
    const std::string backendChoice = this->Backend ? this->Backend : "cpu";
    const of::exec::Backend backend =
        of::exec::resolveBackend(of::exec::parseBackendChoice(backendChoice, "Backend"), "Backend");
    of::io::CheckpointReader reader(this->FileName);
    reader.checkMatches(description.solver, description.stateHash, description.name, description.extent);
    if (!internal.simulation || internal.simulationBackend != backendChoice) {
      internal.extracts.reset();
      // This process alone holds the whole grid, whatever the number of ranks that wrote the file.
      internal.simulation = description.solverCase->create(description, of::sim::CreateOptions{backend, false});
      internal.extracts = std::make_unique<of::insitu::FlowExtracts>(description, *internal.simulation);
      internal.simulationBackend = backendChoice;
    }
    of::sim::Simulation& simulation = *internal.simulation;
    simulation.restoreState(reader);
    internal.extracts->restoreState(reader);

    octoflow::plugin::fillGridOutput(simulation, octoflow::plugin::selectedFields(this->PointArraySelection, simulation),
                                     outputVector->GetInformationObject(0)->Get(vtkDataObject::DATA_OBJECT()),
                                     file.header.time);
    vtkPolyData* tracers = vtkPolyData::GetData(outputVector, 1);
    tracers->Initialize();
    if (internal.extracts->hasTracers()) tracers->DeepCopy(of::adaptors::makeTracerPolyData(internal.extracts->tracers()));
    tracers->GetInformation()->Set(vtkDataObject::DATA_TIME_STEP(), file.header.time);
  } catch (const std::exception& error) {
    vtkErrorMacro("octoflow Checkpoint: " << error.what());
    return 0;
  }
  return 1;
}

void vtkOctoflowCheckpointReader::PrintSelf(ostream& os, vtkIndent indent) {
  this->Superclass::PrintSelf(os, indent);
  os << indent << "FileName: " << (this->FileName ? this->FileName : "(none)") << "\n";
  os << indent << "CaseFile: " << (this->CaseFile ? this->CaseFile : "(none)") << "\n";
  os << indent << "Backend: " << (this->Backend ? this->Backend : "(none)") << "\n";
}
