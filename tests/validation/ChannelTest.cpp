// Channel flows: TRT exactness, open inlets and outlets, FP16 storage, and the drag of a
// cylinder in a channel (Schaefer & Turek 1996, case 2D-1).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <memory>

#include "TestSupport.hpp"
#include "geometry/Obstacle.hpp"
#include "lbm/UniformSolver.hpp"

using namespace octoflow;
using namespace octoflow::lbm;

namespace {

// Walls on y, x periodic, body force along x: plane Poiseuille flow.
UniformSolverConfig forcedChannel(CollisionKind collision, StorageKind storage, float acceleration) {
  UniformSolverConfig config;
  config.lattice = LatticeKind::D2Q9;
  config.collision = collision;
  config.storage = storage;
  config.extent = Extent{4, 32, 1};
  config.faces.setAxisPeriodic(0);
  config.faces.setAxisPeriodic(2);
  config.tau = 0.8f;
  config.acceleration = Vector3{acceleration, 0.0f, 0.0f};
  return config;
}

// Relative L2 error of u_x in column i against a parabola of the given peak between half-way walls.
double parabolaError(UniformSolver& solver, Index column, double peak) {
  const auto& fields = solver.fetchFields(false, true);
  const Extent& e = solver.config().extent;
  double errorSquared = 0.0, normSquared = 0.0;
  for (Index j = 0; j < e.ny; ++j) {
    const double s = (j + 0.5) / e.ny;
    const double expected = 4.0 * peak * s * (1.0 - s);
    const double difference = fields.velocity.data()[3 * e.linear(column, j, 0)] - expected;
    errorSquared += difference * difference;
    normSquared += expected * expected;
  }
  return std::sqrt(errorSquared / normSquared);
}

double massFlux(UniformSolver& solver, Index column) {
  const auto& fields = solver.fetchFields(true, true);
  const Extent& e = solver.config().extent;
  double flux = 0.0;
  for (Index j = 0; j < e.ny; ++j) {
    const Index node = e.linear(column, j, 0);
    flux += fields.density.data()[node] * fields.velocity.data()[3 * node];
  }
  return flux;
}

// Relative L2 distance of column i's u_x from the parabola with the same mean.
double parabolaShapeError(UniformSolver& solver, Index column) {
  const auto& fields = solver.fetchFields(false, true);
  const Extent& e = solver.config().extent;
  double mean = 0.0;
  for (Index j = 0; j < e.ny; ++j) mean += fields.velocity.data()[3 * e.linear(column, j, 0)] / e.ny;
  return parabolaError(solver, column, 1.5 * mean);
}

}  // namespace

TEST(Channel, TrtWithTheMagicParameterIsExactForPoiseuille) {
  // Lambda = 3/16 puts bounce-back walls exactly half-way (Ginzburg 2008): only FP32 remains.
  UniformSolver solver(forcedChannel(CollisionKind::Trt, StorageKind::Fp32, 1e-6f), exec::Backend::Cpu);
  solver.advance(15000);
  const double nu = viscosityFromTau(0.8), width = 32.0;
  const double error = parabolaError(solver, 0, 1e-6 * width * width / (8.0 * nu));
  RecordProperty("relative_l2_error", std::to_string(error));
  // The steady state is reached to e^-14; FP32 deviations of ~1e-4 carry ~1e-11 absolute, so 1e-4
  // relative is 100x looser than rounding and 8x tighter than BGK's wall slip at tau 0.8.
  EXPECT_LT(error, 1e-4) << error;
}

