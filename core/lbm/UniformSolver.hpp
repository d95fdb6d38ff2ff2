#pragma once
// The uniform-grid LBM solver: owns the population arrays on the chosen backend and advances
// them. Knows nothing of files, VTK or Catalyst; hands out host arrays of its fields.
#include <array>
#include <functional>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/Extent.hpp"
#include "exec/Backend.hpp"
#include "exec/Memory.hpp"
#include "lbm/Collision.hpp"
#include "lbm/FaceBoundaries.hpp"
#include "lbm/Halo.hpp"
#include "lbm/Lattice.hpp"
#include "lbm/PopulationStorage.hpp"
#include "lbm/StreamCollide.hpp"
#include "lbm/TracerFlow.hpp"
#include "lbm/VelocityTap.hpp"
#include "particles/TracerMotion.hpp"
#include "lbm/blocking/TemporalBlocking.hpp"
#include "sim/SolverState.hpp"
#include "sim/StepTimeline.hpp"

namespace octoflow::lbm {

struct UniformSolverConfig {
  LatticeKind lattice = LatticeKind::D2Q9;
  CollisionKind collision = CollisionKind::Bgk;
  StorageKind storage = StorageKind::Fp32;
  Extent extent;
  float tau = 0.8f;
  float trtMagic = 3.0f / 16.0f;
  Les les;  // eddy viscosity model, for every collision kind
  Vector3 acceleration;  // body force per unit mass, lattice units
  Vector3 initialVelocity;  // the fluid's velocity at step 0 (density 1), lattice units
  FaceBoundaries faces;
  std::vector<std::uint8_t> solid;  // empty (no obstacles) or one entry per node, 1 = obstacle
  // A piece of a larger grid (an MPI rank's, parallel/Decomposition.hpp): where it sits, and a bit
  // per face whose layer of nodes is a ghost layer (a neighbour's nodes, filled by the halo
  // exchange). The faces of a piece that border ghost layers are given as periodic.
  bool isPiece = false;
  Placement placement;
  unsigned ghostFaces = 0;
  // [lbm.blocking]: several steps a launch (lbm/blocking); off by default.
  TemporalBlocking blocking;
  // FP16 bulk steps on CUDA update two nodes a thread where the grid's rows allow it
  // (lbm/BulkPairStep.hpp); false: one node a thread (`bench lbm --nodes-per-thread 1`).
  bool fp16NodePairs = true;
};

// Where the grid of `config` sits: its own placement, or (not a piece) the whole grid itself.
Placement placementOf(const UniformSolverConfig& config);

// Host copies of the macroscopic fields (pinned when the solver runs on CUDA). On the CPU
// backend the solver writes them in place: no copy at all.
struct HostFields {
  exec::Buffer<float> density;   // nodeCount values
  exec::Buffer<float> velocity;  // 3 * nodeCount values, xyz per node
};

namespace blocking {
class BlockedStepper;
}

namespace detail {
// The node classification the kernels run on, in working memory.
struct NodeLists {
  const std::uint8_t* kind = nullptr;  // NodeKind per node, or null: all bulk
  const BoundaryNode* boundaryNodes = nullptr;
  Index boundaryCount = 0;
};

// The lattice-, storage-, collision- and backend-specific part, made by a factory in one source
// per backend and lattice (generated from UniformEngineInstance.in). Arrays are on the backend's
// working memory; populations are in the configured storage, one array updated in place.
// Work goes to two queues (exec::CudaQueues; one on the CPU): the steps and everything else on the
// compute queue, the halo copies on the halo queue; calls return once the work is queued.
class UniformEngine {
public:
  virtual ~UniformEngine() = default;
  virtual void initialize(const float* density, const float* velocity, void* populations, NodeMoments* moments,
                          LesVelocityValue* lesVelocity) = 0;
  // A step of the given parity is a bulk step over boxes that together cover the nodes the grid
  // updates (all but ghost layers), in any order (each population slot is read and written by one
  // node only), and one boundary step: the
  // boundary nodes read their moments from `previous` and write them to `next`. CSM: velocity
  // fields (xyz per node) to take gradients from and to fill.
  // `tap`: the nodes whose velocity the step records for the tracers (lbm/VelocityTap.hpp).
  virtual void bulkStep(void* populations, bool odd, const NodeBox& box, const LesVelocityValue* velocityIn,
                        LesVelocityValue* velocityOut, const VelocityTap& tap) = 0;
  virtual void boundaryStep(void* populations, bool odd, const NodeMoments* previous, NodeMoments* next,
                            const LesVelocityValue* velocityIn, LesVelocityValue* velocityOut,
                            const VelocityTap& tap) = 0;
  virtual void macroscopic(const void* populations, bool odd, const NodeMoments* previous, float* density,
                           float* velocity) = 0;
  // Moves tracers (lbm/TracerFlow.hpp) in the velocity of the state the populations hold, or in
  // the velocities a tapped step recorded with `stamp`; either marks with `marker` (unless null)
  // the nodes of each tracer's next move.
  virtual void moveTracers(const void* populations, bool odd, const NodeMoments* previous,
                           const particles::TracerMove& move, const TapMarker& marker) = 0;
  virtual void moveTappedTracers(const TappedVelocity* velocity, float stamp, const particles::TracerMove& move,
                                 const TapMarker& marker) = 0;
  virtual void clearMask(std::uint32_t* words, Index count) = 0;
  virtual void obstacleForce(const void* populations, const ObstacleLink* links, Index count, double* force) = 0;
  virtual int crossingCount() const = 0;
  virtual void packHalo(const void* populations, const HaloBox& box, void* buffer) = 0;
  virtual void unpackHalo(void* populations, const HaloBox& box, const void* buffer) = 0;
  virtual void copyLesVelocityHalo(LesVelocityValue* field, const HaloBox& box, LesVelocityValue* buffer,
                                   bool pack) = 0;
  virtual void copyOnHaloQueue(void* destination, const void* source, std::size_t bytes) = 0;
  virtual void haloAfterCompute() = 0;  // halo work queued from now on waits for the compute work queued
  virtual void computeAfterHalo() = 0;  // and the reverse
  virtual void synchronizeHalo() = 0;
  virtual void synchronize() = 0;       // both queues
  virtual void markQueued() = 0;        // the compute work queued so far, which
  virtual void waitForMarked() = 0;     // this waits for
  // Marks on the queues while recording; their times (microseconds after the first) at the end.
  virtual void startTimeline() = 0;
  virtual void markTimeline(bool onHaloQueue) = 0;
  virtual std::vector<double> stopTimeline() = 0;
};
// One translation unit each (lbm/UniformEngineInstance.in): L, a lattice; S, a population storage.
template <class L, class S>
std::unique_ptr<UniformEngine> makeCpuEngineFor(const UniformSolverConfig& config, const NodeLists& lists);
template <class L, class S>
std::unique_ptr<UniformEngine> makeCudaEngineFor(const UniformSolverConfig& config, const NodeLists& lists);
}  // namespace detail

class UniformSolver {
public:
  UniformSolver(const UniformSolverConfig& config, exec::Backend backend);
  ~UniformSolver();
  UniformSolver(const UniformSolver&) = delete;
  UniformSolver& operator=(const UniformSolver&) = delete;

