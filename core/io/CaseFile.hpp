#pragma once
// TOML case files (schema: docs/CASES.md). Parsing checks everything a run needs before any
// output exists: a bad file raises InputError naming the file, the key and what was expected.
#include <string>
#include <vector>

#include "common/Extent.hpp"
#include "geometry/Obstacle.hpp"
#include "io/PhysicalUnits.hpp"
#include "lbm/UniformSolver.hpp"
#include "particles/TracerSet.hpp"

namespace octoflow::io {

struct OutputSettings {
  std::string directory;             // default out/<case name>
  Index every = 0;                   // write every N steps; 0 = only the last step
  std::vector<std::string> fields;   // subset of {density, velocity}
  bool wants(const std::string& field) const;
};

struct InSituSettings {
  std::vector<std::string> scripts;  // Catalyst Python scripts, resolved to existing files
  Index every = 100;                 // run the pipelines every N steps (and at step 0)
  bool continueOnError = false;      // on_error = "continue": drop a failing script, run on
};

// Forces on the obstacles, written to <output.directory>/forces.csv.
struct ForcesSettings {
  Index every = 0;                 // 0: no forces file
  double referenceVelocity = 0.0;  // U, lattice units; with the length: cd = 2 fx / (rho0 U^2 A)
  double referenceLength = 0.0;    // D, lattice units
  double referenceArea = 0.0;      // 3D: A (default D^2); 2D: A = D (per unit depth)
  bool coefficients() const { return referenceVelocity > 0.0 && referenceLength > 0.0; }
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

struct CaseDescription {
  std::string sourcePath;
  std::string name;
  std::string solver = "lbm";
  Index steps = 0;
  int dimensions = 2;
  lbm::UniformSolverConfig lbm;
  PhysicalUnits units;
  std::vector<geometry::ObstacleSpec> obstacles;  // rasterised into lbm.solid
  ForcesSettings forces;
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

// The fields a uniform LBM case can write.
const std::vector<std::string>& uniformFieldNames();
// The scalars a uniform LBM case can take an isosurface of: density, speed (|velocity|).
const std::vector<std::string>& surfaceFieldNames();

}  // namespace octoflow::io
