#pragma once
// The one place a case's collision choice (lbm.collision, tau, LES) becomes a collision operator.
#include "lbm/Mrt.hpp"
#include "lbm/UniformSolver.hpp"

namespace octoflow::lbm {

// Calls f(collision) with the operator `config` names for lattice L.
template <class L, class F>
decltype(auto) withCollisionOf(const UniformSolverConfig& config, F&& f) {
  if (config.collision == CollisionKind::Mrt) {
    Mrt mrt = Mrt::forLattice<L>(config.tau);
    mrt.les = config.les;
    return f(mrt);
  }
  if (config.collision == CollisionKind::Trt) return f(Trt{config.tau, config.trtMagic, config.les});
  return f(Bgk{config.tau, config.les});
}

}  // namespace octoflow::lbm
