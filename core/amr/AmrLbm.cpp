#include "amr/AmrLbm.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>
#include <string>

#include "common/Error.hpp"
#include "amr/AmrAdopt.hpp"
#include "amr/AmrLbmLaunch.hpp"
#include "exec/cpu/HostThreads.hpp"
#include "lbm/Collision.hpp"

namespace octoflow::amr {

namespace {

template <class T>
exec::Buffer<T> uploaded(exec::MemorySpace space, const std::vector<T>& values) {
  exec::Buffer<T> buffer(space, values.size());
  if (!values.empty()) buffer.copyFrom(values.data(), values.size());
  return buffer;
}

void pointPosition(const BlockPlacement& block, int i, int j, int k, double (&out)[3]) {
  const int local[3] = {i, j, k};
  for (int axis = 0; axis < 3; ++axis)
    out[axis] = std::ldexp(static_cast<double>(block.origin[axis] + local[axis]), -block.level);
}

// visit(block, point, position in level-0 node coordinates) for every point of every block.
template <class Visit>
void forEachPoint(const BlockLayout& layout, Visit&& visit) {
  const int B = layout.blockNodes;
  for (std::size_t b = 0; b < layout.blocks.size(); ++b)
    for (int k = 0; k < B; ++k)
      for (int j = 0; j < B; ++j)
        for (int i = 0; i < B; ++i) {
          double where[3];
          pointPosition(layout.blocks[b], i, j, k, where);
          visit(b, static_cast<std::size_t>(i + B * (j + B * k)), where);
        }
}

// Copies of whole blocks between two arrays of blocks (exec::copyBytes: any two memory spaces),
// each run of blocks that follow one another in both arrays one copy.
class BlockCopies {
public:
  void add(std::size_t to, std::size_t from) {
    if (!runs_.empty() && runs_.back().to + runs_.back().count == to && runs_.back().from + runs_.back().count == from)
      ++runs_.back().count;
    else
      runs_.push_back({to, from, 1});
  }
  template <class T>
  void apply(T* destination, const T* source, std::size_t blockValues) const {
    for (const Run& run : runs_)
      exec::copyBytes(destination + run.to * blockValues, source + run.from * blockValues, run.count * blockValues * sizeof(T));
  }

private:
  struct Run {
    std::size_t to, from, count;
  };
  std::vector<Run> runs_;
};

}  // namespace

std::vector<std::int32_t> sourceSlots(const BlockLayout& layout) {
  std::vector<std::int32_t> slots(layout.blocks.size(), -1);
  std::int32_t next = 0;
  for (std::size_t b = 0; b < layout.blocks.size(); ++b)
    if (layout.crossLevelSource(b)) slots[b] = next++;
  return slots;
}

std::vector<std::uint8_t> AmrLbm::pointsWhere(const Octree& octree, int leafCells, const SolidTest& solid) {
  if (!solid) return {};
  const BlockLayout layout = leafBlocks(octree, leafCells);
  const std::size_t points = static_cast<std::size_t>(layout.pointsPerBlock());
  std::vector<std::uint8_t> mask(layout.blocks.size() * points, 0);
  forEachPoint(layout, [&](std::size_t b, std::size_t n, const double (&where)[3]) {
    mask[b * points + n] = solid(where) ? 1 : 0;
  });
  return mask;
}

AmrLbm::AmrLbm(const Octree& octree, const AmrLbmSettings& settings, const SolidTest& solid)
    : AmrLbm(octree, settings, pointsWhere(octree, settings.leafCells, solid)) {}

AmrLbm::AmrLbm(const Octree& octree, const AmrLbmSettings& settings, const std::vector<std::uint8_t>& solidPoints)
    : AmrLbm(octree, settings, solidPoints, nullptr) {}

AmrLbm::AmrLbm(const Octree& octree, const AmrLbmSettings& settings, const std::vector<std::uint8_t>& solidPoints,
               const AmrLbmHandOver& previous)
    : AmrLbm(octree, settings, solidPoints, &previous) {}

AmrLbm::AmrLbm(const Octree& octree, const AmrLbmSettings& settings, const std::vector<std::uint8_t>& solidPoints,
               const AmrLbmHandOver* previous)
    : octree_(octree), settings_(settings), layout_(leafBlocks(octree, settings.leafCells)) {
  if (lbm::latticeDimensions(settings.lattice) != 3)
    throw std::invalid_argument(std::string("the octree LBM runs D3Q19 or D3Q27, not ") +
                                lbm::latticeName(settings.lattice));
  if (layout_.levels > kMaxLevels)
    throw std::invalid_argument("the octree LBM runs at most " + std::to_string(kMaxLevels) + " levels");
  if (!(settings.tau > 0.5)) throw std::invalid_argument("the relaxation time must exceed 1/2");
  if (!amrKernelRuns(settings.kernel, settings.collision))
    throw std::invalid_argument(std::string("the octree LBM's ") + amrKernelName(settings.kernel) + " kernel runs bgk, not " +
                                lbm::collisionName(settings.collision) + ": use the whole or sorted kernel");
  const BlockRun& owned = settings.owned;
  const std::size_t wholeCount = layout_.blocks.size();
  if (owned.first < 0 || static_cast<std::size_t>(owned.first) >= wholeCount ||
      (owned.end >= 0 && (owned.end <= owned.first || static_cast<std::size_t>(owned.end) > wholeCount)))
    throw std::invalid_argument("the solver's own blocks [" + std::to_string(owned.first) + ", " + std::to_string(owned.end) +
                                ") are not a run of the octree's " + std::to_string(wholeCount) + " blocks");
  held_ = amr::heldBlocks(layout_, owned, heldGlobal_);
  ownedCount_ = (owned.end < 0 ? static_cast<std::int32_t>(wholeCount) : owned.end) - owned.first;
  // The kernels index a level's points with 32 bits (AmrInnerStep).
  if (static_cast<double>(held_.blocks.size()) * static_cast<double>(held_.pointsPerBlock()) >= 2147483648.0)
    throw std::invalid_argument("the solver holds " + std::to_string(held_.blocks.size()) +
                                " leaves: the kernels index at most 2^31 points");

  const exec::MemorySpace space = exec::workingSpace(settings.backend);
  const int Q = lbm::latticeQ(settings.lattice);
  const std::int64_t points = layout_.pointsPerBlock();
  const std::size_t blockCount = held_.blocks.size();

  state_.blockNodes = layout_.blockNodes;
  const float tau0 = static_cast<float>(settings.tau);
  state_.bgk = lbm::Bgk{tau0, settings.les};
  state_.trt = lbm::Trt{tau0, settings.trtMagic, settings.les};
  withAmrLattice(settings.lattice, [&](auto kind) { state_.mrt = lbm::Mrt::forLattice<decltype(kind)>(tau0); });
  state_.mrt.les = settings.les;
  for (int level = 0; level < layout_.levels; ++level) {
    state_.tau[level] = static_cast<float>(tau(level));
    state_.acceleration[level] = acceleration(level);
  }

  state_.faces = settings.faces;
  for (int axis = 0; axis < 3; ++axis) {
    const std::size_t a = static_cast<std::size_t>(axis);
    state_.domainCells[axis] = octree.rootBlocks()[a] * (layout_.blockNodes - 1);
    if (octree.periodic()[a])
      state_.faces.setAxisPeriodic(axis);
    else if (settings.faces.periodic(axis))
      throw std::invalid_argument(std::string("the faces make axis ") + "xyz"[axis] + " periodic, the octree does not");
  }
  for (int face = 0; face < lbm::kFaceCount; ++face) {
    const lbm::FaceType type = state_.faces.face[face].type;
    state_.faceRules = state_.faceRules || (type != lbm::FaceType::Wall && type != lbm::FaceType::Periodic);
  }

  slots_ = sourceSlots(held_);
  const std::size_t sources = held_.crossLevelSources();

  // The obstacle mask of the blocks held (every block's, in block order, comes in).
  std::vector<std::uint8_t> heldSolid;
  if (!solidPoints.empty()) {
    if (solidPoints.size() != wholeCount * static_cast<std::size_t>(points))
      throw std::invalid_argument("the obstacle mask holds " + std::to_string(solidPoints.size()) + " points, the blocks " +
                                  std::to_string(wholeCount * static_cast<std::size_t>(points)));
    heldSolid.resize(blockCount * static_cast<std::size_t>(points));
    for (std::size_t b = 0; b < blockCount; ++b)
      std::copy_n(solidPoints.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(heldGlobal_[b]) * points), points,
                  heldSolid.begin() + static_cast<std::ptrdiff_t>(b * static_cast<std::size_t>(points)));
    if (std::find(heldSolid.begin(), heldSolid.end(), std::uint8_t{1}) != heldSolid.end())
      solid_ = uploaded(space, heldSolid);
  }

