// Catalyst end to end: the CLI runs a case with a v2 script under a virtual X server, and the
// PNGs it writes show a flow (not a blank frame). Broken scripts stop the run cleanly.
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
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
#include <memory>
#include <vector>
#include <string>

#include "TestSupport.hpp"

namespace fs = std::filesystem;

namespace {

using octoflow::testing::CommandResult;

// One virtual X server for this test process (ParaView renders through X). Xvfb picks a free
// display itself and writes its number to a pipe once it accepts connections (-displayfd), so
// parallel test processes never race for a display or connect too early, as `xvfb-run -a` can.
class VirtualDisplay {
public:
  VirtualDisplay() {
    int ready[2];
    if (pipe(ready) != 0) return;
    server_ = fork();
    if (server_ == 0) {
      close(ready[0]);
      const std::string fd = std::to_string(ready[1]);
      execl(OCTOFLOW_XVFB, "Xvfb", "-displayfd", fd.c_str(), "-screen", "0", "1280x1024x24", "-nolisten", "tcp",
            static_cast<char*>(nullptr));
      _exit(127);
    }
    close(ready[1]);
    std::string number;
    pollfd wait{ready[0], POLLIN, 0};
    char c;
    while (poll(&wait, 1, 30000) > 0 && read(ready[0], &c, 1) == 1 && c != '\n') number += c;
    close(ready[0]);
    if (!number.empty()) display_ = ":" + number;
  }
  ~VirtualDisplay() {
    if (server_ > 0) {
      kill(server_, SIGTERM);
      waitpid(server_, nullptr, 0);
    }
  }
  const std::string& display() const { return display_; }

private:
  pid_t server_ = -1;
  std::string display_;
};

// The program under this process's virtual X server. A server that refuses the connection
// (seen under heavy load on a 2-core machine) is test equipment failing, not octoflow: the run
// is repeated on a fresh server, at most twice, and the refusal is reported.
CommandResult runCli(const std::string& arguments, const fs::path& workingDirectory) {
  static std::vector<std::unique_ptr<VirtualDisplay>> displays;  // refused ones stay up: new numbers
  if (displays.empty()) displays.push_back(std::make_unique<VirtualDisplay>());
  CommandResult result;
  for (int attempt = 0; attempt < 3; ++attempt) {
    const std::string& display = displays.back()->display();
    EXPECT_FALSE(display.empty()) << "no virtual X server could be started";
    result = octoflow::testing::runCommand("DISPLAY=" + display + " '" + OCTOFLOW_CLI_PATH + "' " + arguments,
                                           workingDirectory);
    if (result.output.find("bad X server connection") == std::string::npos) break;
    std::printf("virtual X server %s refused the connection; starting another\n", display.c_str());
    displays.push_back(std::make_unique<VirtualDisplay>());
  }
  return result;
}

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

using Catalyst = octoflow::testing::ScratchFolderTest;

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
    const CommandResult result = runCli("run case.toml --backend cpu", caseDirectory);
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
  const CommandResult result = runCli("run case.toml --backend cpu", directory_);
  EXPECT_EQ(result.exitCode, 2) << result.output;
  EXPECT_NE(result.output.find("broken_script.py"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("line 3"), std::string::npos) << "the traceback gives the line\n" << result.output;
  EXPECT_FALSE(fs::exists(directory_ / "out")) << result.output;
}

TEST_F(Catalyst, AScriptWithoutTheVersionHeaderIsRejected) {
  const fs::path legacy = directory_ / "legacy_script.py";
  std::ofstream(legacy) << "from paraview.simple import *\n";
  std::ofstream(directory_ / "case.toml") << cavityCase(false, legacy.string());
  const CommandResult result = runCli("run case.toml --backend cpu", directory_);
  EXPECT_EQ(result.exitCode, 2) << result.output;
  EXPECT_NE(result.output.find("script-version: 2"), std::string::npos) << result.output;
  EXPECT_FALSE(fs::exists(directory_ / "out"));
}
