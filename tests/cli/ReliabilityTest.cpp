// Checkpoint and restart, the watchdog, stop signals and output errors, as a user meets them
// through the program: a run interrupted and restarted writes the uninterrupted run's files byte
// for byte; a bad checkpoint is refused before anything is written; a diverging run stops with
// exit 3 and the last good state; SIGINT/SIGTERM leave a checkpoint to go on from; an output that
// cannot be written ends the run with exit 4 and no partial file under a final name.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "TestSupport.hpp"
#include "exec/Backend.hpp"
#include "io/Checkpoint.hpp"

namespace fs = std::filesystem;
namespace io = octoflow::io;

namespace {

using octoflow::Index;
using octoflow::testing::CommandResult;
using octoflow::testing::fileContents;
using octoflow::testing::replaced;

// `<name>_<step:08d>.<extension>`, as the program names its series and checkpoints.
std::string stepFile(const std::string& name, Index step, const std::string& extension) {
  char number[32];
  std::snprintf(number, sizeof number, "_%08lld.", static_cast<long long>(step));
  return name + number + extension;
}

std::vector<unsigned char> fileBytes(const fs::path& path) {
  const std::string text = fileContents(path);
  return std::vector<unsigned char>(text.begin(), text.end());
}

void writeBytes(const fs::path& path, const std::vector<unsigned char>& bytes) {
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()),
                                              static_cast<std::streamsize>(bytes.size()));
}

io::CheckpointFile decodeFile(const fs::path& path) {
  const std::vector<unsigned char> bytes = fileBytes(path);
  return io::decodeCheckpoint(bytes.data(), bytes.size(), path.string());
}

// Every regular file under `folder`, by path relative to it (the folders given skipped).
std::map<std::string, std::string> filesUnder(const fs::path& folder, const std::set<std::string>& skipped = {}) {
  std::map<std::string, std::string> files;
  if (!fs::is_directory(folder)) return files;
  for (const auto& entry : fs::recursive_directory_iterator(folder)) {
    const std::string relative = fs::relative(entry.path(), folder).generic_string();
    if (!entry.is_regular_file() || skipped.count(relative.substr(0, relative.find('/')))) continue;
    files[relative] = fileContents(entry.path());
  }
  return files;
}

// Where two files' bytes first differ, for a failure message (never the bytes themselves).
std::string firstDifference(const std::string& a, const std::string& b) {
  std::size_t at = 0;
  while (at < a.size() && at < b.size() && a[at] == b[at]) ++at;
  return "sizes " + std::to_string(a.size()) + " and " + std::to_string(b.size()) + ", first difference at byte " +
         std::to_string(at);
}

// The same files, byte for byte, under both folders.
void expectSameFiles(const std::map<std::string, std::string>& expected, const std::map<std::string, std::string>& actual,
                     const std::string& what) {
  std::set<std::string> expectedNames, actualNames;
  for (const auto& [name, bytes] : expected) expectedNames.insert(name);
  for (const auto& [name, bytes] : actual) actualNames.insert(name);
  EXPECT_EQ(expectedNames, actualNames) << what;
  for (const auto& [name, bytes] : expected) {
    const auto other = actual.find(name);
    if (other != actual.end())
      EXPECT_TRUE(bytes == other->second) << what << ": " << name << " differs: " << firstDifference(bytes, other->second);
  }
}

std::vector<std::string> linesOf(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// ---------------------------------------------------------------------------------------------
// Cases: tiny, so that every run takes a fraction of a second on two cores.

// A sphere in a 3D channel with obstacle forces, plane tracers released every 5 steps and the speed
// surface; output, forces and checkpoints at multiples of 10.
std::string sphereCase(int steps) {
  return octoflow::testing::sphereChannelCase("sphere", steps, 24) +
         "[forces]\nevery = 5\nreference_velocity = 0.05\nreference_length = 5.28\n"
         "[output]\nevery = 10\n[checkpoint]\nevery = 10\n" +
         octoflow::testing::planeTracers(24, 3, 5) + "[surface]\nfield = \"speed\"\nlevel = 0.04\n";
}

// A 2D channel between resting walls past a cylinder, driven by a body force, run with temporal
// blocking (three steps a launch, so launches straddle the outputs every 5 and 10 steps).
std::string blockedCase(int steps) {
  return R"([case]
name = "blocked"
solver = "lbm"
steps = )" + std::to_string(steps) + R"(
[lbm]
lattice = "D2Q9"
tau = 0.7
body_force = [2e-5, 0.0]
[lbm.blocking]
shared_steps = 3
block = [16, 8]
[domain]
size = [48, 24]
periodic = [true, false]
[[boundary]]
faces = ["y-", "y+"]
type = "wall"
[[obstacle]]
shape = "cylinder"
center = [12.0, 11.5]
radius = 4.0
[forces]
every = 5
[output]
every = 10
[checkpoint]
every = 10
)";
}

// The octree's sphere (TestSupport.hpp) with Smagorinsky's eddy viscosity, the surface of the speed
// and tracers on level 0's grid, fields (.vti and .vthb) and checkpoints.
std::string amrCase(int steps, double refineDistance = 2.0) {
  return replaced(octoflow::testing::octreeSphereCase("octree", steps, refineDistance), "tau = 0.6",
                  "tau = 0.6\nles = \"smagorinsky\"") +
         "[output]\nevery = 10\n[checkpoint]\nevery = 10\n[surface]\nfield = \"speed\"\nlevel = 0.0005\n" +
         octoflow::testing::planeTracers(33, 3, 5);
}

// amrCase with the leaves refined by the flow instead: the root blocks at first, a regrid every 5
// steps where |curl u| h > 1e-4 (the sphere's leaves by step 10, all of them by step 15).
std::string amrRegridCase(int steps) {
  return replaced(amrCase(steps), "refine_distance = 2.000000\n",
                  "refine = \"none\"\nregrid = \"vorticity\"\nregrid_threshold = 1e-4\nregrid_every = 5\n");
}

// The level and the lower x of each block of a .vthb file (the Origin of its .vti, ghost layer
// included).
std::vector<std::pair<int, double>> amrBlocks(const fs::path& vthb) {
  std::vector<std::pair<int, double>> blocks;
  int level = -1;
  std::istringstream lines(fileContents(vthb));
  const std::regex levelLine("<Block level=\"([0-9]+)\">"), dataSet("file=\"([^\"]+)\"");
  const std::regex origin("Origin=\"([-0-9.e]+) ");
  for (std::string line; std::getline(lines, line);) {
    std::smatch match;
    if (std::regex_search(line, match, levelLine)) level = std::stoi(match[1]);
    if (std::regex_search(line, match, dataSet)) {
      std::smatch at;
      const std::string piece = fileContents(vthb.parent_path() / match[1].str());
      if (std::regex_search(piece, at, origin)) blocks.emplace_back(level, std::stod(at[1]));
    }
  }
  return blocks;
}

