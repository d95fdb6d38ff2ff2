#pragma once
// The blocks of an octree grid (sim::BlockGrid) as VTK AMR data, in level-0 node coordinates (those
// of the uniform grid: level-0 node (i,j,k) sits at (i,j,k)). Each block becomes a vtkUniformGrid
// of (B - 1)^3 cells at its level's spacing whose cell values are the means of their 8 corner
// points (the solver's values are node-centred; ParaView's AMR filters take cell data).
#include <vtkNonOverlappingAMR.h>
#include <vtkOverlappingAMR.h>
#include <vtkSmartPointer.h>

#include <vector>

#include "ImageDataBuilder.hpp"
#include "sim/Simulation.hpp"

namespace octoflow::adaptors {

// Catalyst's `amr` channel: the leaf blocks as a vtkNonOverlappingAMR (blocks of one size,
// refinement ratio 2: ParaView's Contour runs vtkAMRDualContour on its cell arrays and the surface
// has no cracks between levels). `arrays` hold values of every point of every block (block after
// block, x fastest; sim::BlockFieldSet).
vtkSmartPointer<vtkNonOverlappingAMR> makeNonOverlappingAmr(const sim::BlockGrid& grid,
                                                            const std::vector<PointArray>& arrays);

// Files (.vthb): a vtkOverlappingAMR where every level covers what the finer ones cover (a parent
// block's cells hold the means of the 8 finer cells in them), the covered cells blanked, so each
// place shows the finest data there.
vtkSmartPointer<vtkOverlappingAMR> makeOverlappingAmr(const sim::BlockGrid& grid, const std::vector<PointArray>& arrays);

}  // namespace octoflow::adaptors
