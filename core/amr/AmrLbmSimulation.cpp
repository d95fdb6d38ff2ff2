// The octree LBM behind the Simulation interface (one process: output, checkpoints and regrids over
// MPI ranks are not written yet; the solver's steps run over ranks in parallel/DistributedAmrLbm). Its uniform grid is level 0: every level-0 node takes the values of the finest
// block holding it (node-centred blocks: every level-0 node is a point of each block around it),
// gathered where the solver lives, so the watchdog, isosurfaces, tracers and .vti files work on it
// unchanged. The blocks themselves (blockGrid, fetchBlockFields) go to the `amr` Catalyst channel
// and the .vthb files.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>

#include "amr/AmrLbmCase.hpp"
#include "amr/Regrid.hpp"
#include "common/Error.hpp"
#include "exec/Memory.hpp"
#include "io/CaseFile.hpp"
#include "lbm/LbmSimulation.hpp"

#if OCTOFLOW_HAVE_MPI
#include <mpi.h>
#endif

namespace octoflow::amr {

namespace {

// Checkpoint records of the octree LBM.
constexpr const char* kOctreeRecord = "amr.octree";
constexpr const char* kParityRecord = "amr.parity";
const char* const kPostRecords[2] = {"amr.post0", "amr.post1"};
const char* const kPreRecords[2] = {"amr.pre0", "amr.pre1"};

class AmrLbmSimulation final : public sim::Simulation {
public:
  AmrLbmSimulation(const io::CaseDescription& description, const AmrLbmCase& amrCase, const sim::CreateOptions& options)
      : description_(description), case_(amrCase),
        solver_(std::make_unique<AmrLbm>(*amrCase.octree, amrCase.settings(options.backend), amrCase.solidPoints)),
        solidPoints_(amrCase.solidPoints) {
    sim::requireOneProcess(options, description.sourcePath, "case.solver", "\"lbm-amr\"",
                           "its runs (output, checkpoints, regrids) are one process's; the solver itself runs over "
                           "ranks in `octoflow bench amr` only");
    describeBlocks();
    buildLevelZeroView();
  }

  std::string describe() const override { return case_.describe(); }
  exec::Backend backend() const override { return solver_->settings().backend; }
  const Extent& extent() const override { return description_.extent; }
  const std::vector<sim::FieldInfo>& fields() const override { return case_.fields(); }
  Index step() const override { return solver_->step(); }
  // With a regrid criterion: a regrid after every multiple of regrid.every (so a restart regrids
  // where the run it continues did).
  void advance(Index steps) override {
    const Index every = case_.regrid.enabled() ? case_.regrid.every : 0;
    while (steps > 0) {
      const Index chunk = every > 0 ? std::min(steps, every - solver_->step() % every) : steps;
      solver_->advance(chunk);
      steps -= chunk;
      if (every > 0 && solver_->step() % every == 0) regrid();
    }
  }
  double nodeUpdatesPerStep() const override {
    double updates = 0.0;
    for (const sim::BlockGrid::Block& block : blocks_.blocks)
      updates += std::ldexp(static_cast<double>(blocks_.pointsPerBlock()), block.level);
    return updates;
  }

  const sim::FieldSet& fetchFields(const std::vector<std::string>& names) override {
    gatherLevelZero();
    const std::size_t nodes = static_cast<std::size_t>(extent().cellCount());
    hostDensity_.resize(nodes);
    hostVelocity_.resize(3 * nodes);
    fields_ = {};
    fields_.box = fields_.owned = NodeBox::of(extent());
    if (sim::asksFor(names, "density")) {
      viewDensity_.copyTo(hostDensity_.data(), nodes);
      fields_.arrays.push_back({"density", 1, hostDensity_.data()});
    }
    if (sim::asksFor(names, "velocity")) {
      viewVelocity_.copyTo(hostVelocity_.data(), 3 * nodes);
      fields_.arrays.push_back({"velocity", 3, hostVelocity_.data()});
    }
    return fields_;
  }
  const sim::FieldSet& pieceFields(const std::vector<std::string>& names) override { return fetchFields(names); }
  const sim::FieldSet& workingFields(const std::vector<std::string>& names) override {
    gatherLevelZero();
    fields_ = {};
    fields_.box = fields_.owned = NodeBox::of(extent());
    if (sim::asksFor(names, "density")) fields_.arrays.push_back({"density", 1, viewDensity_.data()});
    if (sim::asksFor(names, "velocity")) fields_.arrays.push_back({"velocity", 3, viewVelocity_.data()});
    return fields_;
  }

