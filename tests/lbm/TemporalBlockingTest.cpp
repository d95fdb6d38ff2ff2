// Temporal blocking (core/lbm/blocking) against the single-step kernel: the same case run both
// ways must hold the same populations, forces and fields after 1000 steps, on the CPU (the tile
// algorithm itself: halos, tiles past the grid's end, walls, obstacles, a body force, launches
// shorter than ts) and on the GPU for every kernel variant (shared stages, register stages, warp
// shuffles, FP16, MRT, D3Q19).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "TestSupport.hpp"
#include "common/Error.hpp"
#include "geometry/Obstacle.hpp"
#include "lbm/UniformSolver.hpp"

using namespace octoflow;
using namespace octoflow::lbm;

namespace {

struct BlockingCase {
  LatticeKind lattice = LatticeKind::D2Q9;
  CollisionKind collision = CollisionKind::Bgk;
  StorageKind storage = StorageKind::Fp32;
  int sharedSteps = 4, registerSteps = 0;
  bool warpShuffle = false;
  int block[3] = {32, 8, 1};
  bool smagorinsky = false;
};

std::string caseName(const BlockingCase& c) {
  TemporalBlocking b;
  b.sharedSteps = c.sharedSteps;
  b.registerSteps = c.registerSteps;
  b.warpShuffle = c.warpShuffle;
  std::string name = std::string(latticeName(c.lattice)) + "_" + collisionName(c.collision) + "_" +
                     storageName(c.storage) + "_" + b.name() + "_" + std::to_string(c.block[0]) + "x" +
                     std::to_string(c.block[1]);
  if (c.lattice != LatticeKind::D2Q9) name += "x" + std::to_string(c.block[2]);
  if (c.smagorinsky) name += "_smagorinsky";
  for (char& ch : name)
    if (ch == '+') ch = '_';
  return name;
}

// The channel's velocity at the start (lattice units).
const Vector3 kInitialVelocity{0.04f, 0.01f, 0.0f};
const double kInitialSpeed = std::hypot(kInitialVelocity.x, kInitialVelocity.y);

// A channel between resting walls (y), periodic along x (and z), driven by a body force past an
// obstacle, starting in motion; its sizes are not multiples of any tile below.
UniformSolverConfig channel(const BlockingCase& c) {
  UniformSolverConfig config;
  config.lattice = c.lattice;
  config.collision = c.collision;
  config.storage = c.storage;
  if (c.smagorinsky) config.les = Les{LesModel::Smagorinsky, 0.16f};
  const bool is3d = latticeDimensions(c.lattice) == 3;
  config.extent = is3d ? Extent{30, 21, 13} : Extent{70, 45, 1};
  config.faces.setAxisPeriodic(0);
  config.faces.setAxisPeriodic(2);
  config.faces.face[2].type = FaceType::Wall;
  config.faces.face[3].type = FaceType::Wall;
  config.acceleration = Vector3{4e-6f, 0.0f, 0.0f};
  config.initialVelocity = kInitialVelocity;
  config.tau = 0.62f;
  geometry::ObstacleSpec body;
  body.kind = is3d ? geometry::ShapeKind::Sphere : geometry::ShapeKind::Cylinder;
  body.axis = 2;
  body.center = {12.3, 9.6, is3d ? 6.2 : 0.0};
  body.radius = is3d ? 4.1 : 5.3;
  config.solid.assign(static_cast<std::size_t>(config.extent.cellCount()), 0);
  geometry::rasterize(body, config.extent, config.solid.data());
  config.blocking.sharedSteps = c.sharedSteps;
  config.blocking.registerSteps = c.registerSteps;
  config.blocking.warpShuffle = c.warpShuffle;
  for (int axis = 0; axis < 3; ++axis) config.blocking.block[axis] = c.block[axis];
  if (!is3d) config.blocking.block[2] = 1;
  return config;
}

struct Difference {
  double populations = 0.0, largest = 0.0, velocity = 0.0, force = 0.0, forceMagnitude = 0.0;
};

// The blocked run against the single-step one, both having taken `steps` (in the given chunks).
Difference compare(UniformSolver& blocked, UniformSolver& single) {
  Difference d;
  const auto a = blocked.populationsOnHost(), b = single.populationsOnHost();
  EXPECT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size() && i < b.size(); ++i) {
    if (!std::isfinite(a[i]) || !std::isfinite(b[i])) {
      ADD_FAILURE() << "population value " << i << " is not finite";
      return d;
    }
    d.populations = std::max(d.populations, static_cast<double>(std::abs(a[i] - b[i])));
    d.largest = std::max(d.largest, static_cast<double>(std::abs(b[i])));
  }
  const auto fa = blocked.obstacleForce(), fb = single.obstacleForce();
  for (int axis = 0; axis < 3; ++axis) {
    d.force = std::max(d.force, std::abs(fa[axis] - fb[axis]));
    d.forceMagnitude += fb[axis] * fb[axis];
  }
  d.forceMagnitude = std::sqrt(d.forceMagnitude);
  const auto& va = blocked.fetchFields(false, true).velocity;
  const auto& vb = single.fetchFields(false, true).velocity;
  for (Index i = 0; i < 3 * blocked.nodeCount(); ++i)
    d.velocity = std::max(d.velocity, static_cast<double>(std::abs(va.data()[i] - vb.data()[i])));
  return d;
}

