// The command line program as a user meets it: exit codes, messages, nothing half-written.
#include <gtest/gtest.h>
#include <sched.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <map>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "TestSupport.hpp"

namespace fs = std::filesystem;

namespace {

using octoflow::testing::CommandResult;
using octoflow::testing::replaced;

CommandResult runCli(const std::string& arguments, const fs::path& workingDirectory) {
  return octoflow::testing::runOctoflow(arguments, workingDirectory);
}

// An octree case of two levels (the sphere's leaves refined) with the blocks among blocks of their
// level stepped whole.
std::string wholeKernelCase() {
  return replaced(octoflow::testing::octreeSphereCase("octree", 2), "max_level = 1\n",
                  "max_level = 1\nkernel = \"whole\"\n");
}

const std::string kGoodCase = octoflow::testing::tinyChannelCase() + "[output]\ndirectory = \"out/tiny\"\nevery = 10\n";

class Cli : public octoflow::testing::ScratchFolderTest {
protected:
  void writeCase(const std::string& name, const std::string& text) { std::ofstream(directory_ / name) << text; }
  // A bad input: exit code 2, one line naming the file and key, no output folder.
  void expectInputError(const std::string& arguments, const std::string& mustMention) {
    const CommandResult result = runCli(arguments, directory_);
    EXPECT_EQ(result.exitCode, 2) << arguments << "\n" << result.output;
    EXPECT_NE(result.output.find(mustMention), std::string::npos) << arguments << "\n" << result.output;
    EXPECT_FALSE(fs::exists(directory_ / "out")) << arguments << " created an output folder";
  }
};

}  // namespace

TEST_F(Cli, VersionAndHelp) {
  CommandResult version = runCli("--version", directory_);
  EXPECT_EQ(version.exitCode, 0);
  EXPECT_NE(version.output.find("octoflow " OCTOFLOW_VERSION), std::string::npos) << version.output;
  CommandResult help = runCli("--help", directory_);
  EXPECT_EQ(help.exitCode, 0);
  for (const char* command : {"run", "validate", "info", "bench"})
    EXPECT_NE(help.output.find(command), std::string::npos) << command;
}

TEST_F(Cli, InfoReportsBuildAndDevices) {
  CommandResult info = runCli("info", directory_);
  EXPECT_EQ(info.exitCode, 0) << info.output;
  EXPECT_NE(info.output.find("build: CUDA"), std::string::npos) << info.output;
  EXPECT_NE(info.output.find("CUDA device"), std::string::npos) << info.output;
  EXPECT_NE(info.output.find("default backend:"), std::string::npos) << info.output;
}

TEST_F(Cli, ARunHeldToOneCoreSaysSo) {
  // mpirun binds each of one or two ranks to a core by default, and a run's OpenMP threads then
  // share that core: the summary says so, and how to give the ranks the host's other cores.
  // taskset holds the program to one core alike.
  if (sysconf(_SC_NPROCESSORS_ONLN) < 2) GTEST_SKIP() << "a host of one core: no other core to use";
  cpu_set_t mask;
  CPU_ZERO(&mask);
  ASSERT_EQ(sched_getaffinity(0, sizeof(mask), &mask), 0);
  int first = 0;
  while (!CPU_ISSET(first, &mask)) ++first;
  writeCase("good.toml", kGoodCase);
  const std::string note = "may run on 1 of the host's";
  const CommandResult held = octoflow::testing::runCommand(
      "taskset -c " + std::to_string(first) + " '" + std::string(OCTOFLOW_CLI_PATH) + "' run good.toml", directory_);
  EXPECT_EQ(held.exitCode, 0) << held.output;
  EXPECT_NE(held.output.find(note), std::string::npos) << held.output;
  EXPECT_NE(held.output.find("mpirun --bind-to none"), std::string::npos) << held.output;
  if (CPU_COUNT(&mask) > 1) {  // this test itself on several cores: the program too, and no note
    const CommandResult free = runCli("run good.toml", directory_);
    EXPECT_EQ(free.exitCode, 0) << free.output;
    EXPECT_EQ(free.output.find(note), std::string::npos) << free.output;
  }
}

