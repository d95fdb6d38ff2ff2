#pragma once
// Shared by the test programs: GPU presence, running the octoflow program, scratch folders.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "exec/Backend.hpp"
#include "lbm/Lattice.hpp"

namespace octoflow::lbm {
// Test names and messages show the lattice by name.
inline void PrintTo(LatticeKind kind, std::ostream* out) { *out << latticeName(kind); }
}  // namespace octoflow::lbm

namespace octoflow::testing {

// An environment variable set for a scope; what it was comes back after.
class ScopedEnvironment {
public:
  ScopedEnvironment(std::string name, const std::string& value) : name_(std::move(name)) {
    if (const char* previous = std::getenv(name_.c_str())) previous_ = previous, hadValue_ = true;
    setenv(name_.c_str(), value.c_str(), 1);
  }
  ~ScopedEnvironment() {
    if (hadValue_)
      setenv(name_.c_str(), previous_.c_str(), 1);
    else
      unsetenv(name_.c_str());
  }
  ScopedEnvironment(const ScopedEnvironment&) = delete;
  ScopedEnvironment& operator=(const ScopedEnvironment&) = delete;

private:
  std::string name_, previous_;
  bool hadValue_ = false;
};

// True when a CUDA device is usable. Without one a GPU test skips with the reason, unless
// OCTOFLOW_REQUIRE_GPU=1 says this machine must have one: then it fails, so that nothing
// passes on a GPU machine by running nothing.
inline bool gpuRequired() {
  const char* value = std::getenv("OCTOFLOW_REQUIRE_GPU");
  return value && std::string(value) == "1";
}

struct CommandResult {
  int exitCode = -1;
  std::string output;  // stdout and stderr together
};

// Runs a shell command in `workingDirectory` and collects what it prints.
inline CommandResult runCommand(const std::string& command, const std::filesystem::path& workingDirectory) {
  CommandResult result;
  const std::string full = "cd '" + workingDirectory.string() + "' && " + command + " 2>&1";
  FILE* pipe = popen(full.c_str(), "r");
  if (!pipe) return result;
  char buffer[4096];
  while (std::fgets(buffer, sizeof buffer, pipe)) result.output += buffer;
  const int status = pclose(pipe);
  result.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

// The environment of every mpirun a test starts: root allowed (CI containers), and hwloc kept
// away from X displays (its OpenGL component connects to each X server it finds while mapping the
// machine; another test's virtual display closing meanwhile ends mpirun: "X connection to :0
// broken").
constexpr const char* kMpiEnvironment =
    "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 HWLOC_COMPONENTS=-gl";

#ifdef OCTOFLOW_CLI_PATH
// Runs the octoflow program with `arguments` in `workingDirectory`; with `ranks` > 0 under
// `mpirun -np ranks` (one OpenMP thread a rank) where the test target knows mpiexec
// (OCTOFLOW_MPIEXEC), else as one process.
inline CommandResult runOctoflow(const std::string& arguments, const std::filesystem::path& workingDirectory,
                                 int ranks = 0) {
  std::string launcher;
#ifdef OCTOFLOW_MPIEXEC
  if (ranks > 0)
    launcher = kMpiEnvironment + std::string(" '") + OCTOFLOW_MPIEXEC +
               "' --oversubscribe -np " + std::to_string(ranks) + " -x OMP_NUM_THREADS=1 ";
#else
  (void)ranks;
#endif
  return runCommand(launcher + "'" + std::string(OCTOFLOW_CLI_PATH) + "' " + arguments, workingDirectory);
}
#endif

// A file's bytes ("" when it cannot be read).
inline std::string fileContents(const std::filesystem::path& path) {
  std::ifstream file(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(file), {});
}

// The first occurrence of `from` in `text` replaced by `to` (a test failure if it is absent).
inline std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  EXPECT_NE(at, std::string::npos) << "'" << from << "' not in the text";
  return at == std::string::npos ? text : text.replace(at, from.size(), to);
}

// A periodic 2D channel of 8 x 6 nodes between walls, driven by a body force (20 steps): the
// smallest case that runs. Tests append [output], [checkpoint], ...
inline std::string tinyChannelCase() {
  return R"([case]
name = "tiny"
steps = 20
[lbm]
lattice = "D2Q9"
tau = 0.8
body_force = [1e-6, 0.0]
[domain]
size = [8, 6]
periodic = [true, false]
[[boundary]]
faces = ["y-", "y+"]
type = "wall"
)";
}

// A lid-driven box that BGK cannot hold (tau 0.501, a lid at 0.4): it diverges between steps 30
// and 40. Tests append [output], [watchdog], ...
inline std::string unstableLidCase() {
  return R"([case]
name = "unstable"
steps = 2000
[lbm]
lattice = "D2Q9"
tau = 0.501
[domain]
size = [32, 32]
[[boundary]]
faces = ["y+"]
type = "moving_wall"
velocity = [0.4, 0.0]
)";
}

