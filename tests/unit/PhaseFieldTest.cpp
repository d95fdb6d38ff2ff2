// The phase-field model's pieces: the anisotropic face flux, the noise, the case section and its
// errors, the dendrite measurements on analytic fields.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "TestSupport.hpp"
#include "common/Error.hpp"
#include "io/CaseFile.hpp"
#include "phasefield/DendriteMetrics.hpp"
#include "phasefield/KobayashiModel.hpp"
#include "phasefield/PhaseFieldCase.hpp"

using namespace octoflow;
using namespace octoflow::phasefield;

namespace {

const char* kCase = R"([case]
name = "dendrite"
solver = "phasefield"
steps = 10
[domain]
size = [32, 32]
[phasefield]
anisotropy = 0.05
)";

std::string errorOf(const std::string& text) {
  try {
    io::parseCase(text, "bad.toml");
  } catch (const InputError& error) {
    return error.what();
  }
  return "no error";
}

}  // namespace

TEST(KobayashiModel, FluxAlongAnAxisIsScaledByTheSquaredAnisotropyFactor) {
  // Along a cube axis eps = epsBar (1 + gamma) and d eps/d phi_n vanishes: flux (1 + gamma)^2 phi_n.
  EXPECT_FLOAT_EQ(faceFlux(0.3f, 0.0f, 0.0f, 0.05f), 1.05f * 1.05f * 0.3f);
  // Without anisotropy the flux is the gradient itself, in any direction.
  EXPECT_FLOAT_EQ(faceFlux(0.3f, -0.2f, 0.1f, 0.0f), 0.3f);
  // Odd in the normal gradient, even in the tangential ones (mirror symmetry of the scheme).
  EXPECT_EQ(faceFlux(-0.3f, 0.2f, 0.1f, 0.05f), -faceFlux(0.3f, 0.2f, 0.1f, 0.05f));
  EXPECT_EQ(faceFlux(0.3f, -0.2f, 0.1f, 0.05f), faceFlux(0.3f, 0.2f, -0.1f, 0.05f));
  // A flat field has no flux (and no division by zero).
  EXPECT_EQ(faceFlux(0.0f, 0.0f, 0.0f, 0.05f), 0.0f);
}

TEST(KobayashiModel, TwoDimensionalAnisotropyIsFourFold) {
  // eq. (3) in a plane: eps / epsBar = 1 + gamma cos(4 theta). At theta the flux of a unit gradient
  // is e (cos theta component) with the torque term: check e through the normal flux at 0 and 45 deg.
  const float gamma = 0.05f;
  const float c = std::cos(0.25f * 3.14159265f);
  // At 45 degrees S/G^2 = 1/2, e = 1 - gamma, and phi_n^2/G - S/G^2 = 0: flux = (1 - gamma)^2 phi_n.
  EXPECT_NEAR(faceFlux(c, c, 0.0f, gamma), (1.0f - gamma) * (1.0f - gamma) * c, 1e-6f);
}

TEST(KobayashiModel, LatentFractionInterpolatesFromLiquidToSolid) {
  EXPECT_EQ(latentFraction(0.0f), 0.0f);
  EXPECT_FLOAT_EQ(latentFraction(1.0f), 1.0f);
  EXPECT_FLOAT_EQ(latentFraction(0.5f), 0.5f);
  // p'(phi) = 30 phi^2 (1 - phi)^2 (eq. (6)): a centred difference at 0.3.
  const float h = 1e-3f;
  EXPECT_NEAR((latentFraction(0.3f + h) - latentFraction(0.3f - h)) / (2 * h), 30 * 0.09 * 0.49, 1e-3);
}

TEST(KobayashiModel, NoiseIsUniformInMinusOneToOneAndKeyedByNodeAndStep) {
  double sum = 0.0, squares = 0.0;
  float low = 1.0f, high = -1.0f;
  const int count = 200000;
  for (int n = 0; n < count; ++n) {
    const float chi = noiseValue(7, static_cast<std::uint64_t>(n), 3);
    low = std::min(low, chi);
    high = std::max(high, chi);
    sum += chi;
    squares += chi * chi;
  }
  EXPECT_GE(low, -1.0f);
  EXPECT_LT(high, 1.0f);
  EXPECT_NEAR(sum / count, 0.0, 0.01);            // mean of U(-1, 1): 0, +- 5 standard errors (0.0013 each)
  EXPECT_NEAR(squares / count, 1.0 / 3.0, 0.01);  // variance of U(-1, 1): 1/3
  EXPECT_EQ(noiseValue(7, 12, 3), noiseValue(7, 12, 3));
  EXPECT_NE(noiseValue(7, 12, 3), noiseValue(7, 12, 4));
  EXPECT_NE(noiseValue(7, 12, 3), noiseValue(8, 12, 3));
}

