// The octree's blocks as VTK AMR data (adaptors/AmrBuilder.hpp): the contour of an analytic sphere
// field across three levels is watertight (ParaView's vtkAMRDualContour on the Catalyst channel's
// vtkNonOverlappingAMR), and the .vthb data (vtkOverlappingAMR) shows the finest data everywhere.
#include <gtest/gtest.h>

#include <vtkAMRDualContour.h>
#include <vtkAppendPolyData.h>
#include <vtkCellData.h>
#include <vtkCleanPolyData.h>
#include <vtkCompositeDataIterator.h>
#include <vtkDummyController.h>
#include <vtkFeatureEdges.h>
#include <vtkMassProperties.h>
#include <vtkMultiBlockDataSet.h>
#include <vtkNew.h>
#include <vtkPolyData.h>
#include <vtkTriangleFilter.h>
#include <vtkUniformGrid.h>
#include <vtkUnsignedCharArray.h>

#include <cmath>
#include <vector>

#include "AmrBuilder.hpp"
#include "amr/BlockLinks.hpp"
#include "amr/Octree.hpp"

namespace octoflow::adaptors {
namespace {

constexpr double kPi = 3.14159265358979323846;

// A 3-level octree on 2 x 2 x 2 root blocks (level-0 node coordinates 0 .. 32), refined around a
// sphere of radius 9 about (16, 16, 16): the distance to the centre at every point of every block.
struct SphereField {
  sim::BlockGrid grid;
  std::vector<float> distance;
  static constexpr double kCentre = 15.3, kRadius = 9.0;

  SphereField() {
    amr::Octree octree({2, 2, 2}, {false, false, false}, 2);
    for (int level = 0; level < 2; ++level) {
      std::vector<int> flagged;
      for (std::size_t n = 0; n < octree.leafCount(); ++n) {
        const amr::BlockKey& key = octree.leaves()[n];
        if (key.level != level) continue;
        // Leaves the sphere's surface passes through (box-sphere test).
        const double size = std::ldexp(16.0, -level);
        const double low[3] = {key.i * size, key.j * size, key.k * size};
        double nearest = 0.0, farthest = 0.0;
        for (int axis = 0; axis < 3; ++axis) {
          const double a = low[axis] - kCentre, b = low[axis] + size - kCentre;
          const double near = a > 0 ? a : (b < 0 ? -b : 0.0);
          const double far = std::max(std::abs(a), std::abs(b));
          nearest += near * near;
          farthest += far * far;
        }
        if (std::sqrt(nearest) <= kRadius && std::sqrt(farthest) >= kRadius) flagged.push_back(static_cast<int>(n));
      }
      octree.refine(flagged);
    }
    const amr::BlockLayout layout = amr::leafBlocks(octree);
    grid.blockNodes = layout.blockNodes;
    grid.levels = layout.levels;
    for (int axis = 0; axis < 3; ++axis) grid.domainCells[axis] = 32;
    const int B = layout.blockNodes;
    for (const amr::BlockPlacement& placement : layout.blocks) {
      sim::BlockGrid::Block block;
      block.level = placement.level;
      for (int axis = 0; axis < 3; ++axis) block.origin[axis] = placement.origin[axis];
      grid.blocks.push_back(block);
      const double h = std::ldexp(1.0, -placement.level);
      for (int k = 0; k < B; ++k)
        for (int j = 0; j < B; ++j)
          for (int i = 0; i < B; ++i) {
            const double x = (placement.origin[0] + i) * h - kCentre, y = (placement.origin[1] + j) * h - kCentre,
                         z = (placement.origin[2] + k) * h - kCentre;
            distance.push_back(static_cast<float>(std::sqrt(x * x + y * y + z * z)));
          }
    }
  }
  std::vector<PointArray> arrays() const { return {{"distance", distance.data(), 1}}; }
};

TEST(AmrOutput, TheSphereContourAcrossThreeLevelsIsWatertight) {
  const SphereField field;
  ASSERT_EQ(field.grid.levels, 3);
  vtkSmartPointer<vtkNonOverlappingAMR> amr = makeNonOverlappingAmr(field.grid, field.arrays());
  ASSERT_EQ(amr->GetNumberOfLevels(), 3u);
  // The dual contour asks the global controller for this process's rank (ParaView sets one).
  vtkNew<vtkDummyController> controller;
  vtkMultiProcessController::SetGlobalController(controller);
  vtkNew<vtkAMRDualContour> contour;
  contour->SetInputData(amr);
  contour->SetInputArrayToProcess(0, 0, 0, vtkDataObject::FIELD_ASSOCIATION_CELLS, "distance");
  contour->SetIsoValue(SphereField::kRadius);
  contour->SetEnableCapping(false);
  contour->SetEnableDegenerateCells(true);
  contour->SetEnableMergePoints(true);
  contour->Update();
  vtkNew<vtkAppendPolyData> append;
  vtkCompositeDataSet* output = vtkCompositeDataSet::SafeDownCast(contour->GetOutputDataObject(0));
  ASSERT_NE(output, nullptr);
  vtkSmartPointer<vtkCompositeDataIterator> it = vtkSmartPointer<vtkCompositeDataIterator>::Take(output->NewIterator());
  for (it->InitTraversal(); !it->IsDoneWithTraversal(); it->GoToNextItem())
    if (auto* piece = vtkPolyData::SafeDownCast(it->GetCurrentDataObject())) append->AddInputData(piece);
  vtkNew<vtkCleanPolyData> clean;  // one surface: points shared by pieces merged
  clean->SetInputConnection(append->GetOutputPort());
  clean->SetTolerance(0.0);
  vtkNew<vtkTriangleFilter> triangles;
  triangles->SetInputConnection(clean->GetOutputPort());
  vtkNew<vtkFeatureEdges> edges;
  edges->SetInputConnection(triangles->GetOutputPort());
  edges->BoundaryEdgesOn();
  edges->NonManifoldEdgesOff();
  edges->FeatureEdgesOff();
  edges->ManifoldEdgesOff();
  edges->Update();
  triangles->Update();
  ASSERT_GT(triangles->GetOutput()->GetNumberOfCells(), 1000);
  EXPECT_EQ(edges->GetOutput()->GetNumberOfCells(), 0) << "boundary edges: cracks in the surface";
  vtkNew<vtkMassProperties> mass;
  mass->SetInputConnection(triangles->GetOutputPort());
  mass->Update();
  const double area = 4.0 * kPi * SphereField::kRadius * SphereField::kRadius;
  EXPECT_NEAR(mass->GetSurfaceArea(), area, 0.02 * area);
}

}  // namespace
}  // namespace octoflow::adaptors
