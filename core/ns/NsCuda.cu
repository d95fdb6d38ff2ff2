// The CUDA execution of the 2D Navier-Stokes step. Sums: a fixed grid of blocks, each adding its
// strided share and then its threads' values as a tree, and one block adding the blocks' sums in
// order (deterministic). The V-cycle's coarse levels run in one block of 1024 threads, the phases
// of a level separated by __syncthreads (their arrays stay in the SM's L1 and the L2).
#include <cuda_runtime.h>

#include <map>

#include "exec/cuda/CudaCheck.hpp"
#include "exec/cuda/CudaExecutor.cuh"
#include "ns/NsEngine.hpp"

namespace octoflow::ns {

namespace {

constexpr int kSumThreads = 256;
constexpr int kSumBlocks = 264;  // a fixed count: the same partition, so the same sum, every time
constexpr int kTeamThreads = 1024;

template <class F>
__global__ void __launch_bounds__(kSumThreads) blockSums(Index width, Index count, F f, double* partial) {
  __shared__ double values[kSumThreads];
  double sum = 0.0;
  for (Index n = static_cast<Index>(blockIdx.x) * kSumThreads + threadIdx.x; n < count; n += Index{kSumBlocks} * kSumThreads)
    sum += f(n % width, n / width);
  values[threadIdx.x] = sum;
  __syncthreads();
  for (int half = kSumThreads / 2; half > 0; half /= 2) {
    if (static_cast<int>(threadIdx.x) < half) values[threadIdx.x] += values[threadIdx.x + half];
    __syncthreads();
  }
  if (threadIdx.x == 0) partial[blockIdx.x] = values[0];
}

__global__ void __launch_bounds__(kSumThreads) addBlockSums(const double* partial, double* result) {
  __shared__ double values[kSumThreads];
  double sum = 0.0;
  for (int b = static_cast<int>(threadIdx.x); b < kSumBlocks; b += kSumThreads) sum += partial[b];
  values[threadIdx.x] = sum;
  __syncthreads();
  for (int half = kSumThreads / 2; half > 0; half /= 2) {
    if (static_cast<int>(threadIdx.x) < half) values[threadIdx.x] += values[threadIdx.x + half];
    __syncthreads();
  }
  if (threadIdx.x == 0) *result = values[0];
}

struct BlockTeam {
  template <class F>
  __device__ void forEach(int width, int height, const F& f) {
    const int count = width * height;
    for (int n = static_cast<int>(threadIdx.x); n < count; n += kTeamThreads) f(n % width, n / width, 0);
  }
  __device__ void barrier() { __syncthreads(); }
};

template <class Real>
__global__ void __launch_bounds__(kTeamThreads) coarseCycleKernel(LevelSet<Real> levels, int first, CycleShape shape) {
  BlockTeam team;
  vCycleFrom(team, levels, first, shape);
}

// A level's way down or up of a V-cycle in one launch: each block loads a tile of kTile^2 cells
// with `halo` layers around (wrapped on periodic axes) into shared memory, runs the red-black
// half-sweeps there (a cell `s` layers in from the loaded edge is exact after s half-sweeps), and
// writes its core back: down, with the coarse right-hand side from the core's residuals (halo
// 2 sweeps + 1); up, after adding the coarse correction to every loaded cell (halo 2 sweeps). The
// arithmetic is SorColour's, RestrictResidual's and ProlongCorrection's, operand for operand: the
// results are those of the launches phase by phase.
constexpr int kTile = 32;
constexpr int kTileThreads = 256;
constexpr int kMaxTileSweeps = 3;
constexpr int kMaxTileSide = kTile + 2 * (2 * kMaxTileSweeps + 1);

__device__ __forceinline__ int wrapped(int g, int n) { return ((g % n) + n) % n; }

template <class Real, bool Down>
__global__ void __launch_bounds__(kTileThreads)
    levelTile(Level<Real> fine, Level<Real> coarse, int sweeps, Real omega) {
  __shared__ Real phi[kMaxTileSide * kMaxTileSide];
  __shared__ Real rhs[kMaxTileSide * kMaxTileSide];
  const int halo = 2 * sweeps + (Down ? 1 : 0), side = kTile + 2 * halo, count = side * side;
  const int x0 = static_cast<int>(blockIdx.x) * kTile - halo, y0 = static_cast<int>(blockIdx.y) * kTile - halo;
  // A tile position's cell: its global indices (wrapped on a periodic axis); -1 where the
  // position lies beyond a side that is not periodic (no cell).
  const auto cellX = [&](int a) {
    const int g = x0 + a;
    return fine.periodicX ? wrapped(g, fine.nx) : (g >= 0 && g < fine.nx ? g : -1);
  };
  const auto cellY = [&](int b) {
    const int g = y0 + b;
    return fine.periodicY ? wrapped(g, fine.ny) : (g >= 0 && g < fine.ny ? g : -1);
  };
  for (int t = static_cast<int>(threadIdx.x); t < count; t += kTileThreads) {
    const int gx = cellX(t % side), gy = cellY(t / side);
    if (gx < 0 || gy < 0) continue;
    Real value = fine.phi[gy * fine.nx + gx];
    if (!Down) value += ProlongCorrection<Real>{fine, coarse}.correction(gx, gy);
    phi[t] = value;
    rhs[t] = fine.rhs[gy * fine.nx + gx];
  }
  __syncthreads();
  // The neighbours' sum as Level::neighbourSum forms it; a cell at a side that is not periodic is
  // its own neighbour beyond it.
  const auto neighbourSum = [&](int t, int gx, int gy) {
    const int w = !fine.periodicX && gx == 0 ? t : t - 1, e = !fine.periodicX && gx == fine.nx - 1 ? t : t + 1;
    const int s = !fine.periodicY && gy == 0 ? t : t - side, n = !fine.periodicY && gy == fine.ny - 1 ? t : t + side;
    return (phi[w] + phi[e]) + (phi[s] + phi[n]);
  };
  for (int half = 0; half < 2 * sweeps; ++half) {
    const int colour = half & 1;
    for (int t = static_cast<int>(threadIdx.x); t < count; t += kTileThreads) {
      const int a = t % side, b = t / side;
      if (a == 0 || b == 0 || a == side - 1 || b == side - 1) continue;
      const int gx = cellX(a), gy = cellY(b);
      if (gx < 0 || gy < 0 || ((gx + gy) & 1) != colour) continue;
      phi[t] += omega * ((neighbourSum(t, gx, gy) - rhs[t]) * Real(0.25) - phi[t]);
    }
    __syncthreads();
  }
  // The core back (its positions on the grid itself, not their periodic images).
  for (int t = static_cast<int>(threadIdx.x); t < kTile * kTile; t += kTileThreads) {
    const int gx = x0 + halo + t % kTile, gy = y0 + halo + t / kTile;
    if (gx < fine.nx && gy < fine.ny) fine.phi[gy * fine.nx + gx] = phi[(halo + t / kTile) * side + halo + t % kTile];
  }
  if (!Down) return;
  const auto residual = [&](int a, int b) {
    const int t = b * side + a;
    return rhs[t] - (neighbourSum(t, cellX(a), cellY(b)) - Real(4) * phi[t]);
  };
  constexpr int kHalfTile = kTile / 2;
  for (int t = static_cast<int>(threadIdx.x); t < kHalfTile * kHalfTile; t += kTileThreads) {
    const int i = t % kHalfTile, j = t / kHalfTile;
    const int cx = static_cast<int>(blockIdx.x) * kHalfTile + i, cy = static_cast<int>(blockIdx.y) * kHalfTile + j;
    if (cx >= coarse.nx || cy >= coarse.ny) continue;
    const int a = halo + 2 * i, b = halo + 2 * j;
    const Real sum = (residual(a, b) + residual(a + 1, b)) + (residual(a, b + 1) + residual(a + 1, b + 1));
    coarse.rhs[cy * coarse.nx + cx] = sum;
    coarse.phi[cy * coarse.nx + cx] = Real(0);
  }
}

}  // namespace

template <>
struct NsBackend<exec::CudaQueues> {
  static constexpr exec::Backend backend = exec::Backend::Cuda;