  const sim::BlockGrid* blockGrid() const override { return &blocks_; }
  const sim::BlockFieldSet& fetchBlockFields(const std::vector<std::string>& names) override {
    solver_->fetchMoments(blockDensity_, blockVelocity_);
    blockFields_ = {};
    if (sim::asksFor(names, "density")) blockFields_.arrays.push_back({"density", 1, blockDensity_.data()});
    if (sim::asksFor(names, "velocity")) blockFields_.arrays.push_back({"velocity", 3, blockVelocity_.data()});
    return blockFields_;
  }

  const sim::BlockFieldSet& workingBlockFields(const std::vector<std::string>& names) override {
    const float* moments = solver_->workingMoments();
    const std::size_t total = blocks_.blocks.size() * static_cast<std::size_t>(blocks_.pointsPerBlock());
    workingBlockFields_ = {};
    if (sim::asksFor(names, "density")) workingBlockFields_.arrays.push_back({"density", 1, moments});
    if (sim::asksFor(names, "velocity")) workingBlockFields_.arrays.push_back({"velocity", 3, moments + total});
    workingBlockFields_.solid = solver_->workingSolid();
    return workingBlockFields_;
  }

  std::vector<sim::FieldLimit> fieldLimits() const override { return lbm::flowFieldLimits(); }

  sim::SolverState saveState() override {
    const AmrLbmSnapshot snapshot = solver_->snapshot();
    sim::SolverState state;
    state.records.push_back(sim::makeRecord(kOctreeRecord, solver_->octree().serialize()));
    state.records.push_back(sim::makeRecord(kParityRecord, snapshot.parity));
    for (int n = 0; n < 2; ++n) {
      state.records.push_back(sim::makeRecord(kPostRecords[n], snapshot.post[n]));
      state.records.push_back(sim::makeRecord(kPreRecords[n], snapshot.pre[n]));
    }
    return state;
  }
  void restoreState(const sim::StateSource& source) override {
    const std::vector<unsigned char> octree = source.values<unsigned char>(kOctreeRecord);
    if (case_.regrid.enabled()) {
      // The octree the run had regridded to: on this case's root blocks, levels and floor.
      if (octree != solver_->octree().serialize()) {
        std::unique_ptr<Octree> saved;
        try {
          saved = std::make_unique<Octree>(Octree::deserialize(octree));
        } catch (const std::invalid_argument& error) {
          source.fail(kOctreeRecord, error.what());
        }
        const Octree& floor = *case_.octree;
        if (saved->rootBlocks() != floor.rootBlocks() || saved->periodic() != floor.periodic() ||
            saved->maxLevel() != floor.maxLevel() || !coversFloor(*saved, floor))
          source.fail(kOctreeRecord, "the checkpoint's octree does not fit this case (its domain, [amr] keys or obstacles "
                                     "changed): restart with the case that wrote it");
        rebuild(*saved, nullptr);
      }
    } else if (octree != solver_->octree().serialize()) {
      source.fail(kOctreeRecord, "the checkpoint's octree is not the one this case makes (its domain, [amr] keys or "
                                 "obstacles changed): restart with the case that wrote it");
    }
    const AmrLbmSnapshot current = solver_->snapshot();
    AmrLbmSnapshot snapshot;
    snapshot.step = source.step();
    snapshot.parity = source.values<std::int32_t>(kParityRecord, current.parity.size());
    for (const std::int32_t parity : snapshot.parity)
      if (parity != 0 && parity != 1) source.fail(kParityRecord, "holds a level parity other than 0 or 1");
    for (int n = 0; n < 2; ++n) {
      snapshot.post[n] = source.values<float>(kPostRecords[n], current.post[n].size());
      snapshot.pre[n] = source.values<float>(kPreRecords[n], current.pre[n].size());
    }
    solver_->restore(snapshot);
  }

