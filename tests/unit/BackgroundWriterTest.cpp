// The output thread: jobs run in order, away from the caller, and wait() returns only when all
// have run; an error a job raises reaches the caller at wait() and drops the jobs after it.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>
#include <vector>

#include "io/BackgroundWriter.hpp"

using octoflow::io::BackgroundWriter;

TEST(BackgroundWriter, RunsJobsInOrderOnItsOwnThreadAndWaitsForThem) {
  BackgroundWriter writer;
  std::vector<int> done;
  std::atomic<bool> release{false};
  std::thread::id jobThread;
  writer.post([&] {
    jobThread = std::this_thread::get_id();
    while (!release) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    done.push_back(1);
  });
  for (int n = 2; n <= 5; ++n) writer.post([&done, n] { done.push_back(n); });
  // post() returned while the first job still holds: the caller goes on meanwhile.
  release = true;
  writer.wait();
  EXPECT_EQ(done, (std::vector<int>{1, 2, 3, 4, 5}));
  EXPECT_NE(jobThread, std::this_thread::get_id());
  writer.wait();  // nothing pending: returns at once
}

TEST(BackgroundWriter, AnErrorReachesTheCallerAndDropsTheJobsAfterIt) {
  BackgroundWriter writer;
  std::vector<int> done;
  writer.post([&] { done.push_back(1); });
  writer.post([] { throw std::runtime_error("disk full"); });
  writer.post([&] { done.push_back(3); });
  try {
    writer.wait();
    FAIL() << "the job's error was not reported";
  } catch (const std::runtime_error& error) {
    EXPECT_STREQ(error.what(), "disk full");
  }
  EXPECT_EQ(done, (std::vector<int>{1}));
  // Reported once; the writer takes new jobs afterwards.
  writer.post([&] { done.push_back(4); });
  writer.wait();
  EXPECT_EQ(done, (std::vector<int>{1, 4}));
}

TEST(BackgroundWriter, AJobHandedOverAfterAnErrorNotYetReportedIsDropped) {
  BackgroundWriter writer;
  std::vector<int> done;
  std::atomic<bool> thrown{false};
  writer.post([&] {
    thrown = true;
    throw std::runtime_error("disk full");
  });
  while (!thrown) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  // The writer may or may not have recorded the error yet: the job is dropped either way.
  std::this_thread::sleep_for(std::chrono::milliseconds(10));
  writer.post([&] { done.push_back(2); });
  std::this_thread::sleep_for(std::chrono::milliseconds(10));  // time to run it, were it kept
  EXPECT_THROW(writer.wait(), std::runtime_error);
  EXPECT_TRUE(done.empty());
}

TEST(BackgroundWriter, FinishesTheJobsHandedOverWhenItEnds) {
  std::vector<int> done;
  {
    BackgroundWriter writer;
    for (int n = 0; n < 3; ++n)
      writer.post([&done, n] {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
        done.push_back(n);
      });
  }
  EXPECT_EQ(done, (std::vector<int>{0, 1, 2}));
}