// A 2D lid-driven box with a cylinder: MRT collision, CSM eddy viscosity, FP16 storage, forces
// and line tracers.
std::string lidCase(int steps, const std::string& storage) {
  return "[case]\nname = \"lid\"\nsteps = " + std::to_string(steps) + R"(
[lbm]
lattice = "D2Q9"
collision = "mrt"
les = "csm"
storage = ")" + storage + R"("
tau = 0.55
[domain]
size = [40, 24]
[[boundary]]
faces = ["y+"]
type = "moving_wall"
velocity = [0.1, 0.0]
[[obstacle]]
shape = "cylinder"
center = [14.3, 10.6]
radius = 3.5
[forces]
every = 10
reference_velocity = 0.1
reference_length = 7.0
[output]
every = 15
[checkpoint]
every = 15
[tracers]
[[tracers.source]]
type = "line"
from = [3.0, 4.0]
to = [3.0, 20.0]
count = 8
release_every = 5
)";
}

// A 2D Kobayashi crystal with interface noise whose nucleus crosses the periodic y faces.
std::string kobayashiCase(int steps) {
  return "[case]\nname = \"crystal\"\nsolver = \"phasefield\"\nsteps = " + std::to_string(steps) + R"(
[domain]
size = [40, 36]
periodic = [false, true]
[phasefield]
model = "kobayashi"
noise = 0.025
noise_seed = 7
nucleus_radius = 5.0
nucleus_centre = [14.0, 2.0]
[diagnostics]
every = 25
[output]
every = 50
[checkpoint]
every = 50
)";
}

// A cylinder wake of the 2D Navier-Stokes solver, shedding from its perturbation: the outflow's
// faces, the pressure and the Strouhal number's history go on across the restart.
std::string cylinderCase(int steps) {
  return "[case]\nname = \"wake\"\nsolver = \"ns2d\"\nsteps = " + std::to_string(steps) + R"(
[domain]
size = [64, 32]
[ns]
reynolds = 100
size = [16.0, 8.0]
cfl = 0.5
[ns.cylinder]
centre = [4.0, 4.0]
diameter = 1.0
[diagnostics]
every = 5
[output]
every = 20
[checkpoint]
every = 20
)";
}

// A quarter crystal of the Karma-Rappel model (PFHub benchmark 3's), with noise.
std::string karmaRappelCase(int steps) {
  return "[case]\nname = \"quarter\"\nsolver = \"phasefield\"\nsteps = " + std::to_string(steps) + R"(
[domain]
size = [40, 40]
[phasefield]
model = "karma-rappel"
dx = 0.8
noise = 0.01
nucleus_radius = 8.0
nucleus_centre = [-0.5, -0.5]
[diagnostics]
every = 25
[output]
every = 50
[checkpoint]
every = 50
)";
}

// A 2D channel with a cylinder (forces every 10 steps, tracers) that runs until stopped.
std::string endlessCase(const std::string& name, int width, int height) {
  return "[case]\nname = \"" + name + "\"\nsteps = 100000000\n[lbm]\nlattice = \"D2Q9\"\ntau = 0.6\n[domain]\nsize = [" +
         std::to_string(width) + ", " + std::to_string(height) + R"(]
[[boundary]]
faces = ["x-"]
type = "velocity"
velocity = [0.05, 0.0]
[[boundary]]
faces = ["x+"]
type = "outflow"
[[obstacle]]
shape = "cylinder"
center = [12.3, 11.7]
radius = 3.0
[forces]
every = 10
reference_velocity = 0.05
reference_length = 6.0
[output]
every = 100
[tracers]
[[tracers.source]]
type = "line"
from = [2.0, 3.0]
to = [2.0, 20.0]
count = 6
release_every = 50
)";
}

// The lid-driven box of tests/cli/CliTest.cpp that BGK cannot hold (tau 0.501, lid 0.4): it
// diverges between steps 30 and 40; the watchdog looks every 10 steps.
const std::string kUnstableCase = octoflow::testing::unstableLidCase() + "[output]\nevery = 10\n[watchdog]\ncheck_every = 10\n";

// A small 2D channel for the bad-checkpoint cases.
const std::string kTinyCase = octoflow::testing::tinyChannelCase() + "[checkpoint]\nevery = 10\n";

// ---------------------------------------------------------------------------------------------
// The program started in the background (stdout and stderr into a log file), to be signalled.
class BackgroundRun {
public:
  BackgroundRun(const std::string& arguments, const fs::path& directory, const fs::path& log) : log_(log) {
    // Everything the child needs is made before fork: after it, only exec.
    const std::string command = "cd '" + directory.string() + "' && exec '" + std::string(OCTOFLOW_CLI_PATH) + "' " +
                                arguments + " >'" + log.string() + "' 2>&1";
    pid_ = fork();
    if (pid_ == 0) {
      execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
  }
  ~BackgroundRun() {
    if (pid_ > 0 && !exited_) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }
  BackgroundRun(const BackgroundRun&) = delete;
  BackgroundRun& operator=(const BackgroundRun&) = delete;

  pid_t pid() const { return pid_; }
  std::string log() const { return fileContents(log_); }

  // Whether the program still runs (reaps it if it ended).
  bool running() {
    if (exited_) return false;
    if (waitpid(pid_, &status_, WNOHANG) == pid_) exited_ = true;
    return !exited_;
  }
  // Polls `ready` every 10 ms while the program runs, for at most `seconds`.
  bool waitUntil(const std::function<bool()>& ready, double seconds) {
    const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    while (std::chrono::steady_clock::now() < end) {
      if (ready()) return true;
      if (!running()) return ready();
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
  }
  // Waits at most `seconds` for the program to end; its wait status, or -1 if it had to be killed.
  int finish(double seconds) {
    waitUntil([] { return false; }, seconds);
    if (running()) return -1;  // the destructor kills it
    return status_;
  }

private:
  fs::path log_;
  pid_t pid_ = -1;
  int status_ = 0;
  bool exited_ = false;
};

// Whether `signal` is pending for process `pid` (process-wide or for its main thread).
bool signalPending(pid_t pid, int signal) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("SigPnd:", 0) != 0 && line.rfind("ShdPnd:", 0) != 0) continue;
    const unsigned long long mask = std::stoull(line.substr(7), nullptr, 16);
    if (mask & (1ull << (signal - 1))) return true;
  }
  return false;
}

// The number of data rows (lines after the header) of a CSV file.
int csvRows(const fs::path& path) {
  const std::vector<std::string> lines = linesOf(fileContents(path));
  return lines.empty() ? 0 : static_cast<int>(lines.size()) - 1;
}

class Reliability : public octoflow::testing::ScratchFolderTest {
protected:
  void writeCase(const std::string& name, const std::string& text) { std::ofstream(directory_ / name) << text; }
  CommandResult cli(const std::string& arguments, int ranks = 0) {
    return octoflow::testing::runOctoflow(arguments, directory_, ranks);
  }
  void runOk(const std::string& arguments, int ranks = 0) {
    const CommandResult result = cli(arguments, ranks);
    ASSERT_EQ(result.exitCode, 0) << arguments << "\n" << result.output;
  }