  blocks_ = uploaded(space, held_.blocks);
  sourceSlot_ = uploaded(space, slots_);
  crossLevelSides_ = uploaded(space, held_.crossLevelSides);
  for (const std::vector<int>& members : held_.byLevel) {
    std::vector<std::int32_t> stepped;
    for (const int b : members)
      if (b < ownedCount_) stepped.push_back(b);
    levelBlocks_.push_back(uploaded(space, stepped));
  }
  for (int parity = 0; parity < 2; ++parity) {
    post_[parity] = exec::Buffer<float>(space, blockCount * Q * static_cast<std::size_t>(points));
    pre_[parity] = exec::Buffer<float>(space, static_cast<std::size_t>(sources) * Q * static_cast<std::size_t>(points));
    state_.post[parity] = post_[parity].data();
    state_.pre[parity] = pre_[parity].data();
  }
  moments_ = exec::Buffer<float>(space, 4 * blockCount * static_cast<std::size_t>(points));
  if (settings.les.model == lbm::LesModel::Csm) {
    // Made for the own blocks; over ranks the copies' come from their owners (onEddyMade).
    eddy_ = exec::Buffer<float>(space, blockCount * static_cast<std::size_t>(points));
    eddy_.setZero();  // every value is made before it is read (stepLevel); zero until then
    state_.eddy = eddy_.data();
  }
  state_.blocks = blocks_.data();
  state_.sourceSlot = sourceSlot_.data();
  state_.crossLevelSides = crossLevelSides_.data();
  state_.solid = solid_.size() ? solid_.data() : nullptr;
  if (state_.solid) findObstacleLinks(heldSolid);
  shells_.resize(static_cast<std::size_t>(layout_.levels));
  blocksSteppedWhole_.assign(static_cast<std::size_t>(layout_.levels), 0);
  if (settings.kernel == AmrKernel::Sorted || settings.kernel == AmrKernel::Whole) sortShells(heldSolid);
  if (previous) {
    adopt(*previous);
    return;
  }
  initialise([&settings](const double (&)[3], float& density, float (&velocity)[3]) {
    density = 1.0f;
    for (int axis = 0; axis < 3; ++axis) velocity[axis] = static_cast<float>(settings.initialVelocity[static_cast<std::size_t>(axis)]);
  });
}

AmrLbm::~AmrLbm() = default;

double AmrLbm::tau(int level) const { return 0.5 + std::ldexp(settings_.tau - 0.5, level); }

lbm::Vector3 AmrLbm::acceleration(int level) const {
  const float scale = std::ldexp(1.0f, -level);
  return lbm::Vector3{static_cast<float>(settings_.acceleration[0]) * scale, static_cast<float>(settings_.acceleration[1]) * scale,
                      static_cast<float>(settings_.acceleration[2]) * scale};
}

void AmrLbm::position(int block, int i, int j, int k, double (&out)[3]) const {
  pointPosition(layout_.blocks[static_cast<std::size_t>(block)], i, j, k, out);
}

void AmrLbm::initialise(const InitialState& initial) {
  lbm::withLattice(settings_.lattice, [&](auto lattice) {
    using L = decltype(lattice);
    const std::size_t points = static_cast<std::size_t>(held_.pointsPerBlock());
    const std::size_t blockCount = held_.blocks.size();
    std::vector<float> post(blockCount * L::Q * points);
    std::vector<float> pre(pre_[0].size());
    forEachPoint(held_, [&](std::size_t b, std::size_t n, const double (&where)[3]) {
      float density = 1.0f, velocity[3] = {0.0f, 0.0f, 0.0f};
      initial(where, density, velocity);
      const lbm::Vector3 u{velocity[0], velocity[1], velocity[2]};
      for (int q = 0; q < L::Q; ++q) {
        const float equilibrium = lbm::equilibriumDeviation<L>(q, density, u);
        post[(b * L::Q + q) * points + n] = equilibrium;
        if (slots_[b] >= 0) pre[(static_cast<std::size_t>(slots_[b]) * L::Q + q) * points + n] = equilibrium;
      }
    });
    for (int level = 0; level < kMaxLevels; ++level) state_.parity[level] = 0;
    forgetTapSums();
    // Both parities: solid points are never stepped and keep (and report) their initial state.
    for (int parity = 0; parity < 2; ++parity) {
      post_[parity].copyFrom(post.data(), post.size());
      if (!pre.empty()) pre_[parity].copyFrom(pre.data(), pre.size());
    }
  });
  step_ = 0;
}

void AmrLbm::forgetTapSums() {
  for (ShellLists& lists : shells_) lists.oldSumsKept = false;
}

void AmrLbm::stepLevel(int level, float timeWeight) {
  const std::int64_t count = static_cast<std::int64_t>(levelBlocks_[static_cast<std::size_t>(level)].size());
  // A level's first sub-step sums its interface points' coarse taps anew (AmrCoarseTapsStep): the
  // sums of the coarse step before become the old ones.
  ShellLists& shells = shells_[static_cast<std::size_t>(level)];
  shells.sumTaps = timeWeight == 0.0f;
  if (shells.sumTaps) std::swap(shells.tapSums.now, shells.tapSums.old);
  if (state_.eddy) {
    // CSM: a level's eddy part from its state before it steps, and the finer level's, which this
    // level's pulls from it read: the finer level's first sub-step starts from that same state.
    if (level == 0 || timeWeight != 0.0f) makeEddy(level);
    if (level + 1 < layout_.levels) {
      makeEddy(level + 1);
      // Over ranks: the copies of other ranks' finer blocks whose points this level's pulls read.
      if (eddyMade_) eddyMade_(level + 1);
    }
  }
  if (count > 0) {
#if OCTOFLOW_HAVE_CUDA
    if (settings_.backend == exec::Backend::Cuda)
      detail::stepLevelCuda(settings_.lattice, settings_.collision, settings_.kernel, state_, levelBlocks_[static_cast<std::size_t>(level)].data(), count,
                            level, timeWeight, shells);
    else
#endif
      detail::stepLevelCpu(settings_.lattice, settings_.collision, settings_.kernel, state_, levelBlocks_[static_cast<std::size_t>(level)].data(), count,
                           level, timeWeight, shells);
  }
  if (shells.sumTaps) shells.oldSumsKept = true;
  state_.parity[level] = 1 - state_.parity[level];
  if (levelStepped_) levelStepped_(level);
}

void AmrLbm::makeEddy(int level) {
  const exec::Buffer<std::int32_t>& blocks = levelBlocks_[static_cast<std::size_t>(level)];
  const std::int64_t count = static_cast<std::int64_t>(blocks.size());
  if (count == 0) return;
  const float constant = settings_.les.constant;
#if OCTOFLOW_HAVE_CUDA
  if (settings_.backend == exec::Backend::Cuda) {
    detail::eddyCuda(settings_.lattice, state_, blocks.data(), count, level, constant);
    return;
  }
#endif
  detail::eddyCpu(settings_.lattice, state_, blocks.data(), count, level, constant);
}

void AmrLbm::fetchEddyRelaxation(std::vector<float>& eddy) {
  if (!state_.eddy) throw std::logic_error("AmrLbm::fetchEddyRelaxation: the solver runs no CSM model");
  if (!post_[0].data()) throw std::logic_error("AmrLbm::fetchEddyRelaxation: the solver handed its state over (handOver)");
  for (int level = 0; level < layout_.levels; ++level) makeEddy(level);
  eddy.resize(eddy_.size());
  eddy_.copyTo(eddy.data(), eddy.size());
}

void AmrLbm::advanceLevel(int level, float timeWeight) {
  stepLevel(level, timeWeight);
  if (level + 1 < layout_.levels) {
    advanceLevel(level + 1, 0.0f);
    advanceLevel(level + 1, 0.5f);
  }
}

