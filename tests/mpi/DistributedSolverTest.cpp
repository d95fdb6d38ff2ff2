// The solver over MPI ranks against one solver of the whole grid: populations, fields and obstacle
// forces bit for bit, whatever the number of ranks (run under mpirun -np 2 and -np 4).
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstring>
#include <string>
#include <vector>

#include "TestSupport.hpp"
#include "geometry/Obstacle.hpp"
#include "parallel/DistributedSolver.hpp"

using namespace octoflow;
using namespace octoflow::lbm;

namespace {

int worldRank() {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

void addSphere(UniformSolverConfig& config, double x, double y, double z, double radius) {
  geometry::ObstacleSpec sphere;
  sphere.kind = geometry::ShapeKind::Sphere;
  sphere.center = {x, y, z};
  sphere.radius = radius;
  config.solid.assign(static_cast<std::size_t>(config.extent.cellCount()), 0);
  geometry::rasterize(sphere, config.extent, config.solid.data());
}

// Every boundary kind of the solver in one 3D channel; an obstacle across the pieces' faces.
UniformSolverConfig channel3d(CollisionKind collision, StorageKind storage) {
  UniformSolverConfig config;
  config.lattice = LatticeKind::D3Q19;
  config.collision = collision;
  config.storage = storage;
  config.extent = Extent{24, 16, 12};
  config.faces.setAxisPeriodic(2);
  config.faces.face[0].type = FaceType::Velocity;
  config.faces.face[0].velocity = Vector3{0.05f, 0.0f, 0.0f};
  config.faces.face[0].parabolic = true;
  config.faces.face[1].type = FaceType::Pressure;
  config.faces.face[3].type = FaceType::MovingWall;
  config.faces.face[3].velocity = Vector3{0.04f, 0.0f, 0.02f};
  config.acceleration = Vector3{1e-6f, 0.0f, 0.0f};
  config.tau = 0.7f;
  addSphere(config, 11.6, 7.7, 5.6, 3.3);
  return config;
}

UniformSolverConfig channel2d() {
  UniformSolverConfig config;
  config.lattice = LatticeKind::D2Q9;
  config.extent = Extent{40, 30, 1};
  config.faces.setAxisPeriodic(2);
  config.faces.face[0].type = FaceType::Velocity;
  config.faces.face[0].velocity = Vector3{0.06f, 0.0f, 0.0f};
  config.faces.face[0].parabolic = true;
  config.faces.face[1].type = FaceType::Outflow;
  config.tau = 0.62f;
  addSphere(config, 19.4, 14.2, 0.0, 4.1);
  return config;
}

UniformSolverConfig periodicBox() {
  UniformSolverConfig config;
  config.lattice = LatticeKind::D3Q27;
  config.collision = CollisionKind::Mrt;
  config.storage = StorageKind::Fp16;
  config.extent = Extent{16, 12, 10};
  for (int axis = 0; axis < 3; ++axis) config.faces.setAxisPeriodic(axis);
  config.acceleration = Vector3{2e-5f, -1e-5f, 5e-6f};
  config.tau = 0.6f;
  addSphere(config, 0.3, 5.8, 9.6, 2.9);  // wraps across the periodic faces
  return config;
}

bool sameBits(const float* a, const float* b, std::size_t count) { return std::memcmp(a, b, count * sizeof(float)) == 0; }

void expectSameAsOneRank(const UniformSolverConfig& config, exec::Backend backend, Index steps) {
  parallel::DistributedSolver distributed(MPI_COMM_WORLD, config, backend);
  distributed.advance(steps);
  const std::vector<float> populations = distributed.populationsOnHost();
  const auto force = distributed.obstacleForce();
  const HostFields& fields = distributed.fetchFields(true, true);
  if (distributed.rank() != 0) return;
  UniformSolver reference(config, backend);
  reference.advance(steps);
  const std::vector<float> expected = reference.populationsOnHost();
  ASSERT_EQ(populations.size(), expected.size());
  std::size_t firstDifference = 0;
  while (firstDifference < expected.size() && std::memcmp(&populations[firstDifference], &expected[firstDifference],
                                                          sizeof(float)) == 0)
    ++firstDifference;
  EXPECT_EQ(firstDifference, expected.size()) << "population value " << firstDifference << " differs on "
                                               << distributed.ranks() << " ranks: " << populations[firstDifference]
                                               << " vs " << expected[firstDifference];
  const auto expectedForce = reference.obstacleForce();
  for (int axis = 0; axis < 3; ++axis) EXPECT_EQ(force[axis], expectedForce[axis]) << "axis " << axis;
  EXPECT_NE(expectedForce[0], 0.0);
  const HostFields& expectedFields = reference.fetchFields(true, true);
  EXPECT_TRUE(sameBits(fields.density.data(), expectedFields.density.data(), expectedFields.density.size()));
  EXPECT_TRUE(sameBits(fields.velocity.data(), expectedFields.velocity.data(), expectedFields.velocity.size()));
}

}  // namespace

TEST(Distributed, ChannelWithEveryBoundaryKindIsBitIdenticalToOneRank) {
  // 301 steps: the exchanges of both parities, ending after an even-numbered state.
  expectSameAsOneRank(channel3d(CollisionKind::Trt, StorageKind::Fp32), exec::Backend::Cpu, 301);
}

TEST(Distributed, TwoDimensionalChannelWithOutflowIsBitIdenticalToOneRank) {
  expectSameAsOneRank(channel2d(), exec::Backend::Cpu, 400);
}

TEST(Distributed, PeriodicBoxCutAcrossItsPeriodicFacesIsBitIdenticalToOneRank) {
  expectSameAsOneRank(periodicBox(), exec::Backend::Cpu, 200);
}

TEST(Distributed, CsmChannelIsBitIdenticalToOneRank) {
  // The CSM velocity field crosses the cuts with the populations.
  UniformSolverConfig config = channel3d(CollisionKind::Mrt, StorageKind::Fp32);
  config.les = Les{LesModel::Csm, Les::kCsmConstant};
  expectSameAsOneRank(config, exec::Backend::Cpu, 151);
}

TEST(Distributed, CudaRanksAreBitIdenticalToOneCudaSolver) {
  OCTO_SKIP_WITHOUT_GPU();
  expectSameAsOneRank(channel3d(CollisionKind::Mrt, StorageKind::Fp32), exec::Backend::Cuda, 301);
  expectSameAsOneRank(periodicBox(), exec::Backend::Cuda, 200);
  UniformSolverConfig csm = channel3d(CollisionKind::Trt, StorageKind::Fp16);
  csm.les = Les{LesModel::Csm, Les::kCsmConstant};
  expectSameAsOneRank(csm, exec::Backend::Cuda, 151);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  ::testing::InitGoogleTest(&argc, argv);
  // One report: rank 0's (the others' failures reach it through MPI_Abort-free exit codes).
  if (worldRank() != 0) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
  }
  const int result = RUN_ALL_TESTS();
  int worst = result;
  MPI_Allreduce(&result, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return worst;
}
