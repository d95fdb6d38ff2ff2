#pragma once
// The points a regrid makes one by one (AmrLbm::adopt), written once for the host and the device:
// a point of a block of the new octree made from the other octree's state where that lies (the
// old solver's arrays, handed over, or a copy of its blocks placed where the new solver lives).
#include <cstdint>

#include "amr/AmrLbmStep.hpp"

namespace octoflow::amr {

// Where a point of the new octree lies in a block of the other one: between the block's points
// `low` and `low` + 1 along each axis, at `numerator` / 2^`shift` of the way (a point of a finer
// level lies on or between the points of a coarser block; shift 0: on a point).
struct AdoptTapPlace {
  std::uint8_t low[3] = {};
  std::uint8_t shift = 0;
  std::uint16_t numerator[3] = {};
};

// The points of that block a point is made of (trilinear, those of nonzero weight): index
// i + B (j + B k) in the block.
struct AdoptTaps {
  int count = 0;
  std::int32_t point[8] = {};
  double weight[8] = {};
};

OCTO_HD inline AdoptTaps adoptTapsAt(const AdoptTapPlace& place, int blockNodes) {
  const double denominator = static_cast<double>(1 << place.shift);
  AdoptTaps taps;
  for (int corner = 0; corner < 8; ++corner) {
    double weight = 1.0;
    std::int32_t index[3];
    for (int axis = 0; axis < 3; ++axis) {
      const bool upper = (corner >> axis) & 1;
      const double fraction = static_cast<double>(place.numerator[axis]) / denominator;
      weight *= upper ? fraction : 1.0 - fraction;
      index[axis] = place.low[axis] + (upper ? 1 : 0);
    }
    if (weight == 0.0) continue;
    taps.point[taps.count] = index[0] + blockNodes * (index[1] + blockNodes * index[2]);
    taps.weight[taps.count] = weight;
    ++taps.count;
  }
  return taps;
}

// What a made point reads: a block of the other octree in one of the two places its state lies
// (`fromCopy` 0: the old solver's arrays, 1: the copy of its blocks), the block's pre-collision
// slot there (-1: none) and level, and where the point lies in it.
struct AdoptSource {
  std::int32_t block = 0;
  std::int32_t slot = -1;
  AdoptTapPlace place;
  std::uint8_t fromCopy = 0;
  std::uint8_t level = 0;
};

// A block of the new solver made point by point: its index and pre-collision slot (-1: none) in
// the new solver's arrays, and its level.
struct AdoptMadeBlock {
  std::int32_t block = 0;
  std::int32_t slot = -1;
  std::int32_t level = 0;
};

// What the made points read and write. Made block m's point n is point m B^3 + n, its source
// sources[m B^3 + n]. Arrays as the solvers keep them: populations (block Q + q) B^3 + point,
// masks block B^3 + point.
struct AdoptArrays {
  const AdoptSource* sources = nullptr;
  const AdoptMadeBlock* made = nullptr;
  int blockNodes = 0;
  std::int64_t pointsPerBlock = 0;
  const float* post[2][2] = {};            // [fromCopy][parity]: post-collision states
  const float* pre[2][2] = {};             // [fromCopy][parity]: pre-collision slots
  const std::uint8_t* solid[2] = {};       // [fromCopy]: obstacle masks (null: no obstacle point)
  const std::uint8_t* newSolid = nullptr;  // the new solver's mask (null: none)
  float* newPost[2] = {};                  // the current state, the state a (sub-)step before
  float* newPre[2] = {};                   // both parities' slots (null: no slot)
  int parity[kMaxLevels] = {};             // the other solver's current state of each level
  // [from level][to level]: the non-equilibrium part's factor into a post- and a pre-collision
  // state (0: the point starts from equilibrium).
  float postScale[kMaxLevels][kMaxLevels] = {};
  float preScale[kMaxLevels][kMaxLevels] = {};
  lbm::Vector3 acceleration[kMaxLevels] = {};
};

// One made point a thread.
template <class L>
struct AdoptPoints {
  AdoptArrays a;