TEST(Channel, Fp16StorageFollowsFp32InALidDrivenCavity) {
  // FP16 keeps 11 significant bits of each stored deviation. In a lid-driven cavity (lid 0.1)
  // the populations move by far more than that per step, and FP16 follows FP32 closely. (In a
  // slow, steady, force-driven channel it does not: a 0.06 Poiseuille peak comes out 15 % low,
  // see docs/CASES.md "storage".)
  auto run = [](StorageKind storage) {
    UniformSolverConfig config;
    config.lattice = LatticeKind::D2Q9;
    config.collision = CollisionKind::Trt;
    config.storage = storage;
    config.extent = Extent{64, 64, 1};
    config.faces.setAxisPeriodic(2);
    config.faces.face[3].type = FaceType::MovingWall;
    config.faces.face[3].velocity = Vector3{0.1f, 0.0f, 0.0f};
    config.tau = static_cast<float>(tauFromViscosity(0.1 * 64 / 100.0));
    auto solver = std::make_unique<UniformSolver>(config, exec::Backend::Cpu);
    solver->advance(15000);
    return solver;
  };
  auto fp32 = run(StorageKind::Fp32);
  auto fp16 = run(StorageKind::Fp16);
  const auto& a = fp32->fetchFields(true, true);
  const auto& b = fp16->fetchFields(true, true);
  double maxDifference = 0.0, massFp16 = 0.0;
  for (Index i = 0; i < fp32->nodeCount(); ++i) {
    massFp16 += b.density.data()[i];
    for (int c = 0; c < 3; ++c)
      maxDifference = std::max(maxDifference, std::abs(static_cast<double>(a.velocity.data()[3 * i + c]) -
                                                       b.velocity.data()[3 * i + c]));
  }
  const double massDrift = massFp16 / fp16->nodeCount() - 1.0;
  std::printf("cavity fp16 vs fp32: max |du| %.2e (lid 0.1), mass drift %.2e\n", maxDifference, massDrift);
  RecordProperty("max_velocity_difference", std::to_string(maxDifference));
  // 2 % of the lid speed: the same flow. FP16 rounding moves a little mass (7e-5 measured).
  EXPECT_LT(maxDifference, 2e-3);
  EXPECT_LT(std::abs(massDrift), 5e-4);
}

class OpenChannel : public ::testing::TestWithParam<FaceType> {};

TEST_P(OpenChannel, ParabolicInletDevelopsPoiseuilleAndConservesMass) {
  const double peak = 0.05;
  UniformSolverConfig config;
  config.lattice = LatticeKind::D2Q9;
  config.collision = CollisionKind::Trt;
  config.extent = Extent{160, 24, 1};
  config.faces.setAxisPeriodic(2);
  config.faces.face[0].type = FaceType::Velocity;
  config.faces.face[0].velocity = Vector3{static_cast<float>(peak), 0.0f, 0.0f};
  config.faces.face[0].parabolic = true;
  config.faces.face[1].type = GetParam();  // pressure (rho = 1) or outflow
  config.tau = 0.8f;
  UniformSolver solver(config, exec::Backend::Cpu);
  // Viscous time width^2 / nu = 5760 steps, advective 160 / 0.033 = 4800: 20 k steps is steady.
  solver.advance(20000);
  const double fluxIn = massFlux(solver, 20), fluxOut = massFlux(solver, 140);
  const double inletFlux = massFlux(solver, 0), expectedFlux = peak * 2.0 / 3.0 * 24.0;  // rho_0 U_mean H
  // The weakly compressible flow keeps rho u, not u, along the channel (the density falls with
  // the pressure): compare the developed profile's shape, scaled to its own mean.
  const double error = parabolaShapeError(solver, 120);
  std::printf("%s outlet: profile shape error %.2e, mass flux %.6f -> %.6f (inlet %.6f, prescribed %.6f)\n",
              GetParam() == FaceType::Pressure ? "pressure" : "outflow", error, fluxIn, fluxOut, inletFlux,
              expectedFlux);
  // Developed flow is a parabola again: its discrete error at 24 nodes and the inlet's, 0.5 %.
  EXPECT_LT(error, 5e-3);
  // Steady: what enters leaves (2e-4 covers FP32 sums over 24 nodes and the residual transient).
  EXPECT_NEAR(fluxOut / fluxIn, 1.0, 2e-4);
  // The inlet prescribes the mass flux rho_0 u: the half-way inlet's own error, 0.5 %.
  EXPECT_NEAR(inletFlux / expectedFlux, 1.0, 5e-3);
}

INSTANTIATE_TEST_SUITE_P(Outlets, OpenChannel, ::testing::Values(FaceType::Pressure, FaceType::Outflow),
                         [](const auto& info) { return std::string(info.param == FaceType::Pressure ? "Pressure" : "Outflow"); });