TEST_F(Cli, ValidateAcceptsAGoodCaseAndWritesNothing) {
  writeCase("good.toml", kGoodCase);
  CommandResult result = runCli("validate good.toml", directory_);
  EXPECT_EQ(result.exitCode, 0) << result.output;
  EXPECT_NE(result.output.find("valid"), std::string::npos);
  EXPECT_FALSE(fs::exists(directory_ / "out"));
}

TEST_F(Cli, EveryBadCaseClassExitsWithTwoAndNamesTheKey) {
  const struct {
    const char* from;
    const char* to;
    const char* key;
  } classes[] = {
      {"tau = 0.8", "tauu = 0.8", "lbm.tauu"},                            // unknown key (typo)
      {"steps = 20", "steps = 2.5", "case.steps"},                        // wrong type
      {"tau = 0.8", "tau = 0.45", "lbm.tau"},                             // tau <= 0.5
      {"size = [8, 6]", "size = [8, -6]", "domain.size"},                 // non-positive size
      {"faces = [\"y-\", \"y+\"]", "faces = [\"y+\", \"y+\"]", "boundary[0].faces"},  // face twice
  };
  for (const auto& bad : classes) {
    writeCase("bad.toml", replaced(kGoodCase, bad.from, bad.to));
    expectInputError("run bad.toml --backend cpu", bad.key);
    expectInputError("validate bad.toml", bad.key);
  }
}

TEST_F(Cli, MissingFilesAndBadFlagsExitWithTwo) {
  expectInputError("run nowhere.toml", "nowhere.toml");
  writeCase("good.toml", kGoodCase);
  expectInputError("run good.toml --backend gpu", "--backend");
  expectInputError("run good.toml --steps -3", "--steps");
  expectInputError("run good.toml --catalyst missing_script.py", "missing_script.py");
  expectInputError("run good.toml --no-such-flag", "--no-such-flag");
  expectInputError("bench lbm --lattice D3Q15", "--lattice");
}

TEST_F(Cli, RunsACaseOnTheCpu) {
  writeCase("good.toml", kGoodCase);
  CommandResult result = runCli("run good.toml --backend cpu --steps 30", directory_);
  EXPECT_EQ(result.exitCode, 0) << result.output;
  EXPECT_NE(result.output.find("done: 30 steps"), std::string::npos) << result.output;
  CommandResult quiet = runCli("run good.toml --backend cpu --quiet", directory_);
  EXPECT_EQ(quiet.exitCode, 0) << quiet.output;
  EXPECT_EQ(quiet.output.find("done:"), std::string::npos) << quiet.output;
}

TEST_F(Cli, ADivergingRunStopsWithAClearMessage) {
  // tau just above 1/2 under a fast lid: BGK goes unstable within a few hundred steps; the
  // watchdog stops it with exit code 3 (tests/cli/ReliabilityTest.cpp checks the rest).
  writeCase("unstable.toml", octoflow::testing::unstableLidCase() + "[output]\nevery = 500\n");
  const CommandResult result = runCli("run unstable.toml --backend cpu", directory_);
  EXPECT_EQ(result.exitCode, 3) << result.output;
  EXPECT_NE(result.output.find("octoflow: stopped: the simulation diverged: at step "), std::string::npos)
      << result.output;
}

TEST_F(Cli, ObstacleForcesAreWrittenToForcesCsv) {
  writeCase("cylinder.toml", R"([case]
name = "cylinder"
steps = 300
[lbm]
lattice = "D2Q9"
collision = "trt"
tau = 0.8
[domain]
size = [60, 30]
[[boundary]]
faces = ["x-"]
type = "velocity"
velocity = [0.05, 0.0]
[[boundary]]
faces = ["x+"]
type = "outflow"
[[obstacle]]
shape = "cylinder"
center = [15.0, 14.5]
radius = 4.0
[forces]
every = 100
reference_velocity = 0.05
reference_length = 8.0
[output]
fields = []
)");
  const CommandResult result = runCli("run cylinder.toml --backend cpu", directory_);
  ASSERT_EQ(result.exitCode, 0) << result.output;
  std::ifstream file(directory_ / "out" / "cylinder" / "forces.csv");
  std::string header, line;
  std::getline(file, header);
  EXPECT_EQ(header, "step,fx,fy,fz,cd,cl");
  int rows = 0;
  while (std::getline(file, line)) {
    ++rows;
    double step, fx, fy, fz, cd, cl;
    ASSERT_EQ(std::sscanf(line.c_str(), "%lf,%lf,%lf,%lf,%lf,%lf", &step, &fx, &fy, &fz, &cd, &cl), 6) << line;
    EXPECT_EQ(step, 100.0 * rows);
    EXPECT_GT(fx, 0.0) << "the flow drags the cylinder downstream";
    EXPECT_EQ(fz, 0.0) << "a 2D flow has no z force";
    EXPECT_NEAR(cd, 2.0 * fx / (0.05 * 0.05 * 8.0), 1e-6 * std::abs(cd)) << "cd = 2 fx / (rho0 U^2 D)";
  }
  EXPECT_EQ(rows, 3);
}

