#pragma once
// The octree lattice Boltzmann solver's engine: leaf blocks of 17^3 (or 33^3) node-centred points on a 2:1
// balanced octree, levels sub-cycled in time (AmrLbmStep.hpp), run on the CPU (reference) or CUDA.
#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "amr/AmrLbmStep.hpp"
#include "amr/BlockLinks.hpp"
#include "amr/BlockShare.hpp"
#include "amr/Octree.hpp"
#include "exec/Backend.hpp"
#include "exec/Memory.hpp"
#include "lbm/Lattice.hpp"

namespace octoflow::amr {

// How a level's step is launched: one kernel over every point (naive), or the points inside the
// blocks and their outer shells apart (split: the inner kernel has no links at all), one after the
// other or on two CUDA streams at once (streams; on the CPU: split), or the shells cut into their
// 26 position classes, each point's update templated on its class, in one launch (classes), or
// the shell points sorted by kind (ShellKind: same level, linked, interface), one launch a kind, so
// that a warp runs one kind's path (sorted; on CUDA the linked and interface points run on a
// second stream beside the inner and same-level points), or every block's points whose pulls stay
// on their level in one launch, a thread a point in point order, and the other shell points
// sorted (whole: the default; 2.5x sorted on one level; on three levels 1.5x the form before, which
// stepped whole only the blocks among blocks of their level: docs/PERFORMANCE.md).
enum class AmrKernel { Naive, Split, Streams, Classes, Sorted, Whole };
constexpr int kAmrKernels = 6;
// The kernels' names in case files and `octoflow bench amr --kernel` (AmrKernel order).
constexpr const char* kAmrKernelNames[kAmrKernels] = {"naive", "split", "streams", "classes", "sorted", "whole"};
inline const char* amrKernelName(AmrKernel kernel) { return kAmrKernelNames[static_cast<int>(kernel)]; }
// The kernel of that name; false if none has it.
inline bool amrKernelNamed(const std::string& name, AmrKernel& kernel) {
  for (int k = 0; k < kAmrKernels; ++k)
    if (name == kAmrKernelNames[k]) {
      kernel = static_cast<AmrKernel>(k);
      return true;
    }
  return false;
}

// The kernels of the comparison (naive, split, streams, classes) are built for BGK only; sorted
// and whole run every collision.
inline bool amrKernelRuns(AmrKernel kernel, lbm::CollisionKind collision) {
  return collision == lbm::CollisionKind::Bgk || kernel == AmrKernel::Sorted || kernel == AmrKernel::Whole;
}

struct AmrLbmSettings {
  lbm::LatticeKind lattice = lbm::LatticeKind::D3Q19;  // D3Q19 or D3Q27
  double tau = 0.8;                                    // relaxation time of level 0
  std::array<double, 3> acceleration{{0.0, 0.0, 0.0}}; // body acceleration, level-0 lattice units
  // The state the solver starts from: density 1 and this velocity at every point (initialise()
  // sets another).
  std::array<double, 3> initialVelocity{{0.0, 0.0, 0.0}};
  // The collision on every level (each with its own relaxation time): BGK, TRT (its magic
  // parameter) or MRT (the published rates of lbm/Mrt.hpp), with the LES model if any.
  lbm::CollisionKind collision = lbm::CollisionKind::Bgk;
  float trtMagic = 3.0f / 16.0f;
  lbm::Les les;
  exec::Backend backend = exec::Backend::Cpu;
  AmrKernel kernel = AmrKernel::Whole;
  // Cells a side of a leaf block: 16 (17^3 points) or 32 (33^3: mother-leaf blocks, a family of 8
  // leaves of 16 in one block, with fewer shell points for the same volume; the octree's leaves
  // are then 32 cells).
  int leafCells = 16;
  // The domain's faces (periodic axes as the octree's; the others resting walls by default, or
  // inlets, outlets and moving walls: lbm/FaceBoundaries.hpp, on every level).
  lbm::FaceBoundaries faces;
  // The blocks this solver steps (a run over MPI ranks steps each rank's own: parallel/
  // DistributedAmrLbm); every block by default. It holds the state of these and of the blocks their
  // links lead to (ghosts: never stepped, their state whatever was last put there; DistributedAmrLbm
  // sends it on), nothing of the others (AmrLbm::heldLayout).
  BlockRun owned;
};

// Density and velocity of a point, from its position in level-0 node coordinates.
using InitialState = std::function<void(const double (&position)[3], float& density, float (&velocity)[3])>;
// True for a point inside an obstacle, from its position in level-0 node coordinates.
using SolidTest = std::function<bool(const double (&position)[3])>;

// The state that lets a run go on bit for bit (checkpoints): both arrays of populations, the
// pre-collision copies of the blocks read across levels, each level's current array.
struct AmrLbmSnapshot {
  std::int64_t step = 0;
  std::vector<std::int32_t> parity;  // one a level
  std::vector<float> post[2], pre[2];
};

struct AmrLbmHandOver;
struct AmrLbmHandOverArrays;
struct AdoptArrays;

class AmrLbm {
public:
  AmrLbm(const Octree& octree, const AmrLbmSettings& settings, const SolidTest& solid = {});
  // `solidPoints`: a byte a point of every block (block order, x fastest), 1 inside an obstacle;
  // empty: none.
  AmrLbm(const Octree& octree, const AmrLbmSettings& settings, const std::vector<std::uint8_t>& solidPoints);
  // A solver that starts from another's state (adopt(previous)) rather than from the initial one.
  AmrLbm(const Octree& octree, const AmrLbmSettings& settings, const std::vector<std::uint8_t>& solidPoints,
         const AmrLbmHandOver& previous);
  ~AmrLbm();
  AmrLbm(const AmrLbm&) = delete;
  AmrLbm& operator=(const AmrLbm&) = delete;

