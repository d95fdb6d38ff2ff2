#include "parallel/PeerInboxes.hpp"

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

void PeerInboxes::connect(MPI_Comm communicator, const std::array<std::array<int, 2>, 3>& neighbours,
                          const std::array<int, 3>& dims, const std::vector<int>& hostOfRank, int rank,
                          std::size_t halfBytes) {
  halfBytes_ = halfBytes;
  bool possible = cudaIpcWanted();
  for (int axis = 0; axis < 3; ++axis)
    for (int neighbour : neighbours[axis])
      if (dims[axis] > 1 && neighbour != MPI_PROC_NULL && hostOfRank[neighbour] != hostOfRank[rank]) possible = false;
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
  for (int axis = 0; axis < 3; ++axis) {
    if (dims[axis] == 1) continue;
    for (int side = 0; side < 2; ++side) {
      const int to = neighbours[axis][side], from = neighbours[axis][1 - side];
      Address mine{}, theirs{};
      if (from != MPI_PROC_NULL) {
        try {
          inbox_[axis][side] = exec::Buffer<unsigned char>(exec::MemorySpace::Device, 2 * halfBytes);
          mine = Address{exec::exportDeviceMemory(inbox_[axis][side].data()), halfBytes, device};
        } catch (const std::exception&) {
          opened = false;  // the neighbour gets an empty address, which does not open
        }
      }
      check(MPI_Sendrecv(&mine, sizeof(Address), MPI_BYTE, from, 20 + 2 * axis + side, &theirs, sizeof(Address),
                         MPI_BYTE, to, 20 + 2 * axis + side, communicator, MPI_STATUS_IGNORE),
            "MPI_Sendrecv");
      if (to == MPI_PROC_NULL) continue;
      if (!exec::enablePeerAccess(theirs.device)) {
        opened = false;
        continue;
      }
      neighbourInbox_[axis][side] = static_cast<unsigned char*>(exec::openPeerDeviceMemory(theirs.handle));
      neighbourHalfBytes_[axis][side] = static_cast<std::size_t>(theirs.halfBytes);
      opened = opened && neighbourInbox_[axis][side] != nullptr;
    }
  }
  connected_ = everyRank(communicator, opened);
  if (connected_) return;
  closeMappings();
  MPI_Barrier(communicator);  // every mapping is closed before an inbox goes
  for (auto& inboxes : inbox_)
    for (auto& inbox : inboxes) inbox = exec::Buffer<unsigned char>();
}

void PeerInboxes::closeMappings() noexcept {
  for (auto& inboxes : neighbourInbox_)
    for (unsigned char*& inbox : inboxes) {
      exec::closePeerDeviceMemory(inbox);
      inbox = nullptr;
    }
}

}  // namespace octoflow::parallel
