// The phase-field solver as a user runs it: files and columns, the stability check, and MPI ranks
// giving byte-identical results to one rank (noise included).
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "TestSupport.hpp"

namespace fs = std::filesystem;

namespace {

using octoflow::testing::CommandResult;
using octoflow::testing::fileContents;
using octoflow::testing::runOctoflow;

// A 3D crystal whose nucleus crosses the periodic y faces, with noise, the phi = 0.5 surface and
// field files: every kind of ghost layer (cut no-flux axes, a cut periodic axis) is crossed.
const char* kCase = R"([case]
name = "crystal"
solver = "phasefield"
steps = 300
[domain]
size = [40, 36, 30]
periodic = [false, true, false]
[phasefield]
noise = 0.025
nucleus_radius = 5.0
nucleus_centre = [12.0, 2.0, 14.0]
[diagnostics]
every = 100
[surface]
field = "phi"
level = 0.5
[output]
every = 150
)";

class PhaseFieldCli : public octoflow::testing::ScratchFolderTest {
protected:
  void writeCase(const std::string& name, const std::string& text) { std::ofstream(directory_ / name) << text; }
};

}  // namespace

TEST_F(PhaseFieldCli, RunWritesDendriteCsvAndFields) {
  writeCase("crystal.toml", kCase);
  const CommandResult run = runOctoflow("run crystal.toml --backend cpu --output one", directory_);
  ASSERT_EQ(run.exitCode, 0) << run.output;
  EXPECT_NE(run.output.find("solver phasefield"), std::string::npos) << run.output;
  std::istringstream csv(fileContents(directory_ / "one" / "dendrite.csv"));
  std::string line;
  std::getline(csv, line);
  EXPECT_EQ(line, "step,time,solid_fraction,interface_area,tip_x,tip_y,tip_z,tip_velocity_x");
  int rows = 0;
  double previousFraction = 0.0;
  while (std::getline(csv, line)) {
    ++rows;
    double step, time, fraction, area, tipX, tipY, tipZ;
    ASSERT_EQ(std::sscanf(line.c_str(), "%lf,%lf,%lf,%lf,%lf,%lf,%lf", &step, &time, &fraction, &area, &tipX, &tipY,
                          &tipZ),
              7)
        << line;
    EXPECT_EQ(step, 100.0 * rows);
    EXPECT_NEAR(time, step * 2e-8 * 2e-8 / (7.5 * 1.55e-5), 1e-15);  // the default dt
    EXPECT_GT(fraction, previousFraction) << "the crystal grows";
    EXPECT_GT(tipX, 5.0 * 2e-8) << "past the nucleus radius";
    previousFraction = fraction;
  }
  EXPECT_EQ(rows, 3);
  if (!OCTOFLOW_CLI_WRITES_VTK) return;  // no VTK in this build: no field or surface files
  const std::string field = fileContents(directory_ / "one" / "crystal_00000300.vti");
  EXPECT_NE(field.find("Name=\"phi\""), std::string::npos);
  EXPECT_NE(field.find("Name=\"temperature\""), std::string::npos);
  EXPECT_NE(field.find("Name=\"dx_m\""), std::string::npos);
  EXPECT_TRUE(fs::exists(directory_ / "one" / "surface_00000300.vtp"));
}

