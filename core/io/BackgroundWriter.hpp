#pragma once
// Output files written on a host thread while the solver goes on: a run hands over a job that
// wraps its host arrays (no copy) and waits for the job only before those arrays change again.
// Knows nothing of file formats: a job is any function.
#include <condition_variable>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>

namespace octoflow::io {

class BackgroundWriter {
public:
  BackgroundWriter();
  // Finishes the jobs handed over; an error one raises is printed (wait() reports it otherwise).
  ~BackgroundWriter();
  BackgroundWriter(const BackgroundWriter&) = delete;
  BackgroundWriter& operator=(const BackgroundWriter&) = delete;

  // Queues a job; jobs run one at a time, in the order given. After a job's error, the jobs
  // queued or handed over are dropped until wait() has reported that error.
  void post(std::function<void()> job);
  // Returns once every job handed over has run; rethrows the first error a job raised (later
  // jobs are dropped after an error).
  void wait();

private:
  void work();

  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<std::function<void()>> jobs_;
  bool running_ = false;  // a job is being run
  bool stopping_ = false;
  std::exception_ptr error_;
  std::thread thread_;
};

}  // namespace octoflow::io
