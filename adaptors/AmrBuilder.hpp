#pragma once
// The blocks of an octree grid (sim::BlockGrid) as VTK AMR data, in level-0 node coordinates (those
// of the uniform grid: level-0 node (i,j,k) sits at (i,j,k)). Each block becomes a vtkUniformGrid
// of (B - 1)^3 cells at its level's spacing whose cell values are the means of their 8 corner
// points (the solver's values are node-centred; ParaView's AMR filters take cell data).
#include <vtkNonOverlappingAMR.h>
#include <vtkSmartPointer.h>

#include <vector>

#include "ImageDataBuilder.hpp"
#include "sim/Simulation.hpp"

namespace octoflow::adaptors {

// Catalyst's `amr` channel and the .vthb files: the leaf blocks as a vtkNonOverlappingAMR, each
// with one layer of ghost cells around it (vtkGhostType DUPLICATECELL: the cells of the blocks
// around, at its level where they exist, else coarser), as ParaView's AMR filters expect: its
// Contour then runs vtkAMRDualContour on the cell arrays and the surface has no cracks between
// levels. `arrays` hold values of every point of every block (block after block, x fastest;
// sim::BlockFieldSet). With `ownOnly` (over MPI ranks: a rank's piece, for Catalyst and the .vthb
// files) only the blocks of the rank's run (grid.ownFirst, ownEnd) get their data, the others'
// places stay empty, and `arrays` hold the points of the blocks of grid.valuesHeld alone, in its
// order (every block's when it is empty).
//
// (A vtkOverlappingAMR with blanked parents is what VTK's AMR model suggests for files, but
// ParaView 5.11's Contour of its cell data reads past the blocks' arrays: tens of thousands of
// errors on a 3-level tree. The non-overlapping form with ghost layers contours cleanly.)
vtkSmartPointer<vtkNonOverlappingAMR> makeNonOverlappingAmr(const sim::BlockGrid& grid,
                                                            const std::vector<PointArray>& arrays, bool ownOnly = false);

}  // namespace octoflow::adaptors
