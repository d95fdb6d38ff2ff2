// The octree LBM on the CPU (the reference): one level is the uniform solver; levels coupled in
// space and time keep uniform flow exact, mass in a closed box, and a Taylor-Green vortex across a
// refinement interface as accurate as the fine grid.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <array>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "AmrTestSupport.hpp"
#include "amr/AmrLbm.hpp"
#include "lbm/UniformSolver.hpp"

using namespace octoflow;
using namespace octoflow::amr;

namespace {

const double kPi = std::acos(-1.0);

// A Taylor-Green vortex of wavelength `length` (level-0 nodes) in x and y, uniform along z: an exact
// solution of the Navier-Stokes equations, u = A sin kx cos ky, v = -A cos kx sin ky, with the
// pressure p = A^2/4 (cos 2kx + cos 2ky) (rho = 1 + 3 p), decaying as exp(-2 nu k^2 t).
InitialState taylorGreen(double length, double amplitude) {
  return [=](const double (&x)[3], float& density, float (&velocity)[3]) {
    const double k = 2.0 * kPi / length;
    velocity[0] = static_cast<float>(amplitude * std::sin(k * x[0]) * std::cos(k * x[1]));
    velocity[1] = static_cast<float>(-amplitude * std::cos(k * x[0]) * std::sin(k * x[1]));
    velocity[2] = 0.0f;
    density = static_cast<float>(1.0 + 0.75 * amplitude * amplitude * (std::cos(2 * k * x[0]) + std::cos(2 * k * x[1])));
  };
}

}  // namespace

TEST(AmrLbm, OneLevelIsTheUniformSolver) {
  // 2 x 2 x 2 periodic leaves of 16 cells, or one mother-leaf block of 32 (linked to itself across
  // every face) = the uniform solver on a 32^3 periodic grid, with each collision operator.
  const double tau = 0.7;
  // With the CSM model too: the uniform solver keeps the velocities its gradients read in FP16
  // (StreamCollide.hpp), the octree takes them from its populations in FP32 (2.4e-7 apart after the
  // 40 steps, in which the model moves the velocity by 1.6e-4).
  struct Run {
    int leafCells;
    lbm::CollisionKind collision;
    lbm::LesModel les = lbm::LesModel::None;
  };
  for (const Run& run : {Run{16, lbm::CollisionKind::Bgk}, Run{32, lbm::CollisionKind::Bgk}, Run{16, lbm::CollisionKind::Trt},
                         Run{16, lbm::CollisionKind::Mrt}, Run{16, lbm::CollisionKind::Bgk, lbm::LesModel::Csm},
                         Run{32, lbm::CollisionKind::Mrt, lbm::LesModel::Csm}})
  for (lbm::LatticeKind lattice : {lbm::LatticeKind::D3Q19, lbm::LatticeKind::D3Q27}) {
    const int leafCells = run.leafCells;
    const bool csm = run.les == lbm::LesModel::Csm;
    SCOPED_TRACE(std::to_string(leafCells) + " cells, " + lbm::collisionName(run.collision) + (csm ? ", csm" : ""));
    const lbm::Les les{run.les, lbm::Les::kCsmConstant};
    const int roots = 32 / leafCells;
    const Octree tree({roots, roots, roots}, {true, true, true}, 0);
    AmrLbmSettings settings = test::cpuSettings(lattice, tau);
    settings.leafCells = leafCells;
    settings.collision = run.collision;
    settings.les = les;
    AmrLbm amr(tree, settings);
    amr.initialise(taylorGreen(32.0, 0.05));

    lbm::UniformSolverConfig config;
    config.lattice = lattice;
    config.collision = run.collision;
    config.extent = Extent{32, 32, 32};
    for (int axis = 0; axis < 3; ++axis) config.faces.setAxisPeriodic(axis);
    config.tau = static_cast<float>(tau);
    config.les = les;
    lbm::UniformSolver uniform(config, exec::Backend::Cpu);
    std::vector<float> density(32 * 32 * 32), velocity(3 * 32 * 32 * 32);
    const InitialState initial = taylorGreen(32.0, 0.05);
    for (int k = 0; k < 32; ++k)
      for (int j = 0; j < 32; ++j)
        for (int i = 0; i < 32; ++i) {
          const double x[3] = {double(i), double(j), double(k)};
          float rho, u[3];
          initial(x, rho, u);
          const int node = i + 32 * (j + 32 * k);
          density[node] = rho;
          for (int c = 0; c < 3; ++c) velocity[3 * node + c] = u[c];
        }
    uniform.initialize(density.data(), velocity.data());

    amr.advance(40);
    uniform.advance(40);
    std::vector<float> amrDensity, amrVelocity;
    amr.fetchMoments(amrDensity, amrVelocity);
    const lbm::HostFields& fields = uniform.fetchFields(true, true);
    double worst = 0.0;
    const int B = amr.layout().blockNodes;
    for (std::size_t b = 0; b < amr.layout().blocks.size(); ++b)
      for (int k = 0; k < B; ++k)
        for (int j = 0; j < B; ++j)
          for (int i = 0; i < B; ++i) {
            double x[3];
            amr.position(static_cast<int>(b), i, j, k, x);
            const int node = (static_cast<int>(x[0]) % 32) + 32 * ((static_cast<int>(x[1]) % 32) + 32 * (static_cast<int>(x[2]) % 32));
            const std::size_t point = b * static_cast<std::size_t>(B * B * B) + static_cast<std::size_t>(i + B * (j + B * k));
            worst = std::max(worst, double(std::abs(amrDensity[point] - fields.density.data()[node])));
            for (int c = 0; c < 3; ++c)
              worst = std::max(worst, double(std::abs(amrVelocity[3 * point + c] - fields.velocity.data()[3 * node + c])));
          }
    // The same collision on the same populations: the uniform solver forms its output moments in
    // another order, a float ulp or two of 1 apart.
    EXPECT_LT(worst, csm ? 2e-6 : 5e-7) << lbm::latticeName(lattice);
    if (csm) std::printf("%s: largest difference with CSM %.2e\n", lbm::latticeName(lattice), worst);
  }
}

