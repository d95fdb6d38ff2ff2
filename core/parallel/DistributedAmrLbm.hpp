#pragma once
// The octree LBM over MPI ranks: every rank builds the same octree and blocks, and steps one
// contiguous run of blocks in block (Morton) order, the runs cut by work (amr/BlockShare.hpp: a
// block of level L sub-steps 2^L times a step). The sub-steps run in the same order on every rank
// (AmrLbm::advance), and after each sub-step of a level a rank sends the points of the level's
// blocks that other ranks' blocks can read (amr::pointsRead: a layer or two at each cut; the new
// post-collision state to readers of the same level, the new pre-collision one across levels):
// packed where the solver lives, straight into the reader's GPU memory between the GPUs of a host
// (CUDA IPC, parallel/PeerInboxes.hpp), else through host memory and MPI. Each point is updated by one rank from the
// same inputs in the same order as on one rank: results are bit-identical whatever the number of
// ranks. A rank holds the state of its own blocks and of the blocks their links lead to (ghosts,
// AmrLbm::heldLayout), nothing of the others.
#include <mpi.h>

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <unordered_map>
#include <vector>

#include "amr/AmrLbm.hpp"
#include "amr/BlockShare.hpp"
#include "exec/Memory.hpp"
#include "parallel/PeerInboxes.hpp"

namespace octoflow::parallel {

class DistributedAmrLbm {
public:
  // Collective: every rank of `communicator` builds the solver and steps its run of blocks.
  // `settings.owned` is set here. std::invalid_argument for more ranks than blocks.
  DistributedAmrLbm(MPI_Comm communicator, const amr::Octree& octree, const amr::AmrLbmSettings& settings,
                    const amr::SolidTest& solid = {});
  // The same with the obstacle points of every block (AmrLbm's mask), starting from `previous`
  // (every block of another octree: hostCopy() before a regrid) when given.
  DistributedAmrLbm(MPI_Comm communicator, const amr::Octree& octree, const amr::AmrLbmSettings& settings,
                    const std::vector<std::uint8_t>& solidPoints, const amr::AmrLbmHandOver* previous = nullptr);
  ~DistributedAmrLbm();
  DistributedAmrLbm(const DistributedAmrLbm&) = delete;
  DistributedAmrLbm& operator=(const DistributedAmrLbm&) = delete;

  // Every rank sets every block from the same function (no communication).
  void initialise(const amr::InitialState& state) { local_->initialise(state); }
  void advance(std::int64_t coarseSteps) { local_->advance(coarseSteps); }  // collective
  std::int64_t step() const { return local_->step(); }
  int rank() const { return rank_; }
  int ranks() const { return ranks_; }
  const amr::AmrLbm& local() const { return *local_; }
  const amr::BlockLayout& layout() const { return local_->layout(); }
  // Where each rank's run of blocks begins, and the end of the last (amr::balancedRuns).
  const std::vector<std::int32_t>& runStarts() const { return runStarts_; }

