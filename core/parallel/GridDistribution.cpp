#include "parallel/GridDistribution.hpp"

#include <algorithm>
#include <climits>
#include <exception>

#include "common/Error.hpp"
#include "exec/cpu/CpuExecutor.hpp"
#include "parallel/LayerCopy.hpp"
#include "parallel/MpiSupport.hpp"

namespace octoflow::parallel {

using namespace detail;

void copyLayerCpu(const LayerCopy& copy) { exec::CpuExecutor{}.parallelFor3(copy.box, copy); }
void copyIndexedCpu(const IndexedCopy& copy, Index count) { exec::CpuExecutor{}.parallelFor(count, copy); }

GridDistribution::GridDistribution(MPI_Comm communicator, const Extent& whole, const std::array<bool, 3>& periodic,
                                   exec::Backend backend, int fieldsPerExchange)
    : whole_(whole), periodic_(periodic), backend_(backend), fieldsPerExchange_(fieldsPerExchange) {
  check(MPI_Comm_size(communicator, &ranks_), "MPI_Comm_size");
  const std::array<int, 3> dims = chooseDims(whole, ranks_);
  int periods[3];
  for (int axis = 0; axis < 3; ++axis) periods[axis] = periodic[static_cast<std::size_t>(axis)] ? 1 : 0;
  check(MPI_Cart_create(communicator, 3, dims.data(), periods, 0, &communicator_), "MPI_Cart_create");
  MPI_Comm_rank(communicator_, &rank_);
  const bool cuda = backend_ == exec::Backend::Cuda;
  const HostPlace host = takeDeviceOrCores(communicator_, backend_);
  if (ranks_ > 1 && whole.cellCount() > INT_MAX)
    throw Error("a grid of over 2^31 nodes cannot be gathered to rank 0; write it in pieces");
  piece_ = pieceOf(rank_);
  for (int axis = 0; axis < 3; ++axis)
    check(MPI_Cart_shift(communicator_, axis, 1, &neighbour_[axis][0], &neighbour_[axis][1]), "MPI_Cart_shift");
  // One message holds a layer of every field an exchange moves, at the largest layer.
  const Extent local = localExtent();
  const Index largest = std::max({local.ny * local.nz, local.nx * local.nz, local.nx * local.ny});
  const auto capacity = static_cast<std::size_t>(fieldsPerExchange_ * largest);
  if (ranks_ == 1) return;
  if (cuda) peers_.connect(communicator_, PeerInboxes::faceChannels(neighbour_, piece_.dims, capacity * sizeof(float)),
                            host.hostOfRank, rank_);
  if (peers_.connected()) return;  // the layers are packed into the neighbours' inboxes
  sendWorking_ = exec::Buffer<float>(exec::workingSpace(backend_), capacity);
  receiveWorking_ = exec::Buffer<float>(exec::workingSpace(backend_), capacity);
  if (cuda) {
    sendHost_ = exec::Buffer<float>(exec::MemorySpace::Pinned, capacity);
    receiveHost_ = exec::Buffer<float>(exec::MemorySpace::Pinned, capacity);
  }
}

GridDistribution::~GridDistribution() {
  peers_.closeMappings();
  // A neighbour frees the inboxes this rank had open only once every rank has closed its mappings
  // (not when unwinding from an error: the caller aborts every rank then).
  if (peers_.connected() && std::uncaught_exceptions() == 0) MPI_Barrier(communicator_);
  if (communicator_ != MPI_COMM_NULL) MPI_Comm_free(&communicator_);
}

const char* GridDistribution::haloPath() const {
  if (backend_ != exec::Backend::Cuda) return "host";
  return peers_.connected() ? "CUDA IPC" : "pinned staging";
}

Piece GridDistribution::pieceOf(int rank) const {
  std::array<int, 3> dims{}, coords{};
  int periods[3];
  check(MPI_Cart_get(communicator_, 3, dims.data(), periods, coords.data()), "MPI_Cart_get");
  check(MPI_Cart_coords(communicator_, rank, 3, coords.data()), "MPI_Cart_coords");
  unsigned periodicAxes = 0;
  for (int axis = 0; axis < 3; ++axis)
    if (periodic_[static_cast<std::size_t>(axis)]) periodicAxes |= 1u << axis;
  return makePiece(whole_, periodicAxes, dims, coords);
}

NodeBox GridDistribution::ownedBox() const {
  NodeBox box;
  for (int axis = 0; axis < 3; ++axis) box.lo[axis] = piece_.ownedBegin(axis);
  box.size = Extent{piece_.owned(0), piece_.owned(1), piece_.owned(2)};
  return box;
}

std::array<Index, 3> GridDistribution::origin() const { return {piece_.origin(0), piece_.origin(1), piece_.origin(2)}; }

std::array<bool, 3> GridDistribution::localPeriodic() const {
  std::array<bool, 3> wraps{};
  for (int axis = 0; axis < 3; ++axis)
    wraps[static_cast<std::size_t>(axis)] = periodic_[static_cast<std::size_t>(axis)] && piece_.dims[axis] == 1;
  return wraps;
}

void GridDistribution::copyLayer(float* field, float* buffer, const NodeBox& box, bool pack, void* stream) const {
  const LayerCopy copy{field, buffer, localExtent(), box, pack};
#if OCTOFLOW_HAVE_CUDA
  if (backend_ == exec::Backend::Cuda) return copyLayerCuda(copy, stream);
#endif
  (void)stream;
  copyLayerCpu(copy);
}

NodeBox GridDistribution::layer(int axis, Index index) const {
  const Extent local = localExtent();
  NodeBox box = NodeBox::of(local);
  box.lo[axis] = index;
  Index size[3] = {local.nx, local.ny, local.nz};
  size[axis] = 1;
  box.size = Extent{size[0], size[1], size[2]};
  return box;
}

NodeBox GridDistribution::sendLayer(int axis, int side) const {
  return layer(axis, side == 1 ? piece_.ownedEnd(axis) - 1 : piece_.ownedBegin(axis));
}

NodeBox GridDistribution::receiveLayer(int axis, int side) const {
  return layer(axis, side == 1 ? 0 : localExtent().size(axis) - 1);
}

void GridDistribution::exchange(const std::vector<float*>& fields, void* stream) {
  if (ranks_ == 1) return;
  if (static_cast<int>(fields.size()) > fieldsPerExchange_)
    throw Error("GridDistribution::exchange: more fields than the distribution was made for");
  if (peers_.connected()) return exchangeBetweenPeers(fields, stream);
  const bool cuda = backend_ == exec::Backend::Cuda;
  for (int axis = 0; axis < 3; ++axis) {
    if (piece_.dims[axis] == 1) continue;
    // Upward: the last owned layer to the piece above (its low ghost layer); downward: the first
    // owned layer to the piece below (its high ghost layer).
    for (int direction : {1, 0}) {
      const NodeBox send = sendLayer(axis, direction), receive = receiveLayer(axis, direction);
      const bool receives = direction == 1 ? piece_.ghostLow[axis] : piece_.ghostHigh[axis];
      const Index count = send.cellCount();
      const int to = neighbour_[axis][direction], from = neighbour_[axis][1 - direction];
      for (std::size_t f = 0; f < fields.size(); ++f)
        if (to != MPI_PROC_NULL) copyLayer(fields[f], sendWorking_.data() + f * count, send, true, stream);
      const auto values = static_cast<std::size_t>(count) * fields.size();
      float* sendBuffer = sendWorking_.data();
      float* receiveBuffer = receiveWorking_.data();
      if (cuda) {
        if (to != MPI_PROC_NULL) exec::copyBytesOn(stream, sendHost_.data(), sendWorking_.data(), values * sizeof(float));
        exec::synchronizeStream(stream);  // sent, and the last receive unpacked: the buffers are free
        sendBuffer = sendHost_.data();
        receiveBuffer = receiveHost_.data();
      }
      check(MPI_Sendrecv(sendBuffer, static_cast<int>(values), MPI_FLOAT, to, axis, receiveBuffer,
                         static_cast<int>(values), MPI_FLOAT, from, axis, communicator_, MPI_STATUS_IGNORE),
            "MPI_Sendrecv");
      if (!receives || from == MPI_PROC_NULL) continue;
      if (cuda) exec::copyBytesOn(stream, receiveWorking_.data(), receiveHost_.data(), values * sizeof(float));
      for (std::size_t f = 0; f < fields.size(); ++f)
        copyLayer(fields[f], receiveWorking_.data() + f * count, receive, false, stream);
    }
  }
}

// The same as exchange() over CUDA IPC: both directions of an axis packed straight into the
// neighbours' inboxes, then an empty message each way says they have landed, then the unpacking
// from this rank's inboxes. The inbox halves alternate between exchanges: a neighbour writes a
// half again only after the next exchange's messages, which this rank sends once its unpacking of
// that half is done (the stream is synchronised before them).
void GridDistribution::exchangeBetweenPeers(const std::vector<float*>& fields, void* stream) {
  for (int axis = 0; axis < 3; ++axis) {
    if (piece_.dims[axis] == 1) continue;
    // side 1: the last owned layer up, into the low ghost layer of the piece above; side 0: the
    // first owned layer down, into the high ghost layer of the piece below.
    for (int side : {1, 0}) {
      if (neighbour_[axis][side] == MPI_PROC_NULL) continue;
      const NodeBox send = sendLayer(axis, side);
      auto* outbox = reinterpret_cast<float*>(peers_.outbox(2 * axis + side, parity_));
      for (std::size_t f = 0; f < fields.size(); ++f)
        copyLayer(fields[f], outbox + f * send.cellCount(), send, true, stream);
    }
    exec::synchronizeStream(stream);
    for (int side : {1, 0})
      check(MPI_Sendrecv(nullptr, 0, MPI_BYTE, neighbour_[axis][side], axis, nullptr, 0, MPI_BYTE,
                         neighbour_[axis][1 - side], axis, communicator_, MPI_STATUS_IGNORE),
            "MPI_Sendrecv");
    for (int side : {1, 0}) {
      const bool receives = side == 1 ? piece_.ghostLow[axis] : piece_.ghostHigh[axis];
      if (!receives || neighbour_[axis][1 - side] == MPI_PROC_NULL) continue;
      const NodeBox receive = receiveLayer(axis, side);
      auto* inbox = reinterpret_cast<float*>(peers_.inbox(2 * axis + side, parity_));
      for (std::size_t f = 0; f < fields.size(); ++f)
        copyLayer(fields[f], inbox + f * receive.cellCount(), receive, false, stream);
    }
  }
  parity_ = 1 - parity_;
}

void GridDistribution::gather(const float* local, std::vector<float>& whole) {
  std::vector<Piece> pieces;
  for (int r = 0; r < ranks_; ++r) pieces.push_back(pieceOf(r));
  gatherOwnedNodes(communicator_, rank_ == 0, pieces, whole_, ownedValues(piece_, local, 1), 1, whole);
}

void GridDistribution::copyPiece(const float* local, std::vector<float>& values) const {
  const NodeBox box = pieceBox(piece_);
  const Extent e = localExtent();
  values.resize(static_cast<std::size_t>(box.cellCount()));
  for (Index k = 0; k < box.size.nz; ++k)
    for (Index j = 0; j < box.size.ny; ++j)
      for (Index i = 0; i < box.size.nx; ++i)
        values[static_cast<std::size_t>(box.size.linear(i, j, k))] =
            local[e.linear(i + piece_.ownedBegin(0), j + piece_.ownedBegin(1), k + piece_.ownedBegin(2))];
}

std::vector<NodeBox> GridDistribution::pieceBoxes() const {
  std::vector<NodeBox> boxes;
  for (int r = 0; r < ranks_; ++r) boxes.push_back(pieceBox(pieceOf(r)));
  return boxes;
}

}  // namespace octoflow::parallel