TEST(KobayashiModel, NickelConstantsGiveTheSeedsScales) {
  const KobayashiMaterial ni;
  EXPECT_NEAR(ni.b(), 2.197224577, 1e-8);
  EXPECT_NEAR(ni.epsilonBarSquared(), 4.0415e-8, 1e-11);  // J/m
  EXPECT_NEAR(ni.barrierHeight(), 6.0973e7, 1e3);          // J/m^3
  EXPECT_NEAR(ni.mobility(), 13.464, 1e-3);                // m^3/(J s)
  // M epsBar^2 = mu Tm sigma / L, independent of b.
  EXPECT_NEAR(ni.mobility() * ni.epsilonBarSquared(), 2.0 * 1728 * 0.37 / 2.35e9, 1e-12);
  // The heat equation bounds dt: dx^2 / (6 kappa) in 3D at dx = 20 nm.
  const StabilityLimits limits = kobayashiStability(ni, 2e-8, 3, 0.05);
  EXPECT_NEAR(limits.heat, 4e-16 / (6 * 1.55e-5), 1e-20);
  EXPECT_GT(limits.phase, limits.heat);
}

TEST(PhaseFieldCase, DefaultsAndKeys) {
  const io::CaseDescription d = io::parseCase(kCase, "dendrite.toml");
  EXPECT_EQ(d.solver, "phasefield");
  const PhaseFieldCase& c = phaseFieldCaseOf(d);
  EXPECT_EQ(c.model, "kobayashi");
  EXPECT_EQ(d.dimensions, 2);
  EXPECT_EQ(c.config.extent.nx, 32);
  // dt defaults to 0.8 of the 2D limit dx^2 / (4 kappa).
  EXPECT_NEAR(c.dt, 0.8 * 4e-16 / (4 * 1.55e-5), 1e-20);
  EXPECT_FLOAT_EQ(c.config.initialU, -0.5f);
  EXPECT_DOUBLE_EQ(c.config.nucleusCentre[0], 15.5);
  EXPECT_EQ(d.output.fields, (std::vector<std::string>{"phi", "temperature"}));
  // initial_temperature in K is the other way to give the undercooling.
  const io::CaseDescription t =
      io::parseCase(std::string(kCase) + "initial_temperature = 1620.0\n", "dendrite.toml");
  EXPECT_NEAR(phaseFieldCaseOf(t).config.initialU, -(1728.0 - 1620.0) * 5.42e6 / 2.35e9, 1e-6);
}

TEST(PhaseFieldCase, BadInputNamesTheKey) {
  const std::string base = kCase;
  // dt beyond the explicit limit: the key and the limit.
  const std::string tooLarge = errorOf(base + "dt = 1e-9\n");
  EXPECT_NE(tooLarge.find("phasefield.dt"), std::string::npos) << tooLarge;
  EXPECT_NE(tooLarge.find("stability limit 6.452e-12 s"), std::string::npos) << tooLarge;
  EXPECT_NE(errorOf(base + "anisotropy_strength = 0.1\n").find("phasefield.anisotropy_strength"), std::string::npos);
  EXPECT_NE(errorOf(base + "model = \"karma\"\n").find("phasefield.model"), std::string::npos);
  EXPECT_NE(errorOf(octoflow::testing::replaced(base, "anisotropy = 0.05", "anisotropy = 0.2")).find("phasefield.anisotropy"),
            std::string::npos);
  EXPECT_NE(errorOf(base + "noise = -0.1\n").find("phasefield.noise"), std::string::npos);
  EXPECT_NE(errorOf(base + "undercooling = 0.3\ninitial_temperature = 1600.0\n").find("phasefield.initial_temperature"),
            std::string::npos);
  EXPECT_NE(errorOf(base + "initial_temperature = 1800.0\n").find("below the melting point"), std::string::npos);
  EXPECT_NE(errorOf(base + "nucleus_centre = [40.0, 3.0]\n").find("phasefield.nucleus_centre"), std::string::npos);
  EXPECT_NE(errorOf(base + "[output]\nfields = [\"density\"]\n").find("output.fields"), std::string::npos);
  EXPECT_NE(errorOf(base + "[lbm]\ntau = 0.8\n").find("unknown key"), std::string::npos);
  EXPECT_NE(errorOf(base + "[tracers]\n[[tracers.source]]\ntype = \"point\"\nat = [1.0, 1.0]\n").find("no velocity field"),
            std::string::npos);
  const std::string cube = octoflow::testing::replaced(base, "size = [32, 32]", "size = [16, 16, 16]");
  EXPECT_NE(errorOf(cube + "[surface]\nfield = \"speed\"\nlevel = 0.5\n").find("surface.field"), std::string::npos);
  EXPECT_NE(errorOf(octoflow::testing::replaced(base, "\"phasefield\"", "\"phase-field\"")).find("case.solver"),
            std::string::npos);
}

