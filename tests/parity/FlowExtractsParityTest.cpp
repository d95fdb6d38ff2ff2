// The extracts of a run made on the GPU beside a CUDA solver (tracers moved in the device's
// velocity field, the speed surface extracted from it) against the same made beside a CPU solver:
// what `octoflow run` does on each backend.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "TestSupport.hpp"
#include "insitu/FlowExtracts.hpp"
#include "io/CaseFile.hpp"
#include "lbm/LbmCase.hpp"
#include "lbm/LbmSimulation.hpp"
#include "lbm/TracerFlow.hpp"
#include "lbm/UniformSolver.hpp"

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
// a move); FP16 storage; a lid-driven cavity (a moving wall's rule reads the boundary moments; a
// body force shifts every velocity); a temporally blocked run (walls and a body force, moves of the
// launch's steps).
namespace {

struct TracerFlowCase {
  const char* name;
  std::string text;
};

std::vector<TracerFlowCase> tracerFlowCases() {
  using octoflow::testing::replaced;
  const std::string sphere = octoflow::testing::sphereChannelCase("sphere", 240, 40) +
                             "[tracers]\n[[tracers.source]]\ntype = \"plane\"\ncorner = [0.5, 0.5, 0.5]\n"
                             "edge1 = [0.0, 18.0, 0.0]\nedge2 = [0.0, 0.0, 18.0]\ncount = [6, 6]\n"
                             "release_every = 30\n";
  const std::string cavity = R"([case]
name = "cavity"
steps = 300
[lbm]
lattice = "D2Q9"
tau = 0.6
body_force = [0.0, -1e-6]
[domain]
size = [64, 64]
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
from = [2.5, 56.0]
to = [61.5, 63.0]
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
          {"sphere, tracers over half the grid", replaced(sphere, "count = [6, 6]", "count = [60, 60]")},
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

// Tracer moves riding on the next step (lbm/VelocityTap.hpp): a move of one RK2 step waits for the
// step, which records the velocity at the nodes the tracers' last move marked, and is made from
// those values. The same tracers moved from the populations every time (each move made at once:
// settleTracers) follow the same paths: bit for bit on the CPU, to rounding on the GPU. The tap
// serves the moves of one step after the first (and after each release); moves of several steps,
// temporally blocked runs and tracers whose marks would cover half the grid are moved from the
// populations (the last: the sphere's tracers on a 40^3 grid).
namespace {

// Two solvers of one case, each with its run's tracers: one whose moves the tap may serve, one
// whose moves the test makes at once from the populations (settleTracers after each).
struct TappedAndReference {
  const io::CaseDescription& d;
  const lbm::LbmCase& lbmCase;
  lbm::UniformSolver tappedSolver, referenceSolver;
  std::unique_ptr<sim::Simulation> tapped, reference;
  std::unique_ptr<insitu::FlowExtracts> tappedTracers, referenceTracers;

  TappedAndReference(const io::CaseDescription& description, exec::Backend backend)
      : d(description), lbmCase(lbm::lbmCaseOf(d)), tappedSolver(lbmCase.config, backend),
        referenceSolver(lbmCase.config, backend) {
    tappedSolver.initialize();
    referenceSolver.initialize();
    tapped = lbm::wrapUniformSolver(d, lbmCase, tappedSolver);
    reference = lbm::wrapUniformSolver(d, lbmCase, referenceSolver);
    tappedTracers = std::make_unique<insitu::FlowExtracts>(d, *tapped);
    referenceTracers = std::make_unique<insitu::FlowExtracts>(d, *reference);
  }
};

void expectTappedMovesAsFromThePopulations(exec::Backend backend) {
  for (const TracerFlowCase& c : tracerFlowCases()) {
    SCOPED_TRACE(std::string(c.name) + " on " + exec::backendName(backend));
    const io::CaseDescription d = io::parseCase(c.text, "tracers.toml");
    TappedAndReference runs(d, backend);
    const lbm::LbmCase& lbmCase = runs.lbmCase;
    lbm::UniformSolver &tappedSolver = runs.tappedSolver, &referenceSolver = runs.referenceSolver;
    sim::Simulation &tapped = *runs.tapped, &reference = *runs.reference;
    insitu::FlowExtracts &tappedTracers = *runs.tappedTracers, &referenceTracers = *runs.referenceTracers;
    // A move is tapped where the tap serves it (one step, not blocked, marks on at most half the
    // grid: UniformSolver::tapCanServe) and the move before marked the same tracers (no release).
    const bool tapServesMoves = d.tracers.every == 1 && !lbmCase.config.blocking.enabled();
    Index moves = 0, expectedTapped = 0;
    for (Index step = 0; step < d.steps; step += d.tracers.every) {
      const bool releasing = d.tracers.particles.sources[0].releasesAt(step);
      tappedTracers.releaseTracers(step);
      if (tapServesMoves && !releasing && 27 * tappedTracers.released() <= tappedSolver.nodeCount() / 2)
        ++expectedTapped;
      referenceTracers.releaseTracers(step);
      tappedTracers.moveTracers(static_cast<int>(d.tracers.every));
      referenceTracers.moveTracers(static_cast<int>(d.tracers.every));
      reference.settleTracers();
      tapped.advance(d.tracers.every);
      reference.advance(d.tracers.every);
      ++moves;
    }
    // The marks: 27 nodes at most a live tracer, and the other mask clear (each move clears it).
    const std::array<Index, 2> marks = tappedSolver.tapMarks();
    const particles::TracerView a = tappedTracers.tracers(), b = referenceTracers.tracers();
    EXPECT_LE(marks[0], 27 * a.count);
    EXPECT_EQ(marks[1], 0);
    if (tappedSolver.tappedMoves() > 0) EXPECT_GT(marks[0], 0);
    ASSERT_GT(a.count, 40);
    ASSERT_EQ(a.count, b.count);
    double worst = 0.0;
    for (Index n = 0; n < a.count; ++n) {
      ASSERT_EQ(a.ids[n], b.ids[n]);
      for (int axis = 0; axis < 3; ++axis)
        worst = std::max(worst, std::fabs(static_cast<double>(a.positions[3 * n + axis] - b.positions[3 * n + axis])));
    }
    EXPECT_EQ(referenceSolver.tappedMoves(), 0);
    EXPECT_EQ(tappedSolver.tappedMoves(), expectedTapped);
    if (tapServesMoves && std::string(c.name).find("half") == std::string::npos)
      EXPECT_GT(tappedSolver.tappedMoves(), moves / 2);
    if (backend == exec::Backend::Cpu)
      EXPECT_EQ(worst, 0.0);
    else
      EXPECT_LT(worst, 1e-5);
    std::printf("%s on %s: %lld of %lld moves tapped, %lld tracers, max |tapped - populations| position %.3g nodes\n",
                c.name, exec::backendName(backend), static_cast<long long>(tappedSolver.tappedMoves()),
                static_cast<long long>(moves), static_cast<long long>(a.count), worst);
  }
}

// Tracers moved by the tracer set itself in between (FlowExtracts::moveInVelocityField) are not
// where the solver's marks were made for them: the next move on the solver is made from the
// populations, not tapped with marks around places the tracers have left (marks that need not
// cover the nodes it reads: a tracer reading an unrecorded node is retired). The same sequence
// with every solver move made at once from the populations gives the same tracers.
void expectTracersMovedElsewhereAreNotTappedWithStaleMarks(exec::Backend backend) {
  const io::CaseDescription d = io::parseCase(tracerFlowCases()[0].text, "tracers.toml");
  TappedAndReference runs(d, backend);
  const lbm::UniformSolver& tappedSolver = runs.tappedSolver;
  sim::Simulation &tapped = *runs.tapped, &reference = *runs.reference;
  insitu::FlowExtracts &tappedTracers = *runs.tappedTracers, &referenceTracers = *runs.referenceTracers;
  tappedTracers.releaseTracers(0);
  referenceTracers.releaseTracers(0);
  Index tappedBeforeMove12 = 0;
  for (Index step = 0; step < 24; ++step) {
    const bool inField = step >= 8 && step < 12;  // four moves by the tracer set in between
    tappedTracers.moveInVelocityField(inField);
    referenceTracers.moveInVelocityField(inField);
    if (step == 12) tappedBeforeMove12 = tappedSolver.tappedMoves();
    tappedTracers.moveTracers(1);
    referenceTracers.moveTracers(1);
    reference.settleTracers();
    tapped.advance(1);
    reference.advance(1);
    if (step == 12) EXPECT_EQ(tappedSolver.tappedMoves(), tappedBeforeMove12);  // made from the populations
  }
  EXPECT_EQ(tappedSolver.tappedMoves(), 7 + 11);  // moves 1-7 and 13-23: each after one from the populations
  const particles::TracerView a = tappedTracers.tracers(), b = referenceTracers.tracers();
  ASSERT_EQ(a.count, 36);
  ASSERT_EQ(a.count, b.count);
  for (Index n = 0; n < 3 * a.count; ++n)
    if (backend == exec::Backend::Cpu)
      ASSERT_EQ(a.positions[n], b.positions[n]) << "coordinate " << n;
    else
      ASSERT_NEAR(a.positions[n], b.positions[n], 1e-5) << "coordinate " << n;
}

// Samples a constant velocity `v` at marked nodes only: counts the nodes asked for that are not.
struct MarkedNodes {
  const std::vector<std::uint32_t>& mask;
  Extent extent;
  float v[3];
  int* unmarked;
  bool solidAt(Index, Index, Index) const { return false; }
  void velocityAt(Index i, Index j, Index k, float (&u)[3]) const {
    const Index node = extent.linear(i, j, k);
    if (!((mask[static_cast<std::size_t>(node >> 5)] >> (node & 31)) & 1u)) ++*unmarked;
    for (int a = 0; a < 3; ++a) u[a] = v[a];
  }
};

}  // namespace

TEST(FlowExtracts, TappedTracerMovesMatchMovesFromThePopulations) {
  expectTappedMovesAsFromThePopulations(exec::Backend::Cpu);
}

TEST(FlowExtractsParity, TappedTracerMovesOnCudaMatchMovesFromThePopulations) {
  OCTO_SKIP_WITHOUT_GPU();
  expectTappedMovesAsFromThePopulations(exec::Backend::Cuda);
}

TEST(FlowExtracts, TracersMovedElsewhereAreNotTappedWithStaleMarks) {
  expectTracersMovedElsewhereAreNotTappedWithStaleMarks(exec::Backend::Cpu);
}

TEST(FlowExtractsParity, TracersMovedElsewhereOnCudaAreNotTappedWithStaleMarks) {
  OCTO_SKIP_WITHOUT_GPU();
  expectTracersMovedElsewhereAreNotTappedWithStaleMarks(exec::Backend::Cuda);
}

// What the tap's marks promise (lbm/TracerFlow.hpp, TapMarker): an RK2 step of dt = 1 from a
// marked place, in any velocity of at most one node a step along each axis, samples marked nodes
// only; random places (on nodes and at the grid's faces too) and velocities, in 3D and 2D. At 2.5
// nodes a step it does not (what the stamps then catch), and a tracer marks at most 27 nodes.
TEST(FlowExtracts, TapMarksCoverEveryNodeARk2StepSamples) {
  for (const Extent extent : {Extent{9, 7, 6}, Extent{9, 7, 1}}) {
    SCOPED_TRACE(extent.nz == 1 ? "2D" : "3D");
    std::vector<std::uint32_t> mask(static_cast<std::size_t>(lbm::tapMaskWords(extent.cellCount())));
    std::uint64_t seed = 12345;
    const auto uniform = [&seed](float low, float high) {
      seed = seed * 6364136223846793005ull + 1442695040888963407ull;
      return low + (high - low) * static_cast<float>(seed >> 40) / static_cast<float>(1ull << 24);
    };
    int unmarkedWithinReach = 0, unmarkedBeyond = 0;
    for (int trial = 0; trial < 4000; ++trial) {
      float p[3];
      for (int a = 0; a < 3; ++a) {
        const float last = static_cast<float>(extent.size(a) - 1);
        p[a] = trial % 4 == 0 ? std::floor(uniform(0.0f, last + 1.0f)) : uniform(0.0f, last);
        p[a] = std::min(p[a], last);
      }
      std::fill(mask.begin(), mask.end(), 0u);
      lbm::TapMarker{mask.data(), extent}.mark(p);
      int marks = 0;
      for (const std::uint32_t word : mask) marks += __builtin_popcount(word);
      EXPECT_LE(marks, 27);
      for (const float reach : {1.0f, 2.5f}) {
        int& unmarked = reach == 1.0f ? unmarkedWithinReach : unmarkedBeyond;
        MarkedNodes nodes{mask, extent, {uniform(-reach, reach), uniform(-reach, reach), uniform(-reach, reach)}, &unmarked};
        if (extent.nz == 1) nodes.v[2] = 0.0f;
        particles::TrilinearSampler<MarkedNodes> sampler(nodes, extent);
        float position[3] = {p[0], p[1], p[2]}, velocity[3];
        particles::advanceTracer(sampler, particles::Integrator::Rk2, 1.0f, position, velocity);
      }
    }
    EXPECT_EQ(unmarkedWithinReach, 0);
    EXPECT_GT(unmarkedBeyond, 0) << "the test sees a node left unmarked";
  }
}
