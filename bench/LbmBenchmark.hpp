#pragma once
// `octoflow bench lbm`: lattice updates per second of the uniform solver on a periodic box,
// quoted against the copy bandwidth measured in the same process.
#include <array>
#include <string>
#include <vector>

#include "exec/Backend.hpp"
#include "lbm/Lattice.hpp"
#include "lbm/UniformSolver.hpp"

namespace octoflow::bench {

struct LbmBenchmarkOptions {
  lbm::LatticeKind lattice = lbm::LatticeKind::D3Q19;
  lbm::CollisionKind collision = lbm::CollisionKind::Bgk;
  lbm::StorageKind storage = lbm::StorageKind::Fp32;
  lbm::LesModel les = lbm::LesModel::None;
  exec::Backend backend = exec::Backend::Cpu;
  long long size = 0;   // nodes per axis; 0 = 256 on CUDA, 64 on CPU (D2Q9: 4096 / 512)
  long long steps = 0;  // 0 = enough for about a second of work
  // Under mpirun with several ranks: the box is cut over the ranks (strong scaling), or with
  // `weak` each rank keeps a box of `size` and the whole grid grows along x (weak scaling).
  bool weak = false;
  bool timeline = false;  // record and print one step's timeline (rank 0)
  bool digest = false;    // fingerprint the final populations (BenchTiming.hpp, Digest)
  // A uniform body force (lattice acceleration 1e-6 along x), so that the kernels' forced form
  // is timed: the one a body-force driven case runs.
  bool forced = false;
  bool walls = false;  // resting walls on the y faces (with `forced`: the seed's Poiseuille channel)
  lbm::TemporalBlocking blocking;  // [lbm.blocking]; sharedSteps 0: the single-step kernel
  int nodesPerThread = 2;  // 1: FP16 bulk steps one node a thread everywhere (UniformSolverConfig::fp16NodePairs)
};

struct LbmBenchmarkResult {
  std::string lattice;
  std::string collision;
  std::string storage;
  std::string les;
  bool forced = false;
  bool walls = false;
  std::string blocking;  // "single-step" or s{ts}r{tr}tb[+ws] and the block
  bool fp16NodePairs = true;  // UniformSolverConfig::fp16NodePairs (off: --nodes-per-thread 1)
  std::string backend;
  std::string device;
  long long nx = 0, ny = 0, nz = 0;
  long long steps = 0;
  double seconds = 0.0;
  double mlups = 0.0;
  double bytesPerUpdate = 0.0;        // 2 Q b (b = 4 FP32, 2 FP16): each population read and written once
  double effectiveBytesPerSecond = 0.0;
  double copyBytesPerSecond = 0.0;    // measured copy bandwidth (read + write)
  double fractionOfCopy = 0.0;        // effective / copy: the memory roofline fraction
  int ranks = 1;                      // MPI ranks (MLUPS and bandwidth are totals over them)
  bool weak = false;
  bool report = true;                 // false on MPI ranks other than 0
  std::string halo;                   // how halos travel between ranks (DistributedSolver::haloPath)
  // Rank 0's host time a step in the halo exchange of the timed run: in all, waiting for its
  // packing and copies, in MPI calls.
  double haloSecondsPerStep = 0.0, haloWaitSecondsPerStep = 0.0, haloMpiSecondsPerStep = 0.0;
  long long timelineStep = -1;  // with `timeline`: the step recorded, and its marks
  std::vector<lbm::UniformSolver::TimelineMark> timeline;
  std::string digest;         // with `digest`: the fingerprint of the populations after step digestStep
  long long digestStep = 0;
};

LbmBenchmarkResult runLbmBenchmark(const LbmBenchmarkOptions& options);
std::string formatText(const LbmBenchmarkResult& result);
std::string formatJson(const LbmBenchmarkResult& result);

// `bench lbm --matrix`: D2Q9, D3Q19, D3Q27 x BGK, MRT x FP32, FP16 with the LES model, backend,
// steps and scaling of `base`. `base.size` is the 3D boxes' edge (D2Q9: 16 times it, as 256^3
// pairs with 4096^2); 0 takes each lattice's default.
std::vector<LbmBenchmarkResult> runLbmMatrix(const LbmBenchmarkOptions& base);
// The table of a matrix run, with FP16's speed-up over FP32 and MRT's extra time over BGK.
std::string formatMatrix(const std::vector<LbmBenchmarkResult>& results);

// `bench lbm --blocking-sweep`: the seed's experiment (seed 1, section 4) on the options' grid
// (default: D2Q9, a 320x320 Poiseuille channel): the single-step kernel, then every tile size of
// `blocks` with ts in {1, 2, 4, 8, 12, 16} and tr, warp shuffles in {r0, r1, r1+ws}; rows a
// launch does not fit (shared memory) are left out. And the table, with each row's speed-up
// over s1r0tb of its block (the tile kernel one step a launch: no temporal blocking, the seed's
// s0r0tb) and over the single-step kernel.
std::vector<LbmBenchmarkResult> runBlockingSweep(const LbmBenchmarkOptions& base, const std::vector<std::array<int, 3>>& blocks);
std::string formatBlockingSweep(const std::vector<LbmBenchmarkResult>& results);

}  // namespace octoflow::bench
