#include "Progress.hpp"

#include <unistd.h>

#include <cmath>

namespace octoflow::app {

namespace {
constexpr double kTerminalInterval = 0.25;  // seconds between rewrites of the line on a terminal
constexpr double kLogInterval = 10.0;       // seconds between lines in a log file
}  // namespace

Progress::Progress(Index totalSteps, double nodeUpdatesPerStep, bool enabled)
    : totalSteps_(totalSteps),
      nodeUpdatesPerStep_(nodeUpdatesPerStep),
      enabled_(enabled),
      terminal_(isatty(STDERR_FILENO) != 0),
      start_(std::chrono::steady_clock::now()),
      lastPrint_(start_) {}

double Progress::elapsedSeconds() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

double Progress::stepsPerSecond(Index stepsDone) const {
  const double seconds = elapsedSeconds();
  return seconds > 0.0 ? stepsDone / seconds : 0.0;
}

std::string Progress::formatDuration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "--:--";
  const long total = static_cast<long>(std::lround(seconds));
  char text[32];
  if (total >= 3600)
    std::snprintf(text, sizeof text, "%ld:%02ld:%02ld", total / 3600, (total / 60) % 60, total % 60);
  else
    std::snprintf(text, sizeof text, "%02ld:%02ld", total / 60, total % 60);
  return text;
}

void Progress::update(Index stepsDone) {
  if (!enabled_) return;
  const auto now = std::chrono::steady_clock::now();
  const double sincePrint = std::chrono::duration<double>(now - lastPrint_).count();
  if (sincePrint < (terminal_ ? kTerminalInterval : kLogInterval)) return;
  lastPrint_ = now;
  print(stepsDone, false);
}

void Progress::finish(Index stepsDone) {
  if (!enabled_) return;
  print(stepsDone, true);
}

void Progress::print(Index stepsDone, bool final) {
  const double seconds = elapsedSeconds();
  const double rate = stepsPerSecond(stepsDone);
  const double mlups = rate * nodeUpdatesPerStep_ / 1e6;
  if (final) {
    std::fprintf(stderr, "%sdone: %lld steps in %s (%.1f s), %.1f MLUPS\n", terminal_ ? "\r\033[K" : "",
                 static_cast<long long>(stepsDone), formatDuration(seconds).c_str(), seconds, mlups);
    return;
  }
  const double percent = totalSteps_ > 0 ? 100.0 * stepsDone / totalSteps_ : 100.0;
  const double eta = rate > 0.0 ? (totalSteps_ - stepsDone) / rate : NAN;
  std::fprintf(stderr, "%sstep %lld/%lld (%.1f%%)  %.1f MLUPS  elapsed %s  ETA %s%s",
               terminal_ ? "\r\033[K" : "", static_cast<long long>(stepsDone), static_cast<long long>(totalSteps_),
               percent, mlups, formatDuration(seconds).c_str(), formatDuration(eta).c_str(), terminal_ ? "" : "\n");
  std::fflush(stderr);
}

}  // namespace octoflow::app