  // Equilibrium populations for host arrays of density (nodeCount) and velocity (3 * nodeCount,
  // xyz per node); a null array means rho = 1 or u = 0. Resets the step counter.
  void initialize(const float* density = nullptr, const float* velocity = nullptr);
  // Runs `steps` steps. On one rank it returns once all but the last are done: the last (and the
  // tracer move riding on it) still runs on the GPU while the caller queues the next work, so a
  // run that advances a step at a time (tracers moved every step) leaves no gap between steps.
  // Everything that reads the state waits for it (fields, checkpoints, tracers: the default
  // stream); timings call synchronize(). Over several ranks it returns with every step done.
  void advance(Index steps);
  // Waits until the work queued so far (tracer moves included) is done.
  void synchronize() { engine_->synchronize(); }
  // Computes the requested fields of the current state into host memory and returns them.
  const HostFields& fetchFields(bool wantDensity, bool wantVelocity);
  // The same fields left in working memory (device memory on CUDA; on the CPU the host arrays
  // fetchFields returns), computed and ready, for work that runs where the fields live (tracers,
  // isosurfaces); null for a field not asked for. Valid until the solver's next call.
  struct WorkingFields {
    const float* density = nullptr;
    const float* velocity = nullptr;
  };
  WorkingFields workingFields(bool wantDensity, bool wantVelocity);
  // Moves tracers (arrays in working memory) in the current state's velocity, interpolated from
  // the populations at the corners of each tracer's cell: no velocity field is computed. On a GPU
  // the move is queued before the next step without waiting for it. A move the tap serves
  // (lbm/TracerFlow.hpp, tapServes: RK2 over one step; 27 nodes a tracer at most half the grid's)
  // of tracers whose nodes the last move marked
  // waits instead for the next step, which records the velocity of the state it reads at the marked
  // nodes (lbm/VelocityTap.hpp), and is made right after that step from those values: the same
  // velocities, without a second read of the populations. settleTracers() makes a waiting move
  // now; the solver does so itself before anything else changes its state.
  void moveTracers(const particles::TracerMove& move);
  void settleTracers();
  Index tappedMoves() const { return tappedMoves_; }  // moves made from a step's recorded velocities
  // Nodes marked for the tracers' next move, and marks left in the mask that must be clear (for tests).
  std::array<Index, 2> tapMarks() const;
  // The population array as FP32 deviations f_q - w_q, copied to the host: structure-of-arrays
  // in the in-place (AA) layout of the current step's parity (StreamCollide.hpp).
  std::vector<float> populationsOnHost() const;
  // This grid and the nodes it updates (a piece: less its ghost layers), whole-grid coordinates.
  NodeBox localBox() const;
  NodeBox ownedBox() const;
  // Checkpoints: the state the next step reads, of the owned nodes, as arrays by whole-grid
  // coordinates: "populations" (the stored values, one plane a population, in
  // the AA layout of the step's parity, which keeps every node's populations at that node),
  // "boundary_moments" (NodeMoments of the boundary nodes, zero elsewhere) and, with CSM,
  // "les_velocity" (3 FP16 a node). And the same read back for every node of the local grid, ghost
  // layers included (wrapped across periodic faces), with the step counter.
  std::vector<sim::StateArray> saveState() const;
  void restoreState(const sim::StateSource& source);

