// The 2D incompressible Navier-Stokes solver ("ns2d") against analytic and published results, on
// the CPU reference: Taylor-Green decay (second order on two grids), the lid-driven cavity at
// Re = 100 (Ghia et al. 1982), the multigrid's convergence factor, and the cylinder at Re = 100
// (Strouhal number and mean drag against Williamson 1996 and Park et al. 1998).
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "GhiaCavity.hpp"
#include "NsTestSupport.hpp"
#include "TestSupport.hpp"
#include "insitu/FlowExtracts.hpp"

using namespace octoflow;

namespace {

const double kPi = 3.14159265358979323846;

// The largest |u - u_exact| of the decaying vortex u = sin x cos y e^(-2 nu t),
// v = -cos x sin y e^(-2 nu t) on [0, 2 pi]^2 at t = 1, Re = 10, after `steps` steps.
double taylorGreenError(int n, int steps) {
  char keys[256];
  std::snprintf(keys, sizeof keys, "reynolds = 10\nsize = [%.17g, %.17g]\ndt = %.17g\ninitial = \"taylor-green\"\n",
                2.0 * kPi, 2.0 * kPi, 1.0 / steps);
  auto run = octoflow::testing::startNs(octoflow::testing::nsCase(n, n, keys, "periodic = [true, true]\n"));
  run->simulation->advance(steps);
  const float* velocity = run->simulation->fetchFields({"velocity"}).values("velocity");
  const double decay = std::exp(-2.0 * 0.1 * 1.0), h = 2.0 * kPi / n;
  double worst = 0.0;
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) {
      const double x = (i + 0.5) * h, y = (j + 0.5) * h;
      const double u = std::sin(x) * std::cos(y) * decay, v = -std::cos(x) * std::sin(y) * decay;
      worst = std::max({worst, std::abs(velocity[3 * (j * n + i)] - u), std::abs(velocity[3 * (j * n + i) + 1] - v)});
    }
  std::printf("Taylor-Green %d^2, %d steps: max error %.3e\n", n, steps, worst);
  return worst;
}

}  // namespace

// dt falls with h^2 (the semi-Lagrangian scheme's interpolation error goes as h^4 / dt, its
// departure points' as dt), so every error term is O(h^2).
TEST(NsTaylorGreen, DecaysWithSecondOrderErrorOnTwoGrids) {
  const double coarse = taylorGreenError(32, 50), fine = taylorGreenError(64, 200);
  const double order = std::log2(coarse / fine);
  RecordProperty("order", std::to_string(order));
  EXPECT_GT(order, 1.8);
  EXPECT_LT(fine, 3e-3);  // of the amplitude 0.82
}

TEST(NsCavity, Re100MatchesGhiaCentreLines) {
  const int n = 64;
  auto run = octoflow::testing::startNs(octoflow::testing::nsCase(n, n, R"(reynolds = 100
size = [1.0, 1.0]
cfl = 0.25
[ns.boundary]
west = "wall"
east = "wall"
south = "wall"
north = "lid"
)"));
  run->simulation->advance(5120);  // t = 20 lid passes: steady
  const float* velocity = run->simulation->fetchFields({"velocity"}).values("velocity");
  const octoflow::testing::CavityErrors errors = octoflow::testing::compareWithGhia(n, velocity, 1.0, 1);
  std::printf("ns2d cavity Re 100, %dx%d: max |u - Ghia| %.4f, max |v - Ghia| %.4f\n", n, n, errors.maxU, errors.maxV);
  RecordProperty("max_u_error", std::to_string(errors.maxU));
  RecordProperty("max_v_error", std::to_string(errors.maxV));
  // Ghia's grid is 129^2: 1 % of the lid speed.
  EXPECT_LT(errors.maxU, 0.01);
  EXPECT_LT(errors.maxV, 0.01);
}

namespace {

std::string cylinderCase(int nx, int ny, double length, double cfl) {
  char keys[512];
  std::snprintf(keys, sizeof keys, R"(reynolds = 100
size = [%g, %g]
cfl = %g
[ns.cylinder]
centre = [%g, %g]
diameter = 1.0
)",
                length, length * ny / nx, cfl, length / 4.0, 0.5 * length * ny / nx);
  return octoflow::testing::nsCase(nx, ny, keys) + "[diagnostics]\nevery = 1\n";
}

}  // namespace

// Every step's pressure equation is solved to 1e-5 of its first residual, each V-cycle (one red-
// black SOR sweep before the coarse correction and two after, residuals summed over four cells,
// bilinear corrections) taking the residual down by 10 or more.
TEST(NsMultigrid, EachCycleReducesTheResidualTenfold) {
  auto run = octoflow::testing::startNs(cylinderCase(256, 128, 32.0, 0.25));
  const sim::DiagnosticsLog log = run->simulation->diagnosticsLog();
  const auto column = [&](const char* name) {
    return static_cast<std::size_t>(std::find(log.columns.begin(), log.columns.end(), name) - log.columns.begin());
  };
  double worstFactor = 0.0;
  for (int step = 0; step < 40; ++step) {
    run->simulation->advance(1);
    const std::vector<double> row = run->simulation->diagnostics();
    const double cycles = row[column("multigrid_cycles")], reduction = row[column("residual_reduction")];
    ASSERT_GE(cycles, 1.0);
    EXPECT_LE(reduction, 1e-5) << "step " << step + 1;
    worstFactor = std::max(worstFactor, std::pow(reduction, 1.0 / cycles));
  }
  std::printf("multigrid: worst convergence factor a cycle %.4f\n", worstFactor);
  RecordProperty("convergence_factor", std::to_string(worstFactor));
  EXPECT_LE(worstFactor, 0.1);
}