// Case-file text of a sphere in a 3D channel, `length` x length/2 x length/2 nodes: a uniform
// inlet of 0.05 at x-, an outflow at x+, periodic across (y, z); the sphere (radius 0.11 length)
// a third of the way along, off the grid's symmetry. Tests append [output], [tracers], ...
inline std::string sphereChannelCase(const std::string& name, int steps, int length) {
  const double quarter = 0.25 * length;
  char text[700];
  std::snprintf(text, sizeof text,
                "[case]\nname = \"%s\"\nsteps = %d\n[lbm]\nlattice = \"D3Q19\"\ntau = 0.6\n[domain]\n"
                "size = [%d, %d, %d]\nperiodic = [false, true, true]\n[[boundary]]\nfaces = [\"x-\"]\n"
                "type = \"velocity\"\nvelocity = [0.05, 0.0, 0.0]\n[[boundary]]\nfaces = [\"x+\"]\n"
                "type = \"outflow\"\n[[obstacle]]\nshape = \"sphere\"\ncenter = [%.2f, %.2f, %.2f]\n"
                "radius = %.2f\n",
                name.c_str(), steps, length, length / 2, length / 2, 0.32 * length + 0.06, quarter - 0.4,
                quarter - 0.6, 0.11 * length);
  return text;
}

// Case-file text of a sphere (radius 4) on a 2-level octree (case.solver = "lbm-amr"), 32 x 33 x 33
// level-0 nodes, periodic along x and driven along it by a body force, walls across: the leaves
// within `refineDistance` level-0 spacings of the sphere's surface refined. Tests append tables.
inline std::string octreeSphereCase(const std::string& name, int steps, double refineDistance = 2.0) {
  return "[case]\nname = \"" + name + "\"\nsolver = \"lbm-amr\"\nsteps = " + std::to_string(steps) + R"(
[domain]
size = [32, 33, 33]
periodic = [true, false, false]
[lbm]
lattice = "D3Q19"
tau = 0.6
body_force = [2.0e-5, 0.0, 0.0]
[[obstacle]]
shape = "sphere"
center = [12.0, 16.0, 16.0]
radius = 4.0
[amr]
max_level = 1
refine_distance = )" + std::to_string(refineDistance) + "\n";
}

// A [tracers] table with one plane source across a sphereChannelCase channel, one node from its
// inlet: n x n tracers every `releaseEvery` steps.
inline std::string planeTracers(int length, int n, int releaseEvery) {
  const int across = length / 2 - 2;
  return "[tracers]\n[[tracers.source]]\ntype = \"plane\"\ncorner = [1.0, 1.0, 1.0]\nedge1 = [0.0, " +
         std::to_string(across) + ".0, 0.0]\nedge2 = [0.0, 0.0, " + std::to_string(across) + ".0]\ncount = [" +
         std::to_string(n) + ", " + std::to_string(n) + "]\nrelease_every = " + std::to_string(releaseEvery) + "\n";
}

// The numeric rows of a reference CSV in data/reference/ ('#' comment lines and the header
// line skipped), one vector of columns per row.
inline std::vector<std::vector<double>> readReferenceTable(const std::string& name) {
  std::ifstream file(std::string(OCTOFLOW_SOURCE_DIR) + "/data/reference/" + name);
  EXPECT_TRUE(file.good()) << "reference file " << name << " missing";
  std::vector<std::vector<double>> rows;
  std::string line;
  bool header = true;
  while (std::getline(file, line)) {
    if (line.empty() || line[0] == '#') continue;
    if (header) {
      header = false;
      continue;
    }
    std::vector<double> row;
    std::stringstream cells(line);
    std::string cell;
    while (std::getline(cells, cell, ',')) row.push_back(std::strtod(cell.c_str(), nullptr));
    rows.push_back(row);
  }
  return rows;
}

// A fixture whose tests each get an empty folder under the system's temporary directory.
class ScratchFolderTest : public ::testing::Test {
protected:
  void SetUp() override {
    const auto* test = ::testing::UnitTest::GetInstance()->current_test_info();
    directory_ = std::filesystem::temp_directory_path() /
                 ("octoflow_" + std::string(test->test_suite_name()) + "_" + test->name());
    std::filesystem::remove_all(directory_);
    std::filesystem::create_directories(directory_);
  }
  void TearDown() override { if (!std::getenv("OCTOFLOW_KEEP_SCRATCH")) std::filesystem::remove_all(directory_); }
  std::filesystem::path directory_;
};

}  // namespace octoflow::testing

#define OCTO_SKIP_WITHOUT_GPU()                                                               \
  do {                                                                                        \
    std::string octoWhyNoGpu;                                                                 \
    if (::octoflow::exec::cudaDevices(&octoWhyNoGpu).empty()) {                               \
      if (::octoflow::testing::gpuRequired())                                                 \
        FAIL() << "OCTOFLOW_REQUIRE_GPU=1 but no usable CUDA device: " << octoWhyNoGpu;       \
      else                                                                                    \
        GTEST_SKIP() << "no CUDA device (" << octoWhyNoGpu << "); set OCTOFLOW_REQUIRE_GPU=1 to fail instead"; \
    }                                                                                         \
  } while (0)
