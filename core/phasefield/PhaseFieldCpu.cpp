// The CPU reference execution of the phase-field sweeps (OpenMP).
#include "exec/cpu/CpuExecutor.hpp"
#include "phasefield/PhaseFieldSweep.hpp"

namespace octoflow::phasefield {

void kobayashiSweepCpu(const SweepArguments& arguments) { runKobayashiSweep(exec::CpuExecutor{}, arguments); }

void affineMapCpu(const AffineMap& map, Index count) { exec::CpuExecutor{}.parallelFor(count, map); }

}  // namespace octoflow::phasefield
