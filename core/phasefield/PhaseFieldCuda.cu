// The CUDA execution of the phase-field sweeps: the same functors as the CPU reference, one thread a node.
#include "exec/cuda/CudaExecutor.cuh"
#include "phasefield/PhaseFieldSweep.hpp"

namespace octoflow::phasefield {

void kobayashiSweepCuda(const SweepArguments& arguments) { runKobayashiSweep(exec::CudaExecutor{}, arguments); }

void affineMapCuda(const AffineMap& map, Index count) { exec::CudaExecutor{}.parallelFor(count, map); }

void synchronizeCuda() { OCTO_CUDA_CHECK(cudaDeviceSynchronize()); }

}  // namespace octoflow::phasefield
