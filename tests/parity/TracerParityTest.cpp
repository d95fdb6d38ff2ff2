// GPU tracers against the CPU reference: the same tracers alive, the same ids, the same paths to
// rounding, through releases, retirement at a solid and at the grid's faces, and compaction.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "OctreeFlow.hpp"
#include "TestSupport.hpp"
#include "exec/Memory.hpp"
#include "particles/TracerSet.hpp"

using namespace octoflow;
using namespace octoflow::particles;

TEST(TracerParity, CudaMatchesTheCpuReference) {
  OCTO_SKIP_WITHOUT_GPU();
  // Cellular vortices drifting along x (a Taylor-Green pattern plus a uniform stream), a solid
  // block in the way; 3D with a slow z drift.
  const Extent e{64, 48, 24};
  const double pi = std::acos(-1.0), k = 2.0 * pi / 16.0;
  std::vector<float> velocity(static_cast<std::size_t>(3 * e.cellCount()));
  std::vector<std::uint8_t> solid(static_cast<std::size_t>(e.cellCount()), 0);
  for (Index z = 0; z < e.nz; ++z)
    for (Index y = 0; y < e.ny; ++y)
      for (Index x = 0; x < e.nx; ++x) {
        const Index n = e.linear(x, y, z);
        velocity[3 * n + 0] = static_cast<float>(0.05 + 0.08 * std::sin(k * x) * std::cos(k * y));
        velocity[3 * n + 1] = static_cast<float>(-0.08 * std::cos(k * x) * std::sin(k * y));
        velocity[3 * n + 2] = static_cast<float>(0.01 * std::sin(k * y));
        solid[static_cast<std::size_t>(n)] = x >= 40 && x < 44 && y >= 10 && y < 30 ? 1 : 0;
      }
  exec::Buffer<float> deviceVelocity(exec::MemorySpace::Device, velocity.size());
  deviceVelocity.copyFrom(velocity.data(), velocity.size());
  exec::Buffer<std::uint8_t> deviceSolid(exec::MemorySpace::Device, solid.size());
  deviceSolid.copyFrom(solid.data(), solid.size());

  TracerSource plane = TracerSource::plane({2.0f, 1.0f, 1.0f}, {0.0f, 46.0f, 0.0f}, {0.0f, 0.0f, 22.0f}, 24, 10);
  plane.releaseEvery = 25;
  for (Integrator integrator : {Integrator::Rk2, Integrator::Rk4}) {
    TracerSettings settings;
    settings.sources = {plane};
    settings.integrator = integrator;
    settings.substeps = 2;
    settings.maxParticles = 2000;  // the cap is reached: compaction and refusal on both
    TracerSet cpu(exec::Backend::Cpu, settings), cuda(exec::Backend::Cuda, settings);
    for (Index step = 0; step < 400; ++step) {
      ASSERT_EQ(cpu.release(step), cuda.release(step)) << "step " << step;
      cpu.advect(VelocityFieldView{velocity.data(), solid.data(), e});
      cuda.advect(VelocityFieldView{deviceVelocity.data(), deviceSolid.data(), e});
    }
    const TracerView a = cpu.view(), b = cuda.view();
    ASSERT_GT(a.count, 500);
    ASSERT_LT(a.count, static_cast<Index>(cpu.released()));  // some were retired
    ASSERT_EQ(a.count, b.count);
    double worst = 0.0;
    for (Index n = 0; n < a.count; ++n) {
      ASSERT_EQ(a.ids[n], b.ids[n]) << "tracer " << n;
      ASSERT_EQ(a.ages[n], b.ages[n]);
      for (int c = 0; c < 3; ++c) worst = std::max(worst, static_cast<double>(std::fabs(a.positions[3 * n + c] - b.positions[3 * n + c])));
    }
    std::printf("tracers (%s): %lld alive of %lld released, max |cuda - cpu| position %.3g nodes\n",
                integrator == Integrator::Rk2 ? "RK2" : "RK4", static_cast<long long>(a.count),
                static_cast<long long>(cpu.released()), worst);
    // nvcc contracts multiply-adds into FMAs where g++ rounds twice; over 400 steps in a smooth
    // flow that stays far below a node.
    EXPECT_LT(worst, 1e-3);
  }
}

// Tracers in the blocks of an octree (BlockVelocityView): the CUDA path moves them as the CPU does
// across three levels of a swirling field.
TEST(TracerParity, OctreeTracersOnCudaMatchTheCpu) {
  OCTO_SKIP_WITHOUT_GPU();
  const octoflow::testing::OctreeFlow flow([](double x, double y, double z) {
    return std::array<double, 3>{0.2 + 0.02 * std::sin(0.3 * y), 0.03 * std::cos(0.2 * x + 0.1 * z), 0.02 * std::sin(0.25 * x)};
  });
  std::vector<particles::TracerView> views;
  std::vector<std::vector<float>> positions;
  for (const exec::Backend backend : {exec::Backend::Cpu, exec::Backend::Cuda}) {
    const exec::MemorySpace space = exec::workingSpace(backend);
    exec::Buffer<float> velocity(space, flow.velocity.size());
    velocity.copyFrom(flow.velocity.data(), flow.velocity.size());
    exec::Buffer<std::int32_t> meta(space, flow.tables.meta.size()), leafOf(space, flow.tables.leafOf.size());
    meta.copyFrom(flow.tables.meta.data(), flow.tables.meta.size());
    leafOf.copyFrom(flow.tables.leafOf.data(), flow.tables.leafOf.size());
    particles::BlockVelocityView view = flow.tables.view;
    view.velocity = velocity.data();
    view.meta = meta.data();
    view.leafOf = leafOf.data();
    particles::TracerSettings settings;
    settings.sources = {particles::TracerSource::plane({1.0f, 1.0f, 1.0f}, {0.0f, 14.0f, 0.0f}, {0.0f, 0.0f, 14.0f}, 12, 12)};
    settings.integrator = particles::Integrator::Rk4;
    particles::TracerSet tracers(backend, settings);
    ASSERT_EQ(tracers.release(0), 144);
    for (int step = 0; step < 250; ++step) tracers.advect(view);
    const particles::TracerView live = tracers.view();
    positions.emplace_back(live.positions, live.positions + 3 * live.count);
  }
  ASSERT_EQ(positions[0].size(), positions[1].size());
  ASSERT_GT(positions[0].size(), 100u);
  float largest = 0.0f, furthest = 0.0f;
  for (std::size_t n = 0; n < positions[0].size(); ++n) {
    largest = std::max(largest, std::abs(positions[0][n] - positions[1][n]));
    if (n % 3 == 0) furthest = std::max(furthest, positions[0][n]);
  }
  EXPECT_GT(furthest, 45.0f) << "the tracers crossed the refined middle";
  EXPECT_LT(largest, 1e-3f);
}