  void initialise(const InitialState& state);
  // Steps of level 0 (level L steps 2^L times in each); returns with them done.
  void advance(std::int64_t coarseSteps);
  std::int64_t step() const { return step_; }
  // Called after each sub-step of a level, with the level (its new state is in place: on CUDA,
  // queued on the default stream): where a run over ranks sends its blocks on.
  void onLevelStepped(std::function<void(int level)> stepped) { levelStepped_ = std::move(stepped); }
  // With the CSM model: called when the eddy parts of a level's own blocks are made for the
  // coarser level's step (whose pulls from the finer level read them: the only eddy parts a step
  // reads outside its own blocks), on every process alike, also where it owns none of the level's
  // blocks, with the level: where a run over ranks sends them to the ranks that hold those blocks
  // as copies.
  void onEddyMade(std::function<void(int level)> made) { eddyMade_ = std::move(made); }
  // What the steps read and write, where the solver lives (device pointers on CUDA).
  const AmrLbmLevels& workingState() const { return state_; }
  // With the CSM model (les = "csm"): what it adds to each point's relaxation time (3 nu_t in the
  // lattice units of the point's level), from the current state, per point of the blocks held
  // (over ranks: of the own blocks; a copy's values are what its owner last sent, or 0).
  void fetchEddyRelaxation(std::vector<float>& eddy);
  // The pre-collision slot of a block (AmrLbmLevels::sourceSlot), or -1.
  std::int32_t sourceSlot(int block) const { return slots_[static_cast<std::size_t>(block)]; }

  // Every block of the octree (block order: Morton).
  const BlockLayout& layout() const { return layout_; }
  // The blocks this solver holds, numbered as its state is (AmrLbmSettings::owned: its own run
  // first, then the blocks their links lead to, amr::heldBlocks; every block: the layout), and the
  // index in layout() of each. Arrays of the state, moments and snapshots follow this numbering.
  const BlockLayout& heldLayout() const { return held_; }
  const std::vector<std::int32_t>& heldBlocks() const { return heldGlobal_; }
  std::int32_t ownedBlocks() const { return ownedCount_; }
  // Blocks of `level` whose every point AmrKernel::Whole's block kernel steps (every neighbour a
  // block of their level or a resting wall; 0 with the other kernels).
  std::int64_t blocksSteppedWhole(int level) const { return blocksSteppedWhole_[static_cast<std::size_t>(level)]; }
  const Octree& octree() const { return octree_; }
  const AmrLbmSettings& settings() const { return settings_; }
  int levels() const { return layout_.levels; }
  double tau(int level) const;
  // The body acceleration in level `level`'s lattice units (it halves a level down).
  lbm::Vector3 acceleration(int level) const;
  // Position of point (i, j, k) of a block (its index in layout()) in level-0 node coordinates.
  void position(int block, int i, int j, int k, double (&out)[3]) const;

