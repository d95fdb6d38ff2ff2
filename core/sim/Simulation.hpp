#pragma once
// The one narrow interface every solver implements (uniform LBM, phase-field, and the solvers that
// follow). Everything around a solver is written once against it: the run loop, progress, the
// diagnostics CSV, the VTK writers, the Catalyst channels, tracers and isosurfaces, the plugin
// source. A solver is made from its own case section (sim/SolverCase.hpp) and registered under its
// `case.solver` name (sim/SolverRegistry.hpp).
//
// Grids are uniform and node-centred: node (i, j, k) of the whole grid sits at (i, j, k) (lattice
// units; physical scales go into the files' metadata). Fields are float arrays, x fastest, one
// value a node (scalar) or three (xyz per node).
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "common/Extent.hpp"
#include "exec/Backend.hpp"
#include "particles/TracerMotion.hpp"
#include "sim/SolverState.hpp"
#include "sim/StepTimeline.hpp"

namespace octoflow::sim {

// A field a solver offers (its list is fixed by the case, known before the solver is made).
struct FieldInfo {
  std::string name;
  int components = 1;  // 1: scalar, 3: vector (xyz per node)
};

// Named arrays of the nodes of `box` (whole-grid coordinates), held by the solver: valid until its
// next call. A field not asked for (or not on this rank) has no entry.
struct FieldSet {
  struct Array {
    std::string name;
    int components = 1;
    const float* values = nullptr;
  };
  NodeBox box;
  // The nodes of `box` this rank updates (whole-grid coordinates); the rest are ghost layers, which
  // may lie beyond the grid across periodic faces. Host sets: box itself.
  NodeBox owned;
  std::vector<Array> arrays;
  const float* values(const std::string& name) const {
    for (const Array& array : arrays)
      if (array.name == name) return array.values;
    return nullptr;
  }
};

// An array the writer computes from a host FieldSet (physical units beside lattice units), owned.
struct DerivedArray {
  std::string name;
  int components = 1;
  std::vector<float> values;
};

// A field's sane values: [lowest, highest], or, for a vector field with `magnitude`, a length
// below `highest`. Values that are not finite are never sane.
struct FieldLimit {
  std::string field;
  float lowest = -3.0e38f, highest = 3.0e38f;
  bool magnitude = false;
  std::string describe() const;
};

// A CSV the run writes every `every` steps (0: none), one row a time from diagnostics(): the
// first column is the step (written as an integer), the others numbers.
struct DiagnosticsLog {
  std::string fileName;
  Index every = 0;
  std::vector<std::string> columns;
};

// The blocks of a solver with levels (octree AMR): blocks of equal size, each at one level, that
// together cover the domain once (blocks that touch share the points of their common face, edge or
// corner: node-centred). Level L's node spacing is 2^-L of level 0's; point (i, j, k) of a block
// sits at (origin + (i, j, k)) 2^-L in level-0 node coordinates, the coordinates of extent().
struct BlockGrid {
  struct Block {
    int level = 0;
    Index origin[3] = {0, 0, 0};  // node coordinates of point (0, 0, 0) at the block's level
  };
  int blockNodes = 17;  // points a side of every block
  int levels = 1;       // 1 + the deepest level
  Index domainCells[3] = {0, 0, 0};  // level-0 cells a side of the domain
  bool periodic[3] = {false, false, false};
  std::vector<Block> blocks;
  // The run of blocks this rank steps, [ownFirst, ownEnd) (ownEnd -1: to the last; one rank: all).
  // Over MPI ranks each hands its own to Catalyst (the others' places left empty, as distributed
  // AMR data is).
  Index ownFirst = 0, ownEnd = -1;
  // The blocks whose values fetchBlockFields(..., Pieces) gives this rank, in block order: over MPI
  // ranks its run and the blocks around it (those a layer of one cell of each own block's level
  // around it reads: a picture of its blocks with ghost cells); empty: every block.
  std::vector<Index> valuesHeld;
  // Counts the changes of the blocks (a solver that regrids changes them in advance()): what is
  // made of them (tables, copies) is made again when it moves on.
  Index revision = 0;
  Index pointsPerBlock() const { return static_cast<Index>(blockNodes) * blockNodes * blockNodes; }
};

// Named arrays over the points of the blocks of a BlockGrid (block after block, x fastest in a
// block), held by the solver: valid until its next call. Every block's, or for a rank's piece over
// MPI ranks (fetchBlockFields(..., Pieces)) those of BlockGrid::valuesHeld alone, in its order.
struct BlockFieldSet {
  std::vector<FieldSet::Array> arrays;
  // A byte a point of every block, 1 inside an obstacle (null: none, or the arrays are a piece).
  const std::uint8_t* solid = nullptr;
  const float* values(const std::string& name) const {
    for (const FieldSet::Array& array : arrays)
      if (array.name == name) return array.values;
    return nullptr;
  }
};

class Simulation {
public:
  virtual ~Simulation() = default;