#ifdef OCTOFLOW_MPIEXEC
namespace {
// The program under `mpirun -np 2` (one OpenMP thread a rank).
CommandResult runCliOnTwoRanks(const std::string& arguments, const fs::path& workingDirectory) {
  return octoflow::testing::runOctoflow(arguments, workingDirectory, 2);
}

// A run refused as bad input: exit code 2, `message` in its output, no `output` folder made.
void expectRefused(const CommandResult& result, const std::string& message, const fs::path& output) {
  EXPECT_EQ(result.exitCode, 2) << result.output;
  EXPECT_NE(result.output.find(message), std::string::npos) << result.output;
  EXPECT_FALSE(fs::exists(output)) << "a refused run created its output folder";
}
}  // namespace

TEST_F(Cli, TwoMpiRanksWriteTheSameFilesAsOne) {
  // A cylinder in a channel cut over two ranks, with tracers: forces.csv and the tracers byte for
  // byte, the fields in pieces. Then a sphere in a 3D channel with tracers and the speed surface,
  // and the sphere on an octree (lbm-amr: runs of blocks over the ranks), whose blocks (.vthb and
  // their .vti files, rank 0's) and forces are byte for byte those of one rank.
  const std::string channel = R"([case]
name = "split"
steps = 240
[lbm]
lattice = "D2Q9"
collision = "trt"
tau = 0.7
[domain]
size = [48, 26]
[[boundary]]
faces = ["x-"]
type = "velocity"
velocity = [0.05, 0.0]
profile = "parabolic"
[[boundary]]
faces = ["x+"]
type = "outflow"
[[obstacle]]
shape = "cylinder"
center = [23.6, 12.7]
radius = 4.0
[forces]
every = 40
reference_velocity = 0.05
reference_length = 8.0
[output]
every = 120
[tracers]
[[tracers.source]]
type = "line"
from = [2.0, 3.0]
to = [2.0, 22.0]
count = 12
release_every = 20
)";
  const std::string sphere =
      octoflow::testing::sphereChannelCase("sphere", 60, 24) + "[output]\nevery = 30\n" +
      replaced(octoflow::testing::planeTracers(24, 5, 10), "[tracers]\n", "[tracers]\nintegrator = \"rk4\"\n") +
      "[surface]\nfield = \"speed\"\nlevel = 0.04\n";
  const std::string octree = octoflow::testing::octreeSphereCase("octree", 20) +
                             "[forces]\nevery = 5\n[output]\nevery = 10\n[surface]\nfield = \"speed\"\nlevel = 0.0005\n" +
                             octoflow::testing::planeTracers(33, 3, 5);
  const auto& contents = octoflow::testing::fileContents;
  for (const auto& [name, text] : {std::pair{std::string("split"), channel}, std::pair{std::string("sphere"), sphere},
                                   std::pair{std::string("octree"), octree}}) {
    SCOPED_TRACE(name);
    writeCase(name + ".toml", text);
    const CommandResult one = runCli("run " + name + ".toml --backend cpu --output one_" + name, directory_);
    ASSERT_EQ(one.exitCode, 0) << one.output;
    const CommandResult two = runCliOnTwoRanks("run " + name + ".toml --backend cpu --output two_" + name, directory_);
    ASSERT_EQ(two.exitCode, 0) << two.output;
    EXPECT_NE(two.output.find("2 MPI ranks"), std::string::npos) << two.output;
    if (name != "sphere") {
      const std::string forces = contents(directory_ / ("one_" + name) / "forces.csv");
      EXPECT_GT(forces.size(), 100u);
      EXPECT_EQ(forces, contents(directory_ / ("two_" + name) / "forces.csv"));
    }
    // Tracers and surfaces (made on rank 0) byte for byte; the fields as pieces of a .pvti
    // (tests/adaptors/CatalystTest.cpp reads them back and compares the values).
    std::map<std::string, int> compared;
    for (const auto& entry : fs::directory_iterator(directory_ / ("one_" + name))) {
      const std::string extension = entry.path().extension().string();
      const fs::path other = directory_ / ("two_" + name) / entry.path().filename();
      if (extension == ".vtp") {
        EXPECT_EQ(contents(entry.path()), contents(other)) << entry.path();
      } else if (extension == ".vthb") {  // the blocks, and the folder of their .vti files
        EXPECT_EQ(contents(entry.path()), contents(other)) << entry.path();
        const fs::path blocks = fs::path(entry.path()).replace_extension("");
        int files = 0;
        for (const auto& block : fs::directory_iterator(blocks)) {
          EXPECT_EQ(contents(block.path()), contents(fs::path(other).replace_extension("") / block.path().filename()))
              << block.path();
          ++files;
        }
        EXPECT_EQ(files, 64) << blocks;
      } else if (extension == ".vti") {
        EXPECT_TRUE(fs::exists(fs::path(other).replace_extension(".pvti"))) << other;
        EXPECT_TRUE(fs::exists(fs::path(other).replace_extension("") / (entry.path().stem().string() + "_1.vti")));
      } else {
        continue;
      }
      ++compared[entry.path().filename().string().substr(0, entry.path().filename().string().find('_'))];
    }
    if (fs::exists(directory_ / ("one_" + name) / (name + ".pvd"))) {  // a build with VTK: steps 0, N/2, N
      EXPECT_EQ(compared[name], name == "octree" ? 6 : 3);  // octree_<step>.vti and octree_amr_<step>.vthb
      EXPECT_EQ(compared["tracers"], 3);
      EXPECT_EQ(compared["surface"], name == "split" ? 0 : 3);
    }
  }
}