void AmrLbm::advance(std::int64_t coarseSteps) {
  if (!post_[0].data()) throw std::logic_error("AmrLbm::advance: the solver handed its state over (handOver)");
  for (std::int64_t s = 0; s < coarseSteps; ++s) {
    advanceLevel(0, 0.0f);
    ++step_;
  }
#if OCTOFLOW_HAVE_CUDA
  if (settings_.backend == exec::Backend::Cuda) detail::synchronizeCuda();
#endif
}

const float* AmrLbm::workingMoments(std::size_t blocks) {
  const std::int64_t blockCount = static_cast<std::int64_t>(std::min(blocks, held_.blocks.size()));
#if OCTOFLOW_HAVE_CUDA
  if (settings_.backend == exec::Backend::Cuda) {
    detail::momentsCuda(settings_.lattice, state_, blockCount, moments_.data());
    return moments_.data();
  }
#endif
  detail::momentsCpu(settings_.lattice, state_, blockCount, moments_.data());
  return moments_.data();
}

void AmrLbm::gatherPoints(const std::int64_t* pointIndex, std::int64_t count, float* density, float* velocity,
                          std::size_t blocks) {
  const std::int64_t total =
      static_cast<std::int64_t>(std::min(blocks, held_.blocks.size())) * held_.pointsPerBlock();
  const detail::PointGather gather{workingMoments(blocks), total, pointIndex, density, velocity};
#if OCTOFLOW_HAVE_CUDA
  if (settings_.backend == exec::Backend::Cuda) {
    detail::gatherCuda(gather, count);
    return;
  }
#endif
  detail::gatherCpu(gather, count);
}

void AmrLbm::fetchMoments(std::vector<float>& density, std::vector<float>& velocity, std::size_t blocks) {
  const std::size_t wanted = std::min(blocks, held_.blocks.size()) * static_cast<std::size_t>(held_.pointsPerBlock());
  density.resize(wanted);
  velocity.resize(3 * wanted);
  copyMoments(density.data(), velocity.data(), blocks);
}

void AmrLbm::fetchVelocity(std::vector<float>& velocity, std::size_t blocks) {
  velocity.resize(3 * std::min(blocks, held_.blocks.size()) * static_cast<std::size_t>(held_.pointsPerBlock()));
  copyMoments(nullptr, velocity.data(), blocks);
}

void AmrLbm::copyMoments(float* density, float* velocity, std::size_t blocks) {
  const std::size_t wanted = std::min(blocks, held_.blocks.size()) * static_cast<std::size_t>(held_.pointsPerBlock());
  const float* moments = workingMoments(blocks);
  if (density) exec::copyBytes(density, moments, wanted * sizeof(float));
  exec::copyBytes(velocity, moments + wanted, 3 * wanted * sizeof(float));
}

AmrLbmSnapshot AmrLbm::snapshot(std::size_t blocks) const {
  std::vector<std::int32_t> first(std::min(blocks, held_.blocks.size()));
  for (std::size_t b = 0; b < first.size(); ++b) first[b] = static_cast<std::int32_t>(b);
  return snapshotOf(first);
}

AmrLbmSnapshot AmrLbm::snapshotOf(const std::vector<std::int32_t>& blocks) const {
  const std::size_t blockValues = static_cast<std::size_t>(lbm::latticeQ(settings_.lattice)) *
                                  static_cast<std::size_t>(layout_.pointsPerBlock());
  // The slots follow the blocks' order.
  BlockCopies states, slots;
  std::size_t slotCount = 0;
  for (std::size_t n = 0; n < blocks.size(); ++n) {
    const std::size_t b = static_cast<std::size_t>(blocks[n]);
    states.add(n, b);
    if (slots_[b] >= 0) slots.add(slotCount++, static_cast<std::size_t>(slots_[b]));
  }
  AmrLbmSnapshot snapshot;
  snapshot.step = step_;
  snapshot.parity.assign(state_.parity, state_.parity + layout_.levels);
  for (int n = 0; n < 2; ++n) {
    snapshot.post[n].resize(blocks.size() * blockValues);
    states.apply(snapshot.post[n].data(), post_[n].data(), blockValues);
    snapshot.pre[n].resize(slotCount * blockValues);
    slots.apply(snapshot.pre[n].data(), pre_[n].data(), blockValues);
  }
  return snapshot;
}

void AmrLbm::restore(const AmrLbmSnapshot& snapshot) {
  if (snapshot.parity.size() != static_cast<std::size_t>(layout_.levels))
    throw std::invalid_argument("the snapshot holds " + std::to_string(snapshot.parity.size()) + " levels, the octree " +
                                std::to_string(layout_.levels));
  // Sizes of every block's state (one solver's numbering): post[] a block each, pre[] a slot each.
  const std::size_t blockValues = static_cast<std::size_t>(lbm::latticeQ(settings_.lattice)) *
                                  static_cast<std::size_t>(layout_.pointsPerBlock());
  const std::vector<std::int32_t> wholeSlots = sourceSlots(layout_);
  for (int n = 0; n < 2; ++n)
    if (snapshot.post[n].size() != layout_.blocks.size() * blockValues ||
        snapshot.pre[n].size() != layout_.crossLevelSources() * blockValues)
      throw std::invalid_argument("the snapshot's populations do not fit this octree and lattice");
  for (const std::int32_t parity : snapshot.parity)
    if (parity != 0 && parity != 1) throw std::invalid_argument("the snapshot's level parities are not 0 or 1");
  for (int n = 0; n < 2; ++n) {
    // The blocks held, picked from every block's (one solver of the whole octree: all of them).
    std::vector<float> post(post_[n].size()), pre(pre_[n].size());
    for (std::size_t h = 0; h < heldGlobal_.size(); ++h) {
      const std::size_t b = static_cast<std::size_t>(heldGlobal_[h]);
      std::copy_n(snapshot.post[n].begin() + static_cast<std::ptrdiff_t>(b * blockValues), blockValues,
                  post.begin() + static_cast<std::ptrdiff_t>(h * blockValues));
      if (slots_[h] >= 0)
        std::copy_n(snapshot.pre[n].begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(wholeSlots[b]) * blockValues),
                    blockValues, pre.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(slots_[h]) * blockValues));
    }
    post_[n].copyFrom(post.data(), post.size());
    if (pre_[n].size()) pre_[n].copyFrom(pre.data(), pre.size());
  }
  for (int level = 0; level < layout_.levels; ++level) state_.parity[level] = snapshot.parity[static_cast<std::size_t>(level)];
  forgetTapSums();
  step_ = snapshot.step;
}

