// The octree LBM behind the Simulation interface, on one process (AmrLbm) or over MPI ranks
// (parallel/DistributedAmrLbm: each rank steps a run of blocks; results bit-identical to one rank).
// Its uniform grid is level 0: every level-0 node takes the values of the finest block holding it
// (node-centred blocks: every level-0 node is a point of each block around it), gathered where the
// solver lives (over ranks: each rank sends the nodes its own blocks hold to the ranks whose
// pieces of level 0 take them, or to rank 0), so the watchdog, isosurfaces, tracers and .vti files
// work on it unchanged. The blocks
// themselves (blockGrid, fetchBlockFields) go to the `amr` Catalyst channel and the .vthb files.
// Checkpoints hold every block's state in one solver's numbering, whatever the ranks that wrote
// them: they restart on any number of ranks; a regrid gathers the state and every rank takes its
// run of the new octree's blocks from it.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>

#include "amr/AmrLbmCase.hpp"
#include "amr/Regrid.hpp"
#include "common/Error.hpp"
#include "exec/Memory.hpp"
#include "io/CaseFile.hpp"
#include "lbm/LbmSimulation.hpp"

#if OCTOFLOW_HAVE_MPI
#include <mpi.h>

#include "parallel/Decomposition.hpp"
#include "parallel/DistributedAmrLbm.hpp"
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
      : description_(description), case_(amrCase), solidPoints_(amrCase.solidPoints) {
#if OCTOFLOW_HAVE_MPI
    int worldRanks = 1;
    if (options.overMpi) MPI_Comm_size(MPI_COMM_WORLD, &worldRanks);
    overRanks_ = worldRanks > 1;
#endif
    makeSolver(*amrCase.octree, amrCase.settings(options.backend), nullptr);
    describeBlocks();
    buildLevelZeroView();
    if (ranks() > 1) (void)pieceBoxes();  // a level 0 too small for the ranks' pieces: an InputError now
  }

  std::string describe() const override {
    std::string text = case_.describe();
    if (ranks() > 1)
      text += "; " + std::to_string(ranks()) + " MPI ranks, each stepping a run of blocks in Morton order cut by work";
#if OCTOFLOW_HAVE_MPI
    if (distributed_) text += std::string(", halos: ") + distributed_->haloPath();
#endif
    return text;
  }
  exec::Backend backend() const override { return local().settings().backend; }
  const Extent& extent() const override { return description_.extent; }
  const std::vector<sim::FieldInfo>& fields() const override { return case_.fields(); }
  Index step() const override { return local().step(); }
  // With a regrid criterion: a regrid after every multiple of regrid.every (so a restart regrids
  // where the run it continues did).
  void advance(Index steps) override {
    const Index every = case_.regrid.enabled() ? case_.regrid.every : 0;
    while (steps > 0) {
      const Index chunk = every > 0 ? std::min(steps, every - step() % every) : steps;
#if OCTOFLOW_HAVE_MPI
      if (distributed_) distributed_->advance(chunk);
#endif
      if (solver_) solver_->advance(chunk);
      steps -= chunk;
      if (every > 0 && step() % every == 0) regrid();
    }
  }
  double nodeUpdatesPerStep() const override {
    double updates = 0.0;
    for (const sim::BlockGrid::Block& block : blocks_.blocks)
      updates += std::ldexp(static_cast<double>(blocks_.pointsPerBlock()), block.level);
    return updates;
  }

  const sim::FieldSet& fetchFields(const std::vector<std::string>& names) override {
    const std::size_t nodes = static_cast<std::size_t>(extent().cellCount());
    if (ranks() > 1) {
      gatherLevelZeroOverRanks(hostDensity_, hostVelocity_, 0);  // rank 0's alone
    } else {
      gatherLevelZero();
      hostDensity_.resize(nodes);
      hostVelocity_.resize(3 * nodes);
      viewDensity_.copyTo(hostDensity_.data(), nodes);
      viewVelocity_.copyTo(hostVelocity_.data(), 3 * nodes);
    }
    fields_ = {};
    fields_.box = fields_.owned = NodeBox::of(extent());
    if (rank() != 0) return fields_;
    if (sim::asksFor(names, "density")) fields_.arrays.push_back({"density", 1, hostDensity_.data()});
    if (sim::asksFor(names, "velocity")) fields_.arrays.push_back({"velocity", 3, hostVelocity_.data()});
    return fields_;
  }
  const sim::FieldSet& pieceFields(const std::vector<std::string>& names) override {
    if (ranks() == 1) return fetchFields(names);
    gatherLevelZeroPiece(pieceDensity_, pieceVelocity_);
    fields_ = {};
    fields_.box = fields_.owned = pieceBoxes()[static_cast<std::size_t>(rank())];
    if (sim::asksFor(names, "density")) fields_.arrays.push_back({"density", 1, pieceDensity_.data()});
    if (sim::asksFor(names, "velocity")) fields_.arrays.push_back({"velocity", 3, pieceVelocity_.data()});
    return fields_;
  }
  // Over ranks, level 0 in pieces as the uniform solvers cut their grids (parallel/Decomposition):
  // each node is sent by the rank stepping its block, so any cut would do; this one gives ParaView
  // pieces it knows.
  std::vector<NodeBox> pieceBoxes() const override {
    std::vector<NodeBox> boxes;
#if OCTOFLOW_HAVE_MPI
    if (ranks() > 1) {
      for (int r = 0; r < ranks(); ++r) boxes.push_back(parallel::pieceBox(levelZeroPiece(r)));
      return boxes;
    }
#endif
    boxes.push_back(NodeBox::of(extent()));
    return boxes;
  }
  // Over ranks: this rank's piece of level 0 (box), its owned nodes (the watchdog looks there).
  const sim::FieldSet& workingFields(const std::vector<std::string>& names) override {
    fields_ = {};
    fields_.box = fields_.owned = NodeBox::of(extent());
    if (ranks() > 1) {
      gatherLevelZeroPiece(scratchDensity_, scratchVelocity_);
      viewDensity_.copyFrom(scratchDensity_.data(), scratchDensity_.size());
      viewVelocity_.copyFrom(scratchVelocity_.data(), scratchVelocity_.size());
#if OCTOFLOW_HAVE_MPI
      const parallel::Piece piece = levelZeroPiece(rank());
      fields_.box = pieceBoxes()[static_cast<std::size_t>(rank())];
      fields_.owned = NodeBox{{piece.lo[0], piece.lo[1], piece.lo[2]}, Extent{piece.owned(0), piece.owned(1), piece.owned(2)}};
#endif
    } else {
      gatherLevelZero();
    }
    if (sim::asksFor(names, "density")) fields_.arrays.push_back({"density", 1, viewDensity_.data()});
    if (sim::asksFor(names, "velocity")) fields_.arrays.push_back({"velocity", 3, viewVelocity_.data()});
    return fields_;
  }

  const sim::BlockGrid* blockGrid() const override { return &blocks_; }
  const sim::BlockFieldSet& fetchBlockFields(const std::vector<std::string>& names, BlockFieldsFor whom) override {
    fetchBlockMoments(blockDensity_, blockVelocity_, whom, sim::asksFor(names, "density"));
    blockFields_ = {};
    const bool piece = !blocks_.valuesHeld.empty() && whom == BlockFieldsFor::Pieces;
    blockFields_.solid = solidPoints_.empty() || piece ? nullptr : solidPoints_.data();
    if (sim::asksFor(names, "density")) blockFields_.arrays.push_back({"density", 1, blockDensity_.data()});
    if (sim::asksFor(names, "velocity")) blockFields_.arrays.push_back({"velocity", 3, blockVelocity_.data()});
    return blockFields_;
  }

  // One rank only: over ranks tracers move in the blocks gathered by fetchBlockFields on rank 0
  // (insitu::FlowExtracts).
  const sim::BlockFieldSet& workingBlockFields(const std::vector<std::string>& names) override {
    if (!solver_) throw std::logic_error("the octree LBM's blocks are on the solver's device only on one rank");
    const float* moments = solver_->workingMoments();
    const std::size_t total = blocks_.blocks.size() * static_cast<std::size_t>(blocks_.pointsPerBlock());
    workingBlockFields_ = {};
    if (sim::asksFor(names, "density")) workingBlockFields_.arrays.push_back({"density", 1, moments});
    if (sim::asksFor(names, "velocity")) workingBlockFields_.arrays.push_back({"velocity", 3, moments + total});
    workingBlockFields_.solid = solver_->workingSolid();
    return workingBlockFields_;
  }

  int rank() const override { return rank_; }
  int ranks() const override { return ranks_; }

  std::vector<sim::FieldLimit> fieldLimits() const override { return lbm::flowFieldLimits(); }

  // Every block's state in one solver's numbering (over ranks: gathered to rank 0), records of rank 0.
  sim::SolverState saveState() override {
    const AmrLbmSnapshot snapshot = snapshotOnRankZero();
    sim::SolverState state;
    if (rank() != 0) return state;
    state.records.push_back(sim::makeRecord(kOctreeRecord, local().octree().serialize()));
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
      if (octree != local().octree().serialize()) {
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
    } else if (octree != local().octree().serialize()) {
      source.fail(kOctreeRecord, "the checkpoint's octree is not the one this case makes (its domain, [amr] keys or "
                                 "obstacles changed): restart with the case that wrote it");
    }
    // Every block's state (one solver's numbering): a value a population of each block, and of
    // each block that keeps a pre-collision copy.
    const BlockLayout& layout = local().layout();
    const std::size_t blockValues =
        static_cast<std::size_t>(lbm::latticeQ(local().settings().lattice)) * static_cast<std::size_t>(layout.pointsPerBlock());
    const std::size_t sources = layout.crossLevelSources();
    AmrLbmSnapshot snapshot;
    snapshot.step = source.step();
    snapshot.parity = source.values<std::int32_t>(kParityRecord, static_cast<std::size_t>(layout.levels));
    for (const std::int32_t parity : snapshot.parity)
      if (parity != 0 && parity != 1) source.fail(kParityRecord, "holds a level parity other than 0 or 1");
    for (int n = 0; n < 2; ++n) {
      snapshot.post[n] = source.values<float>(kPostRecords[n], layout.blocks.size() * blockValues);
      snapshot.pre[n] = source.values<float>(kPreRecords[n], sources * blockValues);
    }
#if OCTOFLOW_HAVE_MPI
    if (distributed_) return distributed_->restore(snapshot);
#endif
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
                                  ? lbm::forcesRow(case_.flow, step(), obstacleForce(), description_.dimensions)
                                  : std::vector<double>{static_cast<double>(step())};
    if (!case_.regrid.enabled()) return row;
    const BlockLayout& layout = local().layout();
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
    const std::vector<double> indicator = regridIndicator();
    const Octree next = adapted(local().octree(), regridChanges(indicator, case_.regrid), case_.octree.get());
    if (next.leaves() == local().octree().leaves()) return;
    // The state arrays are handed over (the blocks that keep their leaf are copied where they
    // lie); over ranks each rank hands its own blocks over alike and gets a host copy of the other
    // blocks its new ones read.
#if OCTOFLOW_HAVE_MPI
    AmrLbmHandOver previous = distributed_ ? distributed_->handOver(next) : solver_->handOver();
#else
    AmrLbmHandOver previous = solver_->handOver();
#endif
    try {
      try {
        rebuild(next, &previous);
      } catch (const OutOfMemoryError&) {
        if (!previous.resident) throw;
        previous.moveToHost();  // no room for the new solver beside the old state: via the host
        rebuild(next, &previous);
      }
    } catch (const std::exception& error) {
      const BlockLayout grown = leafBlocks(next, case_.leafCells);
      throw InputError(description_.sourcePath, "amr.regrid_threshold",
                       "the regrid at step " + std::to_string(previous.snapshot.step) + " makes " +
                           std::to_string(grown.blocks.size()) + " leaves, which the solver cannot hold (" + error.what() +
                           "): raise amr.regrid_threshold or lower amr.max_level");
    }
  }

  // The criterion's value on every block, the same on every rank: each rank's from the moments of
  // its own blocks, gathered, not every block's moments.
  std::vector<double> regridIndicator() {
    const BlockLayout& layout = local().layout();
    // Arrays of its own: the background writer may still be writing the last output's block fields.
    std::vector<float> density, velocity;
#if OCTOFLOW_HAVE_MPI
    if (distributed_)
      distributed_->fetchOwnMoments(density, velocity);
    else
#endif
      solver_->fetchMoments(density, velocity);
    const std::size_t first = static_cast<std::size_t>(blocks_.ownFirst);
    const std::size_t end = blocks_.ownEnd < 0 ? layout.blocks.size() : static_cast<std::size_t>(blocks_.ownEnd);
    const bool vector = case_.regrid.field == "velocity";
    const std::size_t points = static_cast<std::size_t>(layout.pointsPerBlock());
    std::vector<double> own =
        blockIndicator(layout.blockNodes, end - first, case_.regrid.criterion, vector ? velocity.data() : density.data(),
                       vector ? 3 : 1, solidPoints_.empty() ? nullptr : solidPoints_.data() + first * points);
#if OCTOFLOW_HAVE_MPI
    if (distributed_) return distributed_->gatherBlockValues(own);
#endif
    return own;
  }

  // The solver on `octree` (its state from `previous`, or the initial one), and what is made of its
  // blocks: the block grid and the level-0 view.
  void rebuild(const Octree& octree, const AmrLbmHandOver* previous) {
    const BlockLayout layout = leafBlocks(octree, case_.leafCells);
    solidPoints_ = case_.solidPointsOn(layout);
    makeSolver(octree, local().settings(), previous);
    const std::int64_t revision = blocks_.revision + 1;
    blocks_ = {};
    blocks_.revision = revision;
    describeBlocks();
    buildLevelZeroView();
  }

  void describeBlocks() {
    const BlockLayout& layout = local().layout();
    blocks_.blockNodes = layout.blockNodes;
    blocks_.levels = layout.levels;
    const Octree& octree = local().octree();
    for (int axis = 0; axis < 3; ++axis) {
      blocks_.domainCells[axis] = static_cast<Index>(octree.rootBlocks()[static_cast<std::size_t>(axis)]) * (layout.blockNodes - 1);
      blocks_.periodic[axis] = octree.periodic()[static_cast<std::size_t>(axis)];
    }
#if OCTOFLOW_HAVE_MPI
    if (distributed_) {
      blocks_.ownFirst = distributed_->runStarts()[static_cast<std::size_t>(rank())];
      blocks_.ownEnd = distributed_->runStarts()[static_cast<std::size_t>(rank()) + 1];
      for (const std::int32_t b : distributed_->blocksAround()) blocks_.valuesHeld.push_back(b);
    }
#endif
    for (const BlockPlacement& placement : layout.blocks) {
      sim::BlockGrid::Block block;
      block.level = placement.level;
      for (int axis = 0; axis < 3; ++axis) block.origin[axis] = placement.origin[axis];
      blocks_.blocks.push_back(block);
    }
  }

  // Which point holds each level-0 node: of the blocks holding it, one of the finest.
  void buildLevelZeroView() {
    const BlockLayout& layout = local().layout();
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
#if OCTOFLOW_HAVE_MPI
    if (distributed_) {
      // Each rank's piece of level 0, its nodes in the piece's order (x fastest).
      std::vector<std::vector<std::int64_t>> pieces;
      for (const NodeBox& box : pieceBoxes()) {
        std::vector<std::int64_t>& piece = pieces.emplace_back();
        piece.reserve(static_cast<std::size_t>(box.cellCount()));
        for (Index k = 0; k < box.size.nz; ++k)
          for (Index j = 0; j < box.size.ny; ++j)
            for (Index i = 0; i < box.size.nx; ++i)
              piece.push_back(static_cast<std::int64_t>(grid.linear(box.lo[0] + i, box.lo[1] + j, box.lo[2] + k)));
      }
      distributed_->setPickedPoints(source, pieces);
    }
#endif
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

  // The solver: one process's, or this rank's part of a run over ranks (then its state from
  // `previous` too, every block's). More ranks than blocks is bad input (mpirun -np).
  void makeSolver(const Octree& octree, AmrLbmSettings settings, const AmrLbmHandOver* previous) {
    solver_.reset();  // the device memory of the one before first
#if OCTOFLOW_HAVE_MPI
    distributed_.reset();
    if (overRanks_) {
      int ranks = 1;
      MPI_Comm_size(MPI_COMM_WORLD, &ranks);
      const std::size_t blocks = leafBlocks(octree, case_.leafCells).blocks.size();
      if (blocks < static_cast<std::size_t>(ranks))
        throw InputError(description_.sourcePath, "amr",
                         "the octree has " + std::to_string(blocks) + " blocks, fewer than the " + std::to_string(ranks) +
                             " MPI ranks (each steps a run of at least one block): run with fewer ranks (mpirun -np)");
      distributed_ = std::make_unique<parallel::DistributedAmrLbm>(MPI_COMM_WORLD, octree, settings, solidPoints_, previous);
      rank_ = distributed_->rank();
      ranks_ = distributed_->ranks();
      return;
    }
#endif
    solver_ = previous ? std::make_unique<AmrLbm>(octree, settings, solidPoints_, *previous)
                       : std::make_unique<AmrLbm>(octree, settings, solidPoints_);
  }
  const AmrLbm& local() const {
#if OCTOFLOW_HAVE_MPI
    if (distributed_) return distributed_->local();
#endif
    return *solver_;
  }

  // Collective: density and velocity of the points of blocks (host, block order): every block on
  // rank 0 and none elsewhere for RankZero (without `withDensity`, the velocity alone),
  // each rank those of blocks_.valuesHeld alone (its run and the blocks around it) for Pieces.
  void fetchBlockMoments(std::vector<float>& density, std::vector<float>& velocity, BlockFieldsFor whom, bool withDensity) {
#if OCTOFLOW_HAVE_MPI
    if (distributed_ && whom == BlockFieldsFor::Pieces) return distributed_->fetchMomentsAround(density, velocity);
    if (distributed_ && !withDensity) return distributed_->fetchVelocity(velocity, 0);
    if (distributed_) return distributed_->fetchMoments(density, velocity, 0);
#endif
    (void)whom;
    if (withDensity)
      solver_->fetchMoments(density, velocity);
    else
      solver_->fetchVelocity(velocity);
  }
  // Collective: every block's state on rank 0 (elsewhere no populations).
  AmrLbmSnapshot snapshotOnRankZero() {
#if OCTOFLOW_HAVE_MPI
    if (distributed_) return distributed_->snapshot(0);
#endif
    return solver_->snapshot();
  }
  std::array<double, 3> obstacleForce() {
#if OCTOFLOW_HAVE_MPI
    if (distributed_) return distributed_->obstacleForce();
#endif
    return solver_->obstacleForce();
  }

  // Over ranks (collective): level 0 on the host of `root` (elsewhere the arrays are left as they
  // are), each rank sending its own blocks' values of it.
  void gatherLevelZeroOverRanks(std::vector<float>& density, std::vector<float>& velocity, int root) {
#if OCTOFLOW_HAVE_MPI
    distributed_->gatherPickedPoints(density, velocity, root);
#else
    (void)density, (void)velocity, (void)root;
    throw std::logic_error("level 0 over ranks in a build without MPI");
#endif
  }
  // Over ranks (collective): this rank's piece of level 0 (pieceBoxes(), x fastest) on its host,
  // each node sent by the rank stepping its block.
  void gatherLevelZeroPiece(std::vector<float>& density, std::vector<float>& velocity) {
#if OCTOFLOW_HAVE_MPI
    distributed_->gatherPickedPiece(density, velocity);
#else
    (void)density, (void)velocity;
    throw std::logic_error("level 0 over ranks in a build without MPI");
#endif
  }
#if OCTOFLOW_HAVE_MPI
  parallel::Piece levelZeroPiece(int r) const {
    const std::array<int, 3> dims = parallel::chooseDims(extent(), ranks());
    const std::array<int, 3> coords = {r / (dims[1] * dims[2]), (r / dims[2]) % dims[1], r % dims[2]};
    return parallel::makePiece(extent(), 0u, dims, coords);
  }
#endif
  const io::CaseDescription& description_;
  const AmrLbmCase& case_;
#if OCTOFLOW_HAVE_MPI
  bool overRanks_ = false;  // a run over MPI ranks (more than one)
#endif
  int rank_ = 0, ranks_ = 1;
  std::unique_ptr<AmrLbm> solver_;  // one process
#if OCTOFLOW_HAVE_MPI
  std::unique_ptr<parallel::DistributedAmrLbm> distributed_;  // over ranks
#endif
  std::vector<std::uint8_t> solidPoints_;  // the obstacles on the current octree's points
  sim::BlockGrid blocks_;
  exec::Buffer<std::int64_t> viewSource_;  // level-0 node -> point (block order)
  exec::Buffer<float> viewDensity_, viewVelocity_;
  std::vector<float> hostDensity_, hostVelocity_;
  // Over ranks: this rank's piece of level 0, for the watchdog and for the writer (which may still
  // be writing the last piece and block fields while the watchdog gathers).
  std::vector<float> scratchDensity_, scratchVelocity_, pieceDensity_, pieceVelocity_;
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
