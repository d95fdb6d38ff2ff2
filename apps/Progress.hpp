#pragma once
// The progress line on stderr: step/total, MLUPS, ETA. Rewritten in place on a terminal,
// printed every few seconds otherwise (logs stay readable).
#include <chrono>
#include <cstdio>
#include <string>

#include "common/Extent.hpp"

namespace octoflow::app {

class Progress {
public:
  Progress(Index totalSteps, double nodeUpdatesPerStep, bool enabled);
  // Call after every chunk of steps; prints when due.
  void update(Index stepsDone);
  // A solver whose grid changes (a regrid) updates a different number of nodes a step from then on.
  void setNodeUpdatesPerStep(double nodeUpdatesPerStep) { nodeUpdatesPerStep_ = nodeUpdatesPerStep; }
  // The last line: steps, wall time, mean MLUPS.
  void finish(Index stepsDone);
  double elapsedSeconds() const;
  // Steps per second so far (0 before the first update).
  double stepsPerSecond(Index stepsDone) const;

  static std::string formatDuration(double seconds);

private:
  void print(Index stepsDone, bool final);
  Index totalSteps_;
  double nodeUpdatesPerStep_;
  bool enabled_;
  bool terminal_;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point lastPrint_;
};

}  // namespace octoflow::app
