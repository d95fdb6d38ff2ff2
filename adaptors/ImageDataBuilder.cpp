#include "ImageDataBuilder.hpp"

#include <vtkDoubleArray.h>
#include <vtkFieldData.h>
#include <vtkFloatArray.h>
#include <vtkPointData.h>

#include "Channels.hpp"

namespace octoflow::adaptors {

void addPointArray(vtkImageData* image, const char* name, const float* values, int components) {
  if (!values) return;
  const vtkIdType nodeCount = image->GetNumberOfPoints();
  auto array = vtkSmartPointer<vtkFloatArray>::New();
  array->SetName(name);
  array->SetNumberOfComponents(components);
  // save = 1: VTK never frees memory it does not own.
  array->SetArray(const_cast<float*>(values), static_cast<vtkIdType>(nodeCount) * components, 1);
  image->GetPointData()->AddArray(array);
}

void addFieldValue(vtkImageData* image, const char* name, double value) {
  auto array = vtkSmartPointer<vtkDoubleArray>::New();
  array->SetName(name);
  array->InsertNextValue(value);
  image->GetFieldData()->AddArray(array);
}

vtkSmartPointer<vtkImageData> makeImageData(const Extent& extent, const float* density, const float* velocity) {
  return makeImageData(NodeBox::of(extent), density, velocity);
}

vtkSmartPointer<vtkImageData> makeImageData(const NodeBox& box, const float* density, const float* velocity) {
  return makeImageData(box, {{kDensityArray, density, 1}, {kVelocityArray, velocity, 3}});
}

vtkSmartPointer<vtkImageData> makeImageData(const NodeBox& box, const std::vector<PointArray>& arrays) {
  auto image = vtkSmartPointer<vtkImageData>::New();
  image->SetOrigin(0.0, 0.0, 0.0);
  image->SetSpacing(1.0, 1.0, 1.0);
  int extent[6];
  for (int axis = 0; axis < 3; ++axis) {
    extent[2 * axis] = static_cast<int>(box.lo[axis]);
    extent[2 * axis + 1] = static_cast<int>(box.lo[axis] + box.size.size(axis) - 1);
  }
  image->SetExtent(extent);
  bool scalars = false, vectors = false;
  for (const PointArray& array : arrays) {
    if (!array.values) continue;
    addPointArray(image, array.name.c_str(), array.values, array.components);
    if (array.components == 1 && !scalars) image->GetPointData()->SetActiveScalars(array.name.c_str());
    if (array.components == 3 && !vectors) image->GetPointData()->SetActiveVectors(array.name.c_str());
    scalars = scalars || array.components == 1;
    vectors = vectors || array.components == 3;
  }
  return image;
}

vtkSmartPointer<vtkImageData> makeFieldsImage(const sim::Simulation& simulation, Index step, const sim::FieldSet& fields,
                                              std::vector<sim::DerivedArray>& physical) {
  std::vector<PointArray> arrays;
  for (const auto& array : fields.arrays) arrays.push_back({array.name, array.values, array.components});
  physical = simulation.physicalArrays(fields);
  for (const auto& array : physical) arrays.push_back({array.name, array.values.data(), array.components});
  vtkSmartPointer<vtkImageData> image = makeImageData(fields.box, arrays);
  for (const auto& [name, value] : simulation.fileMetadata(step)) addFieldValue(image, name.c_str(), value);
  return image;
}

}  // namespace octoflow::adaptors
