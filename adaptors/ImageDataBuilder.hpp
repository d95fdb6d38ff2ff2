#pragma once
// Host arrays of a uniform grid as a vtkImageData, without copying them.
#include <vtkImageData.h>
#include <vtkSmartPointer.h>

#include "common/Extent.hpp"

namespace octoflow::adaptors {

// Origin 0, spacing 1 (lattice units; node (i,j,k) sits at (i,j,k)); nz = 1 for 2D. The arrays
// are wrapped, not copied: they must outlive the image (null arrays are left out). density has
// one value per node, velocity three (xyz per node).
vtkSmartPointer<vtkImageData> makeImageData(const Extent& extent, const float* density, const float* velocity);

}  // namespace octoflow::adaptors