namespace {

// Where a point of another tree's block comes from in `tree`'s blocks (adopt): the block holding
// its place at the deepest level `tree` has there, and where in it (AdoptTaps: the taps).
struct PointOrigin {
  int block = -1;
  AdoptTapPlace place;
};

// Point `global` (node coordinates at key.level) from the blocks of `tree` (whose leaf order is
// its block order); `key`: a block holding the point in its closed box.
// `covering`: tree.coveringLeaf(key), found once a block.
PointOrigin pointOrigin(const Octree& tree, const BlockLayout& layout, BlockKey key, int covering,
                        const std::int64_t (&global)[3]) {
  const int cells = layout.blockNodes - 1;
  std::int64_t at[3] = {global[0], global[1], global[2]};  // the point at key.level
  int leaf = covering;
  while (leaf < 0) {  // refined further in `tree`: down to the child that holds the point
    for (int axis = 0; axis < 3; ++axis) at[axis] *= 2;
    const std::int64_t corner[3] = {2 * key.i * cells, 2 * key.j * cells, 2 * key.k * cells};
    int child = 0;
    for (int axis = 0; axis < 3; ++axis)
      if (at[axis] - corner[axis] >= cells) child |= 1 << axis;
    key = key.child(child);
    leaf = tree.coveringLeaf(key);
  }
  PointOrigin origin;
  origin.block = leaf;
  const BlockPlacement& block = layout.blocks[static_cast<std::size_t>(leaf)];
  const int shift = key.level - block.level;  // > 0: the point lies on or between the block's points
  const std::int64_t denominator = std::int64_t{1} << shift;
  origin.place.shift = static_cast<std::uint8_t>(shift);
  for (int axis = 0; axis < 3; ++axis) {
    const std::int64_t local = at[axis] - static_cast<std::int64_t>(block.origin[axis]) * denominator;
    std::int64_t low = local / denominator, numerator = local % denominator;
    if (numerator == 0 && low == layout.blockNodes - 1) {
      low -= 1;  // the block's last point: the upper tap, with weight 1
      numerator = denominator;
    }
    origin.place.low[axis] = static_cast<std::uint8_t>(low);
    origin.place.numerator[axis] = static_cast<std::uint16_t>(numerator);
  }
  return origin;
}

// Where in `tree`'s blocks a point of another octree comes from: of the leaves of `tree` that
// hold the point (up to 8 where it lies on block faces, edges or corners), one of the point's own
// level (its copy), else the deepest; the first in leaf order among equals. Chosen by the point
// alone, so every block sharing the point gets the same. `global`: node coordinates at `level`.
PointOrigin pointSource(const Octree& tree, const BlockLayout& layout, int level, const std::int64_t (&global)[3]) {
  const std::int64_t cells = layout.blockNodes - 1;
  // A block of `level` holding the point, the point's coordinate in it, and which way a neighbour
  // across a face the point lies on holds it too (Octree::shifted wraps periodic axes).
  std::int64_t base[3], local[3];
  int across[3];
  for (int axis = 0; axis < 3; ++axis) {
    const std::int64_t blocks = static_cast<std::int64_t>(tree.rootBlocks()[static_cast<std::size_t>(axis)]) << level;
    base[axis] = std::min(global[axis] / cells, blocks - 1);
    local[axis] = global[axis] - base[axis] * cells;
    across[axis] = local[axis] == 0 ? -1 : (local[axis] == cells ? 1 : 0);
  }
  const BlockKey own{level, base[0], base[1], base[2]};
  PointOrigin best;
  int bestLevel = -1;
  for (int corner = 0; corner < 8; ++corner) {
    int step[3];
    bool valid = true;
    for (int axis = 0; axis < 3; ++axis) {
      step[axis] = (corner >> axis) & 1 ? across[axis] : 0;
      valid = valid && ((corner >> axis) & 1 ? across[axis] != 0 : true);
    }
    BlockKey key;
    if (!valid || !tree.shifted(own, step[0], step[1], step[2], key)) continue;
    const std::int64_t position[3] = {key.i, key.j, key.k};
    std::int64_t at[3];
    for (int axis = 0; axis < 3; ++axis) at[axis] = position[axis] * cells + local[axis] - step[axis] * cells;
    const PointOrigin origin = pointOrigin(tree, layout, key, tree.coveringLeaf(key), at);
    const int leafLevel = layout.blocks[static_cast<std::size_t>(origin.block)].level;
    const auto rank = [level](int l) { return l == level ? 1000 : l; };  // the own level first
    if (rank(leafLevel) > rank(bestLevel) || (leafLevel == bestLevel && origin.block < best.block)) {
      best = origin;
      bestLevel = leafLevel;
    }
  }
  return best;
}

// What adopt() makes a block of another octree's layout from: the block's own key, the leaf of
// `tree` covering it (-1: `tree` is finer there), and whether that leaf is the block itself (then
// its state is copied as it was, where pre-collision copies allow).
struct AdoptedBlock {
  BlockKey own;
  int covering = -1;
  bool sameLeaf = false;
};

// Whether adopt() copies a block as it was: a leaf of both octrees, unless other levels read it
// across a side (`newSides`, BlockLayout::crossLevelSides) where they did not in the other octree:
// the other solver kept no pre-collision state there (crossLevelRead), and the points are made one
// by one.
bool copiedAsItWas(const AdoptedBlock& adopted, std::uint32_t newSides, const BlockLayout& oldLayout) {
  return adopted.sameLeaf && (newSides & ~oldLayout.crossLevelSides[static_cast<std::size_t>(adopted.covering)]) == 0;
}

// Whether the other solver kept the pre-collision state of the point `origin` finds (a point of its
// own level: on one of the block's points, `shift` 0): its block keeps a slot and other levels read
// it there (crossLevelRead), so each step stored it.
bool preCollisionKept(const BlockLayout& oldLayout, const PointOrigin& origin) {
  const std::uint32_t sides = oldLayout.crossLevelSides[static_cast<std::size_t>(origin.block)];
  if (sides == 0 || origin.place.shift != 0) return false;
  // With no shift a point lies on `low` (numerator 0) or, the block's last point, on low + 1.
  const int x[3] = {origin.place.low[0] + origin.place.numerator[0], origin.place.low[1] + origin.place.numerator[1],
                    origin.place.low[2] + origin.place.numerator[2]};
  return crossLevelRead(sides, x, oldLayout.blockNodes);
}

AdoptedBlock adoptedBlock(const Octree& tree, const BlockPlacement& block, int blockNodes) {
  const int cells = blockNodes - 1;
  AdoptedBlock adopted;
  adopted.own = BlockKey{block.level, block.origin[0] / cells, block.origin[1] / cells, block.origin[2] / cells};
  adopted.covering = tree.coveringLeaf(adopted.own);
  adopted.sameLeaf = adopted.covering >= 0 && tree.leaves()[static_cast<std::size_t>(adopted.covering)] == adopted.own;
  return adopted;
}

// Where in `tree`'s blocks point (i, j, k) of `block` comes from. A point inside the block
// is this block's alone: its own key finds its source; a point on its shell is shared, and is
// chosen by the point alone (pointSource).
PointOrigin adoptedPoint(const Octree& tree, const BlockLayout& layout, const BlockPlacement& block,
                         const AdoptedBlock& adopted, int i, int j, int k) {
  const int B = layout.blockNodes;
  const std::int64_t global[3] = {block.origin[0] + i, block.origin[1] + j, block.origin[2] + k};
  const bool shell = i == 0 || j == 0 || k == 0 || i == B - 1 || j == B - 1 || k == B - 1;
  return shell ? pointSource(tree, layout, block.level, global)
               : pointOrigin(tree, layout, adopted.own, adopted.covering, global);
}

}  // namespace

std::vector<std::int32_t> adoptedBlocks(const Octree& previousOctree, const BlockLayout& previousLayout,
                                        const BlockLayout& held, const std::vector<std::int32_t>* onHand) {
  const int B = previousLayout.blockNodes;
  // On the host's threads, a block at a time: the blocks each one reads.
  std::vector<std::vector<std::int32_t>> readBy(held.blocks.size());
  exec::forEachOnHostThreads(static_cast<Index>(held.blocks.size()), [&](Index index) {
    const std::size_t b = static_cast<std::size_t>(index);
    std::vector<std::int32_t>& read = readBy[b];
    const AdoptedBlock adopted = adoptedBlock(previousOctree, held.blocks[b], B);
    const auto away = [onHand](int from) { return !onHand || (*onHand)[static_cast<std::size_t>(from)] < 0; };
    if (copiedAsItWas(adopted, held.crossLevelSides[b], previousLayout)) {
      if (away(adopted.covering)) read.push_back(adopted.covering);
      return;
    }
    for (int k = 0; k < B; ++k)
      for (int j = 0; j < B; ++j)
        for (int i = 0; i < B; ++i) {
          const int from = adoptedPoint(previousOctree, previousLayout, held.blocks[b], adopted, i, j, k).block;
          if (away(from) && (read.empty() || read.back() != from)) read.push_back(from);
        }
  });
  std::vector<char> read(previousLayout.blocks.size(), 0);
  for (const std::vector<std::int32_t>& sources : readBy)
    for (const std::int32_t from : sources) read[static_cast<std::size_t>(from)] = 1;
  std::vector<std::int32_t> blocks;
  for (std::size_t b = 0; b < read.size(); ++b)
    if (read[b]) blocks.push_back(static_cast<std::int32_t>(b));
  return blocks;
}

void AmrLbm::requireEveryBlock(const char* what) const {
  if (static_cast<std::size_t>(ownedCount_) != layout_.blocks.size())
    throw std::logic_error(std::string(what) + " needs a solver that steps every block, not a run of them");
}

AmrLbmHandOver AmrLbm::hostCopy() const {
  requireEveryBlock("AmrLbm::hostCopy");
  std::vector<std::uint8_t> solid(solid_.size());
  if (!solid.empty()) solid_.copyTo(solid.data(), solid.size());
  return AmrLbmHandOver{octree_, settings_, layout_, snapshot(), std::move(solid), {}, nullptr};
}

