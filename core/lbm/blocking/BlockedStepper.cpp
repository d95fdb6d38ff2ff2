#include "lbm/blocking/BlockedStepper.hpp"

#include "common/Error.hpp"
#include "lbm/CollisionChoice.hpp"

namespace octoflow::lbm {

std::string TemporalBlocking::name() const {
  return "s" + std::to_string(sharedSteps) + "r" + std::to_string(registerSteps) + "tb" + (warpShuffle ? "+ws" : "");
}

BlockingProblem blockingProblem(const UniformSolverConfig& config) {
  const TemporalBlocking& b = config.blocking;
  const auto problem = [](const std::string& key, const std::string& reason) {
    return BlockingProblem{"lbm.blocking." + key, reason};
  };
  if (b.sharedSteps < 0 || b.sharedSteps > kMaxSharedSteps)
    return problem("shared_steps", "expected 0 (no blocking) to " + std::to_string(kMaxSharedSteps) + ", got " +
                                       std::to_string(b.sharedSteps));
  if (b.registerSteps < 0 || b.registerSteps > kMaxRegisterSteps)
    return problem("register_steps", "expected 0 or 1, got " + std::to_string(b.registerSteps));
  if (!b.enabled()) {
    if (b.registerSteps > 0) return problem("register_steps", "set shared_steps first (register stages run inside it)");
    if (b.warpShuffle) return problem("warp_shuffle", "set shared_steps and register_steps = 1 first");
    return {};
  }
  if (b.registerSteps > 0 && b.sharedSteps < b.registerSteps + 2)
    return problem("register_steps", "a register stage of " + std::to_string(b.registerSteps + 1) +
                                         " steps needs shared_steps >= " + std::to_string(b.registerSteps + 2) +
                                         " (a launch's first step reads the global array)");
  const int dimensions = latticeDimensions(config.lattice);
  if (b.warpShuffle && (b.registerSteps != 1 || config.lattice != LatticeKind::D2Q9))
    return problem("warp_shuffle", "shares the register stage's collisions of D2Q9: needs register_steps = 1 and lbm.lattice = \"D2Q9\"");
  for (int axis = 0; axis < 3; ++axis) {
    const int expected = axis < dimensions ? 0 : 1;
    if (b.block[axis] < 1 || b.block[axis] > 1024 || (expected && b.block[axis] != 1))
      return problem("block", std::string("expected ") + (dimensions == 2 ? "[x, y]" : "[x, y, z]") +
                                  ", 1 to 1024 nodes each");
  }
  if (config.lattice == LatticeKind::D3Q27)
    return BlockingProblem{"lbm.lattice", "temporal blocking runs D2Q9 and D3Q19 (D3Q27 is not blocked)"};
  if (config.les.model == LesModel::Csm)
    return BlockingProblem{"lbm.les", "csm takes gradients of the previous step's velocity field: it does not run blocked"};
  if (config.isPiece) return problem("shared_steps", "temporal blocking runs on one process");
  for (int face = 0; face < kFaceCount; ++face) {
    const FaceType type = config.faces.face[face].type;
    if (type != FaceType::Periodic && type != FaceType::Wall)
      return BlockingProblem{"boundary", std::string("face ") + faceName(face) +
                                             ": temporal blocking runs periodic faces, resting walls and obstacles only"};
  }
  return {};
}

namespace blocking {

std::unique_ptr<BlockedStepper> makeBlockedStepper(const UniformSolverConfig& config, exec::Backend backend,
                                                   const std::uint8_t* kind) {
  if (const BlockingProblem problem = blockingProblem(config)) throw Error(problem.key + ": " + problem.reason);
  BlockedGrid grid;
  grid.extent = config.extent;
  grid.periodicAxes = config.faces.periodicAxes();
  grid.kind = kind;
  grid.acceleration = config.acceleration;
  const auto make = [&](auto lattice) {
    using L = decltype(lattice);
    return withStorage(config.storage, [&](auto storage) {
      using S = decltype(storage);
      return withCollisionOf<L>(config, [&](const auto& collision) -> std::unique_ptr<BlockedStepper> {
        using Collision = std::decay_t<decltype(collision)>;
        if (backend == exec::Backend::Cpu) return makeCpuBlockedStepper<L, S, Collision>(grid, config.blocking, collision);
#if OCTOFLOW_HAVE_CUDA
        return makeCudaBlockedStepper<L, S, Collision>(grid, config.blocking, collision);
#else
        throw Error("the CUDA backend is not compiled into this build");
#endif
      });
    });
  };
  if (config.lattice == LatticeKind::D2Q9) return make(D2Q9{});
  return make(D3Q19{});
}

}  // namespace blocking
}  // namespace octoflow::lbm