namespace {
// The phases of a `--timeline` printout, in order; on the CPU (host clock) their times never go back.
std::vector<std::string> timelinePhases(const std::string& output) {
  double previous = -1.0;
  std::vector<std::string> phases;
  std::istringstream lines(output);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream fields(line);
    double microseconds = 0.0;
    std::string queue;
    if (!(fields >> microseconds >> queue) || (queue != "compute" && queue != "halo")) continue;
    EXPECT_GE(microseconds, previous) << line;  // the CPU runs the phases in call order
    previous = microseconds;
    std::string what;
    std::getline(fields >> std::ws, what);
    phases.push_back(what);
  }
  return phases;
}

// The 16 hex digits after "digest of ... : " in a bench printout ("" if none).
std::string printedDigest(const std::string& output) {
  const auto line = output.find("digest of ");
  if (line == std::string::npos) return {};
  const auto colon = output.find(": ", line);
  return colon == std::string::npos ? std::string() : output.substr(colon + 2, 16);
}
}  // namespace

// `bench lbm --timeline` on two ranks: one step's phases in the order they ran (on the CPU the
// host clock; on a GPU the same marks are CUDA events), the halo exchange of the cut axis among them.
TEST_F(Cli, BenchTimelineListsTheStepsPhasesAndHaloExchangeInOrder) {
  const CommandResult two =
      runCliOnTwoRanks("bench lbm --backend cpu --lattice D3Q19 --size 8 --steps 4 --timeline", directory_);
  ASSERT_EQ(two.exitCode, 0) << two.output;
  EXPECT_NE(two.output.find("timeline of step 2 on rank 0 (host clock)"), std::string::npos) << two.output;
  const std::vector<std::string> expected{"step started", "layers next to the cuts and boundary nodes updated",
                                          "interior updated", "z halos packed and sent",
                                          "z halos received and unpacked"};
  EXPECT_EQ(timelinePhases(two.output), expected) << two.output;
  // The phase-field solver's step: its sweep, then the halos of phi and u.
  const CommandResult field =
      runCliOnTwoRanks("bench phasefield --backend cpu --size 12 --steps 2 --timeline", directory_);
  ASSERT_EQ(field.exitCode, 0) << field.output;
  EXPECT_NE(field.output.find("timeline of step 6 on rank 0 (host clock)"), std::string::npos) << field.output;
  EXPECT_EQ(timelinePhases(field.output), (std::vector<std::string>{"step started", "interior updated", "halos exchanged"}))
      << field.output;
}

