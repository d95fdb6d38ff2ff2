#include "ImageDataBuilder.hpp"

#include <vtkFloatArray.h>
#include <vtkPointData.h>

#include "Channels.hpp"

namespace octoflow::adaptors {

namespace {
void wrap(vtkImageData* image, const char* name, const float* values, int components, Index nodeCount) {
  if (!values) return;
  auto array = vtkSmartPointer<vtkFloatArray>::New();
  array->SetName(name);
  array->SetNumberOfComponents(components);
  // save = 1: VTK never frees memory it does not own.
  array->SetArray(const_cast<float*>(values), static_cast<vtkIdType>(nodeCount) * components, 1);
  image->GetPointData()->AddArray(array);
}
}  // namespace

vtkSmartPointer<vtkImageData> makeImageData(const Extent& extent, const float* density, const float* velocity) {
  auto image = vtkSmartPointer<vtkImageData>::New();
  image->SetOrigin(0.0, 0.0, 0.0);
  image->SetSpacing(1.0, 1.0, 1.0);
  image->SetExtent(0, static_cast<int>(extent.nx - 1), 0, static_cast<int>(extent.ny - 1), 0,
                   static_cast<int>(extent.nz - 1));
  wrap(image, kDensityArray, density, 1, extent.cellCount());
  wrap(image, kVelocityArray, velocity, 3, extent.cellCount());
  if (velocity) image->GetPointData()->SetActiveVectors(kVelocityArray);
  if (density) image->GetPointData()->SetActiveScalars(kDensityArray);
  return image;
}

}  // namespace octoflow::adaptors
