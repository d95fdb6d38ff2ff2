#pragma once
// The uniform LBM solver over MPI ranks: each rank runs a UniformSolver on its piece of the whole
// grid (parallel/Decomposition.hpp) and, in every step, exchanges with its neighbours exactly the
// populations that cross their shared faces (lbm/Halo.hpp), both directions of an axis at once,
// while the interior of the piece is updated (the nodes next to the cuts go first). Axes are
// exchanged one after the other, so populations bound for an edge or corner neighbour travel in
// two or three hops. How the bytes travel between GPUs: ranks of one host copy straight into each
// other's device memory (CUDA IPC, over NVLink where there is one) and only tell each other over
// MPI that a copy has landed; across hosts, device buffers go to MPI when it is CUDA-aware, else
// through pinned host buffers. Every rank computes every node exactly as one rank would: results
// are bit-identical whatever the number of ranks.
#include <mpi.h>

#include <array>
#include <functional>
#include <memory>
#include <vector>

#include "exec/Backend.hpp"
#include "exec/Memory.hpp"
#include "lbm/UniformSolver.hpp"
#include "parallel/Decomposition.hpp"
#include "parallel/PeerInboxes.hpp"

namespace octoflow::parallel {

class DistributedSolver {
public:
  // Collective: every rank of `communicator` builds and initialises its piece of `whole`.
  DistributedSolver(MPI_Comm communicator, const lbm::UniformSolverConfig& whole, exec::Backend backend);
  ~DistributedSolver();
  DistributedSolver(const DistributedSolver&) = delete;
  DistributedSolver& operator=(const DistributedSolver&) = delete;

  void advance(Index steps);  // collective
  void synchronize() { local_->synchronize(); }  // (lbm::UniformSolver::advance)
  Index step() const { return local_->step(); }
  int rank() const { return rank_; }
  int ranks() const { return ranks_; }
  const Piece& piece() const { return piece_; }
  const lbm::UniformSolver& local() const { return *local_; }
  lbm::UniformSolver& local() { return *local_; }
  Index nodeCount() const { return whole_.extent.cellCount(); }
  const Extent& extent() const { return whole_.extent; }
  // How halos travel: "host" (CPU ranks), "CUDA IPC" (device to device within a host),
  // "CUDA-aware MPI" or "pinned staging".
  const char* haloPath() const;
  // Host time spent in halo exchanges so far: in all, waiting for packing and copies to finish,
  // and in MPI calls; and how many exchanges (one a step).
  struct HaloTimes {
    double total = 0.0, waitingForCopies = 0.0, inMpi = 0.0;
    Index exchanges = 0;
  };
  const HaloTimes& haloTimes() const { return haloTimes_; }
  // This rank's timeline of one step, with its halo exchange (UniformSolver::recordTimeline).
  void recordTimeline(Index step) { local_->recordTimeline(step); }
  const std::vector<lbm::UniformSolver::TimelineMark>& timeline() const { return local_->timeline(); }

  // Collective. The whole grid's fields on rank 0 (other ranks get empty buffers).
  const lbm::HostFields& fetchFields(bool wantDensity, bool wantVelocity);
  // Collective. This rank's piece of the fields as ParaView takes pieces of a uniform grid (one
  // piece a rank, Catalyst channel "grid", .pvti files): the owned nodes and, on each axis where
  // another piece follows (not across a periodic wrap), that piece's first layer of nodes, so
  // neighbouring pieces share a layer and no cell is missing between them. Values node-major.
  struct PieceFields {
    NodeBox box;                  // whole-grid coordinates of the piece's nodes
    std::vector<float> density;   // box nodes, or empty when not asked for
    std::vector<float> velocity;  // 3 a node
  };
  const PieceFields& pieceFields(bool wantDensity, bool wantVelocity);
  // Every rank's piece box (pieceFields().box), in rank order (computed alone: no communication).
  std::vector<NodeBox> pieceBoxes() const;

  // Collective. The whole grid's populations on rank 0, laid out as one UniformSolver of the
  // whole grid would hold them (populationsOnHost); empty on other ranks.
  std::vector<float> populationsOnHost();
  // Collective. Force on all obstacles in the last step, summed over the whole grid's boundary
  // nodes in node order: the same total on every rank and as on one rank.
  std::array<double, 3> obstacleForce();

private:
  // What one message along an axis carries: the crossing populations of a layer of nodes and,
  // with CSM, the velocity of a layer (the next step's gradients).
  struct Message {
    lbm::HaloBox populations, velocity;
    std::size_t populationBytes = 0, velocityBytes = 0;
    std::size_t bytes() const { return populationBytes + velocityBytes; }
  };
  Message message(int axis, int sign, bool pull, bool sending) const;
  lbm::HaloBox haloBox(int axis, int sign, bool pull, bool sending) const;
  void exchange(bool oddStep);
  void exchangeAxis(int axis, bool pull);
  Piece pieceOf(int rank) const;
  // Gathers `perNode` values of every owned node (node order within the piece) to rank 0 and
  // places them in `whole` (nodeCount * perNode values, node-major); `whole` untouched elsewhere.
  void gatherOwned(const std::vector<float>& owned, int perNode, std::vector<float>& whole);

  MPI_Comm communicator_ = MPI_COMM_NULL;  // Cartesian
  int rank_ = 0, ranks_ = 1;
  lbm::UniformSolverConfig whole_;
  exec::Backend backend_;
  Piece piece_;
  std::array<std::array<int, 2>, 3> neighbour_{};  // [axis][0: below, 1: above], MPI_PROC_NULL when none
  std::unique_ptr<lbm::UniformSolver> local_;
  bool deviceBuffersToMpi_ = false;
  bool peersConnected_ = false;
  std::size_t messageCapacity_ = 0;  // bytes of the largest message this rank sends or receives
  // Per side of an axis (0: messages travelling down, 1: up): packed messages in the solver's
  // memory, host copies of them (pinned staging), and what arrives.
  std::array<exec::Buffer<unsigned char>, 2> sendWorking_, receiveWorking_, sendStaging_, receiveStaging_;
  PeerInboxes peers_;  // CUDA IPC between the GPUs of a host
  int parity_ = 0;  // of the step whose halos are being exchanged
  HaloTimes haloTimes_;
  lbm::HostFields fields_;
  PieceFields pieceFields_;
};

}  // namespace octoflow::parallel
