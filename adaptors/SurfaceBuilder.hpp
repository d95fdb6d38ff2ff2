#pragma once
// An extracted isosurface (insitu::Surface) as a vtkPolyData of triangles, without copying its
// points, normals or triangles.
#include <vtkPolyData.h>
#include <vtkSmartPointer.h>

#include "insitu/Isosurface.hpp"

namespace octoflow::adaptors {

// Points and the "Normals" point array wrap the surface's arrays, the triangles use them as
// 32-bit connectivity (only the offsets 0, 3, 6, ... are allocated): the surface's arrays must
// outlive the polydata, i.e. no extraction may run on its extractor meanwhile.
vtkSmartPointer<vtkPolyData> makeSurfacePolyData(const insitu::Surface& surface);

}  // namespace octoflow::adaptors