namespace {

struct Coefficients {
  double drag;
  double lift;
};

// The DFG benchmark 2D-1 (Re = 20) with `scale` nodes per metre: channel 2.2 x 0.41 m, walls
// half-way (physical y = 0 at node -1/2), cylinder of diameter 0.1 centred at (0.2, 0.2),
// parabolic inflow with U_mean = 0.05 (lattice), pressure outlet, nu = U_mean D / 20.
Coefficients runCylinder(int scale, exec::Backend backend) {
  const double diameter = 0.1 * scale, meanVelocity = 0.05;
  UniformSolverConfig config;
  config.lattice = LatticeKind::D2Q9;
  config.collision = CollisionKind::Trt;
  config.extent = Extent{22 * scale / 10, 41 * scale / 100, 1};
  config.faces.setAxisPeriodic(2);
  config.faces.face[0].type = FaceType::Velocity;
  config.faces.face[0].velocity = Vector3{static_cast<float>(1.5 * meanVelocity), 0.0f, 0.0f};
  config.faces.face[0].parabolic = true;
  config.faces.face[1].type = FaceType::Pressure;
  config.tau = static_cast<float>(tauFromViscosity(meanVelocity * diameter / 20.0));
  geometry::ObstacleSpec cylinder;
  cylinder.kind = geometry::ShapeKind::Cylinder;
  cylinder.center = {0.2 * scale - 0.5, 0.2 * scale - 0.5, 0.0};
  cylinder.radius = 0.5 * diameter;
  config.solid.assign(static_cast<std::size_t>(config.extent.cellCount()), 0);
  geometry::rasterize(cylinder, config.extent, config.solid.data());
  UniformSolver solver(config, backend);
  // Three flow-throughs reach the steady state.
  solver.advance(static_cast<Index>(3.0 * config.extent.nx / meanVelocity));
  const auto force = solver.obstacleForce();
  const double coefficient = 2.0 / (meanVelocity * meanVelocity * diameter);
  const Coefficients result{coefficient * force[0], coefficient * force[1]};
  std::printf("cylinder 2D-1, D = %.0f nodes: cd %.4f (reference 5.57-5.59), cl %.4f (reference 0.0104-0.0110)\n",
              diameter, result.drag, result.lift);
  return result;
}

}  // namespace

TEST(CylinderInChannel, DragMatchesSchaeferTurek2D1At20NodesPerDiameter) {
  const Coefficients result = runCylinder(200, exec::Backend::Cpu);
  RecordProperty("cd", std::to_string(result.drag));
  RecordProperty("cl", std::to_string(result.lift));
  const auto reference = octoflow::testing::readReferenceTable("schafer_turek1996_cylinder2d.csv");
  ASSERT_GE(reference.size(), 2u);
  const double referenceDrag = 0.5 * (reference[0][1] + reference[0][2]);
  // A staircase cylinder with plain bounce-back, 20 nodes across, inlet 3.5 diameters upstream:
  // 4 % on the drag (1.5 % measured). The lift (0.2 % of the drag) is left to finer grids.
  EXPECT_NEAR(result.drag, referenceDrag, 0.04 * referenceDrag);
  EXPECT_GT(result.lift, 0.0) << "the cylinder sits below the channel's centre line: lift points up";
}

TEST(CylinderInChannel, DragAndLiftConvergeAt40NodesPerDiameterOnTheGpu) {
  OCTO_SKIP_WITHOUT_GPU();
  const Coefficients result = runCylinder(400, exec::Backend::Cuda);
  RecordProperty("cd", std::to_string(result.drag));
  RecordProperty("cl", std::to_string(result.lift));
  const auto reference = octoflow::testing::readReferenceTable("schafer_turek1996_cylinder2d.csv");
  const double referenceDrag = 0.5 * (reference[0][1] + reference[0][2]);
  const double referenceLift = 0.5 * (reference[1][1] + reference[1][2]);
  // Twice the resolution halves the staircase error: 2 % on the drag, 30 % on the small lift.
  EXPECT_NEAR(result.drag, referenceDrag, 0.02 * referenceDrag);
  EXPECT_NEAR(result.lift, referenceLift, 0.3 * referenceLift);
}

