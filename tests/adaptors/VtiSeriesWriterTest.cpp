// Offline VTK output: what ParaView's readers get back from the files we write.
#include <gtest/gtest.h>
#include <vtkFloatArray.h>
#include <vtkImageData.h>
#include <vtkNew.h>
#include <vtkFieldData.h>
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

TEST(VtiSeriesWriter, CliWritesSiArraysBesideLatticeOnesWithUnits) {
  const fs::path directory = fs::temp_directory_path() / "octoflow_units_test";
  fs::remove_all(directory);
  fs::create_directories(directory);
  std::ofstream(directory / "units.toml") << R"([case]
name = "units"
steps = 50
[units]
length = 0.002
velocity = 3.0
viscosity = 6e-4
density = 998.0
[lbm]
lattice = "D2Q9"
body_force = [1e-5, 0.0]
[domain]
size = [6, 10]
periodic = [true, false]
[output]
directory = "out"
)";
  const std::string command = "cd '" + directory.string() + "' && '" + OCTOFLOW_CLI_PATH + "' run units.toml --backend cpu --quiet";
  ASSERT_EQ(std::system(command.c_str()), 0);
  vtkNew<vtkXMLImageDataReader> reader;
  reader->SetFileName((directory / "out" / "units_00000050.vti").c_str());
  reader->Update();
  vtkImageData* image = reader->GetOutput();
  auto* velocity = image->GetPointData()->GetArray("velocity");
  auto* velocitySi = image->GetPointData()->GetArray("velocity_si");
  auto* density = image->GetPointData()->GetArray("density");
  auto* pressureSi = image->GetPointData()->GetArray("pressure_si");
  ASSERT_TRUE(velocity && velocitySi && density && pressureSi);
  for (vtkIdType node = 0; node < image->GetNumberOfPoints(); ++node) {
    EXPECT_FLOAT_EQ(velocitySi->GetComponent(node, 0), static_cast<float>(3.0 * velocity->GetComponent(node, 0)));
    EXPECT_NEAR(pressureSi->GetComponent(node, 0), (density->GetComponent(node, 0) - 1.0) / 3.0 * 998.0 * 9.0, 1e-3);
  }
  auto* dt = image->GetFieldData()->GetArray("dt_s");
  ASSERT_NE(dt, nullptr);
  EXPECT_DOUBLE_EQ(dt->GetComponent(0, 0), 0.002 / 3.0);
  EXPECT_DOUBLE_EQ(image->GetFieldData()->GetArray("time_s")->GetComponent(0, 0), 50 * 0.002 / 3.0);
  fs::remove_all(directory);
}
