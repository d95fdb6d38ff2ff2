#include "parallel/DistributedAmrLbm.hpp"

#include <algorithm>
#include <chrono>
#include <climits>
#include <exception>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <unordered_set>

#include "lbm/Lattice.hpp"
#include "parallel/LayerCopy.hpp"
#include "parallel/MpiSupport.hpp"

namespace octoflow::parallel {

using namespace detail;

DistributedAmrLbm::DistributedAmrLbm(MPI_Comm communicator, const amr::Octree& octree,
                                     const amr::AmrLbmSettings& settings, const amr::SolidTest& solid)
    : DistributedAmrLbm(communicator, octree, settings, [&](const amr::AmrLbmSettings& mine) {
        return std::make_unique<amr::AmrLbm>(octree, mine, solid);
      }) {}

DistributedAmrLbm::DistributedAmrLbm(MPI_Comm communicator, const amr::Octree& octree,
                                     const amr::AmrLbmSettings& settings, const std::vector<std::uint8_t>& solidPoints,
                                     const amr::AmrLbmHandOver* previous)
    : DistributedAmrLbm(communicator, octree, settings, [&](const amr::AmrLbmSettings& mine) {
        return previous ? std::make_unique<amr::AmrLbm>(octree, mine, solidPoints, *previous)
                        : std::make_unique<amr::AmrLbm>(octree, mine, solidPoints);
      }) {}

DistributedAmrLbm::DistributedAmrLbm(MPI_Comm communicator, const amr::Octree& octree, const amr::AmrLbmSettings& settings,
                                     const std::function<std::unique_ptr<amr::AmrLbm>(const amr::AmrLbmSettings&)>& make) {
  check(MPI_Comm_dup(communicator, &duplicate_.handle), "MPI_Comm_dup");
  communicator_ = duplicate_.handle;
  MPI_Comm_rank(communicator_, &rank_);
  MPI_Comm_size(communicator_, &ranks_);
  const HostPlace host = takeDeviceOrCores(communicator_, settings.backend);
  const amr::BlockLayout layout = amr::leafBlocks(octree, settings.leafCells);
  runStarts_ = amr::balancedRuns(layout, ranks_);  // the same on every rank (or the same error)
  amr::AmrLbmSettings mine = settings;
  mine.owned = amr::runOf(runStarts_, rank_);
  local_ = make(mine);
  if (ranks_ == 1) return;

  const std::vector<std::int32_t>& held = local_->heldBlocks();
  for (std::size_t h = 0; h < held.size(); ++h) heldIndex_.emplace(held[h], static_cast<std::int32_t>(h));
  const amr::BlockTraffic traffic = amr::blockTraffic(layout, runStarts_, rank_);
  const std::size_t ranks = static_cast<std::size_t>(ranks_);
  send_.resize(traffic.send.size());
  receive_.resize(traffic.send.size());
  std::vector<std::size_t> largest[2] = {std::vector<std::size_t>(ranks, 0), std::vector<std::size_t>(ranks, 0)};
  for (std::size_t level = 0; level < traffic.send.size(); ++level)
    for (std::size_t peer = 0; peer < ranks; ++peer) {
      send_[level].push_back(messageOf(traffic.send[level][peer]));
      receive_[level].push_back(messageOf(traffic.receive[level][peer]));
      // A message's eddy parts are fewer than its populations (one value a point of the same boxes).
      largest[0][peer] = std::max(largest[0][peer], send_[level][peer].values(Part::Populations));
      largest[1][peer] = std::max(largest[1][peer], receive_[level][peer].values(Part::Populations));
    }
  bool fits = true;
  for (int way = 0; way < 2; ++way)
    for (const std::size_t values : largest[way]) fits = fits && values <= INT_MAX;
  if (!everyRank(communicator_, fits))
    throw Error("octree LBM over MPI ranks: a message between two ranks holds over 2^31 values; use more ranks");
  const exec::MemorySpace working = exec::workingSpace(settings.backend), staging = exec::stagingSpace(settings.backend);
  for (auto* buffers : {&sendWorking_, &receiveWorking_, &sendStaging_, &receiveStaging_}) buffers->resize(ranks);
  if (settings.backend == exec::Backend::Cuda) {
    // Channel p: this rank's messages to rank p and rank p's to this one (none with itself).
    std::vector<PeerChannel> channels(ranks);
    for (std::size_t peer = 0; peer < ranks; ++peer)
      if (static_cast<int>(peer) != rank_)
        channels[peer] = PeerChannel{largest[0][peer] ? static_cast<int>(peer) : MPI_PROC_NULL,
                                     largest[1][peer] ? static_cast<int>(peer) : MPI_PROC_NULL, 0,
                                     largest[1][peer] * sizeof(float)};
    peers_.connect(communicator_, channels, host.hostOfRank, rank_);
    peerParity_.assign(ranks, 0);
  }
  local_->onLevelStepped([this](int level) { exchange(level, Part::Populations); });
  if (local_->workingState().eddy) local_->onEddyMade([this](int level) { exchange(level, Part::Eddy); });
  if (peers_.connected()) return;  // messages are packed into the peers' inboxes and unpacked from this rank's
  staged_ = working != staging;
  for (std::size_t peer = 0; peer < ranks; ++peer) {
    sendWorking_[peer] = exec::Buffer<float>(working, largest[0][peer]);
    receiveWorking_[peer] = exec::Buffer<float>(working, largest[1][peer]);
    if (!staged_) continue;
    sendStaging_[peer] = exec::Buffer<float>(staging, largest[0][peer]);
    receiveStaging_[peer] = exec::Buffer<float>(staging, largest[1][peer]);
  }
}

DistributedAmrLbm::~DistributedAmrLbm() {
  peers_.closeMappings();
  // A peer frees the inbox this rank had open only once every rank has closed its mappings (not
  // when unwinding from an error: the caller aborts every rank then).
  if (peers_.connected() && std::uncaught_exceptions() == 0) MPI_Barrier(communicator_);
}

const char* DistributedAmrLbm::haloPath() const {
  if (local_->settings().backend != exec::Backend::Cuda) return "host";
  return peers_.connected() ? "CUDA IPC" : "pinned staging";
}

DistributedAmrLbm::Message DistributedAmrLbm::messageOf(const std::vector<amr::BlockBox>& boxes) const {
  const int B = local_->layout().blockNodes;
  const std::int64_t Q = lbm::latticeQ(local_->settings().lattice), N = local_->layout().pointsPerBlock();
  const bool eddy = local_->workingState().eddy != nullptr;
  std::vector<std::int64_t> post, pre, eddyPoints;
  // The eddy parts a coarser level's pulls read lie where they read the pre-collision state (the
  // boxes of pre-collision values); a point in several boxes sends its eddy part once: the first
  // time in box order, which sender and receiver share (block numbers of the whole layout).
  std::unordered_set<std::int64_t> eddySeen;
  for (const amr::BlockBox& box : boxes) {
    const std::int64_t block = heldIndex_.at(box.block);  // the box's block as the solver numbers it
    // Pre-collision state: the block's slot (other levels read it, so it has one).
    const std::int64_t slot = box.preCollision ? local_->sourceSlot(static_cast<int>(block)) : block;
    if (slot < 0) throw Error("octree LBM over MPI ranks: a block read across levels keeps no pre-collision state");
    std::vector<std::int64_t>& index = box.preCollision ? pre : post;
    for (std::int64_t q = 0; q < Q; ++q)
      for (int k = box.lo[2]; k <= box.hi[2]; ++k)
        for (int j = box.lo[1]; j <= box.hi[1]; ++j)
          for (int i = box.lo[0]; i <= box.hi[0]; ++i)
            index.push_back((slot * Q + q) * N + i + B * (j + std::int64_t{B} * k));
    if (!eddy || !box.preCollision) continue;
    for (int k = box.lo[2]; k <= box.hi[2]; ++k)
      for (int j = box.lo[1]; j <= box.hi[1]; ++j)
        for (int i = box.lo[0]; i <= box.hi[0]; ++i) {
          const std::int64_t point = i + B * (j + std::int64_t{B} * k);
          if (eddySeen.insert(box.block * N + point).second) eddyPoints.push_back(block * N + point);
        }
  }
  const exec::MemorySpace space = exec::workingSpace(local_->settings().backend);
  Message message{exec::Buffer<std::int64_t>(space, post.size()), exec::Buffer<std::int64_t>(space, pre.size()),
                  exec::Buffer<std::int64_t>(space, eddyPoints.size())};
  if (!post.empty()) message.postIndex.copyFrom(post.data(), post.size());
  if (!pre.empty()) message.preIndex.copyFrom(pre.data(), pre.size());
  if (!eddyPoints.empty()) message.eddyIndex.copyFrom(eddyPoints.data(), eddyPoints.size());
  return message;
}

void DistributedAmrLbm::copyMessage(const Message& message, Part part, int level, float* working, bool pack) {
  const amr::AmrLbmLevels& state = local_->workingState();
  const int parity = state.parity[level];
  // The populations: the post values, then the pre ones; the eddy parts alone.
  const bool eddy = part == Part::Eddy;
  const IndexedCopy copies[2] = {
      eddy ? IndexedCopy{state.eddy, working, message.eddyIndex.data(), pack}
           : IndexedCopy{state.post[parity], working, message.postIndex.data(), pack},
      IndexedCopy{state.pre[parity], working + message.postIndex.size(), message.preIndex.data(), pack}};
  const Index counts[2] = {static_cast<Index>(eddy ? message.eddyIndex.size() : message.postIndex.size()),
                           static_cast<Index>(eddy ? 0 : message.preIndex.size())};
  for (int n = 0; n < 2; ++n) {
    if (counts[n] == 0) continue;
#if OCTOFLOW_HAVE_CUDA
    if (local_->settings().backend == exec::Backend::Cuda) {
      copyIndexedCuda(copies[n], counts[n]);
      continue;
    }
#endif
    copyIndexedCpu(copies[n], counts[n]);
  }
}

void DistributedAmrLbm::exchange(int level, Part part) {
  const std::vector<Message>& send = send_[static_cast<std::size_t>(level)];
  const std::vector<Message>& receive = receive_[static_cast<std::size_t>(level)];
  bool any = false;
  for (std::size_t peer = 0; peer < send.size(); ++peer) any = any || send[peer].values(part) || receive[peer].values(part);
  if (!any) return;
  const int tag = tagOf(level, part);
  const auto started = std::chrono::steady_clock::now();
  if (peers_.connected()) {
    exchangeOverCudaIpc(send, receive, level, part);
    ++traffic_.exchanges;
    traffic_.seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    return;
  }
  std::vector<MPI_Request> requests;
  for (int peer = 0; peer < ranks_; ++peer) {
    const std::size_t p = static_cast<std::size_t>(peer), values = receive[p].values(part);
    if (values == 0) continue;
    requests.emplace_back();
    float* inbox = staged_ ? receiveStaging_[p].data() : receiveWorking_[p].data();
    check(MPI_Irecv(inbox, static_cast<int>(values), MPI_FLOAT, peer, tag, communicator_, &requests.back()), "MPI_Irecv");
  }
  for (int peer = 0; peer < ranks_; ++peer) {
    const std::size_t p = static_cast<std::size_t>(peer), values = send[p].values(part);
    if (values == 0) continue;
    // Packed after the sub-step's kernels (default stream); the copy to the host waits for it.
    copyMessage(send[p], part, level, sendWorking_[p].data(), true);
    float* outbox = sendWorking_[p].data();
    if (staged_) {
      exec::copyBytes(sendStaging_[p].data(), outbox, values * sizeof(float));
      outbox = sendStaging_[p].data();
    }
    requests.emplace_back();
    check(MPI_Isend(outbox, static_cast<int>(values), MPI_FLOAT, peer, tag, communicator_, &requests.back()), "MPI_Isend");
    traffic_.bytesSent += static_cast<double>(values * sizeof(float));
  }
  check(MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE), "MPI_Waitall");
  for (int peer = 0; peer < ranks_; ++peer) {
    const std::size_t p = static_cast<std::size_t>(peer), values = receive[p].values(part);
    if (values == 0) continue;
    if (staged_) exec::copyBytes(receiveWorking_[p].data(), receiveStaging_[p].data(), values * sizeof(float));
    copyMessage(receive[p], part, level, receiveWorking_[p].data(), false);
  }
  ++traffic_.exchanges;
  traffic_.seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
}