  // What the gathers below give a rank other than `root` (kEveryRank: every rank gets it all).
  static constexpr int kEveryRank = -1;
  // Collective. Density and velocity of every point of every block, on every rank or on `root`
  // only (as AmrLbm::fetchMoments of one solver of the whole octree; other ranks: empty).
  void fetchMoments(std::vector<float>& density, std::vector<float>& velocity, int root = kEveryRank);
  // Collective. The velocity of fetchMoments alone (what tracers move in: 3 values a point of 4).
  void fetchVelocity(std::vector<float>& velocity, int root = kEveryRank);
  // Not collective. The blocks whose moments fetchMomentsAround gives this rank, in block order:
  // the rank's run and the blocks around it (amr::blocksAround: what a picture of its blocks with a
  // layer of ghost cells reads, as the rank's piece of a parallel file or of Catalyst's data).
  const std::vector<std::int32_t>& blocksAround();
  // Collective. Density and velocity of the points of the blocks of blocksAround(), those blocks
  // alone in its order (block after block, as fetchMoments), bit for bit fetchMoments' values of
  // them: each block is sent by the rank that steps it to the ranks that read it, and only those.
  void fetchMomentsAround(std::vector<float>& density, std::vector<float>& velocity);
  // Points picked once and gathered often (a level-0 view: a small share of every block's points).
  // `setPickedPoints`: the points, whole-layout indices (block * points a block + the point's index
  // in its block), every rank the same list; not collective. `gatherPickedPoints` (collective): their
  // density and velocity (xyz) in the list's order on every rank or on `root` only (elsewhere left
  // as they are), each rank sending the values of its own run's points alone, taken where the
  // solver lives: the values of fetchMoments at those points, bit for bit. `pieces` (optional, the
  // same on every rank): for each rank, the positions in `points` of the values its piece takes,
  // in the piece's order (a position may be in several pieces); `gatherPickedPiece` (collective)
  // gives this rank those alone, each sent straight from the rank stepping its point.
  void setPickedPoints(const std::vector<std::int64_t>& points, const std::vector<std::vector<std::int64_t>>& pieces = {});
  void gatherPickedPoints(std::vector<float>& density, std::vector<float>& velocity, int root = kEveryRank);
  void gatherPickedPiece(std::vector<float>& density, std::vector<float>& velocity);
  // Not collective. Density and velocity of this rank's own run of blocks, in block order (the
  // first of the blocks it holds, AmrLbm::heldLayout; its ghosts left out).
  void fetchOwnMoments(std::vector<float>& density, std::vector<float>& velocity);
  // Collective. The state of every block on every rank or on `root` only (other ranks: no
  // populations), as one solver of the whole octree numbers it (AmrLbm::snapshot of such a solver:
  // bit for bit the same), and the host copy made of it on every rank (AmrLbm::adopt takes it on
  // any number of ranks).
  amr::AmrLbmSnapshot snapshot(int root = kEveryRank);
  amr::AmrLbmHandOver hostCopy();
  // Collective, before a regrid to `next` (an octree of the same root blocks): a host copy of this
  // solver (as hostCopy) of only the blocks that this rank's run of `next`'s blocks and their
  // ghosts adopt (amr::adoptedBlocks; AmrLbmHandOver::blocks lists them), sent by the ranks that
  // step them: its size is that of those blocks, not of the octree. A DistributedAmrLbm of `next` on the same ranks and settings takes it as `previous`
  // and starts where one of the whole host copy would, bit for bit.
  amr::AmrLbmHandOver hostCopyFor(const amr::Octree& next) { return hostCopyFor(next, nullptr); }
  // Collective: what a regrid to `next` hands over: each rank's state arrays (AmrLbm::releaseState:
  // the solver holds no state after, destroy it), which its part of `next` copies and makes its
  // points from where they lie, and a host copy (as hostCopyFor) of the other ranks' blocks that
  // part reads. On one rank AmrLbm::handOver.
  amr::AmrLbmHandOver handOver(const amr::Octree& next);
  // Collective. One value a block on every rank, in block order, from each rank's values of its
  // own run (`mine`: one a block of the run, in block order).
  std::vector<double> gatherBlockValues(const std::vector<double>& mine);
  // Every rank takes its blocks from a snapshot of every block (AmrLbm::restore; no communication).
  void restore(const amr::AmrLbmSnapshot& whole) { local_->restore(whole); }

  // Collective. The force on the obstacles after the last step, summed link by link in block order:
  // the same on every rank and as on one rank.
  std::array<double, 3> obstacleForce();

