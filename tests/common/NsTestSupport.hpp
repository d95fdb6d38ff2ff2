#pragma once
// Runs "ns2d" cases from their text through the Simulation interface, as `octoflow run` does.
#include <memory>
#include <string>

#include "io/CaseFile.hpp"
#include "sim/SolverCase.hpp"

namespace octoflow::testing {

struct NsRun {
  io::CaseDescription description;
  std::unique_ptr<sim::Simulation> simulation;
};

// On the heap: the simulation keeps a reference to the description.
inline std::unique_ptr<NsRun> startNs(const std::string& text, exec::Backend backend = exec::Backend::Cpu) {
  auto run = std::make_unique<NsRun>(NsRun{io::parseCase(text, "ns_case.toml"), nullptr});
  sim::CreateOptions options;
  options.backend = backend;
  run->simulation = run->description.solverCase->create(run->description, options);
  return run;
}

// A case of nx x ny cells with the [ns] keys and tables given (after [ns]).
inline std::string nsCase(int nx, int ny, const std::string& nsKeys, const std::string& domainExtra = "") {
  return "[case]\nname = \"ns\"\nsolver = \"ns2d\"\nsteps = 1\n[domain]\nsize = [" + std::to_string(nx) + ", " +
         std::to_string(ny) + "]\n" + domainExtra + "[ns]\n" + nsKeys;
}

}  // namespace octoflow::testing
