// The tracer and surface series of `octoflow run`, read back with ParaView (pvpython,
// tests/adaptors/run_extracts.py): tracers where the analytic flow puts them, pathlines from
// the series, and the surface equal to ParaView's own contour of the written field.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "TestSupport.hpp"

namespace fs = std::filesystem;

namespace {

using octoflow::testing::CommandResult;
using RunExtracts = octoflow::testing::ScratchFolderTest;

CommandResult runCli(const std::string& arguments, const fs::path& folder) {
  return octoflow::testing::runCommand("'" + std::string(OCTOFLOW_CLI_PATH) + "' " + arguments, folder);
}

CommandResult runChecks(const std::string& arguments, const fs::path& folder) {
  return octoflow::testing::runCommand(std::string("'") + OCTOFLOW_PVPYTHON + "' '" + OCTOFLOW_SOURCE_DIR +
                                           "/tests/adaptors/run_extracts.py' " + arguments,
                                       folder);
}

}  // namespace

// A fully periodic box pushed along x by a body force g from rest moves as one: u = g t at every
// node (the velocity the solver reports includes half a step's force, so a tracer moving in the
// flow of each step ends exactly where x0 + g (t^2 - t0^2) / 2 says).
TEST_F(RunExtracts, TracersReleasedOnALineFollowTheAcceleratingFlow) {
  std::ofstream(directory_ / "accelerating.toml") << R"([case]
name = "accelerating"
steps = 400
[lbm]
lattice = "D2Q9"
tau = 0.8
body_force = [1e-4, 0.0]
[domain]
size = [32, 8]
periodic = [true, true]
[output]
every = 40
fields = []
[tracers]
[[tracers.source]]
type = "line"
from = [2.0, 1.0]
to = [2.0, 6.0]
count = 6
release_every = 20
)";
  const CommandResult run = runCli("run accelerating.toml --backend cpu --output out", directory_);
  ASSERT_EQ(run.exitCode, 0) << run.output;
  EXPECT_NE(run.output.find("tracers: 126 released, 0 not released"), std::string::npos) << run.output;
  EXPECT_TRUE(fs::exists(directory_ / "out" / "tracers_00000040.vtp"));
  EXPECT_FALSE(fs::exists(directory_ / "out" / "accelerating.pvd")) << "fields = [] writes no grid files";
  const CommandResult checks = runChecks("tracers out 1e-4 2.0", directory_);
  EXPECT_EQ(checks.exitCode, 0) << checks.output;
  EXPECT_NE(checks.output.find("126 tracers"), std::string::npos) << checks.output;
}

// The speed surface around a sphere in a channel, at every output step, against ParaView's
// Contour of |velocity| on the .vti written at the same step.
TEST_F(RunExtracts, SpeedSurfaceEqualsParaViewsContourOfTheWrittenField) {
  std::ofstream(directory_ / "sphere.toml") << octoflow::testing::sphereChannelCase("sphere", 80, 32)
                                            << "[output]\nevery = 40\nfields = [\"velocity\"]\n"
                                            << "[surface]\nfield = \"speed\"\nlevel = 0.04\n";
  const CommandResult run = runCli("run sphere.toml --backend cpu --output out", directory_);
  ASSERT_EQ(run.exitCode, 0) << run.output;
  EXPECT_NE(run.output.find("wrote out/surface.pvd"), std::string::npos) << run.output;
  const CommandResult checks = runChecks("surface out sphere 0.04", directory_);
  EXPECT_EQ(checks.exitCode, 0) << checks.output;
  EXPECT_NE(checks.output.find("surface step 80"), std::string::npos) << checks.output;
}
