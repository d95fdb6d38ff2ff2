// Catalyst in process with every channel: a phi field on "grid" contoured by ParaView
// (isosurface_phi.py), the surface octoflow extracts itself on "surface" (surface_phi.py) — the
// same surface — and tracers on "tracers" (tracers.py); all render non-blank images.
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
#include "particles/TracerSet.hpp"

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

// One adaptor, three scripts, three channels (ParaView's Catalyst starts once per process: the
// channels share one test). isosurface_phi.py contours "phi" of the grid, surface_phi.py renders
// the surface we extracted, tracers.py draws tracers advected in a vortex over the flow's speed.
TEST_F(CatalystChannels, ThreeScriptsOnGridSurfaceAndTracers) {
  octoflow::testing::VirtualDisplay display;
  ASSERT_FALSE(display.display().empty()) << "no virtual X server could be started";
  setenv("DISPLAY", display.display().c_str(), 1);

  const Extent e{48, 46, 40};
  const double centre[3] = {23.6, 22.8, 19.3};
  std::vector<float> phi(static_cast<std::size_t>(e.cellCount()));
  std::vector<float> velocity(static_cast<std::size_t>(3 * e.cellCount()));
  for (Index k = 0; k < e.nz; ++k)
    for (Index j = 0; j < e.ny; ++j)
      for (Index i = 0; i < e.nx; ++i) {
        const Index n = e.linear(i, j, k);
        phi[static_cast<std::size_t>(n)] = octoflow::testing::spherePhi(i, j, k, centre, 11.0, 2.0);
        velocity[3 * n + 0] = -0.01f * static_cast<float>(j - 23);  // solid-body rotation
        velocity[3 * n + 1] = 0.01f * static_cast<float>(i - 23);
        velocity[3 * n + 2] = 0.0f;
      }
  auto extractor = insitu::IsosurfaceExtractor::create(exec::Backend::Cpu);
  const insitu::Surface surface = extractor->extract(insitu::ScalarFieldView{phi.data(), e, {}}, 0.5f);
  ASSERT_GT(surface.triangleCount, 1000);
  const auto box = particles::TracerSource::box({13.0f, 13.0f, 18.0f}, {33.0f, 33.0f, 22.0f}, 10, 10, 1);
  particles::TracerSettings settings;
  settings.sources = {box};
  particles::TracerSet tracers(exec::Backend::Cpu, settings);
  tracers.release(0);
  for (int step = 0; step < 20; ++step) tracers.advect(particles::VelocityFieldView{velocity.data(), nullptr, e});
  const particles::TracerView view = tracers.view();
  ASSERT_EQ(view.count, 100);

  const std::string scripts = std::string(OCTOFLOW_SOURCE_DIR) + "/catalyst_scripts/";
  const fs::path extracts = directory_ / "catalyst";
  {
    adaptors::CatalystAdaptor adaptor(
        {scripts + "isosurface_phi.py", scripts + "surface_phi.py", scripts + "tracers.py"}, extracts.string(),
        {adaptors::kGridChannel, adaptors::kSurfaceChannel, adaptors::kTracersChannel});
    for (Index step : {0, 10}) {
      // Offered: density (index 0), velocity (1), phi (2).
      const adaptors::CatalystAdaptor::FieldRequest request =
          adaptor.request(step, static_cast<double>(step), {adaptors::kDensityArray, adaptors::kVelocityArray, "phi"});
      EXPECT_TRUE(request.any);
      EXPECT_TRUE(request.surface);
      EXPECT_TRUE(request.tracers);
      EXPECT_TRUE(request.wants(1));  // tracers.py's slice
      EXPECT_TRUE(request.wants(2));  // isosurface_phi.py's contour
      EXPECT_TRUE(adaptor.gridFieldNeeded("phi"));
      if (step > 0) EXPECT_FALSE(request.wants(0)) << "no script asks for it";  // step 0: all asked for
      adaptor.execute(step, static_cast<double>(step), e,
                      {{"phi", phi.data(), 1}, {adaptors::kVelocityArray, velocity.data(), 3}}, &surface, &view);
    }
  }  // Catalyst ends here, before MPI_Finalize

  for (const char* image : {"phi_00000010.png", "surface_00000010.png", "tracers_00000010.png"}) {
    ASSERT_TRUE(fs::exists(extracts / image)) << image;
    double nonBackground = 0.0;
    std::size_t colours = 0;
    octoflow::testing::pixelStatistics(extracts / image, nonBackground, colours);
    EXPECT_GT(nonBackground, 0.03) << image;  // something is on screen
    EXPECT_GT(colours, 20u) << image;         // shaded or colour-mapped, not a flat silhouette
  }
  // ParaView's contour of the grid and our extraction cut the same grid edges: the same points.
  const auto contour = readExtract(extracts / "phi_contour_00000010.pvtp");
  const auto handed = readExtract(extracts / "surface_00000010.pvtp");
  ASSERT_TRUE(contour && handed) << "surface extracts missing";
  EXPECT_EQ(handed->GetNumberOfPoints(), surface.pointCount);
  EXPECT_EQ(handed->GetNumberOfPolys(), surface.triangleCount);
  ASSERT_NE(handed->GetPointData()->GetNormals(), nullptr) << "the script asks for the normals";
  EXPECT_EQ(contour->GetNumberOfPoints(), surface.pointCount);
  // Every tracer with its id and age.
  const auto particles = readExtract(extracts / "tracers_00000010.pvtp");
  ASSERT_TRUE(particles) << "tracer extract missing";
  EXPECT_EQ(particles->GetNumberOfPoints(), 100);
  ASSERT_NE(particles->GetPointData()->GetArray("id"), nullptr);
  ASSERT_NE(particles->GetPointData()->GetArray("age"), nullptr);
  EXPECT_DOUBLE_EQ(particles->GetPointData()->GetArray("id")->GetRange()[1], 99.0);
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