  // Host copies, per point of every block held (heldLayout() order, x fastest; one solver of the
  // whole octree: block order), or of the first `blocks` of them (a run's own blocks, which come
  // first): density and velocity (xyz).
  static constexpr std::size_t kEveryHeldBlock = static_cast<std::size_t>(-1);
  void fetchMoments(std::vector<float>& density, std::vector<float>& velocity, std::size_t blocks = kEveryHeldBlock);
  // The velocity alone (what tracers move in; the density stays where the solver is).
  void fetchVelocity(std::vector<float>& velocity, std::size_t blocks = kEveryHeldBlock);
  // The same into host arrays the caller holds, of room enough (a value, and three, a point);
  // `density` null: the velocity alone is copied.
  void copyMoments(float* density, float* velocity, std::size_t blocks);
  // The fluid's mass: density times the volume of each point's dual cell in level-0 units
  // (h_L^3 with h_L = 2^-L, halved across each face a point shares with another block; walls lie
  // half a spacing beyond the last points). `density`: every point of every block, layout() order
  // (a solver of a run of blocks: the gathered one, DistributedAmrLbm::fetchMoments);
  // std::invalid_argument for another size.
  double mass(const std::vector<float>& density) const;
  // Density (a value a point) then velocity (xyz a point) of every point of the first `blocks`
  // held blocks (all of them by default; a run's own blocks come first), where the solver lives
  // (device memory on CUDA), computed for the current state: valid until the next call. The
  // velocities start after the densities of those blocks' points. On CUDA the kernel is queued on
  // the default stream, as everything that reads the result (copies to the host, tracers,
  // isosurfaces, the watchdog): no wait here.
  const float* workingMoments(std::size_t blocks = kEveryHeldBlock);
  // Picks points of the current state where the solver lives: density[n] and velocity[3n..3n+2]
  // of point pointIndex[n] (index in block order, as workingMoments; a point of the first `blocks`
  // held blocks, whose moments alone are computed), for n < count; every array in the solver's
  // working memory.
  void gatherPoints(const std::int64_t* pointIndex, std::int64_t count, float* density, float* velocity,
                    std::size_t blocks = kEveryHeldBlock);

  // The force on the obstacles after the last step, by momentum exchange on the links the step
  // reflects (every level's last sub-step; a link of level L carries h_L^2 = 4^-L of a level-0
  // link's force, a point shared by blocks is counted once), level-0 lattice units, summed in
  // a fixed order in double: the same on either backend.
  std::array<double, 3> obstacleForce();
  // The same, link point by link point (three values each, in block order; the points of the
  // solver's own blocks only): obstacleForce() is their sum in this order.
  std::vector<double> obstacleForceByLink();
  std::size_t obstacleLinkPoints() const { return obstacleLinks_.size(); }

  // The obstacle mask where the solver lives (a byte a point), or null without obstacles.
  const std::uint8_t* workingSolid() const { return solid_.size() ? solid_.data() : nullptr; }

  // Takes over the state of a solver on another octree with the same root blocks, lattice and
  // relaxation (a regrid), and its step count. A point whose place the other octree holds at the
  // same level keeps its populations; a point of a level the other octree has coarser there is
  // interpolated (trilinear in the coarse populations, obstacle points left out); a point of a
  // level the other has finer takes the finer point it coincides with (node-centred). Moved across
  // levels, a point keeps the equilibrium of its density and velocity, and its non-equilibrium
  // part is rescaled as populations crossing levels are (AmrLbmStep.hpp, with each level's base
  // relaxation time: Smagorinsky's local one is not kept).
  // `previous`: the state of the other octree's blocks: the other solver's arrays (handOver(); over
  // ranks DistributedAmrLbm::handOver, with a host copy of the blocks other ranks held) or a host
  // copy (hostCopy(); over ranks DistributedAmrLbm::hostCopy, or hostCopyFor: the blocks this one
  // reads alone), taken before that solver is destroyed (no device memory for two solvers at
  // once). Blocks that keep their leaf are copied whole; the others are made point by point where
  // this solver lives (AdoptPoints, AmrAdopt.hpp: on the GPU with CUDA, reading the old arrays
  // where they lie and the blocks of the host copy they read, moved there). A solver of a run of
  // blocks sets the blocks it holds. std::invalid_argument when the hand-over does not fit
  // (another domain, lattice or relaxation, arrays of other sizes or in another memory) or lacks a
  // block it reads: found before anything is written, the state unchanged. The points' sources
  // are found on the host's OpenMP threads (the same bits on any number).
  void adopt(const AmrLbmHandOver& previous);

