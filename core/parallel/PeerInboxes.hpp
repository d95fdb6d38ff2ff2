#pragma once
// Device memory that other MPI ranks of one host copy their messages into directly (CUDA IPC:
// over NVLink or PCIe peer to peer, no host staging, no MPI payload): one inbox per channel, in two
// halves (alternate exchanges, so that a copy never lands on a message still being unpacked).
// A channel pairs the rank this one sends to with the rank it receives from; the uniform solvers
// have one a cut axis and side (faceChannels), the octree LBM one a peer rank. Serves every
// distributed solver (the LBM's DistributedSolver, GridDistribution, DistributedAmrLbm); knows
// nothing of what the messages hold.
#include <mpi.h>

#include <array>
#include <cstddef>
#include <vector>

#include "exec/Memory.hpp"

namespace octoflow::parallel {

// This rank's messages of a channel go to `to`'s inbox of the channel, and `from`'s arrive in this
// rank's (MPI_PROC_NULL: none). `key` names the channel alike on both ranks of a pair (two channels
// between the same two ranks need two keys); `bytes`: the largest message arriving from `from`
// (faceChannels: this rank's largest message, the same as its neighbours' across a face).
struct PeerChannel {
  int to = MPI_PROC_NULL, from = MPI_PROC_NULL, key = 0;
  std::size_t bytes = 0;
};

class PeerInboxes {
public:
  PeerInboxes() = default;
  // The channels of a Cartesian communicator's pieces: channel 2 * axis + side receives from
  // neighbours[axis][1 - side] ([axis][0: below, 1: above], MPI_PROC_NULL where none) and sends to
  // neighbours[axis][side]; none along an axis of one piece (dims: pieces along each axis).
  static std::vector<PeerChannel> faceChannels(const std::array<std::array<int, 2>, 3>& neighbours,
                                               const std::array<int, 3>& dims, std::size_t bytes);
  // Collective over `communicator`. Connected on every rank or on none: not when a rank of a
  // channel runs on another host (hostOfRank: for every rank, the lowest rank on its host), its GPU
  // has no peer path to this one, an inbox cannot be made or opened, or OCTOFLOW_CUDA_IPC=0.
  void connect(MPI_Comm communicator, const std::vector<PeerChannel>& channels, const std::vector<int>& hostOfRank,
               int rank);
  ~PeerInboxes() { closeMappings(); }
  PeerInboxes(const PeerInboxes&) = delete;
  PeerInboxes& operator=(const PeerInboxes&) = delete;

  bool connected() const { return connected_; }
  // Where messages of channel `channel` (its index in connect's list) from its `from` rank arrive in
  // this rank's memory, and where this rank's messages to its `to` rank go (that rank's inbox of the
  // channel, mapped here); parity: of the exchange. Halves start at multiples of 256 bytes.
  unsigned char* inbox(int channel, int parity) {
    Mailbox& box = channels_.at(static_cast<std::size_t>(channel));
    return box.inbox.data() + static_cast<std::size_t>(parity) * box.halfBytes;
  }
  unsigned char* outbox(int channel, int parity) const {
    const Mailbox& box = channels_.at(static_cast<std::size_t>(channel));
    return box.peerInbox + static_cast<std::size_t>(parity) * box.peerHalfBytes;
  }
  // Closes this process's mappings of the neighbours' inboxes. Before any rank frees its inboxes
  // (destroys this) every rank must have closed them: the owner calls this, then MPI_Barrier.
  void closeMappings() noexcept;

private:
  struct Mailbox {
    exec::Buffer<unsigned char> inbox;  // this rank's, two halves
    std::size_t halfBytes = 0;
    unsigned char* peerInbox = nullptr;  // the `to` rank's, mapped here
    std::size_t peerHalfBytes = 0;
  };
  bool connected_ = false;
  std::vector<Mailbox> channels_;
};

}  // namespace octoflow::parallel