TEST_F(PhaseFieldCli, TooLargeATimeStepIsAnInputError) {
  std::string text = kCase;
  text.replace(text.find("noise = 0.025"), 13, "dt = 1e-11");
  writeCase("fast.toml", text);
  const CommandResult run = runOctoflow("run fast.toml --backend cpu --output fast", directory_);
  EXPECT_EQ(run.exitCode, 2) << run.output;
  EXPECT_NE(run.output.find("fast.toml: phasefield.dt"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("stability limit 4.301e-12 s"), std::string::npos) << run.output;
  EXPECT_FALSE(fs::exists(directory_ / "fast"));
}

TEST_F(PhaseFieldCli, KarmaRappelRunExportsThePfhubBenchmarkFiles) {
  // A small quarter crystal of the benchmark's model, then scripts/pfhub_bm3_export.py: one CSV a
  // quantity, time first, the values of dendrite.csv unchanged.
  writeCase("bm3.toml", R"([case]
name = "bm3"
solver = "phasefield"
steps = 400
[domain]
size = [48, 48]
[phasefield]
model = "karma-rappel"
dx = 0.8
nucleus_radius = 10.0
nucleus_centre = [-0.5, -0.5]
[diagnostics]
every = 100
[output]
fields = []
)");
  const CommandResult run = runOctoflow("run bm3.toml --backend cpu --output bm3", directory_);
  ASSERT_EQ(run.exitCode, 0) << run.output;
  std::istringstream csv(fileContents(directory_ / "bm3" / "dendrite.csv"));
  std::string line;
  std::getline(csv, line);
  ASSERT_EQ(line, "step,time,solid_fraction,interface_area,tip_x,tip_y,tip_velocity_x,free_energy");
  std::vector<std::vector<std::string>> rows;
  while (std::getline(csv, line)) {
    std::vector<std::string> values;
    std::istringstream fields(line);
    for (std::string value; std::getline(fields, value, ',');) values.push_back(value);
    rows.push_back(values);
  }
  ASSERT_EQ(rows.size(), 4u);
  // The crystal grows along x and stays symmetric about the diagonal; the free energy falls.
  EXPECT_GT(std::stod(rows[3][4]), std::stod(rows[0][4]));
  EXPECT_NEAR(std::stod(rows[3][4]), std::stod(rows[3][5]), 1e-4);
  EXPECT_LT(std::stod(rows[3][7]), std::stod(rows[0][7]));
  const CommandResult exported = octoflow::testing::runCommand(
      "python3 '" + std::string(OCTOFLOW_SOURCE_DIR) + "/scripts/pfhub_bm3_export.py' bm3 --output pfhub", directory_);
  ASSERT_EQ(exported.exitCode, 0) << exported.output;
  const std::pair<const char*, int> files[] = {{"tip_position", 4}, {"solid_fraction", 2}, {"free_energy", 7}};
  for (const auto& [name, column] : files) {
    std::string expected = std::string("time,") + name + "\n";
    for (const auto& row : rows) expected += row[1] + "," + row[static_cast<std::size_t>(column)] + "\n";
    EXPECT_EQ(fileContents(directory_ / "pfhub" / (std::string(name) + ".csv")), expected) << name;
  }
  // A folder without dendrite.csv: one message, exit 2.
  const CommandResult wrong = octoflow::testing::runCommand(
      "python3 '" + std::string(OCTOFLOW_SOURCE_DIR) + "/scripts/pfhub_bm3_export.py' nowhere", directory_);
  EXPECT_EQ(wrong.exitCode, 2);
  EXPECT_NE(wrong.output.find("nowhere/dendrite.csv: no such file"), std::string::npos) << wrong.output;
}

#ifdef OCTOFLOW_MPIEXEC
TEST_F(PhaseFieldCli, MpiRanksGiveByteIdenticalResults) {
  writeCase("crystal.toml", kCase);
  ASSERT_EQ(runOctoflow("run crystal.toml --backend cpu --output one", directory_).exitCode, 0);
  for (int ranks : {2, 4}) {
    SCOPED_TRACE(std::to_string(ranks) + " ranks");
    const std::string folder = "ranks" + std::to_string(ranks);
    const CommandResult run = runOctoflow("run crystal.toml --backend cpu --output " + folder, directory_, ranks);
    ASSERT_EQ(run.exitCode, 0) << run.output;
    EXPECT_NE(run.output.find(std::to_string(ranks) + " MPI ranks"), std::string::npos) << run.output;
    // Diagnostics and the surface are made on rank 0 from the gathered phi: byte for byte.
    EXPECT_EQ(fileContents(directory_ / "one" / "dendrite.csv"), fileContents(directory_ / folder / "dendrite.csv"));
    if (!OCTOFLOW_CLI_WRITES_VTK) continue;  // no VTK in this build: no field or surface files
    for (const char* surface : {"surface_00000150.vtp", "surface_00000300.vtp"})
      EXPECT_EQ(fileContents(directory_ / "one" / surface), fileContents(directory_ / folder / surface)) << surface;
    // The fields as pieces, one a rank.
    EXPECT_TRUE(fs::exists(directory_ / folder / "crystal_00000300.pvti"));
    EXPECT_TRUE(fs::exists(directory_ / folder / "crystal_00000300" /
                           ("crystal_00000300_" + std::to_string(ranks - 1) + ".vti")));
  }
}

TEST_F(PhaseFieldCli, MpiRanksOnTheGpuGiveByteIdenticalResults) {
  OCTO_SKIP_WITHOUT_GPU();
  // Pieces on CUDA (ranks share the host's GPUs round-robin): each step sweeps the boundary layers
  // on the halo stream, the interior on the default stream while the halos move. Every node sees
  // the same operations as in one piece, so dendrite.csv is byte for byte the one-rank file.
  writeCase("crystal.toml", kCase);
  ASSERT_EQ(runOctoflow("run crystal.toml --backend cuda --output gpu1", directory_).exitCode, 0);
  for (int ranks : {2, 4}) {
    SCOPED_TRACE(std::to_string(ranks) + " ranks");
    const std::string folder = "gpu" + std::to_string(ranks);
    const CommandResult run = runOctoflow("run crystal.toml --backend cuda --output " + folder, directory_, ranks);
    ASSERT_EQ(run.exitCode, 0) << run.output;
    EXPECT_EQ(fileContents(directory_ / "gpu1" / "dendrite.csv"), fileContents(directory_ / folder / "dendrite.csv"));
  }
}
#endif
