#include "particles/TracerSet.hpp"

#include <algorithm>
#include <cstring>

#include "common/Error.hpp"
#include "exec/cpu/CpuExecutor.hpp"

namespace octoflow::particles {

namespace {
void copy3(const float (&from)[3], float (&to)[3]) {
  for (int a = 0; a < 3; ++a) to[a] = from[a];
}
}  // namespace

TracerSource TracerSource::point(const float (&at)[3], int count) {
  TracerSource source;
  copy3(at, source.origin);
  source.count[0] = count;
  return source;
}

TracerSource TracerSource::line(const float (&from)[3], const float (&to)[3], int count) {
  TracerSource source;
  source.shape = Shape::Line;
  copy3(from, source.origin);
  copy3(to, source.end);
  source.count[0] = count;
  return source;
}

TracerSource TracerSource::plane(const float (&corner)[3], const float (&firstEdge)[3], const float (&secondEdge)[3],
                                 int firstCount, int secondCount) {
  TracerSource source;
  source.shape = Shape::Plane;
  copy3(corner, source.origin);
  copy3(firstEdge, source.edge1);
  copy3(secondEdge, source.edge2);
  source.count[0] = firstCount;
  source.count[1] = secondCount;
  return source;
}

TracerSource TracerSource::box(const float (&low)[3], const float (&high)[3], int countX, int countY, int countZ) {
  TracerSource source;
  source.shape = Shape::Box;
  copy3(low, source.origin);
  copy3(high, source.end);
  source.count[0] = countX;
  source.count[1] = countY;
  source.count[2] = countZ;
  return source;
}

Index TracerSource::perRelease() const {
  switch (shape) {
    case Shape::Point:
    case Shape::Line: return count[0];
    case Shape::Plane: return static_cast<Index>(count[0]) * count[1];
    case Shape::Box: return static_cast<Index>(count[0]) * count[1] * count[2];
  }
  return 0;
}

std::vector<float> TracerSource::releasePositions() const {
  std::vector<float> positions;
  positions.reserve(static_cast<std::size_t>(3 * perRelease()));
  const auto add = [&](float x, float y, float z) { positions.insert(positions.end(), {x, y, z}); };
  switch (shape) {
    case Shape::Point:
      for (int n = 0; n < count[0]; ++n) add(origin[0], origin[1], origin[2]);
      break;
    case Shape::Line:
      for (int n = 0; n < count[0]; ++n) {
        const float t = count[0] > 1 ? static_cast<float>(n) / static_cast<float>(count[0] - 1) : 0.5f;
        add(origin[0] + t * (end[0] - origin[0]), origin[1] + t * (end[1] - origin[1]),
            origin[2] + t * (end[2] - origin[2]));
      }
      break;
    case Shape::Plane:
      for (int m = 0; m < count[1]; ++m)
        for (int n = 0; n < count[0]; ++n) {
          const float s = (n + 0.5f) / count[0], t = (m + 0.5f) / count[1];
          add(origin[0] + s * edge1[0] + t * edge2[0], origin[1] + s * edge1[1] + t * edge2[1],
              origin[2] + s * edge1[2] + t * edge2[2]);
        }
      break;
    case Shape::Box:
      for (int k = 0; k < count[2]; ++k)
        for (int j = 0; j < count[1]; ++j)
          for (int i = 0; i < count[0]; ++i) {
            const float s[3] = {(i + 0.5f) / count[0], (j + 0.5f) / count[1], (k + 0.5f) / count[2]};
            add(origin[0] + s[0] * (end[0] - origin[0]), origin[1] + s[1] * (end[1] - origin[1]),
                origin[2] + s[2] * (end[2] - origin[2]));
          }
      break;
  }
  return positions;
}

TracerSet::TracerSet(exec::Backend backend, TracerSettings settings)
    : backend_(backend), settings_(std::move(settings)) {
  if (settings_.maxParticles <= 0) throw Error("tracers: max_particles must be positive");
  if (settings_.substeps <= 0) throw Error("tracers: substeps must be positive");
  if (backend_ == exec::Backend::Cuda && !exec::cudaCompiled()) throw Error("tracers on CUDA: this build has no CUDA backend");
  const exec::MemorySpace space = exec::workingSpace(backend_), staging = exec::stagingSpace(backend_);
  const auto capacity = static_cast<std::size_t>(settings_.maxParticles);
  positions_ = exec::Buffer<float>(space, 3 * capacity);
  velocities_ = exec::Buffer<float>(space, 3 * capacity);
  ages_ = exec::Buffer<float>(space, capacity);
  ids_ = exec::Buffer<std::int64_t>(space, capacity);
  alive_ = exec::Buffer<std::uint8_t>(space, capacity);
  positionsScratch_ = exec::Buffer<float>(space, 3 * capacity);
  velocitiesScratch_ = exec::Buffer<float>(space, 3 * capacity);
  agesScratch_ = exec::Buffer<float>(space, capacity);
  idsScratch_ = exec::Buffer<std::int64_t>(space, capacity);
  gather_ = exec::Buffer<Index>(space, capacity);
  hostPositions_ = exec::Buffer<float>(staging, 3 * capacity);
  hostVelocities_ = exec::Buffer<float>(staging, 3 * capacity);
  hostAges_ = exec::Buffer<float>(staging, capacity);
  hostIds_ = exec::Buffer<std::int64_t>(staging, capacity);
}

Index TracerSet::release(Index step) {
  std::vector<float> positions;
  for (const TracerSource& source : settings_.sources)
    if (source.releasesAt(step)) {
      const std::vector<float> more = source.releasePositions();
      positions.insert(positions.end(), more.begin(), more.end());
    }
  Index wanted = static_cast<Index>(positions.size() / 3);
  if (wanted == 0) return 0;
  if (count_ + wanted > settings_.maxParticles) compact();  // room held by retired tracers first
  const Index room = settings_.maxParticles - count_;
  const Index added = std::min(wanted, room);
  refused_ += wanted - added;
  if (added == 0) return 0;
  std::vector<float> zeros(static_cast<std::size_t>(3 * added), 0.0f);
  std::vector<std::int64_t> ids(static_cast<std::size_t>(added));
  for (Index n = 0; n < added; ++n) ids[static_cast<std::size_t>(n)] = nextId_ + n;
  std::vector<std::uint8_t> alive(static_cast<std::size_t>(added), 1);
  exec::copyBytes(positions_.data() + 3 * count_, positions.data(), 3 * added * sizeof(float));
  exec::copyBytes(velocities_.data() + 3 * count_, zeros.data(), 3 * added * sizeof(float));
  exec::copyBytes(ages_.data() + count_, zeros.data(), added * sizeof(float));
  exec::copyBytes(ids_.data() + count_, ids.data(), added * sizeof(std::int64_t));
  exec::copyBytes(alive_.data() + count_, alive.data(), added);
  nextId_ += added;
  count_ += added;
  ++revision_;
  return added;
}

BlockTables blockTables(const sim::BlockGrid& grid) {
  BlockTables tables;
  const int finest = grid.levels - 1;
  const Index cells = grid.blockNodes - 1;
  BlockVelocityView& view = tables.view;
  view.blockNodes = grid.blockNodes;
  view.finestLevel = finest;
  for (int a = 0; a < 3; ++a) {
    view.table[a] = (grid.domainCells[a] << finest) / cells;
    view.domain[a] = static_cast<float>(grid.domainCells[a]);
  }
  tables.leafOf.assign(static_cast<std::size_t>(view.table[0] * view.table[1] * view.table[2]), -1);
  for (std::size_t b = 0; b < grid.blocks.size(); ++b) {
    const sim::BlockGrid::Block& block = grid.blocks[b];
    tables.meta.push_back(block.level);
    for (int a = 0; a < 3; ++a) tables.meta.push_back(static_cast<std::int32_t>(block.origin[a]));
    const Index span = Index{1} << (finest - block.level);  // finest-level blocks a side of this one
    Index first[3];
    for (int a = 0; a < 3; ++a) first[a] = block.origin[a] / cells * span;
    for (Index k = first[2]; k < first[2] + span; ++k)
      for (Index j = first[1]; j < first[1] + span; ++j)
        for (Index i = first[0]; i < first[0] + span; ++i)
          tables.leafOf[static_cast<std::size_t>(i + view.table[0] * (j + view.table[1] * k))] = static_cast<std::int32_t>(b);
  }
  for (const std::int32_t leaf : tables.leafOf)
    if (leaf < 0) throw Error("tracers: the blocks leave part of the domain uncovered");
  return tables;
}

void TracerSet::advect(const VelocityFieldView& field, int latticeSteps, float velocityScale) {
  advectIn(field, latticeSteps, velocityScale);
}
void TracerSet::advect(const BlockVelocityView& field, int latticeSteps, float velocityScale) {
  advectIn(field, latticeSteps, velocityScale);
}

TracerMove TracerSet::move(int latticeSteps, float velocityScale) {
  if (latticeSteps <= 0) throw Error("tracers: a move covers at least one lattice step");
  TracerMove move;
  move.integrator = settings_.integrator;
  move.substeps = settings_.substeps;
  move.latticeSteps = latticeSteps;
  move.velocityScale = velocityScale;
  move.count = count_;
  move.positions = positions_.data();
  move.velocities = velocities_.data();
  move.ages = ages_.data();
  move.alive = alive_.data();
  move.revision = revision_;
  return move;
}

template <class Field>
void TracerSet::advectIn(const Field& field, int latticeSteps, float velocityScale) {
  const AdvectTracers<Field> advect{field, move(latticeSteps, velocityScale)};
  if (count_ == 0) return;
  ++revision_;  // moved here, not by a solver: what a solver knows of their places is stale
#if OCTOFLOW_HAVE_CUDA
  if (backend_ == exec::Backend::Cuda) return detail::advectTracersOnCuda(count_, advect);
#endif
  exec::CpuExecutor{}.parallelFor(count_, advect);
}

void TracerSet::compact() {
  if (count_ == 0) return;
  std::vector<std::uint8_t> alive(static_cast<std::size_t>(count_));
  exec::copyBytes(alive.data(), alive_.data(), static_cast<std::size_t>(count_));
  std::vector<Index> from;
  from.reserve(alive.size());
  for (Index n = 0; n < count_; ++n)
    if (alive[static_cast<std::size_t>(n)]) from.push_back(n);
  if (static_cast<Index>(from.size()) == count_) return;
  const Index kept = static_cast<Index>(from.size());
  count_ = kept;
  ++revision_;
  if (kept == 0) return;
  exec::copyBytes(gather_.data(), from.data(), from.size() * sizeof(Index));
  const detail::GatherTracers gather{gather_.data(),        positions_.data(),        velocities_.data(),
                                     ages_.data(),          ids_.data(),              positionsScratch_.data(),
                                     velocitiesScratch_.data(), agesScratch_.data(), idsScratch_.data(),
                                     alive_.data()};
#if OCTOFLOW_HAVE_CUDA
  if (backend_ == exec::Backend::Cuda)
    detail::gatherTracersOnCuda(kept, gather);
  else
#endif
    exec::CpuExecutor{}.parallelFor(kept, gather);
  positions_.swap(positionsScratch_);
  velocities_.swap(velocitiesScratch_);
  ages_.swap(agesScratch_);
  ids_.swap(idsScratch_);
}

std::vector<sim::StateRecord> TracerSet::saveState() const {
  const auto n = static_cast<std::size_t>(count_);
  std::vector<float> positions(3 * n), velocities(3 * n), ages(n);
  std::vector<std::int64_t> ids(n);
  std::vector<std::uint8_t> alive(n);
  exec::copyBytes(positions.data(), positions_.data(), positions.size() * sizeof(float));
  exec::copyBytes(velocities.data(), velocities_.data(), velocities.size() * sizeof(float));
  exec::copyBytes(ages.data(), ages_.data(), ages.size() * sizeof(float));
  exec::copyBytes(ids.data(), ids_.data(), ids.size() * sizeof(std::int64_t));
  exec::copyBytes(alive.data(), alive_.data(), alive.size());
  const std::int64_t counters[3] = {count_, nextId_, refused_};
  return {sim::makeRecord("tracer_counters", counters, 3), sim::makeRecord("tracer_positions", positions),
          sim::makeRecord("tracer_velocities", velocities), sim::makeRecord("tracer_ages", ages),
          sim::makeRecord("tracer_ids", ids),           sim::makeRecord("tracer_alive", alive)};
}

void TracerSet::restoreState(const sim::StateSource& source) {
  const std::vector<std::int64_t> counters = source.values<std::int64_t>("tracer_counters", 3);
  if (counters[0] < 0 || counters[0] > settings_.maxParticles || counters[1] < counters[0] || counters[2] < 0)
    source.fail("tracer_counters", "holds " + std::to_string(counters[0]) + " tracers, more than tracers.max_particles = " +
                                       std::to_string(settings_.maxParticles) + ", or bad counts");
  const auto n = static_cast<std::size_t>(counters[0]);
  const std::vector<float> positions = source.values<float>("tracer_positions", 3 * n);
  const std::vector<float> velocities = source.values<float>("tracer_velocities", 3 * n);
  const std::vector<float> ages = source.values<float>("tracer_ages", n);
  const std::vector<std::int64_t> ids = source.values<std::int64_t>("tracer_ids", n);
  const std::vector<std::uint8_t> alive = source.values<std::uint8_t>("tracer_alive", n);
  count_ = counters[0];
  ++revision_;
  nextId_ = counters[1];
  refused_ = counters[2];
  exec::copyBytes(positions_.data(), positions.data(), positions.size() * sizeof(float));
  exec::copyBytes(velocities_.data(), velocities.data(), velocities.size() * sizeof(float));
  exec::copyBytes(ages_.data(), ages.data(), ages.size() * sizeof(float));
  exec::copyBytes(ids_.data(), ids.data(), ids.size() * sizeof(std::int64_t));
  exec::copyBytes(alive_.data(), alive.data(), alive.size());
}

TracerView TracerSet::view() {
  compact();
  exec::copyBytes(hostPositions_.data(), positions_.data(), 3 * count_ * sizeof(float));
  exec::copyBytes(hostVelocities_.data(), velocities_.data(), 3 * count_ * sizeof(float));
  exec::copyBytes(hostAges_.data(), ages_.data(), count_ * sizeof(float));
  exec::copyBytes(hostIds_.data(), ids_.data(), count_ * sizeof(std::int64_t));
  return TracerView{hostPositions_.data(), hostVelocities_.data(), hostIds_.data(), hostAges_.data(), count_};
}

}  // namespace octoflow::particles
