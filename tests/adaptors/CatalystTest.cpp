// Catalyst end to end: the CLI runs a case with a v2 script under a virtual X server, and the
// PNGs it writes show a flow (not a blank frame). Broken scripts stop the run cleanly.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <vtkDataArray.h>
#include <vtkImageData.h>
#include <vtkNew.h>
#include <vtkPNGReader.h>
#include <vtkPointData.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

namespace fs = std::filesystem;

namespace {

struct Result {
  int exitCode = -1;
  std::string output;
};

Result run(const std::string& command) {
  Result result;
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  char buffer[4096];
  while (pipe && std::fgets(buffer, sizeof buffer, pipe)) result.output += buffer;
  const int status = pipe ? pclose(pipe) : -1;
  result.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

std::string cli() { return std::string(OCTOFLOW_XVFB_RUN) + " -a '" + OCTOFLOW_CLI_PATH + "'"; }

// Fraction of pixels whose colour differs from the most common one, and the number of distinct
// colours: a blank or single-colour frame has neither.
void pixelStatistics(const fs::path& png, double& nonBackgroundFraction, std::size_t& colours) {
  vtkNew<vtkPNGReader> reader;
  reader->SetFileName(png.c_str());
  reader->Update();
  vtkDataArray* pixels = reader->GetOutput()->GetPointData()->GetScalars();
  const vtkIdType count = pixels->GetNumberOfTuples();
  const int components = pixels->GetNumberOfComponents();
  std::map<long, long> histogram;
  for (vtkIdType p = 0; p < count; ++p) {
    long key = 0;
    for (int c = 0; c < std::min(components, 3); ++c) key = key * 256 + static_cast<long>(pixels->GetComponent(p, c));
    ++histogram[key];
  }
  long mostCommon = 0;
  for (const auto& [key, n] : histogram) mostCommon = std::max(mostCommon, n);
  nonBackgroundFraction = 1.0 - static_cast<double>(mostCommon) / count;
  colours = histogram.size();
}

class Catalyst : public ::testing::Test {
protected:
  void SetUp() override {
    directory_ = fs::temp_directory_path() /
                 ("octoflow_catalyst_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(directory_);
    fs::create_directories(directory_);
  }
  void TearDown() override { fs::remove_all(directory_); }
  fs::path directory_;
};

const char* kCavity = R"([case]
name = "lid"
steps = 400
[lbm]
lattice = "%s"
tau = 0.6
[domain]
size = %s
[[boundary]]
faces = ["y+"]
type = "moving_wall"
velocity = %s
[output]
directory = "out"
every = 200
[insitu]
scripts = ["%s"]
every = 200
)";

std::string cavityCase(bool is3d, const std::string& script) {
  char text[1024];
  std::snprintf(text, sizeof text, kCavity, is3d ? "D3Q19" : "D2Q9", is3d ? "[24, 24, 16]" : "[48, 48]",
                is3d ? "[0.1, 0.0, 0.0]" : "[0.1, 0.0]", script.c_str());
  return text;
}

}  // namespace

TEST_F(Catalyst, VelocitySliceWritesNonBlankPngsIn2DAnd3D) {
  const std::string script = std::string(OCTOFLOW_SOURCE_DIR) + "/catalyst_scripts/velocity_slice.py";
  for (bool is3d : {false, true}) {
    const fs::path caseDirectory = directory_ / (is3d ? "3d" : "2d");
    fs::create_directories(caseDirectory);
    std::ofstream(caseDirectory / "case.toml") << cavityCase(is3d, script);
    const Result result = run("cd '" + caseDirectory.string() + "' && " + cli() + " run case.toml --backend cpu");
    ASSERT_EQ(result.exitCode, 0) << result.output;
    // Steps 0, 200 and 400 ran the pipeline; each left one PNG in <output>/catalyst/.
    for (const char* name : {"velocity_00000000.png", "velocity_00000200.png", "velocity_00000400.png"})
      ASSERT_TRUE(fs::exists(caseDirectory / "out" / "catalyst" / name)) << name << "\n" << result.output;
    double nonBackground = 0.0;
    std::size_t colours = 0;
    pixelStatistics(caseDirectory / "out" / "catalyst" / "velocity_00000400.png", nonBackground, colours);
    // The domain fills a good part of the frame and the colour map shows a range of speeds.
    EXPECT_GT(nonBackground, 0.2) << (is3d ? "3D" : "2D");
    EXPECT_GT(colours, 50u) << (is3d ? "3D" : "2D");
    EXPECT_TRUE(fs::exists(caseDirectory / "out" / "lid_00000400.vti"));
  }
}

TEST_F(Catalyst, ABrokenScriptStopsTheRunWithExitTwoAndNoOutput) {
  const fs::path broken = directory_ / "broken_script.py";
  std::ofstream(broken) << "# script-version: 2\nfrom paraview.simple import *\nthis_name_is_not_defined()\n";
  std::ofstream(directory_ / "case.toml") << cavityCase(false, broken.string());
  const Result result = run("cd '" + directory_.string() + "' && " + cli() + " run case.toml --backend cpu");
  EXPECT_EQ(result.exitCode, 2) << result.output;
  EXPECT_NE(result.output.find("broken_script.py"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("line 3"), std::string::npos) << "the traceback gives the line\n" << result.output;
  EXPECT_FALSE(fs::exists(directory_ / "out")) << result.output;
}

TEST_F(Catalyst, AScriptWithoutTheVersionHeaderIsRejected) {
  const fs::path legacy = directory_ / "legacy_script.py";
  std::ofstream(legacy) << "from paraview.simple import *\n";
  std::ofstream(directory_ / "case.toml") << cavityCase(false, legacy.string());
  const Result result = run("cd '" + directory_.string() + "' && " + cli() + " run case.toml --backend cpu");
  EXPECT_EQ(result.exitCode, 2) << result.output;
  EXPECT_NE(result.output.find("script-version: 2"), std::string::npos) << result.output;
  EXPECT_FALSE(fs::exists(directory_ / "out"));
}