  // One line for the start of a run: the model, the grid, the parameters that matter.
  virtual std::string describe() const = 0;
  virtual exec::Backend backend() const = 0;
  // The whole grid, in nodes (all ranks together).
  virtual const Extent& extent() const = 0;
  virtual const std::vector<FieldInfo>& fields() const = 0;

  virtual Index step() const = 0;
  // Lattice node updates a step makes (progress in MLUPS): the grid's nodes, or, with levels, every
  // point as often as its level steps.
  virtual double nodeUpdatesPerStep() const { return static_cast<double>(extent().cellCount()); }
  // Collective over the ranks of a run. A solver on a GPU may return with its last step still
  // running there (lbm::UniformSolver::advance): whatever reads the state waits for it.
  virtual void advance(Index steps) = 0;
  // Waits until the work advance() queued is done: for timings.
  virtual void synchronize() {}

  // The timeline of step `step` when advance() runs it (`octoflow bench ... --timeline`): this
  // rank's marks, afterwards. A solver that records none leaves it empty.
  virtual void recordTimeline(Index step) { (void)step; }
  virtual std::vector<TimelineMark> timeline() const { return {}; }

  // Collective. Host copies of the named fields of the whole grid on rank 0 (box = the whole
  // grid); other ranks get an empty set.
  virtual const FieldSet& fetchFields(const std::vector<std::string>& names) = 0;
  // Collective. This rank's piece of the named fields on the host, as ParaView takes pieces of a
  // uniform grid (Catalyst, .pvti): owned nodes plus, on each axis where another piece follows, its
  // first layer of nodes. One rank: the whole grid.
  virtual const FieldSet& pieceFields(const std::vector<std::string>& names) = 0;
  // Every rank's piece box (pieceFields().box) in rank order, without communication.
  virtual std::vector<NodeBox> pieceBoxes() const { return {NodeBox::of(extent())}; }
  // The named fields of this rank's grid where the solver lives (device memory on CUDA), computed
  // for the current state, for work done there (isosurfaces, tracers, the watchdog): `box` is the
  // rank's whole local grid, ghost layers included, `owned` the nodes it updates. One rank: both
  // are the whole grid.
  virtual const FieldSet& workingFields(const std::vector<std::string>& names) = 0;

  // Sane ranges of the fields, for the watchdog (apps/Watchdog.hpp): a value outside them, or not
  // finite, stops the run.
  virtual std::vector<FieldLimit> fieldLimits() const = 0;

  // Checkpoints (io/Checkpoint.hpp). Collective. The full state this rank holds (host copies of
  // its owned nodes, records that let the run go on bit for bit: the diagnostics' history...), and
  // the same read back from a checkpoint written by any number of ranks: afterwards step() is the
  // checkpoint's and the next advance() computes exactly what the saved run computed next.
  virtual SolverState saveState() = 0;
  virtual void restoreState(const StateSource& source) = 0;