  template <class F>
  static void sum(const exec::CudaExecutor& executor, Index width, Index height, const F& f, double* result,
                  double* scratch) {
    blockSums<<<kSumBlocks, kSumThreads, 0, executor.stream>>>(width > 0 ? width : 1, width * height, f, scratch);
    OCTO_CUDA_CHECK(cudaGetLastError());
    addBlockSums<<<1, kSumThreads, 0, executor.stream>>>(scratch, result);
    OCTO_CUDA_CHECK(cudaGetLastError());
  }

  // A step's work up to the projection, captured once per cycle count and replayed as a CUDA
  // graph: a hundred small launches cost more than their work at the seed's size. Capture needs a
  // stream of its own (not the legacy default stream); a blocking one, so that the copies and
  // kernels of the default stream (fields, initialisation) stay in order with it.
  struct Graphs {
    exec::CudaExecutor& executor;
    cudaStream_t own = nullptr;
    std::map<int, cudaGraphExec_t> launches;
    explicit Graphs(exec::CudaQueues& queues) : executor(queues.compute) {
      OCTO_CUDA_CHECK(cudaStreamCreate(&own));
      executor.stream = own;
    }
    ~Graphs() {
      cudaStreamSynchronize(own);
      for (auto& entry : launches) cudaGraphExecDestroy(entry.second);
      executor.stream = nullptr;
      cudaStreamDestroy(own);
    }
    Graphs(const Graphs&) = delete;
    Graphs& operator=(const Graphs&) = delete;
  };
  template <class F>
  static void replay(Graphs& graphs, const exec::CudaExecutor& executor, int key, const F& queueWork) {
    auto found = graphs.launches.find(key);
    if (found == graphs.launches.end()) {
      cudaGraph_t graph = nullptr;
      OCTO_CUDA_CHECK(cudaStreamBeginCapture(executor.stream, cudaStreamCaptureModeThreadLocal));
      queueWork();
      OCTO_CUDA_CHECK(cudaStreamEndCapture(executor.stream, &graph));
      cudaGraphExec_t launch = nullptr;
      const cudaError_t instantiated = cudaGraphInstantiate(&launch, graph, 0);
      cudaGraphDestroy(graph);
      OCTO_CUDA_CHECK(instantiated);
      found = graphs.launches.emplace(key, launch).first;
    }
    OCTO_CUDA_CHECK(cudaGraphLaunch(found->second, executor.stream));
  }