  // Runs `caseFile` (of `steps` steps, case name `name`) whole into `whole`, and into `split` first
  // for `half` steps, then on from its checkpoint of step `half`; every file of the two folders
  // must be the same, byte for byte. `half` is a multiple of every `every` of the case.
  void expectRestartIsExact(const std::string& caseFile, const std::string& name, Index half, Index steps,
                            const std::string& backend) {
    const std::string run = "run " + caseFile + " --quiet --backend " + backend + " --output ";
    ASSERT_NO_FATAL_FAILURE(runOk(run + "whole"));
    ASSERT_NO_FATAL_FAILURE(runOk(run + "split --steps " + std::to_string(half)));
    const std::string checkpoint = "split/checkpoints/" + stepFile(name, half, "ckpt");
    ASSERT_TRUE(fs::exists(directory_ / checkpoint));
    EXPECT_EQ(decodeFile(directory_ / checkpoint).header.step, half);
    ASSERT_NO_FATAL_FAILURE(runOk(run + "split --restart " + checkpoint));
    const auto whole = filesUnder(directory_ / "whole");
    expectSameFiles(whole, filesUnder(directory_ / "split"), caseFile + " on " + backend);
    // Not vacuous: the final checkpoint and, with VTK, the last step's fields are among them.
    EXPECT_EQ(whole.count("checkpoints/" + stepFile(name, steps, "ckpt")), 1u);
    if (OCTOFLOW_CLI_WRITES_VTK) EXPECT_EQ(whole.count(stepFile(name, steps, "vti")), 1u);
  }

  // A restart the program must refuse: exit 2, one `octoflow: error:` line naming `path` and saying
  // `problem`, and no output folder.
  void expectRefused(const std::string& caseFile, const std::string& path, const std::string& problem,
                     const std::string& extra = "") {
    SCOPED_TRACE(path + " (" + problem + ")");
    const CommandResult result = cli("run " + caseFile + " --backend cpu --quiet --output refused --restart " + path + extra);
    EXPECT_EQ(result.exitCode, 2) << result.output;
    std::vector<std::string> errors;
    for (const std::string& line : linesOf(result.output))
      if (line.find("octoflow: error:") != std::string::npos) errors.push_back(line);
    ASSERT_EQ(errors.size(), 1u) << result.output;
    EXPECT_EQ(errors[0].rfind("octoflow: error: ", 0), 0u) << errors[0];
    EXPECT_NE(errors[0].find(path), std::string::npos) << errors[0];
    EXPECT_NE(errors[0].find(problem), std::string::npos) << errors[0];
    EXPECT_EQ(linesOf(result.output).size(), 1u) << result.output;
    EXPECT_FALSE(fs::exists(directory_ / "refused")) << "a refused restart created its output folder";
  }
};

}  // namespace

// 1. LBM ---------------------------------------------------------------------------------------

TEST_F(Reliability, LbmRestartIsBitExactOnTheCpu) {
  writeCase("sphere.toml", sphereCase(40));
  expectRestartIsExact("sphere.toml", "sphere", 20, 40, "cpu");
  const auto forces = linesOf(fileContents(directory_ / "whole" / "forces.csv"));
  EXPECT_EQ(forces.size(), 9u) << "a header and a row every 5 steps";
  if (OCTOFLOW_CLI_WRITES_VTK) {
    EXPECT_TRUE(fs::exists(directory_ / "whole" / "tracers_00000040.vtp"));
    EXPECT_TRUE(fs::exists(directory_ / "whole" / "surface_00000040.vtp"));
  }
}

// Blocked launches hold the in-place layout of the step they end on: a checkpoint of a blocked run
// restarts bit-exactly, and its forces and fields are those of the single-step run.
TEST_F(Reliability, LbmRestartWithTemporalBlockingIsBitExactOnTheCpu) {
  writeCase("blocked.toml", blockedCase(40));
  expectRestartIsExact("blocked.toml", "blocked", 20, 40, "cpu");
  writeCase("single.toml", replaced(blockedCase(40), "shared_steps = 3", "shared_steps = 0"));
  runOk("run single.toml --quiet --backend cpu --output single");
  EXPECT_EQ(fileContents(directory_ / "single" / "forces.csv"), fileContents(directory_ / "whole" / "forces.csv"));
  EXPECT_EQ(csvRows(directory_ / "whole" / "forces.csv"), 8);
}

TEST_F(Reliability, LbmRestartIsBitExactWithMrtCsmFp16AndAMovingWall) {
  writeCase("lid.toml", lidCase(60, "fp16"));
  expectRestartIsExact("lid.toml", "lid", 30, 60, "cpu");
}

// Across regrids: the checkpoint of step 10 holds the octree of its regrid (the sphere's half of
// the leaves refined), which the restart takes up, and step 15's regrid refines the rest.
TEST_F(Reliability, OctreeLbmRestartAcrossRegridsIsBitExactOnTheCpu) {
  writeCase("octree.toml", amrRegridCase(20));
  expectRestartIsExact("octree.toml", "octree", 10, 20, "cpu");
  // octree.csv: the leaves after each regrid (step, leaves, points, leaves of levels 0 and 1).
  const auto rows = linesOf(fileContents(directory_ / "whole" / "octree.csv"));
  ASSERT_EQ(rows.size(), 5u);
  EXPECT_EQ(rows[0], "step,leaves,points,leaves_0,leaves_1");
  const std::vector<std::vector<double>> expected = {
      {5, 8, 39304, 8, 0}, {10, 36, 176868, 4, 32}, {15, 64, 314432, 0, 64}, {20, 64, 314432, 0, 64}};
  for (std::size_t row = 1; row < rows.size(); ++row) {
    std::vector<double> values;
    std::istringstream fields(rows[row]);
    for (std::string field; std::getline(fields, field, ',');) values.push_back(std::stod(field));
    EXPECT_EQ(values, expected[row - 1]) << rows[row];
  }
  if (!OCTOFLOW_CLI_WRITES_VTK) return;
  // Refined where the sphere (x 8 to 16) sheds vorticity: at step 10 level 1 lies in x < 16 only.
  const auto levels = [&](Index step) {
    std::map<int, int> count;
    for (const auto& [level, x] : amrBlocks(directory_ / "whole" / stepFile("octree_amr", step, "vthb"))) {
      ++count[level];
      if (step == 10 && level == 1) EXPECT_LT(x, 16.0);
    }
    return count;
  };
  EXPECT_EQ(levels(0), (std::map<int, int>{{0, 8}}));
  EXPECT_EQ(levels(10), (std::map<int, int>{{0, 4}, {1, 32}}));
  EXPECT_EQ(levels(20), (std::map<int, int>{{1, 64}}));
}