// The stated bounds. FP32: the blocked and the single-step kernels run the same functions on the
// same values; a compiler may still fuse a multiply-add in one and not the other (1 ulp of a
// deviation, ~1e-9 a step, damped): 1e-6 absolute over 1000 steps, as the CUDA/CPU parity. FP16:
// an ulp of FP32 can flip an FP16 rounding, which then spreads: 5e-3 of the largest deviation, and
// of the initial speed for the velocity (a sum of the populations' differences).
void expectWithinBounds(const BlockingCase& c, const Difference& d, const char* what) {
  std::printf("%s %s: max |blocked - single step| = %.3e (largest |g| %.3e), velocity %.3e, force %.3e of %.3e\n",
              caseName(c).c_str(), what, d.populations, d.largest, d.velocity, d.force, d.forceMagnitude);
  const bool half = c.storage == StorageKind::Fp16;
  EXPECT_LT(d.populations, half ? 5e-3 * d.largest : 1e-6);
  EXPECT_LT(d.velocity, half ? 5e-3 * kInitialSpeed : 1e-6);
  EXPECT_LT(d.force, (half ? 1e-2 : 1e-4) * d.forceMagnitude + 1e-9);
}

constexpr Index kSteps = 1000;

}  // namespace

void PrintTo(const BlockingCase& c, std::ostream* out) { *out << caseName(c); }

class CpuBlocking : public ::testing::TestWithParam<BlockingCase> {};

TEST_P(CpuBlocking, MatchesTheSingleStepKernelAfter1000Steps) {
  const BlockingCase& c = GetParam();
  UniformSolverConfig config = channel(c);
  UniformSolver blocked(config, exec::Backend::Cpu);
  config.blocking = TemporalBlocking{};
  UniformSolver single(config, exec::Backend::Cpu);
  // In uneven chunks, so that launches start at odd steps and end short of ts.
  for (Index done = 0; done < kSteps;) {
    const Index chunk = std::min<Index>(kSteps - done, done == 0 ? 7 : 331);
    blocked.advance(chunk);
    single.advance(chunk);
    done += chunk;
  }
  ASSERT_EQ(blocked.step(), single.step());
  const Difference d = compare(blocked, single);
  expectWithinBounds(c, d, "cpu");
  // On the CPU (no fused multiply-adds in x86-64 baseline code) FP32 runs are bit-identical.
  // FP16 differs by design: a blocked launch keeps FP32 values between its steps and rounds to
  // FP16 once a launch, the single step rounds every step.
  if (c.storage == StorageKind::Fp32) EXPECT_EQ(d.populations, 0.0);
}

