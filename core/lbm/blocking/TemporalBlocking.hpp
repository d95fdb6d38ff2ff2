#pragma once
// Temporal blocking of the uniform LBM (seed 1, lbm-temporal-blocking-registers): the case keys
// [lbm.blocking] and the checks that a grid can run blocked. docs/BLOCKING.md explains the scheme.
#include <string>

namespace octoflow::lbm {

struct UniformSolverConfig;

// s{ts}r{tr}tb in the seed's naming. One launch advances a tile of nodes `sharedSteps` (ts) steps:
// it reads the tile and a halo of ts - 1 nodes once, runs the steps in shared memory (two buffers,
// one barrier a stage) and writes the tile once. A stage advances 1 + registerSteps (tr) steps:
// the extra ones in registers, each thread recomputing the collisions of the neighbours it pulls
// from instead of meeting the others at a barrier. With warpShuffle (tr = 1, D2Q9) the lanes of a
// warp, which hold neighbouring columns, share those collisions by warp shuffles. ts = 0 is the
// single-step in-place kernel (no blocking).
struct TemporalBlocking {
  int sharedSteps = 0;
  int registerSteps = 0;
  bool warpShuffle = false;
  int block[3] = {32, 8, 1};  // the nodes a tile writes along x, y, z (z: 1 in 2D)

  bool enabled() const { return sharedSteps > 0; }
  std::string name() const;  // "s8r1tb", "+ws" with warp shuffles; "s0r0tb" without blocking
};

// The largest register stage implemented: tr = 2 would recompute 91 collisions for 3 steps.
constexpr int kMaxRegisterSteps = 1;
// Steps a launch may take at most (the halo grows with them).
constexpr int kMaxSharedSteps = 64;

// What keeps `config` from running blocked, as the [lbm.blocking] (or other [lbm]) key at fault
// and the reason; an empty key when it can. Blocking runs periodic faces, resting walls and
// obstacles (half-way bounce-back), a body force, BGK/TRT/MRT with or without the Smagorinsky
// model, on one grid (not an MPI piece), for D2Q9 and (3D attempt) D3Q19.
struct BlockingProblem {
  std::string key;
  std::string reason;
  explicit operator bool() const { return !key.empty(); }
};
BlockingProblem blockingProblem(const UniformSolverConfig& config);

}  // namespace octoflow::lbm
