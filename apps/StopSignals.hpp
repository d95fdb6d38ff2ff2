#pragma once
// SIGINT and SIGTERM during a run: the first asks the run to stop after the step under way (it
// writes a checkpoint and exits with 128 + the signal: 130, 143); a second one ends the process at
// once, as the signal would have without us.
namespace octoflow::app {

class StopSignals {
public:
  StopSignals();   // installs the handlers
  ~StopSignals();  // restores the ones before
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;
  // The signal that asked the run to stop, or 0.
  int requested() const;
};

const char* signalName(int signal);

}  // namespace octoflow::app
