// Phase-field dendrites (Kobayashi model) against what the equations guarantee: the symmetry of a
// noise-free crystal, the conservation of enthalpy in a closed box.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "io/CaseFile.hpp"
#include "phasefield/DendriteMetrics.hpp"
#include "phasefield/KobayashiModel.hpp"
#include "phasefield/PhaseFieldCase.hpp"
#include "phasefield/PhaseFieldSolver.hpp"

using namespace octoflow;
using namespace octoflow::phasefield;

namespace {

io::CaseDescription dendriteCase(const std::string& size, const std::string& extra) {
  return io::parseCase("[case]\nname = \"dendrite\"\nsolver = \"phasefield\"\nsteps = 1\n[domain]\nsize = " + size +
                           "\n[phasefield]\n" + extra,
                       "dendrite.toml");
}

double at(const std::vector<float>& v, const Extent& e, Index i, Index j, Index k) {
  return v[static_cast<std::size_t>(e.linear(i, j, k))];
}

// The largest difference between a 2D field and its mirror images in x and y and its transpose.
double worstAsymmetryIn2D(const std::vector<float>& v, const Extent& e) {
  double worst = 0.0;
  for (Index j = 0; j < e.ny; ++j)
    for (Index i = 0; i < e.nx; ++i) {
      const double value = at(v, e, i, j, 0);
      worst = std::max({worst, std::fabs(value - at(v, e, e.nx - 1 - i, j, 0)),
                        std::fabs(value - at(v, e, i, e.ny - 1 - j, 0)), std::fabs(value - at(v, e, j, i, 0))});
    }
  return worst;
}

// The distance from the centre node 31.5 of a 64^2 box to the furthest solid (phi >= 0.5) node
// along its diagonal.
double diagonalReach(const std::vector<float>& phi, const Extent& e) {
  Index node = 32;
  while (node + 1 < e.nx && at(phi, e, node + 1, node + 1, 0) >= 0.5) ++node;
  return (node - 31.5) * std::sqrt(2.0);
}

}  // namespace

TEST(Dendrite, NoiseFreeCrystalKeepsFourFoldSymmetryIn2D) {
  // A nucleus at the centre of a 64^2 box (node 31.5: the box's own mirror centre). Mirrors and
  // the transpose compute the same operations with signs and operands swapped, which FP32 does
  // exactly: the bound 1e-6 leaves room only for a compiler contracting one side differently.
  const io::CaseDescription d = dendriteCase("[64, 64]", "noise = 0.0\nnucleus_radius = 6.0\n");
  PhaseFieldSolver solver(phaseFieldCaseOf(d).config, exec::Backend::Cpu);
  solver.advance(600);
  const Extent& e = solver.config().extent;
  std::vector<float> phi(solver.phi(), solver.phi() + e.cellCount());
  EXPECT_LE(worstAsymmetryIn2D(phi, e), 1e-6);
  // It grew, and further along the axes (anisotropy 0.05) than along the diagonals.
  const double axis = measureDendrite(phi.data(), e, 2, {31.5, 31.5, 0.0}).tip[0];
  const double diagonal = diagonalReach(phi, e);
  std::printf("after 600 steps: tip %.2f nodes along x, %.2f along the diagonal\n", axis, diagonal);
  EXPECT_GT(axis, 12.0);
  EXPECT_GT(axis, diagonal + 1.0);
}

TEST(Dendrite, NoiseFreeCrystalKeepsCubicSymmetryIn3D) {
  // Mirror images and the x <-> y swap are exact (as in 2D); swaps with z change the order in
  // which the three directions' flux differences are summed, so they agree to FP32 rounding of
  // that sum, grown over the steps: 2e-5 (phi in [0, 1]).
  const io::CaseDescription d = dendriteCase("[32, 32, 32]", "noise = 0.0\nnucleus_radius = 5.0\n");
  PhaseFieldSolver solver(phaseFieldCaseOf(d).config, exec::Backend::Cpu);
  solver.advance(400);
  const Extent& e = solver.config().extent;
  std::vector<float> phi(solver.phi(), solver.phi() + e.cellCount());
  double mirrors = 0.0, swaps = 0.0;
  for (Index k = 0; k < e.nz; ++k)
    for (Index j = 0; j < e.ny; ++j)
      for (Index i = 0; i < e.nx; ++i) {
        const float v = at(phi, e, i, j, k);
        mirrors = std::max({mirrors, std::fabs(v - at(phi, e, e.nx - 1 - i, j, k)),
                            std::fabs(v - at(phi, e, i, j, e.nz - 1 - k)), std::fabs(v - at(phi, e, j, i, k))});
        swaps = std::max({swaps, std::fabs(v - at(phi, e, k, j, i)), std::fabs(v - at(phi, e, i, k, j))});
      }
  EXPECT_LE(mirrors, 1e-6);
  EXPECT_LE(swaps, 2e-5);
  EXPECT_GE(at(phi, e, 15 + 8, 15, 15), 0.5);  // grew from radius 5 past 8 nodes along x
}