void DistributedAmrLbm::exchangeOverCudaIpc(const std::vector<Message>& send, const std::vector<Message>& receive,
                                            int level, Part part) {
  const int tag = tagOf(level, part);
  // Packed into the peer's inbox half of this exchange on the legacy default stream: it waits for
  // the sub-step's kernels, which run on it or on blocking streams (amr/AmrLbmCuda.cu; a
  // non-blocking one would need an event here), and the next sub-step's kernels wait for the
  // unpacking below. That half was last read two exchanges with the peer ago, and the peer
  // synchronised its stream (so had unpacked it) before its empty message of the last one.
  for (int peer = 0; peer < ranks_; ++peer) {
    const std::size_t p = static_cast<std::size_t>(peer);
    if (send[p].values(part) == 0) continue;
    copyMessage(send[p], part, level, reinterpret_cast<float*>(peers_.outbox(peer, peerParity_[p])), true);
    traffic_.bytesSent += static_cast<double>(send[p].values(part) * sizeof(float));
  }
  exec::synchronizeStream(nullptr);  // the copies have landed, and this rank's last unpacking is done
  std::vector<MPI_Request> requests;
  for (int peer = 0; peer < ranks_; ++peer) {
    const std::size_t p = static_cast<std::size_t>(peer);
    if (send[p].values(part) == 0 && receive[p].values(part) == 0) continue;
    requests.emplace_back();
    check(MPI_Irecv(nullptr, 0, MPI_FLOAT, peer, tag, communicator_, &requests.back()), "MPI_Irecv");
    requests.emplace_back();
    check(MPI_Isend(nullptr, 0, MPI_FLOAT, peer, tag, communicator_, &requests.back()), "MPI_Isend");
  }
  check(MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE), "MPI_Waitall");
  for (int peer = 0; peer < ranks_; ++peer) {
    const std::size_t p = static_cast<std::size_t>(peer);
    if (send[p].values(part) == 0 && receive[p].values(part) == 0) continue;
    if (receive[p].values(part))
      copyMessage(receive[p], part, level, reinterpret_cast<float*>(peers_.inbox(peer, peerParity_[p])), false);
    peerParity_[p] = 1 - peerParity_[p];
  }
}

