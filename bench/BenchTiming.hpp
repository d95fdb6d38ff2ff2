#pragma once
// What every solver benchmark times the same way: the MPI ranks it runs on, and a warm-up then a
// timed run of about a second (unless told) where every rank steps alike and the clock stops when
// the slowest is done.
#include <algorithm>
#include <chrono>

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
// about a second's worth, at most `maxSteps`). `evenCount`: round the count up to even (solvers
// whose layout alternates). The count and the time are rank 0's, the same on every rank.
template <class Advance>
TimedSteps timeSteps(Advance&& advance, long long requestedSteps, bool evenCount, long long maxSteps) {
  barrierOfAllRanks();
  auto start = std::chrono::steady_clock::now();
  advance(2);
  barrierOfAllRanks();
  const double perStep = std::max(secondsSince(start) / 2.0, 1e-6);
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

}  // namespace octoflow::bench
