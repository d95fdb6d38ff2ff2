#include "parallel/PeerInboxes.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <string>

#include "parallel/MpiSupport.hpp"

namespace octoflow::parallel {

using namespace detail;

namespace {

// Whether ranks of a host copy halos into each other's GPU memory; OCTOFLOW_CUDA_IPC=0 sends them
// through MPI instead.
bool cudaIpcWanted() {
  const char* setting = std::getenv("OCTOFLOW_CUDA_IPC");
  return !(setting && std::string(setting) == "0");
}

}  // namespace

std::vector<PeerChannel> PeerInboxes::faceChannels(const std::array<std::array<int, 2>, 3>& neighbours,
                                                  const std::array<int, 3>& dims, std::size_t bytes) {
  std::vector<PeerChannel> channels(6);
  for (int axis = 0; axis < 3; ++axis) {
    if (dims[axis] == 1) continue;  // a piece's own periodic image: no channel
    for (int side = 0; side < 2; ++side)
      channels[static_cast<std::size_t>(2 * axis + side)] =
          PeerChannel{neighbours[axis][side], neighbours[axis][1 - side], 2 * axis + side, bytes};
  }
  return channels;
}

void PeerInboxes::connect(MPI_Comm communicator, const std::vector<PeerChannel>& channels,
                          const std::vector<int>& hostOfRank, int rank) {
  closeMappings();  // of an earlier connect (its inboxes go below)
  channels_.clear();
  connected_ = false;
  bool possible = cudaIpcWanted();
  for (const PeerChannel& channel : channels)
    for (int peer : {channel.to, channel.from})
      if (peer != MPI_PROC_NULL && hostOfRank[static_cast<std::size_t>(peer)] != hostOfRank[static_cast<std::size_t>(rank)])
        possible = false;
  if (!everyRank(communicator, possible)) return;
  // Without peer access between the two GPUs the driver copies through host memory (~20 GB/s
  // instead of ~120 GB/s for a face over NVLink, measured on H200s): such ranks send over MPI.
  // GPUs are named by PCI bus id: device numbers differ between processes that see different
  // CUDA_VISIBLE_DEVICES. Nothing here throws: every rank goes through the same MPI calls, and a
  // rank that fails says so in the vote at the end.
  struct Address {
    exec::IpcHandle handle;
    std::uint64_t halfBytes;
    exec::PciBusId device;
  };
  const exec::PciBusId device = exec::currentDeviceBusId();
  bool opened = true;
  channels_.clear();
  channels_.resize(channels.size());
  std::vector<Address> mine(channels.size()), theirs(channels.size());
  std::vector<MPI_Request> requests;
  for (std::size_t c = 0; c < channels.size(); ++c) {
    const PeerChannel& channel = channels[c];
    if (channel.from == MPI_PROC_NULL) continue;
    Mailbox& box = channels_[c];
    box.halfBytes = std::max<std::size_t>((channel.bytes + 255) / 256 * 256, 256);  // whole 256-byte units
    try {
      box.inbox = exec::Buffer<unsigned char>(exec::MemorySpace::Device, 2 * box.halfBytes);
      mine[c] = Address{exec::exportDeviceMemory(box.inbox.data()), box.halfBytes, device};
    } catch (const std::exception&) {
      opened = false;  // the sender gets an empty address, which does not open
    }
    requests.emplace_back();
    check(MPI_Isend(&mine[c], sizeof(Address), MPI_BYTE, channel.from, 20 + channel.key, communicator, &requests.back()),
          "MPI_Isend");
  }
  for (std::size_t c = 0; c < channels.size(); ++c) {
    if (channels[c].to == MPI_PROC_NULL) continue;
    requests.emplace_back();
    check(MPI_Irecv(&theirs[c], sizeof(Address), MPI_BYTE, channels[c].to, 20 + channels[c].key, communicator,
                    &requests.back()),
          "MPI_Irecv");
  }
  check(MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE), "MPI_Waitall");
  for (std::size_t c = 0; c < channels.size(); ++c) {
    if (channels[c].to == MPI_PROC_NULL) continue;
    if (!exec::enablePeerAccess(theirs[c].device)) {
      opened = false;
      continue;
    }
    Mailbox& box = channels_[c];
    box.peerInbox = static_cast<unsigned char*>(exec::openPeerDeviceMemory(theirs[c].handle));
    box.peerHalfBytes = static_cast<std::size_t>(theirs[c].halfBytes);
    opened = opened && box.peerInbox != nullptr;
  }
  connected_ = everyRank(communicator, opened);
  if (connected_) return;
  closeMappings();
  MPI_Barrier(communicator);  // every mapping is closed before an inbox goes
  channels_.clear();
}

void PeerInboxes::closeMappings() noexcept {
  for (Mailbox& box : channels_) {
    exec::closePeerDeviceMemory(box.peerInbox);
    box.peerInbox = nullptr;
  }
}

}  // namespace octoflow::parallel