template <class T>
void DistributedAmrLbm::gatherRuns(const T* mine, std::int64_t perBlock, bool slotsOnly, std::vector<T>& whole, int root) {
  const amr::BlockLayout& layout = local_->layout();
  std::vector<int> counts(static_cast<std::size_t>(ranks_)), offsets(static_cast<std::size_t>(ranks_));
  std::int64_t total = 0;
  for (int r = 0; r < ranks_; ++r) {
    std::int64_t blocks = 0;
    for (std::int32_t b = runStarts_[static_cast<std::size_t>(r)]; b < runStarts_[static_cast<std::size_t>(r) + 1]; ++b)
      blocks += !slotsOnly || layout.crossLevelSource(static_cast<std::size_t>(b)) ? 1 : 0;
    if (static_cast<double>(total + blocks * perBlock) > INT_MAX)
      throw Error("octree LBM over MPI ranks: the state gathered holds over 2^31 values a kind (" +
                  std::to_string(layout.blocks.size()) + " blocks), too many to gather on one rank");
    offsets[static_cast<std::size_t>(r)] = static_cast<int>(total);
    counts[static_cast<std::size_t>(r)] = static_cast<int>(blocks * perBlock);
    total += blocks * perBlock;
  }
  // Each rank's own blocks come first in its arrays and are a run of the block order: rank order is
  // block order.
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double> || std::is_same_v<T, std::uint8_t>,
                "floats, doubles or bytes");
  const MPI_Datatype type = std::is_same_v<T, float>    ? MPI_FLOAT
                            : std::is_same_v<T, double> ? MPI_DOUBLE
                                                        : MPI_UNSIGNED_CHAR;
  const int count = counts[static_cast<std::size_t>(rank_)];
  if (root == kEveryRank) {
    whole.resize(static_cast<std::size_t>(total));
    check(MPI_Allgatherv(mine, count, type, whole.data(), counts.data(), offsets.data(), type, communicator_),
          "MPI_Allgatherv");
    return;
  }
  whole.assign(rank_ == root ? static_cast<std::size_t>(total) : 0, T{});
  check(MPI_Gatherv(mine, count, type, whole.data(), counts.data(), offsets.data(), type, root, communicator_),
        "MPI_Gatherv");
}

