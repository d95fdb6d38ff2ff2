#pragma once
// The `octoflow bench <name>` commands: each solver's own benchmark and the in-situ ones. The CLI
// adds every command of this list; a benchmark defines its options and how it runs here.
#include <CLI/CLI.hpp>

#include <functional>
#include <string>
#include <vector>

#include "lbm/Collision.hpp"

namespace octoflow::bench {

struct BenchmarkCommand {
  const char* name;
  const char* summary;
  // Adds the command's options to `command`; the function returned runs it once they are parsed
  // (exit code; bad values raise InputError).
  std::function<int()> (*define)(CLI::App& command);
};

const std::vector<BenchmarkCommand>& benchmarkCommands();

// The values of the LBM benchmarks' --collision (bgk | trt | mrt) and --les (none | smagorinsky |
// csm) options; anything else raises InputError naming the option.
lbm::CollisionKind collisionOption(const std::string& value);
lbm::LesModel lesOption(const std::string& value);

// Each benchmark's definition (in its own source).
std::function<int()> defineLbmBenchmark(CLI::App& command);
std::function<int()> defineIsosurfaceBenchmark(CLI::App& command);
std::function<int()> defineInSituBenchmark(CLI::App& command);
std::function<int()> definePhaseFieldBenchmark(CLI::App& command);
std::function<int()> defineNsBenchmark(CLI::App& command);
std::function<int()> defineReliabilityBenchmark(CLI::App& command);
std::function<int()> defineAmrBenchmark(CLI::App& command);

}  // namespace octoflow::bench