TEST(AmrLbm, CsmTakesTheVelocityGradientOfEveryPointOnEveryLevel) {
  // A linear velocity field, u = G (x - 16) in level-0 node units, with shear and rotation: its
  // differences are exact, central or one-sided, so every fluid point's eddy part is that of G at
  // its level's spacing, 3 nu_t(G / 2^level), inside the blocks, across same-level faces, beside the
  // walls, the other level and a sphere on each level (whose points get none; a point with neither
  // neighbour along an axis, between a sphere and the other level, would take no gradient there).
  Octree tree({2, 2, 2}, {false, false, false}, 1);
  tree.refine({tree.findLeaf(BlockKey{0, 0, 0, 0})});
  AmrLbmSettings settings = test::cpuSettings(lbm::LatticeKind::D3Q27, 0.6);
  settings.les = lbm::Les::withDefaultConstant(lbm::LesModel::Csm);
  const auto inSphere = [](const double (&x)[3]) {
    const auto within = [&x](double c, double r) {
      return (x[0] - c) * (x[0] - c) + (x[1] - c) * (x[1] - c) + (x[2] - c) * (x[2] - c) < r * r;
    };
    return within(24.0, 4.0) || within(8.0, 3.0);
  };
  AmrLbm amr(tree, settings, inSphere);
  const double G[3][3] = {{2e-4, 1.5e-3, 0.0}, {-5e-4, -1e-4, 3e-4}, {2e-4, 0.0, -1e-4}};
  amr.initialise([&G](const double (&x)[3], float& density, float (&velocity)[3]) {
    density = 1.0f;
    for (int i = 0; i < 3; ++i)
      velocity[i] = static_cast<float>(G[i][0] * (x[0] - 16) + G[i][1] * (x[1] - 16) + G[i][2] * (x[2] - 16));
  });
  std::vector<float> eddy;
  amr.fetchEddyRelaxation(eddy);
  const int B = amr.layout().blockNodes;
  double expected[2];
  for (int level = 0; level < 2; ++level) {
    lbm::VelocityGradient gradient;
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) gradient.g[i][j] = static_cast<float>(std::ldexp(G[i][j], -level));
    expected[level] = 3.0 * lbm::csmEddyViscosity(gradient, lbm::Les::kCsmConstant);
  }
  ASSERT_GT(expected[1], 1e-6);
  ASSERT_LT(expected[1], 0.6 * expected[0]);  // the level's spacing counts
  double worst = 0.0;
  long long solid = 0, fluid = 0;
  for (std::size_t b = 0; b < amr.layout().blocks.size(); ++b) {
    const int level = amr.layout().blocks[b].level;
    for (int n = 0; n < B * B * B; ++n) {
      double x[3];
      amr.position(static_cast<int>(b), n % B, (n / B) % B, n / (B * B), x);
      const float got = eddy[b * static_cast<std::size_t>(B * B * B) + static_cast<std::size_t>(n)];
      if (inSphere(x)) {
        EXPECT_EQ(got, 0.0f);
        ++solid;
        continue;
      }
      ++fluid;
      worst = std::max(worst, std::abs(got - expected[level]) / expected[level]);
    }
  }
  std::printf("CSM on a linear field, 2 levels: 3 nu_t %.4e (level 0), %.4e (level 1); largest relative "
              "difference %.2e over %lld points\n", expected[0], expected[1], worst, fluid);
  EXPECT_GT(solid, 0);
  EXPECT_LT(worst, 1e-3);
}

