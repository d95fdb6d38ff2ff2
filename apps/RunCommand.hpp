#pragma once
#include <string>
#include <vector>

#include "exec/Backend.hpp"

namespace octoflow::app {

struct RunOptions {
  std::string casePath;
  exec::BackendChoice backend = exec::BackendChoice::Auto;
  long long steps = 0;              // with stepsGiven: the last step, instead of the case's
  bool stepsGiven = false;
  std::string outputDirectory;      // empty: the case's
  std::vector<std::string> catalystScripts;  // added to the case's [insitu] scripts
  bool quiet = false;
  std::string restartPath;          // a checkpoint to go on from (empty: start at step 0)
};

// Runs a case end to end: solver, offline VTK series, Catalyst, checkpoints, the watchdog. Returns
// the exit code: 0, or 128 + the signal (130, 143) when SIGINT or SIGTERM stopped it.
int runCase(const RunOptions& options);
// Parses and checks a case without running it; prints a summary.
int validateCase(const std::string& casePath);

}  // namespace octoflow::app