AmrLbmHandOver AmrLbm::handOver() {
  requireEveryBlock("AmrLbm::handOver");
  // Every block is in the arrays: no host copy.
  AmrLbmHandOver handed{octree_, settings_, layout_, snapshotOf({}), {}, {}, nullptr};
  handed.resident = releaseState();
  return handed;
}

std::shared_ptr<AmrLbmHandOverArrays> AmrLbm::releaseState() {
  auto arrays = std::make_shared<AmrLbmHandOverArrays>();
  arrays->block.assign(layout_.blocks.size(), -1);
  arrays->slot.assign(layout_.blocks.size(), -1);
  for (std::int32_t h = 0; h < ownedCount_; ++h) {  // its own blocks come first
    arrays->block[static_cast<std::size_t>(heldGlobal_[static_cast<std::size_t>(h)])] = h;
    arrays->slot[static_cast<std::size_t>(heldGlobal_[static_cast<std::size_t>(h)])] = slots_[static_cast<std::size_t>(h)];
  }
  for (int n = 0; n < 2; ++n) {
    arrays->post[n] = std::move(post_[n]);
    arrays->pre[n] = std::move(pre_[n]);
    state_.post[n] = state_.pre[n] = nullptr;
  }
  arrays->solid = std::move(solid_);
  state_.solid = nullptr;
  return arrays;
}

void AmrLbmHandOver::moveToHost() {
  if (!resident) return;
  const std::size_t points = static_cast<std::size_t>(layout.pointsPerBlock());
  const std::size_t blockValues = static_cast<std::size_t>(lbm::latticeQ(settings.lattice)) * points;
  // Every block the host copy or the arrays hold, in block order, with its source.
  std::vector<std::int32_t> merged;
  BlockCopies fromCopy, fromArrays, slotsFromCopy, slotsFromArrays, solidFromCopy, solidFromArrays;
  std::size_t copied = 0, copiedSlots = 0, slots = 0;
  for (std::size_t b = 0; b < layout.blocks.size(); ++b) {
    const bool inCopy = copied < blocks.size() && static_cast<std::size_t>(blocks[copied]) == b;
    if (!inCopy && resident->block[b] < 0) continue;
    const std::size_t to = merged.size();
    merged.push_back(static_cast<std::int32_t>(b));
    if (inCopy) {
      fromCopy.add(to, copied);
      solidFromCopy.add(to, copied);
      if (layout.crossLevelSource(b)) slotsFromCopy.add(slots, copiedSlots++);
      ++copied;
    } else {
      fromArrays.add(to, static_cast<std::size_t>(resident->block[b]));
      if (resident->solid.size()) solidFromArrays.add(to, static_cast<std::size_t>(resident->block[b]));
      if (layout.crossLevelSource(b)) slotsFromArrays.add(slots, static_cast<std::size_t>(resident->slot[b]));
    }
    slots += layout.crossLevelSource(b) ? 1 : 0;
  }
  AmrLbmSnapshot whole;
  whole.step = snapshot.step;
  whole.parity = snapshot.parity;
  for (int n = 0; n < 2; ++n) {
    whole.post[n].resize(merged.size() * blockValues);
    fromCopy.apply(whole.post[n].data(), snapshot.post[n].data(), blockValues);
    fromArrays.apply(whole.post[n].data(), resident->post[n].data(), blockValues);
    whole.pre[n].resize(slots * blockValues);
    slotsFromCopy.apply(whole.pre[n].data(), snapshot.pre[n].data(), blockValues);
    slotsFromArrays.apply(whole.pre[n].data(), resident->pre[n].data(), blockValues);
  }
  if (!solid.empty() || resident->solid.size()) {
    std::vector<std::uint8_t> wholeSolid(merged.size() * points, 0);  // none where the arrays held none
    if (!solid.empty()) solidFromCopy.apply(wholeSolid.data(), solid.data(), points);
    solidFromArrays.apply(wholeSolid.data(), resident->solid.data(), points);
    solid = std::move(wholeSolid);
  }
  snapshot = std::move(whole);
  blocks = std::move(merged);
  resident.reset();
}

