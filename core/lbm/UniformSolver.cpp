#include "lbm/UniformSolver.hpp"

#include <algorithm>

#include "common/Error.hpp"
#include "lbm/blocking/BlockedStepper.hpp"

namespace octoflow::lbm {

namespace detail {
namespace {
std::unique_ptr<UniformEngine> makeEngine(exec::Backend backend, const UniformSolverConfig& config,
                                          const NodeLists& lists) {
  return withLattice(config.lattice, [&](auto lattice) {
    return withStorage(config.storage, [&](auto storage) -> std::unique_ptr<UniformEngine> {
      using L = decltype(lattice);
      using S = decltype(storage);
      if (backend == exec::Backend::Cpu) return makeCpuEngineFor<L, S>(config, lists);
#if OCTOFLOW_HAVE_CUDA
      return makeCudaEngineFor<L, S>(config, lists);
#else
      throw Error("the CUDA backend is not compiled into this build");
#endif
    });
  });
}
}  // namespace
}  // namespace detail

const char* collisionName(CollisionKind kind) {
  switch (kind) {
    case CollisionKind::Trt: return "trt";
    case CollisionKind::Mrt: return "mrt";
    case CollisionKind::Bgk: break;
  }
  return "bgk";
}

Placement placementOf(const UniformSolverConfig& config) {
  if (config.isPiece) return config.placement;
  Placement whole;
  whole.whole = config.extent;
  whole.periodicAxes = config.faces.periodicAxes();
  return whole;
}

namespace {
// Whether local node (i, j, k) lies in one of the ghost layers of a piece.
bool inGhostLayer(const UniformSolverConfig& config, const Index (&position)[3]) {
  for (int face = 0; face < kFaceCount; ++face) {
    if (!(config.ghostFaces & (1u << face))) continue;
    const int axis = faceAxis(face);
    if (position[axis] == ((face & 1) ? config.extent.size(axis) - 1 : 0)) return true;
  }
  return false;
}

// The owned nodes (all but the ghost layers) as layers next to ghost layers, each one node thick
// and none overlapping, and the rest.
void splitOwnedNodes(const UniformSolverConfig& config, std::vector<NodeBox>& shell, NodeBox& interior) {
  Index lo[3] = {0, 0, 0}, hi[3] = {config.extent.nx, config.extent.ny, config.extent.nz};
  for (int face = 0; face < kFaceCount; ++face) {
    if (!(config.ghostFaces & (1u << face))) continue;
    const int axis = faceAxis(face);
    if (face & 1)
      --hi[axis];
    else
      ++lo[axis];
  }
  const auto box = [](const Index (&from)[3], const Index (&to)[3]) {
    return NodeBox{{from[0], from[1], from[2]}, Extent{to[0] - from[0], to[1] - from[1], to[2] - from[2]}};
  };
  for (int face = 0; face < kFaceCount; ++face) {
    const int axis = faceAxis(face);
    if (!(config.ghostFaces & (1u << face)) || lo[axis] >= hi[axis]) continue;
    Index layerLo[3] = {lo[0], lo[1], lo[2]}, layerHi[3] = {hi[0], hi[1], hi[2]};
    if (face & 1) {
      layerLo[axis] = --hi[axis];
    } else {
      layerHi[axis] = ++lo[axis];
    }
    shell.push_back(box(layerLo, layerHi));
  }
  for (int axis = 0; axis < 3; ++axis) hi[axis] = std::max(hi[axis], lo[axis]);
  interior = box(lo, hi);
}
}  // namespace

std::vector<ObstacleLink> findObstacleLinks(const UniformSolverConfig& config) {
  std::vector<ObstacleLink> links;
  if (config.solid.empty()) return links;
  const Extent& e = config.extent;
  withLattice(config.lattice, [&](auto lattice) {
    using L = decltype(lattice);
    for (Index node = 0; node < e.cellCount(); ++node) {
      if (config.solid[node]) continue;
      Index i, j, k;
      e.coordinates(node, i, j, k);
      const Index position[3] = {i, j, k};
      if (inGhostLayer(config, position)) continue;
      std::uint32_t mask = 0;
      for (int p = 1; p < L::Q; ++p) {
        Index neighbour[3];
        bool inside = true;
        for (int axis = 0; axis < 3; ++axis) {
          neighbour[axis] = position[axis] + L::c(p, axis);
          const Index size = e.size(axis);
          if (neighbour[axis] >= 0 && neighbour[axis] < size) continue;
          if (config.faces.face[2 * axis + (neighbour[axis] < 0 ? 0 : 1)].type != FaceType::Periodic) inside = false;
          neighbour[axis] = (neighbour[axis] + size) % size;
        }
        if (inside && config.solid[e.linear(neighbour[0], neighbour[1], neighbour[2])]) mask |= 1u << p;
      }
      if (mask) links.push_back(ObstacleLink{node, mask});
    }
  });
  return links;
}

NodeClassification classifyNodes(const UniformSolverConfig& config) {
  NodeClassification result;
  const Extent& e = config.extent;
  bool anyWall = !config.solid.empty() || config.ghostFaces != 0;
  for (int face = 0; face < kFaceCount; ++face) anyWall = anyWall || config.faces.face[face].type != FaceType::Periodic;
  if (!anyWall) return result;
  const Index nodeCount = e.cellCount();
  const auto isSolid = [&](Index node) { return !config.solid.empty() && config.solid[node]; };
  withLattice(config.lattice, [&](auto lattice) {
    using L = decltype(lattice);
    // Bit q set when the source x - c_q of population q is not a fluid node.
    const auto reflectedLinks = [&](const Index (&position)[3]) {
      std::uint32_t mask = 0;
      for (int q = 1; q < L::Q; ++q) {
        Index source[3];
        bool outside = false;
        for (int axis = 0; axis < 3; ++axis) {
          const Index size = e.size(axis);
          source[axis] = position[axis] - L::c(q, axis);
          if (source[axis] >= 0 && source[axis] < size) continue;
          if (config.faces.face[2 * axis + (source[axis] < 0 ? 0 : 1)].type != FaceType::Periodic) outside = true;
          source[axis] = (source[axis] + size) % size;
        }
        if (outside || isSolid(e.linear(source[0], source[1], source[2]))) mask |= 1u << q;
      }
      return mask;
    };
    result.kind.assign(static_cast<std::size_t>(nodeCount), kBulkNode);
#pragma omp parallel for schedule(static)
    for (Index node = 0; node < nodeCount; ++node) {
      if (isSolid(node)) {
        result.kind[node] = kObstacleNode;
        continue;
      }
      Index i, j, k;
      e.coordinates(node, i, j, k);
      const Index position[3] = {i, j, k};
      if (inGhostLayer(config, position))
        result.kind[node] = kGhostNode;
      else if (reflectedLinks(position))
        result.kind[node] = kBoundaryNode;
    }
    // The node one step inward of an outflow face lends the face its velocity: it joins the list.
    for (Index node = 0; node < nodeCount; ++node) {
      if (result.kind[node] != kBoundaryNode) continue;
      Index position[3];
      e.coordinates(node, position[0], position[1], position[2]);
      for (int face = 0; face < kFaceCount; ++face) {
        const int axis = faceAxis(face);
        const Index last = e.size(axis) - 1;
        if (config.faces.face[face].type != FaceType::Outflow || last < 1) continue;
        if (position[axis] != ((face & 1) ? last : 0)) continue;
        Index inner[3] = {position[0], position[1], position[2]};
        inner[axis] += (face & 1) ? -1 : 1;
        const Index innerNode = e.linear(inner[0], inner[1], inner[2]);
        if (result.kind[innerNode] == kBulkNode) result.kind[innerNode] = kBoundaryNode;
      }
    }
    for (Index node = 0; node < nodeCount; ++node) {
      if (result.kind[node] != kBoundaryNode) continue;
      Index position[3];
      e.coordinates(node, position[0], position[1], position[2]);
      BoundaryNode b;
      b.node = node;
      for (int axis = 0; axis < 3; ++axis) b.position[axis] = static_cast<std::int32_t>(position[axis]);
      b.reflected = reflectedLinks(position);
      result.boundary.push_back(b);
    }
    const auto entryOf = [&](Index node) -> std::int32_t {
      const auto found = std::lower_bound(result.boundary.begin(), result.boundary.end(), node,
                                          [](const BoundaryNode& b, Index n) { return b.node < n; });
      return found != result.boundary.end() && found->node == node
                 ? static_cast<std::int32_t>(found - result.boundary.begin())
                 : -1;
    };
    for (BoundaryNode& b : result.boundary) {
      for (int face = 0; face < kFaceCount; ++face) {
        const int axis = faceAxis(face);
        const Index last = e.size(axis) - 1;
        if (config.faces.face[face].type != FaceType::Outflow || last < 1) continue;
        if (b.position[axis] != ((face & 1) ? last : 0)) continue;
        Index inner[3] = {b.position[0], b.position[1], b.position[2]};
        inner[axis] += (face & 1) ? -1 : 1;
        b.inner = entryOf(e.linear(inner[0], inner[1], inner[2]));
      }
    }
  });
  return result;
}

UniformSolver::UniformSolver(const UniformSolverConfig& config, exec::Backend backend)
    : config_(config), backend_(backend) {
  if (config_.tau <= 0.5f) throw Error("UniformSolver: tau must exceed 1/2 (viscosity > 0)");
  const std::size_t n = static_cast<std::size_t>(nodeCount());
  if (nodeCount() <= 0 || nodeCount() > Index{0xFFFFFFFF})
    throw Error("UniformSolver: a grid holds 1 to 2^32 - 1 nodes (" + std::to_string(nodeCount()) +
                " asked); split larger domains over MPI ranks");
  if (!config_.solid.empty() && config_.solid.size() != n)
    throw Error("UniformSolver: the solid mask has " + std::to_string(config_.solid.size()) + " entries for " +
                std::to_string(n) + " nodes");
  const exec::MemorySpace working = exec::workingSpace(backend_);
  const NodeClassification classes = classifyNodes(config_);
  if (!classes.kind.empty()) {
    kind_ = exec::Buffer<std::uint8_t>(working, n);
    kind_.copyFrom(classes.kind.data(), n);
  }
  boundaryCount_ = static_cast<Index>(classes.boundary.size());
  boundaryNodes_ = exec::Buffer<BoundaryNode>(working, classes.boundary.size());
  boundaryNodes_.copyFrom(classes.boundary.data(), classes.boundary.size());
  boundaryMoments_ = exec::Buffer<NodeMoments>(working, 2 * classes.boundary.size());
  if (config_.les.model == LesModel::Csm) {
    lesVelocity_ = exec::Buffer<LesVelocityValue>(working, 6 * n);
    lesVelocity_.setZero();
  }
  if (!config_.solid.empty()) {
    obstacleLinks_ = findObstacleLinks(config_);
    workingLinks_ = exec::Buffer<ObstacleLink>(working, obstacleLinks_.size());
    workingLinks_.copyFrom(obstacleLinks_.data(), obstacleLinks_.size());
    workingForces_ = exec::Buffer<double>(working, 3 * obstacleLinks_.size());
  }
  splitOwnedNodes(config_, shell_, interior_);
  const detail::NodeLists lists{kind_.data(), boundaryNodes_.data(), boundaryCount_};
  engine_ = detail::makeEngine(backend_, config_, lists);
  const std::size_t populationBytes = n * populationCount() * storageBytes(config_.storage);
  populations_ = exec::Buffer<unsigned char>(working, populationBytes);
  // Obstacle nodes are never written by the update: give the whole array defined contents.
  populations_.setZero();
  if (config_.blocking.enabled()) {
    blocked_ = blocking::makeBlockedStepper(config_, backend_, kind_.data());
    spare_ = exec::Buffer<unsigned char>(working, populationBytes);
  }
  initialize();
}

UniformSolver::~UniformSolver() = default;

void UniformSolver::matchSpare() {
  if (spare_.size() > 0) exec::copyBytes(spare_.data(), populations_.data(), populations_.bytes());
}

std::size_t UniformSolver::workingBytes() const {
  return populations_.bytes() + spare_.bytes() + deviceDensity_.bytes() + deviceVelocity_.bytes() + kind_.bytes() +
         boundaryNodes_.bytes() + boundaryMoments_.bytes() + lesVelocity_.bytes() + workingLinks_.bytes() +
         workingForces_.bytes() + tap_.masks[0].bytes() + tap_.masks[1].bytes() + tap_.velocity.bytes();
}

void UniformSolver::initialize(const float* density, const float* velocity) {
  settleTracers();  // a waiting move is one in the state it was asked in
  const std::size_t n = static_cast<std::size_t>(nodeCount());
  if (backend_ == exec::Backend::Cpu) {
    engine_->initialize(density, velocity, populations_.data(), boundaryMoments(0), lesVelocity(0));
  } else {
    // Stage the host arrays on the device so the one initialisation functor runs there too.
    exec::Buffer<float> densityOnDevice, velocityOnDevice;
    if (density) {
      densityOnDevice = exec::Buffer<float>(exec::MemorySpace::Device, n);
      densityOnDevice.copyFrom(density, n);
    }
    if (velocity) {
      velocityOnDevice = exec::Buffer<float>(exec::MemorySpace::Device, 3 * n);
      velocityOnDevice.copyFrom(velocity, 3 * n);
    }
    engine_->initialize(densityOnDevice.data(), velocityOnDevice.data(), populations_.data(), boundaryMoments(0),
                        lesVelocity(0));
    engine_->synchronize();
  }
  matchSpare();
  step_ = 0;
  fieldsStep_ = -1;  // the working fields no longer describe the state
}

void UniformSolver::advance(Index steps) {
  if (blocked_) {
    // Launches of ts steps, the last one shorter; no boundary list moments are kept (resting
    // walls and obstacles, the only faces blocking runs, do not read them).
    for (Index done = 0; done < steps;) {
      const int launch = static_cast<int>(std::min<Index>(config_.blocking.sharedSteps, steps - done));
      blocked_->advance(populations_.data(), spare_.data(), step_, launch);
      std::swap(populations_, spare_);
      step_ += launch;
      done += launch;
    }
    engine_->synchronize();
    return;
  }
  // On one rank advance() returns once all but its last step are done (the host queues what
  // follows while that one runs); over several ranks the halo exchange waits for every step.
  const bool lastStepInFlight = !haloExchange_ && steps > 0;
  for (Index s = 0; s < steps; ++s) {
    const bool odd = oddStep();
    if (s + 1 == steps && lastStepInFlight) engine_->markQueued();
    if (timeline_.begin(step_)) {
      engine_->startTimeline();
      markTimeline("step started", false);
    }
    // A waiting tracer move: this step records the velocity at the nodes its tracers read.
    VelocityTap tap;
    if (tap_.waiting) {
      tap_.stamp = tap_.stamp % 16777215u + 1u;  // 1 ... 2^24 - 1: exact as a float
      tap = VelocityTap{tap_.masks[tap_.marked].data(), tap_.velocity.data(), static_cast<float>(tap_.stamp)};
    }
    void* populations = populations_.data();
    LesVelocityValue *velocityIn = lesVelocity(step_), *velocityOut = lesVelocity(step_ + 1);
    for (const NodeBox& box : shell_) engine_->bulkStep(populations, odd, box, velocityIn, velocityOut, tap);
    engine_->boundaryStep(populations, odd, boundaryMoments(step_), boundaryMoments(step_ + 1), velocityIn, velocityOut,
                          tap);
    markTimeline(shell_.empty() ? "boundary nodes updated" : "layers next to the cuts and boundary nodes updated", false);
    if (haloExchange_) engine_->haloAfterCompute();
    engine_->bulkStep(populations, odd, interior_, velocityIn, velocityOut, tap);
    markTimeline("interior updated", false);
    ++step_;
    if (haloExchange_) {
      haloExchange_(odd);
      engine_->computeAfterHalo();
    }
    if (tap.marked) {  // the waiting move, which clears the mask this step read as it goes
      tap_.waiting = false;
      TapMarker marker = nextMarks(tap_.waitingMove);
      marker.consumed = tap_.masks[tap_.marked].data();
      engine_->moveTappedTracers(tap_.velocity.data(), tap.stamp, tap_.waitingMove, marker);
      tap_.armedFor = tap_.waitingMove;
      tap_.marked = 1 - tap_.marked;
      ++tappedMoves_;
    }
    if (timeline_.recording()) timeline_.end(engine_->stopTimeline());
  }
  if (lastStepInFlight)
    engine_->waitForMarked();
  else
    engine_->synchronize();
}

void UniformSolver::markTimeline(const char* what, bool haloQueue, int axis) {
  if (!timeline_.recording()) return;  // no string built on the steps not recorded
  timeline_.mark(axis >= 0 ? std::string(1, "xyz"[axis]) + " " + what : what, haloQueue);
  engine_->markTimeline(haloQueue);
}

void UniformSolver::packHalo(const HaloBox& box, void* workingBuffer) {
  engine_->packHalo(populations_.data(), box, workingBuffer);
}

void UniformSolver::copyLesVelocityHalo(const HaloBox& box, void* workingBuffer, bool pack) {
  engine_->copyLesVelocityHalo(lesVelocity(step_), box, static_cast<LesVelocityValue*>(workingBuffer), pack);
}

void UniformSolver::unpackHalo(const HaloBox& box, const void* workingBuffer) {
  engine_->unpackHalo(populations_.data(), box, workingBuffer);
}

UniformSolver::WorkingFields UniformSolver::workingFields(bool wantDensity, bool wantVelocity) {
  const std::size_t n = static_cast<std::size_t>(nodeCount());
  // On the CPU the working fields are the host ones: fetchFields then needs no copy.
  exec::Buffer<float>& density = backend_ == exec::Backend::Cpu ? host_.density : deviceDensity_;
  exec::Buffer<float>& velocity = backend_ == exec::Backend::Cpu ? host_.velocity : deviceVelocity_;
  const exec::MemorySpace space =
      backend_ == exec::Backend::Cpu ? exec::stagingSpace(backend_) : exec::MemorySpace::Device;
  if (wantDensity && density.size() != n) density = exec::Buffer<float>(space, n);
  if (wantVelocity && velocity.size() != 3 * n) velocity = exec::Buffer<float>(space, 3 * n);
  // A field already computed for this state is not computed again (a surface, the files and the
  // tracers of one step may all ask for the velocity).
  if (fieldsStep_ != step_) densityFresh_ = velocityFresh_ = false;
  const bool computeDensity = wantDensity && !densityFresh_, computeVelocity = wantVelocity && !velocityFresh_;
  if (computeDensity || computeVelocity) {
    engine_->macroscopic(populations_.data(), oddStep(), boundaryMoments(step_),
                         computeDensity ? density.data() : nullptr, computeVelocity ? velocity.data() : nullptr);
    engine_->synchronize();
    fieldsStep_ = step_;
    densityFresh_ = densityFresh_ || computeDensity;
    velocityFresh_ = velocityFresh_ || computeVelocity;
  }
  WorkingFields fields;
  fields.density = wantDensity ? density.data() : nullptr;
  fields.velocity = wantVelocity ? velocity.data() : nullptr;
  return fields;
}

// Moves are queued, not waited for: the next step's kernels follow them on the same queue (the
// default stream on a GPU), and the tracer set reads its arrays back only by copies on that stream.
void UniformSolver::moveTracers(const particles::TracerMove& move) {
  if (move.count == 0) return;
  settleTracers();
  const bool sameTracers = tap_.armed && move.positions == tap_.armedFor.positions &&
                           move.count == tap_.armedFor.count && move.revision == tap_.armedFor.revision;
  if (sameTracers && tapCanServe(move)) {
    tap_.waiting = true;
    tap_.waitingMove = move;
    return;
  }
  moveFromPopulations(move);
}

void UniformSolver::settleTracers() {
  if (!tap_.waiting) return;
  tap_.waiting = false;
  moveFromPopulations(tap_.waitingMove);
}

// Where the tracers' marks would cover more than half the grid, a tapped step writes nearly every
// node's velocity: moving them from the populations then costs less (measured on an H200 at 256^3:
// 10^5 tracers 0.044 ms a move tapped against 0.131 ms; 10^6 0.247 ms against 0.236 ms).
bool UniformSolver::tapCanServe(const particles::TracerMove& move) const {
  return !blocked_ && tapServes(move) && 27 * move.count <= nodeCount() / 2;
}

void UniformSolver::moveFromPopulations(const particles::TracerMove& move) {
  const TapMarker marker = nextMarks(move);
  engine_->moveTracers(populations_.data(), oddStep(), boundaryMoments(step_), move, marker);
  marked(move, marker);
}

// The clear mask, for the marks of the tracers' next move (none where the tap cannot serve it).
TapMarker UniformSolver::nextMarks(const particles::TracerMove& move) {
  if (!tapCanServe(move)) return {};
  if (tap_.velocity.size() == 0) {
    const exec::MemorySpace space = exec::workingSpace(backend_);
    const auto words = static_cast<std::size_t>(tapMaskWords(nodeCount()));
    for (auto& mask : tap_.masks) {
      mask = exec::Buffer<std::uint32_t>(space, words);
      mask.setZero();
    }
    tap_.velocity = exec::Buffer<TappedVelocity>(space, static_cast<std::size_t>(nodeCount()));
    tap_.velocity.setZero();  // stamp 0: recorded by no step
  }
  return TapMarker{tap_.masks[1 - tap_.marked].data(), config_.extent};
}

// After a move from the populations that marked with `marker` (or did not): the old marks are
// cleared (a pass over the mask: they may be any tracers'), and the marks describe these tracers.
void UniformSolver::marked(const particles::TracerMove& move, const TapMarker& marker) {
  tap_.armed = marker.marked != nullptr;
  tap_.armedFor = move;
  if (!tap_.armed) return;
  engine_->clearMask(tap_.masks[tap_.marked].data(), tapMaskWords(nodeCount()));
  tap_.marked = 1 - tap_.marked;
}

std::array<Index, 2> UniformSolver::tapMarks() const {
  std::array<Index, 2> counts = {0, 0};
  if (tap_.velocity.size() == 0) return counts;
  engine_->synchronize();
  for (int which = 0; which < 2; ++which) {
    std::vector<std::uint32_t> words(tap_.masks[which].size());
    tap_.masks[which].copyTo(words.data(), words.size());
    for (const std::uint32_t word : words) counts[which == tap_.marked ? 0 : 1] += __builtin_popcount(word);
  }
  return counts;
}

const HostFields& UniformSolver::fetchFields(bool wantDensity, bool wantVelocity) {
  const WorkingFields fields = workingFields(wantDensity, wantVelocity);
  if (backend_ == exec::Backend::Cpu) return host_;
  const std::size_t n = static_cast<std::size_t>(nodeCount());
  const exec::MemorySpace staging = exec::stagingSpace(backend_);
  if (wantDensity && host_.density.size() != n) host_.density = exec::Buffer<float>(staging, n);
  if (wantVelocity && host_.velocity.size() != 3 * n) host_.velocity = exec::Buffer<float>(staging, 3 * n);
  if (wantDensity) exec::copyBytes(host_.density.data(), fields.density, n * sizeof(float));
  if (wantVelocity) exec::copyBytes(host_.velocity.data(), fields.velocity, 3 * n * sizeof(float));
  return host_;
}

std::vector<float> UniformSolver::populationsOnHost() const {
  std::vector<unsigned char> raw(populations_.size());
  populations_.copyTo(raw.data(), raw.size());
  const std::size_t values = static_cast<std::size_t>(nodeCount()) * populationCount();
  std::vector<float> result(values);
  withStorage(config_.storage, [&](auto storage) {
    using S = decltype(storage);
    const auto* stored = reinterpret_cast<const typename S::Value*>(raw.data());
    for (std::size_t i = 0; i < values; ++i) result[i] = S::load(stored[i]);
  });
  return result;
}

namespace {
constexpr int kLesVelocityBytes = 3 * static_cast<int>(sizeof(LesVelocityValue));
}

// The local grid and its owned nodes (no ghost layer), whole-grid coordinates.
NodeBox UniformSolver::localBox() const {
  const Placement placement = placementOf(config_);
  return NodeBox{{placement.origin[0], placement.origin[1], placement.origin[2]}, config_.extent};
}

NodeBox UniformSolver::ownedBox() const {
  NodeBox owned = localBox();
  Index size[3] = {config_.extent.nx, config_.extent.ny, config_.extent.nz};
  for (int axis = 0; axis < 3; ++axis) {
    const bool low = config_.ghostFaces & (1u << (2 * axis)), high = config_.ghostFaces & (1u << (2 * axis + 1));
    owned.lo[axis] += low ? 1 : 0;
    size[axis] -= (low ? 1 : 0) + (high ? 1 : 0);
  }
  owned.size = Extent{size[0], size[1], size[2]};
  return owned;
}

std::vector<sim::StateArray> UniformSolver::saveState() const {
  const NodeBox local = localBox(), ownedWhole = ownedBox();
  const std::size_t n = static_cast<std::size_t>(nodeCount());
  std::vector<sim::StateArray> arrays;
  {
    std::vector<unsigned char> raw(populations_.size());
    populations_.copyTo(raw.data(), raw.size());
    arrays.push_back(sim::extractState("populations", raw.data(), local, ownedWhole, populationCount(),
                                       storageBytes(config_.storage)));
  }
  {
    std::vector<NodeMoments> grid(n, NodeMoments{0.0f, Vector3{}});
    if (boundaryCount_ > 0) {
      std::vector<BoundaryNode> nodes(static_cast<std::size_t>(boundaryCount_));
      std::vector<NodeMoments> moments(nodes.size());
      boundaryNodes_.copyTo(nodes.data(), nodes.size());
      exec::copyBytes(moments.data(), boundaryMoments_.data() + (step_ % 2) * boundaryCount_,
                      moments.size() * sizeof(NodeMoments));
      for (std::size_t b = 0; b < nodes.size(); ++b) grid[static_cast<std::size_t>(nodes[b].node)] = moments[b];
    }
    arrays.push_back(sim::extractState("boundary_moments", grid.data(), local, ownedWhole, 1,
                                       static_cast<int>(sizeof(NodeMoments))));
  }
  if (hasLesVelocity()) {
    std::vector<LesVelocityValue> velocity(3 * n);
    exec::copyBytes(velocity.data(), lesVelocity_.data() + (step_ % 2) * 3 * nodeCount(),
                    velocity.size() * sizeof(LesVelocityValue));
    arrays.push_back(sim::extractState("les_velocity", velocity.data(), local, ownedWhole, 1, kLesVelocityBytes));
  }
  return arrays;
}

void UniformSolver::restoreState(const sim::StateSource& source) {
  settleTracers();
  const NodeBox local = localBox();
  const Extent whole = placementOf(config_).whole;
  const std::size_t n = static_cast<std::size_t>(nodeCount());
  step_ = source.step();
  fieldsStep_ = -1;
  {
    std::vector<unsigned char> raw(populations_.size());
    sim::readWrapped(source, "populations", populationCount(), storageBytes(config_.storage), local, whole, raw.data());
    populations_.copyFrom(raw.data(), raw.size());
  }
  {
    std::vector<NodeMoments> grid(n);
    sim::readWrapped(source, "boundary_moments", 1, static_cast<int>(sizeof(NodeMoments)), local, whole, grid.data());
    if (boundaryCount_ > 0) {
      std::vector<BoundaryNode> nodes(static_cast<std::size_t>(boundaryCount_));
      std::vector<NodeMoments> moments(nodes.size());
      boundaryNodes_.copyTo(nodes.data(), nodes.size());
      for (std::size_t b = 0; b < nodes.size(); ++b) moments[b] = grid[static_cast<std::size_t>(nodes[b].node)];
      exec::copyBytes(boundaryMoments(step_), moments.data(), moments.size() * sizeof(NodeMoments));
    }
  }
  if (hasLesVelocity()) {
    std::vector<LesVelocityValue> velocity(3 * n);
    sim::readWrapped(source, "les_velocity", 1, kLesVelocityBytes, local, whole, velocity.data());
    exec::copyBytes(lesVelocity(step_), velocity.data(), velocity.size() * sizeof(LesVelocityValue));
  }
  matchSpare();
}

std::vector<double> UniformSolver::obstacleForcePerNode() {
  const Index count = static_cast<Index>(obstacleLinks_.size());
  std::vector<double> perNode(3 * obstacleLinks_.size());
  if (count == 0) return perNode;
  engine_->obstacleForce(populations_.data(), workingLinks_.data(), count, workingForces_.data());
  engine_->synchronize();
  workingForces_.copyTo(perNode.data(), perNode.size());
  return perNode;
}

std::array<double, 3> UniformSolver::obstacleForce() {
  std::array<double, 3> total{0.0, 0.0, 0.0};
  const std::vector<double> perNode = obstacleForcePerNode();
  for (std::size_t entry = 0; entry < perNode.size() / 3; ++entry)
    for (int axis = 0; axis < 3; ++axis) total[axis] += perNode[3 * entry + axis];
  return total;
}

}  // namespace octoflow::lbm
