// GPU isosurface extraction against the CPU reference: the same vertices in the same order, the
// same triangles, positions and normals to rounding.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "SurfaceChecks.hpp"
#include "TestSupport.hpp"
#include "exec/Memory.hpp"
#include "insitu/Isosurface.hpp"

using namespace octoflow;
using namespace octoflow::insitu;

namespace {

void expectSameSurface(const std::vector<float>& values, const Extent& e, const GridGeometry& geometry, float level) {
  exec::Buffer<float> device(exec::MemorySpace::Device, values.size());
  device.copyFrom(values.data(), values.size());
  auto cpu = IsosurfaceExtractor::create(exec::Backend::Cpu);
  auto cuda = IsosurfaceExtractor::create(exec::Backend::Cuda);
  const Surface reference = cpu->extract(ScalarFieldView{values.data(), e, geometry}, level);
  const Surface gpu = cuda->extract(ScalarFieldView{device.data(), e, geometry}, level);
  ASSERT_GT(reference.triangleCount, 0);
  ASSERT_EQ(gpu.pointCount, reference.pointCount);
  ASSERT_EQ(gpu.triangleCount, reference.triangleCount);
  for (Index n = 0; n < 3 * reference.triangleCount; ++n)
    ASSERT_EQ(gpu.triangles[n], reference.triangles[n]) << "triangle " << n / 3;
  double worstPoint = 0.0, worstNormal = 0.0;
  for (Index n = 0; n < 3 * reference.pointCount; ++n) {
    worstPoint = std::max(worstPoint, static_cast<double>(std::fabs(gpu.points[n] - reference.points[n])));
    worstNormal = std::max(worstNormal, static_cast<double>(std::fabs(gpu.normals[n] - reference.normals[n])));
  }
  std::printf("isosurface %lldx%lldx%lld: %lld triangles, max |cuda - cpu| points %.3g, normals %.3g\n",
              static_cast<long long>(e.nx), static_cast<long long>(e.ny), static_cast<long long>(e.nz),
              static_cast<long long>(gpu.triangleCount), worstPoint, worstNormal);
  // nvcc may contract a multiply and an add into one FMA where g++ rounds twice: a few ulp.
  EXPECT_LT(worstPoint, 1e-4);
  EXPECT_LT(worstNormal, 1e-4);
  EXPECT_GT(gpu.triangleCount, 0);
}

}  // namespace

TEST(IsosurfaceParity, SphereMatchesTheCpuReference) {
  OCTO_SKIP_WITHOUT_GPU();
  const Extent e{70, 66, 61};  // rows longer than a warp, not multiples of it
  const double centre[3] = {34.2, 32.9, 30.1};
  std::vector<float> phi(static_cast<std::size_t>(e.cellCount()));
  for (Index k = 0; k < e.nz; ++k)
    for (Index j = 0; j < e.ny; ++j)
      for (Index i = 0; i < e.nx; ++i)
        phi[e.linear(i, j, k)] = octoflow::testing::spherePhi(i, j, k, centre, 25.0, 2.0);
  expectSameSurface(phi, e, GridGeometry{{0.5f, 0.0f, -1.0f}, {0.1f, 0.1f, 0.2f}}, 0.5f);
}

TEST(IsosurfaceParity, RandomFieldMatchesTheCpuReference) {
  OCTO_SKIP_WITHOUT_GPU();
  const Extent e{45, 38, 29};
  std::mt19937 random(7);
  std::uniform_real_distribution<float> uniform(0.0f, 1.0f);
  std::vector<float> field(static_cast<std::size_t>(e.cellCount()));
  for (float& value : field) value = uniform(random);
  expectSameSurface(field, e, GridGeometry{}, 0.4f);
}
