// The extracts of a run made on the GPU beside a CUDA solver (tracers moved in the device's
// velocity field, the speed surface extracted from it) against the same made beside a CPU solver:
// what `octoflow run` does on each backend.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "TestSupport.hpp"
#include "insitu/FlowExtracts.hpp"
#include "io/CaseFile.hpp"

using namespace octoflow;

namespace {

// Two runs of case `d` side by side, tracers released and moved as the run loop does it
// (apps/RunCommand.cpp), to the case's last step.
void runSideBySide(const io::CaseDescription& d, insitu::FlowExtracts& first, sim::Simulation& firstSolver,
                   insitu::FlowExtracts& second, sim::Simulation& secondSolver) {
  for (Index step = 0; step < d.steps; step += d.tracers.every) {
    for (auto* extracts : {&first, &second}) {
      extracts->releaseTracers(step);
      extracts->moveTracers(static_cast<int>(d.tracers.every));
    }
    firstSolver.advance(d.tracers.every);
    secondSolver.advance(d.tracers.every);
  }
}

}  // namespace

TEST(FlowExtractsParity, CudaRunMatchesTheCpuRun) {
  OCTO_SKIP_WITHOUT_GPU();
  using octoflow::testing::replaced;
  const io::CaseDescription d = io::parseCase(
      octoflow::testing::sphereChannelCase("sphere", 200, 48) +
          replaced(octoflow::testing::planeTracers(48, 12, 20), "[tracers]\n", "[tracers]\nevery = 2\n") +
          "[surface]\nfield = \"speed\"\nlevel = 0.04\n",
      "sphere.toml");
  const auto cpuSolver = d.solverCase->create(d, {exec::Backend::Cpu, false});
  const auto cudaSolver = d.solverCase->create(d, {exec::Backend::Cuda, false});
  insitu::FlowExtracts cpu(d, *cpuSolver), cuda(d, *cudaSolver);
  ASSERT_TRUE(cuda.movesOnDevice());
  runSideBySide(d, cpu, *cpuSolver, cuda, *cudaSolver);
  const particles::TracerView a = cpu.tracers(), b = cuda.tracers();
  ASSERT_GT(a.count, 500);
  ASSERT_EQ(a.count, b.count);
  double worstTracer = 0.0;
  for (Index n = 0; n < a.count; ++n) {
    ASSERT_EQ(a.ids[n], b.ids[n]);
    for (int axis = 0; axis < 3; ++axis)
      worstTracer = std::max(worstTracer, std::fabs(static_cast<double>(a.positions[3 * n + axis] - b.positions[3 * n + axis])));
  }
  EXPECT_LT(worstTracer, 1e-3);  // the flows differ by rounding; paths by its growth over 200 steps
  const insitu::Surface s = cpu.surface(), t = cuda.surface();
  ASSERT_GT(s.triangleCount, 1000);
  // Nodes near the level may fall on either side of it by rounding: counts agree to a few.
  EXPECT_NEAR(static_cast<double>(s.triangleCount), static_cast<double>(t.triangleCount), 0.002 * s.triangleCount);
  std::printf("run extracts: %lld tracers, max |cuda - cpu| position %.3g nodes; surface %lld vs %lld triangles\n",
              static_cast<long long>(a.count), worstTracer, static_cast<long long>(s.triangleCount),
              static_cast<long long>(t.triangleCount));
}

