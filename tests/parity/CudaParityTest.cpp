// The CUDA execution against the CPU reference: same case, same FP32 physics source, 1000 steps.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <utility>
#include <vector>

#include "TestSupport.hpp"
#include "common/Error.hpp"
#include "geometry/Obstacle.hpp"
#include "lbm/UniformSolver.hpp"

using namespace octoflow;
using namespace octoflow::lbm;

struct ParityCase {
  LatticeKind lattice;
  CollisionKind collision;
  StorageKind storage;
  bool smagorinsky = false;
  bool csm = false;
};

std::string parityName(const ParityCase& c) {
  return std::string(latticeName(c.lattice)) + "_" + collisionName(c.collision) + "_" + storageName(c.storage) +
         (c.smagorinsky ? "_smagorinsky" : "") + (c.csm ? "_csm" : "");
}

void PrintTo(const ParityCase& c, std::ostream* out) { *out << parityName(c); }

class CudaParity : public ::testing::TestWithParam<ParityCase> {};

TEST_P(CudaParity, MatchesTheCpuReferenceAfter1000Steps) {
  OCTO_SKIP_WITHOUT_GPU();
  // Every boundary kind: a parabolic velocity inlet (x-), an outflow or pressure outlet (x+), a
  // resting wall (y-), a moving lid (y+), periodic z, an obstacle with its force, a body force.
  const ParityCase& parity = GetParam();
  UniformSolverConfig config;
  config.lattice = parity.lattice;
  config.collision = parity.collision;
  config.storage = parity.storage;
  if (parity.smagorinsky) config.les = Les{LesModel::Smagorinsky, 0.16f};
  if (parity.csm) config.les = Les{LesModel::Csm, Les::kCsmConstant};
  const bool is3d = latticeDimensions(config.lattice) == 3;
  config.extent = is3d ? Extent{24, 16, 12} : Extent{48, 40, 1};
  config.faces.setAxisPeriodic(2);
  config.faces.face[0].type = FaceType::Velocity;
  config.faces.face[0].velocity = Vector3{0.05f, 0.0f, 0.0f};
  config.faces.face[0].parabolic = true;
  // 2D: an outflow; 3D: a pressure outlet (open faces may not share an edge).
  config.faces.face[1].type = is3d ? FaceType::Pressure : FaceType::Outflow;
  config.faces.face[1].density = 1.0f;
  config.faces.face[3].type = FaceType::MovingWall;
  config.faces.face[3].velocity = Vector3{0.08f, 0.0f, is3d ? 0.03f : 0.0f};
  config.acceleration = Vector3{2e-6f, 0.0f, 0.0f};
  config.tau = 0.65f;
  geometry::ObstacleSpec sphere;
  sphere.kind = geometry::ShapeKind::Sphere;
  sphere.center = {8.3, 7.6, is3d ? 5.5 : 0.0};
  sphere.radius = 3.2;
  config.solid.assign(static_cast<std::size_t>(config.extent.cellCount()), 0);
  geometry::rasterize(sphere, config.extent, config.solid.data());

  UniformSolver cpu(config, exec::Backend::Cpu), cuda(config, exec::Backend::Cuda);
  cpu.advance(1000);
  cuda.advance(1000);
  const auto reference = cpu.populationsOnHost();
  const auto device = cuda.populationsOnHost();
  ASSERT_EQ(reference.size(), device.size());
  double maxDifference = 0.0, maxValue = 0.0;
  for (std::size_t i = 0; i < reference.size(); ++i) {
    ASSERT_TRUE(std::isfinite(reference[i]) && std::isfinite(device[i])) << "population value " << i << " diverged";
    maxDifference = std::max(maxDifference, static_cast<double>(std::abs(reference[i] - device[i])));
    maxValue = std::max(maxValue, static_cast<double>(std::abs(reference[i])));
  }
  const auto cpuForce = cpu.obstacleForce(), cudaForce = cuda.obstacleForce();
  std::printf("%s: max |cuda - cpu| over all populations after 1000 steps = %.3e (max |g| %.3e), "
              "force x %.6e vs %.6e\n",
              parityName(parity).c_str(), maxDifference, maxValue, cpuForce[0], cudaForce[0]);
  // nvcc fuses multiply-adds that g++ rounds twice: each step differs by ~1 ulp of the
  // deviations (~1e-9 here) and a damped flow does not amplify it: 1e-6 absolute is ~1e-4 of the
  // largest deviation. FP16 stores 11 bits: values an FP32 ulp apart can round to neighbouring
  // FP16 values (2^-11 of a value), and such flips spread to neighbours over 1000 steps: 5e-3 of
  // the largest deviation (1.6e-3 measured on an H200).
  const double bound = parity.storage == StorageKind::Fp16 ? 5e-3 * maxValue : 1e-6;
  EXPECT_LT(maxDifference, bound);
  // Forces sum the same differences over the obstacle's surface: 1e-3 of the force in FP32; in
  // FP16 1e-2 of its magnitude (a small lift component moved by 0.45 % on an H200).
  const double forceMagnitude = std::sqrt(cpuForce[0] * cpuForce[0] + cpuForce[1] * cpuForce[1] + cpuForce[2] * cpuForce[2]);
  for (int axis = 0; axis < 3; ++axis) {
    const double forceBound = parity.storage == StorageKind::Fp16 ? 1e-2 * forceMagnitude
                                                                   : 1e-3 * (std::abs(cpuForce[axis]) + 1e-6);
    EXPECT_NEAR(cpuForce[axis], cudaForce[axis], forceBound) << "axis " << axis;
  }
  // The fields the user sees agree too.
  const auto& cpuFields = cpu.fetchFields(true, true);
  const auto& cudaFields = cuda.fetchFields(true, true);
  const double fieldBound = parity.storage == StorageKind::Fp16 ? 1e-4 : 1e-6;
  for (Index i = 0; i < 3 * cpu.nodeCount(); ++i)
    ASSERT_NEAR(cpuFields.velocity.data()[i], cudaFields.velocity.data()[i], fieldBound) << "velocity value " << i;
}