void DistributedAmrLbm::fetchMoments(std::vector<float>& density, std::vector<float>& velocity, int root) {
  std::vector<float> ownDensity, ownVelocity;
  fetchOwnMoments(ownDensity, ownVelocity);
  const std::int64_t points = local_->layout().pointsPerBlock();
  gatherRuns(ownDensity.data(), points, false, density, root);
  gatherRuns(ownVelocity.data(), 3 * points, false, velocity, root);
}

void DistributedAmrLbm::fetchVelocity(std::vector<float>& velocity, int root) {
  const amr::BlockRun own = amr::runOf(runStarts_, rank_);
  std::vector<float> ownVelocity;
  local_->fetchVelocity(ownVelocity, static_cast<std::size_t>(own.end - own.first));
  gatherRuns(ownVelocity.data(), 3 * local_->layout().pointsPerBlock(), false, velocity, root);
}

void DistributedAmrLbm::fetchOwnMoments(std::vector<float>& density, std::vector<float>& velocity) {
  const amr::BlockRun own = amr::runOf(runStarts_, rank_);
  local_->fetchMoments(density, velocity, static_cast<std::size_t>(own.end - own.first));
}

const std::vector<std::int32_t>& DistributedAmrLbm::blocksAround() {
  if (around_.made) return around_.blocks;
  // Each rank works out every rank's blocks from the layout alone: what it sends is what the others
  // expect.
  const amr::BlockLayout& layout = local_->layout();
  const amr::Octree& octree = local_->octree();
  const auto readBy = [&](int rank) {
    return amr::blocksAround(layout, amr::runOf(runStarts_, rank), octree.rootBlocks(), octree.periodic());
  };
  const auto steppedBy = [&](const std::vector<std::int32_t>& blocks, int rank) {
    const amr::BlockRun run = amr::runOf(runStarts_, rank);
    std::vector<std::int32_t> in;
    for (const std::int32_t b : blocks)
      if (run.holds(b)) in.push_back(b);
    return in;
  };
  around_ = {};
  around_.blocks = readBy(rank_);
  around_.send.resize(static_cast<std::size_t>(ranks_));
  around_.receive.resize(static_cast<std::size_t>(ranks_));
  for (int r = 0; r < ranks_; ++r) {
    if (r == rank_) continue;
    around_.send[static_cast<std::size_t>(r)] = steppedBy(readBy(r), rank_);
    around_.receive[static_cast<std::size_t>(r)] = steppedBy(around_.blocks, r);
  }
  around_.made = true;
  return around_.blocks;
}

void DistributedAmrLbm::fetchMomentsAround(std::vector<float>& density, std::vector<float>& velocity) {
  const std::vector<std::int32_t>& held = blocksAround();
  const std::size_t points = static_cast<std::size_t>(local_->layout().pointsPerBlock());
  const std::size_t total = held.size() * points;
  density.resize(total);
  velocity.resize(3 * total);
  // A held block's place in the arrays (`held` is in block order).
  const auto firstPointOf = [&](std::int32_t block) {
    return static_cast<std::size_t>(std::lower_bound(held.begin(), held.end(), block) - held.begin()) * points;
  };
  // The own blocks' moments (a run of `held`) straight into their places, and sent from there.
  const amr::BlockRun own = amr::runOf(runStarts_, rank_);
  const std::size_t ownFirst = firstPointOf(own.first);
  local_->copyMoments(density.data() + ownFirst, velocity.data() + 3 * ownFirst,
                      static_cast<std::size_t>(own.end - own.first));
  // A block travels as its densities then its velocities: one MPI element of 4 values a point.
  const std::size_t blockValues = 4 * points;
  std::vector<int> sendCounts(static_cast<std::size_t>(ranks_)), sendStarts(sendCounts.size()),
      receiveCounts(sendCounts.size()), receiveStarts(sendCounts.size());
  int sent = 0, received = 0;
  for (std::size_t r = 0; r < sendCounts.size(); ++r) {
    sendStarts[r] = sent;
    sendCounts[r] = static_cast<int>(around_.send[r].size());
    sent += sendCounts[r];
    receiveStarts[r] = received;
    receiveCounts[r] = static_cast<int>(around_.receive[r].size());
    received += receiveCounts[r];
  }
  std::vector<float> outgoing(static_cast<std::size_t>(sent) * blockValues), incoming(static_cast<std::size_t>(received) * blockValues);
  float* next = outgoing.data();
  for (const std::vector<std::int32_t>& blocks : around_.send)
    for (const std::int32_t b : blocks) {
      const std::size_t first = ownFirst + static_cast<std::size_t>(b - own.first) * points;
      next = std::copy_n(density.data() + first, points, next);
      next = std::copy_n(velocity.data() + 3 * first, 3 * points, next);
    }
  MPI_Datatype block = MPI_DATATYPE_NULL;
  check(MPI_Type_contiguous(static_cast<int>(blockValues), MPI_FLOAT, &block), "MPI_Type_contiguous");
  check(MPI_Type_commit(&block), "MPI_Type_commit");
  const int status = MPI_Alltoallv(outgoing.data(), sendCounts.data(), sendStarts.data(), block, incoming.data(),
                                   receiveCounts.data(), receiveStarts.data(), block, communicator_);
  MPI_Type_free(&block);
  check(status, "MPI_Alltoallv");
  const float* arrived = incoming.data();
  for (const std::vector<std::int32_t>& blocks : around_.receive)
    for (const std::int32_t b : blocks) {
      const std::size_t first = firstPointOf(b);
      std::copy_n(arrived, points, density.data() + first);
      std::copy_n(arrived + points, 3 * points, velocity.data() + 3 * first);
      arrived += blockValues;
    }
}

