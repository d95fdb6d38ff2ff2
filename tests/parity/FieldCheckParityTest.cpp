// The watchdog's search on the GPU against the CPU: the same first faulty node of the owned region
// (NaN, infinity, out of range, a vector too long) in fields with many faults, and none where
// there is none.
#include <gtest/gtest.h>

#include <limits>
#include <random>
#include <vector>

#include "TestSupport.hpp"
#include "exec/Memory.hpp"
#include "sim/FieldCheck.hpp"

using namespace octoflow;

TEST(FieldCheckParity, CudaFindsTheSameFirstFaultAsTheCpu) {
  OCTO_SKIP_WITHOUT_GPU();
  const Extent grid{70, 33, 21};
  const std::size_t nodes = static_cast<std::size_t>(grid.cellCount());
  std::mt19937 random(7);
  std::uniform_real_distribution<float> near(0.9f, 1.1f), slow(-0.2f, 0.2f);
  std::vector<float> density(nodes), velocity(3 * nodes);
  for (float& value : density) value = near(random);
  for (float& value : velocity) value = slow(random);
  exec::Buffer<float> deviceDensity(exec::MemorySpace::Device, nodes), deviceVelocity(exec::MemorySpace::Device, 3 * nodes);
  const std::vector<sim::FieldLimit> limits = {{"density", 0.1f, 10.0f, false}, {"velocity", 0.0f, 0.5f, true}};
  sim::FieldSet host, device;
  host.box = device.box = NodeBox{{-1, -1, 0}, grid};
  host.owned = device.owned = NodeBox{{0, 0, 0}, Extent{68, 31, 21}};
  host.arrays = {{"density", 1, density.data()}, {"velocity", 3, velocity.data()}};
  device.arrays = {{"density", 1, deviceDensity.data()}, {"velocity", 3, deviceVelocity.data()}};
  const auto compare = [&](const char* what) {
    SCOPED_TRACE(what);
    deviceDensity.copyFrom(density.data(), nodes);
    deviceVelocity.copyFrom(velocity.data(), 3 * nodes);
    sim::FieldFault onCpu, onCuda;
    const bool cpuFound = sim::findFieldFault(exec::Backend::Cpu, host, limits, onCpu);
    const bool cudaFound = sim::findFieldFault(exec::Backend::Cuda, device, limits, onCuda);
    ASSERT_EQ(cpuFound, cudaFound);
    if (!cpuFound) return;
    EXPECT_EQ(onCpu.field, onCuda.field);
    for (int a = 0; a < 3; ++a) EXPECT_EQ(onCpu.node[a], onCuda.node[a]);
    EXPECT_EQ(onCpu.describe(), onCuda.describe());
  };
  compare("sane fields");
  // Faults scattered through the grid, ghost layers included; each round adds more, lower ones.
  std::uniform_int_distribution<std::size_t> anywhere(0, nodes - 1);
  const float kinds[] = {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(), 20.0f, 0.0f};
  for (int round = 0; round < 6; ++round) {
    for (int n = 0; n < 40; ++n) density[anywhere(random)] = kinds[(round + n) % 4];
    compare("density faults");
  }
  for (float& value : density) value = 1.0f;
  for (int round = 0; round < 4; ++round) {
    for (int n = 0; n < 30; ++n) velocity[3 * anywhere(random) + static_cast<std::size_t>(n % 3)] = round % 2 ? 0.6f : std::numeric_limits<float>::quiet_NaN();
    compare("velocity faults");
  }
}