namespace {
// A sphere in uniform flow at Re = 20 (D3Q19 TRT, diameter D nodes): velocity inlet at x- 5 D
// upstream of the centre, pressure outlet 11 D downstream, periodic sides 8 D apart (a square
// array of spheres, 1.2 % of the cross-section blocked). c_D = 2 F_x / (rho U^2 pi D^2 / 4),
// averaged over the second flow-through: pressure waves between inlet and outlet make the
// instantaneous drag swing by a few per cent.
double sphereDrag(double diameter, exec::Backend backend) {
  const double velocity = 0.05, reynolds = 20.0;
  const Index side = static_cast<Index>(8 * diameter);
  UniformSolverConfig config;
  config.lattice = LatticeKind::D3Q19;
  config.collision = CollisionKind::Trt;
  config.extent = Extent{static_cast<Index>(16 * diameter), side, side};
  config.faces.setAxisPeriodic(1);
  config.faces.setAxisPeriodic(2);
  config.faces.face[0].type = FaceType::Velocity;
  config.faces.face[0].velocity = Vector3{static_cast<float>(velocity), 0.0f, 0.0f};
  config.faces.face[1].type = FaceType::Pressure;
  config.tau = static_cast<float>(tauFromViscosity(velocity * diameter / reynolds));
  geometry::ObstacleSpec sphere;
  sphere.kind = geometry::ShapeKind::Sphere;
  const double middle = 0.5 * (side - 1);
  sphere.center = {5.0 * diameter, middle, middle};
  sphere.radius = 0.5 * diameter;
  config.solid.assign(static_cast<std::size_t>(config.extent.cellCount()), 0);
  geometry::rasterize(sphere, config.extent, config.solid.data());
  UniformSolver solver(config, backend);
  const Index flowThrough = static_cast<Index>(config.extent.nx / velocity), every = 20;
  solver.advance(flowThrough);
  double sum = 0.0;
  int samples = 0;
  for (Index step = 0; step < flowThrough; step += every, ++samples) {
    solver.advance(every);
    sum += solver.obstacleForce()[0];
  }
  const double pi = std::acos(-1.0);
  const double drag = 2.0 * (sum / samples) / (velocity * velocity * pi * diameter * diameter / 4.0);
  std::printf("sphere Re 20, D = %.0f nodes: cd %.4f (Schiller-Naumann 2.61, Clift-Grace-Weber 2.71-2.74)\n",
              diameter, drag);
  return drag;
}

double referenceSphereDrag() {
  const auto reference = octoflow::testing::readReferenceTable("sphere_drag.csv");
  for (const auto& row : reference)
    if (row[0] == 20.0) return row[2];  // Clift, Grace & Weber
  return 0.0;
}
}  // namespace

TEST(SphereInUniformFlow, DragAtReynolds20With6NodesPerDiameter) {
  const double drag = sphereDrag(6.0, exec::Backend::Cpu), reference = referenceSphereDrag();
  RecordProperty("cd", std::to_string(drag));
  ASSERT_GT(reference, 0.0);
  // A staircase sphere of 6 nodes and the neighbouring spheres of the periodic array 8 D away:
  // 6 % (+3.6 % measured; with the spheres 6 D apart +6.9 %, 10 D apart +3.0 %: part of the
  // excess is the array's blockage, the rest the coarse sphere).
  EXPECT_NEAR(drag, reference, 0.06 * reference);
}

TEST(SphereInUniformFlow, DragAtReynolds20With16NodesPerDiameterOnTheGpu) {
  OCTO_SKIP_WITHOUT_GPU();
  const double drag = sphereDrag(16.0, exec::Backend::Cuda), reference = referenceSphereDrag();
  RecordProperty("cd", std::to_string(drag));
  EXPECT_NEAR(drag, reference, 0.06 * reference);
}

TEST(OpenChannel, AStreamStartedAtTheInletVelocityStaysUniform) {
  // A stream set at the inlet's velocity (initialVelocity) from a velocity inlet to a pressure
  // outlet at the reference density is steady from the first step: the first step's face rules
  // turn the reflected slots' initial values into the initial equilibrium (StreamCollide.hpp,
  // InitializeBoundaryNodes).
  for (LatticeKind lattice : {LatticeKind::D2Q9, LatticeKind::D3Q19}) {
    const bool twoD = lattice == LatticeKind::D2Q9;
    const float inflow = 0.05f;
    UniformSolverConfig config;
    config.lattice = lattice;
    config.extent = twoD ? Extent{24, 8, 1} : Extent{24, 8, 8};
    config.faces.setAxisPeriodic(1);
    config.faces.setAxisPeriodic(2);
    config.faces.face[0].type = FaceType::Velocity;
    config.faces.face[0].velocity = Vector3{inflow, 0.0f, 0.0f};
    config.faces.face[1].type = FaceType::Pressure;
    config.tau = 0.6f;
    config.initialVelocity = Vector3{inflow, 0.0f, 0.0f};
    UniformSolver solver(config, exec::Backend::Cpu);
    for (int steps : {1, 1, 50}) {
      solver.advance(steps);
      const HostFields& fields = solver.fetchFields(true, true);
      double worst = 0.0;
      for (Index node = 0; node < config.extent.cellCount(); ++node) {
        worst = std::max(worst, double(std::abs(fields.density.data()[node] - 1.0f)));
        worst = std::max(worst, double(std::abs(fields.velocity.data()[3 * node] - inflow)));
        for (int c = 1; c < 3; ++c) worst = std::max(worst, double(std::abs(fields.velocity.data()[3 * node + c])));
      }
      EXPECT_LT(worst, 1e-6) << latticeName(lattice) << " at step " << solver.step();
    }
  }
}
