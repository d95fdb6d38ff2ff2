#pragma once
// A uniform grid cut into pieces over the ranks of a communicator (parallel/Decomposition.hpp),
// for solvers whose state is node fields with a one-node stencil (the phase-field solver): each
// rank holds its piece with a ghost layer on every side where a neighbour piece is, and after every
// step the ghost layers of any set of fields are refilled from the neighbours, axis after axis (a
// layer spans the axes already done in full, so edges and corners relay). Fields are gathered to
// rank 0 in whole-grid order and handed out as ParaView pieces. Knows no physics.
#include <mpi.h>

#include <array>
#include <vector>

#include "common/Extent.hpp"
#include "exec/Backend.hpp"
#include "exec/Memory.hpp"
#include "parallel/Decomposition.hpp"
#include "parallel/PeerInboxes.hpp"

namespace octoflow::parallel {

class GridDistribution {
public:
  // Collective. `periodic`: axes that wrap. Every rank must resolve the same backend (checked);
  // ranks of a host share its GPUs round-robin, CPU ranks its cores. `fieldsPerExchange`: the most
  // fields one exchange() moves.
  GridDistribution(MPI_Comm communicator, const Extent& whole, const std::array<bool, 3>& periodic,
                   exec::Backend backend, int fieldsPerExchange = 2);
  ~GridDistribution();
  GridDistribution(const GridDistribution&) = delete;
  GridDistribution& operator=(const GridDistribution&) = delete;

  int rank() const { return rank_; }
  // "host", "CUDA IPC" or "pinned staging": how the ghost layers travel.
  const char* haloPath() const;
  int ranks() const { return ranks_; }
  const Piece& piece() const { return piece_; }
  Extent localExtent() const { return piece_.localExtent(); }
  // The owned nodes in local coordinates, and the whole-grid coordinates of local node 0.
  NodeBox ownedBox() const;
  std::array<Index, 3> origin() const;
  // Axes that wrap within the piece itself (periodic and not cut): elsewhere ghost layers or the
  // grid's own faces bound it.
  std::array<bool, 3> localPeriodic() const;

  // Collective. Refills the ghost layers of `fields` (working memory, localExtent() nodes each).
  // On CUDA the copies are queued on `stream` (a cudaStream_t; null: the default stream), which is
  // synchronised only where MPI needs the data: the last layers may still be landing on return,
  // in order with later work on that stream. Between GPUs of one host the layers go straight into
  // the neighbour's memory (CUDA IPC; MPI then carries only an empty message saying so), else
  // through pinned host buffers and MPI.
  void exchange(const std::vector<float*>& fields, void* stream = nullptr);
  // Collective. The owned nodes of a local host array to rank 0, in whole-grid order (`whole`
  // resized there, untouched elsewhere).
  void gather(const float* local, std::vector<float>& whole);
  // This rank's ParaView piece (pieceBox(piece())) from a local host array with fresh ghost layers,
  // and every rank's piece box.
  void copyPiece(const float* local, std::vector<float>& values) const;
  std::vector<NodeBox> pieceBoxes() const;

private:
  Piece pieceOf(int rank) const;
  void copyLayer(float* field, float* buffer, const NodeBox& box, bool pack, void* stream) const;
  void exchangeBetweenPeers(const std::vector<float*>& fields, void* stream);
  // A layer of the local grid at `index` along an axis, whole in the other axes (it spans the
  // ghost layers of the axes exchanged before, so edges and corners relay). What travels on side
  // 1 of an axis: the last owned layer up, into the low ghost layer of the piece above; side 0:
  // the first owned layer down, into the high ghost layer of the piece below.
  NodeBox layer(int axis, Index index) const;
  NodeBox sendLayer(int axis, int side) const;
  NodeBox receiveLayer(int axis, int side) const;

  MPI_Comm communicator_ = MPI_COMM_NULL;  // Cartesian
  int rank_ = 0, ranks_ = 1;
  Extent whole_;
  std::array<bool, 3> periodic_{};
  exec::Backend backend_;
  int fieldsPerExchange_ = 2;
  Piece piece_;
  std::array<std::array<int, 2>, 3> neighbour_{};  // [axis][0: below, 1: above]
  exec::Buffer<float> sendWorking_, receiveWorking_, sendHost_, receiveHost_;
  PeerInboxes peers_;  // CUDA IPC between the GPUs of a host
  int parity_ = 0;     // of the exchange: which half of the peer inboxes it uses
};

}  // namespace octoflow::parallel