void AmrLbm::adopt(const AmrLbmHandOver& previous) {
  if (previous.settings.lattice != settings_.lattice || previous.settings.tau != settings_.tau ||
      previous.octree.rootBlocks() != octree_.rootBlocks() || previous.octree.periodic() != octree_.periodic() ||
      previous.layout.blockNodes != layout_.blockNodes)
    throw std::invalid_argument("adopt: the other solver has another domain, lattice or relaxation");
  const AmrLbmSnapshot& old = previous.snapshot;
  const BlockLayout& oldLayout = previous.layout;
  const std::vector<std::uint8_t>& oldSolid = previous.solid;
  const int B = layout_.blockNodes;
  const std::size_t N = static_cast<std::size_t>(layout_.pointsPerBlock());
  // The blocks held: b numbers them as this solver's state does (newSlots: its slots). The other
  // solver's blocks in the copy: `place` (-1: not in it) and `slotOf` number them as the copy
  // holds them.
  const std::vector<std::int32_t> oldSlots = sourceSlots(oldLayout), &newSlots = slots_;
  std::vector<std::int32_t> place(oldLayout.blocks.size(), -1), slotOf(oldLayout.blocks.size(), -1);
  const AmrLbmHandOverArrays* const resident = previous.resident.get();
  if (previous.blocks.empty() && !resident) {
    for (std::size_t b = 0; b < place.size(); ++b) place[b] = static_cast<std::int32_t>(b);
    slotOf = oldSlots;
  } else {
    std::int32_t slots = 0;
    for (std::size_t n = 0; n < previous.blocks.size(); ++n) {
      const std::int32_t block = previous.blocks[n];
      if (block < 0 || static_cast<std::size_t>(block) >= place.size() || (n > 0 && block <= previous.blocks[n - 1]))
        throw std::invalid_argument("adopt: the host copy's blocks are not blocks of its octree in block order");
      const std::size_t b = static_cast<std::size_t>(block);
      place[b] = static_cast<std::int32_t>(n);
      if (oldLayout.crossLevelSource(b)) slotOf[b] = slots++;
    }
  }
  const std::size_t copiedBlocks = previous.blocks.empty() && !resident ? oldLayout.blocks.size() : previous.blocks.size();
  std::size_t copiedSlots = 0;
  for (const std::int32_t slot : slotOf) copiedSlots += slot >= 0 ? 1 : 0;
  const std::size_t oldBlockValues = static_cast<std::size_t>(lbm::latticeQ(previous.settings.lattice)) * N;
  for (int n = 0; n < 2; ++n)
    if (old.post[n].size() != copiedBlocks * oldBlockValues || old.pre[n].size() != copiedSlots * oldBlockValues ||
        (!oldSolid.empty() && oldSolid.size() != copiedBlocks * N))
      throw std::invalid_argument("adopt: the host copy's arrays do not fit its blocks");
  if (resident) {
    bool fits = resident->block.size() == oldLayout.blocks.size() && resident->slot.size() == oldLayout.blocks.size();
    for (std::size_t b = 0; fits && b < oldLayout.blocks.size(); ++b) {
      const std::int64_t at = resident->block[b], slot = resident->slot[b];
      fits = at < 0 || (static_cast<std::size_t>(at + 1) * oldBlockValues <= resident->post[0].size() &&
                        resident->post[1].size() == resident->post[0].size() &&
                        (!resident->solid.size() || static_cast<std::size_t>(at + 1) * N <= resident->solid.size()) &&
                        (oldSlots[b] < 0 || (slot >= 0 && static_cast<std::size_t>(slot + 1) * oldBlockValues <= resident->pre[0].size() &&
                                              resident->pre[1].size() == resident->pre[0].size())));
    }
    if (!fits) throw std::invalid_argument("adopt: the handed-over arrays do not fit its octree");
  }
  if (resident && resident->post[0].space() != post_[0].space())
    throw std::invalid_argument("adopt: the handed-over arrays lie in another memory than this solver's");
  const auto placed = [&](std::size_t from) {
    if (place[from] < 0)
      throw std::invalid_argument("adopt: the host copy lacks block " + std::to_string(from) + " of the other octree");
    return place[from];
  };
  // Each block held: copied as it was (from the arrays where they hold it, else from the host
  // copy: runs of blocks, whole), or made point by point where this solver lives (AdoptPoints).
  // Nothing is written before every block's source is known.
  struct StateCopies {
    BlockCopies post[2][2];  // [this solver's array][the other's parity]
    BlockCopies pre[2];      // [the other's parity], into both of this solver's
  } fromArrays, fromCopy;
  std::vector<AdoptMadeBlock> made;
  std::vector<AdoptedBlock> madeFrom;
  for (std::size_t b = 0; b < held_.blocks.size(); ++b) {
    const BlockPlacement& block = held_.blocks[b];
    const AdoptedBlock adopted = adoptedBlock(previous.octree, block, B);
    if (!copiedAsItWas(adopted, held_.crossLevelSides[b], oldLayout)) {
      made.push_back(AdoptMadeBlock{static_cast<std::int32_t>(b), newSlots[b], block.level});
      madeFrom.push_back(adopted);
      continue;
    }
    const std::size_t covering = static_cast<std::size_t>(adopted.covering);
    const bool inArrays = resident && resident->block[covering] >= 0;
    StateCopies& copies = inArrays ? fromArrays : fromCopy;
    const std::size_t from = static_cast<std::size_t>(inArrays ? resident->block[covering] : placed(covering));
    const int current = old.parity[static_cast<std::size_t>(block.level)];
    for (int which = 0; which < 2; ++which) copies.post[which][which == 0 ? current : 1 - current].add(b, from);
    if (newSlots[b] >= 0)
      copies.pre[current].add(static_cast<std::size_t>(newSlots[b]),
                              static_cast<std::size_t>(inArrays ? resident->slot[covering] : slotOf[covering]));
  }
  // The made points' sources, on the host's threads a block at a time (the same whatever the
  // thread count).
  std::vector<AdoptSource> sources(made.size() * N);
  exec::forEachOnHostThreads(static_cast<Index>(made.size()), [&](Index m) {
    const BlockPlacement& block = held_.blocks[static_cast<std::size_t>(made[static_cast<std::size_t>(m)].block)];
    AdoptSource* source = sources.data() + static_cast<std::size_t>(m) * N;
    for (int k = 0; k < B; ++k)
      for (int j = 0; j < B; ++j)
        for (int i = 0; i < B; ++i, ++source) {
          const PointOrigin origin =
              adoptedPoint(previous.octree, oldLayout, block, madeFrom[static_cast<std::size_t>(m)], i, j, k);
          const std::size_t from = static_cast<std::size_t>(origin.block);
          source->place = origin.place;
          source->level = static_cast<std::uint8_t>(oldLayout.blocks[from].level);
          const bool inArrays = resident && resident->block[from] >= 0;
          source->fromCopy = inArrays ? 0 : 1;
          source->block = inArrays ? resident->block[from] : placed(from);
          // Its pre-collision state where the other solver kept it for this very point (AdoptPoints).
          source->slot = !preCollisionKept(oldLayout, origin) ? -1 : inArrays ? resident->slot[from] : slotOf[from];
        }
  });

  AdoptArrays arrays;
  arrays.blockNodes = B;
  arrays.pointsPerBlock = static_cast<std::int64_t>(N);
  // The host copy where this solver lives: as it is on the host, else the blocks the made points
  // read of it (and their slots), moved to the device.
  const bool onHost = post_[0].hostAccessible();
  exec::Buffer<float> copyPost[2], copyPre[2];
  exec::Buffer<std::uint8_t> copySolid;
  for (int n = 0; n < 2; ++n) {
    arrays.post[1][n] = old.post[n].data();
    arrays.pre[1][n] = old.pre[n].data();
  }
  arrays.solid[1] = oldSolid.empty() ? nullptr : oldSolid.data();
  if (!onHost) {
    std::vector<std::int32_t> blockAt(copiedBlocks, -1), slotAt(copiedSlots, -1);
    for (const AdoptSource& source : sources) {
      if (!source.fromCopy) continue;
      blockAt[static_cast<std::size_t>(source.block)] = 0;
      if (source.slot >= 0) slotAt[static_cast<std::size_t>(source.slot)] = 0;
    }
    BlockCopies blocksRead, slotsRead;
    std::int32_t blocks = 0, slots = 0;
    for (std::size_t c = 0; c < blockAt.size(); ++c)
      if (blockAt[c] == 0) blocksRead.add(static_cast<std::size_t>(blockAt[c] = blocks++), c);
    for (std::size_t c = 0; c < slotAt.size(); ++c)
      if (slotAt[c] == 0) slotsRead.add(static_cast<std::size_t>(slotAt[c] = slots++), c);
    for (AdoptSource& source : sources) {
      if (!source.fromCopy) continue;
      source.block = blockAt[static_cast<std::size_t>(source.block)];
      if (source.slot >= 0) source.slot = slotAt[static_cast<std::size_t>(source.slot)];
    }
    const exec::MemorySpace space = post_[0].space();
    for (int n = 0; n < 2; ++n) {
      copyPost[n] = exec::Buffer<float>(space, static_cast<std::size_t>(blocks) * oldBlockValues);
      blocksRead.apply(copyPost[n].data(), old.post[n].data(), oldBlockValues);
      copyPre[n] = exec::Buffer<float>(space, static_cast<std::size_t>(slots) * oldBlockValues);
      slotsRead.apply(copyPre[n].data(), old.pre[n].data(), oldBlockValues);
      arrays.post[1][n] = copyPost[n].data();
      arrays.pre[1][n] = copyPre[n].data();
    }
    if (!oldSolid.empty()) {
      copySolid = exec::Buffer<std::uint8_t>(space, static_cast<std::size_t>(blocks) * N);
      blocksRead.apply(copySolid.data(), oldSolid.data(), N);
      arrays.solid[1] = copySolid.data();
    }
  }
  if (resident) {
    for (int n = 0; n < 2; ++n) {
      arrays.post[0][n] = resident->post[n].data();
      arrays.pre[0][n] = resident->pre[n].data();
    }
    arrays.solid[0] = resident->solid.size() ? resident->solid.data() : nullptr;
  }
  arrays.newSolid = solid_.size() ? solid_.data() : nullptr;
  for (int n = 0; n < 2; ++n) {
    arrays.newPost[n] = post_[n].data();
    arrays.newPre[n] = pre_[n].size() ? pre_[n].data() : nullptr;
  }
  for (std::size_t level = 0; level < old.parity.size() && level < static_cast<std::size_t>(kMaxLevels); ++level)
    arrays.parity[level] = old.parity[level];
  // Across levels, or a pre-collision state the other solver does not keep, the non-equilibrium
  // part is rescaled (AdoptPoints): f_neq ~ tau dt, post = (1 - 1/tau) pre. Near tau = 1 a
  // collision keeps little of it (none at 1): dividing by tau - 1 would raise float noise, so the
  // point starts from equilibrium there.
  for (int from = 0; from < kMaxLevels; ++from) {
    arrays.acceleration[from] = acceleration(from);
    for (int to = 0; to < kMaxLevels; ++to) {
      const double tauOld = tau(from), tauNew = tau(to), timeRatio = std::ldexp(1.0, from - to);
      const bool known = std::fabs(tauOld - 1.0) > 0.05;
      arrays.postScale[from][to] = known ? static_cast<float>((tauNew - 1.0) * timeRatio / (tauOld - 1.0)) : 0.0f;
      arrays.preScale[from][to] = known ? static_cast<float>(tauNew * timeRatio / (tauOld - 1.0)) : 0.0f;
    }
  }
  exec::Buffer<AdoptSource> sourcesThere;
  exec::Buffer<AdoptMadeBlock> madeThere;
  arrays.sources = sources.data();
  arrays.made = made.data();
  if (!onHost) {
    sourcesThere = uploaded(post_[0].space(), sources);
    madeThere = uploaded(post_[0].space(), made);
    arrays.sources = sourcesThere.data();
    arrays.made = madeThere.data();
  }

  // The blocks copied, then the points made.
  for (int parity = 0; parity < 2; ++parity)
    for (int source = 0; source < 2; ++source) {
      fromCopy.post[parity][source].apply(post_[parity].data(), old.post[source].data(), oldBlockValues);
      if (pre_[parity].size()) fromCopy.pre[source].apply(pre_[parity].data(), old.pre[source].data(), oldBlockValues);
      if (!resident) continue;
      fromArrays.post[parity][source].apply(post_[parity].data(), resident->post[source].data(), oldBlockValues);
      if (pre_[parity].size()) fromArrays.pre[source].apply(pre_[parity].data(), resident->pre[source].data(), oldBlockValues);
    }
  const std::int64_t points = static_cast<std::int64_t>(sources.size());
  if (points > 0) {
#if OCTOFLOW_HAVE_CUDA
    if (settings_.backend == exec::Backend::Cuda)
      detail::adoptPointsCuda(settings_.lattice, arrays, points);
    else
#endif
      detail::adoptPointsCpu(settings_.lattice, arrays, points);
  }
  for (int level = 0; level < kMaxLevels; ++level) state_.parity[level] = 0;
#if OCTOFLOW_HAVE_CUDA
  if (settings_.backend == exec::Backend::Cuda) detail::synchronizeCuda();  // the copies and points made
#endif
  step_ = old.step;
}