// 2. Phase field -------------------------------------------------------------------------------

TEST_F(Reliability, KobayashiRestartWithNoiseIsBitExactOnTheCpu) {
  writeCase("crystal.toml", kobayashiCase(200));
  expectRestartIsExact("crystal.toml", "crystal", 100, 200, "cpu");
  EXPECT_EQ(csvRows(directory_ / "whole" / "dendrite.csv"), 8);
}

TEST_F(Reliability, KarmaRappelRestartIsBitExactOnTheCpu) {
  writeCase("quarter.toml", karmaRappelCase(200));
  expectRestartIsExact("quarter.toml", "quarter", 100, 200, "cpu");
  EXPECT_EQ(csvRows(directory_ / "whole" / "dendrite.csv"), 8);
}

// 3. MPI ---------------------------------------------------------------------------------------

#ifdef OCTOFLOW_MPIEXEC
namespace {

// The state a checkpoint holds (its pieces read through io::CheckpointReader) equals that of a
// one-rank checkpoint of the same step: every record and every array over the whole grid.
void expectSameState(const fs::path& oneRank, const fs::path& pieces) {
  const io::CheckpointFile one = decodeFile(oneRank);
  const io::CheckpointFile main = decodeFile(pieces);
  EXPECT_EQ(main.header.step, one.header.step);
  EXPECT_EQ(main.header.caseHash, one.header.caseHash);
  EXPECT_EQ(main.pieces.size(), static_cast<std::size_t>(main.header.ranks));
  EXPECT_GT(main.header.ranks, 1);
  ASSERT_EQ(main.records.size(), one.records.size());
  for (std::size_t n = 0; n < one.records.size(); ++n) {
    EXPECT_EQ(main.records[n].name, one.records[n].name);
    EXPECT_TRUE(main.records[n].bytes == one.records[n].bytes) << "record " << one.records[n].name;
  }
  const io::CheckpointReader reader(pieces.string());
  for (const octoflow::sim::StateArray& array : one.arrays) {
    std::vector<unsigned char> values(array.bytes.size());
    reader.readArray(array.name, array.components, array.valueBytes, array.box, values.data());
    EXPECT_TRUE(values == array.bytes) << "array " << array.name;
  }
}

}  // namespace

// A checkpoint written by 2 ranks (a main file and 2 pieces) goes on on 1 rank and on 4: the same
// CSVs, tracers and surfaces as one uninterrupted rank; on 1 rank the same field files after the
// restart and the same final checkpoint, byte for byte; on 4 the same final state.
class ReliabilityMpi : public Reliability {
protected:
  void expectTwoRankCheckpointGoesOn(const std::string& name, const std::string& text, Index half, Index steps) {
    const std::string caseFile = name + ".toml";
    writeCase(caseFile, text);
    const std::string run = "run " + caseFile + " --quiet --backend cpu --output ";
    ASSERT_NO_FATAL_FAILURE(runOk(run + "one"));
    ASSERT_NO_FATAL_FAILURE(runOk(run + "two --steps " + std::to_string(half), 2));
    const std::string checkpoint = "checkpoints/" + stepFile(name, half, "ckpt");
    for (int rank : {0, 1})
      EXPECT_TRUE(fs::exists(directory_ / "two" / "checkpoints" / io::checkpointPieceName(name, half, rank, 2)));
    const auto one = filesUnder(directory_ / "one");
    for (int ranks : {1, 4}) {
      SCOPED_TRACE(std::to_string(ranks) + " rank(s) after 2");
      const std::string folder = "two_then_" + std::to_string(ranks);
      fs::copy(directory_ / "two", directory_ / folder, fs::copy_options::recursive);
      ASSERT_NO_FATAL_FAILURE(runOk(run + folder + " --restart " + folder + "/" + checkpoint, ranks == 1 ? 0 : ranks));
      const auto after = filesUnder(directory_ / folder);
      int compared = 0;
      for (const auto& [file, bytes] : one) {
        const std::string extension = fs::path(file).extension().string();
        // Field files of the steps after the restart on one rank (before it, two ranks wrote pieces).
        const bool fields = ranks == 1 && extension == ".vti" && file > stepFile(name, half, "vti");
        if (extension != ".csv" && extension != ".vtp" && !fields) continue;
        ++compared;
        const auto other = after.find(file);
        ASSERT_NE(other, after.end()) << file;
        EXPECT_TRUE(bytes == other->second) << file << ": " << firstDifference(bytes, other->second);
      }
      EXPECT_GE(compared, ranks == 1 && OCTOFLOW_CLI_WRITES_VTK ? 3 : 1);
      const fs::path last = fs::path("checkpoints") / stepFile(name, steps, "ckpt");
      if (ranks == 1)
        EXPECT_TRUE(one.at(last.generic_string()) == after.at(last.generic_string())) << "the final checkpoint";
      else
        expectSameState(directory_ / "one" / last, directory_ / folder / last);
    }
  }
};

TEST_F(ReliabilityMpi, LbmCheckpointOfTwoRanksGoesOnOnOneAndFour) {
  ASSERT_NO_FATAL_FAILURE(expectTwoRankCheckpointGoesOn("sphere", sphereCase(40), 20, 40));
  // The pieces are no place to restart from, and a main file needs every piece it lists.
  const std::string piece = "two/checkpoints/" + io::checkpointPieceName("sphere", 20, 1, 2);
  expectRefused("sphere.toml", piece, "a piece of a checkpoint of 2 ranks: restart from its main file");
  fs::remove(directory_ / "two" / "checkpoints" / io::checkpointPieceName("sphere", 20, 0, 2));
  expectRefused("sphere.toml", "two/checkpoints/sphere_00000020.ckpt", "not found");
}

TEST_F(ReliabilityMpi, PhaseFieldCheckpointOfTwoRanksGoesOnOnOneAndFour) {
  expectTwoRankCheckpointGoesOn("crystal", kobayashiCase(200), 100, 200);
}

// The octree LBM across regrids: the checkpoint of 2 ranks holds every block's state as one rank
// numbers it (its pieces hold nothing), the restart regrids on 1 and on 4 ranks as one rank did.
TEST_F(ReliabilityMpi, OctreeLbmCheckpointOfTwoRanksGoesOnOnOneAndFour) {
  expectTwoRankCheckpointGoesOn("octree", amrRegridCase(20), 10, 20);
  EXPECT_EQ(csvRows(directory_ / "one" / "octree.csv"), 4) << "the octree after each regrid, compared above";
}