void DistributedAmrLbm::setPickedPoints(const std::vector<std::int64_t>& points,
                                        const std::vector<std::vector<std::int64_t>>& pieces) {
  const std::int64_t perBlock = local_->layout().pointsPerBlock();
  const std::int64_t total = static_cast<std::int64_t>(local_->layout().blocks.size()) * perBlock;
  if (points.size() > static_cast<std::size_t>(INT_MAX / 4))
    throw std::invalid_argument("octree LBM over MPI ranks: over 2^31 / 4 picked points");
  if (!pieces.empty() && pieces.size() != static_cast<std::size_t>(ranks_))
    throw std::invalid_argument("octree LBM over MPI ranks: picked pieces for " + std::to_string(pieces.size()) +
                                " ranks, not " + std::to_string(ranks_));
  // Each point's rank: the one whose run holds its block (runs in rank order, by block), and its
  // index among that rank's points.
  std::vector<std::vector<std::int64_t>> byRank(static_cast<std::size_t>(ranks_));
  std::vector<int> rankOf(points.size());
  std::vector<std::int64_t> indexInRank(points.size());
  for (std::size_t n = 0; n < points.size(); ++n) {
    if (points[n] < 0 || points[n] >= total)
      throw std::invalid_argument("octree LBM over MPI ranks: picked point " + std::to_string(points[n]) +
                                  " is not one of the blocks' " + std::to_string(total));
    const std::int32_t block = static_cast<std::int32_t>(points[n] / perBlock);
    const auto rank = std::upper_bound(runStarts_.begin(), runStarts_.end(), block) - runStarts_.begin() - 1;
    rankOf[n] = static_cast<int>(rank);
    indexInRank[n] = static_cast<std::int64_t>(byRank[static_cast<std::size_t>(rank)].size());
    byRank[static_cast<std::size_t>(rank)].push_back(static_cast<std::int64_t>(n));
  }
  picked_ = {};
  picked_.counts.resize(static_cast<std::size_t>(ranks_));
  picked_.starts.resize(static_cast<std::size_t>(ranks_));
  for (std::size_t r = 0; r < byRank.size(); ++r) {
    picked_.counts[r] = static_cast<int>(byRank[r].size());
    picked_.starts[r] = static_cast<int>(picked_.listPosition.size());
    picked_.listPosition.insert(picked_.listPosition.end(), byRank[r].begin(), byRank[r].end());
  }
  // The pieces: this rank sends each rank the values of its own points that the piece lists, in
  // the piece's order, and takes from each rank its values of the rank's own piece in the same.
  if (!pieces.empty()) {
    picked_.pieces = true;
    picked_.pieceSends.resize(static_cast<std::size_t>(ranks_));
    picked_.pieceReceives.resize(static_cast<std::size_t>(ranks_));
    std::vector<std::size_t> sentBy(static_cast<std::size_t>(ranks_), 0);  // values a rank sends, every rank's
    for (std::size_t r = 0; r < pieces.size(); ++r) {
      if (pieces[r].size() > static_cast<std::size_t>(INT_MAX / 4))
        throw std::invalid_argument("octree LBM over MPI ranks: a piece of over 2^31 / 4 picked points");
      for (std::size_t k = 0; k < pieces[r].size(); ++k) {
        const std::int64_t position = pieces[r][k];
        if (position < 0 || position >= static_cast<std::int64_t>(points.size()))
          throw std::invalid_argument("octree LBM over MPI ranks: piece " + std::to_string(r) + " takes position " +
                                      std::to_string(position) + " of " + std::to_string(points.size()) + " picked points");
        const std::size_t n = static_cast<std::size_t>(position);
        // Checked on every rank alike: all refuse, or none.
        if (++sentBy[static_cast<std::size_t>(rankOf[n])] > static_cast<std::size_t>(INT_MAX / 4))
          throw std::invalid_argument("octree LBM over MPI ranks: the pieces take over 2^31 / 4 picked points from one rank");
        if (rankOf[n] == rank_) picked_.pieceSends[r].push_back(indexInRank[n]);
        if (static_cast<int>(r) == rank_) picked_.pieceReceives[static_cast<std::size_t>(rankOf[n])].push_back(static_cast<std::int64_t>(k));
      }
    }
    picked_.pieceLength = pieces[static_cast<std::size_t>(rank_)].size();
  }
  // Own blocks come first in this rank's numbering.
  const std::vector<std::int64_t>& mine = byRank[static_cast<std::size_t>(rank_)];
  const std::int64_t ownFirstPoint = static_cast<std::int64_t>(runStarts_[static_cast<std::size_t>(rank_)]) * perBlock;
  std::vector<std::int64_t> own(mine.size());
  for (std::size_t n = 0; n < mine.size(); ++n) own[n] = points[static_cast<std::size_t>(mine[n])] - ownFirstPoint;
  const exec::MemorySpace space = exec::workingSpace(local_->settings().backend);
  picked_.own = exec::Buffer<std::int64_t>(space, own.size());
  picked_.own.copyFrom(own.data(), own.size());
  picked_.values = exec::Buffer<float>(space, 4 * own.size());
}

void DistributedAmrLbm::fetchOwnPickedValues() {
  if (picked_.counts.empty()) throw std::logic_error("picked points gathered before setPickedPoints");
  // Densities then velocities, one array: one copy to the host. Only the own blocks' moments are
  // computed (the picked points lie in them).
  const std::size_t mine = picked_.own.size();
  const amr::BlockRun own = amr::runOf(runStarts_, rank_);
  if (mine)
    local_->gatherPoints(picked_.own.data(), static_cast<std::int64_t>(mine), picked_.values.data(),
                         picked_.values.data() + mine, static_cast<std::size_t>(own.end - own.first));
  picked_.ownValues.resize(4 * mine);
  picked_.values.copyTo(picked_.ownValues.data(), 4 * mine);
}

