#pragma once
// `octoflow bench insitu`: what in-situ work costs a running GPU solver. A D3Q19 Taylor-Green
// vortex is run for a number of steps bare, then again as `octoflow run` does it with tracers
// and an isosurface: tracers moved in the flow every `tracersEvery` steps, and every `every`
// steps the speed surface extracted and the tracers (optionally the velocity field) handed to
// the host. Printed: time a step both ways, the overhead, and its parts.
#include <string>

#include "exec/Backend.hpp"

namespace octoflow::bench {

struct InSituBenchmarkOptions {
  exec::Backend backend = exec::Backend::Cpu;
  long long size = 0;          // nodes per axis; 0 = 256 on CUDA, 32 on the CPU
  long long steps = 0;         // timed steps each way; 0 = 500 on CUDA, 100 on the CPU
  long long every = 50;        // steps between hand-offs to the host
  long long tracersEvery = 1;  // steps between tracer moves
  long long tracers = 0;       // tracers released at step 0; 0 = 10^5 on CUDA, 10^3 on the CPU
  bool fields = false;         // also copy the velocity field to the host at each hand-off
  // Tracers moved in a velocity field computed for each move (what runs did before the solver
  // sampled its populations at the tracers: sim::Simulation::moveTracers).
  bool velocityField = false;
};

struct InSituBenchmarkResult {
  std::string backend, device;
  long long size = 0, steps = 0, every = 0, tracersEvery = 0, tracers = 0, handOffs = 0;
  bool fields = false, velocityField = false;
  double bareSecondsPerStep = 0.0;
  double inSituSecondsPerStep = 0.0;
  // The steps with the tracer moves and nothing else (a move may be queued without waiting, so it
  // is timed by what it adds to the steps); moveSeconds is that, a move.
  double movesOnlySecondsPerStep = 0.0;
  double stridedSecondsPerStep = 0.0;  // the same advances, in the moves' strides, without the moves
  double backToBackMoveSeconds = 0.0;  // a move among moves launched back to back (no steps between)
  // The parts: a tracer move (velocity from the populations at the tracers, or a velocity field,
  // then advection), and at a hand-off, host time each (the solver's queue is empty at the start
  // of each): a surface extraction with its triangles on the host, the tracers (compaction, copy
  // to the host), a velocity field copy.
  double moveSeconds = 0.0, surfaceSeconds = 0.0, tracerViewSeconds = 0.0, fieldSeconds = 0.0;
  double extractSeconds = 0.0, triangleCopySeconds = 0.0;  // of surfaceSeconds: the extraction, its copy to the host
  long long triangles = 0, tracersAlive = 0;
  // Of the moves timed with the steps, those made from the velocities a step recorded at the
  // tracers (lbm::UniformSolver::moveTracers), not from the populations.
  long long moves = 0, tappedMoves = 0;
};

InSituBenchmarkResult runInSituBenchmark(const InSituBenchmarkOptions& options);
std::string formatText(const InSituBenchmarkResult& result);
std::string formatJson(const InSituBenchmarkResult& result);

}  // namespace octoflow::bench