// The watchdog over ranks: each rank looks at its piece of the fields, the first faulty rank's
// finding goes to every rank. A lid-driven box at tau = 0.501 (the uniform LBM) and an octree LBM
// driven too hard below an off-centre sphere diverge first at a node of rank 1's piece: 2 ranks
// stop at the step and node of one rank, name rank 1, and keep the same last good state.
TEST_F(ReliabilityMpi, TheWatchdogOfTwoRanksStopsWhereOneRankStops) {
  std::string octree = replaced(octoflow::testing::octreeSphereCase("octree", 400), "tau = 0.6", "tau = 0.505");
  octree = replaced(octree, "body_force = [2.0e-5, 0.0, 0.0]", "body_force = [4.0e-3, 0.0, 0.0]");
  octree = replaced(octree, "center = [12.0, 16.0, 16.0]", "center = [12.0, 16.0, 22.0]");
  const std::regex finding("stopped: the simulation diverged: at step (\\d+) ((density|velocity) = [^\n]* at node "
                           "\\([^)]*\\)) \\(rank (\\d)\\)[^;\n]*; the last good state is step (\\d+)");
  for (const auto& [name, text] : {std::pair{std::string("unstable"), octoflow::testing::unstableLidCase()},
                                   std::pair{std::string("octree"), octree}}) {
    SCOPED_TRACE(name);
    writeCase(name + ".toml", text + "[watchdog]\ncheck_every = 10\n");
    const std::string run = "run " + name + ".toml --quiet --backend cpu --output ";
    const CommandResult one = cli(run + "one_" + name);
    const CommandResult two = cli(run + "two_" + name, 2);
    EXPECT_EQ(one.exitCode, 3) << one.output;
    EXPECT_EQ(two.exitCode, 3) << two.output;
    std::smatch oneFinding, twoFinding;
    ASSERT_TRUE(std::regex_search(one.output, oneFinding, finding)) << one.output;
    ASSERT_TRUE(std::regex_search(two.output, twoFinding, finding)) << two.output;
    EXPECT_EQ(twoFinding[1].str(), oneFinding[1].str()) << "the step";
    EXPECT_EQ(twoFinding[2].str(), oneFinding[2].str()) << "the value and the node";
    EXPECT_EQ(oneFinding[4].str(), "0");
    EXPECT_EQ(twoFinding[4].str(), "1") << two.output;
    EXPECT_EQ(twoFinding[5].str(), oneFinding[5].str()) << "the last good step";
    const std::string lastGood = "checkpoints/" + stepFile(name + "_last_good", std::stoll(oneFinding[5].str()), "ckpt");
    expectSameState(directory_ / ("one_" + name) / lastGood, directory_ / ("two_" + name) / lastGood);
  }
}

// Faults of one rank: the run of every rank ends within seconds, with the failing rank's message
// (never a hang: a `timeout` would end it with 124). Two programs of one MPI job (mpirun's
// "-np 1 A : -np 1 B"), so that only rank 1 meets the fault.
class MpiFaults : public Reliability {
protected:
  CommandResult runTwoRanks(const std::string& rank0, const std::string& rank1) {
    const std::string launcher = octoflow::testing::kMpiEnvironment + std::string(" timeout 120 '") +
                                 OCTOFLOW_MPIEXEC + "' --oversubscribe -x OMP_NUM_THREADS=1 ";
    const std::string program = "'" + std::string(OCTOFLOW_CLI_PATH) + "' ";
    return octoflow::testing::runCommand(
        launcher + "-np 1 " + program + rank0 + " : -np 1 " + (rank1.rfind("bash", 0) == 0 ? rank1 : program + rank1),
        directory_);
  }
};

TEST_F(MpiFaults, BadInputOnOneRankEndsEveryRank) {
  // Rank 1 reads a case file of its own (a node's local copy) that is broken.
  writeCase("good.toml", endlessCase("endless", 96, 64));
  writeCase("bad.toml", replaced(endlessCase("endless", 96, 64), "tau = 0.6", "tau = 0.4"));
  const CommandResult result = runTwoRanks("run good.toml --backend cpu --output out", "run bad.toml --backend cpu --output out");
  EXPECT_EQ(result.exitCode, 2) << result.output;
  EXPECT_NE(result.output.find("[rank 1] octoflow: error: bad.toml: lbm.tau"), std::string::npos) << result.output;
}

// Solvers that run on one process refuse two ranks, on every rank, with exit 2 and nothing written.
TEST_F(MpiFaults, OneProcessSolversRefuseTwoRanks) {
  writeCase("wake.toml", cylinderCase(40));
  const CommandResult result = runTwoRanks("run wake.toml --backend cpu --output out", "run wake.toml --backend cpu --output out");
  EXPECT_EQ(result.exitCode, 2) << result.output;
  EXPECT_NE(result.output.find("octoflow: error: wake.toml: case.solver: \"ns2d\" runs on one process"), std::string::npos)
      << result.output;
  EXPECT_FALSE(fs::exists(directory_ / "out")) << "a refused run created its output folder";
}

TEST_F(MpiFaults, OutOfMemoryOnOneRankEndsEveryRank) {
  // Rank 1 may hold 500,000 KiB (512 MB) of data (RLIMIT_DATA: the heap and private writable
  // mappings): its half of a 4000 x 4000 grid (576 MB of populations) does not fit. A limit on the data, not on the
  // address space (ulimit -v), so that builds with CUDA start too: the CUDA runtime and a
  // CUDA-aware MPI reserve far more address space than that when they load, without writing to it.
  std::string text = replaced(endlessCase("endless", 96, 64), "size = [96, 64]", "size = [4000, 4000]");
  writeCase("big.toml", text);
  const CommandResult result =
      runTwoRanks("run big.toml --backend cpu --output out",
                  "bash -c \"ulimit -d 500000; exec '" + std::string(OCTOFLOW_CLI_PATH) + "' run big.toml --backend cpu --output out\"");
  EXPECT_EQ(result.exitCode, 1) << result.output;
  EXPECT_NE(result.output.find("[rank 1] octoflow: failed: out of host memory: requested"), std::string::npos)
      << result.output;
}

#if OCTOFLOW_CLI_WRITES_VTK
TEST_F(MpiFaults, ACatalystScriptFailingOnOneRankEndsEveryRank) {
  // The script raises on the second piece only, at its first run.
  writeCase("endless.toml", endlessCase("endless", 96, 64));
  writeCase("fails_on_rank_1.py", R"(# script-version: 2
from paraview.simple import *

def catalyst_execute(info):
    from paraview.modules.vtkRemotingCore import vtkProcessModule
    if vtkProcessModule.GetProcessModule().GetPartitionId() == 1:
        raise RuntimeError("rank 1 cannot go on")
)");
  const std::string run = "run endless.toml --backend cpu --output out --catalyst fails_on_rank_1.py";
  const CommandResult result = octoflow::testing::runOctoflow(run, directory_, 2);
  EXPECT_EQ(result.exitCode, 2) << result.output;
  EXPECT_NE(result.output.find("octoflow: error: fails_on_rank_1.py: the Catalyst script failed on its first run"),
            std::string::npos)
      << result.output;
}
#endif
#endif

// 3b. 2D Navier-Stokes --------------------------------------------------------------------------