// Tracers moved by the solver from its populations (sim::Simulation::moveTracers: the velocity at
// the corners of each tracer's cell, bulk and boundary nodes alike) against the same tracers moved
// in the velocity field the macroscopic pass computes: the same velocities, so the same paths, bit
// for bit on the CPU (one function computes both) and to rounding on the GPU (nvcc may contract the
// two inlined copies differently). Cases: tracers released at an inlet through its boundary nodes,
// past a sphere to an outflow face (D3Q19, moves of 1 and 3 steps: both parities at the start of
// a move); FP16 storage; a lid-driven cavity (a moving wall's rule reads the boundary moments);
// a temporally blocked run (walls and a body force, moves of the launch's steps).
namespace {

struct TracerFlowCase {
  const char* name;
  std::string text;
};

std::vector<TracerFlowCase> tracerFlowCases() {
  using octoflow::testing::replaced;
  const std::string sphere = octoflow::testing::sphereChannelCase("sphere", 240, 40) +
                             "[tracers]\n[[tracers.source]]\ntype = \"plane\"\ncorner = [0.5, 0.5, 0.5]\n"
                             "edge1 = [0.0, 18.0, 0.0]\nedge2 = [0.0, 0.0, 18.0]\ncount = [12, 12]\n"
                             "release_every = 30\n";
  const std::string cavity = R"([case]
name = "cavity"
steps = 300
[lbm]
lattice = "D2Q9"
tau = 0.6
[domain]
size = [48, 48]
periodic = [false, false]
[[boundary]]
faces = ["x-", "x+", "y-", "y+"]
type = "wall"
[[boundary]]
faces = ["y+"]
type = "moving_wall"
velocity = [0.1, 0.0]
[tracers]
[[tracers.source]]
type = "line"
from = [2.5, 40.0]
to = [45.5, 47.0]
count = 60
)";
  const std::string blocked = R"([case]
name = "blocked"
steps = 240
[lbm]
lattice = "D2Q9"
tau = 0.7
body_force = [2e-5, 0.0]
[lbm.blocking]
shared_steps = 4
[domain]
size = [70, 37]
periodic = [true, false]
[[boundary]]
faces = ["y-", "y+"]
type = "wall"
[[obstacle]]
shape = "cylinder"
center = [20.0, 17.5]
radius = 5.0
[tracers]
every = 4
[[tracers.source]]
type = "line"
from = [1.0, 0.2]
to = [1.0, 36.0]
count = 50
release_every = 40
)";
  return {{"sphere, moves of 1 step", sphere},
          {"sphere, moves of 3 steps", replaced(sphere, "[tracers]\n", "[tracers]\nevery = 3\n")},
          {"sphere, FP16 storage", replaced(sphere, "tau = 0.6\n", "tau = 0.6\nstorage = \"fp16\"\n")},
          {"lid-driven cavity", cavity},
          {"temporal blocking", blocked}};
}

void expectTracersSampledAsInTheField(exec::Backend backend) {
  for (const TracerFlowCase& c : tracerFlowCases()) {
    SCOPED_TRACE(std::string(c.name) + " on " + exec::backendName(backend));
    const io::CaseDescription d = io::parseCase(c.text, "tracers.toml");
    const auto sampling = d.solverCase->create(d, {backend, false});
    const auto fielded = d.solverCase->create(d, {backend, false});
    insitu::FlowExtracts fromPopulations(d, *sampling), inField(d, *fielded);
    inField.moveInVelocityField(true);
    ASSERT_TRUE(sampling->moveTracers(particles::TracerMove{})) << "the LBM samples its own flow";
    runSideBySide(d, fromPopulations, *sampling, inField, *fielded);
    const particles::TracerView a = fromPopulations.tracers(), b = inField.tracers();
    ASSERT_GT(a.count, 40);
    ASSERT_EQ(a.count, b.count);
    double worst = 0.0, travelled = 0.0;
    for (Index n = 0; n < a.count; ++n) {
      ASSERT_EQ(a.ids[n], b.ids[n]);
      for (int axis = 0; axis < 3; ++axis) {
        worst = std::max(worst, std::fabs(static_cast<double>(a.positions[3 * n + axis] - b.positions[3 * n + axis])));
        travelled = std::max(travelled, std::fabs(static_cast<double>(a.velocities[3 * n + axis])));
      }
    }
    EXPECT_GT(travelled, 1e-3) << "the tracers move";
    if (backend == exec::Backend::Cpu)
      EXPECT_EQ(worst, 0.0);
    else
      EXPECT_LT(worst, 1e-4);
    std::printf("%s on %s: %lld tracers alive of %lld, max |populations - field| position %.3g nodes\n", c.name,
                exec::backendName(backend), static_cast<long long>(a.count),
                static_cast<long long>(fromPopulations.released()), worst);
  }
}

}  // namespace

TEST(FlowExtracts, TracersSampledFromThePopulationsMoveAsInTheVelocityField) {
  expectTracersSampledAsInTheField(exec::Backend::Cpu);
}

TEST(FlowExtractsParity, TracersSampledFromThePopulationsOnCudaMoveAsInTheVelocityField) {
  OCTO_SKIP_WITHOUT_GPU();
  expectTracersSampledAsInTheField(exec::Backend::Cuda);
}
