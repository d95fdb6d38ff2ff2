// Catalyst in process, both channels: a phi field on channel "grid" contoured by ParaView
// (isosurface_phi.py) and the surface octoflow extracts itself on channel "surface"
// (surface_phi.py). The two give the same surface; both render non-blank images.
#include <gtest/gtest.h>
#include <vtkPointData.h>
#include <vtkPolyData.h>
#include <vtkSmartPointer.h>
#include <vtkXMLPPolyDataReader.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#if OCTOFLOW_HAVE_MPI
#include <mpi.h>
#endif

#include "CatalystAdaptor.hpp"
#include "CatalystSupport.hpp"
#include "Channels.hpp"
#include "SurfaceChecks.hpp"
#include "TestSupport.hpp"
#include "insitu/Isosurface.hpp"

namespace fs = std::filesystem;
using namespace octoflow;

namespace {

// The polydata of a VTP extract: ParaView's VTP extractor writes the parallel format (.pvtp and
// a folder of pieces, one per rank).
vtkSmartPointer<vtkPolyData> readExtract(const fs::path& path) {
  if (!fs::exists(path)) return nullptr;
  auto reader = vtkSmartPointer<vtkXMLPPolyDataReader>::New();
  reader->SetFileName(path.c_str());
  reader->Update();
  return reader->GetOutput();
}

using CatalystChannels = octoflow::testing::ScratchFolderTest;

}  // namespace

TEST_F(CatalystChannels, GridContourAndExtractedSurfaceAgreeAndRender) {
  octoflow::testing::VirtualDisplay display;
  ASSERT_FALSE(display.display().empty()) << "no virtual X server could be started";
  setenv("DISPLAY", display.display().c_str(), 1);

  const Extent e{40, 36, 32};
  const double centre[3] = {19.6, 17.8, 15.3};
  std::vector<float> phi(static_cast<std::size_t>(e.cellCount()));
  for (Index k = 0; k < e.nz; ++k)
    for (Index j = 0; j < e.ny; ++j)
      for (Index i = 0; i < e.nx; ++i)
        phi[e.linear(i, j, k)] = octoflow::testing::spherePhi(i, j, k, centre, 11.0, 2.0);
  auto extractor = insitu::IsosurfaceExtractor::create(exec::Backend::Cpu);
  const insitu::Surface surface = extractor->extract(insitu::ScalarFieldView{phi.data(), e, {}}, 0.5f);
  ASSERT_GT(surface.triangleCount, 1000);

  const std::string scripts = std::string(OCTOFLOW_SOURCE_DIR) + "/catalyst_scripts/";
  const fs::path extracts = directory_ / "catalyst";
  {
    adaptors::CatalystAdaptor adaptor({scripts + "isosurface_phi.py", scripts + "surface_phi.py"}, extracts.string(),
                                      {adaptors::kGridChannel, adaptors::kSurfaceChannel});
    for (Index step : {0, 10}) {
      const adaptors::CatalystAdaptor::FieldRequest request = adaptor.request(step, static_cast<double>(step));
      EXPECT_TRUE(request.any);
      EXPECT_TRUE(request.surface);
      EXPECT_TRUE(adaptor.gridFieldNeeded("phi"));
      if (step > 0) {  // at the first step the scripts are not imported yet: all is asked for
        EXPECT_FALSE(request.velocity) << "neither script asks for the flow";
        EXPECT_FALSE(request.density);
      }
      adaptor.execute(step, static_cast<double>(step), e, {{"phi", phi.data(), 1}}, &surface);
    }
  }  // Catalyst ends here, before MPI_Finalize

  for (const char* image : {"phi_00000010.png", "surface_00000010.png"}) {
    ASSERT_TRUE(fs::exists(extracts / image)) << image;
    double nonBackground = 0.0;
    std::size_t colours = 0;
    octoflow::testing::pixelStatistics(extracts / image, nonBackground, colours);
    EXPECT_GT(nonBackground, 0.03) << image;  // the sphere is on screen
    EXPECT_GT(colours, 20u) << image;         // and shaded, not a flat silhouette
  }
  // ParaView's contour of the grid and our extraction cut the same grid edges: the same points.
  const auto contour = readExtract(extracts / "phi_contour_00000010.pvtp");
  const auto handed = readExtract(extracts / "surface_00000010.pvtp");
  ASSERT_TRUE(contour && handed) << "VTP extracts missing";
  EXPECT_EQ(handed->GetNumberOfPoints(), surface.pointCount);
  EXPECT_EQ(handed->GetNumberOfPolys(), surface.triangleCount);
  ASSERT_NE(handed->GetPointData()->GetNormals(), nullptr) << "the script asks for the normals";
  EXPECT_EQ(contour->GetNumberOfPoints(), surface.pointCount);
}

int main(int argc, char** argv) {
#if OCTOFLOW_HAVE_MPI
  MPI_Init(&argc, &argv);  // the adaptor runs Catalyst on MPI_COMM_SELF
#endif
  ::testing::InitGoogleTest(&argc, argv);
  const int result = RUN_ALL_TESTS();
#if OCTOFLOW_HAVE_MPI
  MPI_Finalize();
#endif
  return result;
}
