#pragma once
// What every solver benchmark times the same way: the MPI ranks it runs on, and a warm-up then a
// timed run of about a second (unless told) where every rank steps alike and the clock stops when
// the slowest is done.
#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "sim/StepTimeline.hpp"

#if OCTOFLOW_HAVE_MPI
#include <mpi.h>
#endif

namespace octoflow::bench {

inline double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

inline int worldRanks() {
  int ranks = 1;
#if OCTOFLOW_HAVE_MPI
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
#endif
  return ranks;
}

inline void barrierOfAllRanks() {
#if OCTOFLOW_HAVE_MPI
  MPI_Barrier(MPI_COMM_WORLD);
#endif
}

struct TimedSteps {
  long long steps = 0;
  double seconds = 0.0;
};

// advance(n) runs n steps on every rank: 2 to warm up, then the timed ones (`requestedSteps`, or
// about a second's worth as 2 more steps take, at most `maxSteps`). `evenCount`: round the count
// up to even (solvers whose layout alternates). The count and the time are rank 0's, the same on every rank.
template <class Advance>
TimedSteps timeSteps(Advance&& advance, long long requestedSteps, bool evenCount, long long maxSteps) {
  barrierOfAllRanks();
  auto start = std::chrono::steady_clock::now();
  advance(2);
  barrierOfAllRanks();
  double perStep = std::max(secondsSince(start) / 2.0, 1e-6);
  if (requestedSteps <= 0) {
    // The first steps carry one-off costs (loading kernels, setting their shared memory): with
    // them a temporally blocked run took ~30 steps for a second's estimate. Two more steps time it.
    start = std::chrono::steady_clock::now();
    advance(2);
    barrierOfAllRanks();
    perStep = std::max(secondsSince(start) / 2.0, 1e-6);
  }
  TimedSteps timed;
  timed.steps = requestedSteps > 0 ? requestedSteps : std::clamp<long long>(static_cast<long long>(1.0 / perStep), 4, maxSteps);
  if (evenCount) timed.steps += timed.steps % 2;
#if OCTOFLOW_HAVE_MPI
  MPI_Bcast(&timed.steps, 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
#endif
  barrierOfAllRanks();
  start = std::chrono::steady_clock::now();
  advance(timed.steps);
  barrierOfAllRanks();
  timed.seconds = secondsSince(start);
#if OCTOFLOW_HAVE_MPI
  MPI_Bcast(&timed.seconds, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
#endif
  return timed;
}

// timeSteps over a solver's advance(n) (a sim::Simulation, lbm::UniformSolver): each timed call
// also waits for its steps to finish, since advance() may return with its last step still running
// on the device (sim::Simulation::synchronize).
template <class Solver>
TimedSteps timeAdvance(Solver& solver, long long requestedSteps, bool evenCount, long long maxSteps) {
  return timeSteps(
      [&](long long steps) {
        solver.advance(steps);
        solver.synchronize();
      },
      requestedSteps, evenCount, maxSteps);
}

// `--digest`: a 64-bit FNV-1a fingerprint of a run's final state, printed as 16 hex digits. Runs
// of the same command on any number of ranks or GPUs must print the same one (bit-identical
// results); one flipped bit changes it.
class Digest {
public:
  void add(const void* data, std::size_t bytes) {
    const auto* byte = static_cast<const unsigned char*>(data);
    for (std::size_t b = 0; b < bytes; ++b) hash_ = (hash_ ^ byte[b]) * 0x100000001b3ull;
  }
  std::string hex() const {
    char text[17];
    std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(hash_));
    return text;
  }

private:
  std::uint64_t hash_ = 0xcbf29ce484222325ull;
};

// The lines of `--timeline`: when each phase of step `step` finished on rank 0, on which queue.
inline std::string formatTimeline(const std::vector<sim::TimelineMark>& marks, long long step, bool gpuEvents) {
  if (marks.empty()) return {};
  char line[200];
  std::snprintf(line, sizeof line, "  timeline of step %lld on rank 0 (%s), microseconds after it started:\n", step,
                gpuEvents ? "GPU events" : "host clock");
  std::string text = line;
  for (const sim::TimelineMark& mark : marks) {
    std::snprintf(line, sizeof line, "  %10.1f  %-7s  %s\n", mark.microseconds, mark.haloQueue ? "halo" : "compute",
                  mark.what.c_str());
    text += line;
  }
  return text;
}

}  // namespace octoflow::bench