void DistributedAmrLbm::gatherPickedPiece(std::vector<float>& density, std::vector<float>& velocity) {
  if (!picked_.pieces) throw std::logic_error("gatherPickedPiece before setPickedPoints with pieces");
  fetchOwnPickedValues();
  const std::size_t mine = picked_.own.size();
  // A point travels as its density and velocity, 4 values.
  std::vector<int> sendCounts(static_cast<std::size_t>(ranks_)), sendStarts(sendCounts.size()),
      receiveCounts(sendCounts.size()), receiveStarts(sendCounts.size());
  std::size_t sent = 0, received = 0;
  for (std::size_t r = 0; r < sendCounts.size(); ++r) {
    sendStarts[r] = static_cast<int>(4 * sent);
    sendCounts[r] = static_cast<int>(4 * picked_.pieceSends[r].size());
    sent += picked_.pieceSends[r].size();
    receiveStarts[r] = static_cast<int>(4 * received);
    receiveCounts[r] = static_cast<int>(4 * picked_.pieceReceives[r].size());
    received += picked_.pieceReceives[r].size();
  }
  std::vector<float> outgoing(4 * sent), incoming(4 * received);
  float* next = outgoing.data();
  for (const std::vector<std::int64_t>& slots : picked_.pieceSends)
    for (const std::int64_t slot : slots) {
      const std::size_t k = static_cast<std::size_t>(slot);
      *next++ = picked_.ownValues[k];
      next = std::copy_n(picked_.ownValues.data() + mine + 3 * k, 3, next);
    }
  check(MPI_Alltoallv(outgoing.data(), sendCounts.data(), sendStarts.data(), MPI_FLOAT, incoming.data(),
                      receiveCounts.data(), receiveStarts.data(), MPI_FLOAT, communicator_),
        "MPI_Alltoallv");
  density.resize(picked_.pieceLength);
  velocity.resize(3 * picked_.pieceLength);
  const float* arrived = incoming.data();
  for (const std::vector<std::int64_t>& places : picked_.pieceReceives)
    for (const std::int64_t place : places) {
      const std::size_t k = static_cast<std::size_t>(place);
      density[k] = *arrived++;
      std::copy_n(arrived, 3, velocity.data() + 3 * k);
      arrived += 3;
    }
}

void DistributedAmrLbm::gatherPickedPoints(std::vector<float>& density, std::vector<float>& velocity, int root) {
  // Each rank sends its points' densities then their velocities: one collective.
  fetchOwnPickedValues();
  const std::size_t mine = picked_.own.size();
  const bool receives = root == kEveryRank || rank_ == root;
  const std::size_t count = picked_.listPosition.size();
  picked_.gathered.resize(receives ? 4 * count : 0);
  std::vector<int> counts4(picked_.counts), starts4(picked_.starts);
  for (std::size_t r = 0; r < counts4.size(); ++r) {
    counts4[r] *= 4;
    starts4[r] *= 4;
  }
  const int sent = static_cast<int>(4 * mine);
  if (root == kEveryRank)
    check(MPI_Allgatherv(picked_.ownValues.data(), sent, MPI_FLOAT, picked_.gathered.data(), counts4.data(),
                         starts4.data(), MPI_FLOAT, communicator_),
          "MPI_Allgatherv");
  else
    check(MPI_Gatherv(picked_.ownValues.data(), sent, MPI_FLOAT, picked_.gathered.data(), counts4.data(), starts4.data(),
                      MPI_FLOAT, root, communicator_),
          "MPI_Gatherv");
  if (!receives) return;
  density.resize(count);
  velocity.resize(3 * count);
  for (std::size_t r = 0; r < picked_.counts.size(); ++r) {
    const std::size_t first = static_cast<std::size_t>(picked_.starts[r]), points = static_cast<std::size_t>(picked_.counts[r]);
    const float* rankDensity = picked_.gathered.data() + 4 * first;
    const float* rankVelocity = rankDensity + points;
    for (std::size_t k = 0; k < points; ++k) {
      const std::size_t at = static_cast<std::size_t>(picked_.listPosition[first + k]);
      density[at] = rankDensity[k];
      std::copy_n(rankVelocity + 3 * k, 3, velocity.data() + 3 * at);
    }
  }
}

std::vector<double> DistributedAmrLbm::gatherBlockValues(const std::vector<double>& mine) {
  const amr::BlockRun own = amr::runOf(runStarts_, rank_);
  if (mine.size() != static_cast<std::size_t>(own.end - own.first))
    throw std::logic_error("DistributedAmrLbm::gatherBlockValues: one value a block of the rank's run");
  std::vector<double> whole;
  gatherRuns(mine.data(), 1, false, whole, kEveryRank);
  return whole;
}

amr::AmrLbmSnapshot DistributedAmrLbm::snapshot(int root) {
  const amr::AmrLbmSnapshot held = local_->snapshot(static_cast<std::size_t>(local_->ownedBlocks()));  // own blocks only
  const std::int64_t perBlock = lbm::latticeQ(local_->settings().lattice) * local_->layout().pointsPerBlock();
  amr::AmrLbmSnapshot whole;
  whole.step = held.step;
  whole.parity = held.parity;
  for (int n = 0; n < 2; ++n) {
    gatherRuns(held.post[n].data(), perBlock, false, whole.post[n], root);
    gatherRuns(held.pre[n].data(), perBlock, true, whole.pre[n], root);
  }
  return whole;
}

