#pragma once
// The solvers a case can name (`case.solver`): each with the top-level tables of its own section
// and the function that parses them. The only list of solvers in the project.
#include <memory>
#include <string>
#include <vector>

#include "sim/SolverCase.hpp"

namespace octoflow::io {
class CaseReader;
}

namespace octoflow::sim {

struct SolverEntry {
  const char* name;         // case.solver
  const char* summary;      // for messages and `octoflow info`
  std::vector<std::string> tables;  // top-level tables of its section
  // Reads the solver's tables; [case] and [domain] are in `description` already.
  std::unique_ptr<SolverCase> (*parse)(const io::CaseReader& reader, io::CaseDescription& description);
};

const std::vector<SolverEntry>& solvers();
// The entry named `name`, or null.
const SolverEntry* findSolver(const std::string& name);

}  // namespace octoflow::sim