  // Force on all obstacles in the last step (momentum exchange), lattice units, summed in a
  // fixed order in double: the same on every backend and thread count.
  std::array<double, 3> obstacleForce();
  Index obstacleLinkNodes() const { return static_cast<Index>(obstacleLinks_.size()); }
  // The fluid nodes next to obstacles (in node order) and each one's force in the last step,
  // three values a node: the terms obstacleForce sums.
  const std::vector<ObstacleLink>& obstacleLinks() const { return obstacleLinks_; }
  std::vector<double> obstacleForcePerNode();

  // The halo exchange of a piece (parallel/DistributedSolver.cpp) runs in every step, once the
  // nodes next to the ghost layers (the shell) have been updated and while the others (the
  // interior) are: `exchange` is called with whether the step is odd, after the step counter has
  // moved on. It queues its copies on the halo queue (below) and waits for them where it must; the
  // next step waits for everything it queued.
  void setHaloExchange(std::function<void(bool oddStep)> exchange) { haloExchange_ = std::move(exchange); }
  // Bytes of a box's crossing populations; copies between the populations and a buffer in the
  // solver's working memory, queued on the halo queue.
  std::size_t haloBytes(const HaloBox& box) const {
    return static_cast<std::size_t>(box.nodeCount()) * engine_->crossingCount() * storageBytes(config_.storage);
  }
  void packHalo(const HaloBox& box, void* workingBuffer);
  void unpackHalo(const HaloBox& box, const void* workingBuffer);
  // CSM: the velocity field the next step takes gradients from (3 FP16 values a node), box <-> buffer.
  bool hasLesVelocity() const { return lesVelocity_.size() > 0; }
  std::size_t lesVelocityHaloBytes(const HaloBox& box) const {
    return hasLesVelocity() ? static_cast<std::size_t>(box.nodeCount()) * 3 * sizeof(LesVelocityValue) : 0;
  }
  void copyLesVelocityHalo(const HaloBox& box, void* workingBuffer, bool pack);
  // A copy between any two memories (working, pinned staging, a peer's device memory), queued on
  // the halo queue; and waiting until the halo queue has done all it was given.
  void copyOnHaloQueue(void* destination, const void* source, std::size_t bytes) {
    engine_->copyOnHaloQueue(destination, source, bytes);
  }
  void synchronizeHalo() { engine_->synchronizeHalo(); }
  // The boxes a step updates before the halo exchange starts (next to the ghost layers) and the
  // one it updates while halos travel; without ghost layers, the whole grid is the interior.
  const std::vector<NodeBox>& shellBoxes() const { return shell_; }
  const NodeBox& interiorBox() const { return interior_; }

