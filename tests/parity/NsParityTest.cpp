// The 2D Navier-Stokes solver on the GPU against the CPU reference (the same point-wise functions;
// the GPU contracts multiply-adds, so FP32 results differ by rounding): a cylinder wake (inflow,
// convective outflow, slip sides, the penalised body), a lid-driven cavity (walls, the lid) and a
// periodic Taylor-Green vortex, each in FP32 and FP64.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "NsTestSupport.hpp"
#include "TestSupport.hpp"

using namespace octoflow;

namespace {

double worstDifference(const sim::FieldSet& a, const sim::FieldSet& b, const char* name, int components) {
  const float* x = a.values(name);
  const float* y = b.values(name);
  double worst = 0.0;
  for (Index n = 0; n < a.box.cellCount() * components; ++n) worst = std::max(worst, std::abs(double(x[n]) - double(y[n])));
  return worst;
}

void expectParity(const std::string& text, Index steps, double velocityBound, const char* what) {
  SCOPED_TRACE(what);
  auto cpu = octoflow::testing::startNs(text, exec::Backend::Cpu);
  auto cuda = octoflow::testing::startNs(text, exec::Backend::Cuda);
  cpu->simulation->advance(steps);
  cuda->simulation->advance(steps);
  const std::vector<std::string> names = {"velocity", "pressure", "vorticity"};
  const sim::FieldSet& a = cpu->simulation->fetchFields(names);
  const sim::FieldSet& b = cuda->simulation->fetchFields(names);
  const double velocity = worstDifference(a, b, "velocity", 3), pressure = worstDifference(a, b, "pressure", 1);
  const double vorticity = worstDifference(a, b, "vorticity", 1);
  std::printf("%s after %lld steps: max |CUDA - CPU| velocity %.3e, pressure %.3e, vorticity %.3e\n", what,
              static_cast<long long>(steps), velocity, pressure, vorticity);
  EXPECT_LT(velocity, velocityBound);
  EXPECT_LT(pressure, 4.0 * velocityBound);
  EXPECT_LT(vorticity, 40.0 * velocityBound);  // a difference over a cell
  const std::vector<double> rowCpu = cpu->simulation->diagnostics(), rowCuda = cuda->simulation->diagnostics();
  ASSERT_EQ(rowCpu.size(), rowCuda.size());
  for (std::size_t c = 5; c < rowCpu.size() && c < 7; ++c)  // drag and lift coefficients
    EXPECT_NEAR(rowCpu[c], rowCuda[c], 40.0 * velocityBound) << "column " << c;
}

}  // namespace

TEST(NsParity, CudaMatchesTheCpuReference) {
  OCTO_SKIP_WITHOUT_GPU();
  for (const char* precision : {"fp32", "fp64"}) {
    const double bound = std::string(precision) == "fp32" ? 2e-4 : 1e-9;
    const std::string p = std::string("precision = \"") + precision + "\"\n";
    expectParity(octoflow::testing::nsCase(256, 128, p + R"(reynolds = 200
size = [32.0, 16.0]
cfl = 0.5
[ns.cylinder]
centre = [8.0, 8.0]
diameter = 1.0
)"), 300, bound, (std::string("cylinder ") + precision).c_str());
    expectParity(octoflow::testing::nsCase(96, 96, p + R"(reynolds = 400
size = [1.0, 1.0]
cfl = 0.5
[ns.boundary]
west = "wall"
east = "wall"
south = "wall"
north = "lid"
)"), 300, bound, (std::string("cavity ") + precision).c_str());
    expectParity(octoflow::testing::nsCase(64, 48, p + R"(reynolds = 50
size = [6.283185307179586, 4.71238898038469]
cfl = 0.5
initial = "taylor-green"
)", "periodic = [true, true]\n"), 200, bound, (std::string("Taylor-Green ") + precision).c_str());
  }
}
