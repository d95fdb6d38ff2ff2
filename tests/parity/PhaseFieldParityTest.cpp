// The phase-field sweeps on the GPU (the z-marching kernel, approximate reciprocals) against the
// CPU reference: 500 steps of 3D and 2D dendrites of both models with noise (the same
// counter-based noise on both), FP32 on both; sizes that are no multiple of the GPU's tiles.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "TestSupport.hpp"
#include "io/CaseFile.hpp"
#include "phasefield/PhaseFieldCase.hpp"
#include "phasefield/PhaseFieldSolver.hpp"

using namespace octoflow;
using namespace octoflow::phasefield;

namespace {

// Runs `steps` of the case on both backends; returns max |phi_cuda - phi_cpu| and max |u_cuda - u_cpu|.
std::pair<double, double> worstDifferences(const io::CaseDescription& d, Index steps, double* grown = nullptr) {
  const PhaseFieldConfig& config = phaseFieldCaseOf(d).config;
  PhaseFieldSolver cpu(config, exec::Backend::Cpu), cuda(config, exec::Backend::Cuda);
  cpu.advance(steps);
  cuda.advance(steps);
  const auto count = static_cast<std::size_t>(cpu.nodeCount());
  std::vector<float> phi(count), u(count);
  exec::copyBytes(phi.data(), cuda.phi(), count * sizeof(float));
  exec::copyBytes(u.data(), cuda.u(), count * sizeof(float));
  double worstPhi = 0.0, worstU = 0.0, solid = 0.0;
  for (std::size_t n = 0; n < count; ++n) {
    worstPhi = std::max(worstPhi, static_cast<double>(std::fabs(phi[n] - cpu.phi()[n])));
    worstU = std::max(worstU, static_cast<double>(std::fabs(u[n] - cpu.u()[n])));
    solid += cpu.phi()[n] - config.liquidPhi;
  }
  if (grown) *grown = solid;
  return {worstPhi, worstU};
}

void expectParity(const std::string& size, const std::string& keys = "") {
  const io::CaseDescription d = io::parseCase(
      "[case]\nname = \"parity\"\nsolver = \"phasefield\"\nsteps = 500\n[domain]\nsize = " + size +
          "\n[phasefield]\nnoise = 0.025\nnucleus_radius = 6.0\n" + keys,
      "parity.toml");
  double grown = 0.0;
  const auto [worstPhi, worstU] = worstDifferences(d, 500, &grown);
  std::printf("%s %s: max |phi_cuda - phi_cpu| = %.3e, max |u_cuda - u_cpu| = %.3e\n", size.c_str(),
              phaseFieldCaseOf(d).model.c_str(), worstPhi, worstU);
  EXPECT_GT(grown, 500.0);  // a crystal is there
  // The two compilers contract multiply-adds differently (nvcc fuses, g++ at -O3 without -ffp-contract
  // does not) and the GPU's reciprocal is approximate (1 ulp): a few ulps a step; 500 steps of a
  // stable scheme keep that near 1e-6. Bound 1e-4.
  EXPECT_LE(worstPhi, 1e-4);
  EXPECT_LE(worstU, 1e-4);
}

}  // namespace

TEST(PhaseFieldParity, CudaMatchesTheCpuReferenceIn3D) {
  OCTO_SKIP_WITHOUT_GPU();
  expectParity("[48, 40, 36]");
}

TEST(PhaseFieldParity, CudaMatchesTheCpuReferenceIn2D) {
  OCTO_SKIP_WITHOUT_GPU();
  expectParity("[200, 120]");
}

TEST(PhaseFieldParity, KarmaRappelCudaMatchesTheCpuReferenceIn3DAnd2D) {
  OCTO_SKIP_WITHOUT_GPU();
  const std::string karmaRappel = "model = \"karma-rappel\"\ndx = 0.8\n";
  expectParity("[48, 40, 36]", karmaRappel);
  expectParity("[200, 120]", karmaRappel);
}

TEST(PhaseFieldParity, PeriodicFacesMatchTheCpuReference) {
  OCTO_SKIP_WITHOUT_GPU();
  const io::CaseDescription d = io::parseCase(
      "[case]\nname = \"parity\"\nsolver = \"phasefield\"\nsteps = 500\n[domain]\nsize = [40, 36, 33]\n"
      "periodic = [true, true, true]\n[phasefield]\nnucleus_radius = 6.0\nnucleus_centre = [1.0, 2.0, 3.0]\n",
      "parity.toml");
  const double worst = worstDifferences(d, 300).first;
  std::printf("periodic [40, 36, 33], nucleus at the wrapped faces: max |phi_cuda - phi_cpu| = %.3e\n", worst);
  EXPECT_LE(worst, 1e-4);
}