  // A solver of every block only (std::logic_error otherwise).
  AmrLbmHandOver hostCopy() const;
  // Hands its state over for the solver of another octree, as a regrid does: its state arrays
  // moved out of it (no host copy: the next solver reads them where they lie). The solver holds
  // no state after (std::logic_error on advance): destroy it. A solver of every block only.
  AmrLbmHandOver handOver();
  // Moves its state arrays out, with where its own blocks lie in them (a hand-over's resident
  // arrays; parallel::DistributedAmrLbm::handOver). The solver holds no state after (as handOver).
  std::shared_ptr<AmrLbmHandOverArrays> releaseState();
  // The state of held blocks `blocks` (ascending, heldLayout() numbering), their pre-collision
  // slots in that order.
  AmrLbmSnapshot snapshotOf(const std::vector<std::int32_t>& blocks) const;
  // The state of the blocks held (heldLayout() order: a solver of a run of blocks has its own
  // first), or of the first `blocks` of them (their pre-collision slots are the first slots).
  AmrLbmSnapshot snapshot(std::size_t blocks = kEveryHeldBlock) const;
  // Sets the blocks held from a snapshot of every block of the same octree and lattice (one
  // solver's snapshot(), or a run's over ranks gathered: DistributedAmrLbm::snapshot): sizes
  // checked, std::invalid_argument.
  void restore(const AmrLbmSnapshot& snapshot);

private:
  AmrLbm(const Octree& octree, const AmrLbmSettings& settings, const std::vector<std::uint8_t>& solidPoints,
         const AmrLbmHandOver* previous);
  void requireEveryBlock(const char* what) const;
  static std::vector<std::uint8_t> pointsWhere(const Octree& octree, int leafCells, const SolidTest& solid);
  void findObstacleLinks(const std::vector<std::uint8_t>& solidPoints);
  void sortShells(const std::vector<std::uint8_t>& solidPoints);
  // The 27 blocks around held block `index` (ShellLists::around: neighbourIndex order, the block
  // itself at 13, kRestingWall, kOtherLevelOrOpenFace); true when every one is of its level or a
  // wall (the block kernel steps all its points).
  bool blocksAround(std::int32_t index, std::int32_t (&around)[27]) const;
  double sharedPart(const BlockPlacement& block, int i, int j, int k) const;
  // The interface points' tap sums of the coarse step before no longer hold (a new state): the
  // next first sub-step makes both (InterfaceTapSums).
  void forgetTapSums();
  void stepLevel(int level, float timeWeight);
  void advanceLevel(int level, float timeWeight);
  // CSM: the eddy part of the relaxation time of `level`'s points from its current state (AmrEddyStep).
  void makeEddy(int level);

  Octree octree_;
  AmrLbmSettings settings_;
  BlockLayout layout_;
  BlockLayout held_;
  std::vector<std::int32_t> heldGlobal_;
  std::int32_t ownedCount_ = 0;
  AmrLbmLevels state_;
  std::int64_t step_ = 0;
  exec::Buffer<BlockPlacement> blocks_;
  std::vector<std::int32_t> slots_;
  exec::Buffer<std::int32_t> sourceSlot_;
  exec::Buffer<std::uint32_t> crossLevelSides_;
  exec::Buffer<std::uint8_t> solid_;
  exec::Buffer<float> post_[2];
  exec::Buffer<float> pre_[2];
  exec::Buffer<float> eddy_;  // CSM only (AmrLbmLevels::eddy)
  std::vector<exec::Buffer<std::int32_t>> levelBlocks_;
  // Per level, for AmrKernel::Sorted and Whole: the shell points sorted by kind, the finer
  // sources of the linked ones and the sums of the interface points' coarse taps (ShellLists,
  // FinerSources, InterfaceTapSums); for Whole, the blocks around each block.
  struct SortedShell {
    exec::Buffer<ShellPoint> points, finerPoints;
    exec::Buffer<std::int32_t> sourceOf, around, interfaceMapOf, interfaceOfSurface;
    exec::Buffer<float> rebuilt;
    exec::Buffer<float> tapSums[2];  // InterfaceTapSums' two arrays
  };
  std::vector<SortedShell> sortedShells_;
  std::vector<ShellLists> shells_;
  std::vector<std::int64_t> blocksSteppedWhole_;
  exec::Buffer<float> moments_;  // density then velocity, where the solver lives
  std::vector<AmrObstacleLink> obstacleLinks_;
  exec::Buffer<AmrObstacleLink> workingLinks_;
  exec::Buffer<double> linkForces_;  // three values a link point
  std::function<void(int level)> levelStepped_;
  std::function<void(int level)> eddyMade_;
};

// The sum of link forces (AmrLbm::obstacleForceByLink) in their order.
std::array<double, 3> sumOfLinkForces(const std::vector<double>& byLink);

// The pre-collision slot of each block of `layout` (AmrLbmLevels::sourceSlot): numbered in block
// order over the blocks other levels read (crossLevelSource), -1 for the others.
std::vector<std::int32_t> sourceSlots(const BlockLayout& layout);

// The blocks of another octree's layout whose state AmrLbm::adopt reads to make the blocks of
// `held` (a solver's heldLayout on the new octree), in block order: what a rank of a run over MPI
// ranks needs of the old state at a regrid (parallel::DistributedAmrLbm::hostCopyFor). With
// `onHand` (one entry a block of the previous layout, AmrLbmHandOverArrays::block), the blocks on
// hand (>= 0) are left out: a hand-over reads them where they lie.
std::vector<std::int32_t> adoptedBlocks(const Octree& previousOctree, const BlockLayout& previousLayout,
                                        const BlockLayout& held, const std::vector<std::int32_t>* onHand = nullptr);

// A solver's state arrays moved out of it (AmrLbm::releaseState), where they lie (the device with
// CUDA), and where each block of its layout lies in them.
struct AmrLbmHandOverArrays {
  exec::Buffer<float> post[2], pre[2];
  exec::Buffer<std::uint8_t> solid;  // empty: no obstacle point among the blocks it held
  // One entry a block of the layout: its index in post and solid (-1 where the solver did not
  // step it: another rank's), and its pre-collision slot in pre (-1: none).
  std::vector<std::int32_t> block, slot;
};

// What a solver hands over to the solver of another octree (AmrLbm::adopt): its octree, settings
// and state, and its obstacle points. A host copy (hostCopy; over ranks
// parallel::DistributedAmrLbm::hostCopyFor), or the solver's own state arrays where they lie
// (handOver), over ranks with a host copy of the blocks other ranks held that the arrays lack.
struct AmrLbmHandOver {
  Octree octree;
  AmrLbmSettings settings;
  BlockLayout layout;
  AmrLbmSnapshot snapshot;
  std::vector<std::uint8_t> solid;  // empty: no obstacle
  // The blocks of `layout` it holds, in block order: snapshot.post a block each and solid a block
  // each in that order, snapshot.pre a slot each for those of them other levels read
  // (crossLevelSource); empty: every block (as one solver of the layout numbers them), or none
  // when it holds the solver's arrays.
  std::vector<std::int32_t> blocks;
  // The solver's arrays (handOver): adopt copies and reads the blocks they hold where they lie.
  // Shared by copies of the hand-over.
  std::shared_ptr<AmrLbmHandOverArrays> resident;

