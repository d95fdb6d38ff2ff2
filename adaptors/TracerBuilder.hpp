#pragma once
// Tracers (particles::TracerView) as a vtkPolyData of vertex cells with point arrays "id"
// (Int64), "velocity" and "age", the view's arrays wrapped without copying.
#include <vtkPolyData.h>
#include <vtkSmartPointer.h>

#include "particles/TracerSet.hpp"

namespace octoflow::adaptors {

// The view's arrays must outlive the polydata (no call on its TracerSet meanwhile); only the
// vertex cells' connectivity (0, 1, 2, ...) is allocated.
vtkSmartPointer<vtkPolyData> makeTracerPolyData(const particles::TracerView& tracers);

}  // namespace octoflow::adaptors