  // forces.csv ([forces]): the force on the obstacles after the last step, level-0 lattice units.
  // With a regrid criterion, the octree after each step's regrid too: its leaves, points and leaves
  // on each level (in forces.csv, or alone in octree.csv every regrid_every steps).
  sim::DiagnosticsLog diagnosticsLog() const override {
    sim::DiagnosticsLog log = lbm::forcesLog(case_.flow);
    if (!case_.regrid.enabled()) return log;
    if (log.every == 0) log = {"octree.csv", case_.regrid.every, {"step"}};
    log.columns.insert(log.columns.end(), {"leaves", "points"});
    for (int level = 0; level <= case_.maxLevel; ++level) log.columns.push_back("leaves_" + std::to_string(level));
    return log;
  }
  std::vector<double> diagnostics() override {
    std::vector<double> row = case_.flow.forces.every > 0
                                  ? lbm::forcesRow(case_.flow, step(), solver_->obstacleForce(), description_.dimensions)
                                  : std::vector<double>{static_cast<double>(step())};
    if (!case_.regrid.enabled()) return row;
    const BlockLayout& layout = solver_->layout();
    row.push_back(static_cast<double>(layout.blocks.size()));
    row.push_back(static_cast<double>(layout.blocks.size()) * static_cast<double>(layout.pointsPerBlock()));
    for (int level = 0; level <= case_.maxLevel; ++level)
      row.push_back(level < layout.levels ? static_cast<double>(layout.byLevel[static_cast<std::size_t>(level)].size()) : 0.0);
    return row;
  }

  const std::vector<std::uint8_t>* solidMask() const override { return solidNodes_.empty() ? nullptr : &solidNodes_; }

  std::vector<sim::DerivedArray> physicalArrays(const sim::FieldSet& fields) const override {
    return lbm::flowPhysicalArrays(case_.flow.units, fields.values("density"), fields.values("velocity"),
                                   static_cast<std::size_t>(fields.box.cellCount()));
  }
  std::vector<std::pair<std::string, double>> fileMetadata(Index step) const override {
    return lbm::flowFileMetadata(case_.flow.units, step);
  }

private:
  // Every leaf of `floor` is a leaf of `tree` or refined there.
  static bool coversFloor(const Octree& tree, const Octree& floor) {
    for (const BlockKey& leaf : tree.leaves())
      if (floor.coveringLeaf(leaf) < 0) return false;  // refined further in the floor
    return true;
  }

  // Refines and coarsens the leaves by the case's criterion on the current state, and moves the
  // state to the new octree (AmrLbm::adopt) when it differs.
  void regrid() {
    const BlockLayout& layout = solver_->layout();
    // Arrays of its own: the background writer may still be writing the last output's block fields.
    std::vector<float> density, velocity;
    solver_->fetchMoments(density, velocity);
    const bool vector = case_.regrid.field == "velocity";
    const std::vector<double> indicator =
        blockIndicator(layout, case_.regrid.criterion, vector ? velocity.data() : density.data(), vector ? 3 : 1,
                       solidPoints_.empty() ? nullptr : solidPoints_.data());
    const Octree next = adapted(solver_->octree(), regridChanges(indicator, case_.regrid), case_.octree.get());
    if (next.leaves() == solver_->octree().leaves()) return;
    const AmrLbmHostCopy previous = solver_->hostCopy();
    try {
      rebuild(next, &previous);
    } catch (const std::exception& error) {
      const BlockLayout grown = leafBlocks(next, case_.leafCells);
      throw InputError(description_.sourcePath, "amr.regrid_threshold",
                       "the regrid at step " + std::to_string(previous.snapshot.step) + " makes " +
                           std::to_string(grown.blocks.size()) + " leaves, which the solver cannot hold (" + error.what() +
                           "): raise amr.regrid_threshold or lower amr.max_level");
    }
  }

  // The solver on `octree` (its state from `previous`, or the initial one), and what is made of its
  // blocks: the block grid and the level-0 view.
  void rebuild(const Octree& octree, const AmrLbmHostCopy* previous) {
    const BlockLayout layout = leafBlocks(octree, case_.leafCells);
    std::vector<std::uint8_t> solid = case_.solidPointsOn(layout);
    const AmrLbmSettings settings = solver_->settings();
    solver_.reset();  // its device memory first
    solver_ = previous ? std::make_unique<AmrLbm>(octree, settings, solid, *previous)
                       : std::make_unique<AmrLbm>(octree, settings, solid);
    solidPoints_ = std::move(solid);
    const std::int64_t revision = blocks_.revision + 1;
    blocks_ = {};
    blocks_.revision = revision;
    describeBlocks();
    buildLevelZeroView();
  }

