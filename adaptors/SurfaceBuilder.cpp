#include "SurfaceBuilder.hpp"

#include <vtkCellArray.h>
#include <vtkFloatArray.h>
#include <vtkPointData.h>
#include <vtkPoints.h>
#include <vtkTypeInt32Array.h>

#include "Channels.hpp"

namespace octoflow::adaptors {

vtkSmartPointer<vtkPolyData> makeSurfacePolyData(const insitu::Surface& surface) {
  const vtkIdType points = static_cast<vtkIdType>(surface.pointCount);
  const vtkIdType triangles = static_cast<vtkIdType>(surface.triangleCount);
  const auto wrap = [&](const float* values, const char* name) {
    auto array = vtkSmartPointer<vtkFloatArray>::New();
    array->SetName(name);
    array->SetNumberOfComponents(3);
    // save = 1: VTK never frees memory it does not own.
    if (points > 0) array->SetArray(const_cast<float*>(values), 3 * points, 1);
    return array;
  };
  auto coordinates = vtkSmartPointer<vtkPoints>::New();
  coordinates->SetData(wrap(surface.points, "Points"));
  auto connectivity = vtkSmartPointer<vtkTypeInt32Array>::New();
  if (triangles > 0) connectivity->SetArray(const_cast<std::int32_t*>(surface.triangles), 3 * triangles, 1);
  auto offsets = vtkSmartPointer<vtkTypeInt32Array>::New();
  offsets->SetNumberOfValues(triangles + 1);
  std::int32_t* offset = offsets->GetPointer(0);
  for (vtkIdType t = 0; t <= triangles; ++t) offset[t] = static_cast<std::int32_t>(3 * t);
  auto cells = vtkSmartPointer<vtkCellArray>::New();
  cells->SetData(offsets, connectivity);
  auto polyData = vtkSmartPointer<vtkPolyData>::New();
  polyData->SetPoints(coordinates);
  polyData->SetPolys(cells);
  auto normals = wrap(surface.normals, kNormalsArray);
  polyData->GetPointData()->SetNormals(normals);
  return polyData;
}

}  // namespace octoflow::adaptors