std::vector<BlockingCase> cpuCases() {
  std::vector<BlockingCase> cases;
  for (int steps : {1, 2, 3, 5, 8}) {
    BlockingCase c;
    c.sharedSteps = steps;
    cases.push_back(c);
  }
  BlockingCase small;  // tiles smaller than the halo, a prime width
  small.sharedSteps = 6;
  small.block[0] = 7;
  small.block[1] = 5;
  cases.push_back(small);
  BlockingCase wide;  // one tile wider than the grid
  wide.sharedSteps = 4;
  wide.block[0] = 128;
  wide.block[1] = 16;
  cases.push_back(wide);
  for (CollisionKind collision : {CollisionKind::Trt, CollisionKind::Mrt}) {
    BlockingCase c;
    c.collision = collision;
    cases.push_back(c);
  }
  BlockingCase les;
  les.collision = CollisionKind::Mrt;
  les.smagorinsky = true;
  cases.push_back(les);
  BlockingCase half;
  half.storage = StorageKind::Fp16;
  cases.push_back(half);
  for (int steps : {1, 3}) {
    BlockingCase c;
    c.lattice = LatticeKind::D3Q19;
    c.sharedSteps = steps;
    c.block[0] = 8;
    c.block[1] = 8;
    c.block[2] = 4;
    cases.push_back(c);
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Cases, CpuBlocking, ::testing::ValuesIn(cpuCases()),
                         [](const auto& info) { return caseName(info.param); });

class CudaBlocking : public ::testing::TestWithParam<BlockingCase> {};

TEST_P(CudaBlocking, MatchesTheSingleStepKernelAndTheCpuReferenceAfter1000Steps) {
  OCTO_SKIP_WITHOUT_GPU();
  const BlockingCase& c = GetParam();
  UniformSolverConfig config = channel(c);
  UniformSolver blocked(config, exec::Backend::Cuda);
  config.blocking = TemporalBlocking{};
  UniformSolver single(config, exec::Backend::Cuda), reference(config, exec::Backend::Cpu);
  blocked.advance(3);  // then launches from an odd step, the last one short of ts
  blocked.advance(kSteps - 3);
  single.advance(kSteps);
  reference.advance(kSteps);
  expectWithinBounds(c, compare(blocked, single), "cuda vs single-step cuda");
  expectWithinBounds(c, compare(blocked, reference), "cuda vs single-step cpu");
}

std::vector<BlockingCase> cudaCases() {
  std::vector<BlockingCase> cases;
  const auto add = [&](int ts, int tr, bool ws, int bx, int by) {
    BlockingCase c;
    c.sharedSteps = ts;
    c.registerSteps = tr;
    c.warpShuffle = ws;
    c.block[0] = bx;
    c.block[1] = by;
    cases.push_back(c);
  };
  for (int ts : {1, 2, 4, 8}) add(ts, 0, false, 32, 8);
  for (int ts : {3, 4, 8}) add(ts, 1, false, 32, 8);
  for (int ts : {3, 8}) add(ts, 1, true, 32, 8);
  add(8, 0, false, 10, 10);  // the seed's best block
  add(5, 1, true, 16, 16);
  add(4, 1, true, 100, 3);   // a row wider than a warp's 30 cells
  add(4, 0, false, 32, 16);  // two resident tiles of 512 threads
  add(5, 0, false, 64, 32);  // the largest tile at 8192^2, one an SM
  BlockingCase half;
  half.storage = StorageKind::Fp16;
  half.registerSteps = 1;
  half.warpShuffle = true;
  cases.push_back(half);
  BlockingCase mrt;
  mrt.collision = CollisionKind::Mrt;
  mrt.sharedSteps = 8;
  mrt.registerSteps = 1;
  mrt.warpShuffle = true;
  mrt.smagorinsky = true;
  cases.push_back(mrt);
  BlockingCase trt;
  trt.collision = CollisionKind::Trt;
  cases.push_back(trt);
  for (int ts : {2, 3}) {  // 3: a tile of 12 x 8 x 8 cells, 117 KiB of shared memory
    BlockingCase c;
    c.lattice = LatticeKind::D3Q19;
    c.sharedSteps = ts;
    c.registerSteps = ts == 3 ? 1 : 0;
    c.block[0] = ts == 3 ? 8 : 16;
    c.block[1] = 4;
    c.block[2] = 4;
    cases.push_back(c);
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Cases, CudaBlocking, ::testing::ValuesIn(cudaCases()),
                         [](const auto& info) { return caseName(info.param); });

// The solver refuses what blocking does not run, naming the case key.
TEST(TemporalBlocking, RefusesAMovingWallNamingTheKey) {
  BlockingCase c;
  UniformSolverConfig config = channel(c);
  config.faces.face[3].type = FaceType::MovingWall;
  EXPECT_EQ(blockingProblem(config).key, "boundary");
  EXPECT_THROW(UniformSolver(config, exec::Backend::Cpu), Error);
  config.faces.face[3].type = FaceType::Wall;
  EXPECT_FALSE(blockingProblem(config));
  config.blocking.registerSteps = 1;
  config.blocking.sharedSteps = 2;
  EXPECT_EQ(blockingProblem(config).key, "lbm.blocking.register_steps");
}
