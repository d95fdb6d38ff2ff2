#include "TracerBuilder.hpp"

#include <vtkCellArray.h>
#include <vtkFloatArray.h>
#include <vtkPointData.h>
#include <vtkPoints.h>
#include <vtkTypeInt64Array.h>

#include "Channels.hpp"

namespace octoflow::adaptors {

vtkSmartPointer<vtkPolyData> makeTracerPolyData(const particles::TracerView& tracers) {
  const vtkIdType count = static_cast<vtkIdType>(tracers.count);
  // save = 1: VTK never frees memory it does not own.
  const auto wrap = [&](const float* values, const char* name, int components) {
    auto array = vtkSmartPointer<vtkFloatArray>::New();
    array->SetName(name);
    array->SetNumberOfComponents(components);
    if (count > 0) array->SetArray(const_cast<float*>(values), components * count, 1);
    return array;
  };
  auto points = vtkSmartPointer<vtkPoints>::New();
  points->SetData(wrap(tracers.positions, "Points", 3));
  auto ids = vtkSmartPointer<vtkTypeInt64Array>::New();
  ids->SetName(kIdArray);
  // vtkTypeInt64 is long long, std::int64_t long: the same 64-bit integers under two names.
  static_assert(sizeof(vtkTypeInt64) == sizeof(std::int64_t), "64-bit ids");
  if (count > 0) ids->SetArray(reinterpret_cast<vtkTypeInt64*>(const_cast<std::int64_t*>(tracers.ids)), count, 1);
  auto connectivity = vtkSmartPointer<vtkTypeInt64Array>::New();
  auto offsets = vtkSmartPointer<vtkTypeInt64Array>::New();
  connectivity->SetNumberOfValues(count);
  offsets->SetNumberOfValues(count + 1);
  for (vtkIdType n = 0; n <= count; ++n) {
    if (n < count) connectivity->SetValue(n, n);
    offsets->SetValue(n, n);
  }
  auto vertices = vtkSmartPointer<vtkCellArray>::New();
  vertices->SetData(offsets, connectivity);
  auto polyData = vtkSmartPointer<vtkPolyData>::New();
  polyData->SetPoints(points);
  polyData->SetVerts(vertices);
  vtkPointData* data = polyData->GetPointData();
  data->AddArray(ids);
  data->AddArray(wrap(tracers.velocities, kVelocityArray, 3));
  data->AddArray(wrap(tracers.ages, kAgeArray, 1));
  data->SetActiveVectors(kVelocityArray);
  return polyData;
}

}  // namespace octoflow::adaptors
