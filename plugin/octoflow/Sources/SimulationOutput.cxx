#include "SimulationOutput.h"

#include <vtkImageData.h>
#include <vtkNonOverlappingAMR.h>
#include <vtkSmartPointer.h>
#include <vtkStreamingDemandDrivenPipeline.h>

#include "AmrBuilder.hpp"
#include "ImageDataBuilder.hpp"

namespace octoflow::plugin {

void makeGridOutput(vtkInformation* info, const io::CaseDescription& description) {
  const bool levels = description.solverCase->hasLevels();
  vtkDataObject* output = info->Get(vtkDataObject::DATA_OBJECT());
  if (output && output->IsA(levels ? "vtkNonOverlappingAMR" : "vtkImageData")) return;
  vtkSmartPointer<vtkDataObject> made;
  if (levels)
    made = vtkSmartPointer<vtkNonOverlappingAMR>::New();
  else
    made = vtkSmartPointer<vtkImageData>::New();
  info->Set(vtkDataObject::DATA_OBJECT(), made);
}

void describeGridOutput(vtkInformation* info, const io::CaseDescription& description) {
  if (description.solverCase->hasLevels()) return;
  const Extent& e = description.extent;
  const int extent[6] = {0, static_cast<int>(e.nx - 1), 0, static_cast<int>(e.ny - 1), 0, static_cast<int>(e.nz - 1)};
  const double spacing[3] = {1.0, 1.0, 1.0}, origin[3] = {0.0, 0.0, 0.0};
  info->Set(vtkStreamingDemandDrivenPipeline::WHOLE_EXTENT(), extent, 6);
  info->Set(vtkDataObject::SPACING(), spacing, 3);
  info->Set(vtkDataObject::ORIGIN(), origin, 3);
}

void offerFields(vtkDataArraySelection* selection, const io::CaseDescription& description) {
  for (const auto& field : description.solverCase->fields())
    if (!selection->ArrayExists(field.name.c_str())) selection->AddArray(field.name.c_str());
}

std::vector<std::string> selectedFields(vtkDataArraySelection* selection, const sim::Simulation& simulation) {
  std::vector<std::string> names;
  for (const auto& field : simulation.fields())
    if (selection->ArrayIsEnabled(field.name.c_str())) names.push_back(field.name);
  return names;
}

void fillGridOutput(sim::Simulation& simulation, const std::vector<std::string>& names, vtkDataObject* output,
                    double time) {
  if (const sim::BlockGrid* blocks = simulation.blockGrid()) {
    const sim::BlockFieldSet& fields = simulation.fetchBlockFields(names, sim::Simulation::BlockFieldsFor::RankZero);
    std::vector<adaptors::PointArray> arrays;
    for (const auto& array : fields.arrays) arrays.push_back({array.name, array.values, array.components});
    // The blocks own their arrays (values with ghost layers from the neighbours), so a shallow
    // copy is whole. (A DeepCopy asserts on the AMR boxes a non-overlapping AMR leaves empty.)
    output->ShallowCopy(adaptors::makeNonOverlappingAmr(*blocks, arrays));
  } else {
    const sim::FieldSet& fields = simulation.fetchFields(names);
    std::vector<sim::DerivedArray> physical;
    // The image wraps the solver's arrays and `physical`: the output gets copies.
    output->DeepCopy(adaptors::makeFieldsImage(simulation, simulation.step(), fields, physical));
  }
  output->GetInformation()->Set(vtkDataObject::DATA_TIME_STEP(), time);
}

}  // namespace octoflow::plugin
