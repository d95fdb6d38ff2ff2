#include "parallel/DistributedSolver.hpp"

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <string>

#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>  // Open MPI: MPIX_CUDA_AWARE_SUPPORT, MPIX_Query_cuda_support
#endif

#include "common/Error.hpp"
#include "parallel/MpiSupport.hpp"

namespace octoflow::parallel {

using namespace detail;

namespace {

// Whether MPI can read and write device memory itself (CUDA-aware Open MPI): then halos go from
// device buffer to device buffer (over NVLink between GPUs of a host). OCTOFLOW_GPU_AWARE_MPI=0
// forces the pinned host staging.
bool gpuAwareMpi() {
  const char* setting = std::getenv("OCTOFLOW_GPU_AWARE_MPI");
  if (setting && std::string(setting) == "0") return false;
#if defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT
  return MPIX_Query_cuda_support() == 1;
#else
  return false;
#endif
}

using Clock = std::chrono::steady_clock;
double secondsSince(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

}  // namespace

DistributedSolver::DistributedSolver(MPI_Comm communicator, const lbm::UniformSolverConfig& whole,
                                     exec::Backend backend)
    : whole_(whole), backend_(backend) {
  check(MPI_Comm_size(communicator, &ranks_), "MPI_Comm_size");
  const std::array<int, 3> dims = chooseDims(whole.extent, ranks_);
  int periods[3];
  for (int axis = 0; axis < 3; ++axis) periods[axis] = whole.faces.periodic(axis) ? 1 : 0;
  check(MPI_Cart_create(communicator, 3, dims.data(), periods, 0, &communicator_), "MPI_Cart_create");
  MPI_Comm_rank(communicator_, &rank_);
  const HostPlace host = takeDeviceOrCores(communicator_, backend_);
  if (ranks_ > 1 && whole.extent.cellCount() > INT_MAX)
    throw Error("a grid of over 2^31 nodes cannot be gathered to rank 0; write it in pieces");
  piece_ = pieceOf(rank_);
  for (int axis = 0; axis < 3; ++axis)
    check(MPI_Cart_shift(communicator_, axis, 1, &neighbour_[axis][0], &neighbour_[axis][1]), "MPI_Cart_shift");
  local_ = std::make_unique<lbm::UniformSolver>(pieceConfig(whole_, piece_), backend_);
  deviceBuffersToMpi_ = backend_ == exec::Backend::Cuda && gpuAwareMpi();
  if (ranks_ == 1) return;
  // Every buffer is made here, at its largest: none is reallocated while copies are queued.
  for (int axis = 0; axis < 3; ++axis)
    for (int sign : {1, -1})
      for (bool pull : {true, false})
        for (bool sending : {true, false})
          messageCapacity_ = std::max(messageCapacity_, message(axis, sign, pull, sending).bytes());
  // Whole 256-byte units: the odd-step half of a CUDA IPC inbox starts this far in, and its
  // populations are read as floats.
  messageCapacity_ = (messageCapacity_ + 255) / 256 * 256;
  if (!everyRank(communicator_, messageCapacity_ <= INT_MAX))
    throw Error("halo exchange: a face of a piece holds over 2 GiB; use more MPI ranks");
  const exec::MemorySpace working = exec::workingSpace(backend_), staging = exec::stagingSpace(backend_);
  for (int side = 0; side < 2; ++side) sendWorking_[side] = exec::Buffer<unsigned char>(working, messageCapacity_);
  // Over CUDA IPC messages go straight into the neighbours' inboxes (two halves: even and odd steps).
  if (backend_ == exec::Backend::Cuda)
    peers_.connect(communicator_, PeerInboxes::faceChannels(neighbour_, piece_.dims, messageCapacity_), host.hostOfRank,
                   rank_);
  peersConnected_ = peers_.connected();
  if (!peersConnected_)  // over CUDA IPC messages arrive in the peer inboxes
    for (int side = 0; side < 2; ++side) receiveWorking_[side] = exec::Buffer<unsigned char>(working, messageCapacity_);
  if (working != staging && !deviceBuffersToMpi_ && !peersConnected_)
    for (int side = 0; side < 2; ++side) {
      sendStaging_[side] = exec::Buffer<unsigned char>(staging, messageCapacity_);
      receiveStaging_[side] = exec::Buffer<unsigned char>(staging, messageCapacity_);
    }
  local_->setHaloExchange([this](bool oddStep) { exchange(oddStep); });
}

DistributedSolver::~DistributedSolver() {
  try {
    if (local_) local_->synchronizeHalo();
  } catch (const std::exception&) {
    // A failed device: the error was reported where it happened.
  }
  peers_.closeMappings();
  // A neighbour frees the memory this rank had open only once every rank has closed its mappings
  // (not when unwinding from an error: the caller aborts every rank then).
  if (peersConnected_ && std::uncaught_exceptions() == 0) MPI_Barrier(communicator_);
  local_.reset();
  if (communicator_ != MPI_COMM_NULL) MPI_Comm_free(&communicator_);
}

const char* DistributedSolver::haloPath() const {
  if (backend_ != exec::Backend::Cuda) return "host";
  if (peersConnected_) return "CUDA IPC";
  return deviceBuffersToMpi_ ? "CUDA-aware MPI" : "pinned staging";
}

Piece DistributedSolver::pieceOf(int rank) const {
  std::array<int, 3> dims{}, coords{};
  int periods[3];
  check(MPI_Cart_get(communicator_, 3, dims.data(), periods, coords.data()), "MPI_Cart_get");
  check(MPI_Cart_coords(communicator_, rank, 3, coords.data()), "MPI_Cart_coords");
  return makePiece(whole_.extent, whole_.faces.periodicAxes(), dims, coords);
}

void DistributedSolver::advance(Index steps) { local_->advance(steps); }

// The layer of nodes one exchange copies. A pull exchange (after an even step) sends the owned
// layer on side `sign` into the neighbour's ghost layer; a push exchange (after an odd step) sends
// the ghost layer on side `sign` into the neighbour's owned layer. The receiving layer is on side
// -sign. Across the other axes, the box spans the ghost layers of the axes exchanged before this
// one in a pull exchange (they are filled by then), of the axes exchanged after it in a push
// exchange (they still hold what is bound for edge and corner neighbours).
lbm::HaloBox DistributedSolver::haloBox(int axis, int sign, bool pull, bool sending) const {
  lbm::HaloBox box;
  box.axis = axis;
  box.sign = sign;
  box.oppositeSlots = pull;
  const Extent local = piece_.localExtent();
  for (int other = 0; other < 3; ++other) {
    if (other == axis) continue;
    const bool withGhosts = pull ? other < axis : other > axis;
    box.lo[other] = withGhosts ? 0 : piece_.ownedBegin(other);
    box.hi[other] = withGhosts ? local.size(other) : piece_.ownedEnd(other);
  }
  const int side = sending ? sign : -sign;
  const bool ghostLayer = pull != sending;
  const Index layer = side > 0 ? (ghostLayer ? piece_.ownedEnd(axis) : piece_.ownedEnd(axis) - 1)
                               : (ghostLayer ? piece_.ownedBegin(axis) - 1 : piece_.ownedBegin(axis));
  box.lo[axis] = layer;
  box.hi[axis] = layer + 1;
  return box;
}

DistributedSolver::Message DistributedSolver::message(int axis, int sign, bool pull, bool sending) const {
  Message m;
  m.populations = haloBox(axis, sign, pull, sending);
  m.populationBytes = local_->haloBytes(m.populations);
  // CSM: the velocity of the owned layer goes to the neighbour's ghost layer in every step (the
  // gradient needs the six axis neighbours only).
  m.velocity = haloBox(axis, sign, true, sending);
  m.velocityBytes = local_->lesVelocityHaloBytes(m.velocity);
  return m;
}

void DistributedSolver::exchange(bool oddStep) {
  const auto start = Clock::now();
  parity_ = oddStep ? 1 : 0;
  for (int axis = 0; axis < 3; ++axis)
    if (piece_.dims[axis] > 1) exchangeAxis(axis, !oddStep);
  haloTimes_.total += secondsSince(start);
  ++haloTimes_.exchanges;
}

// Both directions of an axis: pack the two messages, start them on their way, wait until they
// have left (and, between GPUs of a host, landed), hear from the neighbours that theirs have, and
// queue the unpacking.
void DistributedSolver::exchangeAxis(int axis, bool pull) {
  std::array<Message, 2> out, in;
  std::array<std::size_t, 2> sendBytes{}, receiveBytes{};
  for (int side = 0; side < 2; ++side) {
    const int sign = side ? 1 : -1;
    out[side] = message(axis, sign, pull, true);
    in[side] = message(axis, sign, pull, false);
    if (neighbour_[axis][side] != MPI_PROC_NULL) sendBytes[side] = out[side].bytes();
    if (neighbour_[axis][1 - side] != MPI_PROC_NULL) receiveBytes[side] = in[side].bytes();
  }
  const bool staged = sendStaging_[0].size() > 0;
  for (int side = 0; side < 2; ++side) {
    if (sendBytes[side] == 0) continue;
    unsigned char* packed = sendWorking_[side].data();
    local_->packHalo(out[side].populations, packed);
    if (out[side].velocityBytes) local_->copyLesVelocityHalo(out[side].velocity, packed + out[side].populationBytes, true);
    if (peersConnected_)
      local_->copyOnHaloQueue(peers_.outbox(2 * axis + side, parity_), packed, sendBytes[side]);
    else if (staged)
      local_->copyOnHaloQueue(sendStaging_[side].data(), packed, sendBytes[side]);
  }
  local_->markTimeline("halos packed and sent", true, axis);
  auto start = Clock::now();
  local_->synchronizeHalo();
  haloTimes_.waitingForCopies += secondsSince(start);
  start = Clock::now();
  // Both directions at once. Between GPUs of a host the message is already there: an empty one
  // says so.
  std::array<MPI_Request, 4> requests;
  for (int side = 0; side < 2; ++side) {
    const int receiving = peersConnected_ ? 0 : static_cast<int>(receiveBytes[side]);
    void* receiveInto = staged ? receiveStaging_[side].data() : receiveWorking_[side].data();
    check(MPI_Irecv(receiveInto, receiving, MPI_BYTE, neighbour_[axis][1 - side], 2 * axis + side, communicator_,
                    &requests[side]),
          "MPI_Irecv");
  }
  for (int side = 0; side < 2; ++side) {
    const int sending = peersConnected_ ? 0 : static_cast<int>(sendBytes[side]);
    void* sendFrom = staged ? sendStaging_[side].data() : sendWorking_[side].data();
    check(MPI_Isend(sendFrom, sending, MPI_BYTE, neighbour_[axis][side], 2 * axis + side, communicator_,
                    &requests[2 + side]),
          "MPI_Isend");
  }
  check(MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE), "MPI_Waitall");
  haloTimes_.inMpi += secondsSince(start);
  for (int side = 0; side < 2; ++side) {
    if (receiveBytes[side] == 0) continue;
    unsigned char* arrived = receiveWorking_[side].data();
    if (peersConnected_)
      arrived = peers_.inbox(2 * axis + side, parity_);
    else if (staged)
      local_->copyOnHaloQueue(arrived, receiveStaging_[side].data(), receiveBytes[side]);
    local_->unpackHalo(in[side].populations, arrived);
    if (in[side].velocityBytes)
      local_->copyLesVelocityHalo(in[side].velocity, arrived + in[side].populationBytes, false);
  }
  local_->markTimeline("halos received and unpacked", true, axis);
}

void DistributedSolver::gatherOwned(const std::vector<float>& owned, int perNode, std::vector<float>& whole) {
  std::vector<Piece> pieces;
  for (int r = 0; r < ranks_; ++r) pieces.push_back(pieceOf(r));
  gatherOwnedNodes(communicator_, rank_ == 0, pieces, whole_.extent, owned, perNode, whole);
}

namespace {
void toBuffer(const std::vector<float>& values, exec::Buffer<float>& buffer) {
  if (buffer.size() != values.size()) buffer = exec::Buffer<float>(exec::MemorySpace::Host, values.size());
  std::copy(values.begin(), values.end(), buffer.data());
}
}  // namespace

const lbm::HostFields& DistributedSolver::fetchFields(bool wantDensity, bool wantVelocity) {
  const lbm::HostFields& local = local_->fetchFields(wantDensity, wantVelocity);
  std::vector<float> whole;
  if (wantDensity) {
    gatherOwned(ownedValues(piece_, local.density.data(), 1), 1, whole);
    if (rank_ == 0) toBuffer(whole, fields_.density);
  }
  if (wantVelocity) {
    gatherOwned(ownedValues(piece_, local.velocity.data(), 3), 3, whole);
    if (rank_ == 0) toBuffer(whole, fields_.velocity);
  }
  return fields_;
}


std::vector<NodeBox> DistributedSolver::pieceBoxes() const {
  std::vector<NodeBox> boxes;
  for (int r = 0; r < ranks_; ++r) boxes.push_back(pieceBox(pieceOf(r)));
  return boxes;
}

const DistributedSolver::PieceFields& DistributedSolver::pieceFields(bool wantDensity, bool wantVelocity) {
  const lbm::HostFields& local = local_->fetchFields(wantDensity, wantVelocity);
  const int perNode = (wantDensity ? 1 : 0) + (wantVelocity ? 3 : 0);
  const NodeBox box = pieceBox(piece_);
  const Extent& size = box.size;
  // Density and velocity side by side per node while layers travel.
  std::vector<float> values(static_cast<std::size_t>(box.cellCount()) * perNode);
  const Extent localExtent = piece_.localExtent();
  for (Index k = 0; k < piece_.owned(2); ++k)
    for (Index j = 0; j < piece_.owned(1); ++j)
      for (Index i = 0; i < piece_.owned(0); ++i) {
        const Index from = localExtent.linear(i + piece_.ownedBegin(0), j + piece_.ownedBegin(1), k + piece_.ownedBegin(2));
        float* to = values.data() + size.linear(i, j, k) * perNode;
        if (wantDensity) *to++ = local.density.data()[from];
        if (wantVelocity) std::copy_n(local.velocity.data() + 3 * from, 3, to);
      }
  // Axis by axis, each piece's first layer goes to the piece below it, which keeps it as its
  // last; a layer spans the axes already done in full (the relay fills edges and corners).
  for (int axis = 0; axis < 3; ++axis) {
    const bool sends = piece_.coords[axis] > 0, receives = piece_.coords[axis] + 1 < piece_.dims[axis];
    if (!sends && !receives) continue;
    Index range[3];
    for (int other = 0; other < 3; ++other) range[other] = other < axis ? size.size(other) : piece_.owned(other);
    range[axis] = 1;
    const auto layerNodes = [&](Index at, auto&& visit) {
      for (Index k = 0; k < range[2]; ++k)
        for (Index j = 0; j < range[1]; ++j)
          for (Index i = 0; i < range[0]; ++i) {
            Index position[3] = {i, j, k};
            position[axis] = at;
            visit(values.data() + size.linear(position[0], position[1], position[2]) * perNode);
          }
    };
    const std::size_t count = static_cast<std::size_t>(range[0] * range[1] * range[2]) * perNode;
    std::vector<float> outgoing, incoming(receives ? count : 0);
    if (sends) layerNodes(0, [&](const float* node) { outgoing.insert(outgoing.end(), node, node + perNode); });
    MPI_Sendrecv(outgoing.data(), static_cast<int>(outgoing.size()), MPI_FLOAT, sends ? neighbour_[axis][0] : MPI_PROC_NULL,
                 40 + axis, incoming.data(), static_cast<int>(incoming.size()), MPI_FLOAT,
                 receives ? neighbour_[axis][1] : MPI_PROC_NULL, 40 + axis, communicator_, MPI_STATUS_IGNORE);
    if (receives) {
      const float* from = incoming.data();
      layerNodes(size.size(axis) - 1, [&](float* node) {
        std::copy_n(from, perNode, node);
        from += perNode;
      });
    }
  }
  PieceFields& result = pieceFields_;
  result.box = box;
  const std::size_t nodes = static_cast<std::size_t>(box.cellCount());
  result.density.assign(wantDensity ? nodes : 0, 0.0f);
  result.velocity.assign(wantVelocity ? 3 * nodes : 0, 0.0f);
  for (std::size_t n = 0; n < nodes; ++n) {
    const float* node = values.data() + n * perNode;
    if (wantDensity) result.density[n] = *node++;
    if (wantVelocity) std::copy_n(node, 3, result.velocity.data() + 3 * n);
  }
  return result;
}

std::vector<float> DistributedSolver::populationsOnHost() {
  const int q = local_->populationCount();
  const std::vector<float> soa = local_->populationsOnHost();
  const Index localNodes = local_->nodeCount();
  std::vector<float> nodeMajor(soa.size());
  for (Index node = 0; node < localNodes; ++node)
    for (int p = 0; p < q; ++p) nodeMajor[node * q + p] = soa[p * localNodes + node];
  std::vector<float> whole;
  gatherOwned(ownedValues(piece_, nodeMajor.data(), q), q, whole);
  if (rank_ != 0) return {};
  std::vector<float> result(whole.size());
  const Index n = nodeCount();
  for (Index node = 0; node < n; ++node)
    for (int p = 0; p < q; ++p) result[p * n + node] = whole[node * q + p];
  return result;
}

std::array<double, 3> DistributedSolver::obstacleForce() {
  // (whole-grid node, fx, fy, fz) for every boundary node of this piece.
  const std::vector<double> perNode = local_->obstacleForcePerNode();
  const auto& links = local_->obstacleLinks();
  const Extent local = piece_.localExtent();
  std::vector<double> entries;
  for (std::size_t n = 0; n < links.size(); ++n) {
    Index position[3];
    local.coordinates(links[n].node, position[0], position[1], position[2]);
    for (int axis = 0; axis < 3; ++axis) position[axis] += piece_.origin(axis);
    entries.push_back(static_cast<double>(whole_.extent.linear(position[0], position[1], position[2])));
    entries.insert(entries.end(), perNode.begin() + 3 * n, perNode.begin() + 3 * n + 3);
  }
  const ContiguousType entry(4, MPI_DOUBLE);
  std::vector<int> offsets;
  const std::vector<double> gathered = gatherUnits(communicator_, rank_ == 0, ranks_, entries.data(),
                                                   static_cast<int>(entries.size() / 4), 4, entry.type, offsets);
  std::array<double, 3> total{0.0, 0.0, 0.0};
  if (rank_ == 0) {
    std::vector<std::size_t> order(gathered.size() / 4);
    for (std::size_t e = 0; e < order.size(); ++e) order[e] = e;
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return gathered[4 * a] < gathered[4 * b]; });
    for (std::size_t e : order)
      for (int axis = 0; axis < 3; ++axis) total[axis] += gathered[4 * e + 1 + axis];
  }
  check(MPI_Bcast(total.data(), 3, MPI_DOUBLE, 0, communicator_), "MPI_Bcast");
  return total;
}

}  // namespace octoflow::parallel