  void describeBlocks() {
    const BlockLayout& layout = solver_->layout();
    blocks_.blockNodes = layout.blockNodes;
    blocks_.levels = layout.levels;
    const Octree& octree = solver_->octree();
    for (int axis = 0; axis < 3; ++axis) {
      blocks_.domainCells[axis] = static_cast<Index>(octree.rootBlocks()[static_cast<std::size_t>(axis)]) * (layout.blockNodes - 1);
      blocks_.periodic[axis] = octree.periodic()[static_cast<std::size_t>(axis)];
    }
    for (const BlockPlacement& placement : layout.blocks) {
      sim::BlockGrid::Block block;
      block.level = placement.level;
      for (int axis = 0; axis < 3; ++axis) block.origin[axis] = placement.origin[axis];
      blocks_.blocks.push_back(block);
    }
  }

  // Which point holds each level-0 node: of the blocks holding it, one of the finest.
  void buildLevelZeroView() {
    const BlockLayout& layout = solver_->layout();
    const Extent& grid = extent();
    const Index B = layout.blockNodes;
    const std::size_t nodes = static_cast<std::size_t>(grid.cellCount());
    std::vector<std::int64_t> source(nodes, -1);
    std::vector<int> sourceLevel(nodes, -1);
    for (std::size_t b = 0; b < layout.blocks.size(); ++b) {
      const BlockPlacement& block = layout.blocks[b];
      const Index stride = Index{1} << block.level;
      Index first[3];
      for (int axis = 0; axis < 3; ++axis) first[axis] = (stride - block.origin[axis] % stride) % stride;
      for (Index k = first[2]; k < B; k += stride)
        for (Index j = first[1]; j < B; j += stride)
          for (Index i = first[0]; i < B; i += stride) {
            const Index local[3] = {i, j, k};
            Index node[3];
            for (int axis = 0; axis < 3; ++axis)
              node[axis] = ((block.origin[axis] + local[axis]) / stride) % grid.size(axis);  // periodic: wraps
            const std::size_t n = static_cast<std::size_t>(grid.linear(node[0], node[1], node[2]));
            if (block.level > sourceLevel[n]) {
              sourceLevel[n] = block.level;
              source[n] = static_cast<std::int64_t>(b) * layout.pointsPerBlock() + i + B * (j + B * k);
            }
          }
    }
    if (std::find(source.begin(), source.end(), -1) != source.end())
      throw Error("the octree's blocks leave a level-0 node without a point");
    const exec::MemorySpace space = exec::workingSpace(backend());
    viewSource_ = exec::Buffer<std::int64_t>(space, nodes);
    viewSource_.copyFrom(source.data(), nodes);
    viewDensity_ = exec::Buffer<float>(space, nodes);
    viewVelocity_ = exec::Buffer<float>(space, 3 * nodes);
    // The obstacles mark the same level-0 nodes on every octree: made once.
    if (!solidPoints_.empty() && solidNodes_.empty()) {
      solidNodes_.resize(nodes);
      for (std::size_t n = 0; n < nodes; ++n) solidNodes_[n] = solidPoints_[static_cast<std::size_t>(source[n])];
    }
  }

  void gatherLevelZero() {
    solver_->gatherPoints(viewSource_.data(), extent().cellCount(), viewDensity_.data(), viewVelocity_.data());
  }

  const io::CaseDescription& description_;
  const AmrLbmCase& case_;
  std::unique_ptr<AmrLbm> solver_;
  std::vector<std::uint8_t> solidPoints_;  // the obstacles on the current octree's points
  sim::BlockGrid blocks_;
  exec::Buffer<std::int64_t> viewSource_;  // level-0 node -> point (block order)
  exec::Buffer<float> viewDensity_, viewVelocity_;
  std::vector<float> hostDensity_, hostVelocity_;
  std::vector<float> blockDensity_, blockVelocity_;
  std::vector<std::uint8_t> solidNodes_;
  sim::FieldSet fields_;
  sim::BlockFieldSet blockFields_, workingBlockFields_;
};

}  // namespace

std::unique_ptr<sim::Simulation> makeAmrLbmSimulation(const io::CaseDescription& description, const AmrLbmCase& amrCase,
                                                      const sim::CreateOptions& options) {
  return std::make_unique<AmrLbmSimulation>(description, amrCase, options);
}

}  // namespace octoflow::amr