// The octree LBM shares blocks over ranks: fewer blocks than ranks is bad input, said once, and
// a run leaves no output behind.
TEST_F(Cli, OctreeLbmRefusesMoreRanksThanBlocks) {
  const CommandResult result = runCliOnTwoRanks("bench amr --backend cpu --leaves 1 --steps 1", directory_);
  EXPECT_EQ(result.exitCode, 2) << result.output;
  EXPECT_NE(result.output.find("--leaves: the octree has 1 blocks, fewer than the 2 MPI ranks"), std::string::npos)
      << result.output;
  // One root block, nothing refined: a single block.
  writeCase("single.toml", replaced(replaced(octoflow::testing::octreeSphereCase("single", 5), "size = [32, 33, 33]",
                                             "size = [16, 17, 17]"),
                                    "refine_distance = 2.000000\n", "refine = \"none\"\n"));
  expectRefused(runCliOnTwoRanks("run single.toml --backend cpu --output out", directory_),
                "octoflow: error: single.toml: amr: the octree has 1 blocks, fewer than the 2 MPI ranks", directory_ / "out");
}

TEST_F(Cli, OctreeLbmRunsTheCsmModelOverRanksAsOnOneProcess) {
  // The seed's LES on the octree (MRT + CSM) on one process and on two ranks: the same blocks, byte
  // for byte, on a static octree (every leaf of level 1) and on one of two levels regridded after 3
  // steps (52 leaves of level 1 and 96 of level 2 become 4 and 480: the ranks adopt their blocks,
  // the eddy parts start again from the state, coarse points pull from finer copies: without the
  // ranks' eddy exchange its blocks differ); and the same benchmark digest.
  const std::string csm = replaced(octoflow::testing::octreeSphereCase("csm", 6), "tau = 0.6\n",
                                   "tau = 0.52\ncollision = \"mrt\"\nles = \"csm\"\n");
  const std::string regridded = replaced(replaced(csm, "max_level = 1\n", "max_level = 2\n"), "refine_distance = 2.000000\n",
                                        "refine_distance = 2.0\nregrid = \"vorticity\"\nregrid_every = 3\nregrid_threshold = 1e-5\n");
  for (const auto& [name, text] : {std::pair{std::string("static"), csm}, std::pair{std::string("regridded"), regridded}}) {
    SCOPED_TRACE(name);
    writeCase(name + ".toml", text + "[output]\nevery = 6\n");
    const CommandResult one = runCli("run " + name + ".toml --backend cpu --output one_" + name, directory_);
    ASSERT_EQ(one.exitCode, 0) << one.output;
    EXPECT_NE(one.output.find("D3Q19 mrt + CSM on an octree"), std::string::npos) << one.output;
    const CommandResult two = runCliOnTwoRanks("run " + name + ".toml --backend cpu --output two_" + name, directory_);
    ASSERT_EQ(two.exitCode, 0) << two.output;
    EXPECT_NE(two.output.find("2 MPI ranks"), std::string::npos) << two.output;
    const fs::path folder = directory_ / ("one_" + name) / "csm_amr_00000006";  // the case is named csm
    ASSERT_TRUE(fs::is_directory(folder));
    int compared = 0;
    for (const auto& block : fs::directory_iterator(folder)) {
      EXPECT_EQ(octoflow::testing::fileContents(block.path()),
                octoflow::testing::fileContents(directory_ / ("two_" + name) / "csm_amr_00000006" /
                                                block.path().filename()))
          << block.path();
      ++compared;
    }
    EXPECT_GT(compared, 8);
    if (name == "regridded") {
      const std::string octree = octoflow::testing::fileContents(directory_ / ("one_" + name) / "octree.csv");
      EXPECT_EQ(octree.rfind("step,leaves,points,leaves_0,leaves_1,leaves_2\n3,4.840000000e+02,2.377892000e+06,0.000000000e+00,"
                             "4.000000000e+00,4.800000000e+02\n",
                             0),
                0u)
          << octree;
      EXPECT_EQ(octree, octoflow::testing::fileContents(directory_ / ("two_" + name) / "octree.csv"));
    }
  }
  const std::string bench = "bench amr --backend cpu --lattice D3Q27 --collision mrt --les csm --leaves 4 --levels 2 --digest --steps 4";
  const CommandResult benchOne = runCli(bench, directory_), benchTwo = runCliOnTwoRanks(bench, directory_);
  ASSERT_EQ(benchOne.exitCode, 0) << benchOne.output;
  ASSERT_EQ(benchTwo.exitCode, 0) << benchTwo.output;
  EXPECT_EQ(printedDigest(benchTwo.output), printedDigest(benchOne.output));
  EXPECT_EQ(printedDigest(benchOne.output).size(), 16u) << benchOne.output;
}