  // The timeline of one step (`bench lbm --timeline`): when its phases finished on the GPU (on
  // the CPU: when they returned), microseconds after the step started, and on which queue.
  using TimelineMark = sim::TimelineMark;
  void recordTimeline(Index step) { timeline_.choose(step); }
  const std::vector<TimelineMark>& timeline() const { return timeline_.marks(); }
  // A mark after the work queued so far on one queue, while the chosen step runs (`axis` >= 0
  // prefixes its name); nothing otherwise.
  void markTimeline(const char* what, bool haloQueue, int axis = -1);

  Index step() const { return step_; }
  exec::Backend backend() const { return backend_; }
  const UniformSolverConfig& config() const { return config_; }
  Index nodeCount() const { return config_.extent.cellCount(); }
  int populationCount() const { return latticeQ(config_.lattice); }
  // Bytes of GPU (or host) memory the solver holds.
  std::size_t workingBytes() const;

private:
  UniformSolverConfig config_;
  exec::Backend backend_;
  bool oddStep() const { return step_ % 2 == 1; }
  NodeMoments* boundaryMoments(Index step) { return boundaryMoments_.data() + (step % 2) * boundaryCount_; }

  exec::Buffer<std::uint8_t> kind_;               // NodeKind per node, empty when all are bulk
  exec::Buffer<BoundaryNode> boundaryNodes_;
  Index boundaryCount_ = 0;
  exec::Buffer<NodeMoments> boundaryMoments_;     // two sets: read by a step, written by it
  exec::Buffer<LesVelocityValue> lesVelocity_;    // CSM: two velocity fields, read by a step, written by it
  LesVelocityValue* lesVelocity(Index step) {
    return lesVelocity_.size() ? lesVelocity_.data() + (step % 2) * 3 * nodeCount() : nullptr;
  }
  std::unique_ptr<detail::UniformEngine> engine_;
  exec::Buffer<unsigned char> populations_;      // one array, storage format, AA layout
  // Temporal blocking: the stepper, and the second array its launches write (swapped with the
  // first after each launch; both in the AA layout of the step they hold).
  std::unique_ptr<blocking::BlockedStepper> blocked_;
  exec::Buffer<unsigned char> spare_;
  void matchSpare();  // the second array takes the first's contents (obstacle nodes included)
  exec::Buffer<float> deviceDensity_;      // CUDA only: fields computed on the device
  exec::Buffer<float> deviceVelocity_;     // before their copy to host_
  HostFields host_;
  std::vector<ObstacleLink> obstacleLinks_;
  exec::Buffer<ObstacleLink> workingLinks_;
  exec::Buffer<double> workingForces_;
  std::function<void(bool)> haloExchange_;
  std::vector<NodeBox> shell_;
  NodeBox interior_;
  sim::StepTimeline timeline_;
  // Tracer moves riding on a step: two node masks (the one `marked` holds the nodes of the armed
  // tracers' next move, the other is clear), the velocities a tapped step records, and the move
  // waiting for the next step.
  struct TracerTap {
    exec::Buffer<std::uint32_t> masks[2];
    exec::Buffer<TappedVelocity> velocity;
    int marked = 0;
    bool armed = false;
    particles::TracerMove armedFor;  // the tracers whose nodes are marked (arrays, count, revision)
    bool waiting = false;
    particles::TracerMove waitingMove;
    std::uint32_t stamp = 0;  // the last tapped step's
  };
  TracerTap tap_;
  Index tappedMoves_ = 0;
  bool tapCanServe(const particles::TracerMove& move) const;
  // A move from the populations of the current state; it marks the nodes of the tracers' next move
  // where the tap can serve it.
  void moveFromPopulations(const particles::TracerMove& move);
  TapMarker nextMarks(const particles::TracerMove& move);
  void marked(const particles::TracerMove& move, const TapMarker& marker);
  Index step_ = 0;
  Index fieldsStep_ = -1;  // the state the working fields were computed for (-1: none)
  bool densityFresh_ = false, velocityFresh_ = false;
};

// The fluid nodes next to obstacle nodes and their links into the obstacles.
std::vector<ObstacleLink> findObstacleLinks(const UniformSolverConfig& config);

// Every node's kind and the list of boundary nodes (sorted by node): nodes with a population
// arriving by reflection, and the nodes one step inward from outflow faces. `kind` is empty
// when every node is a bulk node (periodic box, no obstacles).
struct NodeClassification {
  std::vector<std::uint8_t> kind;
  std::vector<BoundaryNode> boundary;
};
NodeClassification classifyNodes(const UniformSolverConfig& config);

}  // namespace octoflow::lbm