TEST(AmrLbm, CsmGivesTheCopiesOfAPointThatBlocksOfALevelShareOneRelaxationTime) {
  // Blocks that touch share the points on their faces (node-centred): central differences across
  // the face make each copy's gradient from the same values (the copies' states agree to float
  // rounding: a few ulps apart where the paths of the blocks around differ), so the copies keep one
  // relaxation time. One-sided differences at block faces gave copies 7.4e-4 apart here (14 % of
  // the largest eddy part); central ones 4e-6.
  AmrLbmSettings settings = test::threeLevelChannel(lbm::LatticeKind::D3Q19, lbm::CollisionKind::Bgk, exec::Backend::Cpu);
  settings.les = lbm::Les::withDefaultConstant(lbm::LesModel::Csm);
  AmrLbm amr(test::threeLevelTree(), settings, test::threeLevelSphere);
  amr.initialise(test::threeLevelStart);
  amr.advance(2);
  std::vector<float> eddy;
  amr.fetchEddyRelaxation(eddy);
  const int B = amr.layout().blockNodes;
  std::map<std::array<double, 4>, float> first;  // (level, position) -> the first copy's value
  long long copies = 0;
  double largest = 0.0, worst = 0.0;
  for (std::size_t b = 0; b < amr.layout().blocks.size(); ++b)
    for (int n = 0; n < B * B * B; ++n) {
      double x[3];
      amr.position(static_cast<int>(b), n % B, (n / B) % B, n / (B * B), x);
      const float value = eddy[b * static_cast<std::size_t>(B * B * B) + static_cast<std::size_t>(n)];
      largest = std::max(largest, double(value));
      const auto [at, inserted] = first.emplace(std::array<double, 4>{double(amr.layout().blocks[b].level), x[0], x[1], x[2]}, value);
      if (inserted) continue;
      ++copies;
      worst = std::max(worst, double(std::abs(at->second - value)));
    }
  std::printf("CSM: %lld copies of shared points, largest difference %.2e of the largest eddy part %.2e\n", copies, worst,
              largest);
  EXPECT_GT(copies, 10000);
  EXPECT_GT(largest, 1e-4);  // the flow has gradients the model sees
  EXPECT_LT(worst, 5e-3 * largest);
}

TEST(AmrLbm, ACsmRunRestoredFromItsSnapshotGoesOnBitForBit) {
  // The eddy parts are made from the state before each use: a snapshot holds all a CSM run needs.
  const Octree tree = test::threeLevelTree();
  AmrLbmSettings settings = test::threeLevelChannel(lbm::LatticeKind::D3Q19, lbm::CollisionKind::Mrt, exec::Backend::Cpu);
  settings.les = lbm::Les::withDefaultConstant(lbm::LesModel::Csm);
  AmrLbm straight(tree, settings, test::threeLevelSphere), restarted(tree, settings, test::threeLevelSphere);
  straight.initialise(test::threeLevelStart);
  straight.advance(3);
  const AmrLbmSnapshot halfway = straight.snapshot();
  straight.advance(3);
  restarted.restore(halfway);
  restarted.advance(3);
  std::vector<float> density[2], velocity[2];
  straight.fetchMoments(density[0], velocity[0]);
  restarted.fetchMoments(density[1], velocity[1]);
  EXPECT_EQ(density[0], density[1]);
  EXPECT_EQ(velocity[0], velocity[1]);
  // The model acted: the same run without it ends elsewhere.
  settings.les = lbm::Les{};
  AmrLbm plain(tree, settings, test::threeLevelSphere);
  plain.initialise(test::threeLevelStart);
  plain.advance(6);
  std::vector<float> plainDensity, plainVelocity;
  plain.fetchMoments(plainDensity, plainVelocity);
  EXPECT_NE(plainVelocity, velocity[0]);
}

TEST(AmrLbm, UniformFlowCrossesThreeLevelsUnchanged) {
  Octree tree({2, 2, 2}, {true, true, true}, 2);
  tree.refine({0});
  tree.refine({0});  // the first child of the first leaf: level 2, balanced around it
  ASSERT_EQ(tree.depth(), 2);
  for (lbm::LatticeKind lattice : {lbm::LatticeKind::D3Q19, lbm::LatticeKind::D3Q27}) {
    AmrLbm amr(tree, test::cpuSettings(lattice, 0.6));
    const float u0[3] = {0.05f, -0.03f, 0.02f};
    amr.initialise([&](const double (&)[3], float& density, float (&velocity)[3]) {
      density = 1.01f;
      for (int c = 0; c < 3; ++c) velocity[c] = u0[c];
    });
    amr.advance(20);
    std::vector<float> density, velocity;
    amr.fetchMoments(density, velocity);
    double worst = 0.0;
    for (std::size_t p = 0; p < density.size(); ++p) {
      worst = std::max(worst, double(std::abs(density[p] - 1.01f)));
      for (int c = 0; c < 3; ++c) worst = std::max(worst, double(std::abs(velocity[3 * p + c] - u0[c])));
    }
    // An equilibrium is rebuilt exactly across levels (f_neq = 0): only float rounding remains.
    EXPECT_LT(worst, 2e-6) << lbm::latticeName(lattice);
  }
}