TEST(DendriteMetrics, DiscAndSphereOfKnownSize) {
  // A disc of radius R = 10 nodes centred at (24, 24), phi = (1 - tanh((r - R)/w))/2 with w = 2:
  // the tip on each axis at 10 (linear interpolation of a symmetric profile: within 0.01 node);
  // the integral of phi is pi (R^2 + pi^2 w^2 / 12) (a Fermi profile's second moment), within
  // 0.5 %; the integral of |grad phi| is 2 pi R exactly for a symmetric profile, within 2 %
  // (central differences).
  const Extent e{49, 49, 1};
  std::vector<float> phi(static_cast<std::size_t>(e.cellCount()));
  for (Index j = 0; j < e.ny; ++j)
    for (Index i = 0; i < e.nx; ++i) {
      const double r = std::hypot(i - 24.0, j - 24.0);
      phi[static_cast<std::size_t>(e.linear(i, j, 0))] = static_cast<float>(0.5 * (1.0 - std::tanh((r - 10.0) / 2.0)));
    }
  const DendriteMetrics m = measureDendrite(phi.data(), e, 2, {24.0, 24.0, 0.0});
  EXPECT_NEAR(m.tip[0], 10.0, 0.01);
  EXPECT_NEAR(m.tip[1], 10.0, 0.01);
  EXPECT_TRUE(std::isnan(m.tip[2]));
  const double solid = 3.14159265 * (100.0 + 3.14159265 * 3.14159265 * 4.0 / 12.0) / e.cellCount();
  EXPECT_NEAR(m.solidFraction, solid, 0.005 * solid);
  EXPECT_NEAR(m.interfaceArea, 2.0 * 3.14159265 * 10.0, 0.02 * 2.0 * 3.14159265 * 10.0);

  // A sphere of radius R = 8 (w = 1.5) in a 33^3 box: the integral of |grad phi| is
  // 4 pi (R^2 + pi^2 w^2 / 12), within 1 %.
  const Extent c{33, 33, 33};
  std::vector<float> ball(static_cast<std::size_t>(c.cellCount()));
  for (Index k = 0; k < c.nz; ++k)
    for (Index j = 0; j < c.ny; ++j)
      for (Index i = 0; i < c.nx; ++i) {
        const double r = std::sqrt((i - 16.0) * (i - 16.0) + (j - 16.0) * (j - 16.0) + (k - 16.0) * (k - 16.0));
        ball[static_cast<std::size_t>(c.linear(i, j, k))] = static_cast<float>(0.5 * (1.0 - std::tanh((r - 8.0) / 1.5)));
      }
  const DendriteMetrics s = measureDendrite(ball.data(), c, 3, {16.0, 16.0, 16.0});
  EXPECT_NEAR(s.tip[2], 8.0, 0.01);
  const double area = 4.0 * 3.14159265 * (64.0 + 3.14159265 * 3.14159265 * 2.25 / 12.0);
  EXPECT_NEAR(s.interfaceArea, area, 0.01 * area);
}

TEST(KarmaRappelModel, CaseDefaultsAreTheBenchmarks) {
  const io::CaseDescription d = io::parseCase(std::string(kCase) + "model = \"karma-rappel\"\n", "bm3.toml");
  const PhaseFieldCase& c = phaseFieldCaseOf(d);
  EXPECT_TRUE(c.isKarmaRappel());
  EXPECT_DOUBLE_EQ(c.dx, 0.4);                                 // W0
  EXPECT_NEAR(c.dt, 0.8 * 0.4 * 0.4 / (4 * 10.0), 1e-15);      // 0.8 of the heat limit dx^2 / (4 D)
  EXPECT_NEAR(c.karmaRappel.coupling(), 15.9566, 1e-4);        // lambda = D / 0.6267
  EXPECT_FLOAT_EQ(c.config.initialU, -0.3f);                   // Delta = -0.3
  EXPECT_EQ(c.noise, 0.0);
  EXPECT_EQ(c.config.liquidPhi, -1.0f);
  EXPECT_EQ(c.config.solidPhi, 1.0f);
  // Output phi = (psi + 1) / 2; the temperature is U itself.
  EXPECT_DOUBLE_EQ(c.phiOutput().scale, 0.5);
  EXPECT_DOUBLE_EQ(c.phiOutput().offset, 0.5);
  EXPECT_TRUE(c.temperatureOutput().identity());
  const KarmaRappelStep& s = c.config.karmaRappel;
  EXPECT_FLOAT_EQ(s.heatFactor, 10.0f * 0.0032f / 0.16f);
  EXPECT_FLOAT_EQ(s.gradientFactor, 1.0f / 0.16f);
}