  // Moves tracers through the current flow without a velocity field, where the solver samples its
  // own state at the tracers (the uniform LBM on one rank: the velocity at the corners of each
  // tracer's cell from the populations there, the same values its "velocity" field holds): the
  // move's arrays in the solver's working memory. On a GPU the move may be queued without waiting,
  // in order with the solver's later work and with copies on the default stream (how TracerSet
  // reads its arrays). False (the default): the caller moves them in workingFields' "velocity".
  virtual bool moveTracers(const particles::TracerMove& move) {
    (void)move;
    return false;
  }
  // A solver may keep a move (moveTracers) for its next step, whose kernels then hand it the
  // velocities it samples; this makes such a move now, in the current state. Called before
  // anything reads or changes the tracers' arrays.
  virtual void settleTracers() {}

  // Solvers with levels (octree AMR): the blocks, and host copies of the named fields on their
  // points with the obstacle mask (`solid`, host) (the uniform grid of extent() is then level 0, its
  // values taken from the finest block holding each node). Collective. BlockFieldsFor::RankZero:
  // rank 0 gets every block's values, the others nothing (their arrays may be empty); Pieces: each
  // rank those of BlockGrid::valuesHeld, its run and the blocks around it, and only those in its
  // arrays (its piece of distributed AMR data, in files and for Catalyst). One rank: every block
  // either way. Null / never called for a uniform solver.
  enum class BlockFieldsFor { RankZero, Pieces };
  virtual const BlockGrid* blockGrid() const { return nullptr; }
  virtual const BlockFieldSet& fetchBlockFields(const std::vector<std::string>& names, BlockFieldsFor whom);
  // The same where the solver lives (device memory on CUDA), for work done there (tracers).
  virtual const BlockFieldSet& workingBlockFields(const std::vector<std::string>& names);

  virtual int rank() const { return 0; }
  virtual int ranks() const { return 1; }

  // The solver's CSV (forces on obstacles, the dendrite's tip...) and a row of it for the
  // current state. Collective; the row is meaningful on rank 0.
  virtual DiagnosticsLog diagnosticsLog() const { return {}; }
  virtual std::vector<double> diagnostics() { return {}; }

  // Nodes where tracers stop (obstacles), one byte a node of the whole grid, host memory; null: none.
  virtual const std::vector<std::uint8_t>* solidMask() const { return nullptr; }

  // For output files: arrays in physical units derived from lattice ones (run on the writer
  // thread, from `fields` as fetched), and one-value metadata of a step (scales, time).
  virtual std::vector<DerivedArray> physicalArrays(const FieldSet& fields) const {
    (void)fields;
    return {};
  }
  virtual std::vector<std::pair<std::string, double>> fileMetadata(Index step) const {
    (void)step;
    return {};
  }
  // The time a step stands for in outputs (TIMESTEP_VALUES of series, Catalyst's time).
  virtual double timeOf(Index step) const { return static_cast<double>(step); }
  // The "velocity" field times this is nodes a step: how far tracers move (the LBM's lattice
  // units: 1; a solver whose velocity is in its own units: dt / node spacing).
  virtual double velocityScale() const { return 1.0; }
};

// Names of a solver's fields with `components` values a node.
inline std::vector<std::string> fieldNames(const std::vector<FieldInfo>& fields, int components = 0) {
  std::vector<std::string> names;
  for (const FieldInfo& field : fields)
    if (components == 0 || field.components == components) names.push_back(field.name);
  return names;
}
// Whether `name` is among the fields asked for.
inline bool asksFor(const std::vector<std::string>& names, const char* name) {
  for (const std::string& asked : names)
    if (asked == name) return true;
  return false;
}
inline const FieldInfo* findField(const std::vector<FieldInfo>& fields, const std::string& name) {
  for (const FieldInfo& field : fields)
    if (field.name == name) return &field;
  return nullptr;
}

}  // namespace octoflow::sim