namespace {

// Relative L2 error of the velocity against the decayed Taylor-Green vortex over the points of the
// blocks `inRegion` accepts (weighted by their dual-cell volume, as the mass is).
template <class Accept>
double taylorGreenError(AmrLbm& amr, double length, double amplitude, Accept inRegion) {
  std::vector<float> density, velocity;
  amr.fetchMoments(density, velocity);
  const double k = 2.0 * kPi / length;
  const double nu = (amr.tau(0) - 0.5) / 3.0;
  const double decay = std::exp(-2.0 * nu * k * k * static_cast<double>(amr.step()));
  const InitialState exact = [&](const double (&x)[3], float& density, float (&velocity)[3]) {
    taylorGreen(length, amplitude * decay)(x, density, velocity);
  };
  const int B = amr.layout().blockNodes;
  double error = 0.0, norm = 0.0;
  for (std::size_t b = 0; b < amr.layout().blocks.size(); ++b) {
    const BlockPlacement& block = amr.layout().blocks[b];
    if (!inRegion(block)) continue;
    const double volume = std::ldexp(1.0, -3 * block.level);
    for (int kk = 0; kk < B; ++kk)
      for (int j = 0; j < B; ++j)
        for (int i = 0; i < B; ++i) {
          double x[3];
          amr.position(static_cast<int>(b), i, j, kk, x);
          float rho, u[3];
          exact(x, rho, u);
          const std::size_t point = b * static_cast<std::size_t>(B * B * B) + static_cast<std::size_t>(i + B * (j + B * kk));
          for (int c = 0; c < 3; ++c) {
            const double difference = velocity[3 * point + c] - u[c];
            error += volume * difference * difference;
            norm += volume * double(u[c]) * u[c];
          }
        }
  }
  return std::sqrt(error / norm);
}

// A Taylor-Green vortex of one 32-node wavelength on a periodic box of 2 x 2 x 2 leaves, after 60
// steps: the relative L2 velocity error in the half x < 16, on level 0 alone (Grid::Coarse), with
// that half refined (Refined) or the whole box (Fine). Diffusive comparison: tau is that of the
// coarse grid on level 0 in every run, so the fine level runs at the viscosity of the same flow.
enum class Grid { Coarse, Refined, Fine };
constexpr std::int64_t kTaylorGreenSteps = 60;

double taylorGreenErrorInTheLowerHalf(Grid grid, lbm::CollisionKind collision) {
  const double length = 32.0, amplitude = 0.02, tau = 0.65;
  Octree tree({2, 2, 2}, {true, true, true}, 1);
  std::vector<int> refine;
  for (std::size_t leaf = 0; leaf < tree.leafCount(); ++leaf)
    if (grid == Grid::Fine || (grid == Grid::Refined && tree.leaves()[leaf].i == 0)) refine.push_back(static_cast<int>(leaf));
  tree.refine(refine);
  AmrLbmSettings settings = test::cpuSettings(lbm::LatticeKind::D3Q19, tau);
  settings.collision = collision;
  AmrLbm amr(tree, settings);
  amr.initialise(taylorGreen(length, amplitude));
  amr.advance(kTaylorGreenSteps);
  const auto lowerHalf = [](const BlockPlacement& block) {
    return std::ldexp(static_cast<double>(block.origin[0]), -block.level) < 16.0;
  };
  return taylorGreenError(amr, length, amplitude, lowerHalf);
}

}  // namespace

TEST(AmrLbm, TaylorGreenAcrossARefinementInterfaceIsAsAccurateAsTheFineGrid) {
  const auto run = [](Grid grid) { return taylorGreenErrorInTheLowerHalf(grid, lbm::CollisionKind::Bgk); };
  const double coarse = run(Grid::Coarse), refined = run(Grid::Refined), fine = run(Grid::Fine);
  const std::int64_t steps = kTaylorGreenSteps;
  std::printf("Taylor-Green relative L2 error in x < 16 after %lld steps: coarse %.3e, refined half %.3e, "
              "fine %.3e\n", static_cast<long long>(steps), coarse, refined, fine);
  RecordProperty("coarse", std::to_string(coarse));
  RecordProperty("refined", std::to_string(refined));
  RecordProperty("fine", std::to_string(fine));
  EXPECT_LT(refined, 2.0 * fine);
  EXPECT_LT(fine, 0.5 * coarse);  // the fine grid is the more accurate one, or the test shows nothing
}