std::vector<ParityCase> parityCases() {
  std::vector<ParityCase> cases;
  for (LatticeKind lattice : {LatticeKind::D2Q9, LatticeKind::D3Q19, LatticeKind::D3Q27}) {
    cases.push_back({lattice, CollisionKind::Bgk, StorageKind::Fp32});
    cases.push_back({lattice, CollisionKind::Trt, StorageKind::Fp32});
    cases.push_back({lattice, CollisionKind::Trt, StorageKind::Fp16});
    cases.push_back({lattice, CollisionKind::Mrt, StorageKind::Fp32});
    cases.push_back({lattice, CollisionKind::Mrt, StorageKind::Fp32, true});
    cases.push_back({lattice, CollisionKind::Mrt, StorageKind::Fp32, false, true});
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Cases, CudaParity, ::testing::ValuesIn(parityCases()),
                         [](const auto& info) { return parityName(info.param); });

TEST(CudaMemory, OutOfMemoryNamesRequestedAndFreeBytes) {
  OCTO_SKIP_WITHOUT_GPU();
  try {
    exec::Buffer<float> huge(exec::MemorySpace::Device, std::size_t(1) << 50);  // 4 PiB
    FAIL() << "a 4 PiB allocation succeeded";
  } catch (const OutOfMemoryError& error) {
    EXPECT_EQ(error.requestedBytes(), (std::size_t(1) << 50) * sizeof(float));
    EXPECT_GT(error.freeBytes(), 0u);
    EXPECT_NE(std::string(error.what()).find("GPU"), std::string::npos) << error.what();
  }
}

// A launch holds at most 65535 blocks along y and z: taller grids go in several launches, and
// every node must still be updated exactly as on the CPU (a missed part would keep its initial
// populations there).
TEST(CudaLaunch, GridsOfMoreThan65535BlocksAlongYOrZMatchTheCpu) {
  OCTO_SKIP_WITHOUT_GPU();
  for (const auto& [lattice, extent] : {std::pair{LatticeKind::D3Q19, Extent{2, 2, 70000}},
                                        std::pair{LatticeKind::D2Q9, Extent{1, 600000, 1}}}) {
    UniformSolverConfig config;
    config.lattice = lattice;
    config.extent = extent;
    config.tau = 0.7f;
    for (int axis = 0; axis < 3; ++axis) config.faces.setAxisPeriodic(axis);
    const Index n = extent.cellCount();
    const int along = extent.nz > 1 ? 2 : 1;  // the long axis
    std::vector<float> velocity(static_cast<std::size_t>(3 * n), 0.0f);
    for (Index node = 0; node < n; ++node) {
      Index position[3];
      extent.coordinates(node, position[0], position[1], position[2]);
      // A shear wave 8 nodes long: it decays to under half in 20 steps, at every node.
      velocity[3 * node] = 0.02f * std::sin(6.283185f * static_cast<float>(position[along] % 8) / 8.0f);
    }
    UniformSolver cpu(config, exec::Backend::Cpu), cuda(config, exec::Backend::Cuda);
    cpu.initialize(nullptr, velocity.data());
    cuda.initialize(nullptr, velocity.data());
    cpu.advance(20);
    cuda.advance(20);
    const auto reference = cpu.populationsOnHost(), device = cuda.populationsOnHost();
    double maxDifference = 0.0;
    for (std::size_t i = 0; i < reference.size(); ++i)
      maxDifference = std::max(maxDifference, static_cast<double>(std::abs(reference[i] - device[i])));
    EXPECT_LT(maxDifference, 1e-6) << latticeName(lattice) << " " << extent.nx << "x" << extent.ny << "x" << extent.nz;
  }
}