// Re = 100 with the cylinder 12 cells across, in a channel of 32 x 16 diameters (slip sides,
// blockage 1/16): the wake sheds from the initial perturbation and settles by t = 60; the Strouhal
// number of the last lift period and the mean drag of the last 30 time units against the
// unbounded cylinder's St = 0.164 (Williamson 1996) / 0.165 and C_D = 1.33 (Park, Kwon & Choi
// 1998). The penalised body is first order in h and the walls add a little: C_D comes from above
// (1.41, 1.40, 1.375 at 8, 12, 16 cells across; docs/VALIDATION.md).
TEST(NsCylinder, Re100SheddingFrequencyAndDragMatchPublishedValues) {
  auto run = octoflow::testing::startNs(cylinderCase(384, 192, 32.0, 0.5));
  const sim::DiagnosticsLog log = run->simulation->diagnosticsLog();
  ASSERT_EQ(log.fileName, "forces.csv");
  const auto column = [&](const char* name) {
    return static_cast<std::size_t>(std::find(log.columns.begin(), log.columns.end(), name) - log.columns.begin());
  };
  double dragSum = 0.0, liftHighest = 0.0, strouhal = 0.0;
  int dragRows = 0;
  const int steps = 2400, every = 4;  // dt = 1/24: t = 100
  for (int step = every; step <= steps; step += every) {
    run->simulation->advance(every);
    const std::vector<double> row = run->simulation->diagnostics();
    if (row[column("time")] < 70.0) continue;
    dragSum += row[column("drag_coefficient")];
    ++dragRows;
    liftHighest = std::max(liftHighest, row[column("lift_coefficient")]);
    strouhal = row[column("strouhal")];
  }
  const double drag = dragSum / dragRows;
  std::printf("cylinder Re 100, D = 12 cells: St %.4f, mean C_D %.4f, C_L amplitude %.4f\n", strouhal, drag, liftHighest);
  RecordProperty("strouhal", std::to_string(strouhal));
  RecordProperty("drag_coefficient", std::to_string(drag));
  EXPECT_NEAR(strouhal, 0.165, 0.04 * 0.165);
  EXPECT_NEAR(drag, 1.33, 0.07 * 1.33);
  EXPECT_NEAR(liftHighest, 0.33, 0.15 * 0.33);  // Park et al.: C_L amplitude 0.33
}

// Tracers in the solver's flow move u dt / h cells a step (its velocity is in case units, not in
// cells a step as the LBM's): in a channel of uniform flow u = 1 with cfl = 0.25, a quarter of a
// cell a step; and one that runs into the cylinder retires.
TEST(NsTracers, MoveAtTheFlowSpeedInCellsAndStopAtTheCylinder) {
  const std::string tracers = R"([tracers]
[[tracers.source]]
type = "point"
at = [10.25, 8.0]
[[tracers.source]]
type = "point"
at = [20.0, 15.5]
)";
  const auto run40Steps = [&](const std::string& cylinder) {
    auto run = octoflow::testing::startNs(
        octoflow::testing::nsCase(64, 32, "reynolds = 100\nsize = [16.0, 8.0]\ncfl = 0.25\n" + cylinder) + tracers);
    insitu::FlowExtracts extracts(run->description, *run->simulation);
    extracts.releaseTracers(0);
    for (int step = 0; step < 40; ++step) {
      extracts.moveTracers(1);
      run->simulation->advance(1);
    }
    const particles::TracerView view = extracts.tracers();
    std::vector<std::array<double, 3>> tracersNow;
    for (Index n = 0; n < view.count; ++n)
      tracersNow.push_back({static_cast<double>(view.ids[n]), view.positions[3 * n], view.positions[3 * n + 1]});
    return tracersNow;
  };
  // No body: the uniform flow stays u = 1, v = 0; both tracers move 40 quarter cells along x.
  const auto free = run40Steps("");
  ASSERT_EQ(free.size(), 2u);
  EXPECT_NEAR(free[0][1], 10.25 + 40 * 0.25, 1e-3);
  EXPECT_NEAR(free[0][2], 8.0, 1e-3);
  EXPECT_NEAR(free[1][1], 20.0 + 40 * 0.25, 1e-3);
  // The cylinder (nodes 21.5 to 25.5 along x on the second tracer's line) stops the second.
  const auto blocked = run40Steps("[ns.cylinder]\ncentre = [6.0, 4.0]\n");
  ASSERT_EQ(blocked.size(), 1u);
  EXPECT_EQ(blocked[0][0], 0.0);
}