// The part of point (i, j, k)'s dual cell that `block` holds: a point on a face shared with another
// block has half its dual cell in each; on a wall (half a spacing beyond the point, half-way
// bounce-back) or an open face the whole cell is the block's.
double AmrLbm::sharedPart(const BlockPlacement& block, int i, int j, int k) const {
  const int B = layout_.blockNodes;
  const int local[3] = {i, j, k};
  double part = 1.0;
  for (int axis = 0; axis < 3; ++axis) {
    if (local[axis] != 0 && local[axis] != B - 1) continue;
    int region[3] = {1, 1, 1};
    region[axis] = local[axis] == 0 ? 0 : 3;
    if (block.links[regionIndex(region[0], region[1], region[2])].block >= 0) part *= 0.5;
  }
  return part;
}

double AmrLbm::mass(const std::vector<float>& density) const {
  const int B = layout_.blockNodes;
  const std::int64_t points = layout_.pointsPerBlock();
  if (density.size() != layout_.blocks.size() * static_cast<std::size_t>(points))
    throw std::invalid_argument("mass: the density holds " + std::to_string(density.size()) + " points, the octree's blocks " +
                                std::to_string(layout_.blocks.size() * static_cast<std::size_t>(points)));
  double total = 0.0;
  for (std::size_t b = 0; b < layout_.blocks.size(); ++b) {
    const BlockPlacement& block = layout_.blocks[b];
    double blockSum = 0.0;
    for (int k = 0; k < B; ++k)
      for (int j = 0; j < B; ++j)
        for (int i = 0; i < B; ++i)
          blockSum += sharedPart(block, i, j, k) *
                      density[b * static_cast<std::size_t>(points) + static_cast<std::size_t>(i + B * (j + B * k))];
    total += std::ldexp(blockSum, -3 * block.level);
  }
  return total;
}

// The fluid points whose step reflects populations from an obstacle, found with the step's own
// decision (AmrLevelStep::reflectedByObstacle) on host copies of the blocks and the mask. Points a
// coarser block holds (their state is the coarse level's) are that level's.
void AmrLbm::findObstacleLinks(const std::vector<std::uint8_t>& solidPoints) {
  AmrLbmLevels host = state_;
  host.blocks = held_.blocks.data();
  host.solid = solidPoints.data();
  const int B = held_.blockNodes;
  lbm::withLattice(settings_.lattice, [&](auto lattice) {
    using L = decltype(lattice);
    if constexpr (L::dimensions == 3) {
      // On the host's threads, a block at a time; the links in block order.
      std::vector<std::vector<AmrObstacleLink>> ofBlock(static_cast<std::size_t>(ownedCount_));
      exec::forEachOnHostThreads(ownedCount_, [&](Index listed) {
        const std::size_t b = static_cast<std::size_t>(listed);
        const BlockPlacement& block = held_.blocks[b];
        const AmrLevelStep<L> step{host, nullptr, block.level, 0.0f};
        const std::int32_t index = static_cast<std::int32_t>(b);
        for (int k = 0; k < B; ++k)
          for (int j = 0; j < B; ++j)
            for (int i = 0; i < B; ++i) {
              const int x[3] = {i, j, k};
              if (step.solidAt(index, i, j, k) || (block.level > 0 && step.coarserHolder(block, x))) continue;
              AmrObstacleLink link;
              for (int q = 1; q < L::Q; ++q)
                if (step.reflectedByObstacle(q, index, block, x)) link.reflected |= 1u << q;
              if (!link.reflected) continue;
              link.point = static_cast<std::int64_t>(b) * held_.pointsPerBlock() + host.point(i, j, k);
              link.weight = static_cast<float>(std::ldexp(sharedPart(block, i, j, k), -2 * block.level));
              ofBlock[b].push_back(link);
            }
      });
      for (const std::vector<AmrObstacleLink>& links : ofBlock) obstacleLinks_.insert(obstacleLinks_.end(), links.begin(), links.end());
    }
  });
  const exec::MemorySpace space = exec::workingSpace(settings_.backend);
  workingLinks_ = uploaded(space, obstacleLinks_);
  linkForces_ = exec::Buffer<double>(space, 3 * obstacleLinks_.size());
}

bool AmrLbm::blocksAround(std::int32_t index, std::int32_t (&around)[27]) const {
  const BlockPlacement& block = held_.blocks[static_cast<std::size_t>(index)];
  bool onLevel = true;
  for (int oz = -1; oz <= 1; ++oz)
    for (int oy = -1; oy <= 1; ++oy)
      for (int ox = -1; ox <= 1; ++ox) {
        const int across = neighbourIndex(ox, oy, oz);
        if (across == 13) {
          around[across] = index;  // the block itself
          continue;
        }
        // Every region across this face, edge or corner (on the axes along it, both halves): one
        // block of this level, or a resting wall, or else another level or an open face.
        const int side[3] = {ox, oy, oz};
        std::int32_t holder = kOtherLevelOrOpenFace;
        for (int half = 0; half < 8; ++half) {
          int region[3];
          for (int axis = 0; axis < 3; ++axis)
            region[axis] = side[axis] < 0 ? 0 : (side[axis] > 0 ? 3 : 1 + ((half >> axis) & 1));
          const RegionLink& link = block.links[regionIndex(region[0], region[1], region[2])];
          const bool sameLevel = link.block >= 0 && link.levelShift == 0;
          const bool restingWall = link.block < 0 && !state_.faceRules;
          const std::int32_t entry = sameLevel ? link.block : (restingWall ? kRestingWall : kOtherLevelOrOpenFace);
          holder = half == 0 || entry == holder ? entry : kOtherLevelOrOpenFace;
        }
        around[across] = holder;
        onLevel = onLevel && holder != kOtherLevelOrOpenFace;
      }
  return onLevel;
}