// What every scaling run checks first (docs/PERFORMANCE.md): the same benchmark on 1, 2 and 8
// ranks (the grid cut 1x1x2, then 2x2x2) ends in the same bits, and the fingerprint changes with
// the state (two more steps).
TEST_F(Cli, BenchDigestIsTheSameOnOneTwoAndEightRanks) {
  for (const std::string bench : {"bench lbm --backend cpu --lattice D3Q19 --size 16 --digest --steps ",
                                  "bench phasefield --backend cpu --size 16 --digest --steps ",
                                  // Two levels: the runs of 8 ranks cut across both, and their interface.
                                  "bench amr --backend cpu --lattice D3Q19 --leaves 4 --levels 2 --digest --steps "}) {
    SCOPED_TRACE(bench);
    const CommandResult one = runCli(bench + "6", directory_);
    ASSERT_EQ(one.exitCode, 0) << one.output;
    const std::string digest = printedDigest(one.output);
    ASSERT_EQ(digest.size(), 16u) << one.output;
    for (int ranks : {2, 8}) {
      const CommandResult many = octoflow::testing::runOctoflow(bench + "6", directory_, ranks);
      ASSERT_EQ(many.exitCode, 0) << many.output;
      EXPECT_NE(many.output.find(std::to_string(ranks) + " rank"), std::string::npos) << many.output;
      EXPECT_EQ(printedDigest(many.output), digest) << ranks << " ranks";
    }
    const CommandResult longer = runCli(bench + "8", directory_);
    ASSERT_EQ(longer.exitCode, 0) << longer.output;
    EXPECT_NE(printedDigest(longer.output), digest);
  }
}
#endif

// The issue's benchmark table in one command: every lattice x BGK/MRT x FP32/FP16, with FP16's
// speed-up and MRT's extra time worked out (here on the CPU, tiny boxes: the numbers themselves
// are measured on GPUs, docs/PERFORMANCE.md).
TEST_F(Cli, BenchMatrixCoversEveryLatticeCollisionAndStorage) {
  const CommandResult table = runCli("bench lbm --matrix --backend cpu --size 4 --steps 2", directory_);
  ASSERT_EQ(table.exitCode, 0) << table.output;
  std::set<std::string> seen;
  int fp16Rows = 0, mrtRows = 0;
  std::istringstream lines(table.output);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("D", 0) != 0) continue;  // the rows start with the lattice
    std::istringstream fields(line);
    std::string lattice, collision, storage, nodes;
    double mlups = 0.0;
    EXPECT_TRUE(fields >> lattice >> collision >> storage >> nodes >> mlups) << line;
    EXPECT_TRUE(seen.insert(lattice + " " + collision + " " + storage).second) << line;
    EXPECT_EQ(nodes, lattice == "D2Q9" ? "64x64x1" : "4x4x4") << line;
    // A 64-node box steps in microseconds; on a loaded machine its rate can print as 0.0.
    EXPECT_GE(mlups, 0.0) << line;
    if (storage == "fp16" && line.find("x ") != std::string::npos) ++fp16Rows;
    if (collision == "mrt" && line.find(" %") != line.rfind(" %")) ++mrtRows;
  }
  for (const char* lattice : {"D2Q9", "D3Q19", "D3Q27"})
    for (const char* collision : {"bgk", "mrt"})
      for (const char* storage : {"fp32", "fp16"})
        EXPECT_EQ(seen.count(std::string(lattice) + " " + collision + " " + storage), 1u)
            << lattice << " " << collision << " " << storage << "\n" << table.output;
  EXPECT_EQ(fp16Rows, 6) << table.output;  // a speed-up over FP32 on every FP16 row
  EXPECT_EQ(mrtRows, 6) << table.output;   // an extra time over BGK on every MRT row
  expectInputError("bench lbm --matrix --lattice D2Q9", "--lattice");
}

