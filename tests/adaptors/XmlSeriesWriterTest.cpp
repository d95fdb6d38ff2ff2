// Offline VTK output: what ParaView's readers get back from the files we write.
#include <gtest/gtest.h>
#include <vtkFloatArray.h>
#include <vtkImageData.h>
#include <vtkNew.h>
#include <vtkFieldData.h>
#include <vtkPointData.h>
#include <vtkIdList.h>
#include <vtkPolyData.h>
#include <vtkXMLImageDataReader.h>
#include <vtkXMLPolyDataReader.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "ImageDataBuilder.hpp"
#include "SurfaceBuilder.hpp"
#include "TestSupport.hpp"
#include "TracerBuilder.hpp"
#include "XmlSeriesWriter.hpp"
#include "lbm/UniformSolver.hpp"
#include "particles/TracerSet.hpp"

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

TEST(XmlSeriesWriter, WritesReadableCompressedFilesAndASeries) {
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
  adaptors::XmlSeriesWriter writer(directory, "flow");
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

TEST(XmlSeriesWriter, CliWritesSiArraysBesideLatticeOnesWithUnits) {
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

// A surface series: .vtp files ParaView reads back with the same points, normals and triangles,
// listed in the .pvd with their times.
TEST(XmlSeriesWriter, WritesSurfacesAsPolyDataFiles) {
  const fs::path directory = fs::temp_directory_path() / "octoflow_XmlSeriesWriter_surfaces";
  fs::remove_all(directory);
  fs::create_directories(directory);
  const float points[] = {0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1};
  const float normals[] = {-0.577f, -0.577f, -0.577f, 1, 0, 0, 0, 1, 0, 0, 0, 1};
  const std::int32_t triangles[] = {0, 2, 1, 0, 1, 3, 0, 3, 2, 1, 2, 3};  // a tetrahedron, facing out
  const insitu::Surface surface{points, normals, triangles, 4, 4};
  adaptors::XmlSeriesWriter writer(directory, "surface");
  for (Index step : {0, 50}) writer.write(step, 0.5 * static_cast<double>(step), adaptors::makeSurfacePolyData(surface));
  vtkNew<vtkXMLPolyDataReader> reader;
  reader->SetFileName((directory / "surface_00000050.vtp").c_str());
  reader->Update();
  vtkPolyData* back = reader->GetOutput();
  ASSERT_EQ(back->GetNumberOfPoints(), 4);
  ASSERT_EQ(back->GetNumberOfPolys(), 4);
  for (vtkIdType p = 0; p < 4; ++p)
    for (int a = 0; a < 3; ++a) EXPECT_EQ(back->GetPoint(p)[a], points[3 * p + a]);
  vtkDataArray* backNormals = back->GetPointData()->GetNormals();
  ASSERT_NE(backNormals, nullptr);
  EXPECT_STREQ(backNormals->GetName(), "Normals");
  EXPECT_FLOAT_EQ(static_cast<float>(backNormals->GetComponent(0, 1)), -0.577f);
  vtkNew<vtkIdList> cell;
  for (vtkIdType t = 0; t < 4; ++t) {
    back->GetCellPoints(t, cell);
    ASSERT_EQ(cell->GetNumberOfIds(), 3);
    for (int v = 0; v < 3; ++v) EXPECT_EQ(cell->GetId(v), triangles[3 * t + v]);
  }
  const std::string series = readText(directory / "surface.pvd");
  EXPECT_NE(series.find("timestep=\"25\" group=\"\" part=\"0\" file=\"surface_00000050.vtp\""), std::string::npos)
      << series;
  int files = 0;  // the two steps and the series, no temporary left behind
  for (const auto& entry : fs::directory_iterator(directory)) ++files;
  EXPECT_EQ(files, 3);
  fs::remove_all(directory);
}

// A tracer series: .vtp files of vertex cells with "id" (Int64), "velocity" and "age", which
// ParaView's TemporalParticlesToPathlines joins into one pathline per tracer (pvpython).
TEST(XmlSeriesWriter, TracerSeriesBecomesPathlinesInParaView) {
  const fs::path directory = fs::temp_directory_path() / "octoflow_XmlSeriesWriter_tracers";
  fs::remove_all(directory);
  fs::create_directories(directory);
  const Extent e{64, 8, 8};
  std::vector<float> velocity(static_cast<std::size_t>(3 * e.cellCount()), 0.0f);
  for (Index n = 0; n < e.cellCount(); ++n) velocity[static_cast<std::size_t>(3 * n)] = 0.5f;
  particles::TracerSource line = particles::TracerSource::line({1.0f, 1.0f, 4.0f}, {1.0f, 6.0f, 4.0f}, 3);
  line.releaseEvery = 20;
  particles::TracerSettings settings;
  settings.sources = {line};
  particles::TracerSet tracers(exec::Backend::Cpu, settings);
  adaptors::XmlSeriesWriter writer(directory, "tracers");
  for (Index step = 0; step <= 100; ++step) {
    tracers.release(step);
    if (step % 10 == 0) writer.write(step, static_cast<double>(step), adaptors::makeTracerPolyData(tracers.view()));
    tracers.advect(particles::VelocityFieldView{velocity.data(), nullptr, e});
  }
  // Releases at 0, 20, ..., 100, 3 tracers each, all still in the grid at the end (x <= 51).
  vtkNew<vtkXMLPolyDataReader> reader;
  reader->SetFileName((directory / "tracers_00000050.vtp").c_str());
  reader->Update();
  vtkPolyData* back = reader->GetOutput();
  ASSERT_EQ(back->GetNumberOfVerts(), 9);  // released at 0, 20, 40: x = 26, 16, 6
  vtkDataArray* ids = back->GetPointData()->GetArray("id");
  ASSERT_NE(ids, nullptr);
  EXPECT_EQ(ids->GetDataType(), VTK_TYPE_INT64);
  EXPECT_EQ(ids->GetComponent(0, 0), 0.0);
  ASSERT_NE(back->GetPointData()->GetArray("age"), nullptr);
  EXPECT_FLOAT_EQ(static_cast<float>(back->GetPointData()->GetArray("age")->GetComponent(0, 0)), 50.0f);
  ASSERT_NE(back->GetPointData()->GetArray("velocity"), nullptr);
  EXPECT_FLOAT_EQ(static_cast<float>(back->GetPoint(0)[0]), 26.0f);

  // Every tracer seen in two snapshots or more becomes a pathline: 15 (those released at step 100
  // appear once).
  const octoflow::testing::CommandResult paths = octoflow::testing::runCommand(
      std::string("'") + OCTOFLOW_PVPYTHON + "' '" + OCTOFLOW_SOURCE_DIR + "/tests/adaptors/tracer_pathlines.py' '" +
          (directory / "tracers.pvd").string() + "' 15",
      directory);
  EXPECT_EQ(paths.exitCode, 0) << paths.output;
  EXPECT_NE(paths.output.find("pathlines: 15"), std::string::npos) << paths.output;
  fs::remove_all(directory);
}
