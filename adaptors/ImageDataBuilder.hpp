#pragma once
// Host arrays of a uniform grid as a vtkImageData, without copying them.
#include <vtkImageData.h>
#include <vtkSmartPointer.h>

#include <string>
#include <vector>

#include "common/Extent.hpp"
#include "sim/Simulation.hpp"

namespace octoflow::adaptors {

// A host array of a grid's nodes: nodeCount * components floats (null: left out).
struct PointArray {
  std::string name;
  const float* values = nullptr;
  int components = 1;
};

// The nodes of `box` (whole-grid coordinates; the image's extent says where they sit) with the
// arrays wrapped, not copied: they must outlive the image. Origin 0, spacing 1 (node (i,j,k) sits
// at (i,j,k)). The first scalar array is the active scalars, the first 3-component one the active
// vectors.
vtkSmartPointer<vtkImageData> makeImageData(const NodeBox& box, const std::vector<PointArray>& arrays);

// Origin 0, spacing 1 (lattice units; node (i,j,k) sits at (i,j,k)); nz = 1 for 2D. The arrays
// are wrapped, not copied: they must outlive the image (null arrays are left out). density has
// one value per node, velocity three (xyz per node).
vtkSmartPointer<vtkImageData> makeImageData(const Extent& extent, const float* density, const float* velocity);
// A piece of a larger grid: the nodes of `box` (whole-grid coordinates; the image's extent says
// where they sit), arrays holding box nodes.
vtkSmartPointer<vtkImageData> makeImageData(const NodeBox& box, const float* density, const float* velocity);

// One step's fields as `octoflow run` writes them (<case>_<step>.vti) and the plugin reads them back
// from checkpoints: the solver's arrays in lattice units, its physical arrays (computed into
// `physical`, which must outlive the image, as must `fields`) and its one-value metadata as field data.
vtkSmartPointer<vtkImageData> makeFieldsImage(const sim::Simulation& simulation, Index step, const sim::FieldSet& fields,
                                              std::vector<sim::DerivedArray>& physical);

// Adds a point array wrapping `values` (nodeCount * components floats, not copied).
void addPointArray(vtkImageData* image, const char* name, const float* values, int components);
// Adds a one-value field-data array (metadata such as unit scales).
void addFieldValue(vtkImageData* image, const char* name, double value);

}  // namespace octoflow::adaptors