  OCTO_HD void operator()(std::int64_t index) const {
    const std::int64_t N = a.pointsPerBlock;
    const AdoptMadeBlock to = a.made[index / N];
    const std::int64_t n = index % N;
    const AdoptSource from = a.sources[index];
    AdoptTaps taps = adoptTapsAt(from.place, a.blockNodes);
    // A fluid point leaves the obstacle's points out (their state is never stepped).
    const bool fluid = !a.newSolid || a.newSolid[to.block * N + n] == 0;
    const std::uint8_t* oldSolid = a.solid[from.fromCopy];
    double total = 0.0;
    int kept = 0;
    for (int t = 0; t < taps.count; ++t) {
      const bool obstacle = oldSolid && oldSolid[from.block * N + taps.point[t]] != 0;
      if (fluid && obstacle) continue;
      taps.point[kept] = taps.point[t];
      taps.weight[kept] = taps.weight[t];
      total += taps.weight[t];
      ++kept;
    }
    taps.count = kept;
    const bool copied = from.level == to.level && taps.count == 1;
    // Across levels, or a pre-collision state the other solver does not keep: equilibrium plus
    // the non-equilibrium part rescaled, f_neq ~ tau dt, post = (1 - 1/tau) pre. With Guo forcing
    // a post-collision state carries the momentum rho (u + a/2), a pre-collision one rho (u - a/2),
    // at each level's own a: the velocity u goes on, and the non-equilibrium part is taken about
    // the old level's post-collision momentum.
    const float postFactor = a.postScale[from.level][to.level], preFactor = a.preScale[from.level][to.level];
    const lbm::Vector3 was = a.acceleration[from.level], now = a.acceleration[to.level];
    const int current = a.parity[from.level];
    for (int which = 0; which < 2; ++which) {  // the current state, then the one before
      const float* oldPost = a.post[from.fromCopy][which == 0 ? current : 1 - current];
      float f[L::Q] = {};
      for (int t = 0; t < taps.count; ++t)
        for (int q = 0; q < L::Q; ++q)
          f[q] += static_cast<float>(taps.weight[t] / total) * oldPost[(from.block * L::Q + q) * N + taps.point[t]];
      float rho = 1.0f;
      lbm::Vector3 u;
      if (taps.count > 0) lbm::moments<L>(f, lbm::Vector3{-was.x, -was.y, -was.z}, rho, u);
      const lbm::Vector3 postVelocity{u.x + 0.5f * now.x, u.y + 0.5f * now.y, u.z + 0.5f * now.z};
      const lbm::Vector3 preVelocity{u.x - 0.5f * now.x, u.y - 0.5f * now.y, u.z - 0.5f * now.z};
      const lbm::Vector3 oldVelocity{u.x + 0.5f * was.x, u.y + 0.5f * was.y, u.z + 0.5f * was.z};
      for (int q = 0; q < L::Q; ++q) {
        const float nonEquilibrium = taps.count > 0 ? f[q] - lbm::equilibriumDeviation<L>(q, rho, oldVelocity) : 0.0f;
        a.newPost[which][(to.block * L::Q + q) * N + n] =
            copied ? f[q] : lbm::equilibriumDeviation<L>(q, rho, postVelocity) + postFactor * nonEquilibrium;
        if (which != 0 || to.slot < 0) continue;
        // The other solver's pre-collision state where it keeps one for this very point.
        const float value = copied && from.slot >= 0
                                ? a.pre[from.fromCopy][current][(from.slot * L::Q + q) * N + taps.point[0]]
                                : lbm::equilibriumDeviation<L>(q, rho, preVelocity) + preFactor * nonEquilibrium;
        const std::int64_t slot = (to.slot * L::Q + q) * N + n;
        a.newPre[0][slot] = value;
        a.newPre[1][slot] = value;
      }
    }
  }
};

}  // namespace octoflow::amr
