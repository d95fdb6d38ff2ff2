// The octree's blocks as VTK AMR data (adaptors/AmrBuilder.hpp, the Catalyst channel "amr" and the
// .vthb files): the contour of an analytic sphere field across three levels is watertight
// (ParaView's vtkAMRDualContour, as its Contour filter runs it) and has the sphere's area.
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
#include <limits>
#include <vector>

#include <vtkXMLMultiBlockDataReader.h>
#include <vtkXMLUniformGridAMRReader.h>
#include <vtkXMLUniformGridAMRWriter.h>

#include <filesystem>
#include <fstream>
#include <map>

#include "AmrBuilder.hpp"
#include "CatalystSupport.hpp"
#include "TestSupport.hpp"
#include "XmlSeriesWriter.hpp"
#include "amr/BlockLinks.hpp"
#include "amr/BlockShare.hpp"
#include "amr/Octree.hpp"

namespace octoflow::adaptors {
namespace {

constexpr double kPi = 3.14159265358979323846;
namespace fs = std::filesystem;

// Boundary edges of the triangles of every polydata in `data` merged into one surface.
vtkIdType boundaryEdges(vtkDataObject* data, vtkIdType& triangles, double& area) {
  vtkNew<vtkAppendPolyData> append;
  if (auto* single = vtkPolyData::SafeDownCast(data)) append->AddInputData(single);
  if (auto* composite = vtkCompositeDataSet::SafeDownCast(data)) {
    vtkSmartPointer<vtkCompositeDataIterator> it = vtkSmartPointer<vtkCompositeDataIterator>::Take(composite->NewIterator());
    for (it->InitTraversal(); !it->IsDoneWithTraversal(); it->GoToNextItem())
      if (auto* piece = vtkPolyData::SafeDownCast(it->GetCurrentDataObject())) append->AddInputData(piece);
  }
  vtkNew<vtkCleanPolyData> clean;  // one surface: points shared by pieces merged
  clean->SetInputConnection(append->GetOutputPort());
  clean->SetTolerance(0.0);
  vtkNew<vtkTriangleFilter> triangleFilter;
  triangleFilter->SetInputConnection(clean->GetOutputPort());
  vtkNew<vtkFeatureEdges> edges;
  edges->SetInputConnection(triangleFilter->GetOutputPort());
  edges->BoundaryEdgesOn();
  edges->NonManifoldEdgesOff();
  edges->FeatureEdgesOff();
  edges->ManifoldEdgesOff();
  edges->Update();
  triangles = triangleFilter->GetOutput()->GetNumberOfCells();
  vtkNew<vtkMassProperties> mass;
  mass->SetInputConnection(triangleFilter->GetOutputPort());
  mass->Update();
  area = triangles > 0 ? mass->GetSurfaceArea() : 0.0;
  return edges->GetOutput()->GetNumberOfCells();
}

// A 3-level octree on 2 x 2 x 2 root blocks (level-0 node coordinates 0 .. 32), refined around a
// sphere of radius 9 about (16, 16, 16): the distance to the centre at every point of every block.
struct SphereField {
  sim::BlockGrid grid;
  amr::BlockLayout layout;
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
    layout = amr::leafBlocks(octree);
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
  // A rank's piece of the values (sim::BlockFieldSet): those of the blocks `held` lists alone, in
  // its order; a block outside [trueFirst, trueEnd) holds a value far from any distance instead.
  std::vector<float> piece(const std::vector<Index>& held, Index trueFirst = 0,
                           Index trueEnd = std::numeric_limits<Index>::max()) const {
    const std::size_t perBlock = static_cast<std::size_t>(layout.pointsPerBlock());
    std::vector<float> values(held.size() * perBlock, 1.0e6f);
    for (std::size_t n = 0; n < held.size(); ++n)
      if (held[n] >= trueFirst && held[n] < trueEnd)
        std::copy_n(distance.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(held[n]) * perBlock), perBlock,
                    values.begin() + static_cast<std::ptrdiff_t>(n * perBlock));
    return values;
  }
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
  vtkIdType triangles = 0;
  double area = 0.0;
  const vtkIdType cracks = boundaryEdges(contour->GetOutputDataObject(0), triangles, area);
  ASSERT_GT(triangles, 1000);
  EXPECT_EQ(cracks, 0) << "boundary edges: cracks in the surface";
  const double sphere = 4.0 * kPi * SphereField::kRadius * SphereField::kRadius;
  EXPECT_NEAR(area, sphere, 0.02 * sphere);
}

// The cell values (ghost layers included) of the blocks of a rank's run, as a rank hands them to
// Catalyst: `byBlock[level][index]`, empty where the block is not the run's.
std::vector<std::vector<std::vector<float>>> runCells(const sim::BlockGrid& grid, const std::vector<float>& values) {
  vtkSmartPointer<vtkNonOverlappingAMR> amr = makeNonOverlappingAmr(grid, {{"distance", values.data(), 1}}, true);
  std::vector<std::vector<std::vector<float>>> cells(amr->GetNumberOfLevels());
  for (unsigned level = 0; level < amr->GetNumberOfLevels(); ++level)
    for (unsigned n = 0; n < amr->GetNumberOfDataSets(level); ++n) {
      cells[level].emplace_back();
      vtkUniformGrid* block = amr->GetDataSet(level, n);
      if (!block) continue;
      vtkDataArray* array = block->GetCellData()->GetArray("distance");
      for (vtkIdType c = 0; c < array->GetNumberOfTuples(); ++c)
        cells[level].back().push_back(static_cast<float>(array->GetComponent(c, 0)));
    }
  return cells;
}

// A rank over MPI ranks gets the values of its run and of the blocks around it alone
// (amr::blocksAround, BlockGrid::valuesHeld): its blocks with their ghost layers are the same as
// from every block's values, with walls and periodic faces; from its run's values alone they are
// not.
TEST(AmrOutput, ARanksBlocksWithGhostLayersNeedOnlyTheBlocksAroundItsRun) {
  SphereField field;
  for (const bool periodic : {false, true}) {
    SCOPED_TRACE(periodic ? "periodic" : "walls");
    for (int axis = 0; axis < 3; ++axis) field.grid.periodic[axis] = periodic;
    bool runAloneDiffers = false;
    for (const int ranks : {2, 3, 5}) {
      const std::vector<std::int32_t> starts = amr::balancedRuns(field.layout, ranks);
      for (int rank = 0; rank < ranks; ++rank) {
        const amr::BlockRun run = amr::runOf(starts, rank);
        const std::vector<std::int32_t> around =
            amr::blocksAround(field.layout, run, {2, 2, 2}, {periodic, periodic, periodic});
        sim::BlockGrid grid = field.grid;
        grid.ownFirst = run.first;
        grid.ownEnd = run.end;
        const auto cells = runCells(grid, field.distance);
        grid.valuesHeld.assign(around.begin(), around.end());
        EXPECT_EQ(runCells(grid, field.piece(grid.valuesHeld)), cells) << ranks << " ranks, rank " << rank;
        runAloneDiffers = runAloneDiffers || runCells(grid, field.piece(grid.valuesHeld, run.first, run.end)) != cells;
      }
    }
    EXPECT_TRUE(runAloneDiffers) << "the ghost layers never read a block beyond the run";
  }
}

// Every file under `folder` (relative path -> bytes).
std::map<std::string, std::string> filesUnder(const fs::path& folder) {
  std::map<std::string, std::string> files;
  for (const auto& entry : fs::recursive_directory_iterator(folder))
    if (entry.is_regular_file()) files[fs::relative(entry.path(), folder).string()] = testing::fileContents(entry.path());
  return files;
}

// The .vthb files over MPI ranks: each rank writes its blocks, rank 0 the summary once all have
// (XmlSeriesWriter::writeAmrPiece, publishPieces). Three ranks' pieces, from the values of their
// blocks around alone, make the same bytes as one process, and those are the bytes of VTK's own
// AMR writer (its summary and its block files), which ParaView reads back.
TEST(AmrOutput, RanksWritingTheirBlocksMakeTheFilesOfOneProcessAndOfVtksWriter) {
  SphereField field;
  const fs::path directory = fs::temp_directory_path() / "octoflow_AmrOutput_pieces";
  fs::remove_all(directory);
  // Each writer its own data (a writer leaves ranges cached in the arrays it wrote).
  fs::create_directories(directory / "vtk");
  vtkNew<vtkXMLUniformGridAMRWriter> vtkWriter;
  vtkWriter->SetInputData(makeNonOverlappingAmr(field.grid, field.arrays()));
  vtkWriter->SetFileName((directory / "vtk" / "sphere_00000007.vthb").c_str());
  vtkWriter->SetDataModeToAppended();
  vtkWriter->EncodeAppendedDataOff();
  vtkWriter->SetCompressorTypeToZLib();
  vtkWriter->SetHeaderTypeToUInt64();
  ASSERT_EQ(vtkWriter->Write(), 1);

  XmlSeriesWriter oneProcess(directory / "one", "sphere");
  fs::create_directories(directory / "one");
  const vtkSmartPointer<vtkNonOverlappingAMR> whole = makeNonOverlappingAmr(field.grid, field.arrays());
  oneProcess.write(7, 0.5, whole);

  const int ranks = 3;
  const std::vector<std::int32_t> starts = amr::balancedRuns(field.layout, ranks);
  fs::create_directories(directory / "three");
  std::vector<XmlSeriesWriter> writers;  // one a rank
  for (int rank = 0; rank < ranks; ++rank) writers.emplace_back(directory / "three", "sphere");
  for (int rank = 0; rank < ranks; ++rank) {
    const amr::BlockRun run = amr::runOf(starts, rank);
    sim::BlockGrid grid = field.grid;
    grid.ownFirst = run.first;
    grid.ownEnd = run.end;
    // The rank's values: those of its blocks around alone.
    for (const std::int32_t b : amr::blocksAround(field.layout, run, {2, 2, 2}, {false, false, false}))
      grid.valuesHeld.push_back(b);
    const std::vector<float> held = field.piece(grid.valuesHeld);
    writers[static_cast<std::size_t>(rank)].writeAmrPiece(7, 0.5, makeNonOverlappingAmr(grid, {{"distance", held.data(), 1}}, true),
                                                          rank == 0);
  }
  // Until rank 0 publishes, no summary and no series: a reader never meets missing blocks.
  EXPECT_FALSE(fs::exists(directory / "three" / "sphere_00000007.vthb"));
  EXPECT_FALSE(fs::exists(directory / "three" / "sphere.pvd"));
  writers[0].publishPieces();

  const std::map<std::string, std::string> expected = filesUnder(directory / "vtk");
  ASSERT_EQ(expected.size(), field.grid.blocks.size() + 1);
  std::map<std::string, std::string> written = filesUnder(directory / "one");
  EXPECT_EQ(written.erase("sphere.pvd"), 1u);
  EXPECT_TRUE(written == expected) << "one process: not VTK's files";
  std::map<std::string, std::string> pieces = filesUnder(directory / "three");
  EXPECT_EQ(pieces["sphere.pvd"], testing::fileContents(directory / "one" / "sphere.pvd"));
  pieces.erase("sphere.pvd");
  EXPECT_TRUE(pieces == expected) << "three ranks' pieces: not one process's files";

  vtkNew<vtkXMLUniformGridAMRReader> reader;
  reader->SetFileName((directory / "three" / "sphere_00000007.vthb").c_str());
  reader->Update();
  auto* read = vtkUniformGridAMR::SafeDownCast(reader->GetOutputDataObject(0));
  ASSERT_NE(read, nullptr);
  ASSERT_EQ(read->GetNumberOfLevels(), whole->GetNumberOfLevels());
  for (unsigned level = 0; level < whole->GetNumberOfLevels(); ++level)
    EXPECT_EQ(read->GetNumberOfDataSets(level), whole->GetNumberOfDataSets(level)) << "level " << level;
}

// A flow past a sphere on a 2-level octree as a user runs it: the .vthb series holds both levels
// (blocks, cell arrays, ghost layers marked) with its times, and the contour amr_isosurface.py
// makes of the speed in situ is watertight across the levels.
using AmrRun = testing::ScratchFolderTest;

TEST_F(AmrRun, WritesItsLevelsAndContoursThemWithoutCracks) {
  const fs::path& directory = directory_;
  std::ofstream(directory / "octree.toml") << testing::octreeSphereCase("octree", 20)
                                           << "[output]\nevery = 10\n[insitu]\nevery = 20\n";
  const std::string script = std::string(OCTOFLOW_SOURCE_DIR) + "/catalyst_scripts/amr_isosurface.py";
  const testing::VirtualDisplay display;  // ParaView renders the PNG through X
  ASSERT_FALSE(display.display().empty()) << "no virtual X server could be started";
  const testing::CommandResult run =
      testing::runCommand("DISPLAY=" + display.display() + " '" + OCTOFLOW_CLI_PATH +
                              "' run octree.toml --backend cpu --quiet --output out --catalyst " + script,
                          directory);
  ASSERT_EQ(run.exitCode, 0) << run.output;

  vtkNew<vtkXMLUniformGridAMRReader> reader;
  reader->SetFileName((directory / "out" / "octree_amr_00000020.vthb").c_str());
  reader->SetMaximumLevelsToReadByDefault(0);  // all
  reader->Update();
  auto* amr = vtkNonOverlappingAMR::SafeDownCast(reader->GetOutputDataObject(0));
  ASSERT_NE(amr, nullptr) << reader->GetOutputDataObject(0)->GetClassName();
  ASSERT_EQ(amr->GetNumberOfLevels(), 2u);
  // The sphere's surface crosses all 8 root blocks: every leaf is on level 1.
  EXPECT_EQ(amr->GetNumberOfDataSets(0), 0u);
  EXPECT_EQ(amr->GetNumberOfDataSets(1), 64u);
  auto* block = vtkUniformGrid::SafeDownCast(amr->GetDataSet(1, 0));
  ASSERT_NE(block, nullptr);
  int dimensions[3];
  block->GetDimensions(dimensions);
  EXPECT_EQ(dimensions[0], 19) << "16 cells and a ghost layer each side";
  EXPECT_EQ(block->GetSpacing()[0], 0.5);
  vtkDataArray* density = block->GetCellData()->GetArray("density");
  vtkDataArray* velocity = block->GetCellData()->GetArray("velocity");
  ASSERT_TRUE(density && velocity);
  EXPECT_EQ(velocity->GetNumberOfComponents(), 3);
  EXPECT_NEAR(density->GetRange()[0], 1.0, 0.01);
  EXPECT_NEAR(density->GetRange()[1], 1.0, 0.01);
  auto* ghosts = vtkUnsignedCharArray::SafeDownCast(block->GetCellData()->GetArray(vtkDataSetAttributes::GhostArrayName()));
  ASSERT_NE(ghosts, nullptr);
  vtkIdType marked = 0;
  for (vtkIdType n = 0; n < ghosts->GetNumberOfTuples(); ++n) marked += ghosts->GetValue(n) != 0;
  EXPECT_EQ(marked, 18 * 18 * 18 - 16 * 16 * 16);
  const std::string series = testing::fileContents(directory / "out" / "octree_amr.pvd");
  for (const char* entry : {"timestep=\"0\" group=\"\" part=\"0\" file=\"octree_amr_00000000.vthb\"",
                            "file=\"octree_amr_00000020.vthb\""})
    EXPECT_NE(series.find(entry), std::string::npos) << series;

  vtkNew<vtkXMLMultiBlockDataReader> contourReader;
  contourReader->SetFileName((directory / "out" / "catalyst" / "amr_speed_00000020.vtm").c_str());
  contourReader->Update();
  vtkIdType triangles = 0;
  double area = 0.0;
  EXPECT_EQ(boundaryEdges(contourReader->GetOutputDataObject(0), triangles, area), 0) << "cracks in the speed contour";
  EXPECT_GT(triangles, 200);
  double drawn = 0.0;
  std::size_t colours = 0;
  testing::pixelStatistics(directory / "out" / "catalyst" / "amr_speed_00000020.png", drawn, colours);
  EXPECT_GT(drawn, 0.01) << "the surface and the outline were drawn";
}

#if OCTOFLOW_HAVE_MPI
// The same run over 2 MPI ranks, each stepping a run of the blocks: each rank hands Catalyst its own
// blocks (the others' places empty), and the contour the pipelines make of them is one rank's: as
// many triangles, the same area, no cracks where the ranks' blocks meet; the image is drawn.
TEST_F(AmrRun, TwoRanksHandTheirBlocksAndContourThemAsOneRank) {
  const fs::path& directory = directory_;
  std::ofstream(directory / "octree.toml") << testing::octreeSphereCase("octree", 20)
                                           << "[output]\nevery = 20\n[insitu]\nevery = 20\n";
  const std::string script = std::string(OCTOFLOW_SOURCE_DIR) + "/catalyst_scripts/amr_isosurface.py";
  const testing::VirtualDisplay display;
  ASSERT_FALSE(display.display().empty()) << "no virtual X server could be started";
  const std::string run = "run octree.toml --backend cpu --quiet --catalyst " + script + " --output ";
  const testing::CommandResult one =
      testing::runCommand("DISPLAY=" + display.display() + " '" + OCTOFLOW_CLI_PATH + "' " + run + "one", directory);
  ASSERT_EQ(one.exitCode, 0) << one.output;
  const testing::CommandResult two = testing::runCommand(
      "DISPLAY=" + display.display() + " timeout 300 env " + testing::kMpiEnvironment + " '" + OCTOFLOW_MPIEXEC +
          "' --oversubscribe -np 2 -x OMP_NUM_THREADS=1 -x DISPLAY '" + OCTOFLOW_CLI_PATH + "' " + run + "two",
      directory);
  ASSERT_EQ(two.exitCode, 0) << two.output;
  vtkIdType triangles[2] = {0, 0};
  double area[2] = {0.0, 0.0};
  const char* folders[2] = {"one", "two"};
  for (int n = 0; n < 2; ++n) {
    SCOPED_TRACE(folders[n]);
    vtkNew<vtkXMLMultiBlockDataReader> contourReader;
    contourReader->SetFileName((directory / folders[n] / "catalyst" / "amr_speed_00000020.vtm").c_str());
    contourReader->Update();
    EXPECT_EQ(boundaryEdges(contourReader->GetOutputDataObject(0), triangles[n], area[n]), 0) << "cracks in the speed contour";
    double drawn = 0.0;
    std::size_t colours = 0;
    testing::pixelStatistics(directory / folders[n] / "catalyst" / "amr_speed_00000020.png", drawn, colours);
    EXPECT_GT(drawn, 0.01) << "the surface and the outline were drawn";
  }
  EXPECT_GT(triangles[0], 200);
  EXPECT_EQ(triangles[1], triangles[0]);
  EXPECT_NEAR(area[1], area[0], 1e-9 * area[0]);
}
#endif

}  // namespace
}  // namespace octoflow::adaptors