namespace {

// Relative change of the mass in a closed box (walls on every side) over `steps` steps of a density
// pulse at rest, which spreads as sound waves through the whole box and back.
double closedBoxMassDrift(const Octree& tree, std::int64_t steps, int leafCells = 16,
                          lbm::CollisionKind collision = lbm::CollisionKind::Bgk) {
  AmrLbmSettings settings = test::cpuSettings(lbm::LatticeKind::D3Q19, 0.6);
  settings.leafCells = leafCells;
  settings.collision = collision;
  AmrLbm amr(tree, settings);
  amr.initialise([](const double (&x)[3], float& density, float (&velocity)[3]) {
    const double r2 = (x[0] - 14) * (x[0] - 14) + (x[1] - 15) * (x[1] - 15) + (x[2] - 16) * (x[2] - 16);
    density = static_cast<float>(1.0 + 0.01 * std::exp(-r2 / 18.0));
    velocity[0] = velocity[1] = velocity[2] = 0.0f;
  });
  std::vector<float> density, velocity;
  amr.fetchMoments(density, velocity);
  const double initial = amr.mass(density);
  amr.advance(steps);
  amr.fetchMoments(density, velocity);
  return amr.mass(density) / initial - 1.0;
}

}  // namespace

TEST(AmrLbm, MassIsConservedInAClosedBoxOnOneLevel) {
  // Half-way bounce-back and block links lose nothing: only float rounding of the sums remains.
  const double drift = closedBoxMassDrift(Octree({2, 2, 2}, {false, false, false}, 0), 300);
  std::printf("closed box, 1 level: relative mass drift %.3e after 300 steps\n", drift);
  EXPECT_LT(std::abs(drift), 1e-6);
}

TEST(AmrLbm, MassIsConservedInAClosedBoxAcrossLevels) {
  // One corner leaf refined: interfaces on faces, edges and a corner that the sound waves cross
  // back and forth. (10,000 steps on three levels: tests/parity/AmrLbmParityTest.cpp, on a GPU.)
  Octree tree({2, 2, 2}, {false, false, false}, 1);
  tree.refine({0});
  const double drift = closedBoxMassDrift(tree, 1000);
  std::printf("closed box, 2 levels: relative mass drift %.3e after 1000 steps\n", drift);
  EXPECT_LT(std::abs(drift), 1e-6);
}

TEST(AmrLbm, MassIsConservedInAClosedBoxAcrossLevelsOfMotherLeafBlocks) {
  Octree tree({2, 1, 1}, {false, false, false}, 1);
  tree.refine({0});
  const double drift = closedBoxMassDrift(tree, 300, 32);
  std::printf("closed box, 2 levels of 33^3 blocks: relative mass drift %.3e after 300 steps\n", drift);
  EXPECT_LT(std::abs(drift), 1e-6);
}

TEST(AmrLbm, TrtAndMrtAcrossARefinementInterface) {
  // Across levels a population's non-equilibrium part is rescaled part by part with the operator's
  // own relaxation times (lbm::Trt/Mrt::rescaleNonEquilibrium): the Taylor-Green vortex across the
  // interface stays within 2x of the fine grid's error, as with BGK, and mass stays in a closed box.
  for (const lbm::CollisionKind collision : {lbm::CollisionKind::Trt, lbm::CollisionKind::Mrt}) {
    const double refined = taylorGreenErrorInTheLowerHalf(Grid::Refined, collision);
    const double fine = taylorGreenErrorInTheLowerHalf(Grid::Fine, collision);
    std::printf("%s: Taylor-Green relative L2 error in x < 16: refined half %.3e, fine %.3e\n",
                lbm::collisionName(collision), refined, fine);
    EXPECT_LT(refined, 2.0 * fine) << lbm::collisionName(collision);
    Octree tree({2, 2, 2}, {false, false, false}, 1);
    tree.refine({0});
    const double drift = closedBoxMassDrift(tree, 300, 16, collision);
    std::printf("%s: closed box, 2 levels: relative mass drift %.3e after 300 steps\n", lbm::collisionName(collision),
                drift);
    EXPECT_LT(std::abs(drift), 1e-6) << lbm::collisionName(collision);
  }
}

