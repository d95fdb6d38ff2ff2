// The CPU reference execution of the phase-field sweeps (OpenMP).
#include "exec/cpu/CpuExecutor.hpp"
#include "phasefield/PhaseFieldSweep.hpp"

namespace octoflow::phasefield {

void phaseFieldSweepCpu(const SweepArguments& arguments) {
  withModel(arguments, [&](auto dimensions, const auto& model) {
    using Model = std::decay_t<decltype(model)>;
    exec::CpuExecutor{}.parallelFor3(arguments.box, PhaseFieldSweep<decltype(dimensions)::value, Model>{arguments, model});
  });
}

void affineMapCpu(const AffineMap& map, Index count) { exec::CpuExecutor{}.parallelFor(count, map); }

}  // namespace octoflow::phasefield