amr::AmrLbmHandOver DistributedAmrLbm::hostCopy() {
  amr::AmrLbmHandOver copy{local_->octree(), local_->settings(), local_->layout(), snapshot(kEveryRank), {}, {}, nullptr};
  copy.settings.owned = {};
  // A solver holding no obstacle point keeps no mask: the others' may still have some.
  const std::uint8_t* solid = local_->workingSolid();
  if (!everyRank(communicator_, solid == nullptr)) {
    const std::int64_t points = local_->layout().pointsPerBlock();
    std::vector<std::uint8_t> mine(static_cast<std::size_t>(local_->ownedBlocks() * points), 0);
    if (solid) exec::copyBytes(mine.data(), solid, mine.size());
    gatherRuns(mine.data(), points, false, copy.solid, kEveryRank);
  }
  return copy;
}

amr::AmrLbmHandOver DistributedAmrLbm::handOver(const amr::Octree& next) {
  if (ranks_ == 1) return local_->handOver();
  // This rank's own blocks are on hand: its part of `next` reads them where they lie.
  const amr::BlockRun own = amr::runOf(runStarts_, rank_);
  std::vector<std::int32_t> onHand(local_->layout().blocks.size(), -1);
  for (std::int32_t b = own.first; b < own.end; ++b) onHand[static_cast<std::size_t>(b)] = b - own.first;
  amr::AmrLbmHandOver handed = hostCopyFor(next, &onHand);
  handed.resident = local_->releaseState();
  return handed;
}