namespace {

// The strain rate S_xy a pre-collision state holds on `level` of `step` as its collision sees it:
// Pi_xy of its non-equilibrium part = -2 rho c_s^2 tau_eff S_xy, tau_eff the level's with the
// eddy part: Smagorinsky's found from that same stress (lbm::Les::relaxationTime), CSM's `eddy`.
template <class L, class C>
double strainRate(const AmrLevelStep<L, C>& step, int level, const float (&set)[L::Q], float eddy) {
  float rho;
  lbm::Vector3 u;
  lbm::moments<L>(set, step.state.acceleration[level], rho, u);
  const lbm::Les les = step.state.template collision<C>().les;
  const float tau = les.model == lbm::LesModel::Csm
                        ? step.state.tau[level] + eddy
                        : les.template relaxationTime<L>(step.state.tau[level], set, rho, u, step.state.acceleration[level]);
  double stress = 0.0;
  for (int q = 0; q < L::Q; ++q) stress += L::c(q, 0) * L::c(q, 1) * (set[q] - lbm::equilibriumDeviation<L>(q, rho, u));
  return -stress / (2.0 * rho * tau / 3.0);
}

// Level 0 near tau = 1/2 as the sphere's (tau_0 - 1/2 = 0.006), level 1 at twice that: a sheared
// state of level 0 made level 1's (rescaleToLevel, as an interface point's coarse taps are) and
// back again (as a coarse point's pull from a finer level), with `model`: the same physical strain
// rate, in lattice units half of it on the finer level (half the time step).
template <class C>
void expectTheStrainRateCarriedAcrossLevels(const char* name, lbm::LesModel model) {
  using L = lbm::D3Q19;
  const lbm::Les les = lbm::Les::withDefaultConstant(model);
  AmrLevelStep<L, C> coarse, fine;
  coarse.state.tau[0] = 0.506f;
  coarse.state.tau[1] = 0.512f;
  coarse.state.bgk = lbm::Bgk{0.506f, les};
  coarse.state.trt = lbm::Trt{0.506f, 3.0f / 16.0f, les};
  coarse.state.mrt = lbm::Mrt::forLattice<L>(0.506f);
  coarse.state.mrt.les = les;
  // CSM: the caller passes the point's eddy part (the array itself is not read here).
  float csmEddy = 0.0f;
  if (model == lbm::LesModel::Csm) coarse.state.eddy = &csmEddy;
  fine.state = coarse.state;
  coarse.level = 0;
  fine.level = 1;
  // Equilibrium at rho = 1.01, u = (0.03, -0.01, 0.02) and an xy shear of the strength a shear
  // layer 0.05 across two level-0 spacings has (S_xy about 0.02): Smagorinsky's eddy part is then
  // larger than tau_0 - 1/2; CSM's is given the same size.
  float coarseSet[L::Q];
  for (int q = 0; q < L::Q; ++q)
    coarseSet[q] = lbm::equilibriumDeviation<L>(q, 1.01f, lbm::Vector3{0.03f, -0.01f, 0.02f}) -
                   0.15f * static_cast<float>(L::w(q) * L::c(q, 0) * L::c(q, 1));
  float rho;
  lbm::Vector3 u;
  lbm::moments<L>(coarseSet, lbm::Vector3{}, rho, u);
  const float coarseEddy = model == lbm::LesModel::Csm
                               ? 0.0074f
                               : les.relaxationTime<L>(0.506f, coarseSet, rho, u, lbm::Vector3{}) - 0.506f;
  EXPECT_GT(coarseEddy, 0.006f) << name << ": the model is most of level 0's viscosity";
  const float fineEddy = 0.5f * coarseEddy;  // nu_t = C Delta^2 |S|: half in the finer level's units
  const double coarseStrain = strainRate(coarse, 0, coarseSet, coarseEddy);

  float fineSet[L::Q];
  std::copy(coarseSet, coarseSet + L::Q, fineSet);
  fine.rescaleToLevel(-1, fineSet, fineEddy);
  const double fineStrain = strainRate(fine, 1, fineSet, fineEddy);
  float backSet[L::Q];
  std::copy(fineSet, fineSet + L::Q, backSet);
  coarse.rescaleToLevel(1, backSet, fineEddy);
  const double backStrain = strainRate(coarse, 0, backSet, coarseEddy);
  EXPECT_NEAR(fineStrain / coarseStrain, 0.5, 1e-5) << name << ": coarse to fine";
  EXPECT_NEAR(backStrain / fineStrain, 2.0, 2e-5) << name << ": fine to coarse";
  std::printf("%s: level 0 eddy part %.4f (tau_0 - 1/2 = 0.006); strain rate fine / coarse %.6f, back %.6f\n", name,
              coarseEddy, fineStrain / coarseStrain, backStrain / fineStrain);
}

}  // namespace

