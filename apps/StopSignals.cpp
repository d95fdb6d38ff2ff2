#include "StopSignals.hpp"

#include <csignal>

namespace octoflow::app {

namespace {

volatile std::sig_atomic_t stopSignal = 0;
struct sigaction previousInterrupt, previousTerminate;

extern "C" void onStopSignal(int signal) {
  if (stopSignal != 0) {
    // The second: die of it now.
    std::signal(signal, SIG_DFL);
    std::raise(signal);
    return;
  }
  stopSignal = signal;
}

}  // namespace

StopSignals::StopSignals() {
  stopSignal = 0;
  struct sigaction action = {};
  action.sa_handler = onStopSignal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  sigaction(SIGINT, &action, &previousInterrupt);
  sigaction(SIGTERM, &action, &previousTerminate);
}

StopSignals::~StopSignals() {
  sigaction(SIGINT, &previousInterrupt, nullptr);
  sigaction(SIGTERM, &previousTerminate, nullptr);
}

int StopSignals::requested() const { return stopSignal; }

const char* signalName(int signal) {
  switch (signal) {
    case SIGINT: return "SIGINT";
    case SIGTERM: return "SIGTERM";
    default: return "a signal";
  }
}

}  // namespace octoflow::app