  template <class Real>
  static void smoothThenRestrict(const exec::CudaExecutor& executor, const Level<Real>& fine, const Level<Real>& coarse,
                                 int sweeps, Real omega) {
    launchTiles<Real, true>(executor, fine, coarse, sweeps, omega);
  }
  template <class Real>
  static void prolongThenSmooth(const exec::CudaExecutor& executor, const Level<Real>& fine, const Level<Real>& coarse,
                                int sweeps, Real omega) {
    launchTiles<Real, false>(executor, fine, coarse, sweeps, omega);
  }
  template <class Real, bool Down>
  static void launchTiles(const exec::CudaExecutor& executor, const Level<Real>& fine, const Level<Real>& coarse,
                          int sweeps, Real omega) {
    if (sweeps > kMaxTileSweeps) {  // beyond the tile's halo: phase by phase
      detail::QueueTeam<exec::CudaExecutor> team{executor};
      if (Down)
        ns::smoothThenRestrict(team, fine, coarse, sweeps, omega);
      else
        ns::prolongThenSmooth(team, fine, coarse, sweeps, omega);
      return;
    }
    const dim3 tiles(static_cast<unsigned>((fine.nx + kTile - 1) / kTile), static_cast<unsigned>((fine.ny + kTile - 1) / kTile));
    levelTile<Real, Down><<<tiles, kTileThreads, 0, executor.stream>>>(fine, coarse, sweeps, omega);
    OCTO_CUDA_CHECK(cudaGetLastError());
  }

  template <class Real>
  static void coarseCycle(const exec::CudaExecutor& executor, const LevelSet<Real>& levels, int first,
                          const CycleShape& shape) {
    coarseCycleKernel<Real><<<1, kTeamThreads, 0, executor.stream>>>(levels, first, shape);
    OCTO_CUDA_CHECK(cudaGetLastError());
  }
};

std::unique_ptr<NsEngine> makeNsEngineCuda(const NsConfig& config) {
  if (config.precision == Precision::Fp64) return std::make_unique<detail::NsEngineFor<exec::CudaQueues, double>>(config);
  return std::make_unique<detail::NsEngineFor<exec::CudaQueues, float>>(config);
}

}  // namespace octoflow::ns
