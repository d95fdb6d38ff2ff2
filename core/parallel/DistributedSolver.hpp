#pragma once
// The uniform LBM solver over MPI ranks: each rank runs a UniformSolver on its piece of the whole
// grid (parallel/Decomposition.hpp) and, after every step, exchanges with its neighbours exactly
// the populations that cross their shared faces (lbm/Halo.hpp). Axes are exchanged one after the
// other, so populations bound for an edge or corner neighbour travel in two or three hops.
// Device buffers go to MPI directly when it is CUDA-aware, else through pinned host buffers. Every rank computes every node exactly as
// one rank would: results are bit-identical whatever the number of ranks.
#include <mpi.h>

#include <array>
#include <functional>
#include <memory>
#include <vector>

#include "exec/Backend.hpp"
#include "exec/Memory.hpp"
#include "lbm/UniformSolver.hpp"
#include "parallel/Decomposition.hpp"

namespace octoflow::parallel {

class DistributedSolver {
public:
  // Collective: every rank of `communicator` builds and initialises its piece of `whole`.
  DistributedSolver(MPI_Comm communicator, const lbm::UniformSolverConfig& whole, exec::Backend backend);
  ~DistributedSolver();
  DistributedSolver(const DistributedSolver&) = delete;
  DistributedSolver& operator=(const DistributedSolver&) = delete;

  void advance(Index steps);  // collective
  Index step() const { return local_->step(); }
  int rank() const { return rank_; }
  int ranks() const { return ranks_; }
  const Piece& piece() const { return piece_; }
  const lbm::UniformSolver& local() const { return *local_; }
  Index nodeCount() const { return whole_.extent.cellCount(); }
  const Extent& extent() const { return whole_.extent; }
  // How halos travel: "host" (CPU ranks), "device" (CUDA-aware MPI) or "pinned staging".
  const char* haloPath() const {
    return backend_ != exec::Backend::Cuda ? "host" : (deviceBuffersToMpi_ ? "device" : "pinned staging");
  }

  // Collective. The whole grid's fields on rank 0 (other ranks get empty buffers).
  const lbm::HostFields& fetchFields(bool wantDensity, bool wantVelocity);
  // Collective. The whole grid's populations on rank 0, laid out as one UniformSolver of the
  // whole grid would hold them (populationsOnHost); empty on other ranks.
  std::vector<float> populationsOnHost();
  // Collective. Force on all obstacles in the last step, summed over the whole grid's boundary
  // nodes in node order: the same total on every rank and as on one rank.
  std::array<double, 3> obstacleForce();

private:
  void exchange(bool afterOddStep);
  // One message each way along an axis: to the neighbour on side `sign`, from the one on -sign.
  void transfer(int axis, int sign, int tag, std::size_t sendBytes, std::size_t receiveBytes,
                const std::function<void(void*)>& pack, const std::function<void(const void*)>& unpack);
  lbm::HaloBox haloBox(int axis, int sign, bool pull, bool sending) const;
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
  exec::Buffer<unsigned char> sendWorking_, receiveWorking_;  // the solver's memory
  exec::Buffer<unsigned char> sendStaging_, receiveStaging_;  // host (pinned for CUDA)
  lbm::HostFields fields_;
};

}  // namespace octoflow::parallel
