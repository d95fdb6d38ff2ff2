// Checkpoint files the checkpoint fuzzer (fuzz/CheckpointReaderFuzz.cpp) found to crash the reader
// or reach undefined behaviour, kept in tests/data/fuzz_regressions/*.ckpt: each must be refused
// with an InputError naming the file (the sanitizer build, preset asan, also sees the UB).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "common/Error.hpp"
#include "io/Checkpoint.hpp"

using namespace octoflow;

TEST(CheckpointFuzzRegressions, AreRefusedWithAnInputError) {
  const std::filesystem::path folder = std::filesystem::path(OCTOFLOW_SOURCE_DIR) / "tests/data/fuzz_regressions";
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(folder)) {
    if (entry.path().extension() != ".ckpt") continue;
    ++files;
    std::ifstream in(entry.path(), std::ios::binary);
    const std::vector<unsigned char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const std::string name = entry.path().filename().string();
    EXPECT_THROW(io::decodeCheckpoint(bytes.data(), bytes.size(), name), InputError) << name;
  }
  EXPECT_GE(files, 1);
}
