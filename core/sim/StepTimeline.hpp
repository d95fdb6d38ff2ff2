#pragma once
// The timeline of one chosen step (`octoflow bench ... --timeline`): when its phases finished,
// microseconds after the step started, and on which queue (compute, or the halo queue beside it).
// On CUDA the marks are events on the queues, read once the step's work is done; on the CPU the
// host clock when each phase returned.
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "common/Extent.hpp"

namespace octoflow::sim {

struct TimelineMark {
  std::string what;
  bool haloQueue = false;
  double microseconds = 0.0;
};

// The marks of the chosen step. A solver calls begin() as each step starts (true: this one is
// recorded; start the queues' timeline), mark() after each phase is queued (true: queue a mark on
// that queue), and end() with the queues' times once the step is done.
class StepTimeline {
public:
  void choose(Index step) { chosen_ = step; }
  bool begin(Index step) {
    recording_ = step == chosen_;
    if (recording_) marks_.clear();
    return recording_;
  }
  bool recording() const { return recording_; }
  bool mark(std::string what, bool haloQueue) {
    if (recording_) marks_.push_back(TimelineMark{std::move(what), haloQueue, 0.0});
    return recording_;
  }
  void end(const std::vector<double>& microseconds) {
    recording_ = false;
    for (std::size_t m = 0; m < marks_.size() && m < microseconds.size(); ++m) marks_[m].microseconds = microseconds[m];
  }
  const std::vector<TimelineMark>& marks() const { return marks_; }

private:
  Index chosen_ = -1;
  bool recording_ = false;
  std::vector<TimelineMark> marks_;
};

}  // namespace octoflow::sim