TEST_F(Reliability, NavierStokesRestartIsBitExactOnTheCpu) {
  writeCase("wake.toml", cylinderCase(40));
  expectRestartIsExact("wake.toml", "wake", 20, 40, "cpu");
  EXPECT_EQ(csvRows(directory_ / "whole" / "forces.csv"), 8);
}

// 4. GPU ---------------------------------------------------------------------------------------

TEST_F(Reliability, CudaRestartIsBitExact) {
  OCTO_SKIP_WITHOUT_GPU();
  writeCase("sphere.toml", sphereCase(40));
  writeCase("lid.toml", lidCase(60, "fp16"));
  writeCase("lid32.toml", replaced(lidCase(60, "fp32"), "name = \"lid\"", "name = \"lid32\""));
  writeCase("crystal.toml", kobayashiCase(200));
  writeCase("wake.toml", cylinderCase(40));
  writeCase("blocked.toml", blockedCase(40));
  writeCase("octree.toml", amrCase(20));
  // The octree across regrids (the checkpoint of step 10 holds a regridded octree).
  writeCase("regrid.toml", replaced(amrRegridCase(20), "name = \"octree\"", "name = \"regrid\""));
  const struct {
    const char* file;
    const char* name;
    Index half, steps;
  } cases[] = {{"sphere.toml", "sphere", 20, 40},
               {"lid.toml", "lid", 30, 60},
               {"lid32.toml", "lid32", 30, 60},
               {"crystal.toml", "crystal", 100, 200},
               {"wake.toml", "wake", 20, 40},
               {"blocked.toml", "blocked", 20, 40},
               {"octree.toml", "octree", 10, 20},
               {"regrid.toml", "regrid", 10, 20}};
  for (const auto& c : cases) {
    SCOPED_TRACE(c.file);
    fs::remove_all(directory_ / "whole");
    fs::remove_all(directory_ / "split");
    expectRestartIsExact(c.file, c.name, c.half, c.steps, "cuda");
  }
}

// 5. Bad checkpoints ---------------------------------------------------------------------------

class ReliabilityBadCheckpoint : public Reliability {
protected:
  // tiny.toml, run to step 20 into good/: checkpoints of steps 10 and 20; the bytes of step 10's.
  void SetUp() override {
    Reliability::SetUp();
    writeCase("tiny.toml", kTinyCase);
    ASSERT_NO_FATAL_FAILURE(runOk("run tiny.toml --backend cpu --quiet --output good"));
    bytes_ = fileBytes(directory_ / "good" / "checkpoints" / "tiny_00000010.ckpt");
    ASSERT_GT(bytes_.size(), 100u);
    fs::create_directories(directory_ / "bad");
  }
  // `contents` as bad/<name>; its path for --restart.
  std::string bad(const std::string& name, const std::vector<unsigned char>& contents) {
    writeBytes(directory_ / "bad" / name, contents);
    return "bad/" + name;
  }
  std::vector<unsigned char> bytes_;
};

TEST_F(ReliabilityBadCheckpoint, DamagedFilesAndPiecesAreRefusedNamingTheFile) {
  std::vector<unsigned char> flipped = bytes_;
  flipped[flipped.size() / 2] ^= 0x40;
  expectRefused("tiny.toml", bad("flipped.ckpt", flipped), "CRC32C");
  expectRefused("tiny.toml", bad("truncated.ckpt", {bytes_.begin(), bytes_.begin() + bytes_.size() / 2}), "truncated");
  // Version 2 with a correct CRC: the version alone is wrong.
  std::vector<unsigned char> version = bytes_;
  const std::uint32_t two = 2;
  std::memcpy(version.data() + 12, &two, 4);
  const std::uint32_t crc = io::crc32c(version.data(), version.size() - 4);
  std::memcpy(version.data() + version.size() - 4, &crc, 4);
  expectRefused("tiny.toml", bad("version.ckpt", version), "version 2");
  const std::string text = "step,fx\n10,0.5\n";
  expectRefused("tiny.toml", bad("text.ckpt", {text.begin(), text.end()}), "not an octoflow checkpoint");
  expectRefused("tiny.toml", "nowhere/tiny_00000010.ckpt", "checkpoint not found");

  // A piece of a checkpoint of two ranks, and a main file whose pieces are missing (made here
  // from the one-rank file; ReliabilityMpi does it with real pieces).
  io::CheckpointFile piece = io::decodeCheckpoint(bytes_.data(), bytes_.size(), "piece");
  piece.header.rank = 1;
  piece.header.ranks = 2;
  piece.records.clear();
  expectRefused("tiny.toml", bad("tiny_00000010.rank0001of0002.piece", io::encodeCheckpoint(piece)),
                "a piece of a checkpoint of 2 ranks: restart from its main file tiny_00000010.ckpt");
  io::CheckpointFile main = io::decodeCheckpoint(bytes_.data(), bytes_.size(), "main");
  main.header.ranks = 2;
  for (int rank : {0, 1})
    main.pieces.push_back({io::checkpointPieceName("tiny", 10, rank, 2), main.arrays.front().box, 1000});
  main.arrays.clear();
  const std::string mainPath = bad("tiny_00000010.ckpt", io::encodeCheckpoint(main));
  expectRefused("tiny.toml", mainPath, "checkpoint piece (listed in " + mainPath + ") not found");
}

TEST_F(ReliabilityBadCheckpoint, CheckpointsOfAnotherCaseOrAtTheEndAreRefused) {
  // Another case of the same solver (another tau; another size), and a case of another solver.
  writeCase("tau.toml", replaced(kTinyCase, "tau = 0.8", "tau = 0.7"));
  writeCase("size.toml", replaced(kTinyCase, "size = [8, 6]", "size = [10, 6]"));
  writeCase("phasefield.toml", kobayashiCase(20));
  for (const char* other : {"tau", "size", "phasefield"})
    ASSERT_NO_FATAL_FAILURE(runOk(std::string("run ") + other + ".toml --backend cpu --quiet --steps 10 --output " + other));
  expectRefused("tiny.toml", "tau/checkpoints/tiny_00000010.ckpt", "a checkpoint of another case");
  expectRefused("tiny.toml", "size/checkpoints/tiny_00000010.ckpt", "a checkpoint of a 10x6x1 grid");
  expectRefused("tiny.toml", "phasefield/checkpoints/crystal_00000010.ckpt",
                "a checkpoint of the phasefield solver, this case runs lbm");
  // A checkpoint at the run's last step, and after it.
  // The octree's: another refinement makes another tree.
  writeCase("octree.toml", amrCase(20));
  writeCase("finer.toml", amrCase(20, 4.0));
  ASSERT_NO_FATAL_FAILURE(runOk("run finer.toml --backend cpu --quiet --steps 2 --output finer"));
  expectRefused("octree.toml", "finer/checkpoints/octree_00000002.ckpt", "a checkpoint of another case");
  expectRefused("tiny.toml", "good/checkpoints/tiny_00000020.ckpt", "nothing left to run");
  expectRefused("tiny.toml", "good/checkpoints/tiny_00000020.ckpt",
                "the checkpoint is at step 20 and the run ends at step 15", " --steps 15");
}