// `--forced` times the kernels' body-force form, and the result says which form it timed.
TEST_F(Cli, BenchReportsWhetherTheForcedKernelFormWasTimed) {
  const std::string bench = "bench lbm --backend cpu --lattice D3Q19 --size 4 --steps 2 --json";
  const CommandResult plain = runCli(bench, directory_);
  ASSERT_EQ(plain.exitCode, 0) << plain.output;
  EXPECT_NE(plain.output.find("\"forced\": false"), std::string::npos) << plain.output;
  const CommandResult forced = runCli(bench + " --forced", directory_);
  ASSERT_EQ(forced.exitCode, 0) << forced.output;
  EXPECT_NE(forced.output.find("\"forced\": true"), std::string::npos) << forced.output;
  const CommandResult text = runCli("bench lbm --backend cpu --lattice D2Q9 --size 8 --steps 2 --forced", directory_);
  ASSERT_EQ(text.exitCode, 0) << text.output;
  EXPECT_NE(text.output.find("les=none forced, single-step, on"), std::string::npos) << text.output;
  // Temporal blocking is named with its tile.
  const CommandResult blocked =
      runCli("bench lbm --backend cpu --lattice D2Q9 --size 8 --steps 2 --walls --shared-steps 2 --block 4x4", directory_);
  ASSERT_EQ(blocked.exitCode, 0) << blocked.output;
  EXPECT_NE(blocked.output.find("les=none walls, s2r0tb 4x4, on"), std::string::npos) << blocked.output;
}

// `bench insitu` moves its tracers from the solver's populations unless told to move them in a
// velocity field; the same tracers are alive at the end either way (the same paths: the LBM's
// sampler reads the values its velocity field holds).
TEST_F(Cli, BenchInSituMovesTracersFromThePopulationsOrInAField) {
  const auto number = [](const std::string& output, const std::string& key) {
    const auto at = output.find("\"" + key + "\": ");
    return at == std::string::npos ? -1L : std::stol(output.substr(at + key.size() + 4));
  };
  const auto alive = [&](const std::string& output) { return number(output, "tracers_alive"); };
  const std::string bench = "bench insitu --backend cpu --size 32 --steps 12 --tracers 200 --json";
  const CommandResult sampled = runCli(bench, directory_);
  ASSERT_EQ(sampled.exitCode, 0) << sampled.output;
  EXPECT_NE(sampled.output.find("\"tracer_velocity\": \"populations\""), std::string::npos) << sampled.output;
  const CommandResult fielded = runCli(bench + " --tracer-velocity field", directory_);
  ASSERT_EQ(fielded.exitCode, 0) << fielded.output;
  EXPECT_NE(fielded.output.find("\"tracer_velocity\": \"field\""), std::string::npos) << fielded.output;
  EXPECT_GT(alive(sampled.output), 100);
  EXPECT_EQ(alive(sampled.output), alive(fielded.output));
  // Moves of one step ride on the steps (the velocity tap), after the warm-up's move marked them.
  EXPECT_EQ(number(sampled.output, "moves"), 12) << sampled.output;
  EXPECT_EQ(number(sampled.output, "tapped_moves"), 12) << sampled.output;
  EXPECT_EQ(number(fielded.output, "tapped_moves"), 0) << fielded.output;
  expectInputError("bench insitu --backend cpu --tracer-velocity nearest", "--tracer-velocity");
}