amr::AmrLbmHandOver DistributedAmrLbm::hostCopyFor(const amr::Octree& next, const std::vector<std::int32_t>* onHand) {
  const amr::BlockLayout& layout = local_->layout();
  const std::size_t ranks = static_cast<std::size_t>(ranks_);
  // The old blocks this rank's part of the next solver reads, and every rank's.
  const amr::BlockLayout nextLayout = amr::leafBlocks(next, local_->settings().leafCells);
  const std::vector<std::int32_t> nextRuns = amr::balancedRuns(nextLayout, ranks_);
  std::vector<std::int32_t> nextHeld;
  const std::vector<std::int32_t> wanted =
      amr::adoptedBlocks(local_->octree(), layout, amr::heldBlocks(nextLayout, amr::runOf(nextRuns, rank_), nextHeld), onHand);
  std::vector<int> wantedCounts(ranks), wantedStarts(ranks, 0);
  const int count = static_cast<int>(wanted.size());
  check(MPI_Allgather(&count, 1, MPI_INT, wantedCounts.data(), 1, MPI_INT, communicator_), "MPI_Allgather");
  for (std::size_t r = 1; r < ranks; ++r) wantedStarts[r] = wantedStarts[r - 1] + wantedCounts[r - 1];
  std::vector<std::int32_t> everyWanted(static_cast<std::size_t>(wantedStarts.back() + wantedCounts.back()));
  check(MPI_Allgatherv(wanted.data(), count, MPI_INT32_T, everyWanted.data(), wantedCounts.data(), wantedStarts.data(),
                       MPI_INT32_T, communicator_),
        "MPI_Allgatherv");

  // A block's record: its post-collision state of both parities, then its pre-collision state of
  // both where it keeps one (crossLevelSource), then its obstacle points (as floats 0 and 1) where
  // any rank has some.
  // Only the own blocks some rank wants go to the host (`sentAt`: where each is in `held`,
  // `sentSlot`: its slot there).
  const amr::BlockRun own = amr::runOf(runStarts_, rank_);
  std::vector<std::int32_t> sentAt(static_cast<std::size_t>(local_->ownedBlocks()), -1), sentSlot(sentAt.size(), -1), sent;
  for (const std::int32_t block : everyWanted)
    if (own.holds(block)) sentAt[static_cast<std::size_t>(block - own.first)] = 0;
  std::int32_t sentSlots = 0;
  for (std::size_t local = 0; local < sentAt.size(); ++local) {
    if (sentAt[local] < 0) continue;
    sentAt[local] = static_cast<std::int32_t>(sent.size());
    if (local_->sourceSlot(static_cast<int>(local)) >= 0) sentSlot[local] = sentSlots++;
    sent.push_back(static_cast<std::int32_t>(local));  // own blocks come first in this rank's numbering
  }
  const amr::AmrLbmSnapshot held = local_->snapshotOf(sent);
  const std::int64_t perBlock = lbm::latticeQ(local_->settings().lattice) * layout.pointsPerBlock();
  const std::int64_t points = layout.pointsPerBlock();
  const std::uint8_t* solid = local_->workingSolid();
  const bool withSolid = !everyRank(communicator_, solid == nullptr);
  std::vector<std::uint8_t> ownSolid;
  if (withSolid) {
    ownSolid.assign(static_cast<std::size_t>(local_->ownedBlocks() * points), 0);
    if (solid) exec::copyBytes(ownSolid.data(), solid, ownSolid.size());
  }
  const auto recordValues = [&](std::int32_t block) {
    return 2 * perBlock * (layout.crossLevelSource(static_cast<std::size_t>(block)) ? 2 : 1) + (withSolid ? points : 0);
  };

  std::vector<int> sendCounts(ranks, 0), sendStarts(ranks, 0), receiveCounts(ranks, 0), receiveStarts(ranks, 0);
  std::vector<float> outgoing;
  std::int64_t outgoingValues = 0;  // reserved at once: grown record by record, the copies and faults doubled
  for (const std::int32_t block : everyWanted) outgoingValues += own.holds(block) ? recordValues(block) : 0;
  if (outgoingValues > INT_MAX)
    throw Error("octree LBM over MPI ranks: a regrid sends over 2^31 values from one rank; use more ranks");
  outgoing.reserve(static_cast<std::size_t>(outgoingValues));
  for (std::size_t r = 0; r < ranks; ++r) {
    sendStarts[r] = static_cast<int>(outgoing.size());
    for (int w = wantedStarts[r]; w < wantedStarts[r] + wantedCounts[r]; ++w) {
      const std::int32_t block = everyWanted[static_cast<std::size_t>(w)];
      if (!own.holds(block)) continue;
      const std::size_t local = static_cast<std::size_t>(block - own.first);
      const std::size_t at = static_cast<std::size_t>(sentAt[local]);
      for (int n = 0; n < 2; ++n)
        outgoing.insert(outgoing.end(), held.post[n].begin() + static_cast<std::ptrdiff_t>(at * perBlock),
                        held.post[n].begin() + static_cast<std::ptrdiff_t>((at + 1) * perBlock));
      if (layout.crossLevelSource(static_cast<std::size_t>(block))) {
        const std::size_t slot = static_cast<std::size_t>(sentSlot[local]);
        for (int n = 0; n < 2; ++n)
          outgoing.insert(outgoing.end(), held.pre[n].begin() + static_cast<std::ptrdiff_t>(slot * perBlock),
                          held.pre[n].begin() + static_cast<std::ptrdiff_t>((slot + 1) * perBlock));
      }
      if (withSolid)
        outgoing.insert(outgoing.end(), ownSolid.begin() + static_cast<std::ptrdiff_t>(local * points),
                        ownSolid.begin() + static_cast<std::ptrdiff_t>((local + 1) * points));
    }
    sendCounts[r] = static_cast<int>(outgoing.size()) - sendStarts[r];
  }
  std::int64_t incoming = 0;
  for (std::size_t r = 0; r < ranks; ++r) {
    std::int64_t values = 0;
    const amr::BlockRun theirs = amr::runOf(runStarts_, static_cast<int>(r));
    for (const std::int32_t block : wanted)
      if (theirs.holds(block)) values += recordValues(block);
    if (incoming + values > INT_MAX)
      throw Error("octree LBM over MPI ranks: a regrid brings over 2^31 values to one rank; use more ranks");
    receiveStarts[r] = static_cast<int>(incoming);
    receiveCounts[r] = static_cast<int>(values);
    incoming += values;
  }
  std::vector<float> arrived(static_cast<std::size_t>(incoming));
  check(MPI_Alltoallv(outgoing.data(), sendCounts.data(), sendStarts.data(), MPI_FLOAT, arrived.data(),
                      receiveCounts.data(), receiveStarts.data(), MPI_FLOAT, communicator_),
        "MPI_Alltoallv");

  // Every block of the next octree adopts some old block: an empty list would read as every block
  // (with blocks on hand, as none: the arrays hold the rest).
  if (wanted.empty() && !onHand) throw std::logic_error("DistributedAmrLbm::hostCopyFor: no block to adopt");
  // The wanted blocks, in block order, in a host copy of them alone: records arrive rank after
  // rank, each rank's in the order of `wanted`, and runs follow the block order.
  amr::AmrLbmHandOver copy{local_->octree(), local_->settings(), layout, {}, {}, wanted, nullptr};
  copy.settings.owned = {};
  copy.snapshot.step = held.step;
  copy.snapshot.parity = held.parity;
  std::size_t slots = 0;
  for (const std::int32_t block : wanted) slots += layout.crossLevelSource(static_cast<std::size_t>(block)) ? 1 : 0;
  for (int n = 0; n < 2; ++n) {
    copy.snapshot.post[n].resize(static_cast<std::size_t>(perBlock) * wanted.size());
    copy.snapshot.pre[n].resize(static_cast<std::size_t>(perBlock) * slots);
  }
  if (withSolid) copy.solid.resize(static_cast<std::size_t>(points) * wanted.size());
  std::size_t at = 0, slot = 0;
  for (std::size_t n = 0; n < wanted.size(); ++n) {
    const auto take = [&](std::vector<float>& into, std::size_t place) {
      std::copy_n(arrived.begin() + static_cast<std::ptrdiff_t>(at), perBlock,
                  into.begin() + static_cast<std::ptrdiff_t>(place * static_cast<std::size_t>(perBlock)));
      at += static_cast<std::size_t>(perBlock);
    };
    for (int parity = 0; parity < 2; ++parity) take(copy.snapshot.post[parity], n);
    if (layout.crossLevelSource(static_cast<std::size_t>(wanted[n]))) {
      for (int parity = 0; parity < 2; ++parity) take(copy.snapshot.pre[parity], slot);
      ++slot;
    }
    if (withSolid) {
      for (std::int64_t p = 0; p < points; ++p)
        copy.solid[n * static_cast<std::size_t>(points) + static_cast<std::size_t>(p)] =
            arrived[at + static_cast<std::size_t>(p)] != 0.0f ? 1 : 0;
      at += static_cast<std::size_t>(points);
    }
  }
  return copy;
}

std::array<double, 3> DistributedAmrLbm::obstacleForce() {
  std::vector<double> mine = local_->obstacleForceByLink();
  // Links are listed in block order and each rank's blocks are a run: rank order is link order.
  int count = static_cast<int>(mine.size());
  std::vector<int> counts(static_cast<std::size_t>(ranks_)), offsets(static_cast<std::size_t>(ranks_), 0);
  check(MPI_Allgather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, communicator_), "MPI_Allgather");
  for (int r = 1; r < ranks_; ++r) offsets[static_cast<std::size_t>(r)] = offsets[static_cast<std::size_t>(r) - 1] + counts[static_cast<std::size_t>(r) - 1];
  std::vector<double> all(static_cast<std::size_t>(offsets.back() + counts.back()));
  check(MPI_Allgatherv(mine.data(), count, MPI_DOUBLE, all.data(), counts.data(), offsets.data(), MPI_DOUBLE, communicator_),
        "MPI_Allgatherv");
  return amr::sumOfLinkForces(all);
}

}  // namespace octoflow::parallel
