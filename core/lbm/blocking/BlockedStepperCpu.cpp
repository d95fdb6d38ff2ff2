// The CPU execution of a temporally blocked launch: the reference the CUDA kernel is checked
// against, tile by tile on OpenMP threads, each with its own tile buffers. Register stages and
// warp shuffles are GPU ways to run the same arithmetic: the CPU runs every stage one step deep.
#include <vector>

#include "lbm/Mrt.hpp"
#include "lbm/blocking/BlockedStepper.hpp"

namespace octoflow::lbm::blocking {

namespace {

template <class L, class S, class Collision>
class CpuBlockedStepper final : public BlockedStepper {
public:
  using Value = typename S::Value;
  CpuBlockedStepper(const BlockedGrid& grid, const TemporalBlocking& blocking, const Collision& collision)
      : grid_(grid), blocking_(blocking), collision_(collision) {}

  void advance(const void* from, void* to, Index step, int steps) override {
    const Vector3& a = grid_.acceleration;
    if (a.x != 0.0f || a.y != 0.0f || a.z != 0.0f)
      run<true>(static_cast<const Value*>(from), static_cast<Value*>(to), step, steps);
    else
      run<false>(static_cast<const Value*>(from), static_cast<Value*>(to), step, steps);
  }

private:
  template <bool Forced>
  void run(const Value* from, Value* to, Index step, int steps) const {
    const TileShape shape(blocking_.block, L::dimensions, steps);
    const Extent& e = grid_.extent;
    Index tiles[3];
    for (int axis = 0; axis < 3; ++axis) tiles[axis] = (e.size(axis) + shape.core[axis] - 1) / shape.core[axis];
    const Index tileCount = tiles[0] * tiles[1] * tiles[2];
    TileLaunch<L, S, Forced, Collision> launch{grid_, collision_, shape, {0, 0, 0}, {from, e.cellCount()},
                                               {to, e.cellCount()}, steps, step % 2 == 1, (step + steps - 1) % 2 == 1};
#pragma omp parallel firstprivate(launch)
    {
      std::vector<float> buffer(static_cast<std::size_t>(L::Q * shape.cells()));
      std::vector<std::uint32_t> flags(static_cast<std::size_t>(shape.cells()));
#pragma omp for schedule(static)
      for (Index tile = 0; tile < tileCount; ++tile) {
        launch.origin[0] = tile % tiles[0] * shape.core[0];
        launch.origin[1] = tile / tiles[0] % tiles[1] * shape.core[1];
        launch.origin[2] = tile / (tiles[0] * tiles[1]) * shape.core[2];
        advanceTile(launch, buffer.data(), flags.data());
      }
    }
  }

  // One tile's launch, stage after stage (the region shrinking by a node a step), in place in one
  // buffer (TileValues).
  template <class Launch>
  static void advanceTile(const Launch& launch, float* buffer, std::uint32_t* flags) {
    const TileShape& shape = launch.shape;
    const TileValues tile{buffer, shape.cells()};
    const auto visit = [&](int radius, auto&& update) {
      const CellRange range(shape, radius);
      for (int z = range.lo[2]; z < range.hi[2]; ++z)
        for (int y = range.lo[1]; y < range.hi[1]; ++y)
          for (int x = range.lo[0]; x < range.hi[0]; ++x) update(x, y, z);
    };
    visit(launch.steps - 1, [&](int x, int y, int z) { launch.first(x, y, z, flags, tile); });
    for (int radius = launch.steps - 2; radius >= 0; --radius)
      visit(radius, [&](int x, int y, int z) { launch.inside(x, y, z, radius, launch.oddInTile(radius), flags, tile, tile); });
  }

  BlockedGrid grid_;
  TemporalBlocking blocking_;
  Collision collision_;
};

}  // namespace

template <class L, class S, class Collision>
std::unique_ptr<BlockedStepper> makeCpuBlockedStepper(const BlockedGrid& grid, const TemporalBlocking& blocking,
                                                      const Collision& collision) {
  return std::make_unique<CpuBlockedStepper<L, S, Collision>>(grid, blocking, collision);
}

#define OCTOFLOW_CPU_STEPPER(L, S, C)                                                                         \
  template std::unique_ptr<BlockedStepper> makeCpuBlockedStepper<L, S, C>(const BlockedGrid&, const TemporalBlocking&, \
                                                                          const C&);
OCTOFLOW_BLOCKED_STEPPERS(OCTOFLOW_CPU_STEPPER)

}  // namespace octoflow::lbm::blocking
