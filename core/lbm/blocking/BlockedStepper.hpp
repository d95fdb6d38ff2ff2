#pragma once
// The temporally blocked update of a uniform grid (TemporalBlocking.hpp, TileSteps.hpp): made by
// the uniform solver when [lbm.blocking] asks for it, one per backend.
#include <memory>

#include "exec/Backend.hpp"
#include "lbm/UniformSolver.hpp"
#include "lbm/blocking/TileSteps.hpp"

namespace octoflow::lbm::blocking {

class BlockedStepper {
public:
  virtual ~BlockedStepper() = default;
  // Advances the populations of step `step` (in `from`, the in-place layout of that step's
  // parity) by `steps` steps, 1 to ts, into `to` (the layout of step + steps); two arrays of the
  // solver's working memory. Queued in order with the solver's other work (CUDA: the default
  // stream).
  virtual void advance(const void* from, void* to, Index step, int steps) = 0;
};

// The stepper for `config` (blockingProblem(config) must be empty) on `backend`, over the node
// kinds `kind` in working memory (null: all bulk).
std::unique_ptr<BlockedStepper> makeBlockedStepper(const UniformSolverConfig& config, exec::Backend backend,
                                                   const std::uint8_t* kind);

template <class L, class S, class Collision>
std::unique_ptr<BlockedStepper> makeCpuBlockedStepper(const BlockedGrid& grid, const TemporalBlocking& blocking,
                                                      const Collision& collision);
template <class L, class S, class Collision>
std::unique_ptr<BlockedStepper> makeCudaBlockedStepper(const BlockedGrid& grid, const TemporalBlocking& blocking,
                                                       const Collision& collision);

// The explicit instantiations each backend's source provides: D2Q9 and D3Q19, both storages,
// the three collisions.
#define OCTOFLOW_BLOCKED_STEPPERS(MAKE)                                                              \
  MAKE(D2Q9, Fp32Storage, Bgk) MAKE(D2Q9, Fp32Storage, Trt) MAKE(D2Q9, Fp32Storage, Mrt)             \
  MAKE(D2Q9, Fp16Storage, Bgk) MAKE(D2Q9, Fp16Storage, Trt) MAKE(D2Q9, Fp16Storage, Mrt)             \
  MAKE(D3Q19, Fp32Storage, Bgk) MAKE(D3Q19, Fp32Storage, Trt) MAKE(D3Q19, Fp32Storage, Mrt)          \
  MAKE(D3Q19, Fp16Storage, Bgk) MAKE(D3Q19, Fp16Storage, Trt) MAKE(D3Q19, Fp16Storage, Mrt)

}  // namespace octoflow::lbm::blocking