// 6. Signals -----------------------------------------------------------------------------------

namespace {

// The steps until a stop signal, and after it: a run stopped by `signal` at step S, then restarted
// with --steps S+50, writes the files of a run of S+50 steps from scratch.
void expectStopAndGoOn(const fs::path& directory, int signal, const std::string& signalName, int exitCode) {
  std::ofstream(directory / "long.toml") << endlessCase("long", 48, 24);
  BackgroundRun run("run long.toml --backend cpu --output run", directory, directory / "run.log");
  // In its step loop (the handlers installed) once forces.csv has its row of step 100.
  ASSERT_TRUE(run.waitUntil([&] { return csvRows(directory / "run" / "forces.csv") >= 10; }, 15.0)) << run.log();
  ASSERT_EQ(kill(run.pid(), signal), 0);
  const int status = run.finish(30.0);
  ASSERT_TRUE(WIFEXITED(status)) << "status " << status << "\n" << run.log();
  EXPECT_EQ(WEXITSTATUS(status), exitCode) << run.log();
  std::smatch match;
  const std::string log = run.log();
  ASSERT_TRUE(std::regex_search(log, match, std::regex("octoflow: stopped by " + signalName +
                                                       " at step (\\d+); to go on: octoflow run long.toml --restart "
                                                       "(run/checkpoints/long_(\\d+)\\.ckpt)\n")))
      << log;
  const Index stop = std::stoll(match[1].str());
  const std::string checkpoint = match[2].str();
  EXPECT_GE(stop, 100);
  EXPECT_EQ(checkpoint, "run/checkpoints/" + stepFile("long", stop, "ckpt"));
  ASSERT_TRUE(fs::exists(directory / checkpoint)) << log;
  EXPECT_EQ(decodeFile(directory / checkpoint).header.step, stop);

  const std::string steps = " --steps " + std::to_string(stop + 50);
  CommandResult reference = octoflow::testing::runOctoflow("run long.toml --backend cpu --quiet --output reference" + steps, directory);
  ASSERT_EQ(reference.exitCode, 0) << reference.output;
  CommandResult restart = octoflow::testing::runOctoflow(
      "run long.toml --backend cpu --quiet --output run --restart " + checkpoint + steps, directory);
  ASSERT_EQ(restart.exitCode, 0) << restart.output;
  expectSameFiles(filesUnder(directory / "reference"), filesUnder(directory / "run", {"checkpoints"}),
                  "stopped by " + signalName + " at step " + std::to_string(stop) + " and restarted");
}

}  // namespace

TEST_F(Reliability, SigtermStopsWithACheckpointToGoOnFrom) { expectStopAndGoOn(directory_, SIGTERM, "SIGTERM", 143); }

TEST_F(Reliability, SigintStopsWithACheckpointToGoOnFrom) { expectStopAndGoOn(directory_, SIGINT, "SIGINT", 130); }

TEST_F(Reliability, ASecondSignalEndsTheRunAtOnce) {
  // The checkpoint of step 20 goes into a FIFO that is read by nobody: once its first 64 KiB are in
  // the pipe the run is held inside the checkpoint's writing, where a first SIGINT cannot end it.
  std::string text = replaced(endlessCase("held", 64, 64), "[output]\nevery = 100\n", "[output]\nevery = 100\n[checkpoint]\nevery = 20\n");
  writeCase("held.toml", text);
  const fs::path fifo = directory_ / "out" / "checkpoints" / "held_00000020.ckpt.partial";
  fs::create_directories(fifo.parent_path());
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0) << std::strerror(errno);
  const int reader = open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
  ASSERT_GE(reader, 0) << std::strerror(errno);
  BackgroundRun run("run held.toml --backend cpu --output out", directory_, directory_ / "run.log");
  const bool writing = run.waitUntil(
      [&] {
        pollfd poller{reader, POLLIN, 0};
        return poll(&poller, 1, 0) == 1 && (poller.revents & POLLIN);
      },
      15.0);
  ASSERT_TRUE(writing) << "the checkpoint of step 20 was never written\n" << run.log();
  ASSERT_EQ(kill(run.pid(), SIGINT), 0);
  // The first signal handled (no longer pending), the run still held in the checkpoint.
  EXPECT_TRUE(run.waitUntil([&] { return !signalPending(run.pid(), SIGINT); }, 5.0));
  ASSERT_TRUE(run.running()) << run.log();
  ASSERT_EQ(kill(run.pid(), SIGINT), 0);
  const int status = run.finish(10.0);
  close(reader);
  ASSERT_NE(status, -1) << "a second SIGINT did not end the run\n" << run.log();
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGINT) << "status " << status << "\n" << run.log();
  EXPECT_EQ(run.log().find("stopped by"), std::string::npos) << run.log();
  EXPECT_FALSE(fs::exists(directory_ / "out" / "checkpoints" / "held_00000020.ckpt"));
}

// 7. Watchdog ----------------------------------------------------------------------------------

TEST_F(Reliability, TheWatchdogStopsADivergingRunAndKeepsTheLastGoodState) {
  // Without checkpoints the last good state is computed again from the start; with one every 20
  // steps, from the newest before it.
  for (const std::string checkpoints : {"", "[checkpoint]\nevery = 20\n"}) {
    SCOPED_TRACE(checkpoints.empty() ? "from the start" : "from a checkpoint");
    fs::remove_all(directory_ / "out");
    fs::remove_all(directory_ / "again");
    writeCase("unstable.toml", kUnstableCase + checkpoints);
    const CommandResult result = cli("run unstable.toml --backend cpu --output out");
    EXPECT_EQ(result.exitCode, 3) << result.output;
    std::smatch match;
    const std::regex message(
        "octoflow: stopped: the simulation diverged: at step (\\d+) ((density|velocity) = [^\n]* at node "
        "\\((\\d+), (\\d+), (\\d+)\\) \\(rank 0\\): outside the sane range [^;\n]*); the last good state is step "
        "(\\d+) \\((out/checkpoints/unstable_last_good_(\\d+)\\.ckpt)[,)]");
    ASSERT_TRUE(std::regex_search(result.output, match, message)) << result.output;
    const Index bad = std::stoll(match[1].str()), good = std::stoll(match[7].str());
    EXPECT_EQ(bad % 10, 0);
    EXPECT_EQ(good, bad - 10) << "the last good state is the last check passed";
    EXPECT_GT(good, 0);
    EXPECT_LT(std::stoll(match[4].str()), 32);
    EXPECT_LT(std::stoll(match[5].str()), 32);
    EXPECT_EQ(match[6].str(), "0");
    const std::string snapshot = match[8].str();
    EXPECT_EQ(snapshot, "out/checkpoints/" + stepFile("unstable_last_good", good, "ckpt"));
    ASSERT_TRUE(fs::exists(directory_ / snapshot));
    const io::CheckpointFile state = decodeFile(directory_ / snapshot);
    EXPECT_EQ(state.header.step, good);
    EXPECT_EQ(state.header.caseName, "unstable");
    if (OCTOFLOW_CLI_WRITES_VTK) {
      EXPECT_NE(result.output.find(snapshot + ", out/unstable_last_good.pvd)"), std::string::npos) << result.output;
      const std::string regular = fileContents(directory_ / "out" / stepFile("unstable", good, "vti"));
      EXPECT_FALSE(regular.empty());
      EXPECT_TRUE(regular == fileContents(directory_ / "out" / stepFile("unstable_last_good", good, "vti")))
          << "the last good fields differ from those the run wrote at step " << good;
    }
    // The snapshot is the state itself: going on from it diverges at the same step and node.
    const CommandResult again = cli("run unstable.toml --backend cpu --output again --restart " + snapshot);
    EXPECT_EQ(again.exitCode, 3) << again.output;
    EXPECT_NE(again.output.find("diverged: at step " + match[1].str() + " " + match[2].str() + ";"), std::string::npos)
        << again.output;
  }
}