// `bench isosurface` extracts a sphere's surface (here on the CPU; the timing figures come from
// GPUs, docs/PERFORMANCE.md): a closed surface has about twice as many triangles as vertices.
TEST_F(Cli, BenchIsosurfaceExtractsTheSpheresSurface) {
  const CommandResult result = runCli("bench isosurface --backend cpu --size 24 --repeats 1 --json", directory_);
  ASSERT_EQ(result.exitCode, 0) << result.output;
  const auto number = [&](const char* key) {
    const std::size_t at = result.output.find(key);
    return at == std::string::npos ? -1LL : std::stoll(result.output.substr(at + std::strlen(key)));
  };
  const long long triangles = number("\"triangles\": "), points = number("\"points\": ");
  EXPECT_GT(points, 500) << result.output;
  EXPECT_EQ(triangles, 2 * points - 4) << result.output;  // Euler: V - E + F = 2 with 2E = 3F
  expectInputError("bench isosurface --size 1", "--size");
}

// `bench amr` times the octree LBM (figures from GPUs in docs/PERFORMANCE.md): with two levels the
// refined centre's blocks step twice a step of level 0, and the update count says so.
TEST_F(Cli, BenchAmrCountsTheUpdatesOfEachLevel) {
  const CommandResult one = runCli("bench amr --backend cpu --leaves 2 --steps 1", directory_);
  ASSERT_EQ(one.exitCode, 0) << one.output;
  EXPECT_NE(one.output.find("1 level(s), 8 blocks"), std::string::npos) << one.output;
  EXPECT_NE(one.output.find("(39304 point updates a step)"), std::string::npos) << one.output;  // 8 x 17^3
  const CommandResult two = runCli("bench amr --backend cpu --leaves 2 --levels 2 --lattice D3Q19 --steps 1", directory_);
  ASSERT_EQ(two.exitCode, 0) << two.output;
  // Every leaf of 2^3 lies within a quarter of the width of the centre: all 8 refined, 64 blocks.
  EXPECT_NE(two.output.find("2 level(s), 64 blocks"), std::string::npos) << two.output;
  EXPECT_NE(two.output.find("(628864 point updates a step)"), std::string::npos) << two.output;  // 64 x 17^3 x 2
  // --regrids: the 8 families of level 1, the 4 in the half x < centre merged and split again.
  const CommandResult regrids =
      runCli("bench amr --backend cpu --leaves 2 --levels 2 --lattice D3Q19 --steps 1 --regrids 2", directory_);
  ASSERT_EQ(regrids.exitCode, 0) << regrids.output;
  EXPECT_NE(regrids.output.find("2 regrids between 64 and 36 blocks: "), std::string::npos) << regrids.output;
  expectInputError("bench amr --leaves 2 --regrids 2", "--regrids");  // one level: nothing to merge
  expectInputError("bench amr --lattice D2Q9", "--lattice");
  expectInputError("bench amr --levels 9", "--levels");
  expectInputError("bench amr --kernel fused", "--kernel");
}

// kernel = "whole" runs octrees of every depth, on the CPU and on CUDA (the bits are the naive
// kernel's: tests/parity), from a case file and in the benchmark.
class WholeBlockKernel : public Cli {
protected:
  void expectTwoLevelsRun(const std::string& backend) {
    writeCase("octree.toml", wholeKernelCase());
    const CommandResult result = runCli("run octree.toml --backend " + backend, directory_);
    EXPECT_EQ(result.exitCode, 0) << result.output;
    EXPECT_NE(result.output.find("whole kernels"), std::string::npos) << result.output;
    const CommandResult bench =
        runCli("bench amr --backend " + backend + " --kernel whole --leaves 2 --levels 2 --steps 2", directory_);
    EXPECT_EQ(bench.exitCode, 0) << bench.output;
    EXPECT_NE(bench.output.find("2 level(s), 64 blocks"), std::string::npos) << bench.output;
  }
};

TEST_F(WholeBlockKernel, RunsAnOctreeOfTwoLevelsOnTheCpu) { expectTwoLevelsRun("cpu"); }

TEST_F(WholeBlockKernel, RunsAnOctreeOfTwoLevelsOnCuda) {
  OCTO_SKIP_WITHOUT_GPU();
  expectTwoLevelsRun("cuda");
}