TEST(KarmaRappelModel, BadInputNamesTheKey) {
  const std::string base = std::string(kCase) + "model = \"karma-rappel\"\n";
  const std::string tooLarge = errorOf(base + "dt = 0.01\n");
  EXPECT_NE(tooLarge.find("phasefield.dt"), std::string::npos) << tooLarge;
  EXPECT_NE(tooLarge.find("stability limit 0.004 tau0"), std::string::npos) << tooLarge;
  EXPECT_NE(errorOf(base + "initial_temperature = 1600.0\n").find("applies to model \"kobayashi\" only"),
            std::string::npos);
  EXPECT_NE(errorOf(std::string(kCase) + "diffusivity = 4.0\n").find("phasefield.diffusivity"), std::string::npos);
  EXPECT_NE(errorOf(base + "diffusivity = -1.0\n").find("phasefield.diffusivity"), std::string::npos);
}

TEST(KarmaRappelModel, PointUpdateFollowsTheEquations) {
  KarmaRappelStep s = karmaRappelStep(KarmaRappelParameters{}, 0.5, 0.001, 0.05, 0.0, 1);
  NodeState node{};
  node.phi = 0.2f;
  node.divergence = 0.3f;
  node.u = -0.3f;
  node.uLaplacian = 0.02f;
  node.gradient[0] = 1.0f;  // the normal along x: a = 1 + eps4, tau = (1 + eps4)^2
  float psi = 0.0f, u = 0.0f;
  s.update(node, psi, u);
  const double q = 1.0 - 0.04, lambda = 10.0 / 0.6267;
  const double force = 0.3 / 0.25 + (0.2 + lambda * 0.3 * q) * q;
  const double expected = 0.2 + 0.001 * force / (1.05 * 1.05);
  EXPECT_NEAR(psi, expected, 2e-7);
  // The latent heat is half the change of psi: U - psi / 2 moves by the diffusion alone.
  EXPECT_NEAR(u - 0.5f * psi, (-0.3 + 10.0 * 0.001 / 0.25 * 0.02) - 0.5 * 0.2, 1e-7);
  // Along a diagonal of the plane a = 1 - eps4.
  EXPECT_NEAR(anisotropyFactor(1.0f, 1.0f, 0.0f, 0.05f), 0.95f, 1e-7f);
  EXPECT_EQ(anisotropyFactor(0.0f, 0.0f, 0.0f, 0.05f), 1.0f);  // flat: isotropic
}

TEST(KarmaRappelModel, FreeEnergyOfTheUndercooledMelt) {
  // psi = -1, U = -0.3: f = -1/2 + 1/4 + lambda (-0.3)(-1)(1 - 2/3 + 1/5) = -1/4 + 0.16 lambda
  // = 2.30306 per unit area, the constant in the benchmark's free energy (2.1225e6 over 960^2).
  const Extent e{20, 10, 1};
  std::vector<float> phi(static_cast<std::size_t>(e.cellCount()), 0.0f), u(phi.size(), -0.3f);
  const double lambda = 10.0 / 0.6267, h = 0.4;
  const double expected = (-0.25 + 0.16 * lambda) * 20 * 10 * h * h;
  EXPECT_NEAR(karmaRappelFreeEnergy(phi.data(), u.data(), e, 2, h, 0.05, lambda), expected, 1e-7 * expected);  // U = -0.3f in FP32
  // A gradient adds W^2 |grad psi|^2 / 2: psi from -1 to 1 over x (a = 1 + eps4 along x).
  for (Index i = 0; i < e.nx; ++i)
    for (Index j = 0; j < e.ny; ++j) phi[static_cast<std::size_t>(e.linear(i, j, 0))] = static_cast<float>(i) / 19.0f;
  std::fill(u.begin(), u.end(), 0.0f);
  double bulk = 0.0, gradient = 0.0;
  for (Index i = 0; i < e.nx; ++i) {
    const double p = 2.0 * i / 19.0 - 1.0, p2 = p * p;
    bulk += (-0.5 * p2 + 0.25 * p2 * p2) * e.ny;
    const double slope = (i == 0 || i == e.nx - 1 ? 1.0 : 2.0) * (2.0 / 19.0) / (2.0 * h);  // clamped ends: half
    gradient += 0.5 * 1.05 * 1.05 * slope * slope * e.ny;
  }
  EXPECT_NEAR(karmaRappelFreeEnergy(phi.data(), u.data(), e, 2, h, 0.05, lambda), (bulk + gradient) * h * h, 1e-6);
}