// 8. Output errors -----------------------------------------------------------------------------

namespace {

// What a run cut short by an output error leaves: no temporary or partial file, complete VTK files,
// checkpoints that decode, CSVs of whole rows.
void expectOnlyCompleteFiles(const fs::path& folder) {
  for (const auto& entry : fs::recursive_directory_iterator(folder)) {
    const std::string name = entry.path().filename().string();
    const std::string extension = entry.path().extension().string();
    EXPECT_EQ(name.find(".tmp"), std::string::npos) << entry.path();
    EXPECT_NE(extension, ".partial") << entry.path();
    if (!entry.is_regular_file()) continue;
    const std::string bytes = fileContents(entry.path());
    if (extension == ".vti" || extension == ".vtp" || extension == ".pvd") {
      const auto end = bytes.find_last_not_of(" \n");
      const std::string body = end == std::string::npos ? "" : bytes.substr(0, end + 1);
      EXPECT_TRUE(body.size() >= 10 && body.compare(body.size() - 10, 10, "</VTKFile>") == 0)
          << entry.path() << " is incomplete";
    } else if (extension == ".ckpt") {
      EXPECT_NO_THROW(decodeFile(entry.path())) << entry.path();
    } else if (extension == ".csv") {
      ASSERT_FALSE(bytes.empty()) << entry.path();
      EXPECT_EQ(bytes.back(), '\n') << entry.path() << " ends in a partial row";
      const std::vector<std::string> lines = linesOf(bytes);
      const auto columns = std::count(lines[0].begin(), lines[0].end(), ',');
      for (const std::string& line : lines)
        EXPECT_EQ(std::count(line.begin(), line.end(), ','), columns) << entry.path() << ": " << line;
    }
  }
}

}  // namespace

TEST_F(Reliability, AFileSizeLimitEndsTheRunWithExitFourAndOnlyCompleteFiles) {
  // A 56 x 56 box: its field files pass 64 KiB by step 100, its checkpoints (~105 KB) at once;
  // 24 x 24 with forces every step: forces.csv passes 64 KiB near step 700 (checkpoints fit).
  const auto boxCase = [](int size, int forcesEvery, int checkpointEvery) {
    return "[case]\nname = \"box\"\nsteps = 2000\n[lbm]\nlattice = \"D2Q9\"\nstorage = \"fp16\"\ntau = 0.6\n"
           "[units]\nlength = 0.001\nvelocity = 1.0\n[domain]\nsize = [" +
           std::to_string(size) + ", " + std::to_string(size) + R"(]
[[boundary]]
faces = ["y+"]
type = "moving_wall"
velocity = [0.1, 0.0]
[[obstacle]]
shape = "cylinder"
center = [10.3, 11.7]
radius = 4.0
[forces]
every = )" + std::to_string(forcesEvery) +
           "\nreference_velocity = 0.1\nreference_length = 8.0\n[output]\nevery = 50\n[checkpoint]\nevery = " +
           std::to_string(checkpointEvery) + "\nkeep = 100\n";
  };
  const struct {
    std::string what, text, failing;
  } cases[] = {
      {"field file", boxCase(56, 10, 100), OCTOFLOW_CLI_WRITES_VTK ? "box_00000100.vti" : "checkpoints/box_00000100.ckpt"},
      {"checkpoint", boxCase(56, 10, 50), "checkpoints/box_00000050.ckpt"},
      {"csv", boxCase(24, 1, 100), "forces.csv"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.what);
    const std::string folder = "limited_" + c.what.substr(0, c.what.find(' '));
    writeCase("box.toml", c.text);
    // PMIX_MCA_gds=hash: Open MPI's singleton start (MPI_Init) otherwise writes shared-memory files
    // beyond the limit and fails before octoflow runs.
    const CommandResult result = octoflow::testing::runCommand(
        "PMIX_MCA_gds=hash bash -c \"ulimit -f 64; exec '" + std::string(OCTOFLOW_CLI_PATH) +
            "' run box.toml --backend cpu --quiet --output " + folder + "\"",
        directory_);
    EXPECT_EQ(result.exitCode, 4) << result.output;
    EXPECT_NE(result.output.find("octoflow: error: cannot write " + folder + "/" + c.failing + ": "), std::string::npos)
        << result.output;
    if (c.failing != "forces.csv") EXPECT_FALSE(fs::exists(directory_ / folder / c.failing));
    ASSERT_TRUE(fs::exists(directory_ / folder / "forces.csv"));
    EXPECT_GT(csvRows(directory_ / folder / "forces.csv"), 3);
    expectOnlyCompleteFiles(directory_ / folder);
  }
}

TEST_F(Reliability, AnOutputFolderThatCannotBeMadeIsExitFour) {
  writeCase("tiny.toml", kTinyCase);
  const CommandResult result = cli("run tiny.toml --backend cpu --quiet --output /proc/octoflow_test_out");
  EXPECT_EQ(result.exitCode, 4) << result.output;
  EXPECT_NE(result.output.find("octoflow: error: cannot write /proc/octoflow_test_out"), std::string::npos)
      << result.output;
  // The checkpoint folder likewise, at the first checkpoint.
  writeCase("tiny.toml", kTinyCase + "directory = \"/proc/octoflow_test_checkpoints\"\n");
  const CommandResult checkpoints = cli("run tiny.toml --backend cpu --quiet --output out");
  EXPECT_EQ(checkpoints.exitCode, 4) << checkpoints.output;
  EXPECT_NE(checkpoints.output.find("octoflow: error: cannot write /proc/octoflow_test_checkpoints"), std::string::npos)
      << checkpoints.output;
  expectOnlyCompleteFiles(directory_ / "out");
}