TEST(Dendrite, EnthalpyIsConservedInAClosedBox) {
  // No-flux faces, noise on: the heat equation only moves u, and the latent heat written as
  // p(phi_new) - p(phi) makes sum(u - p(phi)) constant up to rounding. The bound: half an FP32
  // ulp of 1 (the largest |u| and p) per node and step, 10,000 steps, as a mean over nodes:
  // 10,000 * 2^-24 = 6e-4 if every rounding went the same way; random roundings give far less.
  const io::CaseDescription d = dendriteCase("[48, 48]", "noise = 0.025\nnucleus_radius = 5.0\n");
  PhaseFieldSolver solver(phaseFieldCaseOf(d).config, exec::Backend::Cpu);
  const Index n = solver.nodeCount();
  const auto enthalpy = [&] {
    double sum = 0.0;
    for (Index i = 0; i < n; ++i) sum += static_cast<double>(solver.u()[i]) - latentFraction(solver.phi()[i]);
    return sum / static_cast<double>(n);
  };
  const double before = enthalpy();
  double solidBefore = 0.0, solidAfter = 0.0;
  for (Index i = 0; i < n; ++i) solidBefore += solver.phi()[i];
  solver.advance(10000);
  for (Index i = 0; i < n; ++i) solidAfter += solver.phi()[i];
  const double drift = std::fabs(enthalpy() - before);
  EXPECT_GT(solidAfter, 3.0 * solidBefore);  // the crystal grew: latent heat was released
  EXPECT_LT(drift, 10000.0 * std::ldexp(1.0, -24));
  RecordProperty("mean_enthalpy_drift", std::to_string(drift));
  std::printf("mean enthalpy drift over 10000 steps: %.3e (of L/C)\n", drift);
}

TEST(Dendrite, KarmaRappelCrystalKeepsFourFoldSymmetryAndConservesEnthalpy) {
  // The benchmark's model, noise-free, in a closed 64^2 box: mirror and transpose symmetry to
  // rounding (as for Kobayashi), and the enthalpy U - psi / 2 (the latent heat is half the change
  // of psi) constant: 4,000 steps, bound 4000 * 2^-24 as above.
  const io::CaseDescription d =
      dendriteCase("[64, 64]", "model = \"karma-rappel\"\ndx = 0.8\nnucleus_radius = 6.0\n");
  PhaseFieldSolver solver(phaseFieldCaseOf(d).config, exec::Backend::Cpu);
  const Extent& e = solver.config().extent;
  const Index n = solver.nodeCount();
  const auto enthalpy = [&] {
    double sum = 0.0;
    for (Index i = 0; i < n; ++i) sum += static_cast<double>(solver.u()[i]) - 0.5 * solver.phi()[i];
    return sum / static_cast<double>(n);
  };
  const double before = enthalpy();
  const auto solid = [&] {
    double sum = 0.0;
    for (Index i = 0; i < n; ++i) sum += 0.5 * (solver.phi()[i] + 1.0);
    return sum;
  };
  const double solidBefore = solid();
  solver.advance(4000);
  EXPECT_GT(solid(), 3.0 * solidBefore);
  const double drift = std::fabs(enthalpy() - before);
  EXPECT_LT(drift, 4000.0 * std::ldexp(1.0, -24));
  std::vector<float> psi(solver.phi(), solver.phi() + e.cellCount());
  EXPECT_LE(worstAsymmetryIn2D(psi, e), 2e-6);  // psi spans [-1, 1]: twice the bound on phi
  std::vector<float> phi(psi.size());
  for (std::size_t i = 0; i < psi.size(); ++i) phi[i] = 0.5f * (psi[i] + 1.0f);
  const double axis = measureDendrite(phi.data(), e, 2, {31.5, 31.5, 0.0}).tip[0];
  const double diagonal = diagonalReach(phi, e);
  std::printf("karma-rappel after 4000 steps: tip %.2f nodes along x, %.2f along the diagonal; enthalpy drift %.3e\n",
              axis, diagonal, drift);
  EXPECT_GT(axis, diagonal + 1.0);
}
