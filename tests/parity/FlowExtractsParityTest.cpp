// The extracts of a run made on the GPU beside a CUDA solver (tracers moved in the device's
// velocity field, the speed surface extracted from it) against the same made beside a CPU solver:
// what `octoflow run` does on each backend.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "TestSupport.hpp"
#include "insitu/FlowExtracts.hpp"
#include "io/CaseFile.hpp"

using namespace octoflow;

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
  for (Index step = 0; step < d.steps; step += d.tracers.every) {  // as the run loop does it
    cpu.releaseTracers(step);
    cuda.releaseTracers(step);
    cpu.moveTracers(static_cast<int>(d.tracers.every));
    cuda.moveTracers(static_cast<int>(d.tracers.every));
    cpuSolver->advance(d.tracers.every);
    cudaSolver->advance(d.tracers.every);
  }
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
