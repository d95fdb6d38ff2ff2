#pragma once
// What the octree LBM's test programs share.
#include "amr/AmrLbm.hpp"

namespace octoflow::amr::test {

// The CPU reference with BGK at relaxation time `tau` on level 0.
inline AmrLbmSettings cpuSettings(lbm::LatticeKind lattice, double tau) {
  AmrLbmSettings settings;
  settings.lattice = lattice;
  settings.tau = tau;
  settings.backend = exec::Backend::Cpu;
  return settings;
}

}  // namespace octoflow::amr::test
