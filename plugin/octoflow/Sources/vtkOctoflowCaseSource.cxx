#include "vtkOctoflowCaseSource.h"

#include <vtkImageData.h>
#include <vtkInformation.h>
#include <vtkInformationVector.h>
#include <vtkObjectFactory.h>
#include <vtkStreamingDemandDrivenPipeline.h>

#include <exception>
#include <vector>

#include "ImageDataBuilder.hpp"
#include "common/Error.hpp"
#include "exec/Backend.hpp"
#include "io/CaseFile.hpp"
#include "sim/Simulation.hpp"

vtkStandardNewMacro(vtkOctoflowCaseSource);

vtkOctoflowCaseSource::vtkOctoflowCaseSource() {
  this->SetNumberOfInputPorts(0);
  this->SetNumberOfOutputPorts(1);
  this->SetBackend("auto");
}

vtkOctoflowCaseSource::~vtkOctoflowCaseSource() {
  this->SetCaseFile(nullptr);
  this->SetBackend(nullptr);
}

int vtkOctoflowCaseSource::RequestInformation(vtkInformation*, vtkInformationVector**,
                                              vtkInformationVector* outputVector) {
  if (!this->CaseFile || !*this->CaseFile) {
    vtkErrorMacro("octoflow Case: no CaseFile set");
    return 0;
  }
  try {
    const octoflow::io::CaseDescription description = octoflow::io::loadCase(this->CaseFile);
    const octoflow::Extent& e = description.extent;
    int extent[6] = {0, static_cast<int>(e.nx - 1), 0, static_cast<int>(e.ny - 1), 0, static_cast<int>(e.nz - 1)};
    double spacing[3] = {1.0, 1.0, 1.0}, origin[3] = {0.0, 0.0, 0.0};
    vtkInformation* info = outputVector->GetInformationObject(0);
    info->Set(vtkStreamingDemandDrivenPipeline::WHOLE_EXTENT(), extent, 6);
    info->Set(vtkDataObject::SPACING(), spacing, 3);
    info->Set(vtkDataObject::ORIGIN(), origin, 3);
  } catch (const std::exception& error) {
    vtkErrorMacro("octoflow Case: " << error.what());
    return 0;
  }
  return 1;
}

int vtkOctoflowCaseSource::RequestData(vtkInformation*, vtkInformationVector**, vtkInformationVector* outputVector) {
  vtkImageData* output = vtkImageData::GetData(outputVector, 0);
  try {
    const octoflow::io::CaseDescription description = octoflow::io::loadCase(this->CaseFile);
    const auto backend = octoflow::exec::resolveBackend(
        octoflow::exec::parseBackendChoice(this->Backend ? this->Backend : "auto", "Backend"), "Backend");
    // Any solver of the registry, run by this process alone (not over ParaView's MPI ranks).
    const auto simulation = description.solverCase->create(description, octoflow::sim::CreateOptions{backend, false});
    simulation->advance(description.steps);
    const octoflow::sim::FieldSet& fields = simulation->fetchFields(octoflow::sim::fieldNames(simulation->fields()));
    std::vector<octoflow::adaptors::PointArray> arrays;
    for (const auto& array : fields.arrays) arrays.push_back({array.name, array.values, array.components});
    // The solver's arrays go away with it: the output owns a copy.
    auto image = octoflow::adaptors::makeImageData(fields.box, arrays);
    output->DeepCopy(image);
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
}