  // What has travelled so far: exchanges (one a sub-step of a level that has blocks to send or
  // receive; with CSM one more a step of a level for the finer level's eddy parts), bytes sent by
  // this rank, host seconds in them (copies and MPI).
  struct Traffic {
    std::int64_t exchanges = 0;
    double bytesSent = 0.0, seconds = 0.0;
  };
  const Traffic& traffic() const { return traffic_; }
  // How the messages travel: "host" (CPU ranks), "CUDA IPC" or "pinned staging" (through host
  // memory and MPI).
  const char* haloPath() const;

private:
  DistributedAmrLbm(MPI_Comm communicator, const amr::Octree& octree, const amr::AmrLbmSettings& settings,
                    const std::function<std::unique_ptr<amr::AmrLbm>(const amr::AmrLbmSettings&)>& make);
  // What an exchange moves: the populations of a level's blocks after a sub-step, or (CSM) the
  // eddy parts of the points a coarser level's step reads (AmrLbm::onEddyMade).
  enum class Part { Populations, Eddy };
  void exchange(int level, Part part);
  static int tagOf(int level, Part part) { return part == Part::Eddy ? amr::kMaxLevels + level : level; }
  // hostCopyFor(next), leaving out the blocks on hand (`onHand`: adoptedBlocks; null: none), and
  // none is then an empty copy, not an error.
  amr::AmrLbmHandOver hostCopyFor(const amr::Octree& next, const std::vector<std::int32_t>* onHand);
  // Collective: every rank's values of its own blocks (`mine`: `perBlock` values a block; with
  // `slotsOnly`, of its blocks that keep a pre-collision slot only) into `whole`, in block order, on
  // every rank or on `root` only (elsewhere `whole` is left empty).
  template <class T>
  void gatherRuns(const T* mine, std::int64_t perBlock, bool slotsOnly, std::vector<T>& whole, int root);
  // Where the values of a message lie in the post- and pre-collision arrays (positions from the
  // arrays' starts; the message: the post values, then the pre ones), and with CSM in the eddy
  // parts (each point of the pre-collision boxes once), where the solver lives.
  struct Message {
    exec::Buffer<std::int64_t> postIndex, preIndex, eddyIndex;
    std::size_t values(Part part) const {
      return part == Part::Eddy ? eddyIndex.size() : postIndex.size() + preIndex.size();
    }
  };
  Message messageOf(const std::vector<amr::BlockBox>& boxes) const;
  // Packs (or unpacks) a message's `part` between the solver's current state of `level` and `working`.
  void copyMessage(const Message& message, Part part, int level, float* working, bool pack);
  // The exchange when the ranks' GPUs reach each other's memory: packed into the peers' inboxes, an
  // empty MPI message to every peer of the level says the copies have landed, unpacked from here.
  void exchangeOverCudaIpc(const std::vector<Message>& send, const std::vector<Message>& receive, int level, Part part);

  // A duplicate of the run's communicator, freed with the solver (also when its constructor throws).
  struct Communicator {
    MPI_Comm handle = MPI_COMM_NULL;
    Communicator() = default;
    Communicator(const Communicator&) = delete;
    Communicator& operator=(const Communicator&) = delete;
    ~Communicator() {
      if (handle != MPI_COMM_NULL) MPI_Comm_free(&handle);
    }
  };
  Communicator duplicate_;
  MPI_Comm communicator_ = MPI_COMM_NULL;  // duplicate_.handle
  int rank_ = 0, ranks_ = 1;
  std::vector<std::int32_t> runStarts_;
  std::unique_ptr<amr::AmrLbm> local_;
  std::unordered_map<std::int32_t, std::int32_t> heldIndex_;  // block index -> the solver's index of it
  std::vector<std::vector<Message>> send_, receive_;  // [level][rank]
  // A rank's messages packed where the solver lives, and their host copies on CUDA, at the largest.
  std::vector<exec::Buffer<float>> sendWorking_, receiveWorking_, sendStaging_, receiveStaging_;
  // The picked points (setPickedPoints): this rank's own ones (indices among its held points) and
  // their densities then velocities where the solver lives and on the host; every rank's count of
  // them and its first in the list by rank; the list's positions in rank order (where each gathered
  // value goes); the gathered values (each rank's densities then velocities, rank order). For the
  // pieces: the own points (indices among them) each rank's piece takes, in its order, and where
  // the values from each rank go in this rank's piece; the piece's length.
  struct PickedPoints {
    exec::Buffer<std::int64_t> own;
    exec::Buffer<float> values;
    std::vector<int> counts, starts;
    std::vector<std::int64_t> listPosition;
    std::vector<float> ownValues, gathered;  // host
    std::vector<std::vector<std::int64_t>> pieceSends, pieceReceives;  // [rank]
    std::size_t pieceLength = 0;
    bool pieces = false;
  };
  PickedPoints picked_;
  // The own picked points' densities then velocities into picked_.ownValues (host).
  void fetchOwnPickedValues();
  // What fetchMomentsAround moves: the blocks this rank gets, and the blocks it sends to and
  // receives from each rank, in block order (made on the first call; a layout has its own).
  struct BlocksAround {
    bool made = false;
    std::vector<std::int32_t> blocks;
    std::vector<std::vector<std::int32_t>> send, receive;  // [rank]
  };
  BlocksAround around_;
  bool staged_ = false;  // messages go through host copies (the solver on CUDA)
  PeerInboxes peers_;     // CUDA IPC between the GPUs of a host: a channel a peer rank (index: its rank)
  std::vector<int> peerParity_;  // [rank]: the half of the inboxes the next exchange with it uses
  Traffic traffic_;
};

}  // namespace octoflow::parallel
