// Offline VTK output: what ParaView's readers get back from the files we write.
#include <gtest/gtest.h>
#include <vtkFloatArray.h>
#include <vtkImageData.h>
#include <vtkNew.h>
#include <vtkPointData.h>
#include <vtkXMLImageDataReader.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "ImageDataBuilder.hpp"
#include "VtiSeriesWriter.hpp"
#include "lbm/UniformSolver.hpp"

namespace fs = std::filesystem;
using namespace octoflow;

namespace {
std::string readText(const fs::path& path) {
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}
}  // namespace

TEST(VtiSeriesWriter, WritesReadableCompressedFilesAndASeries) {
  const fs::path directory = fs::temp_directory_path() / "octoflow_vti_test";
  fs::remove_all(directory);
  fs::create_directories(directory);

  lbm::UniformSolverConfig config;
  config.lattice = lbm::LatticeKind::D3Q19;
  config.extent = Extent{7, 5, 3};
  config.faces.setAxisPeriodic(0);
  config.acceleration = lbm::Vector3{1e-4f, 0.0f, 0.0f};
  config.tau = 0.7f;
  lbm::UniformSolver solver(config, exec::Backend::Cpu);
  adaptors::VtiSeriesWriter writer(directory, "flow");
  for (Index step : {0, 25}) {
    solver.advance(step - solver.step());
    const auto& fields = solver.fetchFields(true, true);
    writer.write(step, static_cast<double>(step), adaptors::makeImageData(config.extent, fields.density.data(),
                                                                         fields.velocity.data()));
  }

  // The last file read back: dimensions, geometry, arrays and every value.
  const fs::path last = directory / "flow_00000025.vti";
  ASSERT_TRUE(fs::exists(directory / "flow_00000000.vti"));
  ASSERT_TRUE(fs::exists(last));
  const std::string header = readText(last).substr(0, 600);
  EXPECT_NE(header.find("compressor=\"vtkZLibDataCompressor\""), std::string::npos) << header;
  EXPECT_NE(header.find("format=\"appended\""), std::string::npos) << header;
  vtkNew<vtkXMLImageDataReader> reader;
  reader->SetFileName(last.c_str());
  reader->Update();
  vtkImageData* image = reader->GetOutput();
  int dimensions[3];
  image->GetDimensions(dimensions);
  EXPECT_EQ(dimensions[0], 7);
  EXPECT_EQ(dimensions[1], 5);
  EXPECT_EQ(dimensions[2], 3);
  double origin[3], spacing[3];
  image->GetOrigin(origin);
  image->GetSpacing(spacing);
  for (int a = 0; a < 3; ++a) {
    EXPECT_EQ(origin[a], 0.0);
    EXPECT_EQ(spacing[a], 1.0);
  }
  auto* density = vtkFloatArray::SafeDownCast(image->GetPointData()->GetArray("density"));
  auto* velocity = vtkFloatArray::SafeDownCast(image->GetPointData()->GetArray("velocity"));
  ASSERT_NE(density, nullptr);
  ASSERT_NE(velocity, nullptr);
  EXPECT_EQ(density->GetNumberOfComponents(), 1);
  EXPECT_EQ(velocity->GetNumberOfComponents(), 3);
  const auto& fields = solver.fetchFields(true, true);
  for (Index node = 0; node < config.extent.cellCount(); ++node) {
    ASSERT_EQ(density->GetValue(node), fields.density.data()[node]) << node;  // lossless: exact
    for (int c = 0; c < 3; ++c) ASSERT_EQ(velocity->GetValue(3 * node + c), fields.velocity.data()[3 * node + c]);
  }
  EXPECT_GT(velocity->GetValue(0), 0.0f) << "the body force drives +x";

  // The series lists both files with their times, and no temporary file is left.
  const std::string series = readText(directory / "flow.pvd");
  EXPECT_NE(series.find("timestep=\"0\" group=\"\" part=\"0\" file=\"flow_00000000.vti\""), std::string::npos) << series;
  EXPECT_NE(series.find("timestep=\"25\" group=\"\" part=\"0\" file=\"flow_00000025.vti\""), std::string::npos) << series;
  int files = 0;
  for (const auto& entry : fs::directory_iterator(directory)) {
    ++files;
    EXPECT_EQ(entry.path().filename().string().find(".tmp"), std::string::npos) << entry.path();
  }
  EXPECT_EQ(files, 3);
  fs::remove_all(directory);
}

TEST(ImageDataBuilder, WrapsHostArraysWithoutCopying) {
  const Extent extent{4, 3, 1};
  std::vector<float> density(12, 1.0f), velocity(36, 0.0f);
  auto image = adaptors::makeImageData(extent, density.data(), velocity.data());
  EXPECT_EQ(image->GetPointData()->GetArray("density")->GetVoidPointer(0), density.data());
  EXPECT_EQ(image->GetPointData()->GetArray("velocity")->GetVoidPointer(0), velocity.data());
  EXPECT_EQ(image->GetNumberOfPoints(), 12);
  auto densityOnly = adaptors::makeImageData(extent, density.data(), nullptr);
  EXPECT_EQ(densityOnly->GetPointData()->GetArray("velocity"), nullptr);
}