// The shell points of each level's blocks (fluid ones), sorted by kind (AmrLevelStep::shellKind)
// for AmrKernel::Sorted, block by block within a kind, in point order within a block; the finer
// points the linked ones pull from (FinerSources). For AmrKernel::Whole, the blocks around each
// block, and only the shell points the block kernel leaves (blocksAcross) listed.
void AmrLbm::sortShells(const std::vector<std::uint8_t>& solidPoints) {
  AmrLbmLevels host = state_;
  host.blocks = held_.blocks.data();
  host.solid = solidPoints.empty() ? nullptr : solidPoints.data();
  const int B = held_.blockNodes;
  const exec::MemorySpace space = exec::workingSpace(settings_.backend);
  bool interfacesInBlocks = false;
  withAmrModel(settings_.lattice, settings_.collision, [&](auto lattice, auto collision) {
    interfacesInBlocks = settings_.kernel == AmrKernel::Whole &&
                         AmrWholeBlockStep<decltype(lattice), decltype(collision)>::kStepsInterfacePoints;
  });
  lbm::withLattice(settings_.lattice, [&](auto lattice) {
    using L = decltype(lattice);
    if constexpr (L::dimensions == 3) {
      for (int level = 0; level < held_.levels; ++level) {
        const AmrLevelStep<L> step{host, nullptr, level, 0.0f};
        // Each block sorted on the host's threads (its 27 neighbours for the block kernel, its
        // shell points by kind), then the lists joined in block order.
        struct SortedBlock {
          bool whole = false;
          std::int32_t around[27] = {};
          std::vector<ShellPoint> byKind[kShellKinds];
        };
        const bool blockKernel = settings_.kernel == AmrKernel::Whole;
        const std::vector<int>& members = held_.byLevel[static_cast<std::size_t>(level)];
        std::vector<SortedBlock> sortedBlocks(members.size());
        exec::forEachOnHostThreads(static_cast<Index>(members.size()), [&](Index listed) {
          const int b = members[static_cast<std::size_t>(listed)];
          if (b >= ownedCount_) return;  // a ghost: read, not stepped
          SortedBlock& sortedBlock = sortedBlocks[static_cast<std::size_t>(listed)];
          sortedBlock.whole = blockKernel && blocksAround(b, sortedBlock.around);
          const BlockPlacement& block = held_.blocks[static_cast<std::size_t>(b)];
          if (sortedBlock.whole) return;
          for (int k = 0; k < B; ++k)
            for (int j = 0; j < B; ++j)
              for (int i = 0; i < B; ++i) {
                const int x[3] = {i, j, k};
                const bool shell = i == 0 || j == 0 || k == 0 || i == B - 1 || j == B - 1 || k == B - 1;
                if (!shell || step.solidAt(b, i, j, k)) continue;
                std::int32_t across[8];
                if (blockKernel && blocksAcross(sortedBlock.around, b, x, B, across)) continue;
                const ShellPoint entry{b, static_cast<std::int32_t>(host.point(i, j, k))};
                sortedBlock.byKind[static_cast<int>(step.shellKind(block, x))].push_back(entry);
              }
        });
        std::vector<ShellPoint> byKind[kShellKinds];
        std::vector<std::int32_t> around;
        for (std::size_t listed = 0; listed < members.size(); ++listed) {
          const int b = members[listed];
          if (b >= ownedCount_) continue;
          const SortedBlock& sortedBlock = sortedBlocks[listed];
          blocksSteppedWhole_[static_cast<std::size_t>(level)] += sortedBlock.whole ? 1 : 0;
          if (blockKernel) around.insert(around.end(), std::begin(sortedBlock.around), std::end(sortedBlock.around));
          for (int kind = 0; kind < kShellKinds; ++kind)
            byKind[kind].insert(byKind[kind].end(), sortedBlock.byKind[kind].begin(), sortedBlock.byKind[kind].end());
        }
        std::vector<ShellPoint> sorted;
        ShellLists& lists = shells_[static_cast<std::size_t>(level)];
        for (int kind = 0; kind < kShellKinds; ++kind) {
          lists.count[kind] = static_cast<std::int64_t>(byKind[kind].size());
          sorted.insert(sorted.end(), byKind[kind].begin(), byKind[kind].end());
        }
        // The finer points the linked points pull from, each listed once.
        std::map<std::pair<std::int32_t, std::int32_t>, std::int32_t> sourceIndex;
        std::vector<ShellPoint> finerPoints;
        std::vector<std::int32_t> sourceOf;
        for (const ShellPoint& entry : byKind[static_cast<int>(ShellKind::Linked)]) {
          const BlockPlacement& block = held_.blocks[static_cast<std::size_t>(entry.block)];
          const int x[3] = {entry.point % B, (entry.point / B) % B, entry.point / (B * B)};
          for (int q = 0; q < L::Q; ++q) {
            const int s[3] = {x[0] - L::c(q, 0), x[1] - L::c(q, 1), x[2] - L::c(q, 2)};
            const int rx = regionOf(s[0], B), ry = regionOf(s[1], B), rz = regionOf(s[2], B);
            const RegionLink* link = isOwnRegion(rx, ry, rz) ? nullptr : &block.links[regionIndex(rx, ry, rz)];
            if (!link || link->block < 0 || link->levelShift <= 0) {
              sourceOf.push_back(kRebuildInPlace);
              continue;
            }
            const int c[3] = {2 * s[0] + link->offset[0], 2 * s[1] + link->offset[1], 2 * s[2] + link->offset[2]};
            if (step.solidAt(link->block, c[0], c[1], c[2])) {
              sourceOf.push_back(kFromSolid);
              continue;
            }
            const ShellPoint finer{link->block, static_cast<std::int32_t>(host.point(c[0], c[1], c[2]))};
            const auto inserted =
                sourceIndex.emplace(std::pair{finer.block, finer.point}, static_cast<std::int32_t>(finerPoints.size()));
            if (inserted.second) finerPoints.push_back(finer);
            sourceOf.push_back(inserted.first->second);
          }
        }
        // Where the block kernel steps the interface points (AmrWholeBlockStep::kStepsInterfacePoints),
        // where each lies in the list (ShellLists::interfaceMapOf): the joined list holds the blocks'
        // points in the order of the blocks.
        std::vector<std::int32_t> interfaceMapOf, interfaceOfSurface;
        if (interfacesInBlocks && !byKind[static_cast<int>(ShellKind::Interface)].empty()) {
          std::int32_t next = 0;
          for (std::size_t listed = 0; listed < members.size(); ++listed) {
            if (members[listed] >= ownedCount_) continue;
            const std::vector<ShellPoint>& points = sortedBlocks[listed].byKind[static_cast<int>(ShellKind::Interface)];
            if (points.empty()) {
              interfaceMapOf.push_back(-1);
              continue;
            }
            const std::size_t first = interfaceOfSurface.size();
            interfaceMapOf.push_back(static_cast<std::int32_t>(first));
            interfaceOfSurface.resize(first + static_cast<std::size_t>(surfacePoints(B)), -1);
            for (const ShellPoint& entry : points) {
              const int x[3] = {entry.point % B, (entry.point / B) % B, entry.point / (B * B)};
              interfaceOfSurface[first + static_cast<std::size_t>(surfaceIndex(x, B))] = next++;
            }
          }
        }
        SortedShell buffers;
        buffers.around = uploaded(space, around);
        lists.around = buffers.around.data();
        buffers.interfaceMapOf = uploaded(space, interfaceMapOf);
        buffers.interfaceOfSurface = uploaded(space, interfaceOfSurface);
        lists.interfaceMapOf = interfaceMapOf.empty() ? nullptr : buffers.interfaceMapOf.data();
        lists.interfaceOfSurface = interfaceMapOf.empty() ? nullptr : buffers.interfaceOfSurface.data();
        buffers.points = uploaded(space, sorted);
        buffers.finerPoints = uploaded(space, finerPoints);
        buffers.sourceOf = uploaded(space, sourceOf);
        buffers.rebuilt = exec::Buffer<float>(space, finerPoints.size() * L::Q);
        for (exec::Buffer<float>& sums : buffers.tapSums)
          sums = exec::Buffer<float>(space, static_cast<std::size_t>(lists.count[static_cast<int>(ShellKind::Interface)]) * L::Q);
        lists.tapSums = InterfaceTapSums{buffers.tapSums[0].data(), buffers.tapSums[1].data()};
        lists.points = buffers.points.data();
        lists.finer = FinerSources{buffers.finerPoints.data(), static_cast<std::int64_t>(finerPoints.size()),
                                   buffers.sourceOf.data(), buffers.rebuilt.data()};
        sortedShells_.push_back(std::move(buffers));
      }
    }
  });
}

std::vector<double> AmrLbm::obstacleForceByLink() {
  const std::int64_t count = static_cast<std::int64_t>(obstacleLinks_.size());
  std::vector<double> byLink(3 * obstacleLinks_.size());
  if (count == 0) return byLink;
#if OCTOFLOW_HAVE_CUDA
  if (settings_.backend == exec::Backend::Cuda)
    detail::obstacleForceCuda(settings_.lattice, state_, workingLinks_.data(), count, linkForces_.data());
  else
#endif
    detail::obstacleForceCpu(settings_.lattice, state_, workingLinks_.data(), count, linkForces_.data());
  linkForces_.copyTo(byLink.data(), byLink.size());
  return byLink;
}

std::array<double, 3> AmrLbm::obstacleForce() { return sumOfLinkForces(obstacleForceByLink()); }

std::array<double, 3> sumOfLinkForces(const std::vector<double>& byLink) {
  std::array<double, 3> total{0.0, 0.0, 0.0};
  for (std::size_t entry = 0; 3 * entry < byLink.size(); ++entry)
    for (int axis = 0; axis < 3; ++axis) total[static_cast<std::size_t>(axis)] += byLink[3 * entry + static_cast<std::size_t>(axis)];
  return total;
}

}  // namespace octoflow::amr