TEST(AmrLbm, EddyViscosityModelsCarryTheStrainRateAcrossLevels) {
  // The non-equilibrium part is rescaled with the two levels' effective relaxation times (the
  // finer level's eddy part half the coarser's). Until 2026-12-07 Smagorinsky's rescale took the
  // molecular ones (0.7 % off here, each way) and CSM's the two levels' swapped (1.4 %).
  for (const lbm::LesModel model : {lbm::LesModel::Smagorinsky, lbm::LesModel::Csm}) {
    const std::string les = model == lbm::LesModel::Csm ? " + CSM" : " + Smagorinsky";
    expectTheStrainRateCarriedAcrossLevels<lbm::Bgk>(("BGK" + les).c_str(), model);
    expectTheStrainRateCarriedAcrossLevels<lbm::Trt>(("TRT" + les).c_str(), model);
    expectTheStrainRateCarriedAcrossLevels<lbm::Mrt>(("MRT" + les).c_str(), model);
  }
}

namespace {

// Flow past a sphere, periodic in y and z, on 2 x 1 x 1 root leaves (33 x 16 x 16 level-0 nodes):
// walls on the x faces, or a velocity inlet (x-) and an outflow face (x+).
AmrLbmSettings sphereFlowSettings(lbm::LatticeKind lattice, double tau, bool open, float inflow) {
  AmrLbmSettings settings = test::cpuSettings(lattice, tau);
  if (open) {
    settings.faces.face[0].type = lbm::FaceType::Velocity;
    settings.faces.face[0].velocity = lbm::Vector3{inflow, 0.0f, 0.0f};
    settings.faces.face[1].type = lbm::FaceType::Outflow;
  }
  return settings;
}

bool insideSphere(const double (&x)[3]) {
  const double dx = x[0] - 12.0, dy = x[1] - 8.0, dz = x[2] - 8.5;
  return dx * dx + dy * dy + dz * dz <= 9.0;
}

struct SphereFlowComparison {
  double worstMoment = 0.0;  // largest difference of density or a velocity component
  std::array<double, 3> amrForce{}, uniformForce{};
};

// The octree on one level and the uniform solver on the same grid, both started from `initial`
// everywhere, after `steps` steps.
SphereFlowComparison compareSphereFlow(lbm::LatticeKind lattice, bool open, float inflow, float initial, int steps) {
  const Octree tree({2, 1, 1}, {false, true, true}, 0);
  const double tau = 0.6;
  AmrLbm amr(tree, sphereFlowSettings(lattice, tau, open, inflow), insideSphere);
  amr.initialise([&](const double (&)[3], float& rho, float (&u)[3]) {
    rho = 1.0f;
    u[0] = initial;
    u[1] = u[2] = 0.0f;
  });

  lbm::UniformSolverConfig config;
  config.lattice = lattice;
  config.extent = Extent{33, 16, 16};
  config.faces = sphereFlowSettings(lattice, tau, open, inflow).faces;
  config.faces.setAxisPeriodic(1);
  config.faces.setAxisPeriodic(2);
  config.tau = static_cast<float>(tau);
  config.solid.resize(static_cast<std::size_t>(config.extent.cellCount()));
  for (int k = 0; k < 16; ++k)
    for (int j = 0; j < 16; ++j)
      for (int i = 0; i < 33; ++i) {
        const double x[3] = {double(i), double(j), double(k)};
        config.solid[static_cast<std::size_t>(config.extent.linear(i, j, k))] = insideSphere(x) ? 1 : 0;
      }
  lbm::UniformSolver uniform(config, exec::Backend::Cpu);
  std::vector<float> density(static_cast<std::size_t>(config.extent.cellCount()), 1.0f), velocity(3 * density.size(), 0.0f);
  for (std::size_t node = 0; node < density.size(); ++node) velocity[3 * node] = initial;
  uniform.initialize(density.data(), velocity.data());

  amr.advance(steps);
  uniform.advance(steps);
  SphereFlowComparison result;
  std::vector<float> amrDensity, amrVelocity;
  amr.fetchMoments(amrDensity, amrVelocity);
  const lbm::HostFields& fields = uniform.fetchFields(true, true);
  const int B = amr.layout().blockNodes;
  for (std::size_t b = 0; b < amr.layout().blocks.size(); ++b)
    for (int k = 0; k < B; ++k)
      for (int j = 0; j < B; ++j)
        for (int i = 0; i < B; ++i) {
          double x[3];
          amr.position(static_cast<int>(b), i, j, k, x);
          if (insideSphere(x)) continue;
          const Index node = config.extent.linear(static_cast<Index>(x[0]), static_cast<Index>(x[1]) % 16,
                                                  static_cast<Index>(x[2]) % 16);
          const std::size_t point = b * static_cast<std::size_t>(B * B * B) + static_cast<std::size_t>(i + B * (j + B * k));
          result.worstMoment = std::max(result.worstMoment, double(std::abs(amrDensity[point] - fields.density.data()[node])));
          for (int c = 0; c < 3; ++c)
            result.worstMoment = std::max(
                result.worstMoment, double(std::abs(amrVelocity[3 * point + c] - fields.velocity.data()[3 * node + c])));
        }
  result.amrForce = amr.obstacleForce();
  result.uniformForce = uniform.obstacleForce();
  std::printf("%s, %s: force on the sphere after %d steps, octree (%.6e, %.6e, %.6e), uniform (%.6e, %.6e, %.6e); "
              "moments within %.2e\n",
              lbm::latticeName(lattice), open ? "inlet and outflow" : "walls", steps, result.amrForce[0],
              result.amrForce[1], result.amrForce[2], result.uniformForce[0], result.uniformForce[1],
              result.uniformForce[2], result.worstMoment);
  return result;
}

}  // namespace

