// The CUDA execution of a temporally blocked launch: a thread block per tile, the tile's two
// buffers and flags in shared memory, a barrier per stage (TileSteps.hpp has the scheme).
#include <cuda_runtime.h>

#include <algorithm>
#include <string>

#include "common/Error.hpp"
#include "exec/cuda/CudaCheck.hpp"
#include "lbm/Mrt.hpp"
#include "lbm/blocking/BlockedStepper.hpp"

namespace octoflow::lbm::blocking {

namespace {

constexpr int kLanes = 32;
constexpr std::size_t kSharedMemoryPerSm = 227u << 10;  // sm_80 and sm_90, less 1 KiB a block the driver keeps
// Threads a tile at most: 512 for the one-step stages of D2Q9 (at most 128 registers a thread,
// none spilled on sm_90), 256 for the others (register stages, D3Q19: up to 244 registers).
// Two resident tiles of 512 threads leave 64 registers a thread (the in-place one-step D2Q9 kernel
// then keeps 64 bytes of stack, in L1); it is launched so where two tiles' shared memory fits an SM.
template <class L, int RegisterSteps>
constexpr int maxThreads() {
  return L::Q <= 9 && RegisterSteps == 0 ? 512 : 256;
}

// Tile buffers of Q values a cell: none for a one-step launch (it scatters at once), one for
// one-step stages (in place), two for register stages.
OCTO_HD constexpr int tileBuffers(int registerSteps, int steps) { return steps == 1 ? 0 : registerSteps >= 1 ? 2 : 1; }

// f(x, y, z) for every cell of `range`, the block's threads over its cells in order (consecutive
// x: consecutive banks). Walking the cells as one sequence, not row by row a warp at a time,
// keeps every lane busy where a row is not a multiple of 32 wide (a 70-cell row left 26 of the
// third warp's lanes idle). A thread's position moves by a fixed stride, carried from x to y to
// z: no division in the loop (three divisions a cell cost as much as a third of a BGK collision).
template <class F>
__device__ OCTO_INLINE void forEachCell(const CellRange& range, F&& f) {
  const int width = range.hi[0] - range.lo[0], height = range.hi[1] - range.lo[1], depth = range.hi[2] - range.lo[2];
  const int threads = static_cast<int>(blockDim.x * blockDim.y);
  const int start = static_cast<int>(threadIdx.x + blockDim.x * threadIdx.y);
  const int strideX = threads % width, strideY = threads / width % height, strideZ = threads / width / height;
  int x = start % width, y = start / width % height, z = start / width / height;
  for (; z < depth;) {
    f(range.lo[0] + x, range.lo[1] + y, range.lo[2] + z);
    x += strideX;
    y += strideY;
    z += strideZ;
    if (x >= width) x -= width, ++y;
    if (y >= height) y -= height, ++z;
  }
}

// A register stage of D2Q9 with warp shuffles (seed 1, section 3.3): the lanes of a warp hold 32
// consecutive columns of a row; each lane collides the three cells of its column (rows y - 1, y,
// y + 1) for the first step and takes the populations that stream to it from the columns beside
// it from the neighbouring lanes, 4 collisions for two steps instead of 10. The first and last
// lane only lend their column: a warp writes 30 cells.
template <class Launch>
__device__ OCTO_INLINE void twoStepsWithShuffles(const Launch& launch, int target, const std::uint32_t* flags,
                                                 const TileValues& from, const TileValues& to) {
  using L = D2Q9;
  constexpr int kWritten = kLanes - 2;
  const TileShape& shape = launch.shape;
  const CellRange range(shape, target);
  const int lane = static_cast<int>(threadIdx.x);
  for (int row = threadIdx.y; row < range.rows(); row += blockDim.y) {
    int y, z;
    range.row(row, y, z);
    for (int first = range.lo[0] - 1; first + 1 < range.hi[0]; first += kWritten) {
      const int x = first + lane;
      // The column's first-step collisions, where the cells hold data (within one node of the range).
      float column[3][L::Q];
      const bool inData = x >= range.lo[0] - 1 && x <= range.hi[0];
      OCTO_UNROLL
      for (int r = 0; r < 3; ++r) {
        const int cell = shape.cell(x, y + r - 1, z);
        if (inData && (flags[cell] & kFluidCell))
          stepInTile<L, Launch::forced>(launch.collision, launch.grid.acceleration, from, shape, cell, flags[cell],
                                        launch.oddInTile(target + 1), column[r]);
        else
          OCTO_UNROLL
          for (int q = 0; q < L::Q; ++q) column[r][q] = 0.0f;
      }
      const bool writes = lane >= 1 && lane <= kWritten && x < range.hi[0];
      const std::uint32_t own = writes ? flags[shape.cell(x, y, z)] : 0u;
      float g[L::Q];
      OCTO_UNROLL
      for (int q = 0; q < L::Q; ++q) {
        const int dx = -L::c(q, 0), r = 1 - L::c(q, 1);  // the source x - c_q: column offset, row
        float value = column[r][q];
        if (dx < 0) value = __shfl_up_sync(0xffffffffu, value, 1);
        if (dx > 0) value = __shfl_down_sync(0xffffffffu, value, 1);
        g[q] = (own & (1u << q)) ? column[1][L::opposite(q)] : value;
      }
      if (!writes || !(own & kFluidCell)) continue;
      launch.collision.template collide<L, Launch::forced>(g, launch.grid.acceleration);
      launch.finish(x, y, z, target, launch.oddInTile(target), own, g, to);
    }
  }
}

// One-step stages run in place in one shared buffer (TileValues); register stages read a stage's
// two-step-old values while writing, so they take two buffers and swap them.
template <class Launch, int RegisterSteps, bool Shuffle, int Threads = maxThreads<typename Launch::Lattice, RegisterSteps>(),
          int ResidentTiles = 1>
__global__ void __launch_bounds__(Threads, ResidentTiles) blockedKernel(Launch launch) {
  extern __shared__ float shared[];
  const TileShape& shape = launch.shape;
  const int cells = shape.cells();
  TileValues current{shared, cells}, next{shared + (RegisterSteps >= 1 ? Launch::Q * cells : 0), cells};
  auto* flags = reinterpret_cast<std::uint32_t*>(shared + tileBuffers(RegisterSteps, launch.steps) * Launch::Q * cells);
  launch.origin[0] = static_cast<Index>(blockIdx.x) * shape.core[0];
  launch.origin[1] = static_cast<Index>(blockIdx.y) * shape.core[1];
  launch.origin[2] = static_cast<Index>(blockIdx.z) * shape.core[2];
  forEachCell(CellRange(shape, launch.steps - 1), [&](int x, int y, int z) { launch.first(x, y, z, flags, current); });
  for (int radius = launch.steps - 1; radius > 0;) {
    __syncthreads();
    const bool two = RegisterSteps >= 1 && radius >= 2;
    const int target = radius - (two ? 2 : 1);
    if (!two) {
      // The stage's parity as a constant in each branch: no per-link choice of address.
      const CellRange range(shape, target);
      if (launch.oddInTile(target))
        forEachCell(range, [&](int x, int y, int z) { launch.inside(x, y, z, target, true, flags, current, next); });
      else
        forEachCell(range, [&](int x, int y, int z) { launch.inside(x, y, z, target, false, flags, current, next); });
    } else if constexpr (Shuffle) {
      twoStepsWithShuffles(launch, target, flags, current, next);
    } else {
      forEachCell(CellRange(shape, target),
                  [&](int x, int y, int z) { launch.twoInside(x, y, z, target, flags, current, next); });
    }
    const TileValues swap = current;
    current = next;
    next = swap;
    radius = target;
  }
}

template <class L, class S, class Collision>
class CudaBlockedStepper final : public BlockedStepper {
public:
  using Value = typename S::Value;
  CudaBlockedStepper(const BlockedGrid& grid, const TemporalBlocking& blocking, const Collision& collision)
      : grid_(grid), blocking_(blocking), collision_(collision) {
    int device = 0, limit = 0;
    OCTO_CUDA_CHECK(cudaGetDevice(&device));
    OCTO_CUDA_CHECK(cudaDeviceGetAttribute(&limit, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
    const std::size_t bytes = sharedBytes(TileShape(blocking_.block, L::dimensions, blocking_.sharedSteps),
                                          blocking_.registerSteps, blocking_.sharedSteps);
    if (bytes > static_cast<std::size_t>(limit))
      throw Error("lbm.blocking.block: a tile of " + std::to_string(blocking_.block[0]) + "x" +
                  std::to_string(blocking_.block[1]) + (L::dimensions == 3 ? "x" + std::to_string(blocking_.block[2]) : "") +
                  " nodes with shared_steps = " + std::to_string(blocking_.sharedSteps) + " needs " +
                  std::to_string(bytes / 1024) + " KiB of shared memory; this GPU gives a block " +
                  std::to_string(limit / 1024) + " KiB: use a smaller block or fewer steps");
  }

  void advance(const void* from, void* to, Index step, int steps) override {
    const Vector3& a = grid_.acceleration;
    const bool forced = a.x != 0.0f || a.y != 0.0f || a.z != 0.0f;
    if (forced)
      launchWith<true>(static_cast<const Value*>(from), static_cast<Value*>(to), step, steps);
    else
      launchWith<false>(static_cast<const Value*>(from), static_cast<Value*>(to), step, steps);
  }

private:
  static std::size_t sharedBytes(const TileShape& shape, int registerSteps, int steps) {
    return static_cast<std::size_t>(shape.cells()) * sizeof(float) * (tileBuffers(registerSteps, steps) * L::Q + 1);
  }

  template <bool Forced>
  void launchWith(const Value* from, Value* to, Index step, int steps) {
    using Launch = TileLaunch<L, S, Forced, Collision>;
    const TileShape shape(blocking_.block, L::dimensions, steps);
    const Extent& e = grid_.extent;
    const Launch launch{grid_, collision_, shape, {0, 0, 0}, {from, e.cellCount()}, {to, e.cellCount()}, steps,
                        step % 2 == 1, (step + steps - 1) % 2 == 1};
    const dim3 tiles(static_cast<unsigned>((e.nx + shape.core[0] - 1) / shape.core[0]),
                     static_cast<unsigned>((e.ny + shape.core[1] - 1) / shape.core[1]),
                     static_cast<unsigned>((e.nz + shape.core[2] - 1) / shape.core[2]));
    const int coreCells = shape.core[0] * shape.core[1] * shape.core[2];
    const std::size_t bytes = sharedBytes(shape, blocking_.registerSteps, steps);
    const auto run = [&](auto kernel, int most) {
      const dim3 threads(kLanes, static_cast<unsigned>(std::clamp((coreCells + kLanes - 1) / kLanes, 2, most / kLanes)));
      OCTO_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes)));
      kernel<<<tiles, threads, bytes>>>(launch);
      OCTO_CUDA_CHECK(cudaGetLastError());
    };
    if (blocking_.registerSteps == 0) {
      if constexpr (maxThreads<L, 0>() == 512)
        if (coreCells >= 512 && 2 * bytes <= kSharedMemoryPerSm) return run(blockedKernel<Launch, 0, false, 512, 2>, 512);
      return run(blockedKernel<Launch, 0, false>, maxThreads<L, 0>());
    }
    if constexpr (std::is_same_v<L, D2Q9>)
      if (blocking_.warpShuffle) return run(blockedKernel<Launch, 1, true>, maxThreads<L, 1>());
    run(blockedKernel<Launch, 1, false>, maxThreads<L, 1>());
  }

  BlockedGrid grid_;
  TemporalBlocking blocking_;
  Collision collision_;
};

}  // namespace

template <class L, class S, class Collision>
std::unique_ptr<BlockedStepper> makeCudaBlockedStepper(const BlockedGrid& grid, const TemporalBlocking& blocking,
                                                       const Collision& collision) {
  return std::make_unique<CudaBlockedStepper<L, S, Collision>>(grid, blocking, collision);
}

#define OCTOFLOW_CUDA_STEPPER(L, S, C)                                                                         \
  template std::unique_ptr<BlockedStepper> makeCudaBlockedStepper<L, S, C>(const BlockedGrid&, const TemporalBlocking&, \
                                                                           const C&);
OCTOFLOW_BLOCKED_STEPPERS(OCTOFLOW_CUDA_STEPPER)

}  // namespace octoflow::lbm::blocking
