#include "io/BackgroundWriter.hpp"

#include <cstdio>
#include <stdexcept>

namespace octoflow::io {

BackgroundWriter::BackgroundWriter() : thread_([this] { work(); }) {}

BackgroundWriter::~BackgroundWriter() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  thread_.join();
  if (error_) {
    try {
      std::rethrow_exception(error_);
    } catch (const std::exception& error) {
      std::fprintf(stderr, "octoflow: error while writing output: %s\n", error.what());
    }
  }
}

void BackgroundWriter::post(std::function<void()> job) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    // An error the caller has not yet been told of drops the jobs handed over after it, however
    // the caller's post() and the writer's thread interleave.
    if (error_) return;
    jobs_.push_back(std::move(job));
  }
  changed_.notify_all();
}

void BackgroundWriter::wait() {
  std::unique_lock<std::mutex> lock(mutex_);
  changed_.wait(lock, [this] { return (jobs_.empty() && !running_) || error_; });
  if (error_) {
    jobs_.clear();
    std::exception_ptr error = error_;
    error_ = nullptr;
    std::rethrow_exception(error);
  }
}

void BackgroundWriter::work() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    changed_.wait(lock, [this] { return !jobs_.empty() || stopping_; });
    if (jobs_.empty()) return;  // stopping, nothing left
    std::function<void()> job = std::move(jobs_.front());
    jobs_.pop_front();
    running_ = true;
    lock.unlock();
    std::exception_ptr error;
    try {
      job();
    } catch (...) {
      error = std::current_exception();
    }
    lock.lock();
    running_ = false;
    if (error && !error_) {
      error_ = error;
      jobs_.clear();
    }
    changed_.notify_all();
  }
}

}  // namespace octoflow::io
