#pragma once
// TOML case files (schema: docs/CASES.md). Parsing checks everything a run needs before any
// output exists: a bad file raises InputError naming the file, the key and what was expected.
#include <string>
#include <vector>

#include <array>
#include <cstdint>
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
// [checkpoint]: the solver's full state every `every` steps and at the last step (0: none), the
// newest `keep` kept, in `directory` (empty: <output.directory>/checkpoints).
struct CheckpointSettings {
  Index every = 0;
  Index keep = 2;
  std::string directory;
  bool enabled() const { return every > 0; }
};

// [watchdog]: every `check_every` steps the fields are searched for values that are not finite or
// out of their sane range, where the solver lives (0: never).
struct WatchdogSettings {
  Index checkEvery = 200;  // bench reliability: under 1 % of a step at 256^3 on an H200, either solver
};

struct CaseDescription {
  std::string sourcePath;
  std::string sourceText;  // the case file as read (checkpoints carry it for readers: docs/FORMATS.md)
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
  CheckpointSettings checkpoint;
  WatchdogSettings watchdog;
  // Of the tables that define the state a run computes ([case] but its name and steps, [domain],
  // the solver's tables, [tracers]): checkpoints of another case are refused by it.
  std::uint64_t stateHash = 0;
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
