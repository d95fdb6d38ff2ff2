#pragma once
// TOML case files (schema: docs/CASES.md). Parsing checks everything a run needs before any
// output exists: a bad file raises InputError naming the file, the key and what was expected.
#include <string>
#include <vector>

#include <array>
#include <memory>

#include "common/Extent.hpp"
#include "particles/TracerSet.hpp"
#include "sim/SolverCase.hpp"

namespace octoflow::io {

struct OutputSettings {
  std::string directory;             // default out/<case name>
  Index every = 0;                   // write every N steps; 0 = only the last step
  std::vector<std::string> fields;   // a subset of the solver's fields (default: all)
  bool wants(const std::string& field) const;
};

struct InSituSettings {
  std::vector<std::string> scripts;  // Catalyst Python scripts, resolved to existing files
  Index every = 100;                 // run the pipelines every N steps (and at step 0)
  bool continueOnError = false;      // on_error = "continue": drop a failing script, run on
};

// Tracer particles: [tracers] and its [[tracers.source]] entries.
struct TracerRunSettings {
  particles::TracerSettings particles;  // no sources: no tracers
  Index every = 1;        // tracers move every N steps, over N lattice time units in the flow of the first
  Index outputEvery = 0;  // tracers_<step>.vtp at multiples of this and the last step (default: output.every)
  bool enabled() const { return !particles.sources.empty(); }
};

// An isosurface of a field ([surface]): channel "surface" in situ, surface_<step>.vtp offline.
struct SurfaceSettings {
  std::string field;      // empty: no surface; else one of surfaceFieldNames()
  float level = 0.0f;
  Index outputEvery = 0;  // as TracerRunSettings::outputEvery
  bool enabled() const { return !field.empty(); }
};

// A whole case: the shared sections, and the solver's own (parsed by the solver named in
// `case.solver`, sim/SolverRegistry.hpp).
struct CaseDescription {
  std::string sourcePath;
  std::string name;
  std::string solver = "lbm";
  Index steps = 0;
  int dimensions = 2;                            // the number of domain.size entries
  Extent extent;                                 // domain.size (nodes)
  std::array<bool, 3> periodic{false, false, true};  // domain.periodic (2D: z is periodic)
  std::shared_ptr<const sim::SolverCase> solverCase;
  OutputSettings output;
  InSituSettings insitu;
  TracerRunSettings tracers;
  SurfaceSettings surface;
};

// Reads and checks a case file. Relative script paths are looked up from the working
// directory, then from the case file's folder, then by file name among the scripts that ship
// in catalyst_scripts/.
CaseDescription loadCase(const std::string& path);
// The same from text already in memory (tests); `sourceName` stands for the file in messages.
CaseDescription parseCase(const std::string& text, const std::string& sourceName);

// The scalars a case can take an isosurface of: the solver's scalar fields, and speed
// (|velocity|) when it has a velocity.
std::vector<std::string> surfaceFieldNames(const std::vector<sim::FieldInfo>& fields);
// The top-level tables every case may have, whatever its solver.
const std::vector<std::string>& sharedTableNames();

}  // namespace octoflow::io