TEST(AmrLbm, OneLevelAroundASphereIsTheUniformSolverWithItsForce) {
  // A stream set moving between walls sloshes around the sphere: the octree's points and its
  // momentum exchange on the sphere are the uniform solver's, step by step.
  for (lbm::LatticeKind lattice : {lbm::LatticeKind::D3Q19, lbm::LatticeKind::D3Q27}) {
    const SphereFlowComparison c = compareSphereFlow(lattice, false, 0.0f, 0.04f, 60);
    EXPECT_LT(c.worstMoment, 2e-6) << lbm::latticeName(lattice);
    EXPECT_GT(std::abs(c.uniformForce[0]), 1e-2) << "the flow pushes on the sphere";
    for (int axis = 0; axis < 3; ++axis)
      EXPECT_NEAR(c.amrForce[static_cast<std::size_t>(axis)], c.uniformForce[static_cast<std::size_t>(axis)],
                  1e-5 * std::abs(c.uniformForce[0]))
          << lbm::latticeName(lattice) << " axis " << axis;
  }
}

TEST(AmrLbm, OneLevelFromAnInletToAnOutflowPastASphereIsTheUniformSolver) {
  // The face rules are the uniform solver's (FaceBoundaries.hpp), from the first step on: a stream
  // at the inlet's velocity meets the sphere; points and force as the uniform solver's, step by
  // step.
  const float inflow = 0.04f;
  for (lbm::LatticeKind lattice : {lbm::LatticeKind::D3Q19, lbm::LatticeKind::D3Q27}) {
    const SphereFlowComparison c = compareSphereFlow(lattice, true, inflow, inflow, 60);
    EXPECT_GT(c.uniformForce[0], 1e-2) << "drag points downstream";
    EXPECT_LT(c.worstMoment, 2e-6) << lbm::latticeName(lattice);
    for (int axis = 0; axis < 3; ++axis)
      EXPECT_NEAR(c.amrForce[static_cast<std::size_t>(axis)], c.uniformForce[static_cast<std::size_t>(axis)],
                  1e-5 * c.uniformForce[0])
          << lbm::latticeName(lattice) << " axis " << axis;
  }
}
TEST(AmrLbm, UniformFlowFromAnInletToAnOutflowStaysUniformOnRefinedFaces) {
  // The first and last leaves refined twice: the inlet and the outflow face lie on levels 0, 1 and
  // 2 (the level's spacing and time step in the face rules); a uniform stream is their steady state.
  Octree tree({3, 1, 1}, {false, true, true}, 2);
  tree.refine({0, 2});
  std::vector<int> onFaces;  // a level-1 leaf on each of the two x faces
  for (int n = 0; n < static_cast<int>(tree.leafCount()); ++n) {
    const BlockKey& leaf = tree.leaves()[static_cast<std::size_t>(n)];
    if (leaf.level == 1 && leaf.j == 0 && leaf.k == 0 && (leaf.i == 0 || leaf.i == 5)) onFaces.push_back(n);
  }
  ASSERT_EQ(onFaces.size(), 2u);
  tree.refine(onFaces);
  const float inflow = 0.05f;
  AmrLbm amr(tree, sphereFlowSettings(lbm::LatticeKind::D3Q19, 0.6, true, inflow));
  amr.initialise([&](const double (&)[3], float& density, float (&velocity)[3]) {
    density = 1.0f;
    velocity[0] = inflow;
    velocity[1] = velocity[2] = 0.0f;
  });
  ASSERT_EQ(amr.levels(), 3);
  amr.advance(100);
  std::vector<float> density, velocity;
  amr.fetchMoments(density, velocity);
  double worst = 0.0;
  for (std::size_t point = 0; point < density.size(); ++point) {
    worst = std::max(worst, double(std::abs(density[point] - 1.0f)));
    worst = std::max(worst, double(std::abs(velocity[3 * point] - inflow)));
    for (int c = 1; c < 3; ++c) worst = std::max(worst, double(std::abs(velocity[3 * point + c])));
  }
  EXPECT_LT(worst, 2e-6);
}