  // Moves what the resident arrays hold into the host copy and frees them: when the next solver
  // finds no room beside them (exec::OutOfMemoryError).
  void moveToHost();
};

// The per-backend, per-lattice kernels (AmrLbmCpu.cpp, AmrLbmCuda.cu).
namespace detail {
void stepLevelCpu(lbm::LatticeKind lattice, lbm::CollisionKind collision, AmrKernel kernel,
                  const AmrLbmLevels& state,
                  const std::int32_t* levelBlocks, std::int64_t blockCount, int level, float timeWeight,
                  const ShellLists& shells);
void eddyCpu(lbm::LatticeKind lattice, const AmrLbmLevels& state, const std::int32_t* levelBlocks, std::int64_t blockCount,
             int level, float constant);
void momentsCpu(lbm::LatticeKind lattice, const AmrLbmLevels& state, std::int64_t blockCount, float* out);
struct PointGather;
void gatherCpu(const PointGather& gather, std::int64_t count);
void adoptPointsCpu(lbm::LatticeKind lattice, const AdoptArrays& arrays, std::int64_t count);
void obstacleForceCpu(lbm::LatticeKind lattice, const AmrLbmLevels& state, const AmrObstacleLink* links,
                      std::int64_t count, double* force);
#if OCTOFLOW_HAVE_CUDA
void stepLevelCuda(lbm::LatticeKind lattice, lbm::CollisionKind collision, AmrKernel kernel,
                  const AmrLbmLevels& state,
                   const std::int32_t* levelBlocks, std::int64_t blockCount, int level, float timeWeight,
                   const ShellLists& shells);
void eddyCuda(lbm::LatticeKind lattice, const AmrLbmLevels& state, const std::int32_t* levelBlocks, std::int64_t blockCount,
             int level, float constant);
void momentsCuda(lbm::LatticeKind lattice, const AmrLbmLevels& state, std::int64_t blockCount, float* out);
void gatherCuda(const PointGather& gather, std::int64_t count);
void adoptPointsCuda(lbm::LatticeKind lattice, const AdoptArrays& arrays, std::int64_t count);
void obstacleForceCuda(lbm::LatticeKind lattice, const AmrLbmLevels& state, const AmrObstacleLink* links,
                       std::int64_t count, double* force);
// Waits for the kernels queued (advance() returns with the steps done, as on the CPU).
void synchronizeCuda();
#endif
}  // namespace detail

}  // namespace octoflow::amr
