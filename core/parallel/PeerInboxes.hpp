#pragma once
// Device memory that the neighbouring MPI ranks of one host copy their halo messages into
// directly (CUDA IPC: over NVLink or PCIe peer to peer, no host staging, no MPI payload): one inbox
// per cut axis and side, in two halves (even and odd exchanges, so that a copy never lands on a
// message still being unpacked). Serves every distributed solver (the LBM's DistributedSolver,
// GridDistribution); knows nothing of what the messages hold.
#include <mpi.h>

#include <array>
#include <cstddef>
#include <vector>

#include "exec/Memory.hpp"

namespace octoflow::parallel {

class PeerInboxes {
public:
  PeerInboxes() = default;
  // Collective over the Cartesian communicator of `neighbours` ([axis][0: below, 1: above],
  // MPI_PROC_NULL where none) and `dims` (pieces along each axis). Each half holds `halfBytes`
  // (this rank's largest message). Connected on every rank or on none: not when a neighbour
  // across a cut axis runs on another host, its GPU has no peer path to this one, an inbox cannot
  // be made or opened, or OCTOFLOW_CUDA_IPC=0.
  void connect(MPI_Comm communicator, const std::array<std::array<int, 2>, 3>& neighbours,
               const std::array<int, 3>& dims, const std::vector<int>& hostOfRank, int rank, std::size_t halfBytes);
  ~PeerInboxes() { closeMappings(); }
  PeerInboxes(const PeerInboxes&) = delete;
  PeerInboxes& operator=(const PeerInboxes&) = delete;

  bool connected() const { return connected_; }
  // Where messages from neighbours[axis][1 - side] arrive in this rank's memory, and where this
  // rank's messages to neighbours[axis][side] go (that rank's inbox of the same axis and side,
  // mapped here); parity: of the exchange.
  unsigned char* inbox(int axis, int side, int parity) {
    return inbox_[axis][side].data() + static_cast<std::size_t>(parity) * halfBytes_;
  }
  unsigned char* outbox(int axis, int side, int parity) const {
    return neighbourInbox_[axis][side] + static_cast<std::size_t>(parity) * neighbourHalfBytes_[axis][side];
  }
  // Closes this process's mappings of the neighbours' inboxes. Before any rank frees its inboxes
  // (destroys this) every rank must have closed them: the owner calls this, then MPI_Barrier.
  void closeMappings() noexcept;

private:
  bool connected_ = false;
  std::size_t halfBytes_ = 0;
  std::array<std::array<exec::Buffer<unsigned char>, 2>, 3> inbox_;
  std::array<std::array<unsigned char*, 2>, 3> neighbourInbox_{};
  std::array<std::array<std::size_t, 2>, 3> neighbourHalfBytes_{};
};

}  // namespace octoflow::parallel
