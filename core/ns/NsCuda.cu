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
